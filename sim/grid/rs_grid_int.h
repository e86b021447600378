/* rs_grid_int.h — what the grid wing's files share: a point's files and their outcome. */
#ifndef RS_GRID_INT_H
#define RS_GRID_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "rs_grid.h"

/** A file's whole text, NUL-terminated, or NULL (missing, unreadable). */
char *rs_grid_slurp(const char *path, size_t *len);

/** A point's run JSON when it is complete: it parses and has its rows and a result. NULL when
 *  missing or cut short (a run killed while writing it). *ok: its result is OK. */
cJSON *rs_grid_read_run(const char *path, int *ok);

#endif
