#!/usr/bin/env bash
# check_cycles.sh — proves the modules (objects) of a static library import each other without a loop.
#
# Usage: check_cycles.sh NM LIBRARY.a [--dot]
#   NM     the toolchain's nm (CMAKE_NM)
#   --dot  also print the import graph (Graphviz) on stdout
#
# A module is one object of the archive (one .c file). Module A imports module B when A references
# a symbol that B defines; that is the real dependency, whatever headers say (a header shared by
# two modules declares both directions' functions, so #includes over-approximate). The script
# builds that graph from `nm` and fails, printing every strongly connected component of more than
# one module with the symbols on its edges, if any two modules import each other directly or
# through others: such a pair cannot be understood, tested or replaced one at a time.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 NM LIBRARY.a [--dot]" >&2
    exit 2
fi
nm_tool=$1
lib=$2
dot=${3:-}
if [[ ! -f $lib ]]; then
    echo "import_cycles: $lib does not exist (build it first)" >&2
    exit 2
fi

table=$(LC_ALL=C "$nm_tool" --format=posix "$lib") || {
    echo "import_cycles: $nm_tool could not read $lib" >&2
    exit 2
}

# posix format: "lib.a[obj.o]:" headers, then rows "name type [value size]".
LC_ALL=C awk -v lib="$lib" -v dot="$dot" '
/^[^ ]+\[[^]]+\]:$/ || /^[^ ]+:$/ {
    obj = $0; sub(/^[^[]*\[/, "", obj); sub(/\]?:$/, "", obj); sub(/\.c\.o$|\.o$/, "", obj)
    mods[obj] = 1
    next
}
NF >= 2 {
    name = $1; type = $2
    if (type == "U") { used[obj, name] = 1; uses[obj] = uses[obj] " " name; next }
    if (type ~ /^[A-Z]$/ && type != "U") definer[name] = obj
}
END {
    # edges A -> B with the symbols that make them
    for (a in mods) {
        n = split(uses[a], syms, " ")
        for (i = 1; i <= n; i++) {
            s = syms[i]
            if (s == "" || !(s in definer)) continue
            b = definer[s]
            if (b == a) continue
            if (!((a, b) in edge)) { edge[a, b] = s; out[a] = out[a] " " b } else if (index(" " edge[a, b] " ", " " s " ") == 0) edge[a, b] = edge[a, b] " " s
        }
    }
    if (dot == "--dot") {
        print "digraph imports {"
        for (k in edge) { split(k, ab, SUBSEP); printf "  \"%s\" -> \"%s\";\n", ab[1], ab[2] }
        print "}"
    }
    # Tarjan, iteratively (awk has no recursion limits worth trusting on big graphs)
    idx = 0; nscc = 0; sp = 0
    for (v in mods) {
        if (v in index_of) continue
        # explicit stack of (node, position in its out list)
        top = 1; cs_node[1] = v; cs_pos[1] = 0
        index_of[v] = idx; low[v] = idx; idx++; stack[++sp] = v; onstack[v] = 1
        nout[v] = split(out[v], succ_list, " "); for (i = 1; i <= nout[v]; i++) succ[v, i] = succ_list[i]
        while (top > 0) {
            u = cs_node[top]
            if (cs_pos[top] < nout[u]) {
                cs_pos[top]++
                w = succ[u, cs_pos[top]]
                if (w == "") continue
                if (!(w in index_of)) {
                    index_of[w] = idx; low[w] = idx; idx++; stack[++sp] = w; onstack[w] = 1
                    nout[w] = split(out[w], succ_list, " "); for (i = 1; i <= nout[w]; i++) succ[w, i] = succ_list[i]
                    top++; cs_node[top] = w; cs_pos[top] = 0
                } else if (onstack[w] && index_of[w] < low[u]) {
                    low[u] = index_of[w]
                }
                continue
            }
            if (low[u] == index_of[u]) {
                members = ""; count = 0
                do { x = stack[sp--]; onstack[x] = 0; members = members " " x; count++ } while (x != u)
                if (count > 1) { nscc++; scc[nscc] = members }
            }
            top--
            if (top > 0) { p = cs_node[top]; if (low[u] < low[p]) low[p] = low[u] }
        }
    }
    nmods = 0; for (m in mods) nmods++
    nedges = 0; for (k in edge) nedges++
    if (nscc == 0) {
        printf "import_cycles: %s: %d modules, %d imports, no cycle\n", lib, nmods, nedges
        exit 0
    }
    for (c = 1; c <= nscc; c++) {
        printf "import_cycles: %s: these modules import each other:%s\n", lib, scc[c]
        n = split(scc[c], ms, " ")
        for (i = 1; i <= n; i++) for (j = 1; j <= n; j++)
            if (i != j && ((ms[i], ms[j]) in edge))
                printf "  %s -> %s: %s\n", ms[i], ms[j], edge[ms[i], ms[j]]
    }
    printf "import_cycles: FAILED: %d cycle(s) in %s\n", nscc, lib
    exit 1
}' <<<"$table"
