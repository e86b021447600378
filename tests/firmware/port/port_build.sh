#!/usr/bin/env bash
# port_build.sh — builds firmware/port freestanding for each board target (cmake/toolchains/) and
# fails when the engine or the mmio backend needs a symbol nothing there defines (a C library
# call), when the link check cannot fail (a probe that calls puts() must not link), or when an
# object writes data, bss or a dynamic stack frame. Each target is built with and without the
# schedule checker (NCL_PORT_CHECKER). Prints the footprint: text of each library, the image, and
# the largest stack frame (-fstack-usage, per function, not yet per call path).
# Usage: tests/firmware/port/port_build.sh WORKDIR
# Exit 77 (CTest: skipped) when no cross compiler is installed (./ringsim build installs them).
set -euo pipefail
work=${1:?usage: port_build.sh WORKDIR}
root=$(cd "$(dirname "$0")/../../.." && pwd)
targets=() # toolchain file : tool prefix
command -v arm-none-eabi-gcc >/dev/null && targets+=("arm-cortex-m4:arm-none-eabi-")
command -v riscv64-unknown-elf-gcc >/dev/null && targets+=("riscv32-imac:riscv64-unknown-elf-")
if ((${#targets[@]} == 0)); then
    echo "port_build: no gcc-arm-none-eabi or gcc-riscv64-unknown-elf: skipped (./ringsim build installs them)"
    exit 77
fi

mkdir -p "$work"
fail() { echo "port_build: $*" >&2; exit 1; }
text_of() { "${prefix}size" -t "$@" | awk 'END { print $1 }'; } # text (+ rodata) of objects/archives

printf '%-14s %-8s %8s %8s %8s %8s %8s %10s %6s %6s  %s\n' target checker engine backend mmio shm libc image_text data bss \
    'largest stack frame'
for t in "${targets[@]}"; do
    name=${t%%:*} prefix=${t#*:}
    for checker in ON OFF; do
        dir=$work/$name-checker-$checker
        cmake -S "$root/firmware/port" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCL_PORT_CHECKER=$checker \
            -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$name.cmake" >"$dir.configure.log" 2>&1 ||
            { cat "$dir.configure.log" >&2; fail "$name: configure failed"; }
        # (a symbol no library defines fails this link: the image takes every object whole)
        cmake --build "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; fail "$name: build failed"; }
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
        frame=$(cat $(find "$dir" -name '*.su' -path '*ncl_*') | sort -t$'\t' -k2 -n | tail -1 |
            awk -F'\t' '{ n = split($1, p, ":"); sub(".*/", "", p[1]); printf "%s B %s (%s)", $2, p[n], p[1] }')
        printf '%-14s %-8s %8d %8d %8d %8d %8d %10d %6d %6d  %s\n' "$name" "$checker" "$(text_of "$dir/libncl_engine.a")" \
            "$(text_of "$dir/libncl_backend.a")" "$(text_of "$dir/libncl_mmio.a")" "$(text_of "$dir/libncl_shm.a")" \
            "$(text_of "$dir/libncl_libc.a")" \
            "$(text_of "$image")" "$data" "$bss" "$frame"
    done
done
