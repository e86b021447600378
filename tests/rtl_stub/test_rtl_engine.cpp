// test_rtl_engine.cpp — the verilated rs_dev (two linked blocks) against rs_ref_dev (two linked references): random descriptors, edge cases, every error path.
//
// Usage: test_rtl_engine [descriptors]   (default 1000000; RS_SEED=<n> fixes the seed)
// After every batch both systems must agree on both memory images, the registers (HEAD, TAIL,
// STATUS, CTRL, IRQ_STATUS, ERR_*, notify counters), the irq lines and the link traffic (every
// transfer's header, payload and ack). A failure prints the seed, the batch and its descriptors.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ncl/ncl_mmio_regs.h>

#include "rs_dev_harness.hpp"
#include "rs_ref_dev.h"
#include "rs_ref_reduce.h"

namespace {

constexpr uint64_t MEM = 64 * 1024;
constexpr uint32_t RING_AT = 0x100;       // ring base (up to 16 slots: 0x100..0x300)
constexpr uint32_t RING_MAX = 16;
constexpr uint64_t LOC = 0x1000, LOC_END = 0x9000;  // what a device's own descriptors touch
constexpr uint64_t BOX = 0x9000, BOX_END = MEM;     // what the peer's WRITEs land in
constexpr unsigned NDEV = 2;
const unsigned kCnts[] = {0, 1, 2, 5, 64, 100, 127};  // the notify counters the batches use

uint64_t g_seed, g_rng;
uint64_t rnd() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}
uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
bool chance(unsigned per_mille) { return below(1000) < per_mille; }

// ---- descriptors ------------------------------------------------------------------------------
struct Desc {
  uint32_t w[NCL_MMIO_DESC_WORDS] = {};
  std::string what;  // for an injected error: which one
};

struct Fields {
  uint32_t opc = 0, dtype = 0, op = 0, irq = 0, fence = 0, local = 0, peer = 0, notify = 0, tag = 0, count = 0;
  uint64_t src = 0, dst = 0, len = 0;
};

Desc make(const Fields &f) {
  Desc d;
  uint32_t *w = d.w;
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_OPCODE, f.opc);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DTYPE, f.dtype);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_OP, f.op);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_IRQ, f.irq);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_FENCE, f.fence);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_LOCAL, f.local);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_PEER, f.peer);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_NOTIFY, f.notify);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_SRC_LO, (uint32_t)f.src);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_SRC_HI, (uint32_t)(f.src >> 32));
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DST_LO, (uint32_t)f.dst);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_DST_HI, (uint32_t)(f.dst >> 32));
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_LEN, (uint32_t)f.len);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_TAG, f.tag);
  NCL_MMIO_DESC_PUT(w, NCL_MMIO_DESC_COUNT, f.count);
  return d;
}

const char *opc_name(uint32_t o) {
  static const char *n[] = {"INVALID0", "WRITE", "WRITE_REDUCE", "LOCAL_COPY", "LOCAL_REDUCE", "NOTIFY_RECORD", "NOTIFY_WAIT", "NOP"};
  return o < 8 ? n[o] : "INVALID";
}

void print_desc(const Desc &d) {
  const uint32_t *w = d.w;
#define G(F) NCL_MMIO_DESC_GET(w, NCL_MMIO_DESC_##F)
  uint64_t src = (uint64_t)G(SRC_HI) << 32 | G(SRC_LO), dst = (uint64_t)G(DST_HI) << 32 | G(DST_LO);
  std::printf("    %-13s dtype %u op %u irq %u fence %u local %u peer %u notify %u src 0x%" PRIx64 " dst 0x%" PRIx64
              " len %u tag %u count %u  words", opc_name(G(OPCODE)), G(DTYPE), G(OP), G(IRQ), G(FENCE), G(LOCAL),
              G(PEER), G(NOTIFY), src, dst, G(LEN), G(TAG), G(COUNT));
#undef G
  for (uint32_t i = 0; i < NCL_MMIO_DESC_WORDS; i++) std::printf(" %08x", w[i]);
  if (!d.what.empty()) std::printf("  [error case: %s]", d.what.c_str());
  std::printf("\n");
}

// ---- operand values -----------------------------------------------------------------------------
const uint32_t kEdge[] = {
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,
    0x3F800000, 0xBF800000, 0x33800000, 0x3F800001, 0x4B800000, 0x7FFFFFFF, 0xFFFFFFFF, 0x00000002,
};
uint32_t operand() {
  if (chance(300)) return kEdge[below(sizeof kEdge / sizeof kEdge[0])];
  if (chance(300)) {  // floats of nearby magnitude: cancellation, ties, alignment cuts
    uint32_t e = 100 + (uint32_t)below(50);
    return (uint32_t)(rnd() & 0x807FFFFFu) | e << 23;
  }
  return (uint32_t)rnd();
}

// ---- the reference pair ------------------------------------------------------------------------
struct RefSys;
struct RefLink {
  RefSys *sys;
  unsigned self;
};
struct RefSys {
  rs_ref_dev *d[NDEV] = {};
  RefLink links[NDEV];
  std::vector<RsLinkMsg> log[NDEV];
};
int ref_link(void *ctx, const rs_ref_link_msg *m) {
  RefLink *l = static_cast<RefLink *>(ctx);
  RsLinkMsg g;
  g.kind = m->kind;
  g.peer = m->peer;
  g.addr = m->addr;
  g.bytes = m->bytes;
  g.dtype = m->dtype;
  g.op = m->op;
  g.notify = m->notify;
  if (m->bytes) g.data.assign(m->data, m->data + m->bytes);
  int rc = m->peer < NDEV ? rs_ref_dev_link_rx(l->sys->d[m->peer], m) : RS_REF_RX_BAD;
  g.status = rc;
  l->sys->log[l->self].push_back(std::move(g));
  return rc;
}

// ---- the bench: both systems side by side ---------------------------------------------------------
struct Bench {
  VerilatedContext ctx;
  RsDevSystem rtl{&ctx, NDEV, MEM};
  RefSys ref;
  uint64_t batch = 0, descs = 0;
  std::vector<Desc> posted[NDEV];  // this batch's descriptors, for the failure report
  uint32_t ring_n[NDEV] = {};
  bool irq_mode[NDEV] = {};
  uint64_t checks = 0;

  Bench() {
    for (unsigned i = 0; i < NDEV; i++) {
      ref.links[i] = {&ref, i};
      ref.d[i] = rs_ref_dev_new(MEM, ref_link, &ref.links[i]);
    }
  }
  ~Bench() {
    for (auto *d : ref.d) rs_ref_dev_free(d);
  }

  [[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    std::printf("FAIL (seed %" PRIu64 ", batch %" PRIu64 ", cycle %" PRIu64 "): ", g_seed, batch, rtl.cycles);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    for (unsigned i = 0; i < NDEV; i++) {
      std::printf("  device %u, this batch (ring %u entries):\n", i, ring_n[i]);
      for (auto &d : posted[i]) print_desc(d);
    }
    std::printf("reproduce: RS_SEED=%" PRIu64 " test_rtl_engine\n", g_seed);
    std::fflush(stdout);
    std::exit(1);
  }

  uint8_t *rmem(unsigned i) { return rs_ref_dev_mem(ref.d[i]); }
  void mem_put(unsigned i, uint64_t a, const void *p, size_t n) {
    std::memcpy(rtl.mem(i) + a, p, n);
    std::memcpy(rmem(i) + a, p, n);
  }
  void put32(unsigned i, uint64_t a, uint32_t v) { mem_put(i, a, &v, 4); }

  void wr(unsigned i, uint32_t addr, uint32_t v) {
    int e1 = rtl.reg_write(i, addr, v), e2 = rs_ref_dev_write(ref.d[i], addr, v);
    if (e1 != e2) fail("device %u: write 0x%03x = 0x%08x: rsp_err %d, reference %d", i, addr, v, e1, e2);
  }
  uint32_t rd(unsigned i, uint32_t addr, const char *name) {
    int e1 = 0, e2 = 0;
    uint32_t a = rtl.reg_read(i, addr, &e1), b = rs_ref_dev_read(ref.d[i], addr, &e2);
    checks++;
    if (a != b || e1 != e2)
      fail("device %u: %s (0x%03x) reads 0x%08x (err %d), reference 0x%08x (err %d)", i, name, addr, a, e1, b, e2);
    return a;
  }
  // Writes v[i] to the register of device i, all in one cycle.
  void wr_all(uint32_t addr, const uint32_t *v) {
    int e[NDEV];
    rtl.reg_write_all(addr, v, e);
    for (unsigned i = 0; i < NDEV; i++) {
      int e2 = rs_ref_dev_write(ref.d[i], addr, v[i]);
      if (e[i] != e2) fail("device %u: write 0x%03x = 0x%08x: rsp_err %d, reference %d", i, addr, v[i], e[i], e2);
    }
  }
  // The register on every device at once (one cycle), each against its reference.
  void rd_all(uint32_t addr, const char *name) {
    uint32_t v[NDEV];
    int e[NDEV];
    rtl.reg_read_all(addr, v, e);
    for (unsigned i = 0; i < NDEV; i++) {
      int e2 = 0;
      uint32_t r = rs_ref_dev_read(ref.d[i], addr, &e2);
      checks++;
      if (v[i] != r || e[i] != e2)
        fail("device %u: %s (0x%03x) reads 0x%08x (err %d), reference 0x%08x (err %d)", i, name, addr, v[i], e[i], r, e2);
    }
  }
  uint32_t ref_rd(unsigned i, uint32_t addr) { return rs_ref_dev_read(ref.d[i], addr, nullptr); }

  // REGISTERS.md's bring-up, steps 1-4, on both systems.
  void bring_up(unsigned i, uint32_t entries, bool irq) {
    wr(i, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK);
    rd(i, NCL_MMIO_ID, "ID");
    rd(i, NCL_MMIO_VERSION, "VERSION");
    rd(i, NCL_MMIO_CAPS, "CAPS");
    wr(i, NCL_MMIO_RING_BASE_LO, RING_AT);
    wr(i, NCL_MMIO_RING_BASE_HI, 0);
    wr(i, NCL_MMIO_RING_SIZE, NCL_MMIO_PREP(NCL_MMIO_RING_SIZE_ENTRIES, entries));
    wr(i, NCL_MMIO_ERR_STATUS, 0xFFFFFFFFu);
    wr(i, NCL_MMIO_IRQ_STATUS, 0xFFFFFFFFu);
    wr(i, NCL_MMIO_IRQ_MASK, irq ? NCL_MMIO_IRQ_MASK_BITS : 0);
    wr(i, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK | (irq ? NCL_MMIO_CTRL_IRQ_EN_MASK : 0));
    ring_n[i] = entries;
    irq_mode[i] = irq;
  }

  uint32_t head(unsigned i) { return NCL_MMIO_GET(NCL_MMIO_RING_HEAD_INDEX, ref_rd(i, NCL_MMIO_RING_HEAD)); }
  uint32_t tail(unsigned i) { return NCL_MMIO_GET(NCL_MMIO_RING_TAIL_INDEX, ref_rd(i, NCL_MMIO_RING_TAIL)); }

  // Writes d into slot `tail` of device i (both images) and advances RING_TAIL (at once, or
  // only in post_tail[i] when defer: one register write per batch).
  uint32_t post_tail[NDEV] = {};
  void post(unsigned i, const Desc &d, bool defer = false) {
    uint32_t t = defer ? post_tail[i] : tail(i);
    mem_put(i, RING_AT + (uint64_t)t * NCL_MMIO_DESC_BYTES, d.w, NCL_MMIO_DESC_BYTES);
    post_tail[i] = (t + 1) % ring_n[i];
    if (!defer) wr(i, NCL_MMIO_RING_TAIL, post_tail[i]);
    posted[i].push_back(d);
  }

  // Runs both systems until nothing moves; the reference steps its devices round robin.
  uint64_t run_cycles = 0;
  void run() {
    uint64_t c0 = rtl.cycles;
    struct Acc { uint64_t &a; uint64_t c0; RsDevSystem &r; ~Acc() { a += r.cycles - c0; } } acc{run_cycles, c0, rtl};
    if (!rtl.run_until_quiet(20'000'000)) fail("the RTL did not go quiet (a hang)");
    for (bool moved = true; moved;) {
      moved = false;
      for (unsigned i = 0; i < NDEV; i++) {
        int r = rs_ref_dev_step(ref.d[i]);
        if (r == RS_REF_STEP_DONE || r == RS_REF_STEP_ERROR) moved = true;
      }
    }
  }

  void compare_links() {
    for (unsigned i = 0; i < NDEV; i++) {
      auto &a = rtl.dev(i).log;
      auto &b = ref.log[i];
      if (a.size() != b.size()) fail("device %u sent %zu link transfers, reference %zu", i, a.size(), b.size());
      for (size_t k = 0; k < a.size(); k++) {
        const RsLinkMsg &x = a[k], &y = b[k];
        if (x.kind != y.kind || x.peer != y.peer || x.addr != y.addr || x.bytes != y.bytes || x.dtype != y.dtype ||
            x.op != y.op || x.notify != y.notify || x.status != y.status || x.data != y.data)
          fail("device %u link transfer %zu: kind %d peer %u addr 0x%" PRIx64 " bytes %u dtype %u op %u notify %u ack %d;"
               " reference kind %d peer %u addr 0x%" PRIx64 " bytes %u dtype %u op %u notify %u ack %d%s",
               i, k, x.kind, x.peer, x.addr, x.bytes, x.dtype, x.op, x.notify, x.status, y.kind, y.peer, y.addr,
               y.bytes, y.dtype, y.op, y.notify, y.status, x.data != y.data ? " (payloads differ)" : "");
        checks++;
      }
      a.clear();
      rtl.dev(i).log_acked = 0;
      b.clear();
    }
  }

  void compare(bool all_counters) {
    compare_links();
    for (unsigned i = 0; i < NDEV; i++) {
      if (std::memcmp(rtl.mem(i), rmem(i), MEM) != 0) {
        uint64_t a = 0;
        while (rtl.mem(i)[a] == rmem(i)[a]) a++;
        fail("device %u memory differs first at 0x%" PRIx64 ": 0x%02x, reference 0x%02x", i, a, rtl.mem(i)[a], rmem(i)[a]);
      }
      checks++;
      if ((int)rtl.top(i).irq != rs_ref_dev_irq(ref.d[i]))
        fail("device %u: irq %d, reference %d", i, rtl.top(i).irq, rs_ref_dev_irq(ref.d[i]));
    }
    static const struct { uint32_t addr; const char *name; } regs[] = {
        {NCL_MMIO_CTRL, "CTRL"}, {NCL_MMIO_STATUS, "STATUS"}, {NCL_MMIO_RING_HEAD, "RING_HEAD"},
        {NCL_MMIO_RING_TAIL, "RING_TAIL"}, {NCL_MMIO_IRQ_STATUS, "IRQ_STATUS"}, {NCL_MMIO_ERR_STATUS, "ERR_STATUS"},
        {NCL_MMIO_ERR_DESC, "ERR_DESC"}, {NCL_MMIO_ERR_ADDR_LO, "ERR_ADDR_LO"}, {NCL_MMIO_ERR_ADDR_HI, "ERR_ADDR_HI"},
    };
    for (auto &r : regs) rd_all(r.addr, r.name);
    if (all_counters) {
      for (uint32_t c = 0; c < NCL_MMIO_NOTIFY_COUNT; c++) rd_all(NCL_MMIO_NOTIFY_CNT(c), "NOTIFY_CNT");
    } else {
      for (unsigned c : kCnts) rd_all(NCL_MMIO_NOTIFY_CNT(c), "NOTIFY_CNT");
    }
  }
};

// ---- random batches ------------------------------------------------------------------------------
struct Gen {
  Bench &b;
  explicit Gen(Bench &bench) : b(bench) {}

  static uint64_t len_pick(bool big_ok) {
    // mostly short (the per-descriptor work is what the test is about), with a long tail
    unsigned r = (unsigned)below(10000);
    if (r < 4000) return below(9);
    if (r < 8500) return 9 + below(32);
    if (r < 9936) return 41 + below(216);
    if (r < 9998 || !big_ok) return 257 + below(1792);
    return 2049 + below(14336);
  }

  // Two ranges of len bytes inside [lo, hi): equal (sometimes) or not overlapping at all.
  static void two_ranges(uint64_t lo, uint64_t hi, uint64_t len, uint64_t align, uint64_t &s, uint64_t &d) {
    for (;;) {
      s = lo + below((hi - lo - len) / align + 1) * align;
      if (chance(40)) {
        d = s;
        return;
      }
      d = lo + below((hi - lo - len) / align + 1) * align;
      if (s + len <= d || d + len <= s) return;
    }
  }

  void pair(Fields &f) {
    static const uint32_t dts[] = {RS_REF_DT_INT32, RS_REF_DT_UINT32, RS_REF_DT_FP32};
    static const uint32_t ops[] = {RS_REF_OP_SUM, RS_REF_OP_MAX, RS_REF_OP_MIN};
    f.dtype = dts[below(3)];
    f.op = ops[below(3)];
    if (f.dtype == RS_REF_DT_FP32 && chance(500)) f.op = RS_REF_OP_SUM;  // the numerically hard one
  }

  // A valid descriptor for device i (peer = the other device). avail: what each counter of
  // device i is sure to reach; rec: records this batch sends to the peer, by counter.
  Desc valid(unsigned i, std::vector<uint32_t> &avail, std::vector<uint32_t> &rec) {
    Fields f;
    f.irq = chance(300);
    f.fence = chance(200);
    f.tag = (uint32_t)below(0x10000);
    unsigned peer = 1 - i;
    unsigned k = (unsigned)below(100);
    if (k < 22) {  // WRITE
      f.opc = NCL_MMIO_OPC_WRITE;
      f.peer = peer;
      f.len = len_pick(true);
      f.src = LOC + below(LOC_END - LOC - f.len + 1);
      f.dst = BOX + below(BOX_END - BOX - f.len + 1);
    } else if (k < 37) {  // WRITE_REDUCE
      f.opc = NCL_MMIO_OPC_WRITE_REDUCE;
      pair(f);
      f.peer = peer;
      f.len = len_pick(true) & ~3ull;
      f.src = LOC + below((LOC_END - LOC - f.len) / 4 + 1) * 4;
      f.dst = BOX + below((BOX_END - BOX - f.len) / 4 + 1) * 4;
    } else if (k < 59) {  // LOCAL_COPY
      f.opc = NCL_MMIO_OPC_LOCAL_COPY;
      f.len = chance(1) ? (LOC_END - LOC) / 2 : len_pick(true);
      two_ranges(LOC, LOC_END, f.len, 1, f.src, f.dst);
    } else if (k < 75) {  // LOCAL_REDUCE
      f.opc = NCL_MMIO_OPC_LOCAL_REDUCE;
      pair(f);
      f.len = chance(1) ? (LOC_END - LOC) / 2 : len_pick(true) & ~3ull;
      two_ranges(LOC, LOC_END, f.len, 4, f.src, f.dst);
    } else if (k < 87) {  // NOTIFY_RECORD
      f.opc = NCL_MMIO_OPC_NOTIFY_RECORD;
      f.notify = kCnts[below(sizeof kCnts / sizeof kCnts[0])];
      if (chance(350)) {
        f.local = 1;
        avail[f.notify]++;
      } else {
        f.peer = peer;
        rec[f.notify]++;
      }
    } else if (k < 95) {  // NOTIFY_WAIT on what is sure to arrive
      f.opc = NCL_MMIO_OPC_NOTIFY_WAIT;
      f.notify = kCnts[below(sizeof kCnts / sizeof kCnts[0])];
      uint32_t a = avail[f.notify];
      f.count = a ? (uint32_t)(chance(100) ? 0 : 1 + below(a < 0xFFFF ? a : 0xFFFF)) : 0;
      avail[f.notify] -= f.count;
    } else {
      f.opc = NCL_MMIO_OPC_NOP;
    }
    return make(f);
  }

  // A descriptor that must fail (every check of REGISTERS.md's order), for device i.
  Desc invalid(unsigned i) {
    Fields f;
    f.tag = (uint32_t)below(0x10000);
    f.irq = chance(500);
    unsigned peer = 1 - i;
    Desc d;
    switch (below(16)) {
      case 0: {  // a reserved or unused bit of a valid descriptor
        f.opc = NCL_MMIO_OPC_NOP + 0;
        f.opc = 1 + (uint32_t)below(7);
        if (f.opc == NCL_MMIO_OPC_WRITE || f.opc == NCL_MMIO_OPC_WRITE_REDUCE) f.peer = peer;
        if (f.opc == NCL_MMIO_OPC_WRITE_REDUCE || f.opc == NCL_MMIO_OPC_LOCAL_REDUCE) pair(f);
        if (f.opc <= NCL_MMIO_OPC_LOCAL_REDUCE) {
          f.src = LOC;
          f.dst = f.opc <= NCL_MMIO_OPC_WRITE_REDUCE ? BOX : LOC + 0x100;
          f.len = 8;
        }
        if (f.opc == NCL_MMIO_OPC_NOTIFY_RECORD) f.local = 1;
        d = make(f);
        // a bit this opcode does not use: find one at random
        for (;;) {
          unsigned w = (unsigned)below(NCL_MMIO_DESC_WORDS), bit = (unsigned)below(32);
          Desc probe = d;
          probe.w[w] |= 1u << bit;
          if (probe.w[w] == d.w[w]) continue;
          if (!used_bit(f.opc, w, bit)) {
            d = probe;
            d.what = "unused bit w" + std::to_string(w) + "." + std::to_string(bit);
            return d;
          }
        }
      }
      case 1:
        f.opc = chance(500) ? 0 : 8 + (uint32_t)below(248);
        d = make(f);
        d.what = "unknown opcode";
        return d;
      case 2:  // unsupported (dtype, op)
        f.opc = chance(500) ? NCL_MMIO_OPC_LOCAL_REDUCE : NCL_MMIO_OPC_WRITE_REDUCE;
        f.peer = f.opc == NCL_MMIO_OPC_WRITE_REDUCE ? peer : 0;
        pair(f);
        if (chance(500)) f.dtype = (uint32_t)below(16); else f.op = (uint32_t)below(8);
        if ((f.dtype == 2 || f.dtype == 3 || f.dtype == 7) && (f.op == 0 || f.op == 2 || f.op == 3)) f.op = 1;
        f.src = LOC;
        f.dst = f.opc == NCL_MMIO_OPC_WRITE_REDUCE ? BOX : LOC + 0x100;
        f.len = 16;
        d = make(f);
        d.what = "unsupported dtype/op";
        return d;
      case 3:  // misaligned reduce
        f.opc = chance(500) ? NCL_MMIO_OPC_LOCAL_REDUCE : NCL_MMIO_OPC_WRITE_REDUCE;
        f.peer = f.opc == NCL_MMIO_OPC_WRITE_REDUCE ? peer : 0;
        pair(f);
        f.src = LOC;
        f.dst = f.opc == NCL_MMIO_OPC_WRITE_REDUCE ? BOX : LOC + 0x100;
        f.len = 16;
        switch (below(3)) {
          case 0: f.src += 1 + below(3); break;
          case 1: f.dst += 1 + below(3); break;
          default: f.len += 1 + below(3); break;
        }
        d = make(f);
        d.what = "misaligned reduce";
        return d;
      case 4: {  // partial overlap
        f.opc = chance(500) ? NCL_MMIO_OPC_LOCAL_COPY : NCL_MMIO_OPC_LOCAL_REDUCE;
        if (f.opc == NCL_MMIO_OPC_LOCAL_REDUCE) pair(f);
        f.len = 64;
        f.src = LOC + 0x200;
        uint64_t shift = f.opc == NCL_MMIO_OPC_LOCAL_REDUCE ? 4 * (1 + below(15)) : 1 + below(63);
        f.dst = chance(500) ? f.src + shift : f.src - shift;
        d = make(f);
        d.what = "partial overlap";
        return d;
      }
      case 5:
        f.opc = chance(500) ? NCL_MMIO_OPC_NOTIFY_RECORD : NCL_MMIO_OPC_NOTIFY_WAIT;
        f.peer = f.opc == NCL_MMIO_OPC_NOTIFY_RECORD ? peer : 0;
        f.notify = NCL_MMIO_NOTIFY_COUNT + (uint32_t)below(256 - NCL_MMIO_NOTIFY_COUNT);
        d = make(f);
        d.what = "notify index past the counters";
        return d;
      case 6:
        f.opc = NCL_MMIO_OPC_NOTIFY_RECORD;
        f.local = 1;
        f.peer = 1 + (uint32_t)below(0xFFFF);
        d = make(f);
        d.what = "LOCAL record with a PEER";
        return d;
      case 7:
      case 8: {  // source out of range (incl. wrapping at 2^64)
        f.opc = 1 + (uint32_t)below(4);
        if (f.opc == NCL_MMIO_OPC_WRITE || f.opc == NCL_MMIO_OPC_WRITE_REDUCE) f.peer = peer;
        if (f.opc == NCL_MMIO_OPC_WRITE_REDUCE || f.opc == NCL_MMIO_OPC_LOCAL_REDUCE) pair(f);
        f.len = 4 * (1 + below(8));
        f.dst = f.opc <= NCL_MMIO_OPC_WRITE_REDUCE ? BOX : LOC;
        switch (below(4)) {
          case 0: f.src = MEM - f.len + 4; break;
          case 1: f.src = ~0ull - 3; break;
          case 2: f.src = 1ull << 40; break;
          default: f.src = MEM + 4, f.len = 0; break;  // zero length still needs src <= size
        }
        d = make(f);
        d.what = "source out of range";
        return d;
      }
      case 9: {  // local destination out of range
        f.opc = chance(500) ? NCL_MMIO_OPC_LOCAL_COPY : NCL_MMIO_OPC_LOCAL_REDUCE;
        if (f.opc == NCL_MMIO_OPC_LOCAL_REDUCE) pair(f);
        f.len = 4 * (2 + below(7));  // at MEM - 4, 4 bytes would fit: in range, racing the peer's writes
        f.src = LOC;
        f.dst = chance(500) ? MEM - 4 : ~0ull - 7;
        d = make(f);
        d.what = "local destination out of range";
        return d;
      }
      case 10:
      case 11: {  // the link fails: no such peer
        f.opc = 1 + (uint32_t)below(2);
        if (chance(333)) {
          f.opc = NCL_MMIO_OPC_NOTIFY_RECORD;
          f.notify = kCnts[below(7)];
        } else {
          if (f.opc == NCL_MMIO_OPC_WRITE_REDUCE) pair(f);
          f.src = LOC;
          f.dst = BOX;
          f.len = 4 * below(6);
        }
        f.peer = 2 + (uint32_t)below(0xFFFE);
        d = make(f);
        d.what = "no such peer";
        return d;
      }
      case 12:
      case 13: {  // the peer refuses: its destination is out of its memory
        f.opc = 1 + (uint32_t)below(2);
        if (f.opc == NCL_MMIO_OPC_WRITE_REDUCE) pair(f);
        f.peer = peer;
        f.src = LOC;
        f.len = 4 * (2 + below(5));  // at least 8: MEM - 4 + 4 would still fit
        f.dst = chance(500) ? MEM - 4 : (1ull << 33);
        d = make(f);
        d.what = "peer destination out of range";
        return d;
      }
      default: {  // the slot's opcode valid but a field of another opcode set
        f.opc = NCL_MMIO_OPC_NOP;
        f.count = 1;
        d = make(f);
        d.what = "NOP with a COUNT";
        return d;
      }
    }
  }

  static bool used_bit(uint32_t opc, unsigned w, unsigned bit) {
    uint32_t m = 1u << bit;
    auto in = [&](uint32_t word, uint32_t mask) { return w == word && (mask & m); };
    if (in(NCL_MMIO_DESC_OPCODE_WORD, NCL_MMIO_DESC_OPCODE_MASK | NCL_MMIO_DESC_IRQ_MASK | NCL_MMIO_DESC_FENCE_MASK)) return true;
    if (in(NCL_MMIO_DESC_TAG_WORD, NCL_MMIO_DESC_TAG_MASK)) return true;
    bool red = opc == NCL_MMIO_OPC_WRITE_REDUCE || opc == NCL_MMIO_OPC_LOCAL_REDUCE;
    bool data = opc >= NCL_MMIO_OPC_WRITE && opc <= NCL_MMIO_OPC_LOCAL_REDUCE;
    if (red && in(NCL_MMIO_DESC_DTYPE_WORD, NCL_MMIO_DESC_DTYPE_MASK | NCL_MMIO_DESC_OP_MASK)) return true;
    if (data && w >= NCL_MMIO_DESC_SRC_LO_WORD && w <= NCL_MMIO_DESC_LEN_WORD) return true;
    bool peer = opc == NCL_MMIO_OPC_WRITE || opc == NCL_MMIO_OPC_WRITE_REDUCE || opc == NCL_MMIO_OPC_NOTIFY_RECORD;
    if (peer && in(NCL_MMIO_DESC_PEER_WORD, NCL_MMIO_DESC_PEER_MASK)) return true;
    bool nt = opc == NCL_MMIO_OPC_NOTIFY_RECORD || opc == NCL_MMIO_OPC_NOTIFY_WAIT;
    if (nt && in(NCL_MMIO_DESC_NOTIFY_WORD, NCL_MMIO_DESC_NOTIFY_MASK)) return true;
    if (opc == NCL_MMIO_OPC_NOTIFY_RECORD && in(NCL_MMIO_DESC_LOCAL_WORD, NCL_MMIO_DESC_LOCAL_MASK)) return true;
    if (opc == NCL_MMIO_OPC_NOTIFY_WAIT && in(NCL_MMIO_DESC_COUNT_WORD, NCL_MMIO_DESC_COUNT_MASK)) return true;
    return false;
  }
};

// ---- directed parts --------------------------------------------------------------------------------

// REGISTERS.md's bring-up in interrupt and polled mode on the RTL alone, with the header's names
// only: reset values, ID, ring, a copy plus an IRQ NOP, doorbell, then wait for irq / poll HEAD.
void bringup_check(Bench &b) {
  RsDevSystem &s = b.rtl;
  for (int irq = 1; irq >= 0; irq--) {
    s.reset();
    for (unsigned i = 0; i < NDEV; i++) rs_ref_dev_reset(b.ref.d[i]);
#define RESET_ROW(n, off, acc, rst, bits, rw, cnt, str)                                         \
    for (uint32_t k = 0; k < (cnt); k++)                                                        \
      if (NCL_MMIO_ACC_##acc != NCL_MMIO_ACC_WO && s.reg_read(0, (off) + k * (str)) != (rst)) \
        b.fail("register " #n " does not read its reset value after rst_n");
    NCL_MMIO_REGS(RESET_ROW)
#undef RESET_ROW
    if (s.reg_read(0, NCL_MMIO_ID) != 0x5253494Du) b.fail("ID is not 'RSIM'");
    b.bring_up(0, 8, irq != 0);
    uint8_t buf[100];
    for (auto &c : buf) c = (uint8_t)rnd();
    b.mem_put(0, LOC + 3, buf, sizeof buf);
    Fields f;
    f.opc = NCL_MMIO_OPC_LOCAL_COPY;
    f.src = LOC + 3;
    f.dst = LOC + 0x201;
    f.len = sizeof buf;
    b.post(0, make(f));
    Fields n;
    n.opc = NCL_MMIO_OPC_NOP;
    n.irq = 1;
    n.tag = 7;
    b.post(0, make(n));
    if (s.top(0).irq) b.fail("irq before the doorbell");
    b.wr(0, NCL_MMIO_DOORBELL, 1);
    uint64_t t0 = s.cycles, took = 0;
    if (irq) {
      while (!s.top(0).irq)
        if (s.cycles - t0 > 10000) b.fail("no irq after the doorbell (interrupt mode)");
        else s.tick();
      took = s.cycles - t0;
      uint32_t st = s.reg_read(0, NCL_MMIO_IRQ_STATUS);
      if (st != (NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK | NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK))
        b.fail("IRQ_STATUS 0x%x after the batch (interrupt mode)", st);
      b.run();  // the reference catches up
      b.posted[0].clear();
      b.compare(true);
      b.wr(0, NCL_MMIO_IRQ_STATUS, st);
      if (s.top(0).irq) b.fail("irq still high after clearing IRQ_STATUS");
    } else {
      while ((s.reg_read(0, NCL_MMIO_STATUS) & NCL_MMIO_STATUS_EMPTY_MASK) == 0)
        if (s.cycles - t0 > 10000) b.fail("the ring does not drain (polled mode)");
      took = s.cycles - t0;
      if (s.top(0).irq) b.fail("irq in polled mode");
    }
    std::printf("bring-up (%s): %" PRIu64 " cycles from the doorbell to %s\n", irq ? "interrupt" : "polled",
                took, irq ? "irq" : "STATUS.EMPTY");
    if (NCL_MMIO_GET(NCL_MMIO_RING_HEAD_INDEX, s.reg_read(0, NCL_MMIO_RING_HEAD)) != 2) b.fail("HEAD is not 2");
    if (std::memcmp(s.mem(0) + LOC + 0x201, buf, sizeof buf) != 0) b.fail("the copy did not land");
    b.run();
    b.posted[0].clear();
    b.compare(true);
  }
}

// A doorbell with a bad ring, and a ring slot outside memory: BAD_RING / ADDR_RANGE as the reference.
void ring_errors(Bench &b) {
  struct { uint32_t size, tail; } bad[] = {{0, 0}, {1, 0}, {(1u << NCL_MMIO_RING_MAX_LOG2) + 1, 0}, {4, 4}, {4, 9}};
  for (auto &c : bad) {
    b.bring_up(0, 4, true);
    b.wr(0, NCL_MMIO_RING_SIZE, c.size);
    b.wr(0, NCL_MMIO_RING_TAIL, c.tail);
    b.wr(0, NCL_MMIO_DOORBELL, 1);
    b.run();
    b.compare(false);
    if (!(b.ref_rd(0, NCL_MMIO_ERR_STATUS) & NCL_MMIO_ERR_STATUS_BAD_RING_MASK)) b.fail("no BAD_RING for size %u tail %u", c.size, c.tail);
    b.wr(0, NCL_MMIO_DOORBELL, 1);  // ignored while the error is set
    b.run();
    b.compare(false);
  }
  // the slot at HEAD runs past memory: ADDR_RANGE naming the slot's address
  b.bring_up(0, 16, false);
  b.wr(0, NCL_MMIO_RING_BASE_LO, (uint32_t)(MEM - 4 * NCL_MMIO_DESC_BYTES));
  Fields n;
  n.opc = NCL_MMIO_OPC_NOP;
  for (int k = 0; k < 5; k++) {
    uint32_t t = b.tail(0);
    if (t < 4) b.mem_put(0, MEM - 4 * NCL_MMIO_DESC_BYTES + t * NCL_MMIO_DESC_BYTES, make(n).w, NCL_MMIO_DESC_BYTES);
    b.wr(0, NCL_MMIO_RING_TAIL, t + 1);
  }
  b.wr(0, NCL_MMIO_DOORBELL, 1);
  b.run();
  b.compare(false);
  if (b.ref_rd(0, NCL_MMIO_ERR_ADDR_LO) != MEM) b.fail("slot past memory: ERR_ADDR 0x%x", b.ref_rd(0, NCL_MMIO_ERR_ADDR_LO));
  // the base wraps at 2^64
  b.bring_up(0, 16, false);
  b.wr(0, NCL_MMIO_RING_BASE_LO, 0xFFFFFFE0u);
  b.wr(0, NCL_MMIO_RING_BASE_HI, 0xFFFFFFFFu);
  b.wr(0, NCL_MMIO_RING_TAIL, 3);
  b.wr(0, NCL_MMIO_DOORBELL, 1);
  b.run();
  b.compare(false);
  std::printf("ring errors: %zu BAD_RING cases and 2 slots outside memory agree\n", sizeof bad / sizeof bad[0]);
}

// Transfers from a foreign sender straight into device 0's RX port: every status of
// rs_ref_dev_link_rx (unknown kind, unsupported or misaligned reduce, notify index, range) and
// good ones, with their effects on memory and counters.
void rx_inject(Bench &b) {
  struct Case { int kind; uint64_t addr; uint32_t bytes; unsigned dtype, op, notify; };
  std::vector<Case> cs = {
      {0, BOX, 8, 0, 0, 0},        {3, 0, 0, 0, 0, 200},       {3, 0, 0, 0, 0, 127},
      {2, BOX, 8, 5, 0, 0},        {2, BOX, 8, 7, 1, 0},       {2, BOX + 2, 8, 7, 0, 0},
      {2, BOX, 6, 2, 0, 0},        {2, MEM - 4, 8, 2, 0, 0},   {1, MEM - 3, 4, 0, 0, 0},
      {1, MEM, 0, 0, 0, 0},        {1, MEM + 1, 0, 0, 0, 0},   {1, ~0ull - 1, 4, 0, 0, 0},
      {1, BOX + 1, 13, 0, 0, 0},   {2, BOX + 8, 12, 7, 0, 0},  {2, BOX + 8, 0, 3, 3, 0},
      {1, MEM - 5, 5, 0, 0, 0},    {3, 0, 0, 0, 0, 0},
  };
  RsDevSystem &s = b.rtl;
  s.dev(0).inject_status.clear();
  std::vector<int> want;
  for (auto &c : cs) {
    RsInject in;
    in.msg.kind = c.kind;
    in.msg.addr = c.addr;
    in.msg.bytes = c.bytes;
    in.msg.dtype = c.dtype;
    in.msg.op = c.op;
    in.msg.notify = c.notify;
    for (uint32_t k = 0; k < c.bytes; k++) in.msg.data.push_back((uint8_t)operand());
    rs_ref_link_msg m = {};
    m.kind = c.kind;
    m.addr = c.addr;
    m.bytes = c.bytes;
    m.dtype = (uint8_t)c.dtype;
    m.op = (uint8_t)c.op;
    m.notify = (uint8_t)c.notify;
    m.data = in.msg.data.data();
    want.push_back(rs_ref_dev_link_rx(b.ref.d[0], &m));
    s.dev(0).inject.push_back(std::move(in));
  }
  if (!s.run_until_quiet(100000)) b.fail("injected transfers hang");
  if (s.dev(0).inject_status != want) {
    for (size_t k = 0; k < want.size(); k++)
      std::printf("  case %zu: ack %d, reference %d\n", k, k < s.dev(0).inject_status.size() ? s.dev(0).inject_status[k] : -1, want[k]);
    b.fail("acks of injected transfers differ");
  }
  b.compare(true);
  std::printf("link RX: %zu injected transfers, acks (OK/RANGE/BAD) and effects agree\n", want.size());
}

// ENABLE = 0 mid-run stops after the current descriptor (the reference, cycle-free, is stepped to
// the same point), ENABLE = 1 resumes; a soft reset in the middle of a local copy drops it (the
// responses still in flight are discarded) and one in the middle of a link WRITE lets the transfer
// finish silently so the link stays in step. Memory the RTL moved before a reset is copied into
// the reference (a cycle-free model cannot stop half way), then both must agree again.
void enable_and_soft_reset(Bench &b) {
  RsDevSystem &s = b.rtl;
  for (unsigned i = 0; i < NDEV; i++) b.bring_up(i, RING_MAX, false);
  Fields f;
  f.opc = NCL_MMIO_OPC_LOCAL_COPY;
  f.len = 4096;
  for (int k = 0; k < 6; k++) {
    f.src = LOC + 0x10 * k + 1;
    f.dst = LOC + 0x4000 + 0x10 * k;
    b.post(0, make(f));
  }
  b.wr(0, NCL_MMIO_DOORBELL, 1);
  for (int c = 0; c < 100; c++) s.tick();
  s.reg_write(0, NCL_MMIO_CTRL, 0);  // the RTL is inside descriptor 0
  if (!s.run_until_quiet(100000)) b.fail("ENABLE = 0 does not stop the engine");
  if (rs_ref_dev_step(b.ref.d[0]) != RS_REF_STEP_DONE) b.fail("reference did not step");
  rs_ref_dev_write(b.ref.d[0], NCL_MMIO_CTRL, 0);
  b.compare(false);
  if (b.head(0) != 1) b.fail("ENABLE = 0 did not stop after the current descriptor (HEAD %u)", b.head(0));
  b.wr(0, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK);  // resumes up to the doorbell's tail
  b.run();
  b.compare(false);
  if (b.head(0) != 6) b.fail("ENABLE = 1 did not resume (HEAD %u)", b.head(0));
  b.posted[0].clear();

  // soft reset inside a long local copy and inside a long link WRITE, under backpressure and
  // long read latency; new work is posted right away, while responses to the dropped reads are
  // still coming back (they must be discarded, not taken for the new descriptor's words)
  for (int kind = 0; kind < 2; kind++) {
    s.mem_stall = 0.3;
    s.max_lat = 24;
    Fields w;
    w.opc = kind ? NCL_MMIO_OPC_WRITE : NCL_MMIO_OPC_LOCAL_COPY;
    w.peer = kind ? 1 : 0;
    w.src = LOC + 3;
    w.dst = kind ? BOX + 1 : LOC + 0x4002;
    w.len = 12000;
    b.post(0, make(w));
    b.wr(0, NCL_MMIO_DOORBELL, 1);
    for (int c = 0; c < 400; c++) s.tick();
    b.wr(0, NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK);
    b.wr(0, NCL_MMIO_RING_BASE_LO, RING_AT);
    b.wr(0, NCL_MMIO_RING_SIZE, RING_MAX);
    b.wr(0, NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK);
    b.posted[0].clear();
    Fields c;
    c.opc = NCL_MMIO_OPC_WRITE;
    c.peer = 1;
    c.src = LOC + 0x100;
    c.dst = BOX + 0x4000;  // clear of the cut WRITE's bytes
    c.len = 77;
    b.post(0, make(c));
    c.opc = NCL_MMIO_OPC_LOCAL_COPY;
    c.peer = 0;
    c.dst = LOC + 0x3000;  // clear of the cut copy's bytes
    b.post(0, make(c));
    Fields r;
    r.opc = NCL_MMIO_OPC_NOTIFY_RECORD;
    r.peer = 1;
    r.notify = 5;
    r.irq = 1;
    b.post(0, make(r));
    b.wr(0, NCL_MMIO_DOORBELL, 1);
    if (!s.run_until_quiet(200000)) b.fail("soft reset mid-transfer hangs");
    b.run();
    if (kind) {
      // the cut WRITE went out whole and was acked first; nothing of it reached the registers
      auto &lg = s.dev(0).log;
      if (lg.empty() || lg[0].bytes != w.len || lg[0].status != RsDevSystem::kRxOk)
        b.fail("the WRITE cut by a soft reset did not finish on the link");
      lg.erase(lg.begin());
      s.dev(0).log_acked--;
      std::memcpy(b.rmem(1) + BOX + 1, s.mem(1) + BOX + 1, w.len);
    } else {
      std::memcpy(b.rmem(0) + LOC + 0x4002, s.mem(0) + LOC + 0x4002, w.len);
    }
    s.mem_stall = 0;
    s.max_lat = 1;
    b.compare(true);
    if (b.ref_rd(0, NCL_MMIO_ERR_STATUS) != 0 || b.head(0) != 3) b.fail("the work after a soft reset did not run cleanly");
    b.posted[0].clear();
  }
  std::printf("ENABLE = 0 stops after the current descriptor and resumes; soft reset mid-copy and mid-WRITE recover\n");
}

}  // namespace

int main(int argc, char **argv) {
  uint64_t target = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1000000;
  const char *env = std::getenv("RS_SEED");
  g_seed = env ? std::strtoull(env, nullptr, 0)
               : (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count();
  g_rng = g_seed * 0x9E3779B97F4A7C15ull + 1;
  if (!g_rng) g_rng = 1;
  std::printf("test_rtl_engine: seed %" PRIu64 " (RS_SEED=%" PRIu64 " reproduces), %" PRIu64 " descriptors\n", g_seed, g_seed, target);

  Bench b;
  for (unsigned i = 0; i < NDEV; i++)
    for (uint64_t a = LOC; a < MEM; a += 4) b.put32(i, a, operand());
  bringup_check(b);
  ring_errors(b);
  rx_inject(b);
  enable_and_soft_reset(b);

  // ---- random batches
  Gen g(b);
  for (unsigned i = 0; i < NDEV; i++) b.bring_up(i, RING_MAX, chance(500));
  uint64_t errors = 0, by_op[8] = {}, bytes = 0, waits_blocked_ok = 0;
  uint64_t c0 = b.rtl.cycles;
  auto t0 = std::chrono::steady_clock::now();
  while (b.descs < target) {
    b.batch++;
    // stress the handshakes on some batches
    bool stress = chance(150);
    b.rtl.mem_stall = stress ? 0.3 : 0.0;
    b.rtl.link_stall = stress ? 0.3 : 0.0;
    b.rtl.max_lat = stress ? 4 : 1;
    if (chance(60)) {  // fresh operands: a window of edge and near-tie values
      for (unsigned i = 0; i < NDEV; i++) {
        uint64_t a = LOC + below((LOC_END - LOC - 1024) / 4) * 4;
        for (int k = 0; k < 256; k++) b.put32(i, a + 4 * k, operand());
      }
    }
    bool err_in[NDEV] = {};
    // on some batches device 1 waits for device 0's records of the same batch (a wait that
    // really blocks); not on all: that serializes the two devices and doubles the run time
    bool cross = chance(200);
    std::vector<uint32_t> rec[NDEV];
    for (unsigned i = 0; i < NDEV; i++) {
      b.posted[i].clear();
      rec[i].assign(NCL_MMIO_NOTIFY_COUNT, 0);
    }
    // the same batch size on both devices: they run side by side, the longer batch sets the pace
    uint32_t kmax = (b.ring_n[0] < b.ring_n[1] ? b.ring_n[0] : b.ring_n[1]) - 1;
    unsigned kb = 1 + (unsigned)below(kmax);
    for (unsigned i = 0; i < NDEV; i++) {
      std::vector<uint32_t> avail(NCL_MMIO_NOTIFY_COUNT);
      for (unsigned c : kCnts) avail[c] = b.ref_rd(i, NCL_MMIO_NOTIFY_CNT(c));
      // device 1 may wait on device 0's records of this batch (never the other way round, so
      // no cycle of waits), unless device 0's batch stops on an error
      if (i == 1 && !err_in[0] && cross)
        for (unsigned c : kCnts) avail[c] += rec[0][c];
      unsigned k = chance(100) ? 1 + (unsigned)below(b.ring_n[i] - 1) : kb;
      b.post_tail[i] = b.tail(i);
      int bad_at = chance(70) ? (int)below(k) : -1;
      for (unsigned j = 0; j < k; j++) {
        Desc d = (int)j == bad_at ? g.invalid(i) : g.valid(i, avail, rec[i]);
        if ((int)j == bad_at) err_in[i] = true;
        uint32_t opc = NCL_MMIO_DESC_GET(d.w, NCL_MMIO_DESC_OPCODE);
        by_op[opc < 8 ? opc : 0]++;
        if (opc >= 1 && opc <= 4) bytes += NCL_MMIO_DESC_GET(d.w, NCL_MMIO_DESC_LEN);
        b.post(i, d, true);
      }
      b.descs += k;
    }
    const uint32_t ones[NDEV] = {1, 1};
    b.wr_all(NCL_MMIO_RING_TAIL, b.post_tail);
    b.wr_all(NCL_MMIO_DOORBELL, ones);
    b.run();
    b.compare((b.batch & 255) == 0);
    // recover from an error: patch the slot to a NOP and resume, or soft-reset and start over
    for (unsigned i = 0; i < NDEV; i++) {
      uint32_t es = b.ref_rd(i, NCL_MMIO_ERR_STATUS);
      if (!es) continue;
      errors++;
      if (chance(500)) {
        Fields n;
        n.opc = NCL_MMIO_OPC_NOP;
        n.irq = 1;
        uint32_t h = b.head(i);
        b.mem_put(i, RING_AT + (uint64_t)h * NCL_MMIO_DESC_BYTES, make(n).w, NCL_MMIO_DESC_BYTES);
        b.wr(i, NCL_MMIO_ERR_STATUS, es);
        b.wr(i, NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_ERROR_MASK);
        b.wr(i, NCL_MMIO_DOORBELL, 1);
      } else {
        // mostly the full ring (small rings make small batches), sometimes 2..15 entries
        b.bring_up(i, chance(250) ? 2 + (uint32_t)below(RING_MAX - 2) : RING_MAX, chance(500));
      }
      b.run();
      b.compare(false);
    }
    if (chance(20)) {  // software clears some events
      for (unsigned i = 0; i < NDEV; i++) b.wr(i, NCL_MMIO_IRQ_STATUS, (uint32_t)below(16));
    }
    (void)waits_blocked_ok;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t cyc = b.rtl.cycles - c0;
  b.compare(true);
  std::printf("random: %" PRIu64 " descriptors in %" PRIu64 " batches (%" PRIu64 " stopped on an injected error), "
              "%" PRIu64 " payload bytes\n", b.descs, b.batch, errors, bytes);
  std::printf("  by opcode: WRITE %" PRIu64 ", WRITE_REDUCE %" PRIu64 ", LOCAL_COPY %" PRIu64 ", LOCAL_REDUCE %" PRIu64
              ", NOTIFY_RECORD %" PRIu64 ", NOTIFY_WAIT %" PRIu64 ", NOP %" PRIu64 ", invalid opcode %" PRIu64 "\n",
              by_op[1], by_op[2], by_op[3], by_op[4], by_op[5], by_op[6], by_op[7], by_op[0]);
  std::printf("  %" PRIu64 " checks passed; %" PRIu64 " cycles of 2 devices in %.2f s = %.2f M cycles/s "
              "(%.1f cycles per descriptor, %.0f%% of them running, the rest register accesses)\n", b.checks, cyc, secs, cyc / secs / 1e6, (double)cyc / (double)b.descs, 100.0 * (double)b.run_cycles / (double)b.rtl.cycles);
  std::printf("PASS\n");
  return 0;
}
