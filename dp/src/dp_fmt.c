/* dp_fmt.c — a small printf subset for dp's messages (the library does no stdio). */
#include "dp_internal.h"

#include <string.h>

typedef struct out {
    char *buf;
    size_t cap, len;
} out;

static void put(out *o, char c)
{
    if (o->cap && o->len + 1 < o->cap)
        o->buf[o->len] = c;
    o->len++;
}

static void put_str(out *o, const char *s)
{
    for (; s && *s; s++)
        put(o, *s);
}

static void put_u(out *o, unsigned long long v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put(o, d[--n]);
}

/* Fixed point, 4 decimals, rounded half away from zero, trailing zeros (and the point) dropped.
 * Values beyond 1e15 or NaN print as "huge"/"nan": messages only show percentages and sums. */
static void put_f(out *o, double v)
{
    if (v != v) {
        put_str(o, "nan");
        return;
    }
    if (v < 0) {
        put(o, '-');
        v = -v;
    }
    if (v > 1e15) {
        put_str(o, "huge");
        return;
    }
    unsigned long long scaled = (unsigned long long)(v * 10000.0 + 0.5);
    put_u(o, scaled / 10000);
    unsigned frac = (unsigned)(scaled % 10000);
    if (frac) {
        char d[4];
        for (int i = 3; i >= 0; i--) {
            d[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        int last = 3;
        while (d[last] == '0')
            last--;
        put(o, '.');
        for (int i = 0; i <= last; i++)
            put(o, d[i]);
    }
}

size_t dp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
    out o = {buf, cap, 0};
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        if (*p == 's') {
            const char *s = va_arg(ap, const char *);
            put_str(&o, s ? s : "(null)");
        } else if (*p == 'd') {
            int v = va_arg(ap, int);
            if (v < 0) {
                put(&o, '-');
                put_u(&o, (unsigned long long)(-(long long)v));
            } else {
                put_u(&o, (unsigned long long)v);
            }
        } else if (*p == 'u') {
            put_u(&o, va_arg(ap, unsigned));
        } else if (p[0] == 'l' && p[1] == 'l' && p[2] == 'u') {
            put_u(&o, va_arg(ap, unsigned long long));
            p += 2;
        } else if (*p == 'f') {
            put_f(&o, va_arg(ap, double));
        } else if (*p == '%') {
            put(&o, '%');
        } else {
            put(&o, '%'); /* unknown: shown as is, so a bad format is visible, not fatal */
            if (*p)
                put(&o, *p);
            else
                break;
        }
    }
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t dp_fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = dp_vfmt(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

dp_result dp_fail(dp_ctx *ctx, dp_result r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dp_vfmt(ctx->msg, sizeof ctx->msg, fmt, ap);
    va_end(ap);
    return r;
}
