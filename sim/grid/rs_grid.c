/* rs_grid.c — reads a grid file (base, grid, out, jobs) with the YAML walker, expands its lists and ranges, checks its key paths against the base scenario, names the points. */
#define _POSIX_C_SOURCE 200809L
#include "rs_grid.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/rs_scenario.h"

static const char rs_grid_value_allowed[] =
    "a list of values [a, b, ...] or a range {begin, end, factor} or {begin, end, step}";

/* ---- key paths -------------------------------------------------------------------------------- */

/* One step of a key path: a name ("link") or an index ("[0]"). Returns the rest of the path
 * (after a '.' that separates two names), or NULL when the path is not of that form. */
static const char *rs_grid_step(const char *p, char *name, size_t len, long *index)
{
    *index = -1;
    if (*p == '[') {
        char *end;
        if (!isdigit((unsigned char)p[1]))
            return NULL;
        *index = strtol(p + 1, &end, 10);
        if (*end != ']' || *index > 1000000)
            return NULL;
        p = end + 1;
    } else {
        size_t n = 0;
        while (isalnum((unsigned char)p[n]) || p[n] == '_')
            n++;
        if (n == 0 || n >= len)
            return NULL;
        memcpy(name, p, n);
        name[n] = '\0';
        p += n;
    }
    if (*p == '.' && (isalnum((unsigned char)p[1]) || p[1] == '_'))
        return p + 1;
    return *p == '.' ? NULL : p;
}

/* The value of `name` in a mapping of doc, NULL when absent. */
static yaml_node_t *rs_grid_child(rs_yaml *y, yaml_node_t *map, const char *name)
{
    return map && map->type == YAML_MAPPING_NODE ? rs_yaml_get(y, map, name, NULL) : NULL;
}

/* Checks a key path's syntax and that the base scenario can take it: every parent that exists
 * is a mapping (or, before an index, a list that long); what is missing is created later. */
static int rs_grid_check_path(rs_grid *g, const char *key, int line)
{
    rs_yaml *y = &g->grid;
    yaml_node_t *n = rs_yaml_root(&g->scen);
    char name[128], parent[300] = "the top level";
    int exists = 1;
    if (strlen(key) > 250)
        return rs_yaml_fail(y, line, NULL, "key path too long (allowed: at most 250 characters)");
    for (const char *p = key; *p;) {
        long index;
        const char *next = rs_grid_step(p, name, sizeof name, &index);
        if (next == NULL)
            return rs_yaml_fail(y, line, NULL, "'%.80s' is not a key path (allowed: names joined by '.', as "
                                "scenarios/README.md names them, e.g. topology.link.bandwidth or "
                                "topology.overrides[0].latency)", key);
        int want_list = index >= 0;
        if (exists && n->type != (want_list ? YAML_SEQUENCE_NODE : YAML_MAPPING_NODE))
            return rs_yaml_fail(y, line, NULL, "%s is %s in %s:%d, not a %s (allowed: a key path whose parents "
                                "are mappings of the base scenario, or missing there)", parent, rs_yaml_what(n),
                                g->scen.file, rs_yaml_line(n), want_list ? "list" : "mapping");
        if (!exists && want_list)
            return rs_yaml_fail(y, line, NULL, "%s is not in the base scenario %s (allowed: an index into a list "
                                "the base scenario has)", parent, g->scen.file);
        if (want_list && (size_t)index >= rs_yaml_count(n))
            return rs_yaml_fail(y, line, NULL, "%s has %zu items in %s:%d (allowed: an index below that)", parent,
                                rs_yaml_count(n), g->scen.file, rs_yaml_line(n));
        if (want_list)
            n = rs_yaml_item(&g->scen, n, (size_t)index);
        else if (exists)
            exists = (n = rs_grid_child(&g->scen, n, name)) != NULL;
        /* the key up to here names the next step's parent */
        snprintf(parent, sizeof parent, "%.*s", (int)(next - key) - (next[-1] == '.'), key);
        p = next;
    }
    return 0;
}

/* ---- values ----------------------------------------------------------------------------------- */

/* A node as one line of flow YAML, the coordinate text of a value. */
static void rs_grid_flow(rs_yaml *y, yaml_node_t *n, char *buf, size_t len)
{
    size_t used = 0;
#define RS_PUT(...) (used += (size_t)snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__))
    if (n->type == YAML_SCALAR_NODE) {
        RS_PUT("%s", rs_yaml_scalar(n));
    } else if (n->type == YAML_SEQUENCE_NODE) {
        RS_PUT("[");
        for (size_t i = 0; i < rs_yaml_count(n); i++) {
            char item[256];
            rs_grid_flow(y, rs_yaml_item(y, n, i), item, sizeof item);
            RS_PUT("%s%s", i ? ", " : "", item);
        }
        RS_PUT("]");
    } else {
        RS_PUT("{");
        for (size_t i = 0; i < rs_yaml_count(n); i++) {
            char k[256], v[256];
            rs_grid_flow(y, rs_yaml_pair_key(y, n, i), k, sizeof k);
            rs_grid_flow(y, rs_yaml_pair_value(y, n, i), v, sizeof v);
            RS_PUT("%s%s: %s", i ? ", " : "", k, v);
        }
        RS_PUT("}");
    }
#undef RS_PUT
    for (char *p = buf; *p; p++) /* one line, whatever the value held */
        if ((unsigned char)*p < 0x20)
            *p = ' ';
}

/* A number with an optional unit after it ("25 GB/s", "4", "1.5us"): 0, or -1. */
static int rs_grid_number(const char *text, double *v, char *unit, size_t len)
{
    char *end;
    *v = strtod(text, &end);
    if (end == text || !isfinite(*v))
        return -1;
    while (*end == ' ')
        end++;
    snprintf(unit, len, "%s", end);
    return strlen(end) < len ? 0 : -1;
}

/* One numeric key of a range: present, a number, with the unit `unit` when that is given (else
 * *unit takes this one's). */
static int rs_grid_range_num(rs_yaml *y, yaml_node_t *range, const char *key, double *v, char *unit,
                             size_t len, int need_unit)
{
    yaml_node_t *n = rs_yaml_get(y, range, key, NULL);
    char u[64], shown[64];
    if (n == NULL)
        return rs_yaml_fail(y, rs_yaml_line(range), key, "missing (allowed: %s)", rs_grid_value_allowed);
    if (!rs_yaml_is_text(n) || rs_grid_number(rs_yaml_scalar(n), v, u, sizeof u) != 0) {
        rs_yaml_show(rs_yaml_is_text(n) ? rs_yaml_scalar(n) : "", shown, sizeof shown);
        return rs_yaml_fail(y, rs_yaml_line(n), key, "%s is not a number (allowed: a number, with the unit the "
                            "scenario key takes: 4, 25 GB/s, 1.5 us)", rs_yaml_is_text(n) ? shown : rs_yaml_what(n));
    }
    if (need_unit && strcmp(u, unit) != 0 && !(u[0] == '\0' && need_unit == 2))
        return rs_yaml_fail(y, rs_yaml_line(n), key, "unit '%s' (allowed: the unit of begin, '%s')", u, unit);
    if (!need_unit)
        snprintf(unit, len, "%s", u);
    return 0;
}

/* A range {begin, end, factor} or {begin, end, step} as the texts of its values. */
static int rs_grid_range(rs_yaml *y, yaml_node_t *range, rs_grid_axis *a)
{
    static const char *const keys[] = {"begin", "end", "factor", "step"};
    if (rs_yaml_check_keys(y, range, keys, 4, "begin, end, factor, step") != 0)
        return -1;
    double begin, end, by;
    char unit[64] = "", none[64];
    int geometric = rs_yaml_get(y, range, "factor", NULL) != NULL;
    if (geometric == (rs_yaml_get(y, range, "step", NULL) != NULL))
        return rs_yaml_fail(y, rs_yaml_line(range), NULL, "%s (allowed: a range has factor or step, not both)",
                            geometric ? "both factor and step" : "neither factor nor step");
    if (rs_grid_range_num(y, range, "begin", &begin, unit, sizeof unit, 0) != 0 ||
        rs_grid_range_num(y, range, "end", &end, unit, sizeof unit, 1) != 0)
        return -1;
    if (geometric ? rs_grid_range_num(y, range, "factor", &by, none, sizeof none, 0) != 0
                  : rs_grid_range_num(y, range, "step", &by, unit, sizeof unit, 2) != 0)
        return -1;
    yaml_node_t *byn = rs_yaml_get(y, range, geometric ? "factor" : "step", NULL);
    if (geometric && (none[0] || !(by > 1)))
        return rs_yaml_fail(y, rs_yaml_line(byn), "factor", "'%s' (allowed: a number above 1, no unit)",
                            rs_yaml_scalar(byn));
    if (!geometric && !(by > 0))
        return rs_yaml_fail(y, rs_yaml_line(byn), "step", "'%s' (allowed: a number above 0)", rs_yaml_scalar(byn));
    if (end < begin || (geometric && begin <= 0))
        return rs_yaml_fail(y, rs_yaml_line(range), "end", "%g is below begin %g (allowed: end >= begin%s)", end,
                            begin, geometric ? " > 0" : "");
    size_t n = 0;
    double slack = fabs(end) * 1e-12; /* 0.1 + 0.1 + 0.1 reaches 0.3 */
    for (double v = begin; v <= end + slack && n <= RS_GRID_MAX_VALUES; n++)
        v = geometric ? v * by : begin + (double)(n + 1) * by;
    if (n > RS_GRID_MAX_VALUES)
        return rs_yaml_fail(y, rs_yaml_line(range), NULL, "more than %d values (allowed: at most %d)",
                            RS_GRID_MAX_VALUES, RS_GRID_MAX_VALUES);
    a->texts = calloc(n, sizeof *a->texts);
    a->values = calloc(n, sizeof *a->values);
    if (!a->texts || !a->values)
        return rs_yaml_fail(y, rs_yaml_line(range), NULL, "out of memory");
    double v = begin;
    for (a->nvalues = 0; a->nvalues < n; a->nvalues++) {
        char text[128];
        snprintf(text, sizeof text, "%.15g%s%s", v, unit[0] ? " " : "", unit);
        if ((a->texts[a->nvalues] = strdup(text)) == NULL)
            return rs_yaml_fail(y, rs_yaml_line(range), NULL, "out of memory");
        v = geometric ? v * by : begin + (double)(a->nvalues + 1) * by;
    }
    return 0;
}

/* A list's values: the nodes themselves, and their texts. */
static int rs_grid_list(rs_yaml *y, yaml_node_t *list, rs_grid_axis *a)
{
    size_t n = rs_yaml_count(list);
    if (n == 0)
        return rs_yaml_fail(y, rs_yaml_line(list), NULL, "the list is empty (allowed: %s)", rs_grid_value_allowed);
    a->texts = calloc(n, sizeof *a->texts);
    a->values = calloc(n, sizeof *a->values);
    if (!a->texts || !a->values)
        return rs_yaml_fail(y, rs_yaml_line(list), NULL, "out of memory");
    for (a->nvalues = 0; a->nvalues < n; a->nvalues++) {
        yaml_node_t *item = rs_yaml_item(y, list, a->nvalues);
        char text[512];
        if (rs_yaml_is_null(item))
            return rs_yaml_fail(y, rs_yaml_line(item), NULL, "item %zu is empty (allowed: a value as the scenario "
                                "would write it)", a->nvalues);
        rs_grid_flow(y, item, text, sizeof text);
        a->values[a->nvalues] = (int)(item - y->doc.nodes.start) + 1;
        if ((a->texts[a->nvalues] = strdup(text)) == NULL)
            return rs_yaml_fail(y, rs_yaml_line(list), NULL, "out of memory");
    }
    return 0;
}

/* The grid: each key a path, each value a list or a range. Ranges' values become scalar nodes of
 * the grid document afterwards (adding nodes moves the node table: no pointer is kept across). */
static int rs_grid_axes(rs_grid *g, yaml_node_t *map)
{
    rs_yaml *y = &g->grid;
    if (map->type != YAML_MAPPING_NODE || rs_yaml_count(map) == 0)
        return rs_yaml_fail(y, rs_yaml_line(map), NULL, "%s (allowed: a mapping of scenario key paths to %s)",
                            map->type == YAML_MAPPING_NODE ? "empty" : rs_yaml_what(map), rs_grid_value_allowed);
    g->naxes = rs_yaml_count(map);
    g->axes = calloc(g->naxes, sizeof *g->axes);
    if (g->axes == NULL)
        return rs_yaml_fail(y, 1, NULL, "out of memory");
    for (size_t i = 0; i < g->naxes; i++) {
        yaml_node_t *k = rs_yaml_pair_key(y, map, i), *v = rs_yaml_pair_value(y, map, i);
        rs_grid_axis *a = &g->axes[i];
        a->line = rs_yaml_line(k);
        if (!rs_yaml_is_text(k) || rs_yaml_scalar(k)[0] == '\0')
            return rs_yaml_fail(y, a->line, NULL, "a key must be a scenario key path, got %s (allowed: names "
                                "joined by '.', e.g. topology.ranks)", rs_yaml_what(k));
        if ((a->key = strdup(rs_yaml_scalar(k))) == NULL)
            return rs_yaml_fail(y, a->line, NULL, "out of memory");
        size_t old = rs_yaml_push(y, a->key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(g->axes[j].key, a->key) == 0)
                return rs_yaml_fail(y, a->line, NULL, "duplicate key, first at line %d (allowed: each key once)",
                                    g->axes[j].line);
        if (rs_grid_check_path(g, a->key, a->line) != 0)
            return -1;
        int rc = v->type == YAML_SEQUENCE_NODE  ? rs_grid_list(y, v, a)
                 : v->type == YAML_MAPPING_NODE ? rs_grid_range(y, v, a)
                                                : rs_yaml_fail(y, rs_yaml_line(v), NULL, "%s (allowed: %s)",
                                                               rs_yaml_what(v), rs_grid_value_allowed);
        if (rc != 0)
            return -1;
        rs_yaml_pop(y, old);
    }
    for (size_t i = 0; i < g->naxes; i++) /* the ranges' values as nodes */
        for (size_t k = 0; k < g->axes[i].nvalues; k++)
            if (g->axes[i].values[k] == 0 &&
                (g->axes[i].values[k] = yaml_document_add_scalar(&y->doc, NULL, (yaml_char_t *)g->axes[i].texts[k],
                                                                 -1, YAML_PLAIN_SCALAR_STYLE)) == 0)
                return rs_yaml_fail(y, g->axes[i].line, NULL, "out of memory");
    return 0;
}

/* No key may sit inside another: which value would win? */
static int rs_grid_disjoint(rs_grid *g)
{
    for (size_t i = 0; i < g->naxes; i++)
        for (size_t j = 0; j < g->naxes; j++) {
            size_t n = strlen(g->axes[i].key);
            const char *inner = g->axes[j].key;
            if (i != j && strncmp(inner, g->axes[i].key, n) == 0 && (inner[n] == '.' || inner[n] == '[')) {
                rs_yaml_push(&g->grid, "grid");
                rs_yaml_push(&g->grid, inner);
                return rs_yaml_fail(&g->grid, g->axes[j].line, NULL, "inside %s, which line %d sets too (allowed: "
                                    "keys that do not contain one another)", g->axes[i].key, g->axes[i].line);
            }
        }
    return 0;
}

/* ---- the file --------------------------------------------------------------------------------- */

/* The base scenario's YAML: parsed (its own file:line on a syntax error), a mapping. */
static int rs_grid_load_base(rs_grid *g, yaml_node_t *basenode)
{
    char why[200];
    size_t len = 0;
    char *text = rs_yaml_read_file(g->base, RS_SCENARIO_MAX_FILE, &len, why, sizeof why);
    if (text == NULL)
        return rs_yaml_fail(&g->grid, rs_yaml_line(basenode), "base", "'%s' %s (allowed: a scenario file, "
                            "relative to the grid file)", g->base, why);
    rs_yaml_init(&g->scen, g->base, g->err, sizeof g->err);
    int rc = rs_yaml_load(&g->scen, text, len);
    free(text);
    if (rc != 0)
        return -1;
    yaml_node_t *root = rs_yaml_root(&g->scen);
    if (root == NULL || root->type != YAML_MAPPING_NODE)
        return rs_yaml_fail(&g->scen, 1, NULL, "%s (allowed: a scenario: a mapping with at least topology: "
                            "{kind: ...})", root ? rs_yaml_what(root) : "the file is empty");
    return 0;
}

/* jobs: a whole number of processes. */
static int rs_grid_jobs(rs_grid *g, yaml_node_t *n)
{
    long long v;
    if (!rs_yaml_is_text(n) || rs_yaml_parse_ll(rs_yaml_scalar(n), &v) != 0 || v < 1 || v > 1024) {
        char shown[64];
        rs_yaml_show(rs_yaml_is_text(n) ? rs_yaml_scalar(n) : "", shown, sizeof shown);
        return rs_yaml_fail(&g->grid, rs_yaml_line(n), "jobs", "%s (allowed: a whole number from 1 to 1024: points "
                            "run at once)", rs_yaml_is_text(n) ? shown : rs_yaml_what(n));
    }
    g->jobs = (int)v;
    return 0;
}

/* A text value of the grid file: a non-empty single value. */
static const char *rs_grid_text(rs_grid *g, yaml_node_t *n, const char *key, const char *allowed)
{
    if (!rs_yaml_is_text(n) || rs_yaml_scalar(n)[0] == '\0') {
        rs_yaml_fail(&g->grid, rs_yaml_line(n), key, "%s (allowed: %s)", rs_yaml_what(n), allowed);
        return NULL;
    }
    return rs_yaml_scalar(n);
}

int rs_grid_load(const char *path, rs_grid *g)
{
    static const char *const top[] = {"base", "grid", "out", "jobs"};
    memset(g, 0, sizeof *g);
    rs_yaml *y = &g->grid;
    rs_yaml_init(y, path, g->err, sizeof g->err);
    char why[200];
    size_t len = 0;
    char *text = rs_yaml_read_file(path, RS_SCENARIO_MAX_FILE, &len, why, sizeof why);
    if (text == NULL)
        return rs_yaml_fail(y, 0, "(file)", "%s (allowed: a readable grid file, YAML)", why);
    int rc = rs_yaml_load(y, text, len);
    free(text);
    if (rc != 0)
        return -1;
    g->path = strdup(path);
    g->name = rs_yaml_base_name(path);
    yaml_node_t *root = rs_yaml_root(y);
    if (!g->path || !g->name)
        return rs_yaml_fail(y, 1, "(file)", "out of memory");
    if (root == NULL || root->type != YAML_MAPPING_NODE)
        return rs_yaml_fail(y, 1, NULL, "%s (allowed: a mapping with base: SCENARIO and grid: {KEY: VALUES})",
                            root ? rs_yaml_what(root) : "the file is empty");
    if (rs_yaml_check_keys(y, root, top, 4, "base, grid, out, jobs") != 0)
        return -1;
    yaml_node_t *base = rs_yaml_get(y, root, "base", NULL), *grid = rs_yaml_get(y, root, "grid", NULL);
    yaml_node_t *out = rs_yaml_get(y, root, "out", NULL), *jobs = rs_yaml_get(y, root, "jobs", NULL);
    if (base == NULL || grid == NULL)
        return rs_yaml_fail(y, rs_yaml_line(root), base ? "grid" : "base", "missing (allowed: %s)",
                            base ? "a mapping of scenario key paths to values" : "the scenario file the points start "
                            "from, relative to the grid file");
    const char *b = rs_grid_text(g, base, "base", "a scenario file, relative to the grid file");
    const char *o = out ? rs_grid_text(g, out, "out", "a directory, relative to the grid file") : NULL;
    if (!b || (out && !o) || (jobs && rs_grid_jobs(g, jobs) != 0))
        return -1;
    g->base = rs_yaml_sibling(path, b);
    if (o)
        g->out = rs_yaml_sibling(path, o);
    else if ((g->out = malloc(strlen(path) + 8)) != NULL) /* GRID.yaml -> GRID.sweep beside it */
        sprintf(g->out, "%.*s%s.sweep", (int)(strlen(path) - strlen(strrchr(path, '/') ? strrchr(path, '/') + 1 : path)),
                path, g->name);
    if (!g->base || !g->out)
        return rs_yaml_fail(y, 1, "(file)", "out of memory");
    if (rs_grid_load_base(g, base) != 0)
        return -1;
    size_t old = rs_yaml_push(y, "grid");
    if (rs_grid_axes(g, rs_yaml_get(y, rs_yaml_root(y), "grid", NULL)) != 0)
        return -1;
    rs_yaml_pop(y, old);
    if (rs_grid_disjoint(g) != 0)
        return -1;
    g->npoints = 1;
    for (size_t i = 0; i < g->naxes; i++) {
        if (g->npoints * g->axes[i].nvalues > RS_GRID_MAX_POINTS)
            return rs_yaml_fail(y, g->axes[i].line, "grid", "more than %d points (allowed: at most %d)",
                                RS_GRID_MAX_POINTS, RS_GRID_MAX_POINTS);
        g->npoints *= g->axes[i].nvalues;
        const char *last = g->axes[i].key;
        for (const char *p = last; *p; p++)
            if (*p == '.' || *p == '[')
                last = p + 1;
        g->axes[i].label = strndup(last, strcspn(last, "]"));
        if (g->axes[i].label == NULL)
            return rs_yaml_fail(y, 1, "(file)", "out of memory");
    }
    return 0;
}

void rs_grid_free(rs_grid *g)
{
    for (size_t i = 0; g->axes && i < g->naxes; i++) {
        for (size_t k = 0; g->axes[i].texts && k < g->axes[i].nvalues; k++)
            free(g->axes[i].texts[k]);
        free(g->axes[i].texts);
        free(g->axes[i].values);
        free(g->axes[i].key);
        free(g->axes[i].label);
    }
    free(g->axes);
    free(g->path);
    free(g->name);
    free(g->base);
    free(g->out);
    rs_yaml_free(&g->grid);
    rs_yaml_free(&g->scen);
    memset(g, 0, sizeof *g);
}

/* ---- points ----------------------------------------------------------------------------------- */

void rs_grid_coords(const rs_grid *g, size_t p, size_t *idx)
{
    for (size_t i = g->naxes; i-- > 0;) { /* the last key varies fastest */
        idx[i] = p % g->axes[i].nvalues;
        p /= g->axes[i].nvalues;
    }
}

void rs_grid_point_name(const rs_grid *g, size_t p, char *buf, size_t len)
{
    size_t idx[64] = {0}, used = (size_t)snprintf(buf, len, "%04zu", p);
    if (g->naxes > 64)
        return;
    rs_grid_coords(g, p, idx);
    for (size_t i = 0; i < g->naxes && used + 2 < len && used < 96; i++) {
        if (g->axes[i].nvalues == 1) /* the same in every point: says nothing */
            continue;
        used += (size_t)snprintf(buf + used, len - used, "-%s", g->axes[i].label);
        for (const char *s = g->axes[i].texts[idx[i]]; *s && used + 1 < len && used < 96; s++)
            if (isalnum((unsigned char)*s) || *s == '.' || *s == '+' || (*s == '-' && s > g->axes[i].texts[idx[i]]))
                buf[used++] = *s;
            else if (*s == '-')
                buf[used++] = 'm'; /* a minus sign, not a separator */
        buf[used < len ? used : len - 1] = '\0';
    }
}

void rs_grid_point_label(const rs_grid *g, size_t p, char *buf, size_t len)
{
    size_t idx[64] = {0}, used = 0;
    buf[0] = '\0';
    if (g->naxes > 64)
        return;
    rs_grid_coords(g, p, idx);
    for (size_t i = 0; i < g->naxes && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", i ? ", " : "", g->axes[i].key,
                                 g->axes[i].texts[idx[i]]);
}
