#!/usr/bin/env bash
# port_qemu.sh — the engine on bare-metal boards: builds firmware/port for each board target and
# runs its QEMU image, one rank per core sharing RAM through the shm backend
# (firmware/port/qemu/board_qemu.c): RV32IMAC on QEMU's `virt` machine (4 harts) and Cortex-M33 on
# mps2-an521 (2 cores, output through semihosting). Each runs every collective in and out of place
# at 1, 1000 and 16384 elements and checks each element bit for bit, once with the whole engine and
# once with the ring and chain families alone. Fails unless QEMU ends through the board's pass
# code with 30 rows, none wrong, each time. --icount: run QEMU counting instructions, so the RISC-V
# table's instruction column is the whole machine's instructions over rank 0's call (QEMU's
# minstret is its global count then; slower: the harts run one at a time).
# Usage: tests/firmware/port/port_qemu.sh WORKDIR [--icount]
# Exit 77 (CTest: skipped) when no board has its cross compiler and QEMU installed.
set -euo pipefail
work=${1:?usage: port_qemu.sh WORKDIR [--icount]}
icount=()
[[ ${2:-} == --icount ]] && icount=(-icount shift=0)
root=$(cd "$(dirname "$0")/../../.." && pwd)
boards=() # toolchain : QEMU command line
if command -v riscv64-unknown-elf-gcc >/dev/null && command -v qemu-system-riscv32 >/dev/null; then
    boards+=("riscv32-imac:qemu-system-riscv32 -M virt -smp 4 -m 128M -bios none")
fi
if command -v arm-none-eabi-gcc >/dev/null && command -v qemu-system-arm >/dev/null; then
    boards+=("arm-cortex-m33:qemu-system-arm -M mps2-an521 -semihosting-config enable=on,target=native")
fi
if ((${#boards[@]} == 0)); then
    echo "port_qemu: no cross compiler with its qemu-system-riscv32 or qemu-system-arm: skipped (./ringsim build installs them)"
    exit 77
fi
fail() { echo "port_qemu: $*" >&2; exit 1; }
mkdir -p "$work"
# the whole engine with its checker, and the smallest board configuration (ring and chain
# families, no checker: the one port_build.sh holds to 64 KiB on Arm), where auto chooses among them
for board in "${boards[@]}"; do
    name=${board%%:*} qemu=${board#*:}
    for config in "ON all ON" "OFF ring;chain OFF"; do
        read -r checker algos split <<<"$config"
        config="$name $config"
        dir=$work/$name-checker-$checker-${algos//;/+}
        cmake -S "$root/firmware/port" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCL_PORT_CHECKER=$checker \
            "-DNCL_PORT_ALGOS=$algos" "-DNCL_PORT_SPLIT=$split" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$name.cmake" \
            >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log" >&2; fail "$config: configure failed"; }
        cmake --build "$dir" --target ncl_qemu_board >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; fail "$config: build failed"; }
        rc=0
        # shellcheck disable=SC2086 # the QEMU command line is words
        timeout 600 $qemu -nographic "${icount[@]}" -kernel "$dir/ncl_qemu_board" >"$dir.out" 2>&1 </dev/null || rc=$?
        echo "# $name, checker $checker, algorithm families: $algos"
        cat "$dir.out"
        ((rc == 0)) || fail "$config: QEMU exited with $rc (124: timed out; else the board's count of bad rows)"
        grep -q '^# OK: 0 bad rows' "$dir.out" || fail "$config: the board did not report OK"
        rows=$(grep -c '^row ' "$dir.out")
        wrong=$(awk '/^row / && $NF != 0' "$dir.out" | wc -l)
        ((rows == 30 && wrong == 0)) || fail "$config: $rows rows (want 30), $wrong with wrong elements"
        [[ $algos == all ]] || grep -qx '# algorithms: allreduce ring; broadcast chain; reduce ring; reduce_scatter ring; allgather ring' "$dir.out" ||
            fail "$config: the board's algorithms are not the ring and chain families alone"
    done
done
