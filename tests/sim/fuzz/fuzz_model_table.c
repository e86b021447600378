/* fuzz_model_table.c — libFuzzer target for training model tables: the input is the table a scenario names, read by the scenario loader as `ringsim` reads it. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "scenario/rs_scenario.h"

#define NAME "fuzz_training.yaml"

/* What a loaded table promises: a name, a source, tensors of at least one element each, and
 * backward times that add up to more than 0. */
static void check_training(const rs_training *t)
{
    double backward = 0;
    FUZZ_CHECK(t->model_name != NULL && t->model_source != NULL && t->tensors_count >= 1);
    for (size_t i = 0; i < t->tensors_count; i++) {
        FUZZ_CHECK(t->tensors[i].name != NULL && t->tensors[i].params >= 1);
        backward += t->tensors[i].backward;
    }
    FUZZ_CHECK(backward > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *table = fuzz_as_file(data, size);
    char text[256], err[RS_SCENARIO_ERRLEN];
    snprintf(text, sizeof text, "topology: {kind: ring, ranks: 4}\npayload: none\nworkload:\n  training: {model: '%s'}\n", table);
    rs_scenario sc;
    if (rs_scenario_load_string(text, strlen(text), NAME, &sc, err, sizeof err) != 0) {
        /* the table's own messages name the table, the checks after it the scenario */
        FUZZ_CHECK_MSG(fuzz_located(err, table) || fuzz_located(err, NAME), err);
        return 0;
    }
    check_training(&sc.workload.training);
    rs_scenario_free(&sc);
    return 0;
}
