/* rs_junit.h — JUnit XML for CI systems: one testcase per result row, link or file, the failure text in it. */
#ifndef RS_JUNIT_H
#define RS_JUNIT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rs_junit rs_junit;

/** A suite named `suite` (e.g. "ringsim run"); NULL when out of memory. */
rs_junit *rs_junit_new(const char *suite);
/** Adds a testcase; failure NULL: it passed, else its message. time_s < 0: no time. 0 or -1 (out
 *  of memory: the file will say so). */
int rs_junit_add(rs_junit *j, const char *classname, const char *name, double time_s, const char *failure);
/** Tries path for writing before a run whose results the file will hold, so a bad path fails at
 *  once: 1 when it can be written (or path is NULL), else 0 after "WHO: --junit: cannot write" on err. */
int rs_junit_try(const char *path, const char *who, FILE *err);
/** Writes the XML to path and frees j. 0, or RS_EXIT_USAGE's 2 after a message on err. */
int rs_junit_write(rs_junit *j, const char *path, FILE *err);
void rs_junit_free(rs_junit *j);

#ifdef __cplusplus
}
#endif
#endif
