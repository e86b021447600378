/* rs_fusion.c — the text form of a gradient fusion strategy, planned by dp_fusion_plan (see rs_fusion.h). */
#include "rs_fusion.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_units.h"

static const char rs_fusion_forms[] =
    "default, sizes: P1, P2, ... (percentages summing to 100), indices: I1, I2, ... (ascending end "
    "indices), threshold: SIZE, single, none";

static int rs_fusion_fail(char *err, size_t len, const char *what)
{
    if (err && len)
        snprintf(err, len, "%s (allowed: %s)", what, rs_fusion_forms);
    return -1;
}

/* "a, b, c" into doubles (percentages) or indices. */
static int rs_fusion_list(const char *p, rs_fusion *f, int whole, char *err, size_t len)
{
    char what[200];
    uint32_t n = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' && n == 0)
            return rs_fusion_fail(err, len, whole ? "indices: no values" : "sizes: no values");
        if (n == RS_FUSION_MAX_VALUES) {
            snprintf(what, sizeof what, "%s: more than %d values", whole ? "indices" : "sizes", RS_FUSION_MAX_VALUES);
            return rs_fusion_fail(err, len, what);
        }
        char *end;
        if (whole) {
            unsigned long long v = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
            if (*p < '0' || *p > '9' || v > UINT32_MAX) {
                snprintf(what, sizeof what, "indices: '%.40s' is not an index (a whole number from 0)", p);
                return rs_fusion_fail(err, len, what);
            }
            f->index[n] = (uint32_t)v;
        } else {
            double v = strtod(p, &end);
            if (end == p || !isfinite(v)) {
                snprintf(what, sizeof what, "sizes: '%.40s' is not a percentage", p);
                return rs_fusion_fail(err, len, what);
            }
            while (*end == ' ')
                end++;
            if (*end == '%')
                end++;
            f->percent[n] = v;
        }
        n++;
        for (p = end; *p == ' ' || *p == '\t'; p++)
            ;
        if (*p == '\0')
            break;
        if (*p != ',') {
            snprintf(what, sizeof what, "unexpected '%.40s' (separate the values with commas)", p);
            return rs_fusion_fail(err, len, what);
        }
        p++;
    }
    f->dp.count = n;
    return 0;
}

int rs_fusion_parse(const char *text, rs_fusion *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->dp.percent = out->percent;
    out->dp.index = out->index;
    if (text == NULL || strcmp(text, "default") == 0) {
        out->dp.kind = DP_FUSION_DEFAULT;
        snprintf(out->text, sizeof out->text, "default (sizes: 96.54, 3.46)");
        return 0;
    }
    snprintf(out->text, sizeof out->text, "%s", text);
    if (strcmp(text, "single") == 0 || strcmp(text, "none") == 0) {
        /* a threshold no bucket reaches, or one every gradient exceeds */
        out->dp.kind = DP_FUSION_THRESHOLD;
        out->dp.threshold_bytes = text[0] == 's' ? UINT64_MAX : 1;
        return 0;
    }
    const char *colon = strchr(text, ':');
    size_t n = colon ? (size_t)(colon - text) : 0;
    char what[200];
    if (colon && n == 5 && strncmp(text, "sizes", 5) == 0) {
        out->dp.kind = DP_FUSION_SIZE;
        return rs_fusion_list(colon + 1, out, 0, err, errlen);
    }
    if (colon && n == 7 && strncmp(text, "indices", 7) == 0) {
        out->dp.kind = DP_FUSION_INDEX;
        return rs_fusion_list(colon + 1, out, 1, err, errlen);
    }
    if (colon && n == 9 && strncmp(text, "threshold", 9) == 0) {
        const char *v = colon + 1;
        while (*v == ' ')
            v++;
        double bytes;
        char why[160];
        if (rs_units_parse(v, RS_UNIT_SIZE, &bytes, why, sizeof why) != RS_UNITS_OK) {
            snprintf(what, sizeof what, "threshold: %s", why);
            return rs_fusion_fail(err, errlen, what);
        }
        if (bytes < 1 || bytes > 1099511627776.0) {
            snprintf(what, sizeof what, "threshold: '%.40s' is not between 1 B and 1 TiB", v);
            return rs_fusion_fail(err, errlen, what);
        }
        out->dp.kind = DP_FUSION_THRESHOLD;
        out->dp.threshold_bytes = (uint64_t)bytes;
        return 0;
    }
    snprintf(what, sizeof what, "'%.*s' is not a fusion strategy", (int)(colon ? n : strlen(text)) > 40 ? 40
             : (int)(colon ? n : strlen(text)), text);
    return rs_fusion_fail(err, errlen, what);
}

uint32_t rs_fusion_buckets(const rs_fusion *f, const uint64_t *bytes, uint32_t n, dp_bucket *out, char *err,
                           size_t errlen)
{
    uint32_t nb = 0;
    if (dp_fusion_plan(&f->dp, bytes, n, out, n, &nb, err, errlen) != DP_OK)
        return 0;
    return nb;
}
