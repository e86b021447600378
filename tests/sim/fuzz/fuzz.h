/* fuzz.h — what the sim/ fuzz targets share: the entry, invariants that name themselves, located messages, inputs as files. */
#ifndef RS_FUZZ_H
#define RS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The one entry of every target: libFuzzer calls it, and so does replay.c in the suite. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant prints where and which (and `detail`, when not NULL) on stderr and aborts:
 * libFuzzer saves the input, the replay test fails naming the file it was running. */
#define FUZZ_CHECK(cond) ((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond, NULL))
#define FUZZ_CHECK_MSG(cond, detail) ((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond, (detail)))
_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *detail);

/* 1 when msg is one line "FILE:LINE: REST", LINE a number and REST not empty; FILE must be
 * `file` when it is not NULL (else any text before the first ":LINE: "). */
int fuzz_located(const char *msg, const char *file);

/* The input as the contents of a file, for the loaders that only read files: one temporary file
 * per process, rewritten for each input and unlinked at once (its path is /proc/self/fd/N), so
 * nothing is left behind however the process ends. Returns that path. */
const char *fuzz_as_file(const uint8_t *data, size_t size);

#endif
