/* rs_units.c — parses and prints values with units ("30 GB/s", "1.5 us", "4 KiB"), exactly. */
#include "rs_units.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A unit is 10^e10 * 2^e2 of its SI base. Keeping the two exponents apart makes parsing exact:
 * "1.5 us" becomes strtod("1.5e-6"), not 1.5 * 1e-6 (which can be one ulp off), and binary
 * prefixes and bits are powers of two applied with ldexp, which never rounds. */
typedef struct rs_unit {
    const char *text;
    rs_unit_kind kind;
    int e10, e2;
} rs_unit;

static const rs_unit rs_unit_table[] = {
    {"B/s", RS_UNIT_BANDWIDTH, 0, 0},    {"kB/s", RS_UNIT_BANDWIDTH, 3, 0},
    {"MB/s", RS_UNIT_BANDWIDTH, 6, 0},   {"GB/s", RS_UNIT_BANDWIDTH, 9, 0},
    {"TB/s", RS_UNIT_BANDWIDTH, 12, 0},  {"KiB/s", RS_UNIT_BANDWIDTH, 0, 10},
    {"MiB/s", RS_UNIT_BANDWIDTH, 0, 20}, {"GiB/s", RS_UNIT_BANDWIDTH, 0, 30},
    {"TiB/s", RS_UNIT_BANDWIDTH, 0, 40}, {"b/s", RS_UNIT_BANDWIDTH, 0, -3},
    {"kb/s", RS_UNIT_BANDWIDTH, 3, -3},  {"Mb/s", RS_UNIT_BANDWIDTH, 6, -3},
    {"Gb/s", RS_UNIT_BANDWIDTH, 9, -3},  {"Tb/s", RS_UNIT_BANDWIDTH, 12, -3},
    {"Kib/s", RS_UNIT_BANDWIDTH, 0, 7},  {"Mib/s", RS_UNIT_BANDWIDTH, 0, 17},
    {"Gib/s", RS_UNIT_BANDWIDTH, 0, 27}, {"Tib/s", RS_UNIT_BANDWIDTH, 0, 37},
    {"s", RS_UNIT_TIME, 0, 0},           {"ms", RS_UNIT_TIME, -3, 0},
    {"us", RS_UNIT_TIME, -6, 0},         {"\xc2\xb5s", RS_UNIT_TIME, -6, 0}, /* micro sign */
    {"\xce\xbcs", RS_UNIT_TIME, -6, 0},  /* greek mu */
    {"ns", RS_UNIT_TIME, -9, 0},         {"ps", RS_UNIT_TIME, -12, 0},
    {"B", RS_UNIT_SIZE, 0, 0},           {"kB", RS_UNIT_SIZE, 3, 0},
    {"MB", RS_UNIT_SIZE, 6, 0},          {"GB", RS_UNIT_SIZE, 9, 0},
    {"TB", RS_UNIT_SIZE, 12, 0},         {"KiB", RS_UNIT_SIZE, 0, 10},
    {"MiB", RS_UNIT_SIZE, 0, 20},        {"GiB", RS_UNIT_SIZE, 0, 30},
    {"TiB", RS_UNIT_SIZE, 0, 40},
};
#define RS_NUNITS (sizeof rs_unit_table / sizeof rs_unit_table[0])

static const char *const rs_kind_names[RS_UNIT_KIND_COUNT] = {"count", "bandwidth", "time", "size"};

static const char *const rs_allowed[RS_UNIT_KIND_COUNT] = {
    "a plain number, no unit",
    "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, and in bits b/s, kb/s, Mb/s, Gb/s, "
    "Tb/s, Kib/s, Mib/s, Gib/s, Tib/s",
    "s, ms, us (or \xc2\xb5s), ns, ps",
    "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB",
};

const char *rs_units_allowed(rs_unit_kind kind)
{
    return (unsigned)kind < RS_UNIT_KIND_COUNT ? rs_allowed[kind] : "?";
}

const char *rs_units_kind_name(rs_unit_kind kind)
{
    return (unsigned)kind < RS_UNIT_KIND_COUNT ? rs_kind_names[kind] : "?";
}

static int rs_isdigit(char c) { return c >= '0' && c <= '9'; }
static int rs_isspace(char c) { return c == ' ' || c == '\t'; }

static const rs_unit *rs_unit_find(const char *u, size_t len)
{
    for (size_t i = 0; i < RS_NUNITS; i++)
        if (strlen(rs_unit_table[i].text) == len && memcmp(rs_unit_table[i].text, u, len) == 0)
            return &rs_unit_table[i];
    return NULL;
}

static char rs_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* The one unit of `kind` that matches `u` ignoring case, or NULL (none, or several: "gb/s"
 * could be Gb/s or GB/s, and guessing between bits and bytes would be worse than asking). */
static const rs_unit *rs_unit_caseless(const char *u, size_t len, rs_unit_kind kind)
{
    const rs_unit *found = NULL;
    for (size_t i = 0; i < RS_NUNITS; i++) {
        const rs_unit *x = &rs_unit_table[i];
        if (x->kind != kind || strlen(x->text) != len)
            continue;
        size_t k = 0;
        while (k < len && rs_lower(x->text[k]) == rs_lower(u[k]))
            k++;
        if (k == len) {
            if (found)
                return NULL;
            found = x;
        }
    }
    return found;
}

static void rs_why(char *why, size_t whylen, const char *fmt, const char *a, const char *b, const char *c)
{
    if (why && whylen)
        snprintf(why, whylen, fmt, a, b, c);
}

/* Explains an unknown unit, with a suggestion when one is clear. */
static void rs_unknown_unit(const char *u, size_t len, rs_unit_kind kind, char *why, size_t whylen)
{
    char shown[40];
    snprintf(shown, sizeof shown, "%.*s", (int)(len < 32 ? len : 32), u);
    if (len >= 2 && u[0] == 'K' && (u[1] == 'B' || u[1] == 'b')) {
        char dec[48], bin[48];
        snprintf(dec, sizeof dec, "k%s", shown + 1);
        snprintf(bin, sizeof bin, "Ki%s", shown + 1);
        rs_why(why, whylen, "unit '%s' is ambiguous: write %s (x1000) or %s (x1024)", shown, dec, bin);
        return;
    }
    /* "Gbps" / "GBps": the networking habit */
    if (len > 2 && len < 16 && u[len - 2] == 'p' && u[len - 1] == 's') {
        char alt[24];
        snprintf(alt, sizeof alt, "%.*s/s", (int)(len - 2), u);
        const rs_unit *x = rs_unit_find(alt, strlen(alt));
        if (x && (x->kind == kind || kind == RS_UNIT_COUNT)) {
            rs_why(why, whylen, "unknown unit '%s', did you mean '%s'?%s", shown, x->text, "");
            return;
        }
    }
    const rs_unit *x = rs_unit_caseless(u, len, kind);
    if (x) {
        rs_why(why, whylen, "unknown unit '%s', did you mean '%s'?%s", shown, x->text, "");
        return;
    }
    rs_why(why, whylen, "unknown unit '%s'%s%s", shown, "", "");
}

rs_units_status rs_units_parse(const char *text, rs_unit_kind kind, double *si, char *why, size_t whylen)
{
    char shown[72];
    snprintf(shown, sizeof shown, "%.64s%s", text, strlen(text) > 64 ? "..." : "");
    const char *p = text;
    while (rs_isspace(*p))
        p++;
    const char *num = p;
    if (*p == '+' || *p == '-')
        p++;
    size_t ndigits = 0;
    while (rs_isdigit(*p)) {
        p++;
        ndigits++;
    }
    if (*p == '.') {
        p++;
        while (rs_isdigit(*p)) {
            p++;
            ndigits++;
        }
    }
    if (ndigits == 0) {
        rs_why(why, whylen, kind == RS_UNIT_COUNT ? "'%s' is not a number%s%s" : "'%s' is not a number with a unit%s%s",
               shown, "", "");
        return RS_UNITS_NOT_NUMBER;
    }
    const char *mant_end = p;
    long uexp = 0;
    if ((*p == 'e' || *p == 'E') &&
        (rs_isdigit(p[1]) || ((p[1] == '+' || p[1] == '-') && rs_isdigit(p[2])))) {
        p++;
        int neg = *p == '-';
        if (*p == '+' || *p == '-')
            p++;
        while (rs_isdigit(*p)) {
            if (uexp < 100000) /* far beyond any double: the exponent saturates, strtod says RANGE */
                uexp = uexp * 10 + (*p - '0');
            p++;
        }
        if (neg)
            uexp = -uexp;
    }
    while (rs_isspace(*p))
        p++;
    const char *unit = p;
    size_t ulen = strlen(unit);
    while (ulen > 0 && rs_isspace(unit[ulen - 1]))
        ulen--;

    int e10 = 0, e2 = 0;
    if (ulen == 0) {
        if (kind != RS_UNIT_COUNT) {
            rs_why(why, whylen, "'%s' has no %s unit%s", shown, rs_units_kind_name(kind), "");
            return RS_UNITS_MISSING;
        }
    } else {
        const rs_unit *u = rs_unit_find(unit, ulen);
        if (u == NULL) {
            /* "3 0 GB/s" or "1x GB/s": the "unit" starts with junk; say so rather than guess */
            rs_unknown_unit(unit, ulen, kind, why, whylen);
            return RS_UNITS_UNKNOWN;
        }
        if (u->kind != kind) {
            if (kind == RS_UNIT_COUNT)
                rs_why(why, whylen, "'%s' has a unit (%s), but this is a plain %s", shown, u->text, "number");
            else
                rs_why(why, whylen, "'%s' is a %s, not a %s", shown, rs_units_kind_name(u->kind),
                       rs_units_kind_name(kind));
            return RS_UNITS_WRONG_KIND;
        }
        e10 = u->e10;
        e2 = u->e2;
    }

    size_t mlen = (size_t)(mant_end - num);
    char *buf = malloc(mlen + 32);
    if (buf == NULL) {
        rs_why(why, whylen, "'%s': out of memory%s%s", shown, "", "");
        return RS_UNITS_RANGE;
    }
    snprintf(buf, mlen + 32, "%.*se%ld", (int)mlen, num, uexp + e10);
    errno = 0;
    double x = strtod(buf, NULL);
    int erange = errno == ERANGE;
    free(buf);
    if (!erange)
        x = ldexp(x, e2);
    if (erange || isinf(x) || (x != 0 && fabs(x) < 1e-300)) {
        rs_why(why, whylen, "'%s' is too %s for a number%s", shown, (isinf(x) || fabs(x) > 1) ? "large" : "small", "");
        return RS_UNITS_RANGE;
    }
    if (x == 0)
        x = 0; /* no "-0" */
    *si = x;
    return RS_UNITS_OK;
}

/* Shortest %e text of v that reads back as v: its digits (no point, no trailing zeros) and the
 * decimal exponent of the first digit. */
static void rs_shortest(double v, char *digits, size_t dlen, int *exp10, int *neg)
{
    char buf[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    const char *p = buf;
    *neg = *p == '-';
    if (*p == '-')
        p++;
    size_t n = 0;
    for (; *p && *p != 'e'; p++)
        if (rs_isdigit(*p) && n + 1 < dlen)
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *exp10 = *p == 'e' ? atoi(p + 1) : 0;
}

/* Writes digits * 10^(e - len + 1) as plain decimal text ("1.5", "30", "0.0625"), or with an
 * exponent when plain text would be silly. */
static void rs_place(int neg, const char *digits, int e, char *out, size_t len)
{
    int nd = (int)strlen(digits);
    if (e > 20 || e < -20) {
        snprintf(out, len, "%s%c%s%se%d", neg ? "-" : "", digits[0], nd > 1 ? "." : "", digits + 1, e);
        return;
    }
    char tmp[80];
    size_t k = 0;
    if (neg)
        tmp[k++] = '-';
    int intdigits = e + 1;
    if (intdigits <= 0) {
        tmp[k++] = '0';
        tmp[k++] = '.';
        for (int i = 0; i < -intdigits; i++)
            tmp[k++] = '0';
        for (int i = 0; i < nd; i++)
            tmp[k++] = digits[i];
    } else {
        for (int i = 0; i < intdigits; i++)
            tmp[k++] = i < nd ? digits[i] : '0';
        if (intdigits < nd) {
            tmp[k++] = '.';
            for (int i = intdigits; i < nd; i++)
                tmp[k++] = digits[i];
        }
    }
    tmp[k] = '\0';
    snprintf(out, len, "%s", tmp);
}

/* Plain-text number v * 10^-shift, exact in the sense that "<text>e<shift>" reads back as v. */
static void rs_number(double v, int shift, char *out, size_t len)
{
    char digits[32];
    int e = 0, neg = 0;
    rs_shortest(v, digits, sizeof digits, &e, &neg);
    rs_place(neg, digits, e - shift, out, len);
}

int rs_units_format(double si, rs_unit_kind kind, char *buf, size_t len)
{
    static const struct { const char *text; int e10; } bw[] = {
        {"TB/s", 12}, {"GB/s", 9}, {"MB/s", 6}, {"kB/s", 3}, {"B/s", 0}};
    static const struct { const char *text; int e10; } tm[] = {
        {"s", 0}, {"ms", -3}, {"us", -6}, {"ns", -9}, {"ps", -12}};
    char num[80];
    switch (kind) {
    case RS_UNIT_COUNT:
        rs_number(si, 0, num, sizeof num);
        return snprintf(buf, len, "%s", num);
    case RS_UNIT_BANDWIDTH:
    case RS_UNIT_TIME: {
        /* the largest unit in which the value is at least 1; zero in the base unit */
        size_t pick = 4;
        for (size_t i = 0; i < 5 && si != 0; i++) {
            int e10 = kind == RS_UNIT_TIME ? tm[i].e10 : bw[i].e10;
            if (fabs(si) >= pow(10.0, e10) * (1 - 1e-12)) {
                pick = i;
                break;
            }
        }
        if (si == 0)
            pick = kind == RS_UNIT_TIME ? 0 : 4;
        int e10 = kind == RS_UNIT_TIME ? tm[pick].e10 : bw[pick].e10;
        const char *u = kind == RS_UNIT_TIME ? tm[pick].text : bw[pick].text;
        rs_number(si, e10, num, sizeof num);
        return snprintf(buf, len, "%s %s", num, u);
    }
    case RS_UNIT_SIZE: {
        static const struct { const char *text; uint64_t mult; } sz[] = {
            {"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10},
            {"TB", 1000000000000ull}, {"GB", 1000000000ull}, {"MB", 1000000ull}, {"kB", 1000ull}};
        if (!(si >= 0 && si < 18446744073709551616.0) || si != floor(si)) {
            rs_number(si, 0, num, sizeof num);
            return snprintf(buf, len, "%s B", num);
        }
        uint64_t b = (uint64_t)si;
        const char *best = "B";
        uint64_t bestn = b;
        for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
            if (b >= sz[i].mult && b % sz[i].mult == 0 && b / sz[i].mult < bestn) {
                bestn = b / sz[i].mult;
                best = sz[i].text;
            }
        return snprintf(buf, len, "%llu %s", (unsigned long long)bestn, best);
    }
    default:
        return -1;
    }
}
