/* rs_grid_point.c — a point's scenario: the base YAML copied node by node with the point's values set at their key paths, emitted by libyaml. */
#define _XOPEN_SOURCE 700
#include "rs_grid.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Keys whose value is a file the loader reads relative to the scenario: a point lives in another
 * directory, so a relative name there is made absolute. */
static const char *const rs_grid_file_keys[] = {"workload.schedule", "workload.training.model"};

/* One copy in progress: the new document, the point's value of each axis, the path at hand. */
typedef struct rs_copy {
    rs_grid *g;
    yaml_document_t *d;
    const size_t *idx;
    char path[512];
    size_t len;
} rs_copy;

static int rs_copy_node(rs_copy *c, rs_yaml *src, yaml_node_t *n, int plain);

/* Appends ".name" or "[i]" to the path; returns the length to restore. */
static size_t rs_copy_push(rs_copy *c, const char *name, long index)
{
    size_t old = c->len;
    if (index >= 0)
        snprintf(c->path + old, sizeof c->path - old, "[%ld]", index);
    else
        snprintf(c->path + old, sizeof c->path - old, "%s%s", old ? "." : "", name);
    c->len = strlen(c->path);
    return old;
}

static void rs_copy_pop(rs_copy *c, size_t old)
{
    c->len = old;
    c->path[old] = '\0';
}

/* The axis whose key is the path at hand, or -1. */
static int rs_copy_axis(const rs_copy *c)
{
    for (size_t i = 0; i < c->g->naxes; i++)
        if (strcmp(c->g->axes[i].key, c->path) == 0)
            return (int)i;
    return -1;
}

/* A relative file name of src's directory made absolute (or left as it is when it cannot be). */
static char *rs_copy_file_name(rs_yaml *src, const char *value)
{
    char dir[PATH_MAX];
    if (value[0] == '/' || realpath(src->file, dir) == NULL)
        return strdup(value);
    *strrchr(dir, '/') = '\0';
    char *full = malloc(strlen(dir) + strlen(value) + 2);
    if (full)
        sprintf(full, "%s/%s", dir, value);
    return full;
}

static int rs_copy_scalar(rs_copy *c, rs_yaml *src, yaml_node_t *n)
{
    const char *value = rs_yaml_scalar(n);
    int length = (int)n->data.scalar.length;
    for (size_t i = 0; i < sizeof rs_grid_file_keys / sizeof *rs_grid_file_keys; i++)
        if (strcmp(c->path, rs_grid_file_keys[i]) == 0 && rs_yaml_is_text(n)) {
            char *full = rs_copy_file_name(src, value);
            int id = full ? yaml_document_add_scalar(c->d, n->tag, (yaml_char_t *)full, -1, n->data.scalar.style) : 0;
            free(full);
            return id;
        }
    return yaml_document_add_scalar(c->d, n->tag, (yaml_char_t *)value, length, n->data.scalar.style);
}

/* The name of the next step of an axis below the path at hand ("link" of topology.link.bandwidth
 * under "topology"), or NULL when the axis is not below it. */
static const char *rs_copy_below(const rs_copy *c, const char *key, size_t *namelen)
{
    if (strncmp(key, c->path, c->len) != 0 || (c->len && key[c->len] != '.'))
        return NULL;
    const char *name = key + c->len + (c->len ? 1 : 0);
    *namelen = strcspn(name, ".[");
    return *namelen ? name : NULL;
}

static int rs_copy_missing(rs_copy *c, int map, yaml_node_t *srcmap, rs_yaml *src);

/* A mapping the base lacks on the way to a point's value: made, then filled with what goes in it. */
static int rs_copy_new_map(rs_copy *c)
{
    int id = yaml_document_add_mapping(c->d, NULL, YAML_BLOCK_MAPPING_STYLE);
    return id && rs_copy_missing(c, id, NULL, NULL) == 0 ? id : 0;
}

/* Adds to a mapping the keys of axes below it that its source lacks: the point's value, or a new
 * mapping on the way to it. Validation made sure what is missing is never a list item. */
static int rs_copy_missing(rs_copy *c, int map, yaml_node_t *srcmap, rs_yaml *src)
{
    for (size_t i = 0; i < c->g->naxes; i++) {
        size_t nl;
        const char *name = rs_copy_below(c, c->g->axes[i].key, &nl);
        char key[128];
        if (name == NULL || nl >= sizeof key)
            continue;
        snprintf(key, sizeof key, "%.*s", (int)nl, name);
        if (srcmap && rs_yaml_get(src, srcmap, key, NULL))
            continue;
        int seen = 0; /* an earlier axis made this key already */
        for (size_t j = 0; j < i && !seen; j++) {
            size_t ml;
            const char *other = rs_copy_below(c, c->g->axes[j].key, &ml);
            seen = other && ml == nl && strncmp(other, name, nl) == 0;
        }
        if (seen)
            continue;
        size_t old = rs_copy_push(c, key, -1);
        int k = yaml_document_add_scalar(c->d, NULL, (yaml_char_t *)key, -1, YAML_PLAIN_SCALAR_STYLE);
        int v = name[nl] == '\0' ? rs_copy_node(c, &c->g->grid, rs_yaml_node(&c->g->grid,
                                                c->g->axes[i].values[c->idx[i]]), 1)
                                 : rs_copy_new_map(c);
        rs_copy_pop(c, old);
        if (!k || !v || !yaml_document_append_mapping_pair(c->d, map, k, v))
            return -1;
    }
    return 0;
}

/* Copies node n of src into the new document under the path at hand, the axes' values replacing
 * what the base has at their paths (plain: a value of the grid, copied as it is). The new node's
 * id, 0 when out of memory. */
static int rs_copy_node(rs_copy *c, rs_yaml *src, yaml_node_t *n, int plain)
{
    int axis = plain ? -1 : rs_copy_axis(c);
    if (axis >= 0)
        return rs_copy_node(c, &c->g->grid, rs_yaml_node(&c->g->grid, c->g->axes[axis].values[c->idx[axis]]), 1);
    if (n->type == YAML_SCALAR_NODE)
        return rs_copy_scalar(c, src, n);
    if (n->type == YAML_SEQUENCE_NODE) {
        int id = yaml_document_add_sequence(c->d, n->tag, n->data.sequence.style);
        for (size_t i = 0; id && i < rs_yaml_count(n); i++) {
            size_t old = rs_copy_push(c, "", (long)i);
            int item = rs_copy_node(c, src, rs_yaml_item(src, n, i), plain);
            rs_copy_pop(c, old);
            if (!item || !yaml_document_append_sequence_item(c->d, id, item))
                return 0;
        }
        return id;
    }
    int id = yaml_document_add_mapping(c->d, n->tag, n->data.mapping.style);
    for (size_t i = 0; id && i < rs_yaml_count(n); i++) {
        yaml_node_t *k = rs_yaml_pair_key(src, n, i);
        int kid = rs_copy_node(c, src, k, 1); /* at the mapping's path: a key is never a file name */
        size_t old = rs_copy_push(c, rs_yaml_is_text(k) ? rs_yaml_scalar(k) : "?", -1);
        int vid = rs_copy_node(c, src, rs_yaml_pair_value(src, n, i), plain);
        rs_copy_pop(c, old);
        if (!kid || !vid || !yaml_document_append_mapping_pair(c->d, id, kid, vid))
            return 0;
    }
    return id && (plain || rs_copy_missing(c, id, n, src) == 0) ? id : 0;
}

/* The emitter's output into a growing buffer. */
typedef struct rs_buf {
    char *p;
    size_t len, cap;
} rs_buf;

static int rs_buf_put(void *data, unsigned char *bytes, size_t size)
{
    rs_buf *b = data;
    if (b->len + size + 1 > b->cap) {
        size_t cap = (b->len + size + 1) * 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return 0;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, bytes, size);
    b->len += size;
    b->p[b->len] = '\0';
    return 1;
}

char *rs_grid_point_yaml(rs_grid *g, size_t p, size_t *len)
{
    size_t idx[64];
    char label[1024], head[1400];
    if (g->naxes > 64) {
        snprintf(g->err, sizeof g->err, "%s: more than 64 keys (allowed: at most 64)", g->path);
        return NULL;
    }
    rs_grid_coords(g, p, idx);
    rs_grid_point_label(g, p, label, sizeof label);
    rs_buf b = {NULL, 0, 0};
    int n = snprintf(head, sizeof head, "# ringsim sweep %s, point %zu of %zu: %s\n# base: %s (its comments are "
                     "not copied)\n", g->path, p, g->npoints, label, g->base);
    yaml_document_t d;
    yaml_emitter_t e;
    if (!rs_buf_put(&b, (unsigned char *)head, (size_t)n) || !yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1)) {
        snprintf(g->err, sizeof g->err, "%s: point %zu: out of memory", g->path, p);
        free(b.p);
        return NULL;
    }
    rs_copy c = {g, &d, idx, "", 0};
    int ok = rs_copy_node(&c, &g->scen, rs_yaml_root(&g->scen), 0) != 0 && yaml_emitter_initialize(&e);
    if (ok) {
        yaml_emitter_set_output(&e, rs_buf_put, &b);
        yaml_emitter_set_unicode(&e, 1);
        yaml_emitter_set_width(&e, 120);
        ok = yaml_emitter_open(&e) && yaml_emitter_dump(&e, &d) && yaml_emitter_close(&e) && yaml_emitter_flush(&e);
        yaml_emitter_delete(&e); /* dump deleted the document */
    } else {
        yaml_document_delete(&d);
    }
    if (!ok) {
        snprintf(g->err, sizeof g->err, "%s: point %zu: cannot write its YAML (out of memory)", g->path, p);
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
