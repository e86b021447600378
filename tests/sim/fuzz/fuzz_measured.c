/* fuzz_measured.c — libFuzzer target for the readers of measured tables: every input reads into rows whose numbers obey the checks, or gives exactly one located message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "measured/rs_measured.h"

#define NAME "fuzz_measured.txt"

typedef int (*reader_fn)(const char *, size_t, const char *, const rs_meas_opts *, rs_meas_table *, char *, size_t);

/* What a table read promises: rows that pass rs_meas_row_check again, each on a line of the
 * input, of a known collective and placement; links between two different ranks. The printers
 * must take whatever was read. */
static void check_table(const rs_meas_table *t)
{
    char why[RS_MEAS_ERRLEN];
    FUZZ_CHECK(t->name != NULL && strcmp(t->name, NAME) == 0);
    FUZZ_CHECK(t->nrows > 0 || t->nlinks > 0);
    FUZZ_CHECK(t->nlines >= 1);
    for (size_t i = 0; i < t->nrows; i++) {
        const rs_meas_row *r = &t->rows[i];
        FUZZ_CHECK_MSG(rs_meas_row_check(r, why, sizeof why) == 0, why);
        FUZZ_CHECK(r->line >= 1 && r->line <= t->nlines);
        FUZZ_CHECK(r->coll > RS_MEAS_COLL_NONE && r->coll < RS_MEAS_COLL_COUNT);
        FUZZ_CHECK(r->place == RS_MEAS_PLACE_NONE || r->place == RS_MEAS_PLACE_OUT || r->place == RS_MEAS_PLACE_IN);
        FUZZ_CHECK(r->time_us > 0 && isfinite(r->time_us));
        FUZZ_CHECK(r->ranks >= 0 && r->wrong >= -1);
        FUZZ_CHECK(memchr(r->dtype, '\0', sizeof r->dtype) && memchr(r->op, '\0', sizeof r->op));
    }
    for (size_t i = 0; i < t->nlinks; i++) {
        FUZZ_CHECK(t->links[i].src != t->links[i].dst);
        FUZZ_CHECK(t->links[i].line >= 1 && t->links[i].line <= t->nlines);
    }
    static FILE *sink;
    if (sink == NULL)
        sink = fopen("/dev/null", "w");
    FUZZ_CHECK(sink != NULL);
    rs_meas_print(t, sink);
    const rs_meas_table *one[1] = {t};
    char *json = rs_meas_json(one, 1);
    FUZZ_CHECK(json != NULL);
    free(json);
}

static void run(reader_fn fn, const uint8_t *data, size_t size, const rs_meas_opts *o)
{
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN];
    if (fn((const char *)data, size, NAME, o, &t, err, sizeof err) != 0) {
        FUZZ_CHECK(t.rows == NULL && t.nrows == 0 && t.links == NULL && t.devices == NULL && t.name == NULL);
        FUZZ_CHECK_MSG(fuzz_located(err, NAME), err);
        return;
    }
    check_table(&t);
    rs_meas_free(&t);
    FUZZ_CHECK(t.rows == NULL && t.name == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const reader_fn direct[] = {rs_meas_read_nccl_text, rs_meas_read_hccl, rs_meas_read_osu, rs_meas_read_json,
                                       rs_meas_read_csv};
    /* what a user may say: nothing, or a collective and a rank count that may contradict the file */
    static const rs_meas_opts hints = {"allgather", 4};
    run(rs_meas_read_buffer, data, size, NULL);
    run(rs_meas_read_buffer, data, size, &hints);
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++)
        run(direct[i], data, size, NULL);
    return 0;
}
