// test_mmio_rtl.cpp — the unchanged mmio HAL backend driving N linked verilated rs_dev blocks (RsDevSystem): bring-up, collectives bit-exact through the correctness matrix, error paths, timeouts, and the RTL speed figure.
//
// The mmio world of test_mmio_ref.c (tests/firmware/backends/mmio_world.h) with the C reference
// replaced by the RTL: register accesses are bus transfers clocked through the harness (one cycle
// of every device each), memory copies go straight into the block's memory image, and
// wait_irq/poll advance the clock of ALL devices until something changes (an irq line rises, a
// link transfer is acked, an engine goes idle), the system is quiet, or a cycle budget passes.
// Simulated time: 1 cycle = 1 ns (a 1 GHz block clock). A quiet system (no engine busy, nothing on
// the link) cannot change by itself, so the hooks skip IDLE_NS of idle time there instead of
// ticking it: now_ns = ticked cycles + skipped idle time. Single-threaded: every rank's ncl_test
// round-robin, then its wait_event.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

extern "C" {
#include <cmocka.h>
}

#include <ncl/ncl.h>
#include <ncl/ncl_mmio.h>
#include <ncl/ncl_mmio_regs.h>

#include "matrix.h"
#include "mmio_world.h"
#include "rs_dev_harness.hpp"

#define IDLE_NS 2000u            // idle time a hook skips when the system is quiet
#define POLL_BUDGET 512u         // cycles one poll() call may tick
#define HANG_CYCLES 50000000ull  // a hook that ticked this long without a change: fail, never hang

namespace {

// ---- the blocks: the mmio world's device ops ----------------------------------------------------

struct rtldevs {
  int n = 0;
  std::unique_ptr<VerilatedContext> vctx;
  std::unique_ptr<RsDevSystem> sys;
  uint64_t skipped = 0;  // idle ns skipped (not ticked)
};

RsDevSystem &sys_of(mmio_world *w) { return *((rtldevs *)w->dev)->sys; }

uint64_t now_of(rtldevs *d) { return d->sys->cycles + d->skipped; }

// What "something changed" means to a waiting hook: an irq line, an engine's busy, a link ack.
struct snap {
  uint32_t irq = 0, busy = 0;
  size_t acked[MMIO_MAXR] = {};
};
snap take_snap(rtldevs *d) {
  snap s;
  for (int r = 0; r < d->n; r++) {
    s.irq |= (uint32_t)(d->sys->top(r).irq != 0) << r;
    s.busy |= (uint32_t)(d->sys->top(r).busy != 0) << r;
    s.acked[r] = d->sys->dev(r).log_acked;
  }
  return s;
}
// An irq rising, an engine going idle or a transfer acked: a rank's firmware may have work.
bool changed(const snap &a, const snap &b, int n) {
  if (b.irq & ~a.irq) return true;
  if (a.busy & ~b.busy) return true;
  for (int r = 0; r < n; r++)
    if (a.acked[r] != b.acked[r]) return true;
  return false;
}

// Ticks every device until something changes, the system is quiet or `budget` cycles passed.
// Returns 1 on a change, 2 when quiet (nothing ticked: idle time skipped), 0 on the budget.
int advance(rtldevs *d, uint64_t budget) {
  if (d->sys->quiet()) {
    d->skipped += IDLE_NS;
    return 2;
  }
  snap a = take_snap(d);
  for (uint64_t c = 0; c < budget; c++) {
    d->sys->tick();
    snap b = take_snap(d);
    if (changed(a, b, d->n)) return 1;
    if (d->sys->quiet()) return 1;  // drained: the firmware gets to look
    a = b;
  }
  return 0;
}

void *rtl_open(int n) {
  rtldevs *d = new rtldevs;
  d->n = n;
  d->vctx = std::make_unique<VerilatedContext>();
  d->sys = std::make_unique<RsDevSystem>(d->vctx.get(), (unsigned)n, MMIO_MEM_BYTES);
  return d;
}

void rtl_close(void *dev) { delete (rtldevs *)dev; }

uint32_t rtl_reg_read(void *dev, int rank, uint32_t off, int *err) {
  return ((rtldevs *)dev)->sys->reg_read((unsigned)rank, off, err);
}

int rtl_reg_write(void *dev, int rank, uint32_t off, uint32_t v) {
  return ((rtldevs *)dev)->sys->reg_write((unsigned)rank, off, v);
}

uint8_t *rtl_mem(void *dev, int rank) { return ((rtldevs *)dev)->sys->mem((unsigned)rank); }

// Simulation's "sleep until irq": clock all devices until this rank's irq, another change
// (other ranks' firmware gets to run), quiet, or the timeout.
int rtl_wait_irq(void *dev, int rank, uint64_t timeout_ns) {
  rtldevs *d = (rtldevs *)dev;
  if (d->sys->top(rank).irq) return 1;
  uint64_t budget = timeout_ns < HANG_CYCLES ? timeout_ns : HANG_CYCLES;
  if (budget == 0) budget = 1;
  int rc = advance(d, budget);
  assert_true(rc != 0 || budget < HANG_CYCLES);
  return d->sys->top(rank).irq != 0;
}

// Polled mode's yield: a few hundred cycles of every device; a change or a quiet system ends the
// wait (the drive loop then runs every rank's firmware).
int rtl_poll(void *dev, int) { return advance((rtldevs *)dev, POLL_BUDGET) != 0; }

uint64_t rtl_now(void *dev) { return now_of((rtldevs *)dev); }

int rtl_settle(void *dev) { return ((rtldevs *)dev)->sys->run_until_quiet(1000000); }

const mmio_dev_ops rtl_ops = {"mmio rtl", 5000000, rtl_open,   rtl_close, rtl_reg_read, rtl_reg_write,
                              rtl_mem,    rtl_wait_irq, rtl_poll, rtl_now,  rtl_settle};

// ---- bring-up ---------------------------------------------------------------------------------

// Reset, ID/VERSION/CAPS, ring, doorbell, wait: the REGISTERS.md sequence against the RTL, in
// interrupt and polled mode; a block that does not say 'RSIM' is refused.
void test_bringup(void **) {
  for (int irq = 0; irq <= 1; irq++) {
    mmio_opts o = {irq, 64, 4, 2, 0, 0, 0};
    mmio_world *w = mmio_world_devices(&rtl_ops, 2);
    // dirty the block first: bring-up's soft reset must clear it
    sys_of(w).reg_write(0, NCL_MMIO_RING_SIZE, 7);
    sys_of(w).reg_write(0, NCL_MMIO_IRQ_MASK, 0x5);
    for (int r = 0; r < 2; r++) assert_int_equal(mmio_world_backend(w, r, &o), NCL_SUCCESS);
    assert_int_equal(mmio_world_comms(w, &o), NCL_SUCCESS);
    for (int r = 0; r < 2; r++) mmio_world_check_up(w, r, irq, 64);
    // a doorbell-to-irq round trip through the HAL: a record to ourselves
    const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
    assert_int_equal(ncl_hal_notify_record(h, 0, 0, 3), NCL_SUCCESS);
    assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_RING_TAIL), 1);
    int done = 0;
    assert_int_equal(ncl_hal_wait_event(h, 1000000), NCL_SUCCESS);
    if (irq) assert_int_equal(sys_of(w).top(0).irq, 0);  // the events were taken (W1C)
    assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_RING_HEAD), 1);
    assert_int_equal(ncl_hal_notify_try_wait(h, 0, 3, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 1);
    assert_int_equal(mmio_world_reg(w, 0, NCL_MMIO_NOTIFY_CNT(3)), 0);  // consumed
    // a record to the peer over the link: rank 1's counter (sender 0, id 2)
    assert_int_equal(ncl_hal_notify_record(h, 1, 1, 2), NCL_SUCCESS);
    assert_true(sys_of(w).run_until_quiet(10000));
    assert_int_equal(ncl_hal_notify_try_wait(ncl_mmio_hal(w->mm[1]), 0, 2, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 1);
    ncl_mmio_stats s;
    ncl_mmio_get_stats(w->mm[0], &s);
    assert_int_equal(s.bringups, 1);
    assert_int_equal(s.descriptors, 3);  // the two records and the launch record's WRITE before the remote one
    assert_true(irq ? s.irq_waits >= 1 && s.polls == 0 : s.polls >= 1 && s.irq_waits == 0);
    assert_int_equal(w->bus_errors, 0);
    mmio_world_free(w);
  }
  mmio_world *w = mmio_world_devices(&rtl_ops, 1);
  w->fake_id = 0xDEADBEEFu;
  mmio_opts o = {1, 64, 4, 2, 0, 0, 0};
  assert_int_equal(mmio_world_backend(w, 0, &o), NCL_ERR_BACKEND);
  assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "RSIM"));
  w->fake_id = 0;
  assert_int_equal(mmio_world_backend(w, 0, &o), NCL_SUCCESS);
  mmio_world_check_up(w, 0, 1, 64);
  mmio_world_free(w);
}

// ---- collectives: cases of the correctness matrix on the mmio world ----------------------------

uint64_t g_runs;  // collectives checked bit-exact on the RTL, printed with the speed figure

// Runs m's cases on w; every one passes.
void run_all(mx_matrix *m, mmio_world *w) {
  uint64_t before = m->run;
  assert_int_equal(mx_run(m, &w->mx), 0);
  g_runs += m->run - before;
}

void allreduce_and_broadcast(int n, int irq) {
  mmio_opts o = {irq, 0, 4, 2, 0, 0, 0};
  mmio_world *w = mmio_world_new(&rtl_ops, n, &o);
  mx_matrix m;
  mx_init(&m);
  m.print_groups = 1;
  mmio_world_add_allreduce_broadcast(&m, n, 4);
  run_all(&m, w);
  ncl_mmio_stats s;
  mmio_world_stats(w, &s);
  printf("%d devices (%s): %llu collectives, %llu descriptors, %llu controller tasks, %llu cycles\n", n,
         irq ? "interrupt" : "polled", (unsigned long long)m.run, (unsigned long long)s.descriptors,
         (unsigned long long)s.controller_ops, (unsigned long long)sys_of(w).cycles);
  mx_free(&m);
  assert_int_equal(s.errors, 0);
  assert_true(s.controller_ops > 0);  // fp16 reduced on the controller
  for (uint32_t op = NCL_MMIO_OPC_WRITE; op <= NCL_MMIO_OPC_NOTIFY_RECORD; op++)
    if (op != NCL_MMIO_OPC_LOCAL_REDUCE) assert_true(s.opcodes[op] > 0);  // the algorithms reduce inline
  assert_true(irq ? s.irq_waits > 0 && s.polls == 0 : s.polls > 0 && s.irq_waits == 0);
  mmio_world_free(w);
}

void test_collectives_4(void **) { allreduce_and_broadcast(4, 1); }
void test_collectives_4_polled(void **) { allreduce_and_broadcast(4, 0); }
void test_collectives_3(void **) { allreduce_and_broadcast(3, 1); }
void test_collectives_2(void **) { allreduce_and_broadcast(2, 0); }

// Backpressure everywhere: memory ready withheld, link beats withheld, read latency 1-5 cycles
// (alltoall too: both algorithms, one in place).
void test_collectives_stalls(void **) {
  mmio_opts o = {1, 0, 4, 2, 0, 0, 0};
  mmio_world *w = mmio_world_new(&rtl_ops, 4, &o);
  sys_of(w).mem_stall = 0.3;
  sys_of(w).link_stall = 0.3;
  sys_of(w).max_lat = 5;
  static const mx_case cases[] = {
      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 1001, NCL_INT32, NCL_SUM, 0, 0, 0},
      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 4099, NCL_FLOAT32, NCL_SUM, 0, 1, 0},
      {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, 7, NCL_FLOAT16, NCL_SUM, 0, 1, 0},
      {NCL_COLL_BROADCAST, NCL_ALGO_CHAIN, 1001, NCL_INT32, NCL_SUM, 2, 0, 0},
      {NCL_COLL_ALLTOALL, NCL_ALGO_MESH, 1001, NCL_INT32, NCL_SUM, 0, 0, 0},
      {NCL_COLL_ALLTOALL, NCL_ALGO_PAIRWISE, 1000, NCL_FLOAT16, NCL_SUM, 0, 1, 0},
      {NCL_COLL_ALLTOALL, NCL_ALGO_MESH, 999, NCL_INT8, NCL_SUM, 0, 0, 1}, /* alltoallv */
  };
  mx_matrix m;
  mx_init(&m);
  for (const mx_case &c : cases) mx_add(&m, &c);
  run_all(&m, w);
  printf("4 devices with stalls: %llu collectives, %llu cycles\n", (unsigned long long)m.run,
         (unsigned long long)sys_of(w).cycles);
  mx_free(&m);
  mmio_world_free(w);
}

// The speed figure: one 4-device 1 MiB fp32 sum allreduce, cycles and wall time printed.
void test_speed_1mib(void **) {
  mmio_opts o = {1, 0, 4, 2, 0, 0, 0};
  mmio_world *w = mmio_world_new(&rtl_ops, 4, &o);
  mx_matrix m;
  mx_init(&m);
  const mx_case c = {NCL_COLL_ALLREDUCE, NCL_ALGO_RING, (1u << 20) / 4, NCL_FLOAT32, NCL_SUM, 0, 0, 0};
  mx_add(&m, &c);
  uint64_t c0 = sys_of(w).cycles, t0 = rtl_now(w->dev);
  auto wall0 = std::chrono::steady_clock::now();
  run_all(&m, w);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  uint64_t cyc = sys_of(w).cycles - c0;
  mx_free(&m);
  printf("collectives on the RTL checked bit-exact so far: %llu\n", (unsigned long long)g_runs);
  printf("RTL speed: 4-device 1 MiB fp32 allreduce: %llu cycles (%.1f us at 1 GHz; %llu ns simulated incl. skipped "
         "idle), wall %.2f s, %.0f cycles/s (%.0f device-cycles/s)\n",
         (unsigned long long)cyc, cyc / 1000.0, (unsigned long long)(rtl_now(w->dev) - t0), wall, cyc / wall,
         4.0 * cyc / wall);
  mmio_world_free(w);
}

// ---- error paths (the bodies are the mmio world's, shared with the C reference) ------------------

void test_bad_address(void **) { mmio_world_test_bad_address(&rtl_ops); }
void test_bad_descriptor(void **) { mmio_world_test_bad_descriptor(&rtl_ops); }
void test_peer_never_records(void **) { mmio_world_test_silent_peer(&rtl_ops); }
void test_mismatched_call(void **) { mmio_world_test_mismatch(&rtl_ops); }
void test_groups(void **) { mmio_world_test_groups(&rtl_ops); }

}  // namespace

int main(int argc, char **argv) {
  Verilated::commandArgs(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bringup),
      cmocka_unit_test(test_collectives_4),
      cmocka_unit_test(test_collectives_4_polled),
      cmocka_unit_test(test_collectives_3),
      cmocka_unit_test(test_collectives_2),
      cmocka_unit_test(test_collectives_stalls),
      cmocka_unit_test(test_bad_address),
      cmocka_unit_test(test_bad_descriptor),
      cmocka_unit_test(test_peer_never_records),
      cmocka_unit_test(test_mismatched_call),
      cmocka_unit_test(test_groups),
      cmocka_unit_test(test_speed_1mib),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
