/* rs_schema.c — the key-table engine: a YAML mapping read into a C struct key by key (types, units, ranges, defaults, variants), and written back. */
#define _POSIX_C_SOURCE 200809L
#include "rs_schema.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ncl/ncl.h>

#define RS_SCHEMA_MAX_ITEMS 1000000u /* entries of one list (links, overrides, faults, tensors) */

/* Stored values go through memcpy: offsets come from tables, alignment is the struct's own. */
static void rs_put_i32(void *base, size_t off, int32_t v) { memcpy((char *)base + off, &v, sizeof v); }
static void rs_put_u32(void *base, size_t off, uint32_t v) { memcpy((char *)base + off, &v, sizeof v); }
static void rs_put_u64(void *base, size_t off, uint64_t v) { memcpy((char *)base + off, &v, sizeof v); }
static void rs_put_dbl(void *base, size_t off, double v) { memcpy((char *)base + off, &v, sizeof v); }
static int32_t rs_get_i32(const void *base, size_t off) { int32_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static uint32_t rs_get_u32(const void *base, size_t off) { uint32_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static uint64_t rs_get_u64(const void *base, size_t off) { uint64_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static double rs_get_dbl(const void *base, size_t off) { double v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static void *rs_get_ptr(const void *base, size_t off) { void *v; memcpy(&v, (const char *)base + off, sizeof v); return v; }
static size_t rs_get_size(const void *base, size_t off) { size_t v; memcpy(&v, (const char *)base + off, sizeof v); return v; }

/* ---- messages --------------------------------------------------------------------------------- */

/* Text of a number in the key's unit (for ranges and messages). */
static void rs_fmt_unit(const rs_key *k, double v, char *buf, size_t len)
{
    if (k->type == RS_T_UNIT)
        rs_units_format(v, k->unit, buf, len);
    else
        snprintf(buf, len, "%.0f", v);
}

static void rs_key_list(const rs_map *m, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->nkeys && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", m->keys[i].name);
}

void rs_schema_allowed(const rs_key *k, char *buf, size_t len)
{
    char lo[48], hi[48];
    switch (k->type) {
    case RS_T_INT:
        snprintf(buf, len, "a whole number from %.0f to %.0f", k->min, k->max);
        break;
    case RS_T_U64:
        snprintf(buf, len, "a whole number from 0 to 18446744073709551615, decimal or 0x hex");
        break;
    case RS_T_UNIT:
        rs_fmt_unit(k, k->min, lo, sizeof lo);
        rs_fmt_unit(k, k->max, hi, sizeof hi);
        if (k->flags & RS_F_MIN_EXCL)
            snprintf(buf, len, "a %s above %s, up to %s", rs_units_kind_name(k->unit), lo, hi);
        else
            snprintf(buf, len, "a %s from %s to %s", rs_units_kind_name(k->unit), lo, hi);
        break;
    case RS_T_BOOL:
        snprintf(buf, len, "true, false");
        break;
    case RS_T_ENUM:
        rs_yaml_enum_list(k->names, buf, len);
        break;
    case RS_T_STR:
        snprintf(buf, len, "any text");
        break;
    case RS_T_PAIR:
        snprintf(buf, len, "two whole numbers from %.0f to %.0f, e.g. [%.0f, %.0f]", k->min, k->max, k->min,
                 k->min + 1);
        break;
    case RS_T_COLLS: {
        char list[160];
        rs_yaml_enum_list(k->names, list, sizeof list);
        snprintf(buf, len, "%s, all, or a list of them", list);
        break;
    }
    case RS_T_MAP:
    case RS_T_SEQ: {
        size_t used = (size_t)snprintf(buf, len, "%s", k->type == RS_T_MAP ? "a mapping of " : "a list of mappings of ");
        for (size_t i = 0; i < k->sub->nkeys && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", k->sub->keys[i].name);
        break;
    }
    }
}

const char *rs_schema_type_name(const rs_key *k)
{
    switch (k->type) {
    case RS_T_INT:
    case RS_T_U64:
        return "number";
    case RS_T_UNIT:
        return rs_units_kind_name(k->unit);
    case RS_T_BOOL:
        return "boolean";
    case RS_T_ENUM:
        return "name";
    case RS_T_STR:
        return "text";
    case RS_T_PAIR:
        return "[number, number]";
    case RS_T_COLLS:
        return "name or list";
    case RS_T_MAP:
        return "mapping";
    case RS_T_SEQ:
        return "list";
    }
    return "?";
}

void rs_schema_variant_list(const rs_schema *s, unsigned mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int v = 0; v < 32 && used < len; v++)
        if (mask & RS_K(v))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                     rs_yaml_enum_name(s->variants, v));
}

/* ---- lines ------------------------------------------------------------------------------------ */

int rs_schema_key_line(rs_schema_ctx *c, yaml_node_t *map, const char *key)
{
    yaml_node_t *k = NULL;
    if (rs_yaml_get(c->y, map, key, &k) == NULL)
        return c->owner_line ? c->owner_line : rs_yaml_line(map);
    return rs_yaml_line(k);
}

int rs_schema_sub_key_line(rs_schema_ctx *c, yaml_node_t *map, const char *sub, const char *key)
{
    yaml_node_t *sk = NULL, *sv = rs_yaml_get(c->y, map, sub, &sk);
    if (sv && rs_yaml_get(c->y, sv, key, NULL))
        return rs_schema_key_line(c, sv, key);
    return sk ? rs_yaml_line(sk) : rs_schema_key_line(c, map, sub);
}

int rs_schema_item_line(rs_schema_ctx *c, yaml_node_t *map, const char *seqkey, size_t i, const char *field)
{
    yaml_node_t *seq = rs_yaml_get(c->y, map, seqkey, NULL);
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE)
        return rs_yaml_line(map);
    if (i >= rs_yaml_count(seq))
        return rs_yaml_line(seq);
    yaml_node_t *item = rs_yaml_item(c->y, seq, i);
    if (item == NULL)
        return rs_yaml_line(seq);
    return field ? rs_schema_key_line(c, item, field) : rs_yaml_line(item);
}

/* ---- values ----------------------------------------------------------------------------------- */

/* Adds one collective name to the list at base (an rs_workload): k->max of them at most, values
 * 0 .. k->max - 1. */
static int rs_add_coll(rs_schema_ctx *c, int line, const rs_key *k, const char *text, void *base)
{
    int32_t *colls = (int32_t *)((char *)base + k->offset);
    int32_t count = rs_get_i32(base, k->offset2), most = (int32_t)k->max;
    char allowed[256], shown[64];
    rs_schema_allowed(k, allowed, sizeof allowed);
    rs_yaml_show(text, shown, sizeof shown);
    if (strcmp(text, "all") == 0) {
        for (int32_t v = 0; v < most; v++) {
            int dup = 0;
            for (int i = 0; i < count; i++)
                dup |= colls[i] == v;
            if (!dup && count < most)
                colls[count++] = v;
        }
        rs_put_i32(base, k->offset2, count);
        return 0;
    }
    int v;
    if (rs_yaml_enum_lookup(k->names, text, &v) != 0)
        return rs_yaml_bad_enum(c->y, line, NULL, k->names, text);
    for (int i = 0; i < count; i++)
        if (colls[i] == v)
            return rs_yaml_fail(c->y, line, NULL, "%s is listed twice (allowed: each collective once)", shown);
    if (count >= most)
        return rs_yaml_fail(c->y, line, NULL, "too many collectives (allowed: %s)", allowed);
    colls[count++] = v;
    rs_put_i32(base, k->offset2, count);
    return 0;
}

/* Sets key k of base from the text of a scalar (or of the key's default, line 0). */
static int rs_set_text(rs_schema_ctx *c, int line, const rs_key *k, const char *text, int is_null, void *base)
{
    char allowed[512], shown[64];
    rs_schema_allowed(k, allowed, sizeof allowed);
    rs_yaml_show(text, shown, sizeof shown);
    if (is_null && k->type != RS_T_STR)
        return rs_yaml_fail(c->y, line, NULL, "has no value (allowed: %s)", allowed);
    switch (k->type) {
    case RS_T_INT: {
        long long v = 0;
        int rc = rs_yaml_parse_ll(text, &v);
        if (rc == -1)
            return rs_yaml_fail(c->y, line, NULL, "%s is not a whole number (allowed: %s)", shown, allowed);
        if (rc == -2 || (double)v < k->min || (double)v > k->max)
            return rs_yaml_fail(c->y, line, NULL, "%s is out of range (allowed: %s)", shown, allowed);
        if (k->store == RS_S_U32)
            rs_put_u32(base, k->offset, (uint32_t)v);
        else
            rs_put_i32(base, k->offset, (int32_t)v);
        return 0;
    }
    case RS_T_U64: {
        uint64_t v = 0;
        int rc = rs_yaml_parse_u64(text, &v);
        if (rc == -1)
            return rs_yaml_fail(c->y, line, NULL, "%s is not a whole number (allowed: %s)", shown, allowed);
        if (rc == -2)
            return rs_yaml_fail(c->y, line, NULL, "%s is out of range (allowed: %s)", shown, allowed);
        rs_put_u64(base, k->offset, v);
        return 0;
    }
    case RS_T_UNIT: {
        double v = 0;
        char why[160];
        rs_units_status st = rs_units_parse(text, k->unit, &v, why, sizeof why);
        if (st != RS_UNITS_OK)
            return rs_yaml_fail(c->y, line, NULL, "%s (allowed: %s)", why,
                                st == RS_UNITS_RANGE ? allowed : rs_units_allowed(k->unit));
        if (!(v >= k->min) || v > k->max || ((k->flags & RS_F_MIN_EXCL) && !(v > k->min)))
            return rs_yaml_fail(c->y, line, NULL, "%s is out of range (allowed: %s)", shown, allowed);
        if (k->store == RS_S_DBL) {
            rs_put_dbl(base, k->offset, v);
            return 0;
        }
        if (v != floor(v))
            return rs_yaml_fail(c->y, line, NULL, "%s is not a whole number of bytes (allowed: %s)", shown, allowed);
        if (k->store == RS_S_U32)
            rs_put_u32(base, k->offset, (uint32_t)v);
        else
            rs_put_u64(base, k->offset, (uint64_t)v);
        return 0;
    }
    case RS_T_BOOL:
    case RS_T_ENUM: {
        int v;
        if (rs_yaml_enum_lookup(k->names, text, &v) != 0)
            return rs_yaml_bad_enum(c->y, line, NULL, k->names, text);
        rs_put_i32(base, k->offset, v);
        return 0;
    }
    case RS_T_STR: {
        char *s = strdup(is_null ? "" : text);
        if (s == NULL)
            return rs_yaml_fail(c->y, line, NULL, "out of memory");
        free(rs_get_ptr(base, k->offset));
        memcpy((char *)base + k->offset, &s, sizeof s);
        return 0;
    }
    case RS_T_COLLS:
        rs_put_i32(base, k->offset2, 0);
        return rs_add_coll(c, line, k, text, base);
    default:
        return rs_yaml_fail(c->y, line, NULL, "expected %s, got a single value (allowed: %s)",
                            k->type == RS_T_MAP ? "a mapping" : "a list", allowed);
    }
}

int rs_schema_defaults(rs_schema_ctx *c, const rs_map *m, void *base)
{
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        size_t old = rs_yaml_push(c->y, k->name);
        int rc = 0;
        if (k->type == RS_T_MAP)
            rc = rs_schema_defaults(c, k->sub, (char *)base + k->offset);
        else if (k->def)
            rc = rs_set_text(c, 0, k, k->def, 0, base);
        else if (k->flags & RS_F_UNSET)
            rs_put_dbl(base, k->offset, -1.0);
        rs_yaml_pop(c->y, old);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- walking ---------------------------------------------------------------------------------- */

static int rs_parse_scalar(rs_schema_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    char allowed[512];
    if (node->type != YAML_SCALAR_NODE) {
        rs_schema_allowed(k, allowed, sizeof allowed);
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "expected a single value, got %s (allowed: %s)",
                            rs_yaml_what(node), allowed);
    }
    if (!rs_yaml_is_text(node))
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL,
                            "the value contains a NUL character (allowed: text without one)");
    return rs_set_text(c, rs_yaml_line(node), k, rs_yaml_scalar(node), rs_yaml_is_null(node), base);
}

static int rs_parse_pair(rs_schema_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    char allowed[256];
    rs_schema_allowed(k, allowed, sizeof allowed);
    if (node->type != YAML_SEQUENCE_NODE || rs_yaml_count(node) != 2)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "expected a list of two numbers, got %s%s (allowed: %s)",
                            node->type == YAML_SEQUENCE_NODE ? "a list of " : rs_yaml_what(node),
                            node->type == YAML_SEQUENCE_NODE ? "another length" : "", allowed);
    for (size_t i = 0; i < 2; i++) {
        yaml_node_t *item = rs_yaml_item(c->y, node, i);
        long long v = 0;
        if (item == NULL || item->type != YAML_SCALAR_NODE)
            return rs_yaml_fail(c->y, rs_yaml_line(item ? item : node), NULL,
                                "expected two numbers, got %s (allowed: %s)", rs_yaml_what(item), allowed);
        char shown[64];
        rs_yaml_show(rs_yaml_scalar(item), shown, sizeof shown);
        int rc = rs_yaml_parse_ll(rs_yaml_scalar(item), &v);
        if (rc == -1 || !rs_yaml_is_text(item))
            return rs_yaml_fail(c->y, rs_yaml_line(item), NULL, "%s is not a whole number (allowed: %s)", shown,
                                allowed);
        if (rc == -2 || (double)v < k->min || (double)v > k->max)
            return rs_yaml_fail(c->y, rs_yaml_line(item), NULL, "%s is out of range (allowed: %s)", shown, allowed);
        rs_put_i32(base, k->offset + i * sizeof(int32_t), (int32_t)v);
    }
    return 0;
}

static int rs_parse_colls(rs_schema_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    if (node->type == YAML_SCALAR_NODE)
        return rs_parse_scalar(c, node, k, base);
    char allowed[256];
    rs_schema_allowed(k, allowed, sizeof allowed);
    if (node->type != YAML_SEQUENCE_NODE)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL,
                            "expected a name or a list of names, got %s (allowed: %s)", rs_yaml_what(node), allowed);
    rs_put_i32(base, k->offset2, 0);
    size_t n = rs_yaml_count(node);
    if (n == 0)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "the list is empty (allowed: %s)", allowed);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = rs_yaml_item(c->y, node, i);
        if (item == NULL || item->type != YAML_SCALAR_NODE || rs_yaml_is_null(item) || !rs_yaml_is_text(item))
            return rs_yaml_fail(c->y, rs_yaml_line(item ? item : node), NULL,
                                "expected a collective name, got %s (allowed: %s)", rs_yaml_what(item), allowed);
        if (rs_add_coll(c, rs_yaml_line(item), k, rs_yaml_scalar(item), base) != 0)
            return -1;
    }
    return 0;
}

static int rs_parse_seq(rs_schema_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    char allowed[512];
    rs_schema_allowed(k, allowed, sizeof allowed);
    if (node->type != YAML_SEQUENCE_NODE)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "expected a list, got %s (allowed: %s)",
                            rs_yaml_what(node), allowed);
    size_t n = rs_yaml_count(node);
    if (n > RS_SCHEMA_MAX_ITEMS)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "%zu entries (allowed: at most %u)", n,
                            RS_SCHEMA_MAX_ITEMS);
    const rs_map *m = k->sub;
    char *items = calloc(n ? n : 1, m->item_size);
    if (items == NULL)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "out of memory");
    /* owned by the struct from here on: its free releases it whatever happens next */
    free(rs_get_ptr(base, k->offset));
    memcpy((char *)base + k->offset, &items, sizeof items);
    memcpy((char *)base + k->offset2, &n, sizeof n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = rs_yaml_item(c->y, node, i);
        void *ib = items + i * m->item_size;
        size_t old = rs_yaml_push_index(c->y, i);
        int rc = item == NULL ? rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "missing entry")
                              : rs_schema_defaults(c, m, ib);
        if (rc == 0) {
            if (m->item_init)
                m->item_init(ib, c->root);
            rs_put_i32(ib, m->line_offset, rs_yaml_line(item));
            int owner = c->owner_line;
            c->owner_line = rs_yaml_line(item);
            rc = rs_schema_parse(c, item, m, ib);
            c->owner_line = owner;
        }
        rs_yaml_pop(c->y, old);
        if (rc)
            return rc;
    }
    return 0;
}

static int rs_parse_value(rs_schema_ctx *c, yaml_node_t *node, const rs_key *k, void *base)
{
    switch (k->type) {
    case RS_T_MAP:
        return rs_schema_parse(c, node, k->sub, (char *)base + k->offset);
    case RS_T_SEQ:
        return rs_parse_seq(c, node, k, base);
    case RS_T_PAIR:
        return rs_parse_pair(c, node, k, base);
    case RS_T_COLLS:
        return rs_parse_colls(c, node, k, base);
    default:
        return rs_parse_scalar(c, node, k, base);
    }
}

int rs_schema_parse(rs_schema_ctx *c, yaml_node_t *node, const rs_map *m, void *base)
{
    char allowed[512];
    rs_key_list(m, allowed, sizeof allowed);
    if (node->type != YAML_MAPPING_NODE)
        return rs_yaml_fail(c->y, rs_yaml_line(node), NULL, "expected a mapping, got %s (allowed: a mapping of %s)",
                            rs_yaml_what(node), allowed);
    const char *names[32];
    size_t nnames = 0;
    for (size_t i = 0; i < m->nkeys && nnames < sizeof names / sizeof names[0]; i++)
        names[nnames++] = m->keys[i].name;
    if (rs_yaml_check_keys(c->y, node, names, nnames, allowed) != 0)
        return -1;
    const rs_schema *s = c->schema;
    int owner = c->owner_line ? c->owner_line : rs_yaml_line(node);
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        yaml_node_t *kn = NULL;
        yaml_node_t *v = rs_yaml_get(c->y, node, k->name, &kn);
        int32_t variant = rs_get_i32(c->root, s->variant_offset);
        unsigned mask = RS_K(variant);
        if (v == NULL) {
            char what[512], kinds[128];
            rs_schema_allowed(k, what, sizeof what);
            if (k->flags & RS_F_REQUIRED)
                return rs_yaml_fail(c->y, owner, k->name, "missing (allowed: %s)", what);
            if (k->req_kinds & mask) {
                rs_schema_variant_list(s, mask, kinds, sizeof kinds);
                return rs_yaml_fail(c->y, owner, k->name, "missing: %s %s needs it (allowed: %s)", s->variant_key,
                                    kinds, what);
            }
            continue;
        }
        if (k->kinds && !(k->kinds & mask)) {
            char kinds[128];
            rs_schema_variant_list(s, k->kinds, kinds, sizeof kinds);
            return rs_yaml_fail(c->y, rs_yaml_line(kn), k->name, "not used by %s %s (allowed with %s: %s)",
                                s->variant_key, rs_yaml_enum_name(s->variants, variant), s->variant_key, kinds);
        }
        size_t old = rs_yaml_push(c->y, k->name);
        c->owner_line = rs_yaml_line(kn);
        int rc = rs_parse_value(c, v, k, base);
        c->owner_line = owner;
        rs_yaml_pop(c->y, old);
        if (rc)
            return rc;
    }
    return m->check ? m->check(c, node, base) : 0;
}

/* ---- writing ---------------------------------------------------------------------------------- */

int rs_schema_is_set(const rs_key *k, const void *base)
{
    if ((k->flags & RS_F_UNSET) && rs_get_dbl(base, k->offset) < 0)
        return 0;
    /* a count or size with no default left at 0 is worked out at run time (a scenario's
     * workload.channels, device.scratch) */
    if (!k->def && !(k->flags & RS_F_REQUIRED) &&
        ((k->type == RS_T_INT && k->store == RS_S_U32 && rs_get_u32(base, k->offset) == 0) ||
         (k->type == RS_T_UNIT && k->store == RS_S_U64 && rs_get_u64(base, k->offset) == 0)))
        return 0;
    if (k->type == RS_T_SEQ && rs_get_size(base, k->offset2) == 0)
        return 0;
    if (k->type == RS_T_STR && rs_get_ptr(base, k->offset) == NULL)
        return 0;
    return 1;
}

/* YAML double-quoted text. */
static void rs_put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void rs_schema_write_value(FILE *f, const rs_key *k, const void *base)
{
    char buf[64];
    switch (k->type) {
    case RS_T_INT:
        if (k->store == RS_S_U32)
            fprintf(f, "%u", (unsigned)rs_get_u32(base, k->offset));
        else
            fprintf(f, "%d", (int)rs_get_i32(base, k->offset));
        break;
    case RS_T_U64:
        fprintf(f, "%llu", (unsigned long long)rs_get_u64(base, k->offset));
        break;
    case RS_T_UNIT: {
        double v = k->store == RS_S_DBL   ? rs_get_dbl(base, k->offset)
                   : k->store == RS_S_U32 ? (double)rs_get_u32(base, k->offset)
                                          : (double)rs_get_u64(base, k->offset);
        rs_units_format(v, k->unit, buf, sizeof buf);
        fputs(buf, f);
        break;
    }
    case RS_T_BOOL:
    case RS_T_ENUM:
        fputs(rs_yaml_enum_name(k->names, rs_get_i32(base, k->offset)), f);
        break;
    case RS_T_STR:
        rs_put_quoted(f, rs_get_ptr(base, k->offset));
        break;
    case RS_T_PAIR:
        fprintf(f, "[%d, %d]", (int)rs_get_i32(base, k->offset), (int)rs_get_i32(base, k->offset + 4));
        break;
    case RS_T_COLLS: {
        const int32_t *colls = (const int32_t *)((const char *)base + k->offset);
        int32_t count = rs_get_i32(base, k->offset2);
        fputc('[', f);
        for (int32_t i = 0; i < count; i++)
            fprintf(f, "%s%s", i ? ", " : "", rs_yaml_enum_name(k->names, colls[i]));
        fputc(']', f);
        break;
    }
    default:
        break;
    }
}

static void rs_write_flow(FILE *f, const rs_map *m, const void *base, rs_schema_shown_fn shown, const void *root)
{
    int first = 1;
    fputc('{', f);
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        if (!shown(root, m, k, base))
            continue;
        fprintf(f, "%s%s: ", first ? "" : ", ", k->name);
        first = 0;
        if (k->type == RS_T_MAP)
            rs_write_flow(f, k->sub, (const char *)base + k->offset, shown, root);
        else
            rs_schema_write_value(f, k, base);
    }
    fputc('}', f);
}

void rs_schema_write_block(FILE *f, const rs_map *m, const void *base, int indent, rs_schema_shown_fn shown,
                           const void *root)
{
    for (size_t i = 0; i < m->nkeys; i++) {
        const rs_key *k = &m->keys[i];
        if (!shown(root, m, k, base))
            continue;
        fprintf(f, "%*s%s:", indent, "", k->name);
        if (k->type == RS_T_MAP && k->sub->flow) {
            fputc(' ', f);
            rs_write_flow(f, k->sub, (const char *)base + k->offset, shown, root);
            fputc('\n', f);
        } else if (k->type == RS_T_MAP) {
            fputc('\n', f);
            rs_schema_write_block(f, k->sub, (const char *)base + k->offset, indent + 2, shown, root);
        } else if (k->type == RS_T_SEQ) {
            fputc('\n', f);
            const char *items = rs_get_ptr(base, k->offset);
            size_t n = rs_get_size(base, k->offset2);
            for (size_t j = 0; j < n; j++) {
                fprintf(f, "%*s  - ", indent, "");
                rs_write_flow(f, k->sub, items + j * k->sub->item_size, shown, root);
                fputc('\n', f);
            }
        } else {
            fputc(' ', f);
            rs_schema_write_value(f, k, base);
            fputc('\n', f);
        }
    }
}
