// test_rtl_reduce.cpp — verilated rs_reduce vs the C reference vs the engine's kernel, over random, biased and edge-case operands with stalls.
//
// Every result leaving the RTL is compared bit for bit with rs_ref_reduce() (y, unsupported, and
// the tag that proves order); every reference result is compared with the firmware's
// ncl_reduce_kernel() (host float addition for fp32 sum: equal except NaN payloads) and, for fp32
// sum, with the host's float addition directly. A protocol checker watches the handshakes.
// Reproduce a failure with RS_SEED=<seed printed>. Exit status 0 = all equal.
#include "Vrs_reduce.h"
#include "verilated.h"

#include "ncl/ncl_dtype.h"
#include "rs_ref_reduce.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The descriptor carries the engine's codes unchanged: prove the reference uses them.
static_assert((int)RS_REF_DT_INT32 == (int)NCL_INT32 && (int)RS_REF_DT_UINT32 == (int)NCL_UINT32 &&
                  (int)RS_REF_DT_FP32 == (int)NCL_FLOAT32,
              "reduce dtype codes must be ncl_dtype's");
static_assert((int)RS_REF_OP_SUM == (int)NCL_SUM && (int)RS_REF_OP_MAX == (int)NCL_MAX &&
                  (int)RS_REF_OP_MIN == (int)NCL_MIN,
              "reduce op codes must be ncl_op's");
static_assert((1 << RS_REF_DTYPE_BITS) > NCL_DTYPE_COUNT - 1 && (1 << RS_REF_OP_BITS) > NCL_OP_COUNT - 1,
              "port fields must hold every engine code");

namespace {

constexpr int TAG_BITS = 16;  // rs_reduce's default TAG_W
constexpr uint32_t TAG_MASK = (1u << TAG_BITS) - 1u;

struct Rng {
    uint64_t s;
    uint64_t next()
    {
        // splitmix64: any seed (0 included) gives a good stream
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint32_t u32() { return (uint32_t)next(); }
    uint32_t below(uint32_t n) { return (uint32_t)(((next() >> 32) * n) >> 32); }
};

struct Vec {
    uint8_t dtype, op;
    uint32_t a, b;
};

struct Combo {
    uint8_t dtype, op;
    const char *name;
};

const Combo COMBOS[] = {
    {RS_REF_DT_INT32, RS_REF_OP_SUM, "int32 sum"},   {RS_REF_DT_INT32, RS_REF_OP_MAX, "int32 max"},
    {RS_REF_DT_INT32, RS_REF_OP_MIN, "int32 min"},   {RS_REF_DT_UINT32, RS_REF_OP_SUM, "uint32 sum"},
    {RS_REF_DT_UINT32, RS_REF_OP_MAX, "uint32 max"}, {RS_REF_DT_UINT32, RS_REF_OP_MIN, "uint32 min"},
    {RS_REF_DT_FP32, RS_REF_OP_SUM, "fp32 sum"},     {RS_REF_DT_FP32, RS_REF_OP_MAX, "fp32 max"},
    {RS_REF_DT_FP32, RS_REF_OP_MIN, "fp32 min"},
};
constexpr int NCOMBO = sizeof(COMBOS) / sizeof(COMBOS[0]);

int combo_index(int dtype, int op)
{
    for (int i = 0; i < NCOMBO; i++)
        if (COMBOS[i].dtype == dtype && COMBOS[i].op == op)
            return i;
    return -1;
}

// Special and boundary operands, used as a full cross product for every (dtype, op) and mixed
// into the random stream.
const uint32_t EDGES[] = {
    0x00000000u, 0x80000000u,                           // +0, -0 (and INT_MIN)
    0x7f800000u, 0xff800000u,                           // +-Inf
    0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0xffffffffu, // quiet NaNs with payloads (and UINT_MAX)
    0x7f800001u, 0xff812345u, 0x7fbfffffu,              // signalling NaNs
    0x00000001u, 0x80000001u, 0x00000002u,              // min subnormal
    0x007fffffu, 0x807fffffu, 0x00400000u,              // max subnormal, half of min normal
    0x00800000u, 0x80800000u, 0x00800001u,              // min normal
    0x7f7fffffu, 0xff7fffffu, 0x7f7ffffeu,              // max finite
    0x73000000u, 0xf3000000u, 0x72ffffffu, 0x73000001u, // half an ulp of max finite: overflow ties
    0x3f800000u, 0xbf800000u, 0x3f800001u, 0x3f7fffffu, // 1 and neighbours
    0x33800000u, 0xb3800000u, 0x33800001u, 0x34000000u, // 2^-24 (tie with 1), 2^-23
    0x3f000000u, 0x40000000u, 0xc0000000u, 0x4b800000u, 0x4b800001u, 0x4effffffu,
    0x7fffffffu, 0x00000003u, 0x7ffffffeu, 0xfffffffeu, // INT_MAX and neighbours
    0x55555555u, 0xaaaaaaaau, 0x0000ffffu, 0xffff0000u,
};
constexpr int NEDGE = sizeof(EDGES) / sizeof(EDGES[0]);

uint32_t f32_make(uint32_t sign, uint32_t exp, uint32_t frac)
{
    return (sign << 31) | ((exp & 0xffu) << 23) | (frac & 0x7fffffu);
}

uint32_t clamp_exp(int e)
{
    return (uint32_t)(e < 0 ? 0 : e > 254 ? 254 : e);
}

// Biased fp32 operand pairs: each generator aims at one corner of the adder (and of max/min).
void gen_fp32(Rng &r, uint32_t &a, uint32_t &b)
{
    a = r.u32();
    b = r.u32();
    uint32_t ea = (a >> 23) & 0xffu;
    switch (r.below(10)) {
    case 0: // random bits (NaNs and Infs come up ~1 in 128)
        break;
    case 1: { // exponents within 3: carries, one-bit cancellation, ties from 1..3 shifted-out bits
        ea = 1 + r.below(254);
        a = f32_make(a >> 31, ea, a);
        b = f32_make(b >> 31, clamp_exp((int)ea + (int)r.below(7) - 3), b);
        break;
    }
    case 2: { // massive cancellation: b = -(a +- a few ulps), or exactly -a or a
        ea = r.below(255);
        a = f32_make(a >> 31, ea, a);
        uint32_t m = (a ^ 0x80000000u) + (uint32_t)((int)r.below(33) - 16);
        b = r.below(8) == 0 ? a : r.below(8) == 0 ? (a ^ 0x80000000u) : m;
        if (((b >> 23) & 0xffu) == 0xffu)
            b = a ^ 0x80000000u;
        break;
    }
    case 3: { // exact ties: b is half an ulp of a (times an odd small factor at 2^-k), +-
        ea = 26 + r.below(229);
        a = f32_make(a >> 31, ea, a);
        uint32_t k = 24 + r.below(3); // 24: exactly a half-ulp power, 25/26: below it
        uint32_t frac = r.below(2) ? 0u : (r.u32() & (0x7fffffu >> r.below(23)));
        b = f32_make(b >> 31, ea - k, frac);
        break;
    }
    case 4: { // alignment distances around the RTL's sticky cut (27) and the reference's (39)
        ea = 60 + r.below(195);
        a = f32_make(a >> 31, ea, a);
        b = f32_make(b >> 31, ea - (20 + r.below(26)), b);
        break;
    }
    case 5: // near overflow: same sign, top binades
        a = f32_make(a >> 31, 250 + r.below(5), a);
        b = f32_make(r.below(4) ? a >> 31 : b >> 31, 250 + r.below(5), b);
        break;
    case 6: // subnormals and the smallest normals (gradual underflow both ways)
        a = f32_make(a >> 31, r.below(3), a >> r.below(23));
        b = f32_make(b >> 31, r.below(3), b >> r.below(23));
        break;
    case 7: // one operand special or boundary
        if (r.below(2))
            a = EDGES[r.below(NEDGE)];
        else
            b = EDGES[r.below(NEDGE)];
        break;
    case 8: // a subnormal against a normal (alignment of a hidden-bit-less significand)
        a = f32_make(a >> 31, r.below(2), a);
        b = f32_make(b >> 31, 1 + r.below(30), b);
        break;
    default: { // a result just at the max-finite / Inf rounding boundary
        a = f32_make(a >> 31, 254, 0x7fffffu - r.below(4));
        b = f32_make(a >> 31, 230 + r.below(3), r.below(2) ? 0u : r.u32() >> r.below(32));
        break;
    }
    }
    if (r.below(2)) {
        uint32_t t = a;
        a = b;
        b = t;
    }
}

void gen_int(Rng &r, uint32_t &a, uint32_t &b)
{
    a = r.u32();
    b = r.u32();
    switch (r.below(6)) {
    case 0:
        break;
    case 1: // equal, or one apart: the comparator's boundary
        b = a + (uint32_t)((int)r.below(3) - 1);
        break;
    case 2: // around INT_MIN/INT_MAX/0/UINT_MAX
        a = (uint32_t)(0x80000000u * r.below(2)) + (uint32_t)((int)r.below(9) - 4);
        b = (uint32_t)(0x80000000u * r.below(2)) + (uint32_t)((int)r.below(9) - 4);
        break;
    case 3: // opposite signs, both large: signed vs unsigned order differ
        a |= 0x80000000u;
        b &= 0x7fffffffu;
        break;
    case 4: // one operand from the edge table
        a = EDGES[r.below(NEDGE)];
        break;
    default: // small magnitudes (carries through the top when negative)
        a = (uint32_t)((int32_t)(a % 2001u) - 1000);
        b = (uint32_t)((int32_t)(b % 2001u) - 1000);
        break;
    }
}

float as_f(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint32_t as_u(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

bool f32_nan(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// What fp32 sum cases the stream reached (coverage, printed): exact halfway cases need the
// exact sum, which TwoSum in double gives whenever it is representable there.
struct FpCover {
    uint64_t nan = 0, inf = 0, zero = 0, subnormal = 0, ties = 0, inexact = 0;
};

void cover_fp32_sum(FpCover &c, uint32_t a, uint32_t b, uint32_t y)
{
    uint32_t m = y & 0x7fffffffu;
    if (m > 0x7f800000u) {
        c.nan++;
        return;
    }
    if (m == 0x7f800000u) {
        c.inf++;
        return;
    }
    if (m == 0)
        c.zero++;
    else if (m < 0x00800000u)
        c.subnormal++;
    double da = as_f(a), db = as_f(b);
    volatile double s = da + db; // volatile: keep the TwoSum steps as written
    double bb = s - da;
    double err = (da - (s - bb)) + (db - bb);
    if (err != 0.0 || std::isinf(s))
        return; // exact sum not a double: not a tie (a float tie is exact in double)
    float f = as_f(y);
    if ((double)f == s)
        return;
    c.inexact++;
    float other = std::nextafter(f, (double)s > (double)f ? INFINITY : -INFINITY);
    if (std::isfinite(other) && ((double)f + (double)other) / 2.0 == s)
        c.ties++;
}

struct Stats {
    uint64_t per_combo[NCOMBO] = {};
    uint64_t unsupported = 0, cycles = 0, stall_cycles = 0, bubbles = 0, engine_checked = 0;
    FpCover fp;
};

[[noreturn]] void fail(uint64_t seed, const char *what, const Vec &v, uint32_t want, uint32_t got, int want_uns,
                       int got_uns)
{
    std::printf("FAIL (RS_SEED=%llu): %s: dtype %u op %u a 0x%08x b 0x%08x: expected 0x%08x%s, got 0x%08x%s\n",
                (unsigned long long)seed, what, v.dtype, v.op, v.a, v.b, want, want_uns ? " (unsupported)" : "", got,
                got_uns ? " (unsupported)" : "");
    std::exit(1);
}

// The reference against the engine's own kernel and, for fp32 sum, the host FPU.
void check_ref_vs_engine(uint64_t seed, const Vec &v, uint32_t ref, Stats &st)
{
    if (combo_index(v.dtype, v.op) < 0)
        return;
    uint32_t dst = v.a, src = v.b;
    ncl_reduce_kernel(&dst, &src, 1, (ncl_dtype)v.dtype, (ncl_op)v.op);
    bool nan_ok = v.dtype == RS_REF_DT_FP32 && f32_nan(ref);
    if (nan_ok ? !f32_nan(dst) : dst != ref)
        fail(seed, "reference vs ncl_reduce_kernel", v, dst, ref, 0, 0);
    if (v.dtype == RS_REF_DT_FP32 && v.op == RS_REF_OP_SUM) {
        uint32_t host = as_u(as_f(v.a) + as_f(v.b));
        if (nan_ok ? !f32_nan(host) : host != ref)
            fail(seed, "reference vs host float addition", v, host, ref, 0, 0);
    }
    st.engine_checked++;
}

struct Bench {
    VerilatedContext ctx;
    Vrs_reduce m{&ctx};
    uint64_t seed;
    Rng rng;
    Stats st;

    explicit Bench(uint64_t s) : seed(s), rng{s ^ 0x5eedull} {}

    void step()
    {
        m.clk = 1;
        m.eval();
        m.clk = 0;
        m.eval();
        st.cycles++;
    }

    void reset()
    {
        m.rst_n = 0;
        m.in_valid = 1; // must be ignored during reset
        m.out_ready = 0;
        for (int i = 0; i < 3; i++)
            step();
        m.rst_n = 1;
        m.in_valid = 0;
        m.clk = 0;
        m.eval();
        if (m.out_valid) {
            std::printf("FAIL: out_valid is 1 right after reset\n");
            std::exit(1);
        }
    }

    // Pushes vs[] through the RTL. in_pct/out_pct: chance in percent that in_valid/out_ready is
    // 1 in a cycle. Returns the cycles taken. Every output is checked in order against want[].
    uint64_t run(const std::vector<Vec> &vs, const std::vector<uint32_t> &want, const std::vector<int> &want_uns,
                 unsigned in_pct, unsigned out_pct)
    {
        size_t n = vs.size(), next_in = 0, next_out = 0;
        uint64_t start = st.cycles;
        bool held = false; // last cycle ended with out_valid && !out_ready: outputs must hold
        uint32_t held_y = 0, held_tag = 0;
        int held_uns = 0;
        while (next_out < n) {
            bool iv = next_in < n && (in_pct >= 100 || rng.below(100) < in_pct);
            bool ordy = out_pct >= 100 || rng.below(100) < out_pct;
            m.in_valid = iv;
            if (iv) {
                const Vec &v = vs[next_in];
                m.dtype = v.dtype;
                m.op = v.op;
                m.a = v.a;
                m.b = v.b;
                m.in_tag = (uint32_t)next_in & TAG_MASK;
            } else {
                // Garbage on the data wires while in_valid is 0 must not matter.
                m.dtype = rng.below(16);
                m.op = rng.below(8);
                m.a = rng.u32();
                m.b = rng.u32();
                m.in_tag = rng.u32() & TAG_MASK;
                if (next_in < n)
                    st.bubbles++;
            }
            m.out_ready = ordy;
            m.eval(); // settle in_ready (combinational from out_ready) before the edge

            if (held && (!m.out_valid || m.y != held_y || m.unsupported != held_uns || m.out_tag != held_tag)) {
                std::printf("FAIL (RS_SEED=%llu): output changed while stalled (result %zu)\n",
                            (unsigned long long)seed, next_out);
                std::exit(1);
            }
            if (ordy && !m.in_ready) {
                std::printf("FAIL (RS_SEED=%llu): in_ready is 0 while out_ready is 1\n", (unsigned long long)seed);
                std::exit(1);
            }
            if (m.out_valid && ordy) {
                if (next_out >= next_in) {
                    std::printf("FAIL (RS_SEED=%llu): result without operands\n", (unsigned long long)seed);
                    std::exit(1);
                }
                const Vec &v = vs[next_out];
                if (m.out_tag != (next_out & TAG_MASK))
                    fail(seed, "out_tag (order)", v, (uint32_t)next_out & TAG_MASK, m.out_tag, 0, 0);
                if (m.y != want[next_out] || (int)m.unsupported != want_uns[next_out])
                    fail(seed, "RTL vs reference", v, want[next_out], m.y, want_uns[next_out], m.unsupported);
                int ci = combo_index(v.dtype, v.op);
                if (ci >= 0)
                    st.per_combo[ci]++;
                else
                    st.unsupported++;
                if (ci == combo_index(RS_REF_DT_FP32, RS_REF_OP_SUM))
                    cover_fp32_sum(st.fp, v.a, v.b, m.y);
                next_out++;
            }
            held = m.out_valid && !ordy;
            held_y = m.y;
            held_uns = m.unsupported;
            held_tag = m.out_tag;
            if (held)
                st.stall_cycles++;
            if (iv && m.in_ready)
                next_in++;
            step();
        }
        return st.cycles - start;
    }

    // Reference results (and the engine cross-check) for vs, then the RTL run.
    uint64_t check(const std::vector<Vec> &vs, unsigned in_pct, unsigned out_pct)
    {
        std::vector<uint32_t> want(vs.size());
        std::vector<int> want_uns(vs.size());
        for (size_t i = 0; i < vs.size(); i++) {
            want[i] = rs_ref_reduce(vs[i].dtype, vs[i].op, vs[i].a, vs[i].b, &want_uns[i]);
            check_ref_vs_engine(seed, vs[i], want[i], st);
        }
        return run(vs, want, want_uns, in_pct, out_pct);
    }
};

} // namespace

int main(int argc, char **argv)
{
    uint64_t seed = 20240517;
    if (const char *s = std::getenv("RS_SEED"))
        seed = std::strtoull(s, nullptr, 0);
    uint64_t per_combo = 1u << 20; // >= 1 million random vectors per (dtype, op)
    if (argc > 1)
        per_combo = std::strtoull(argv[1], nullptr, 0);
    Verilated::commandArgs(argc, argv);

    Bench tb(seed);
    tb.reset();
    std::printf("rs_reduce vs rs_ref_reduce vs ncl_reduce_kernel, seed %llu\n", (unsigned long long)seed);

    // 1. Edge-case table: every pair, every (dtype, op), back to back at full rate. Starting from
    //    an empty pipeline with both sides always ready it takes n + latency cycles: one result
    //    per cycle, RS_REF_REDUCE_LATENCY deep.
    std::vector<Vec> vs;
    for (int c = 0; c < NCOMBO; c++)
        for (int i = 0; i < NEDGE; i++)
            for (int j = 0; j < NEDGE; j++)
                vs.push_back({COMBOS[c].dtype, COMBOS[c].op, EDGES[i], EDGES[j]});
    uint64_t cyc = tb.check(vs, 100, 100);
    if (cyc != vs.size() + RS_REF_REDUCE_LATENCY) {
        std::printf("FAIL: %zu back-to-back operations took %llu cycles, expected %zu (full throughput, latency %d)\n",
                    vs.size(), (unsigned long long)cyc, vs.size() + RS_REF_REDUCE_LATENCY, RS_REF_REDUCE_LATENCY);
        return 1;
    }
    std::printf("edge table: %zu pairs (%d operands squared x %d dtype/op), %llu cycles at full rate\n", vs.size(),
                NEDGE, NCOMBO, (unsigned long long)cyc);

    // 2. Every other dtype/op code the ports can carry: unsupported, y = 0, same pipeline.
    vs.clear();
    for (int dt = 0; dt < (1 << RS_REF_DTYPE_BITS); dt++)
        for (int op = 0; op < (1 << RS_REF_OP_BITS); op++)
            for (int k = 0; k < 4; k++)
                vs.push_back({(uint8_t)dt, (uint8_t)op, tb.rng.u32(), EDGES[tb.rng.below(NEDGE)]});
    tb.check(vs, 70, 70);

    // 3. Random stream: per batch an equal share of every (dtype, op), shuffled so the operation
    //    changes from one cycle to the next; in_valid/out_ready rates vary by batch (full rate,
    //    light and heavy stalls).
    const uint64_t batch_per_combo = 8192;
    const unsigned rates[][2] = {{100, 100}, {90, 75}, {60, 40}, {100, 50}, {50, 100}};
    uint64_t done = 0;
    for (uint64_t bi = 0; done < per_combo; bi++) {
        uint64_t k = per_combo - done < batch_per_combo ? per_combo - done : batch_per_combo;
        vs.clear();
        for (int c = 0; c < NCOMBO; c++)
            for (uint64_t i = 0; i < k; i++) {
                Vec v{COMBOS[c].dtype, COMBOS[c].op, 0, 0};
                if (v.dtype == RS_REF_DT_FP32)
                    gen_fp32(tb.rng, v.a, v.b);
                else
                    gen_int(tb.rng, v.a, v.b);
                vs.push_back(v);
            }
        for (size_t i = vs.size() - 1; i > 0; i--) {
            size_t j = tb.rng.below((uint32_t)i + 1);
            Vec t = vs[i];
            vs[i] = vs[j];
            vs[j] = t;
        }
        const unsigned *rate = rates[bi % (sizeof(rates) / sizeof(rates[0]))];
        tb.check(vs, rate[0], rate[1]);
        done += k;
        if (bi == 7) {
            // A reset with operations in flight: they are dropped, and the next batch runs.
            tb.m.in_valid = 1;
            tb.m.out_ready = 0;
            tb.step();
            tb.step();
            tb.reset();
        }
    }

    const Stats &st = tb.st;
    uint64_t total = 0;
    for (int c = 0; c < NCOMBO; c++) {
        std::printf("  %-10s %10llu results equal\n", COMBOS[c].name, (unsigned long long)st.per_combo[c]);
        total += st.per_combo[c];
    }
    std::printf("  %-10s %10llu results equal (y = 0, unsupported = 1)\n", "other", (unsigned long long)st.unsupported);
    std::printf("fp32 sum reached: %llu ties (exact halfway, rounded to even), %llu other inexact (exactly checkable), "
                "%llu subnormal, %llu zero, %llu Inf, %llu NaN results\n",
                (unsigned long long)st.fp.ties, (unsigned long long)st.fp.inexact - st.fp.ties,
                (unsigned long long)st.fp.subnormal, (unsigned long long)st.fp.zero, (unsigned long long)st.fp.inf,
                (unsigned long long)st.fp.nan);
    std::printf("reference == ncl_reduce_kernel (fp32 sum also == host float add; NaN payloads aside): %llu\n",
                (unsigned long long)st.engine_checked);
    std::printf("%llu cycles, %llu with the output stalled, %llu input bubbles; all %llu supported results equal\n",
                (unsigned long long)st.cycles, (unsigned long long)st.stall_cycles, (unsigned long long)st.bubbles,
                (unsigned long long)total);

    // Coverage floors: a generator change that stops reaching a corner fails here, not silently.
    const uint64_t floor = per_combo / 1000;
    if (st.fp.ties < floor || st.fp.subnormal < floor || st.fp.zero < floor || st.fp.inf < floor ||
        st.fp.nan < floor) {
        std::printf("FAIL: fp32 sum corner coverage below %llu\n", (unsigned long long)floor);
        return 1;
    }
    for (int c = 0; c < NCOMBO; c++)
        if (st.per_combo[c] < per_combo) {
            std::printf("FAIL: %s ran %llu vectors, fewer than %llu\n", COMBOS[c].name,
                        (unsigned long long)st.per_combo[c], (unsigned long long)per_combo);
            return 1;
        }
    std::printf("PASS\n");
    return 0;
}
