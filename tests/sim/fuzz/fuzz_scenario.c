/* fuzz_scenario.c — libFuzzer target for the scenario loader: a scenario or one located message, and every scenario dumps to text that loads to the same dump. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "scenario/rs_scenario.h"

/* The input's name in messages. It lives in the library's folder (RS_FUZZ_LIBRARY, set by the
 * build), so the model tables and schedules that scenarios/ files name resolve as they do for
 * `ringsim validate`. */
#define NAME RS_FUZZ_LIBRARY "/fuzz_input.yaml"

static char *dump(const rs_scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(rs_scenario_dump(sc, f) == 0);
    FUZZ_CHECK(fclose(f) == 0);
    return text;
}

/* rs_scenario_dump's promise: the text loads back to the same scenario, i.e. to the same dump. */
static void check_dump(const rs_scenario *sc)
{
    char *first = dump(sc), err[RS_SCENARIO_ERRLEN];
    rs_scenario again;
    FUZZ_CHECK_MSG(rs_scenario_load_string(first, strlen(first), NAME, &again, err, sizeof err) == 0, err);
    char *second = dump(&again);
    FUZZ_CHECK_MSG(strcmp(first, second) == 0, first);
    free(first);
    free(second);
    rs_scenario_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load_string((const char *)data, size, NAME, &sc, err, sizeof err) != 0) {
        /* FILE is the scenario's name, or the path of a model table it names */
        FUZZ_CHECK(sc.path == NULL && sc.name == NULL);
        FUZZ_CHECK_MSG(fuzz_located(err, NULL), err);
        return 0;
    }
    FUZZ_CHECK(sc.path != NULL && strcmp(sc.path, NAME) == 0 && sc.name != NULL);
    FUZZ_CHECK(sc.topo.nranks >= 2 && sc.topo.nranks <= RS_SCENARIO_MAX_RANKS);
    check_dump(&sc);
    rs_scenario_free(&sc);
    return 0;
}
