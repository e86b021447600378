// test_mmio_rtl.cpp — the unchanged mmio HAL backend driving N linked verilated rs_dev blocks (RsDevSystem): bring-up, collectives bit-exact, error paths, timeouts, and the RTL speed figure.
//
// The world of test_mmio_ref.c with the C reference replaced by the RTL: every rank's ncl_mmio
// gets access functions whose register accesses are bus transfers clocked through the harness
// (one cycle of every device each), whose memory copies go straight into the block's memory image,
// and whose wait_irq/poll advance the clock of ALL devices until something changes (an irq line
// rises, a link transfer is acked, an engine goes idle), the system is quiet, or a cycle budget
// passes. Simulated time: 1 cycle = 1 ns (a 1 GHz block clock). A quiet system (no engine busy,
// nothing on the link) cannot change by itself, so the hooks skip IDLE_NS of idle time there
// instead of ticking it: now_ns = ticked cycles + skipped idle time. Single-threaded: every
// rank's ncl_test round-robin, then its wait_event.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include <ncl/ncl.h>
#include <ncl/ncl_dtype.h>
#include <ncl/ncl_mmio.h>
#include <ncl/ncl_mmio_regs.h>

extern "C" {
#include "sweep/rs_data.h"
}

#include "rs_dev_harness.hpp"

// Device memory map of every rank (symmetric: every rank passes the same addresses).
#define MAXR 4
#define MEM_BYTES (4u << 20)
#define RING_AT 0x1000u
#define SCRATCH_AT 0x10000u
#define SCRATCH_BYTES (1u << 20)
#define SEND_AT 0x200000u
#define RECV_AT 0x300000u
#define BUF_BYTES (1u << 20)
#define BOUNCE_BYTES 4096u
#define SEED 0x5eedull
#define IDLE_NS 2000u               // idle time a hook skips when the system is quiet
#define POLL_BUDGET 512u            // cycles one poll() call may tick
#define COMM_TIMEOUT_NS 3000000ull  // the engine's notify timeout: 3 ms simulated (3 M cycles)
#define HANG_CYCLES 50000000ull     // a hook that ticked this long without a change: fail, never hang

namespace {

struct world;
struct port {
  world *w;
  int rank;
};

struct world {
  int n = 0;
  std::unique_ptr<VerilatedContext> vctx;
  std::unique_ptr<RsDevSystem> sys;
  port ports[MAXR];
  uint64_t skipped = 0;  // idle ns skipped (not ticked)
  uint32_t fake_id = 0;
  unsigned bus_errors = 0, mem_faults = 0;
  ncl_mmio *mm[MAXR] = {};
  void *mm_mem[MAXR] = {};
  alignas(16) unsigned char bounce[MAXR][BOUNCE_BYTES];
  ncl_comm *comm[MAXR] = {};
};

int verbose;

uint64_t now_of(world *w) { return w->sys->cycles + w->skipped; }

// What "something changed" means to a waiting hook: an irq line, an engine's busy, a link ack.
struct snap {
  uint32_t irq = 0, busy = 0;
  size_t acked[MAXR] = {};
};
snap take_snap(world *w) {
  snap s;
  for (int r = 0; r < w->n; r++) {
    s.irq |= (uint32_t)(w->sys->top(r).irq != 0) << r;
    s.busy |= (uint32_t)(w->sys->top(r).busy != 0) << r;
    s.acked[r] = w->sys->dev(r).log_acked;
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

// ---- access functions: what a board does with volatile loads/stores ------------------------

uint32_t acc_rd(void *ctx, uint32_t off) {
  port *p = (port *)ctx;
  world *w = p->w;
  if (off == NCL_MMIO_ID && w->fake_id) return w->fake_id;
  int err = 0;
  uint32_t v = w->sys->reg_read((unsigned)p->rank, off, &err);
  w->bus_errors += err != 0;
  return v;
}

void acc_wr(void *ctx, uint32_t off, uint32_t v) {
  port *p = (port *)ctx;
  p->w->bus_errors += p->w->sys->reg_write((unsigned)p->rank, off, v) != 0;
}

int acc_mem_write(void *ctx, uint64_t a, const void *src, uint64_t n) {
  port *p = (port *)ctx;
  if (a > MEM_BYTES || n > MEM_BYTES - a) return p->w->mem_faults++, 1;
  memcpy(p->w->sys->mem((unsigned)p->rank) + a, src, n);
  return 0;
}

int acc_mem_read(void *ctx, uint64_t a, void *dst, uint64_t n) {
  port *p = (port *)ctx;
  if (a > MEM_BYTES || n > MEM_BYTES - a) return p->w->mem_faults++, 1;
  memcpy(dst, p->w->sys->mem((unsigned)p->rank) + a, n);
  return 0;
}

// Ticks every device until something changes, the system is quiet or `budget` cycles passed.
// Returns 1 on a change, 2 when quiet (nothing ticked: idle time skipped), 0 on the budget.
int advance(world *w, uint64_t budget) {
  if (w->sys->quiet()) {
    w->skipped += IDLE_NS;
    return 2;
  }
  snap a = take_snap(w);
  for (uint64_t c = 0; c < budget; c++) {
    w->sys->tick();
    snap b = take_snap(w);
    if (changed(a, b, w->n)) return 1;
    if (w->sys->quiet()) return 1;  // drained: the firmware gets to look
    a = b;
  }
  return 0;
}

// Simulation's "sleep until irq": clock all devices until this rank's irq, another change
// (other ranks' firmware gets to run), quiet, or the timeout.
int acc_wait_irq(void *ctx, uint64_t timeout_ns) {
  port *p = (port *)ctx;
  world *w = p->w;
  if (w->sys->top(p->rank).irq) return 1;
  uint64_t budget = timeout_ns < HANG_CYCLES ? timeout_ns : HANG_CYCLES;
  if (budget == 0) budget = 1;
  int rc = advance(w, budget);
  assert_true(rc != 0 || budget < HANG_CYCLES);
  return w->sys->top(p->rank).irq != 0;
}

// Polled mode's yield: a few hundred cycles of every device; a change or a quiet system ends the
// wait (the drive loop then runs every rank's firmware).
int acc_poll(void *ctx) {
  port *p = (port *)ctx;
  return advance(p->w, POLL_BUDGET) != 0;
}

uint64_t acc_now(void *ctx) { return now_of(((port *)ctx)->w); }

void acc_log(void *ctx, int level, const char *msg) {
  port *p = (port *)ctx;
  if (verbose) printf("[rank %d] %d: %s\n", p->rank, level, msg);
}

void *t_alloc(void *, size_t n) { return malloc(n); }
void t_free(void *, void *ptr) { free(ptr); }

// ---- worlds ------------------------------------------------------------------------------------

struct wopts {
  int irq;
  uint32_t ring_entries, channels;
};

ncl_mmio_config mmio_cfg(world *w, int r, const wopts &o) {
  ncl_mmio_config c = NCL_MMIO_CONFIG_INIT;
  c.rank = r;
  c.nranks = w->n;
  c.ring_base = RING_AT;
  c.ring_entries = o.ring_entries ? o.ring_entries : 256;
  c.scratch_base = SCRATCH_AT;
  c.scratch_bytes = SCRATCH_BYTES;
  c.irq = o.irq;
  c.max_queues = 4;
  c.timeout_ns = 1000000;  // 1 ms simulated for a free ring slot
  c.bounce = w->bounce[r];
  c.bounce_bytes = BOUNCE_BYTES;
  c.log_level = verbose ? NCL_LOG_DEBUG : NCL_LOG_WARN;
  return c;
}

world *world_devices(int n) {
  world *w = new world;
  w->n = n;
  w->vctx = std::make_unique<VerilatedContext>();
  w->sys = std::make_unique<RsDevSystem>(w->vctx.get(), (unsigned)n, MEM_BYTES);
  for (int r = 0; r < n; r++) w->ports[r] = {w, r};
  return w;
}

ncl_result mmio_make(world *w, int r, const wopts &o) {
  ncl_mmio_config c = mmio_cfg(w, r, o);
  ncl_mmio_access a = {acc_rd, acc_wr, acc_mem_write, acc_mem_read, o.irq ? acc_wait_irq : nullptr,
                       o.irq ? nullptr : acc_poll, acc_now, acc_log, &w->ports[r]};
  size_t bytes = (ncl_mmio_mem_bytes(&c) + 15u) / 16u * 16u;
  free(w->mm_mem[r]);
  w->mm_mem[r] = aligned_alloc(16, bytes);
  assert_non_null(w->mm_mem[r]);
  return ncl_mmio_init(&w->mm[r], w->mm_mem[r], bytes, &c, &a);
}

void comms_make(world *w, const wopts &o) {
  for (int r = 0; r < w->n; r++) {
    ncl_comm_destroy(w->comm[r]);
    ncl_config cc = NCL_CONFIG_INIT;
    cc.alloc = t_alloc;
    cc.free = t_free;
    cc.timeout_ns = COMM_TIMEOUT_NS;
    cc.channels = o.channels ? o.channels : 2;
    cc.slice_bytes = 16u << 10;
    cc.algorithm[NCL_COLL_ALLREDUCE] = NCL_ALGO_RING;
    cc.algorithm[NCL_COLL_BROADCAST] = NCL_ALGO_CHAIN;
    assert_int_equal(ncl_comm_create(&w->comm[r], w->n, r, ncl_mmio_hal(w->mm[r]), &cc), NCL_SUCCESS);
  }
}

world *world_new(int n, const wopts &o) {
  world *w = world_devices(n);
  for (int r = 0; r < n; r++) assert_int_equal(mmio_make(w, r, o), NCL_SUCCESS);
  comms_make(w, o);
  return w;
}

void world_free(world *w) {
  for (int r = 0; r < w->n; r++) {
    ncl_comm_destroy(w->comm[r]);
    ncl_mmio_fini(w->mm[r]);
    free(w->mm_mem[r]);
  }
  delete w;
}

// Register value as the test sees it (a bus read: one cycle of every device).
uint32_t reg(world *w, int r, uint32_t off) { return w->sys->reg_read((unsigned)r, off); }
uint8_t *mem(world *w, int r, uint64_t a) { return w->sys->mem((unsigned)r) + a; }
void *dev_ptr(uint64_t a) { return (void *)(uintptr_t)a; }

// ---- driving collectives ---------------------------------------------------------------------

// Every rank's firmware round-robin (ncl_test), then its wait_event (the hooks clock the devices).
void drive(world *w, const int *started, ncl_result *rc) {
  int done[MAXR] = {0}, left = 0;
  for (int r = 0; r < w->n; r++) left += started[r] && !(done[r] = rc[r] != NCL_SUCCESS);
  for (long it = 0; left; it++) {
    assert_true(it < 5000000);
    for (int r = 0; r < w->n; r++) {
      if (!started[r] || done[r]) continue;
      int d = 0;
      ncl_result x = ncl_test(w->comm[r], &d);
      if (d) {
        done[r] = 1;
        rc[r] = x;
        left--;
      }
    }
    for (int r = 0; r < w->n; r++)
      if (started[r] && !done[r]) ncl_hal_wait_event(ncl_mmio_hal(w->mm[r]), 1000000);
  }
  assert_true(w->sys->run_until_quiet(1000000));  // the last records still in the rings
}

struct job {
  ncl_coll coll;
  ncl_dtype dt;
  ncl_op op;
  uint64_t count;
  int root, inplace;
};

// Runs j on every rank with rs_data inputs; returns the number of wrong elements over all ranks.
uint64_t run_job(world *w, const job &j) {
  const int n = w->n;
  const uint64_t es = ncl_dtype_size(j.dt), c = j.count, bytes = c * es;
  const ncl_op fill_op = j.coll == NCL_COLL_BROADCAST ? NCL_MAX : j.op;
  ncl_result rc[MAXR];
  int started[MAXR];
  assert_true(bytes <= BUF_BYTES);
  // guard bytes after the output (none when it ends at the end of device memory)
  const uint64_t pad = MEM_BYTES - RECV_AT - bytes < 64 ? MEM_BYTES - RECV_AT - bytes : 64;
  for (int r = 0; r < n; r++) {
    memset(mem(w, r, SEND_AT), 0xAB, bytes);
    memset(mem(w, r, RECV_AT), 0xCD, bytes + pad);
    uint64_t send = j.inplace ? RECV_AT : SEND_AT, recv = RECV_AT;
    if (j.coll == NCL_COLL_ALLREDUCE) {
      rs_data_fill(mem(w, r, send), c, j.dt, j.op, n, r, SEED, 0);
      rc[r] = ncl_allreduce_start(dev_ptr(send), dev_ptr(recv), c, j.dt, j.op, w->comm[r]);
    } else {
      if (r == j.root) rs_data_fill(mem(w, r, send), c, j.dt, NCL_MAX, n, r, SEED, 0);
      rc[r] = ncl_broadcast_start(dev_ptr(send), dev_ptr(recv), c, j.dt, j.root, w->comm[r]);
    }
    started[r] = 1;
  }
  drive(w, started, rc);
  for (int r = 0; r < n; r++)
    if (rc[r] != NCL_SUCCESS)
      printf("%s %s %s count %llu ranks %d root %d: rank %d: %s: %s\n  mmio: %s\n", ncl_coll_name(j.coll), ncl_dtype_name(j.dt),
             ncl_op_name(j.op), (unsigned long long)c, n, j.root, r, ncl_strerror(rc[r]),
             ncl_comm_last_error(w->comm[r]), ncl_mmio_last_error(w->mm[r]));
  for (int r = 0; r < n; r++) {
    assert_int_equal(rc[r], NCL_SUCCESS);
    assert_int_equal(reg(w, r, NCL_MMIO_ERR_STATUS), 0);
  }
  assert_int_equal(w->bus_errors, 0);
  assert_int_equal(w->mem_faults, 0);

  uint64_t wrong = 0;
  std::vector<uint8_t> want(bytes + 64);
  for (int r = 0; r < n; r++) {
    if (j.coll == NCL_COLL_ALLREDUCE)
      rs_data_expected(want.data(), c, j.dt, j.op, n, SEED, 0, 1);
    else
      rs_data_fill(want.data(), c, j.dt, NCL_MAX, n, j.root, SEED, 0);
    uint64_t bad = rs_data_count_wrong(mem(w, r, RECV_AT), want.data(), c, j.dt, fill_op);
    // nothing written past the end of the output
    for (uint64_t k = 0; k < pad; k++) bad += mem(w, r, RECV_AT + bytes)[k] != 0xCD;
    if (bad)
      printf("%s %s %s count %llu ranks %d root %d %s: rank %d has %llu wrong\n", ncl_coll_name(j.coll),
             ncl_dtype_name(j.dt), ncl_op_name(j.op), (unsigned long long)c, n, j.root,
             j.inplace ? "in place" : "out of place", r, (unsigned long long)bad);
    wrong += bad;
  }
  return wrong;
}

void stats_sum(world *w, ncl_mmio_stats *s) {
  memset(s, 0, sizeof *s);
  for (int r = 0; r < w->n; r++) {
    ncl_mmio_stats x;
    ncl_mmio_get_stats(w->mm[r], &x);
    s->descriptors += x.descriptors;
    s->controller_ops += x.controller_ops;
    s->irq_waits += x.irq_waits;
    s->polls += x.polls;
    s->errors += x.errors;
    s->bringups += x.bringups;
    for (int k = 0; k < 8; k++) s->opcodes[k] += x.opcodes[k];
  }
}

// ---- bring-up ---------------------------------------------------------------------------------

void check_brought_up(world *w, int r, int irq, uint32_t entries) {
  assert_int_equal(reg(w, r, NCL_MMIO_ID), NCL_MMIO_ID_RESET);
  assert_int_equal(reg(w, r, NCL_MMIO_VERSION), NCL_MMIO_VERSION_RESET);
  assert_int_equal(reg(w, r, NCL_MMIO_CAPS), NCL_MMIO_CAPS_RESET);
  assert_int_equal(reg(w, r, NCL_MMIO_CTRL), NCL_MMIO_CTRL_ENABLE_MASK | (irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
  assert_int_equal(reg(w, r, NCL_MMIO_IRQ_MASK), irq ? 0xFu : 0u);
  assert_int_equal(reg(w, r, NCL_MMIO_RING_BASE_LO), RING_AT);
  assert_int_equal(reg(w, r, NCL_MMIO_RING_BASE_HI), 0);
  assert_int_equal(reg(w, r, NCL_MMIO_RING_SIZE), entries);
  assert_int_equal(reg(w, r, NCL_MMIO_RING_TAIL), 0);
  assert_int_equal(reg(w, r, NCL_MMIO_RING_HEAD), 0);
  assert_int_equal(reg(w, r, NCL_MMIO_ERR_STATUS), 0);
  assert_int_equal(reg(w, r, NCL_MMIO_IRQ_STATUS), 0);
  assert_int_not_equal(reg(w, r, NCL_MMIO_SCRATCH), 0);  // the write/read-back check's pattern
}

// Reset, ID/VERSION/CAPS, ring, doorbell, wait: the REGISTERS.md sequence against the RTL, in
// interrupt and polled mode; a block that does not say 'RSIM' is refused.
void test_bringup(void **) {
  for (int irq = 0; irq <= 1; irq++) {
    wopts o = {irq, 64, 2};
    world *w = world_devices(2);
    // dirty the block first: bring-up's soft reset must clear it
    w->sys->reg_write(0, NCL_MMIO_RING_SIZE, 7);
    w->sys->reg_write(0, NCL_MMIO_IRQ_MASK, 0x5);
    for (int r = 0; r < 2; r++) assert_int_equal(mmio_make(w, r, o), NCL_SUCCESS);
    comms_make(w, o);
    for (int r = 0; r < 2; r++) check_brought_up(w, r, irq, 64);
    // a doorbell-to-irq round trip through the HAL: a record to ourselves
    const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
    assert_int_equal(ncl_hal_notify_record(h, 0, 0, 3), NCL_SUCCESS);
    assert_int_equal(reg(w, 0, NCL_MMIO_RING_TAIL), 1);
    int done = 0;
    assert_int_equal(ncl_hal_wait_event(h, 1000000), NCL_SUCCESS);
    if (irq) assert_int_equal(w->sys->top(0).irq, 0);  // the events were taken (W1C)
    assert_int_equal(reg(w, 0, NCL_MMIO_RING_HEAD), 1);
    assert_int_equal(ncl_hal_notify_try_wait(h, 0, 3, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 1);
    assert_int_equal(reg(w, 0, NCL_MMIO_NOTIFY_CNT(3)), 0);  // consumed
    // a record to the peer over the link: rank 1's counter (sender 0, id 2)
    assert_int_equal(ncl_hal_notify_record(h, 1, 1, 2), NCL_SUCCESS);
    assert_true(w->sys->run_until_quiet(10000));
    assert_int_equal(ncl_hal_notify_try_wait(ncl_mmio_hal(w->mm[1]), 0, 2, 1, &done), NCL_SUCCESS);
    assert_int_equal(done, 1);
    ncl_mmio_stats s;
    ncl_mmio_get_stats(w->mm[0], &s);
    assert_int_equal(s.bringups, 1);
    assert_int_equal(s.descriptors, 2);
    assert_true(irq ? s.irq_waits >= 1 && s.polls == 0 : s.polls >= 1 && s.irq_waits == 0);
    assert_int_equal(w->bus_errors, 0);
    world_free(w);
  }
  world *w = world_devices(1);
  w->fake_id = 0xDEADBEEFu;
  wopts o = {1, 64, 2};
  assert_int_equal(mmio_make(w, 0, o), NCL_ERR_BACKEND);
  assert_non_null(strstr(ncl_mmio_last_error(w->mm[0]), "RSIM"));
  w->fake_id = 0;
  assert_int_equal(mmio_make(w, 0, o), NCL_SUCCESS);
  check_brought_up(w, 0, 1, 64);
  world_free(w);
}

// ---- collectives -------------------------------------------------------------------------------

struct dtop {
  ncl_dtype dt;
  ncl_op op;
};
const dtop ar_cases[] = {{NCL_INT32, NCL_SUM}, {NCL_FLOAT32, NCL_SUM}, {NCL_FLOAT16, NCL_SUM}};
const uint64_t ar_counts[] = {1, 7, 1001, 4099};

uint64_t g_runs;

void allreduce_and_broadcast(int n, int irq) {
  wopts o = {irq, 0, 2};
  world *w = world_new(n, o);
  uint64_t wrong = 0, runs = 0;
  for (uint64_t c : ar_counts)
    for (const dtop &k : ar_cases)
      for (int inplace = 0; inplace <= 1; inplace++) {
        // the largest count only for 4 ranks, out of place (keeps the suite cheap)
        if (c > 1001 && (n != 4 || inplace)) continue;
        wrong += run_job(w, {NCL_COLL_ALLREDUCE, k.dt, k.op, c, 0, inplace});
        runs++;
      }
  for (int root = 0; root < n; root++)
    for (uint64_t c : {(uint64_t)7, (uint64_t)1001}) {
      wrong += run_job(w, {NCL_COLL_BROADCAST, root % 2 ? NCL_FLOAT16 : NCL_INT32, NCL_SUM, c, root, root % 2});
      runs++;
    }
  ncl_mmio_stats s;
  stats_sum(w, &s);
  printf("%d devices (%s): %llu collectives, %llu descriptors, %llu controller tasks, %llu cycles, %llu wrong\n", n,
         irq ? "interrupt" : "polled", (unsigned long long)runs, (unsigned long long)s.descriptors,
         (unsigned long long)s.controller_ops, (unsigned long long)w->sys->cycles, (unsigned long long)wrong);
  assert_int_equal(wrong, 0);
  assert_int_equal(s.errors, 0);
  assert_true(s.controller_ops > 0);  // fp16 reduced on the controller
  for (uint32_t op = NCL_MMIO_OPC_WRITE; op <= NCL_MMIO_OPC_NOTIFY_RECORD; op++)
    if (op != NCL_MMIO_OPC_LOCAL_REDUCE) assert_true(s.opcodes[op] > 0);  // the algorithms reduce inline
  assert_true(irq ? s.irq_waits > 0 && s.polls == 0 : s.polls > 0 && s.irq_waits == 0);
  g_runs += runs;
  world_free(w);
}

void test_collectives_4(void **) { allreduce_and_broadcast(4, 1); }
void test_collectives_4_polled(void **) { allreduce_and_broadcast(4, 0); }
void test_collectives_3(void **) { allreduce_and_broadcast(3, 1); }
void test_collectives_2(void **) { allreduce_and_broadcast(2, 0); }

// Backpressure everywhere: memory ready withheld, link beats withheld, read latency 1-5 cycles.
void test_collectives_stalls(void **) {
  wopts o = {1, 0, 2};
  world *w = world_new(4, o);
  w->sys->mem_stall = 0.3;
  w->sys->link_stall = 0.3;
  w->sys->max_lat = 5;
  uint64_t wrong = 0;
  wrong += run_job(w, {NCL_COLL_ALLREDUCE, NCL_INT32, NCL_SUM, 1001, 0, 0});
  wrong += run_job(w, {NCL_COLL_ALLREDUCE, NCL_FLOAT32, NCL_SUM, 4099, 0, 1});
  wrong += run_job(w, {NCL_COLL_ALLREDUCE, NCL_FLOAT16, NCL_SUM, 7, 0, 1});
  wrong += run_job(w, {NCL_COLL_BROADCAST, NCL_INT32, NCL_SUM, 1001, 2, 0});
  printf("4 devices with stalls: 4 collectives, %llu cycles, %llu wrong\n", (unsigned long long)w->sys->cycles,
         (unsigned long long)wrong);
  assert_int_equal(wrong, 0);
  g_runs += 4;
  world_free(w);
}

// The speed figure: one 4-device 1 MiB fp32 sum allreduce, cycles and wall time printed.
void test_speed_1mib(void **) {
  wopts o = {1, 0, 2};
  world *w = world_new(4, o);
  uint64_t c0 = w->sys->cycles, t0 = now_of(w);
  auto wall0 = std::chrono::steady_clock::now();
  assert_int_equal(run_job(w, {NCL_COLL_ALLREDUCE, NCL_FLOAT32, NCL_SUM, (1u << 20) / 4, 0, 0}), 0);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  uint64_t cyc = w->sys->cycles - c0;
  g_runs++;
  printf("collectives on the RTL checked bit-exact so far: %llu\n", (unsigned long long)g_runs);
  printf("RTL speed: 4-device 1 MiB fp32 allreduce: %llu cycles (%.1f us at 1 GHz; %llu ns simulated incl. skipped "
         "idle), wall %.2f s, %.0f cycles/s (%.0f device-cycles/s)\n",
         (unsigned long long)cyc, cyc / 1000.0, (unsigned long long)(now_of(w) - t0), wall, cyc / wall,
         4.0 * cyc / wall);
  world_free(w);
}

// ---- error paths -------------------------------------------------------------------------------

// A buffer past the end of device memory: the block refuses the descriptor, the backend names it
// (slot, opcode, address), resets the block, and the next collective runs. Never a hang.
void test_bad_address(void **) {
  for (int irq = 0; irq <= 1; irq++) {
    wopts o = {irq, 0, 2};
    world *w = world_new(2, o);
    const uint64_t bad = MEM_BYTES + 0x1000u, count = 1000;
    ncl_result rc[MAXR];
    int started[MAXR] = {1, 1};
    for (int r = 0; r < 2; r++)
      rc[r] = ncl_allreduce_start(dev_ptr(SEND_AT), dev_ptr(bad), count, NCL_INT32, NCL_SUM, w->comm[r]);
    drive(w, started, rc);
    for (int r = 0; r < 2; r++) {
      const char *e = ncl_mmio_last_error(w->mm[r]);
      printf("%s rank %d: %s\n  engine: %s\n", irq ? "irq" : "polled", r, e, ncl_comm_last_error(w->comm[r]));
      assert_int_not_equal(rc[r], NCL_SUCCESS);
      if (rc[r] == NCL_ERR_BACKEND) {
        assert_non_null(strstr(e, "descriptor slot"));
        assert_true(strstr(e, "ADDR_RANGE") || strstr(e, "LINK"));
        assert_non_null(strstr(e, "address 0x40"));  // past the 4 MiB memory
      }
      assert_int_equal(reg(w, r, NCL_MMIO_ERR_STATUS), 0);  // cleared and reset
      check_brought_up(w, r, irq, 256);
    }
    assert_true(rc[0] == NCL_ERR_BACKEND || rc[1] == NCL_ERR_BACKEND);
    ncl_mmio_stats s;
    stats_sum(w, &s);
    assert_true(s.errors >= 1);
    w->bus_errors = 0;
    comms_make(w, o);  // a new communicator on the recovered blocks works
    assert_int_equal(run_job(w, {NCL_COLL_ALLREDUCE, NCL_INT32, NCL_SUM, count, 0, 0}), 0);
    world_free(w);
  }
}

// A descriptor the block cannot execute (a ring slot rewritten behind the backend's back to point
// outside memory, then one with a reserved bit): named by slot, opcode and address.
void test_bad_descriptor(void **) {
  wopts o = {1, 16, 2};
  world *w = world_new(2, o);
  const ncl_hal *h = ncl_mmio_hal(w->mm[0]);
  assert_int_equal(ncl_hal_notify_record(h, 2, 1, 7), NCL_SUCCESS);
  mem(w, 0, RING_AT)[3] = 0x80;  // a reserved bit of word 0
  w->sys->run_until_quiet(10000);
  int done = 1;
  assert_int_equal(ncl_hal_notify_try_wait(h, 1, 0, 1, &done), NCL_ERR_BACKEND);
  assert_int_equal(done, 0);
  const char *e = ncl_mmio_last_error(w->mm[0]);
  printf("%s\n", e);
  assert_non_null(strstr(e, "descriptor slot 0 (NOTIFY_RECORD"));
  assert_non_null(strstr(e, "BAD_DESC"));
  check_brought_up(w, 0, 1, 16);

  // a LOCAL_COPY whose ring slot is rewritten (before the block fetches it) so its source lies
  // past the memory: ADDR_RANGE, named by slot, opcode and that address
  ncl_hal_launch l;
  memset(&l, 0, sizeof l);
  l.seq = 1;
  l.send = dev_ptr(SEND_AT);
  l.send_bytes = 4096;
  l.recv = dev_ptr(RECV_AT);
  l.recv_bytes = 4096;
  assert_int_equal(ncl_hal_begin(h, &l), NCL_SUCCESS);
  ncl_task t;
  memset(&t, 0, sizeof t);
  t.kind = NCL_TASK_LOCAL_COPY;
  t.peer = -1;
  t.src.buf = NCL_BUF_SEND;
  t.dst.buf = NCL_BUF_RECV;
  t.bytes = 256;
  t.step = 42;
  uint32_t head = reg(w, 0, NCL_MMIO_RING_HEAD);
  assert_int_equal(ncl_hal_dma_submit(h, 1, &t), NCL_SUCCESS);
  const uint32_t bad_src = MEM_BYTES + 0x2000u;
  memcpy(mem(w, 0, RING_AT + 32u * head + 8), &bad_src, 4);  // word 2: SRC_LO
  ncl_result rc = NCL_SUCCESS;
  for (int k = 0; k < 100 && rc == NCL_SUCCESS && !done; k++) {
    ncl_hal_wait_event(h, 100000);
    rc = ncl_hal_dma_poll(h, 1, &done);
  }
  e = ncl_mmio_last_error(w->mm[0]);
  printf("%s\n", e);
  assert_int_equal(rc, NCL_ERR_BACKEND);
  char want[64];
  snprintf(want, sizeof want, "descriptor slot %u (LOCAL_COPY", head);
  assert_non_null(strstr(e, want));
  assert_non_null(strstr(e, "ADDR_RANGE"));
  assert_non_null(strstr(e, "address 0x402000"));
  assert_int_equal(ncl_hal_end(h, rc), NCL_SUCCESS);
  check_brought_up(w, 0, 1, 16);
  for (uint32_t i = 0; i < 256; i++) assert_int_equal(mem(w, 0, RECV_AT)[i], 0);  // nothing moved
  world_free(w);
}

// Rank 1 never starts: rank 0's wait for its record times out with the engine's message, within
// the configured simulated timeout, and the block is reset for reuse.
void test_peer_never_records(void **) {
  for (int irq = 0; irq <= 1; irq++) {
    wopts o = {irq, 0, 2};
    world *w = world_new(2, o);
    ncl_result rc[MAXR] = {NCL_SUCCESS, NCL_SUCCESS};
    int started[MAXR] = {1, 0};
    uint64_t t0 = now_of(w);
    rc[0] = ncl_allreduce_start(dev_ptr(SEND_AT), dev_ptr(RECV_AT), 1000, NCL_FLOAT32, NCL_SUM, w->comm[0]);
    drive(w, started, rc);
    uint64_t took = now_of(w) - t0;
    printf("%s: after %llu ns simulated: %s\n", irq ? "irq" : "polled", (unsigned long long)took,
           ncl_comm_last_error(w->comm[0]));
    assert_int_equal(rc[0], NCL_ERR_TIMEOUT);
    assert_non_null(strstr(ncl_comm_last_error(w->comm[0]), "from rank 1"));
    assert_true(took >= COMM_TIMEOUT_NS);
    assert_true(took < COMM_TIMEOUT_NS + COMM_TIMEOUT_NS / 2);
    check_brought_up(w, 0, irq, 256);
    world_free(w);
  }
}

}  // namespace

int main(int argc, char **argv) {
  Verilated::commandArgs(argc, argv);
  verbose = getenv("MMIO_TEST_VERBOSE") != nullptr;
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
      cmocka_unit_test(test_speed_1mib),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
