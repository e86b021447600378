/* string.h — the four memory functions the engine calls, for freestanding builds (no C library):
 * GCC needs them too, for struct copies and clears, even with -ffreestanding. ncl_libc.c has them. */
#ifndef NCL_PORT_STRING_H
#define NCL_PORT_STRING_H

#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

#endif
