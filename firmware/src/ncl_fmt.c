/* ncl_fmt.c — a tiny printf-like formatter for messages, since firmware has no stdio. */
#include "ncl_fmt.h"

#include <stdint.h>

typedef struct out {
    char *buf;
    size_t len, pos;
} out;

static void put(out *o, char c)
{
    if (o->pos + 1 < o->len)
        o->buf[o->pos++] = c;
}

static void put_str(out *o, const char *s)
{
    if (!s)
        s = "(null)";
    while (*s)
        put(o, *s++);
}

static void put_uint(out *o, unsigned long long v, unsigned base)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (n)
        put(o, digits[--n]);
}

static void put_int(out *o, long long v)
{
    if (v < 0) {
        put(o, '-');
        put_uint(o, 0ull - (unsigned long long)v, 10);
    } else {
        put_uint(o, (unsigned long long)v, 10);
    }
}

size_t ncl_vfmt(char *buf, size_t len, const char *fmt, va_list ap)
{
    out o = {buf, len, 0};
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        int longlong = 0;
        if (p[0] == 'l' && p[1] == 'l') {
            longlong = 1;
            p += 2;
        }
        switch (*p) {
        case 's': put_str(&o, va_arg(ap, const char *)); break;
        case 'd': put_int(&o, longlong ? va_arg(ap, long long) : va_arg(ap, int)); break;
        case 'u': put_uint(&o, longlong ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 10); break;
        case 'x': put_uint(&o, longlong ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 16); break;
        case '%': put(&o, '%'); break;
        case '\0': p--; break; /* a lone trailing '%' */
        default: put(&o, '%'); put(&o, *p); break;
        }
    }
    if (len)
        buf[o.pos] = '\0';
    return o.pos;
}

size_t ncl_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = ncl_vfmt(buf, len, fmt, ap);
    va_end(ap);
    return n;
}
