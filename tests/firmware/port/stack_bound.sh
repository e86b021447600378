#!/usr/bin/env bash
# stack_bound.sh — the worst-case stack of every public call of a firmware/port build, per call
# path: the sum of the frames (-fcallgraph-info=su) along the deepest chain of calls from it, not
# the largest single frame. Indirect calls are resolved to the functions whose address the image
# takes (relocations other than calls, outside the function itself): from an engine file to any
# of them (the backend's HAL ops, the algorithms' prepare/next, the reduce kernels), from
# ncl_dtype.c to its kernel table, from a backend to the board's callbacks (outside the image:
# not counted). Recursion, a dynamic frame or a callee without a frame fails the check. libgcc's
# helpers (64-bit division, soft float) are read from the linked image's disassembly.
# Usage: stack_bound.sh BUILD_DIR TOOL_PREFIX BACKEND LIMIT_BYTES
#   BACKEND: mmio or shm (its header's calls are roots beside ncl.h's; the other backend's objects
#   are left out). Prints "call bytes path" per root, worst first; exit 1 past LIMIT_BYTES.
set -euo pipefail
dir=${1:?usage: stack_bound.sh BUILD_DIR TOOL_PREFIX BACKEND LIMIT_BYTES} prefix=${2:?} backend=${3:?} limit=${4:?}
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the objects of the engine, the common backend code, the chosen backend and the C library stand-in
mapfile -t objs < <(find "$dir/CMakeFiles" \( -path '*ncl_engine.dir*' -o -path '*ncl_backend.dir*' \
    -o -path "*ncl_${backend}.dir*" -o -path '*ncl_libc.dir*' \) -name '*.obj' | sort)
((${#objs[@]} > 0)) || { echo "stack_bound: no objects under $dir" >&2; exit 1; }

# roots: the functions ncl.h and the backend's header declare
grep -hoE '^[a-z][a-z0-9_ ]*[ *](ncl_[a-z0-9_]+)\(' "$root/firmware/include/ncl/ncl.h" \
    "$root/firmware/include/ncl/ncl_$backend.h" | sed -E 's/.*(ncl_[a-z0-9_]+)\($/\1/' | sort -u >"$work/roots"

# address-taken functions, as "TAKEN <source file> <call-graph title>" (a static's title is
# "<source file>:<name>", a global's its name), and functions folded into an identical one
# (-fipa-icf) as "ALIAS <title> <title of its section's owner>": one objdump over all objects
for o in "${objs[@]}"; do
    ci=${o%.obj}.ci
    [[ -f $ci ]] || { echo "stack_bound: $ci missing (built without -fcallgraph-info=su?)" >&2; exit 1; }
    echo "$o $(sed -n '1s/^graph: { title: "\(.*\)"$/\1/p' "$ci")"
done >"$work/sources"
"${prefix}objdump" -t -r "${objs[@]}" | awk '
    FILENAME != "-" { src_of[$1] = $2; next }
    /:     file format / { obj = $1; sub(/:$/, "", obj); src = src_of[obj]; delete kind; delete folded; next }
    /^SYMBOL TABLE:/ { table = 1; next }
    /^RELOCATION RECORDS FOR \[/ { table = 0; sec = $4; gsub(/[\[\]:]/, "", sec); next }
    function title(v) { return kind[v] == "l" ? src ":" v : v }
    table && NF >= 6 && $(NF - 2) ~ /^\.text\./ && $(NF - 3) == "F" {
        kind[$NF] = $2 == "g" ? "g" : "l"
        owner = substr($(NF - 2), 7)
        if (owner != $NF) folded[$NF] = owner
        next
    }
    table && /^$/ { for (f in folded) if (folded[f] in kind) print "ALIAS", title(f), title(folded[f]); table = 0; next }
    !table && NF == 3 && $2 ~ /^R_/ {
        if ($2 ~ /^R_ARM_(THM_)?(CALL|JUMP)|^R_RISCV_(CALL|JAL|BRANCH|RVC_BRANCH|RVC_JUMP|RELAX)/) next
        v = $3; sub(/[+-]0x[0-9a-f]+$/, "", v); sub(/^\.text\./, "", v)
        if (!(v in kind) || sec == ".text." v || sec == ".rodata." v) next
        print "TAKEN", src, title(v)
    }' "$work/sources" - | sort -u >"$work/graph_extra"

# libgcc's helpers (64-bit division, soft float): not compiled here, so their frames and calls
# come from the linked image's disassembly (prologue: push/stmdb, sub sp / addi sp), keyed by
# address so that every alias of one helper is the same node
image=$dir/ncl_link_check
"${prefix}nm" "$image" | awk '$2 ~ /^[tTwW]$/ && $3 ~ /^__/ { a = $1; sub(/^0+/, "", a); print "ADDR", $3, a }' >>"$work/graph_extra"
"${prefix}objdump" -d --no-show-raw-insn "$image" | awk '
    /^[0-9a-f]+ <[^>]+>:$/ { name = ""; if ($2 ~ /^<__/) { name = $1; sub(/^0+/, "", name); n = 0; frame[name] = 0 } next }
    name == "" { next }
    n++ < 6 {
        line = $0
        if (line ~ /push|stmdb[ \t]+sp!/) { sub(/.*\{/, "", line); sub(/\}.*/, "", line); frame[name] += 4 * split(line, r, ",") }
        else if (line ~ /sub(\.w)?[ \t]+sp, (sp, )?#[0-9]+/) { sub(/.*#/, "", line); frame[name] += line + 0 }
        else if (line ~ /addi(16sp)?[ \t]+sp, *(sp, *)?-[0-9]+/) { sub(/.*-/, "", line); frame[name] += line + 0 }
    }
    /\t(bl|blx|b|b\.w|jal|j|tail|call)[ \t]+[0-9a-f]+ <__[a-z0-9_]+>$/ { t = $0; sub(/.*\t(bl|blx|b|b\.w|jal|j|tail|call)[ \t]+/, "", t); sub(/ .*/, "", t); print "HCALL", name, t }
    END { for (f in frame) print "HELPER", f, frame[f] }' >>"$work/graph_extra"
ci_files=()
for o in "${objs[@]}"; do ci_files+=("${o%.obj}.ci"); done
awk -v limit="$limit" -v backend="$backend" '
    FILENAME ~ /roots$/ { roots[++nroots] = $1; next }
    FILENAME ~ /graph_extra$/ {
        if ($1 == "TAKEN") { taken[++ntaken] = $3; taken_src[ntaken] = $2 }
        else if ($1 == "ALIAS") alias[$2] = $3
        else if ($1 == "ADDR") { alias[$2] = "@" $3; helper_name["@" $3] = $2 } # a helper, by its address
        else if ($1 == "HELPER") { frame["@" $2] = $3; defined["@" $2] = 1; file["@" $2] = "libgcc" }
        else if ($1 == "HCALL" && !(("@" $2, "@" $3) in seen)) { seen["@" $2, "@" $3] = 1; callee["@" $2, ++ncallee["@" $2]] = "@" $3 }
        next
    }
    /^graph: \{ title: / { src = $0; sub(/^graph: \{ title: "/, "", src); sub(/"$/, "", src); next }
    /^node: / {
        title = $0; sub(/^node: \{ title: "/, "", title); sub(/".*/, "", title)
        if (match($0, /[0-9]+ bytes \([a-z,]+\)/)) {
            what = substr($0, RSTART, RLENGTH); split(what, w, " ")
            frame[title] = w[1] + 0; file[title] = src; defined[title] = 1
            if (what ~ /dynamic/) dynamic[title] = 1
        }
        next
    }
    /^edge: / {
        s = $0; sub(/^edge: \{ sourcename: "/, "", s); t = s; sub(/".*/, "", s)
        sub(/^[^"]*" targetname: "/, "", t); sub(/".*/, "", t)
        if (t == "__indirect_call") indirect[s] = 1
        else if (!((s, t) in seen)) { seen[s, t] = 1; callee[s, ++ncallee[s]] = t }
        next
    }
    function fail(msg) { print "stack_bound: " msg > "/dev/stderr"; failed = 1 }
    # the functions an indirect call in `f` may reach
    function targets(f,   i, n, src) {
        n = 0; src = file[f]
        if (src ~ /\/backends\//) return 0 # the board callbacks: outside the image
        for (i = 1; i <= ntaken; i++)
            if (src !~ /ncl_dtype\.c$/ || taken_src[i] == src) cand[f, ++n] = taken[i]
        return n
    }
    function worst(f,   i, n, w, best, via_f) {
        if (!(f in defined) && (f in alias)) f = alias[f]
        if (f in memo) return memo[f]
        if (!(f in defined)) { fail("no frame for " f " (a callee outside the objects analysed)"); memo[f] = 0; return 0 }
        if (f in active) { fail("recursion through " f ": no bound"); return 0 }
        if (f in dynamic) fail(f " has a dynamic stack frame")
        active[f] = 1; best = 0; via_f = ""
        for (i = 1; i <= ncallee[f]; i++) { w = worst(callee[f, i]); if (w > best) { best = w; via_f = resolved(callee[f, i]) } }
        if (f in indirect) {
            n = targets(f)
            for (i = 1; i <= n; i++) { w = worst(cand[f, i]); if (w > best) { best = w; via_f = resolved(cand[f, i]) } }
        }
        delete active[f]
        memo[f] = frame[f] + best; via[f] = via_f
        return memo[f]
    }
    function resolved(f) { return !(f in defined) && (f in alias) ? alias[f] : f }
    function short(f) { if (f ~ /^@/) return helper_name[f]; sub(/.*\//, "", f); return f }
    END {
        for (r = 1; r <= nroots; r++) {
            f = roots[r]
            if (!(f in defined)) { fail(f " is declared public but not in the objects"); continue }
            b = worst(f); path = short(f)
            for (g = via[f]; g != ""; g = via[g]) path = path " > " short(g)
            printf "%-28s %6d  %s\n", f, b, path > rows
            if (b > limit) fail(f ": " b " bytes of stack, past the limit of " limit)
        }
        exit failed
    }' rows="$work/rows" "$work/roots" "$work/graph_extra" "${ci_files[@]}" && rc=0 || rc=$?
sort -k2 -n -r "$work/rows"
echo "(libgcc's helpers counted from the image's disassembly; the board's callbacks are not counted)"
exit $rc
