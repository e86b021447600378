// test_rtl_regfile.cpp — the verilated rs_regfile through its register bus, using only ncl/ncl_mmio_regs.h's names.
//
// Every register offset, reset value, mask and field below comes from the generated header, so a
// pass proves the RTL (built from the generated SV package) and the C header agree, and that the
// RTL does what rtl_stub/REGISTERS.md says. Deterministic (fixed seed); prints its check counts.
#include "Vrs_regfile.h"
#include "verilated.h"

#include <ncl/ncl_mmio_regs.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

long g_checks = 0;
long g_failed = 0;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        ++g_checks;                                                                       \
        if (!(cond)) {                                                                    \
            if (g_failed++ < 25) {                                                        \
                std::fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);    \
                std::fprintf(stderr, __VA_ARGS__);                                        \
                std::fputc('\n', stderr);                                                 \
            }                                                                             \
        }                                                                                 \
    } while (0)

struct Reg {
    const char *name;
    uint32_t offset, access, reset, bits, rwbits, count, stride;
};

#define RS_REG_ROW(n, off, acc, rst, b, rw, cnt, str) {#n, off, NCL_MMIO_ACC_##acc, rst, b, rw, cnt, str},
const Reg kRegs[] = {NCL_MMIO_REGS(RS_REG_ROW)};
#undef RS_REG_ROW

// Named IRQ/ERR bits, from the header's fields.
const uint32_t kIrqDone = NCL_MMIO_IRQ_STATUS_DESC_DONE_MASK;
const uint32_t kIrqEmpty = NCL_MMIO_IRQ_STATUS_RING_EMPTY_MASK;
const uint32_t kIrqError = NCL_MMIO_IRQ_STATUS_ERROR_MASK;
const uint32_t kIrqNotify = NCL_MMIO_IRQ_STATUS_NOTIFY_MASK;
const uint32_t kEngErrs = NCL_MMIO_ERR_STATUS_BAD_DESC_MASK | NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK |
                          NCL_MMIO_ERR_STATUS_LINK_MASK | NCL_MMIO_ERR_STATUS_BAD_RING_MASK;

struct Dut {
    VerilatedContext ctx;
    Vrs_regfile m{&ctx};

    Dut() { reset(); }
    void idle_hw()
    {
        m.head_we = 0;
        m.head_in = 0;
        m.busy = 0;
        m.ev_desc_done = 0;
        m.err_bad_desc = m.err_addr_range = m.err_link = m.err_bad_ring = 0;
        m.err_desc = 0;
        m.err_addr = 0;
        m.link_inc_valid = m.eng_inc_valid = m.eng_dec_valid = 0;
        m.link_inc_idx = m.eng_inc_idx = m.eng_dec_idx = 0;
        m.eng_dec_amount = 0;
    }
    void reset()
    {
        m.req_valid = 0;
        m.req_write = 0;
        m.req_addr = 0;
        m.req_wdata = 0;
        idle_hw();
        m.rst_n = 0;
        tick();
        tick();
        m.rst_n = 1;
    }
    void tick()
    {
        m.clk = 0;
        m.eval();
        m.clk = 1;
        m.eval();
    }
    // One clock with whatever hardware inputs the caller set; they are pulses, so clear them.
    void hw_tick()
    {
        tick();
        idle_hw();
    }
    // One bus transfer (plus any hardware inputs set for this cycle); the response is registered.
    uint32_t access(bool write, uint32_t addr, uint32_t wdata, bool *err)
    {
        CHECK(m.req_ready, "req_ready low");
        m.req_valid = 1;
        m.req_write = write;
        m.req_addr = addr;
        m.req_wdata = wdata;
        tick();
        m.req_valid = 0;
        idle_hw();
        CHECK(m.rsp_valid, "no response to %s 0x%03x", write ? "write" : "read", addr);
        *err = m.rsp_err;
        return m.rsp_rdata;
    }
    uint32_t rd(uint32_t addr)
    {
        bool err;
        uint32_t v = access(false, addr, 0, &err);
        CHECK(!err, "read 0x%03x: bus error", addr);
        return v;
    }
    void wr(uint32_t addr, uint32_t v)
    {
        bool err;
        access(true, addr, v, &err);
        CHECK(!err, "write 0x%03x: bus error", addr);
    }
};

uint32_t notify_word(uint32_t idx, uint32_t amount, bool add)
{
    return add ? NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_IDX, idx) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_ADD_AMOUNT, amount)
               : NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_IDX, idx) | NCL_MMIO_PREP(NCL_MMIO_NOTIFY_SUB_AMOUNT, amount);
}

// Every register (every element of arrays) reads its reset value, with no bus error.
void check_reset_values(Dut &d, const char *when)
{
    for (const Reg &r : kRegs)
        for (uint32_t i = 0; i < r.count; i++) {
            uint32_t a = r.offset + i * r.stride;
            uint32_t v = d.rd(a);
            CHECK(v == r.reset, "%s: %s[%u] = 0x%08x, reset is 0x%08x", when, r.name, i, v, r.reset);
        }
    CHECK(!d.m.enable && !d.m.irq && !d.m.doorbell && d.m.ring_base == 0 && d.m.ring_size == 0 &&
              d.m.ring_tail == 0 && d.m.ring_head == 0,
          "%s: engine-side outputs not at reset", when);
    for (uint32_t i = 0; i < NCL_MMIO_NOTIFY_COUNT; i++)
        CHECK(d.m.notify_cnt[i] == NCL_MMIO_NOTIFY_CNT_RESET, "%s: notify_cnt[%u] port", when, i);
}

void test_reset()
{
    Dut d;
    check_reset_values(d, "after rst_n");
    CHECK(NCL_MMIO_GET(NCL_MMIO_CAPS_NOTIFY_COUNT, d.rd(NCL_MMIO_CAPS)) == NCL_MMIO_NOTIFY_COUNT, "CAPS");
    CHECK(d.rd(NCL_MMIO_ID) == 0x5253494Du, "ID is 'RSIM'");
}

// RW registers keep exactly their RW bits; unimplemented bits read 0; the engine sees the value.
void test_rw(std::mt19937_64 &rng)
{
    Dut d;
    int regs = 0;
    for (const Reg &r : kRegs) {
        if (r.access != NCL_MMIO_ACC_RW)
            continue;
        ++regs;
        for (int k = 0; k < 300; k++) {
            uint32_t v = (uint32_t)rng();
            if (k == 0)
                v = 0xFFFFFFFFu;
            if (k == 1)
                v = 0;
            // Implemented bits that are not RW (CTRL.SOFT_RESET) would act: keep them 0.
            v &= ~(r.bits & ~r.rwbits);
            d.wr(r.offset, v);
            CHECK(!d.m.doorbell && !d.m.soft_reset, "writing %s pulsed doorbell/soft_reset", r.name);
            uint32_t got = d.rd(r.offset);
            CHECK(got == (v & r.rwbits), "%s: wrote 0x%08x read 0x%08x (rw bits 0x%08x)", r.name, v, got,
                  r.rwbits);
            if (r.offset == NCL_MMIO_CTRL)
                CHECK(d.m.enable == ((v & NCL_MMIO_CTRL_ENABLE_MASK) != 0), "enable port");
            if (r.offset == NCL_MMIO_RING_SIZE)
                CHECK(d.m.ring_size == NCL_MMIO_GET(NCL_MMIO_RING_SIZE_ENTRIES, v), "ring_size port");
            if (r.offset == NCL_MMIO_RING_TAIL)
                CHECK(d.m.ring_tail == NCL_MMIO_GET(NCL_MMIO_RING_TAIL_INDEX, v), "ring_tail port");
        }
    }
    uint32_t lo = 0xDEADBEEFu, hi = 0x01234567u;
    d.wr(NCL_MMIO_RING_BASE_LO, lo);
    d.wr(NCL_MMIO_RING_BASE_HI, hi);
    CHECK(d.m.ring_base == (((uint64_t)hi << 32) | (lo & NCL_MMIO_RING_BASE_LO_ADDR_MASK)),
          "ring_base port 0x%016" PRIx64, (uint64_t)d.m.ring_base);
    CHECK((d.m.ring_base % NCL_MMIO_DESC_BYTES) == 0, "ring base is descriptor-aligned");
    CHECK(regs >= 7, "only %d RW registers", regs);
    std::printf("  rw: %d registers x 300 values\n", regs);
}

// RO registers ignore writes (no bus error either).
void test_ro(std::mt19937_64 &rng)
{
    Dut d;
    for (const Reg &r : kRegs) {
        if (r.access != NCL_MMIO_ACC_RO)
            continue;
        for (uint32_t i = 0; i < r.count; i++) {
            uint32_t a = r.offset + i * r.stride;
            uint32_t before = d.rd(a);
            for (int k = 0; k < 8; k++) {
                uint32_t v = k == 0 ? ~before : (uint32_t)rng();
                d.wr(a, v);
                CHECK(d.rd(a) == before, "%s[%u] changed by a write of 0x%08x", r.name, i, v);
            }
        }
    }
}

// Drives every IRQ_STATUS source at once (and one engine error for ERROR).
void fire_all_irqs(Dut &d)
{
    d.m.ev_desc_done = 1;
    d.m.head_we = 1;
    d.m.head_in = d.m.ring_tail; // head onto tail: RING_EMPTY
    d.m.err_link = 1;
    d.m.link_inc_valid = 1;
    d.hw_tick();
}

// W1C registers clear only the bits written as 1.
void test_w1c(std::mt19937_64 &rng)
{
    Dut d;
    for (int k = 0; k < 200; k++) {
        fire_all_irqs(d);
        CHECK(d.rd(NCL_MMIO_IRQ_STATUS) == NCL_MMIO_IRQ_STATUS_BITS, "every irq source sets its bit");
        uint32_t w = (uint32_t)rng();
        d.wr(NCL_MMIO_IRQ_STATUS, w);
        uint32_t got = d.rd(NCL_MMIO_IRQ_STATUS);
        CHECK(got == (NCL_MMIO_IRQ_STATUS_BITS & ~w), "IRQ_STATUS: wrote 0x%08x, read 0x%08x", w, got);
    }
    for (int k = 0; k < 200; k++) {
        // every ERR_STATUS bit: four engine errors, a bus error, a notify saturation
        d.m.err_bad_desc = d.m.err_addr_range = d.m.err_link = d.m.err_bad_ring = 1;
        d.hw_tick();
        bool err;
        d.access(false, NCL_MMIO_NOTIFY_CNT(NCL_MMIO_NOTIFY_COUNT), 0, &err);
        CHECK(err, "read past the notify counters is a bus error");
        // counter 0 holds the link records above: taking the largest AMOUNT drives it below 0
        d.wr(NCL_MMIO_NOTIFY_SUB, notify_word(0, NCL_MMIO_NOTIFY_SUB_AMOUNT_MASK >> NCL_MMIO_NOTIFY_SUB_AMOUNT_SHIFT, false));
        CHECK(d.rd(NCL_MMIO_ERR_STATUS) == NCL_MMIO_ERR_STATUS_BITS, "every error source sets its bit");
        uint32_t w = (uint32_t)rng();
        d.wr(NCL_MMIO_ERR_STATUS, w);
        uint32_t got = d.rd(NCL_MMIO_ERR_STATUS);
        CHECK(got == (NCL_MMIO_ERR_STATUS_BITS & ~w), "ERR_STATUS: wrote 0x%08x, read 0x%08x", w, got);
    }
}

// DOORBELL: any write is exactly one cycle of doorbell, the cycle after the write.
void test_doorbell(std::mt19937_64 &rng)
{
    Dut d;
    for (int k = 0; k < 100; k++) {
        CHECK(!d.m.doorbell, "doorbell high before the write");
        d.wr(NCL_MMIO_DOORBELL, (uint32_t)rng());
        CHECK(d.m.doorbell, "no doorbell pulse after the write");
        for (int c = 0; c < 1 + k % 4; c++) {
            d.tick();
            CHECK(!d.m.doorbell, "doorbell longer than one cycle");
        }
    }
    // back to back: one pulse per write
    d.wr(NCL_MMIO_DOORBELL, 1);
    CHECK(d.m.doorbell, "first of two");
    d.wr(NCL_MMIO_DOORBELL, 1);
    CHECK(d.m.doorbell, "second of two");
    d.tick();
    CHECK(!d.m.doorbell, "after two");
    CHECK(d.rd(NCL_MMIO_DOORBELL) == 0, "DOORBELL reads 0");
}

// Each hardware event sets exactly its IRQ_STATUS bit; irq = IRQ_EN and any(status and mask).
void test_irq()
{
    const uint32_t bits[] = {kIrqDone, kIrqEmpty, kIrqError, kIrqNotify};
    for (int src = 0; src < 4; src++) {
        Dut d;
        d.wr(NCL_MMIO_RING_TAIL, 7);
        // head moving elsewhere than the tail is not RING_EMPTY
        d.m.head_we = 1;
        d.m.head_in = 3;
        d.hw_tick();
        CHECK(d.rd(NCL_MMIO_IRQ_STATUS) == 0, "head_we off the tail set an irq bit");
        switch (src) {
        case 0: d.m.ev_desc_done = 1; break;
        case 1: d.m.head_we = 1; d.m.head_in = 7; break;
        case 2: d.m.err_bad_desc = 1; break;
        case 3: d.m.eng_inc_valid = 1; d.m.eng_inc_idx = 2; break;
        }
        d.hw_tick();
        CHECK(d.rd(NCL_MMIO_IRQ_STATUS) == bits[src], "source %d set 0x%08x", src, d.rd(NCL_MMIO_IRQ_STATUS));
        for (uint32_t en = 0; en < 2; en++)
            for (uint32_t mask = 0; mask <= NCL_MMIO_IRQ_MASK_BITS; mask++) {
                if ((mask & ~NCL_MMIO_IRQ_MASK_BITS) != 0)
                    continue;
                d.wr(NCL_MMIO_IRQ_MASK, mask);
                d.wr(NCL_MMIO_CTRL, NCL_MMIO_PREP(NCL_MMIO_CTRL_IRQ_EN, en));
                bool want = en && (mask & bits[src]) != 0;
                CHECK(d.m.irq == want, "source %d mask 0x%x irq_en %u: irq %d", src, mask, en, d.m.irq);
            }
        // clearing the status drops the line
        d.wr(NCL_MMIO_IRQ_MASK, NCL_MMIO_IRQ_MASK_BITS);
        CHECK(d.m.irq, "irq with everything enabled");
        d.wr(NCL_MMIO_IRQ_STATUS, bits[src]);
        CHECK(!d.m.irq, "irq still high after W1C");
    }
}

// ERR_DESC/ERR_ADDR hold the first engine error until ERR_STATUS's engine bits are all cleared;
// checked against a model over random errors and clears.
void test_err_capture(std::mt19937_64 &rng)
{
    Dut d;
    uint32_t status = 0, desc = 0;
    uint64_t addr = 0;
    const uint32_t masks[] = {NCL_MMIO_ERR_STATUS_BAD_DESC_MASK, NCL_MMIO_ERR_STATUS_ADDR_RANGE_MASK,
                              NCL_MMIO_ERR_STATUS_LINK_MASK, NCL_MMIO_ERR_STATUS_BAD_RING_MASK};
    // directed: first kept, later ones only add bits
    d.m.err_addr_range = 1;
    d.m.err_desc = 5;
    d.m.err_addr = 0x123456780ull;
    d.hw_tick();
    d.m.err_link = 1;
    d.m.err_desc = 9;
    d.m.err_addr = 0x999ull;
    d.hw_tick();
    CHECK(d.rd(NCL_MMIO_ERR_STATUS) == (masks[1] | masks[2]), "two errors");
    CHECK(d.rd(NCL_MMIO_ERR_DESC) == 5 && d.rd(NCL_MMIO_ERR_ADDR_LO) == 0x23456780u &&
              d.rd(NCL_MMIO_ERR_ADDR_HI) == 1,
          "the first error is kept");
    CHECK((d.rd(NCL_MMIO_IRQ_STATUS) & kIrqError) != 0, "errors raise IRQ_STATUS.ERROR");
    d.wr(NCL_MMIO_ERR_STATUS, masks[2]);
    d.m.err_bad_desc = 1;
    d.m.err_desc = 11;
    d.hw_tick();
    CHECK(d.rd(NCL_MMIO_ERR_DESC) == 5, "kept while one engine bit stays set");
    // a clear and a new error in the same cycle: the new one is captured
    d.m.err_bad_ring = 1;
    d.m.err_desc = 21;
    d.m.err_addr = 0xABCull;
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);
    CHECK(d.rd(NCL_MMIO_ERR_STATUS) == masks[3], "set wins over a same-cycle clear");
    CHECK(d.rd(NCL_MMIO_ERR_DESC) == 21 && d.rd(NCL_MMIO_ERR_ADDR_LO) == 0xABCu, "captured after the clear");
    // REG_ACCESS (not an engine error) neither captures nor blocks a capture
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);
    bool err;
    d.access(false, 0xFFC, 0, &err);
    CHECK(err && d.rd(NCL_MMIO_ERR_DESC) == 21, "a bus error captures nothing");
    d.m.err_link = 1;
    d.m.err_desc = 30;
    d.hw_tick();
    CHECK(d.rd(NCL_MMIO_ERR_DESC) == 30, "REG_ACCESS does not block the capture");
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);

    // random, against the model, which starts from what the directed part left captured
    d.m.err_bad_desc = d.m.err_addr_range = d.m.err_link = d.m.err_bad_ring = 0;
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);
    desc = d.rd(NCL_MMIO_ERR_DESC);
    addr = ((uint64_t)d.rd(NCL_MMIO_ERR_ADDR_HI) << 32) | d.rd(NCL_MMIO_ERR_ADDR_LO);
    for (int k = 0; k < 20000; k++) {
        uint32_t set = 0;
        if (rng() % 3 == 0)
            for (int b = 0; b < 4; b++)
                if (rng() % 3 == 0)
                    set |= masks[b];
        d.m.err_bad_desc = (set & masks[0]) != 0;
        d.m.err_addr_range = (set & masks[1]) != 0;
        d.m.err_link = (set & masks[2]) != 0;
        d.m.err_bad_ring = (set & masks[3]) != 0;
        uint32_t ndesc = (uint32_t)rng() & 0xFFFF;
        uint64_t naddr = rng();
        d.m.err_desc = ndesc;
        d.m.err_addr = naddr;
        uint32_t clr = 0;
        if (rng() % 4 == 0) {
            clr = (uint32_t)rng() & kEngErrs;
            d.wr(NCL_MMIO_ERR_STATUS, clr);
        } else {
            d.hw_tick();
        }
        uint32_t kept = status & ~clr;
        if (set && (kept & kEngErrs) == 0) {
            desc = ndesc;
            addr = naddr;
        }
        status = kept | set;
        if (k % 7 == 0 || set) {
            CHECK(d.rd(NCL_MMIO_ERR_STATUS) == status, "step %d: ERR_STATUS", k);
            CHECK(d.rd(NCL_MMIO_ERR_DESC) == desc, "step %d: ERR_DESC", k);
            CHECK(d.rd(NCL_MMIO_ERR_ADDR_LO) == (uint32_t)addr && d.rd(NCL_MMIO_ERR_ADDR_HI) == (uint32_t)(addr >> 32),
                  "step %d: ERR_ADDR", k);
        }
    }
}

// Notify counters: every source against a saturating model, cycle by cycle.
void test_notify(std::mt19937_64 &rng)
{
    Dut d;
    const uint32_t n = NCL_MMIO_NOTIFY_COUNT;
    const uint32_t amount_max = NCL_MMIO_NOTIFY_ADD_AMOUNT_MASK >> NCL_MMIO_NOTIFY_ADD_AMOUNT_SHIFT;
    std::vector<uint64_t> model(n, 0);
    bool sat_seen = false, hw_inc_seen = false;
    long ops = 0;

    // directed: up to the top with software adds, then a link record saturates
    const uint32_t top = 3;
    for (uint64_t v = 0; v + amount_max <= 0xFFFFFFFFull; v += amount_max)
        d.wr(NCL_MMIO_NOTIFY_ADD, notify_word(top, amount_max, true));
    uint64_t expect_top = (0xFFFFFFFFull / amount_max) * amount_max;
    CHECK(d.rd(NCL_MMIO_NOTIFY_CNT(top)) == (uint32_t)expect_top, "counter at 0x%08" PRIx64, expect_top);
    CHECK(d.rd(NCL_MMIO_ERR_STATUS) == 0, "no saturation yet");
    d.wr(NCL_MMIO_NOTIFY_ADD, notify_word(top, amount_max, true));
    CHECK(d.rd(NCL_MMIO_NOTIFY_CNT(top)) == 0xFFFFFFFFu, "saturated at the top");
    CHECK(d.rd(NCL_MMIO_ERR_STATUS) == NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK, "NOTIFY_SAT on the top");
    d.m.link_inc_valid = 1;
    d.m.link_inc_idx = top;
    d.m.eng_dec_valid = 1; // +1 and -1 in one cycle: net 0, no saturation
    d.m.eng_dec_idx = top;
    d.m.eng_dec_amount = 1;
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);
    CHECK(d.rd(NCL_MMIO_NOTIFY_CNT(top)) == 0xFFFFFFFFu && d.rd(NCL_MMIO_ERR_STATUS) == 0,
          "same-cycle +1 -1 at the top nets out");
    // out-of-range index: bus error, nothing changes
    bool err;
    d.access(true, NCL_MMIO_NOTIFY_ADD, notify_word(n, 1, true), &err);
    CHECK(err, "NOTIFY_ADD index %u accepted", n);
    d.access(true, NCL_MMIO_NOTIFY_SUB, notify_word(n + 1, 1, false), &err);
    CHECK(err, "NOTIFY_SUB index out of range accepted");
    CHECK(d.rd(NCL_MMIO_ERR_STATUS) == NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK, "REG_ACCESS for a bad index");
    for (uint32_t i = 0; i < n; i++)
        CHECK(d.rd(NCL_MMIO_NOTIFY_CNT(i)) == (i == top ? 0xFFFFFFFFu : 0u), "counter %u untouched", i);
    d.wr(NCL_MMIO_NOTIFY_SUB, notify_word(top, amount_max, false));
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);
    d.wr(NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_BITS);
    model[top] = 0xFFFFFFFFull - amount_max;

    // random: all five sources, often on the same counter in the same cycle
    for (int k = 0; k < 200000; k++) {
        uint32_t hot = (uint32_t)rng() % 4; // a few counters get most traffic: collisions
        auto pick = [&]() { return rng() % 2 ? hot : (uint32_t)rng() % n; };
        std::vector<int64_t> delta(n, 0);
        if (rng() % 2) {
            uint32_t i = pick();
            d.m.link_inc_valid = 1;
            d.m.link_inc_idx = i;
            delta[i] += 1;
            hw_inc_seen = true;
        }
        if (rng() % 3 == 0) {
            uint32_t i = pick();
            d.m.eng_inc_valid = 1;
            d.m.eng_inc_idx = i;
            delta[i] += 1;
            hw_inc_seen = true;
        }
        if (rng() % 3 == 0) {
            uint32_t i = pick();
            uint32_t a = rng() % 50 == 0 ? (uint32_t)rng() : (uint32_t)(rng() % 4);
            d.m.eng_dec_valid = 1;
            d.m.eng_dec_idx = i;
            d.m.eng_dec_amount = a;
            delta[i] -= a;
        }
        uint32_t op = (uint32_t)rng() % 4;
        uint32_t i = pick();
        uint32_t a = rng() % 20 == 0 ? (uint32_t)rng() & amount_max : (uint32_t)(rng() % 4);
        uint32_t got_read = 0;
        if (op == 0) {
            d.wr(NCL_MMIO_NOTIFY_ADD, notify_word(i, a, true));
            delta[i] += a;
        } else if (op == 1) {
            d.wr(NCL_MMIO_NOTIFY_SUB, notify_word(i, a, false));
            delta[i] -= a;
        } else if (op == 2) {
            got_read = d.rd(NCL_MMIO_NOTIFY_CNT(i)); // the value before this cycle's updates
            CHECK(got_read == (uint32_t)model[i], "step %d: read counter %u = %u, model %" PRIu64, k, i, got_read,
                  model[i]);
        } else {
            d.hw_tick();
        }
        for (uint32_t c = 0; c < n; c++) {
            int64_t v = (int64_t)model[c] + delta[c];
            if (v < 0 || v > 0xFFFFFFFFll) {
                sat_seen = true;
                v = v < 0 ? 0 : 0xFFFFFFFFll;
            }
            model[c] = (uint64_t)v;
            if (delta[c] != 0 || c == i) {
                ++ops;
                CHECK(d.m.notify_cnt[c] == (uint32_t)model[c], "step %d: counter %u = %u, model %" PRIu64, k, c,
                      (uint32_t)d.m.notify_cnt[c], model[c]);
            }
        }
    }
    uint32_t es = d.rd(NCL_MMIO_ERR_STATUS);
    CHECK(((es & NCL_MMIO_ERR_STATUS_NOTIFY_SAT_MASK) != 0) == sat_seen, "NOTIFY_SAT %s", sat_seen ? "expected" : "not expected");
    CHECK(((d.rd(NCL_MMIO_IRQ_STATUS) & kIrqNotify) != 0) == hw_inc_seen, "IRQ_STATUS.NOTIFY");
    for (uint32_t c = 0; c < n; c++)
        CHECK(d.rd(NCL_MMIO_NOTIFY_CNT(c)) == (uint32_t)model[c], "final counter %u", c);
    std::printf("  notify: 200000 random cycles, %ld counter comparisons, saturation %s\n", ops,
                sat_seen ? "hit" : "not hit");
}

// Unmapped and unaligned addresses: read 0, bus error, REG_ACCESS; they change nothing.
void test_bus_errors()
{
    Dut d;
    std::vector<bool> mapped(1u << NCL_MMIO_ADDR_BITS, false);
    for (const Reg &r : kRegs)
        for (uint32_t i = 0; i < r.count; i++)
            mapped[r.offset + i * r.stride] = true;
    d.wr(NCL_MMIO_SCRATCH, 0x5A5A1234u);
    int unmapped = 0;
    for (uint32_t a = 0; a < (1u << NCL_MMIO_ADDR_BITS); a++) {
        bool err;
        if (mapped[a])
            continue;
        uint32_t v = d.access(false, a, 0, &err);
        CHECK(err && v == 0, "read 0x%03x: err %d value 0x%08x", a, err, v);
        d.access(true, a, 0xFFFFFFFFu, &err);
        CHECK(err, "write 0x%03x: no bus error", a);
        if ((a & 3) == 0)
            ++unmapped;
    }
    CHECK(d.rd(NCL_MMIO_ERR_STATUS) == NCL_MMIO_ERR_STATUS_REG_ACCESS_MASK, "REG_ACCESS alone");
    CHECK(d.rd(NCL_MMIO_IRQ_STATUS) == kIrqError, "IRQ_STATUS.ERROR alone");
    d.wr(NCL_MMIO_ERR_STATUS, NCL_MMIO_ERR_STATUS_BITS);
    d.wr(NCL_MMIO_IRQ_STATUS, NCL_MMIO_IRQ_STATUS_BITS);
    d.wr(NCL_MMIO_SCRATCH, NCL_MMIO_SCRATCH_RESET);
    check_reset_values(d, "after the unmapped sweep");
    std::printf("  bus: %d unmapped words (and every unaligned byte address) give a bus error\n", unmapped);
}

// RING_HEAD follows the engine; STATUS shows busy and head == tail live.
void test_head_status()
{
    Dut d;
    d.wr(NCL_MMIO_RING_TAIL, 9);
    CHECK(d.rd(NCL_MMIO_STATUS) == 0, "not empty when tail != head");
    for (uint32_t h = 0; h < 10; h++) {
        d.m.head_we = 1;
        d.m.head_in = h;
        d.hw_tick();
        CHECK(d.rd(NCL_MMIO_RING_HEAD) == h && d.m.ring_head == h, "head %u", h);
        CHECK(NCL_MMIO_GET(NCL_MMIO_STATUS_EMPTY, d.rd(NCL_MMIO_STATUS)) == (h == 9), "EMPTY at head %u", h);
    }
    d.m.busy = 1;
    uint32_t s = d.rd(NCL_MMIO_STATUS);
    CHECK(NCL_MMIO_GET(NCL_MMIO_STATUS_BUSY, s) == 1, "BUSY follows busy");
}

// CTRL.SOFT_RESET: one soft_reset pulse; every register back to reset; engine inputs during the
// pulse ignored; the CTRL write itself gets its response.
void test_soft_reset(std::mt19937_64 &rng)
{
    Dut d;
    for (int k = 0; k < 20; k++) {
        d.wr(NCL_MMIO_SCRATCH, (uint32_t)rng());
        d.wr(NCL_MMIO_RING_BASE_LO, (uint32_t)rng());
        d.wr(NCL_MMIO_RING_BASE_HI, (uint32_t)rng());
        d.wr(NCL_MMIO_RING_SIZE, (uint32_t)rng());
        d.wr(NCL_MMIO_RING_TAIL, (uint32_t)rng());
        d.wr(NCL_MMIO_IRQ_MASK, NCL_MMIO_IRQ_MASK_BITS);
        d.wr(NCL_MMIO_CTRL, NCL_MMIO_CTRL_ENABLE_MASK | NCL_MMIO_CTRL_IRQ_EN_MASK);
        fire_all_irqs(d);
        d.m.err_addr_range = 1;
        d.m.err_desc = 77;
        d.m.err_addr = rng();
        d.hw_tick();
        d.wr(NCL_MMIO_NOTIFY_ADD, notify_word((uint32_t)rng() % NCL_MMIO_NOTIFY_COUNT, 1 + (uint32_t)rng() % 100, true));
        d.m.head_we = 1;
        d.m.head_in = 5;
        d.hw_tick();
        CHECK(d.m.irq && d.m.enable, "programmed before the soft reset");

        d.wr(NCL_MMIO_CTRL, NCL_MMIO_CTRL_SOFT_RESET_MASK | NCL_MMIO_CTRL_ENABLE_MASK);
        CHECK(d.m.soft_reset, "no soft_reset pulse");
        // the engine still reports during the pulse: all of it must be dropped
        d.m.ev_desc_done = 1;
        d.m.err_link = 1;
        d.m.link_inc_valid = 1;
        d.m.eng_inc_valid = 1;
        d.m.head_we = 1;
        d.m.head_in = 4;
        d.hw_tick();
        CHECK(!d.m.soft_reset, "soft_reset longer than one cycle");
        check_reset_values(d, "after SOFT_RESET");
    }
}

} // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    std::mt19937_64 rng(0x5253494Du);
    std::printf("rs_regfile: %zu registers in the map (%u notify counters)\n", sizeof kRegs / sizeof kRegs[0],
                NCL_MMIO_NOTIFY_COUNT);
    test_reset();
    test_rw(rng);
    test_ro(rng);
    test_w1c(rng);
    test_doorbell(rng);
    test_irq();
    test_err_capture(rng);
    test_notify(rng);
    test_bus_errors();
    test_head_status();
    test_soft_reset(rng);
    std::printf("rs_regfile: %ld checks, %ld failed\n", g_checks, g_failed);
    return g_failed == 0 ? 0 : 1;
}
