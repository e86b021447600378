/* rs_scenario.c — loads a scenario: the file read by the YAML walker, every default applied, every key read and checked against the scenario's tables; frees it. */
#define _POSIX_C_SOURCE 200809L
#include "rs_scenario.h"

#include <stdlib.h>
#include <string.h>

#include "rs_fusion.h"
#include "rs_scenario_keys.h"
#include "rs_usersched.h"
#include "rs_yaml.h"

int rs_scenario_load_string(const char *text, size_t len, const char *name, rs_scenario *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    rs_yaml y;
    rs_yaml_init(&y, name ? name : "<string>", err, errlen);
    if (text == NULL)
        len = 0;
    if (len > RS_SCENARIO_MAX_FILE)
        return rs_yaml_fail(&y, 0, "(file)", "larger than %u bytes (allowed: at most %u)", RS_SCENARIO_MAX_FILE,
                            RS_SCENARIO_MAX_FILE);
    if (rs_yaml_load(&y, text, len) != 0)
        return -1;
    rs_scenario_check_state state = {NULL, 0};
    rs_schema_ctx c = {&y, &rs_scenario_schema, out, 0, &state};
    yaml_node_t *root = rs_yaml_root(&y);
    int rc = 0;
    if (root == NULL)
        rc = rs_yaml_fail(&y, 1, "(document)", "the file is empty (allowed: a mapping with at least topology: "
                          "{kind: ...})");
    if (rc == 0) {
        /* defaults first, named as such in a message: they are parsed by the same code as file
         * values, so a bad default fails every load (and the tests) instead of slipping through */
        rs_yaml dy;
        rs_yaml_init(&dy, "<defaults>", err, errlen);
        rs_schema_ctx dc = c;
        dc.y = &dy;
        rc = rs_schema_defaults(&dc, rs_scenario_schema.top, out);
        y.failed |= dy.failed;
    }
    if (rc == 0)
        rc = rs_schema_parse(&c, root, rs_scenario_schema.top, out);
    if (rc == 0 && (out->path = strdup(y.file)) == NULL)
        rc = rs_yaml_fail(&y, 1, "(file)", "out of memory");
    free(state.chans);
    rs_yaml_free(&y);
    if (rc != 0) {
        rs_scenario_free(out);
        return -1;
    }
    return 0;
}

int rs_scenario_load(const char *path, rs_scenario *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    rs_yaml y;
    rs_yaml_init(&y, path ? path : "<null>", err, errlen);
    if (path == NULL)
        return rs_yaml_fail(&y, 0, "(file)", "no file name (allowed: a path to a YAML file)");
    char why[200];
    size_t len = 0;
    char *buf = rs_yaml_read_file(path, RS_SCENARIO_MAX_FILE, &len, why, sizeof why);
    if (buf == NULL)
        return rs_yaml_fail(&y, 0, "(file)", "%s (allowed: a readable YAML file)", why);
    int rc = rs_scenario_load_string(buf, len, path, out, err, errlen);
    free(buf);
    return rc;
}

int rs_scenario_set_training(rs_scenario *sc, const char *fusion, int micro_batch, char *err, size_t errlen)
{
    rs_training *t = &sc->workload.training;
    if (t->model == NULL) {
        snprintf(err, errlen, "the scenario is not a training step (allowed: with workload.training.model)");
        return -1;
    }
    if (micro_batch < 0 || micro_batch > 1000000) {
        snprintf(err, errlen, "micro-batch %d (allowed: 1 to 1000000)", micro_batch);
        return -1;
    }
    if (fusion) {
        /* checked as the loader checks workload.training.fusion: parsed, then planned */
        rs_fusion f;
        char why[RS_SCENARIO_ERRLEN];
        if (rs_fusion_parse(fusion, &f, why, sizeof why) != 0 ||
            rs_scenario_fusion_check(&f, t, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s", why);
            return -1;
        }
        if (t->dp && f.dp.kind == DP_FUSION_INDEX) {
            snprintf(err, errlen, "indices with parallel: each stage buckets its own gradients (allowed: threshold: "
                     "SIZE, sizes: P1, P2, ..., single, none, default)");
            return -1;
        }
        char *copy = strdup(fusion);
        if (copy == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        free(t->fusion);
        t->fusion = copy;
    }
    if (micro_batch > 0)
        t->micro_batch = micro_batch;
    return 0;
}

void rs_scenario_free(rs_scenario *sc)
{
    if (sc == NULL)
        return;
    free(sc->path);
    free(sc->name);
    free(sc->description);
    free(sc->topo.links);
    free(sc->topo.overrides);
    free(sc->faults);
    free(sc->workload.schedule);
    rs_training *t = &sc->workload.training;
    for (size_t i = 0; i < t->tensors_count; i++)
        free(t->tensors[i].name);
    free(t->tensors);
    free(t->model);
    free(t->model_name);
    free(t->model_source);
    free(t->fusion);
    free(sc->device.inline_reduce);
    free(sc->device.rtl_clock_text);
    free(sc->device.rtl_ranks_text);
    rs_usersched_free(sc->workload.usersched);
    memset(sc, 0, sizeof *sc);
}
