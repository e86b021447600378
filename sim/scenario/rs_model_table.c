/* rs_model_table.c — a training model table file (workload.training.model): its keys, its check, and reading it as its own file in messages. */
#include "rs_scenario_keys.h"

#include <stdlib.h>

#include "rs_scenario.h"

#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The model table: every gradient has elements, and the backward pass takes time somewhere. */
static int rs_check_model_table(rs_schema_ctx *c, yaml_node_t *node, void *base)
{
    const rs_training *t = base;
    (void)node;
    double backward = 0;
    for (size_t i = 0; i < t->tensors_count; i++) {
        if (t->tensors[i].params == 0) {
            size_t old = rs_yaml_push(c->y, "tensors");
            rs_yaml_push_index(c->y, i);
            int rc = rs_yaml_fail(c->y, t->tensors[i].line, "params", "0 (allowed: at least 1 element)");
            rs_yaml_pop(c->y, old);
            return rc;
        }
        backward += t->tensors[i].backward;
    }
    if (t->tensors_count == 0 || backward <= 0)
        return rs_yaml_fail(c->y, rs_yaml_line(node), "tensors",
                            "%s (allowed: at least one tensor, and backward times that add "
                            "up to more than 0)",
                            t->tensors_count ? "no backward time" : "empty");
    return 0;
}

static const rs_key rs_keys_tensor[] = {
    {"name", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_tensor, name), 0, 0, 0, RS_F_REQUIRED, 0, 0, NULL,
     NULL, NULL, NULL, "the gradient tensor, e.g. layer1.0.conv1.weight"},
    {"params", RS_T_U64, RS_UNIT_COUNT, RS_S_U64, offsetof(rs_tensor, params), 0, 0, 0, RS_F_REQUIRED, 0, 0, NULL,
     NULL, NULL, NULL, "elements (at least 1)"},
    {"forward", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_tensor, forward), 0, 0, 1.0, 0, 0, 0, "0 s", NULL,
     NULL, NULL, "forward compute per sample of the layer this tensor belongs to (0 when another tensor of the "
     "layer carries it)"},
    {"backward", RS_T_UNIT, RS_UNIT_TIME, RS_S_DBL, offsetof(rs_tensor, backward), 0, 0, 1.0, 0, 0, 0, "0 s",
     NULL, NULL, NULL, "backward compute per sample; this tensor's gradient is ready when it ends"},
};
const rs_map rs_scenario_map_tensor = {
    "tensors[]", "One gradient tensor of a model table, in registration (forward) order: "
    "back-propagation produces them from the last to the first.",
    rs_keys_tensor, RS_COUNT(rs_keys_tensor), 1, sizeof(rs_tensor), offsetof(rs_tensor, line), NULL, NULL};

static const rs_key rs_keys_model_table[] = {
    {"name", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, model_name), 0, 0, 0, RS_F_REQUIRED, 0, 0,
     NULL, NULL, NULL, NULL, "the model, as reports show it"},
    {"source", RS_T_STR, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, model_source), 0, 0, 0, RS_F_REQUIRED, 0,
     0, NULL, NULL, NULL, NULL, "where the parameter counts come from and the compute speed the times assume"},
    {"hidden", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_training, hidden), 0, 1, 10000000, 0, 0, 0, NULL,
     "none", NULL, NULL, "a transformer's activation width per token: what tensor-parallel allreduces and "
     "pipeline sends carry is sequence x hidden per sample (needed by workload.training.parallel)"},
    {"sequence", RS_T_INT, RS_UNIT_COUNT, RS_S_U32, offsetof(rs_training, sequence), 0, 1, 10000000, 0, 0, 0, NULL,
     "none", NULL, NULL, "tokens per sample (with hidden)"},
    {"tensors", RS_T_SEQ, RS_UNIT_COUNT, RS_S_NONE, offsetof(rs_training, tensors),
     offsetof(rs_training, tensors_count), 0, 0, RS_F_REQUIRED, 0, 0, NULL, NULL, NULL, &rs_scenario_map_tensor,
     "the gradient tensors"},
};
const rs_map rs_scenario_map_model_table = {
    "(model table)", "A model table file (workload.training.model): a training model's gradient tensors "
    "with their compute times per sample.",
    rs_keys_model_table, RS_COUNT(rs_keys_model_table), 0, 0, 0, NULL, rs_check_model_table};

/* workload.training.model: the table, read with the same schema machinery, its own file in
 * messages ("models/x.yaml:12: tensors[3].params: ..."). */
int rs_scenario_load_model_table(rs_schema_ctx *c, int line, rs_training *t)
{
    char *full = rs_yaml_sibling(c->y->file, t->model);
    if (full == NULL)
        return rs_yaml_fail(c->y, line, "model", "out of memory");
    char why[200];
    size_t len = 0;
    char *text = rs_yaml_read_file(full, RS_SCENARIO_MAX_FILE, &len, why, sizeof why);
    if (text == NULL) {
        free(full);
        return rs_yaml_fail(c->y, line, "model", "'%s': %s (allowed: a readable model table, relative to the scenario)",
                            t->model, why);
    }
    rs_yaml y;
    rs_yaml_init(&y, full, c->y->err, c->y->errlen);
    rs_schema_ctx m = *c;
    m.y = &y;
    m.owner_line = 0;
    int rc = rs_yaml_load(&y, text, len);
    yaml_node_t *root = rc == 0 ? rs_yaml_root(&y) : NULL;
    if (rc == 0 && root == NULL)
        rc = rs_yaml_fail(&y, 1, "(document)", "the file is empty (allowed: name, source and tensors)");
    if (rc == 0)
        rc = rs_schema_parse(&m, root, &rs_scenario_map_model_table, t);
    c->y->failed |= y.failed; /* the table's message is the scenario's */
    rs_yaml_free(&y);
    free(text);
    free(full);
    return rc;
}

