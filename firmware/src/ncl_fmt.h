/* ncl_fmt.h — a tiny printf-like formatter for messages, since firmware has no stdio. */
#ifndef NCL_FMT_H
#define NCL_FMT_H

#include <stdarg.h>
#include <stddef.h>

/** Formats into buf (always NUL-terminated when len > 0, truncated if needed). Supports
 *  %s %d %u %x %lld %llu %llx %% — no widths, no floats. Returns the length written. */
size_t ncl_fmt(char *buf, size_t len, const char *fmt, ...);
size_t ncl_vfmt(char *buf, size_t len, const char *fmt, va_list ap);

#endif
