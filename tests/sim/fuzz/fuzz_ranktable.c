/* fuzz_ranktable.c — libFuzzer target for rank tables: loaded as rs_ranktable_load loads a file's text; a table that keeps its promises, or one located message. */
#include <string.h>

#include "fuzz.h"
#include "zmq/rs_ranktable.h"

#define NAME "fuzz_ranktable.yaml"

/* rs_ranktable_load's promise: every rank 0..N-1 exactly once, usable endpoints (data and
 * control, the control one derived when not given), none used twice. */
static void check_table(const rs_ranktable *t)
{
    char why[RS_RT_ERRLEN];
    FUZZ_CHECK(t->nranks >= 1 && t->nranks <= RS_RT_MAX_RANKS && t->e != NULL && t->job[0] != '\0');
    for (int r = 0; r < t->nranks; r++) {
        const rs_rank_entry *e = &t->e[r];
        FUZZ_CHECK(e->rank == r && e->line >= 1);
        FUZZ_CHECK_MSG(rs_ranktable_check_endpoint(e->endpoint, why, sizeof why) == 0, why);
        FUZZ_CHECK_MSG(rs_ranktable_check_endpoint(e->control, why, sizeof why) == 0, why);
        FUZZ_CHECK_MSG(strcmp(e->endpoint, e->control) != 0, e->endpoint);
        for (int s = 0; s < r; s++) {
            const rs_rank_entry *o = &t->e[s];
            FUZZ_CHECK_MSG(strcmp(e->endpoint, o->endpoint) && strcmp(e->endpoint, o->control) &&
                               strcmp(e->control, o->endpoint) && strcmp(e->control, o->control),
                           e->endpoint);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_ranktable t;
    char err[RS_RT_ERRLEN];
    if (rs_ranktable_load_string((const char *)data, size, NAME, &t, err, sizeof err) != 0) {
        FUZZ_CHECK(t.nranks == 0 && t.e == NULL);
        FUZZ_CHECK_MSG(fuzz_located(err, NAME), err);
        return 0;
    }
    check_table(&t);
    rs_ranktable_free(&t);
    return 0;
}
