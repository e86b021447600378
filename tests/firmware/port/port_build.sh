#!/usr/bin/env bash
# port_build.sh — the footprint command: builds firmware/port freestanding for each board target
# (cmake/toolchains/) in two configurations (every algorithm with the schedule checker; the ring
# and chain families alone without it: the smallest board) and prints, per configuration, the text
# a board carries (the ncl_board_mmio image: every public call of ncl.h and ncl_mmio.h, the rest
# linked only as far as it reaches) split by library, and the worst-case stack of any public call
# per call path (stack_bound.sh) for the mmio and shm backends.
# Fails when the engine or a backend needs a symbol nothing there defines (a C library call),
# when the link check cannot fail (a probe that calls puts() must not link), when an object
# writes data, bss or a dynamic stack frame, or when a figure passes its limit in limits.txt.
# Usage: tests/firmware/port/port_build.sh WORKDIR
# Exit 77 (CTest: skipped) when no cross compiler is installed (./ringsim build installs them).
set -euo pipefail
work=${1:?usage: port_build.sh WORKDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
targets=() # toolchain file : tool prefix
command -v arm-none-eabi-gcc >/dev/null && targets+=("arm-cortex-m4:arm-none-eabi-")
command -v riscv64-unknown-elf-gcc >/dev/null && targets+=("riscv32-imac:riscv64-unknown-elf-")
if ((${#targets[@]} == 0)); then
    echo "port_build: no gcc-arm-none-eabi or gcc-riscv64-unknown-elf: skipped (./ringsim build installs them)"
    exit 77
fi
# checker, algorithm families, sub-communicators (PORT_CONFIGS="OFF all ON" adds one): the smallest
# board leaves the checker and ncl_comm_split/ncl_send out
configs=("ON all ON" "OFF ring;chain OFF")
[[ -z ${PORT_CONFIGS:-} ]] || configs+=("$PORT_CONFIGS")

mkdir -p "$work"
failed=0
memory=()
fail() { echo "port_build: $*" >&2; exit 1; }
over() { echo "port_build: $*" >&2; failed=1; }
# the limit for a target, configuration and figure (limits.txt; none: no limit)
limit_of() { awk -v t="$1" -v c="$2" -v w="$3" '$1 == t && ($2 == c || $2 == "*") && $3 == w { print $4; exit }' "$here/limits.txt"; }
# text + rodata bytes each library puts into a linked image, from its map file
map_text() {
    awk 'function hex(s,   i, n) { n = 0; s = tolower(s); sub(/^0x/, "", s)
             for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
             return n }
         /^Linker script and memory map/ { on = 1 }
         on && /^ \.(text|rodata)/ {
             if (NF == 1) { getline; size = $2; file = $3 } else { size = $3; file = $4 }
             if (file == "") next
             sub(/\(.*/, "", file); sub(/.*\//, "", file); sub(/^lib/, "", file); sub(/\.a$/, "", file)
             text[file] += hex(size) }
         END { for (f in text) print f, text[f] }' "$1"
}

printf '%-13s %-7s %-10s %7s %6s %6s %6s %6s %7s %14s %6s %6s  %s\n' target checker algorithms engine mmio shm common \
    libgcc 'e+mmio' 'board image' 'stack' '(shm)' 'deepest public call (mmio)'
for t in "${targets[@]}"; do
    name=${t%%:*} prefix=${t#*:}
    for config in "${configs[@]}"; do
        read -r checker algos split <<<"$config"
        label="checker-$checker-${algos//;/+}"
        dir=$work/$name-$label
        cmake -S "$root/firmware/port" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCL_PORT_CHECKER=$checker \
            "-DNCL_PORT_ALGOS=$algos" "-DNCL_PORT_SPLIT=${split:-ON}" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$name.cmake" \
            >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log" >&2; fail "$name $label: configure failed"; }
        # (a symbol no library defines fails this link: the image takes every object whole)
        cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; fail "$name $label: build failed"; }
        image=$dir/ncl_link_check
        undefined=$("${prefix}nm" -u "$image")
        [[ -z $undefined ]] || fail "$name: undefined symbols in the image: $undefined"
        # the check bites: the same image with a call to puts() must not link
        if cmake --build "$dir" --target ncl_link_probe >"$dir.probe.log" 2>&1; then
            fail "$name: an image calling puts() linked: the link check does not catch undefined symbols"
        fi
        grep -q "undefined reference to .puts" "$dir.probe.log" || { cat "$dir.probe.log" >&2; fail "$name: the probe failed otherwise"; }
        read -r _ data bss _ < <("${prefix}size" "$image" | tail -1)
        ((data == 0 && bss == 0)) || fail "$name: the image has data ($data B) or bss ($bss B): firmware keeps no globals"
        ! grep -q dynamic $(find "$dir" -name '*.su') || fail "$name: a dynamic stack frame: $(grep -h dynamic $(find "$dir" -name '*.su'))"

        declare -A text=()
        while read -r lib bytes; do text[$lib]=$bytes; done < <(map_text "$dir/ncl_board_mmio.map")
        engine=${text[ncl_engine]:-0} mmio=${text[ncl_mmio]:-0} common=${text[ncl_backend]:-0}
        shm=$(map_text "$dir/ncl_board_shm.map" | awk '$1 == "ncl_shm" { print $2 }')
        both=$((engine + mmio + common))
        read -r board _ < <("${prefix}size" "$dir/ncl_board_mmio" | awk 'END { print $1 }')
        "$here/stack_bound.sh" "$dir" "$prefix" mmio 1000000 >"$dir.stack_mmio.txt" || fail "$name $label: no stack bound (mmio)"
        "$here/stack_bound.sh" "$dir" "$prefix" shm 1000000 >"$dir.stack_shm.txt" || fail "$name $label: no stack bound (shm)"
        # the stack check bites: a limit below the deepest call must fail it
        if "$here/stack_bound.sh" "$dir" "$prefix" mmio 64 >/dev/null 2>&1; then
            fail "$name $label: stack_bound.sh passed a 64-byte limit: the stack check does not bite"
        fi
        read -r call stack path < <(head -1 "$dir.stack_mmio.txt")
        read -r _ stack_shm _ < <(head -1 "$dir.stack_shm.txt")
        printf '%-13s %-7s %-10s %7d %6d %6d %6d %6d %7d %14d %6d %6d  %s\n' "$name" "$checker" "${algos//;/+}" "$engine" \
            "$mmio" "${shm:-0}" "$common" "${text[gcc]:-0}" "$both" "$board" "$stack" "$stack_shm" "$call"

        if [[ $config == "${configs[0]}" ]]; then # the same structures in every configuration
            read -r comm cost < <("${prefix}nm" -S "$dir/libncl_sizes.a" |
                awk '$4 == "ncl_size_comm" { c = $2 } $4 == "ncl_size_cost" { k = $2 } END { print c, k }')
            memory+=("$name: a communicator takes $((16#$comm)) B (the state of its NCL_MAX_QUEUES queues inside) + $((16#$cost)) B per cost-table entry + 8 B per rank per ring (none when the rings are lent with ring_positions) + 8 B per rank per intra-server ring + 4 B per ring")
        fi
        limit=$(limit_of "$name" "$label" text)
        [[ -z $limit ]] || ((both <= limit)) || over "$name $label: engine + mmio backend text $both B, past its limit of $limit B"
        limit=$(limit_of "$name" "$label" stack)
        [[ -z $limit ]] || ((stack <= limit && stack_shm <= limit)) ||
            over "$name $label: a public call needs $((stack > stack_shm ? stack : stack_shm)) B of stack, past the limit of $limit B ($work/$name-$label.stack_*.txt)"
    done
done
printf '%s\n' "${memory[@]}"
echo "(text + rodata in bytes as linked into ncl_board_mmio (shm: into ncl_board_shm); data and bss are 0 (checked);"
echo " 'common' is backends/common; stack: the deepest public call's"
echo " bound in bytes, libgcc's helpers included, the board's callbacks not; per-call bounds and paths in WORKDIR/*.stack_*.txt)"
exit $failed
