/* fuzz_usersched.c — libFuzzer target for user schedule files: loaded as the scenario loader loads them, then proven by the checker in a scenario of their own. */
#include <stdio.h>
#include <string.h>

#include <ncl/ncl_names.h>

#include "fuzz.h"
#include "scenario/rs_scenario.h"
#include "scenario/rs_usersched.h"

#define SHOWN "fuzz_schedule.yaml"
#define NAME "fuzz_user.yaml"

/* What a loaded schedule promises: sched is the steps it owns, every step on a stream the
 * schedule has, and the engine's own structural checks pass. */
static void check_schedule(const rs_usersched *u)
{
    const ncl_user_schedule *s = &u->sched;
    char why[256] = "";
    FUZZ_CHECK(u->name != NULL && s->name == u->name && s->steps == u->steps);
    FUZZ_CHECK(s->nranks >= 1 && s->chunks >= 1 && s->queues >= 1 && s->step_count <= RS_USERSCHED_MAX_STEPS);
    for (uint32_t i = 0; i < s->step_count; i++)
        FUZZ_CHECK(s->steps[i].rank >= 0 && s->steps[i].rank < s->nranks && s->steps[i].queue < s->queues);
    FUZZ_CHECK_MSG(ncl_user_validate(s, NULL, why, sizeof why) == NCL_SUCCESS, why);
}

/* The schedule as workload.schedule of a ring of its rank count (the program's only way to run
 * one): past the parse, the scenario's checks and the checker's proof, in and out of place. */
static void check_in_scenario(const char *path, const ncl_user_schedule *s)
{
    char text[256], err[RS_SCENARIO_ERRLEN];
    snprintf(text, sizeof text, "topology: {kind: ring, ranks: %d}\nworkload: {collectives: %s, schedule: '%s'}\n",
             (int)s->nranks, ncl_coll_name((ncl_coll)s->coll), path);
    rs_scenario sc;
    if (rs_scenario_load_string(text, strlen(text), NAME, &sc, err, sizeof err) != 0) {
        FUZZ_CHECK_MSG(fuzz_located(err, NAME), err);
        return;
    }
    FUZZ_CHECK(sc.workload.usersched != NULL && sc.workload.usersched->sched.step_count == s->step_count);
    rs_scenario_free(&sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_as_file(data, size);
    rs_usersched *u = NULL;
    char err[RS_SCENARIO_ERRLEN];
    int rc = rs_usersched_load(path, SHOWN, &u, err, sizeof err);
    if (rc != 0) {
        FUZZ_CHECK(rc == -1 && u == NULL);
        FUZZ_CHECK_MSG(fuzz_located(err, SHOWN), err);
        return 0;
    }
    check_schedule(u);
    check_in_scenario(path, &u->sched);
    rs_usersched_free(u);
    return 0;
}
