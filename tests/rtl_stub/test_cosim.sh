#!/bin/sh
# test_cosim.sh — end to end co-simulation: ring allreduce and chain broadcast on 4 devices, all RTL, rank 0 alone RTL (mixed) and all SystemC; #wrong = 0 and RTL times within 10 % of SystemC; bad scenarios exit 2 naming file:line; --waves writes one VCD with a scope per RTL rank; --trace draws the RTL ranks and their blocks.
#
# usage: test_cosim.sh RINGSIM SCENARIO_DIR WORK_DIR
# The scenarios are scenarios/rtl_ring4.yaml and rtl_chain4.yaml (every device RTL); the variants
# are made here with sed: `fidelity: systemc` (the NPU model with the block's figures) and
# `rtl_ranks: "0"` (rank 0 RTL, ranks 1-3 SystemC NPUs on the same links).
set -u
R=$1
S=$2
T=$3
mkdir -p "$T"
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# variant NAME KIND: writes $T/NAME_KIND.yaml
variant() {
    case $2 in
    systemc) sed 's/^  fidelity: rtl/  fidelity: systemc/' "$S/$1.yaml" ;;
    dev0) sed 's/^  rtl_clock: 1 GHz/  rtl_clock: 1 GHz\n  rtl_ranks: "0"/' "$S/$1.yaml" ;;
    all) cat "$S/$1.yaml" ;;
    esac >"$T/$1_$2.yaml"
}

# run NAME KIND: runs the variant; sets out_t, in_t (us), wrong (sum of both #wrong), cycles
run() {
    variant "$1" "$2"
    "$R" run "$T/$1_$2.yaml" --links none --stats >"$T/$1_$2.out" 2>"$T/$1_$2.err"
    rc=$?
    [ $rc -eq 0 ] || { fail "$1 $2: exit $rc: $(cat "$T/$1_$2.err")"; return 1; }
    set -- $(grep -v '^#' "$T/$1_$2.out" | head -1)
    [ $# -ge 13 ] || { fail "no result row"; return 1; }
    out_t=$6
    in_t=${10}
    wrong=$(($9 + ${13}))
    return 0
}

for sc in rtl_ring4 rtl_chain4; do
    run $sc systemc || continue
    ref_out=$out_t
    ref_in=$in_t
    [ "$wrong" -eq 0 ] || fail "$sc systemc: #wrong $wrong"
    grep -q '^# rtl:' "$T/${sc}_systemc.out" && fail "$sc systemc: RTL devices clocked"
    for kind in dev0 all; do
        run $sc $kind || continue
        cyc=$(sed -n 's/^# rtl: \([0-9]*\) cycles.*/\1/p' "$T/${sc}_$kind.out")
        [ -n "$cyc" ] && [ "$cyc" -gt 0 ] || fail "$sc $kind: no RTL cycles clocked"
        [ "$wrong" -eq 0 ] || fail "$sc $kind: #wrong $wrong"
        for place in out-of-place in-place; do
            if [ $place = out-of-place ]; then t=$out_t r=$ref_out; else t=$in_t r=$ref_in; fi
            d=$(awk -v t="$t" -v r="$r" 'BEGIN { printf "%+.1f", (t / r - 1) * 100 }')
            printf '%-10s %-4s %-12s  rtl %9s us  systemc %9s us  %6s %%  (%s cycles)\n' \
                $sc $kind $place "$t" "$r" "$d" "$cyc"
            awk -v t="$t" -v r="$r" 'BEGIN { exit !(t <= r * 1.10 && t >= r * 0.90) }' ||
                fail "$sc $kind $place: $t us is not within 10 % of SystemC's $r us"
        done
    done
done

# bad scenarios: what the RTL cannot model, an unknown fidelity -> file:line: key: problem (allowed: ...), exit 2
bad() { # NAME SED-EXPRESSION KEY
    sed "$2" "$S/rtl_ring4.yaml" >"$T/$1.yaml"
    "$R" run "$T/$1.yaml" >"$T/$1.out" 2>"$T/$1.err"
    rc=$?
    [ $rc -eq 2 ] || fail "$1: exit $rc, not 2"
    grep -Eq "^$T/$1.yaml:[0-9]+: $3: .*\(allowed: " "$T/$1.err" || fail "$1: message: $(cat "$T/$1.err")"
    echo "bad $1: exit $rc: $(cat "$T/$1.err")"
}
bad bad_dtype 's/^  dtype: float/  dtype: half/' workload.dtype
bad bad_op 's/^  op: sum/  op: prod/' workload.op
bad bad_fidelity 's/^  fidelity: rtl/  fidelity: verilog/' device.fidelity
bad bad_ranks 's/^  rtl_clock: 1 GHz/  rtl_ranks: "0 9"/' device.rtl_ranks
bad bad_clock 's/^  rtl_clock: 1 GHz/  rtl_clock: fast/' device.rtl_clock

# mixed fidelity with NPUs unlike the block (4 DMA engines, 2 channels): every rank still plans
# alike (the NPUs report the block's queues and engine), so the collectives finish and are right
for sc in rtl_ring4 rtl_chain4; do
    sed -e 's/^  rtl_clock: 1 GHz/  rtl_clock: 1 GHz\n  rtl_ranks: "0"/' -e 's/^  dma_engines: 1/  dma_engines: 4/' \
        -e 's/^  channels: 1/  channels: 2/' -e 's/^  sizes: .*/  sizes: {begin: 64 KiB, end: 64 KiB, factor: 2}/' \
        "$S/$sc.yaml" >"$T/${sc}_npu4.yaml"
    "$R" run "$T/${sc}_npu4.yaml" --links none >"$T/${sc}_npu4.out" 2>"$T/${sc}_npu4.err" ||
        fail "$sc mixed, 4-engine NPUs: exit $?: $(cat "$T/${sc}_npu4.err")"
    set -- $(grep -v '^#' "$T/${sc}_npu4.out" | head -1)
    [ $# -ge 13 ] && [ $(($9 + ${13})) -eq 0 ] || fail "$sc mixed, 4-engine NPUs: no row or #wrong"
done

# issue 19: a link down under RTL devices ends in the engine's timeout naming the link, at once
# (the domain clocked a block waiting for an ack a cycle at a time: no result after 300 s)
sed -e 's/^  sizes: .*/  sizes: {begin: 64 KiB, end: 64 KiB, factor: 2}/' "$S/rtl_ring4.yaml" >"$T/down.yaml"
printf 'faults:\n  - {at: 0 s, link: [1, 2], both: false, action: down}\n' >>"$T/down.yaml"
timeout 120 "$R" run "$T/down.yaml" --links none >"$T/down.out" 2>"$T/down.err"
rc=$?
[ $rc -eq 3 ] && grep -q 'link npu1->npu2 is down' "$T/down.err" || fail "rtl link down: exit $rc: $(cat "$T/down.err")"
# issue 19: det (a gather into rank 0's scratch) with rank 0 RTL and the others SystemC: the
# NPUs write into the block's scratch through its proxy (it had none: "outside the bound buffer")
sed -e 's/^  rtl_clock: 1 GHz/  rtl_clock: 1 GHz\n  rtl_ranks: "0"/' -e 's/^  algorithm: ring/  algorithm: det/' \
    -e 's/^  sizes: .*/  sizes: {begin: 1 KiB, end: 16 KiB, factor: 4}/' "$S/rtl_ring4.yaml" >"$T/det_dev0.yaml"
"$R" run "$T/det_dev0.yaml" --links none >"$T/det_dev0.out" 2>"$T/det_dev0.err" || fail "det, rank 0 RTL: exit $?: $(cat "$T/det_dev0.err")"
[ "$(grep -v '^#' "$T/det_dev0.out" | awk '$9 == 0 && $13 == 0' | wc -l)" -eq 3 ] || fail "det, rank 0 RTL: not 3 rows with #wrong 0"

# --waves: one VCD, a scope per RTL rank, the clock toggling; none asked of a SystemC scenario
small() { sed 's/^  sizes: .*/  sizes: {begin: 1 KiB, end: 1 KiB, factor: 2}/' "$T/rtl_ring4_$1.yaml" >"$T/small_$1.yaml"; }
for kind in all dev0 systemc; do variant rtl_ring4 $kind; small $kind; done
rm -f "$T/all.vcd" "$T/dev0.vcd"
"$R" run "$T/small_all.yaml" --links none --waves "$T/all.vcd" >/dev/null 2>"$T/w.err" || fail "--waves: exit $?: $(cat "$T/w.err")"
[ -s "$T/all.vcd" ] || fail "--waves: no VCD"
for r in 0 1 2 3; do grep -q "^ \$scope module rank$r \$end" "$T/all.vcd" || fail "--waves: no scope rank$r"; done
grep -q '^\$timescale 1ps \$end' "$T/all.vcd" || fail "--waves: timescale"
# times are whole cycles of 1000 ps plus the half-cycle dump (the VCD starts at the first cycle
# after elaboration, not at 0: the bring-up's register accesses are not in it, rtl_stub/README.md)
grep -Eq '^#[0-9]*500$' "$T/all.vcd" || fail "--waves: no half-cycle time step (the clock does not toggle)"
"$R" run "$T/small_dev0.yaml" --links none --waves "$T/dev0.vcd" >/dev/null 2>"$T/w.err" || fail "--waves dev0: exit $?"
[ "$(grep -c '^ \$scope module rank' "$T/dev0.vcd")" -eq 1 ] && grep -q '^ \$scope module rank0 \$end' "$T/dev0.vcd" ||
    fail "--waves dev0: the VCD should hold rank0 alone"
echo "waves: $(wc -c <"$T/all.vcd") B for 4 RTL ranks, $(wc -c <"$T/dev0.vcd") B for rank 0 alone"
"$R" run "$T/small_systemc.yaml" --links none --waves "$T/sc.vcd" >/dev/null 2>"$T/w.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- '--waves: the scenario has no RTL device' "$T/w.err" || fail "--waves on SystemC: exit $rc: $(cat "$T/w.err")"
rm -f "$T/all.vcd" "$T/dev0.vcd"

# --trace: an RTL rank is process "rtlN" with its collectives and queue tasks (as an NPU's) and
# the block's tracks: link tx (tid 24) / rx (25), irq (26), engine busy (27). Every task that
# leaves the block (WRITE, WRITE_REDUCE, NOTIFY_RECORD) is one link tx transfer, acked ok.
# trace_rank FILE RANK: checks RTL rank RANK's tracks in FILE
trace_rank() {
    f=$1
    r=$2
    grep -q "^{\"ph\":\"M\",\"pid\":$r,\"name\":\"process_name\",\"args\":{\"name\":\"rtl$r\"}}" "$f" ||
        fail "--trace: no process rtl$r"
    tasks=$(grep -Ec "^\{\"ph\":\"(X|i)\",(\"s\":\"t\",)?\"pid\":$r,\"tid\":[1-8],.*\"name\":\"(WRITE|WRITE_REDUCE|NOTIFY_RECORD)\"" "$f")
    tx=$(grep -c "^{\"ph\":\"X\",\"pid\":$r,\"tid\":24,.*\"ack\":\"ok\"" "$f")
    rx=$(grep -c "^{\"ph\":\"X\",\"pid\":$r,\"tid\":25," "$f")
    irq=$(grep -c "^{\"ph\":\"i\",\"s\":\"t\",\"pid\":$r,\"tid\":26,.*\"name\":\"IRQ\"" "$f")
    busy=$(grep -c "^{\"ph\":\"X\",\"pid\":$r,\"tid\":27,.*\"name\":\"busy\"" "$f")
    [ "$tasks" -gt 0 ] && [ "$tx" -eq "$tasks" ] || fail "--trace rank $r: $tx link tx transfers acked ok for $tasks tasks"
    [ "$rx" -gt 0 ] && [ "$irq" -gt 0 ] && [ "$busy" -gt 0 ] || fail "--trace rank $r: rx $rx, irq $irq, busy $busy"
    echo "trace rtl$r: $tasks tasks, $tx tx, $rx rx, $irq irq, $busy busy"
}
"$R" run "$T/small_all.yaml" --links none --trace "$T/all.json" >/dev/null 2>"$T/t.err" || fail "--trace: exit $?: $(cat "$T/t.err")"
for r in 0 1 2 3; do trace_rank "$T/all.json" $r; done
"$R" run "$T/small_dev0.yaml" --links none --trace "$T/dev0.json" >/dev/null 2>"$T/t.err" || fail "--trace dev0: exit $?"
trace_rank "$T/dev0.json" 0
grep -q '"args":{"name":"npu1"}' "$T/dev0.json" || fail "--trace dev0: rank 1 is not the NPU npu1"
grep -Eq '"pid":[1-3],"tid":2[4-7],' "$T/dev0.json" && fail "--trace dev0: RTL tracks on an NPU rank"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "cosim: all checks passed"
