/* ck_sym.c — the checker's symbolic memory: per buffer, segments of contributor sets that copies, reduces, conversions and divisions transform. */
#include "ck.h"

int ncl_ck_sv_push(ck *c, segvec *sv, const seg *s)
{
    if (sv->n && sv->v[sv->n - 1].hi == s->lo && seg_mergeable(&sv->v[sv->n - 1], s)) {
        sv->v[sv->n - 1].hi = s->hi;
        return 1;
    }
    if (!ncl_ck_grow(c, (void **)&sv->v, &sv->cap, sv->n, sv->n + 1, sizeof(seg)))
        return 0;
    sv->v[sv->n++] = *s;
    return 1;
}

/* Copies the pieces of [lo, hi) into out, renumbered to start at `base`. */
static int sv_gather(ck *c, const segvec *sv, uint64_t lo, uint64_t hi, uint64_t base, segvec *out)
{
    out->n = 0;
    for (size_t i = seg_find(sv, lo); i < sv->n && sv->v[i].lo < hi; i++) {
        seg s = sv->v[i];
        uint64_t a = max_u64(s.lo, lo), b = min_u64(s.hi, hi);
        if (s.defined)
            s.orig += a - s.lo;
        s.lo = a - lo + base;
        s.hi = b - lo + base;
        if (!ncl_ck_sv_push(c, out, &s))
            return 0;
    }
    return 1;
}

/* Merges continuing neighbours within v[a, b). */
static void sv_merge(segvec *sv, size_t a, size_t b)
{
    if (b <= a + 1)
        return;
    size_t w = a;
    for (size_t r = a + 1; r < b; r++) {
        if (seg_mergeable(&sv->v[w], &sv->v[r]))
            sv->v[w].hi = sv->v[r].hi;
        else
            sv->v[++w] = sv->v[r];
    }
    size_t removed = (b - a) - (w - a + 1);
    if (removed) {
        memmove(&sv->v[w + 1], &sv->v[b], (sv->n - b) * sizeof(seg));
        sv->n -= removed;
    }
}

/* Replaces [lo, hi) of sv (hi > lo, inside the buffer) with the pieces in `in`, which cover it. */
int ncl_ck_sv_replace(ck *c, segvec *sv, uint64_t lo, uint64_t hi, const segvec *in)
{
    size_t i = seg_find(sv, lo), j = seg_find(sv, hi - 1) + 1;
    seg left = sv->v[i], right = sv->v[j - 1];
    size_t has_l = left.lo < lo, has_r = right.hi > hi;
    if (has_l)
        left.hi = lo;
    if (has_r) {
        if (right.defined)
            right.orig += hi - right.lo;
        right.lo = hi;
    }
    size_t k = has_l + in->n + has_r, newn = sv->n - (j - i) + k;
    if (!ncl_ck_grow(c, (void **)&sv->v, &sv->cap, sv->n, newn, sizeof(seg)))
        return 0;
    memmove(&sv->v[i + k], &sv->v[j], (sv->n - j) * sizeof(seg));
    size_t w = i;
    if (has_l)
        sv->v[w++] = left;
    memcpy(&sv->v[w], in->v, in->n * sizeof(seg));
    w += in->n;
    if (has_r)
        sv->v[w++] = right;
    sv->n = newn;
    sv_merge(sv, i ? i - 1 : 0, min_u64(i + k + 1, newn));
    return 1;
}

static ncl_result undefined_read(ck *c, uint32_t t, const ncl_task *k, int rank, uint32_t buf, uint64_t e)
{
    return ncl_ck_task_fail(c, t, k, "reads rank %d %s element %llu, which nobody wrote", rank, ncl_buf_name(buf),
                     (unsigned long long)e);
}

/* dst[dlo, dlo+n) <- src[slo, slo+n) */
ncl_result ncl_ck_sym_copy(ck *c, uint32_t t, const ncl_task *k, int sr, uint32_t sb, uint64_t slo,
                    int dr, uint32_t db, uint64_t dlo, uint64_t n)
{
    segvec *a = &c->tmp[0];
    if (!sv_gather(c, &mem_of(c, sr, sb)->segs, slo, slo + n, dlo, a))
        return ncl_ck_oom(c);
    for (size_t i = 0; i < a->n; i++)
        if (!a->v[i].defined)
            return undefined_read(c, t, k, sr, sb, a->v[i].lo - dlo + slo);
    if (!ncl_ck_sv_replace(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, a))
        return ncl_ck_oom(c);
    return NCL_SUCCESS;
}

/* Wide: the source pieces (cells renumbered from dlo, narrow) as fp32 elements from dlo on:
 * each narrow cell becomes two wide cells. Fails on an fp32 source (it must be narrow). */
static ncl_result sv_widen(ck *c, uint32_t t, const ncl_task *k, segvec *a, int sr, uint32_t sb, uint64_t slo,
                           uint64_t dlo)
{
    for (size_t i = 0; i < a->n; i++) {
        seg *x = &a->v[i];
        if (!x->defined)
            return undefined_read(c, t, k, sr, sb, x->lo - dlo + slo);
        if (x->wide)
            return ncl_ck_task_fail(c, t, k, "reads rank %d %s element %llu as %s, but it holds an fp32 accumulator", sr,
                             ncl_buf_name(sb), (unsigned long long)(x->lo - dlo + slo),
                             ncl_dtype_name((ncl_dtype)k->dtype));
        x->lo = dlo + 2 * (x->lo - dlo);
        x->hi = dlo + 2 * (x->hi - dlo);
        x->orig *= 2;
        x->wide = 1;
    }
    return NCL_SUCCESS;
}

/* out <- d op s over [dlo, dlo+n), both already gathered there (s from rank sr's sb at slo, d
 * from rank dr's db at dlo); `wide` says which representation both sides must have. */
static ncl_result fold(ck *c, uint32_t t, const ncl_task *k, const segvec *s, const segvec *d, int sr, uint32_t sb,
                       uint64_t slo, int dr, uint32_t db, uint64_t dlo, uint64_t n, int wide, segvec *out)
{
    out->n = 0;
    size_t i = 0, j = 0;
    for (uint64_t x = dlo; x < dlo + n;) {
        const seg *ps = &s->v[i], *pd = &d->v[j];
        uint64_t e = min_u64(ps->hi, pd->hi);
        if (!pd->defined)
            return undefined_read(c, t, k, dr, db, x);
        if (!ps->defined)
            return undefined_read(c, t, k, sr, sb, x - dlo + slo);
        if (pd->wide != wide)
            return ncl_ck_task_fail(c, t, k, wide ? "accumulates into rank %d %s element %llu, which is not an fp32 "
                                             "accumulator (LOCAL_WIDEN it first)"
                                           : "reduces into rank %d %s element %llu, which holds an fp32 "
                                             "accumulator (use LOCAL_REDUCE_WIDE)",
                             dr, ncl_buf_name(db), (unsigned long long)x);
        if (ps->wide != wide)
            return ncl_ck_task_fail(c, t, k, "reduces rank %d %s element %llu, which holds an fp32 accumulator", sr,
                             ncl_buf_name(sb), (unsigned long long)(x - dlo + slo));
        uint64_t so = ps->orig + (x - ps->lo), dorig = pd->orig + (x - pd->lo);
        if (so != dorig)
            return ncl_ck_task_fail(c, t, k,
                             "reduces input element %llu (rank %d %s element %llu) into input element "
                             "%llu (rank %d %s element %llu): mismatched elements",
                             (unsigned long long)so, sr, ncl_buf_name(sb), (unsigned long long)(x - dlo + slo),
                             (unsigned long long)dorig, dr, ncl_buf_name(db), (unsigned long long)x);
        if (ps->divided || pd->divided)
            return ncl_ck_task_fail(c, t, k, "reduces into rank %d %s element %llu a value already divided (avg)",
                             dr, ncl_buf_name(db), (unsigned long long)x);
        int twice = set_common(ps->set, pd->set);
        if (twice >= 0)
            return ncl_ck_task_fail(c, t, k, "rank %d's contribution counted twice at rank %d %s element %llu", twice,
                             dr, ncl_buf_name(db), (unsigned long long)x);
        seg r;
        memset(&r, 0, sizeof r);
        r.lo = x;
        r.hi = e;
        r.orig = dorig;
        r.defined = 1;
        r.wide = (uint8_t)wide;
        for (int w = 0; w < SET_WORDS; w++)
            r.set[w] = ps->set[w] | pd->set[w];
        if (!ncl_ck_sv_push(c, out, &r))
            return ncl_ck_oom(c);
        x = e;
        if (ps->hi == e)
            i++;
        if (pd->hi == e)
            j++;
    }
    return NCL_SUCCESS;
}

/* dst[dlo, dlo+n) <- dst op src, both already gathered to [dlo, dlo+n) (s, d). */
static ncl_result sym_fold(ck *c, uint32_t t, const ncl_task *k, const segvec *s, const segvec *d, int sr,
                           uint32_t sb, uint64_t slo, int dr, uint32_t db, uint64_t dlo, uint64_t n, int wide)
{
    segvec *out = &c->tmp[2];
    ncl_result rc = fold(c, t, k, s, d, sr, sb, slo, dr, db, dlo, n, wide, out);
    if (rc != NCL_SUCCESS)
        return rc;
    if (!ncl_ck_sv_replace(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, out))
        return ncl_ck_oom(c);
    return NCL_SUCCESS;
}

/* The two-source kinds: rank dr's dst[dlo, dlo+n) <- (dst op) (src op src2), both sources on
 * rank r (src at slo of sb, src2 at s2lo of s2b). */
ncl_result ncl_ck_sym_reduce_pair(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo,
                                  uint32_t s2b, uint64_t s2lo, int dr, uint32_t db, uint64_t dlo, uint64_t n,
                                  int accumulate)
{
    segvec *s = &c->tmp[0], *s2 = &c->tmp[1], *pair = &c->tmp[2], *sum = &c->tmp[3];
    ncl_result rc;
    if (!sv_gather(c, &mem_of(c, r, sb)->segs, slo, slo + n, s2lo, s) ||
        !sv_gather(c, &mem_of(c, r, s2b)->segs, s2lo, s2lo + n, s2lo, s2))
        return ncl_ck_oom(c);
    if ((rc = fold(c, t, k, s, s2, r, sb, slo, r, s2b, s2lo, n, 0, pair)) != NCL_SUCCESS)
        return rc;
    if (!sv_gather(c, pair, s2lo, s2lo + n, dlo, sum)) /* renumbered to the destination */
        return ncl_ck_oom(c);
    if (!accumulate) {
        if (!ncl_ck_sv_replace(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, sum))
            return ncl_ck_oom(c);
        return NCL_SUCCESS;
    }
    if (!sv_gather(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, dlo, s2))
        return ncl_ck_oom(c);
    return sym_fold(c, t, k, sum, s2, r, sb, slo, dr, db, dlo, n, 0);
}

/* dst[dlo, dlo+n) <- dst op src[slo, slo+n) */
ncl_result ncl_ck_sym_reduce(ck *c, uint32_t t, const ncl_task *k, int sr, uint32_t sb, uint64_t slo,
                      int dr, uint32_t db, uint64_t dlo, uint64_t n)
{
    segvec *s = &c->tmp[0], *d = &c->tmp[1];
    if (!sv_gather(c, &mem_of(c, sr, sb)->segs, slo, slo + n, dlo, s) ||
        !sv_gather(c, &mem_of(c, dr, db)->segs, dlo, dlo + n, dlo, d))
        return ncl_ck_oom(c);
    return sym_fold(c, t, k, s, d, sr, sb, slo, dr, db, dlo, n, 0);
}

/* LOCAL_WIDEN (init) or LOCAL_REDUCE_WIDE: fp32 cells [dlo, dlo+2n) <- (dst op) src[slo, slo+n) */
ncl_result ncl_ck_sym_widen(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo, uint32_t db,
                     uint64_t dlo, uint64_t n, int init)
{
    segvec *s = &c->tmp[0], *d = &c->tmp[1];
    ncl_result rc;
    if (!sv_gather(c, &mem_of(c, r, sb)->segs, slo, slo + n, dlo, s))
        return ncl_ck_oom(c);
    if ((rc = sv_widen(c, t, k, s, r, sb, slo, dlo)) != NCL_SUCCESS)
        return rc;
    if (init)
        return ncl_ck_sv_replace(c, &mem_of(c, r, db)->segs, dlo, dlo + 2 * n, s) ? NCL_SUCCESS : ncl_ck_oom(c);
    if (!sv_gather(c, &mem_of(c, r, db)->segs, dlo, dlo + 2 * n, dlo, d))
        return ncl_ck_oom(c);
    return sym_fold(c, t, k, s, d, r, sb, slo, r, db, dlo, 2 * n, 1);
}

/* LOCAL_NARROW: dst[dlo, dlo+n) <- fp32 cells [slo, slo+2n), divided once when div. Every
 * fp32 element must be whole: pieces start and end on element boundaries with even orig. */
ncl_result ncl_ck_sym_narrow(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t sb, uint64_t slo, uint32_t db,
                      uint64_t dlo, uint64_t n, int div)
{
    segvec *a = &c->tmp[0];
    if (!sv_gather(c, &mem_of(c, r, sb)->segs, slo, slo + 2 * n, 0, a))
        return ncl_ck_oom(c);
    for (size_t i = 0; i < a->n; i++) {
        seg *x = &a->v[i];
        if (!x->defined)
            return undefined_read(c, t, k, r, sb, slo + x->lo);
        if (!x->wide)
            return ncl_ck_task_fail(c, t, k, "rounds rank %d %s element %llu, which is not an fp32 accumulator", r,
                             ncl_buf_name(sb), (unsigned long long)(slo + x->lo));
        if (x->lo % 2 || x->hi % 2 || x->orig % 2)
            return ncl_ck_task_fail(c, t, k, "rounds rank %d %s [%llu,+2): an fp32 element whose halves differ (half "
                             "of it was overwritten or it is not 4-byte aligned)", r, ncl_buf_name(sb),
                             (unsigned long long)(slo + (x->lo % 2 ? x->lo - 1 : x->hi - 1)));
        if (div && x->divided)
            return ncl_ck_task_fail(c, t, k, "rank %d %s element %llu divided twice (avg)", r, ncl_buf_name(sb),
                             (unsigned long long)(slo + x->lo));
        x->lo = dlo + x->lo / 2;
        x->hi = dlo + x->hi / 2;
        x->orig /= 2;
        x->wide = 0;
        x->divided |= (uint8_t)div;
    }
    return ncl_ck_sv_replace(c, &mem_of(c, r, db)->segs, dlo, dlo + n, a) ? NCL_SUCCESS : ncl_ck_oom(c);
}

ncl_result ncl_ck_sym_div(ck *c, uint32_t t, const ncl_task *k, int r, uint32_t b, uint64_t lo, uint64_t n)
{
    segvec *a = &c->tmp[0];
    if (!sv_gather(c, &mem_of(c, r, b)->segs, lo, lo + n, lo, a))
        return ncl_ck_oom(c);
    for (size_t i = 0; i < a->n; i++) {
        if (!a->v[i].defined)
            return undefined_read(c, t, k, r, b, a->v[i].lo);
        if (a->v[i].divided)
            return ncl_ck_task_fail(c, t, k, "rank %d %s element %llu divided twice (avg)", r, ncl_buf_name(b),
                             (unsigned long long)a->v[i].lo);
        if (a->v[i].wide)
            return ncl_ck_task_fail(c, t, k, "divides rank %d %s element %llu, an fp32 accumulator, as %s (LOCAL_NARROW "
                             "divides it)", r, ncl_buf_name(b), (unsigned long long)a->v[i].lo,
                             ncl_dtype_name((ncl_dtype)k->dtype));
        a->v[i].divided = 1;
    }
    if (!ncl_ck_sv_replace(c, &mem_of(c, r, b)->segs, lo, lo + n, a))
        return ncl_ck_oom(c);
    return NCL_SUCCESS;
}
