/* rs_yaml.c — the one YAML walker: loads a file or string into libyaml's document, words every error FILE:LINE: KEY: PROBLEM. */
#define _POSIX_C_SOURCE 200809L
#include "rs_yaml.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RS_YAML_COUNT(a) (sizeof(a) / sizeof((a)[0]))

void rs_yaml_init(rs_yaml *y, const char *file, char *err, size_t errlen)
{
    memset(y, 0, sizeof *y);
    y->file = file;
    y->err = err;
    y->errlen = errlen;
}

void rs_yaml_free(rs_yaml *y)
{
    if (y->loaded)
        yaml_document_delete(&y->doc);
    y->loaded = 0;
}

/* ---- errors and paths ------------------------------------------------------------------------- */

int rs_yaml_fail(rs_yaml *y, int line, const char *child, const char *fmt, ...)
{
    if (y->failed)
        return -1;
    y->failed = 1;
    if (y->err == NULL || y->errlen == 0)
        return -1;
    char key[320];
    if (child && y->pathlen)
        snprintf(key, sizeof key, "%s%s%s", y->path, child[0] == '[' ? "" : ".", child);
    else if (child)
        snprintf(key, sizeof key, "%s", child);
    else
        snprintf(key, sizeof key, "%s", y->pathlen ? y->path : "(document)");
    int n = snprintf(y->err, y->errlen, "%s:%d: %s: ", y->file, line, key);
    if (n >= 0 && (size_t)n < y->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(y->err + n, y->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    /* one line, whatever the file contained */
    for (char *p = y->err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return -1;
}

size_t rs_yaml_push(rs_yaml *y, const char *name)
{
    size_t old = y->pathlen;
    snprintf(y->path + old, sizeof y->path - old, "%s%s", old ? "." : "", name);
    y->pathlen = strlen(y->path);
    return old;
}

size_t rs_yaml_push_index(rs_yaml *y, size_t i)
{
    size_t old = y->pathlen;
    snprintf(y->path + old, sizeof y->path - old, "[%zu]", i);
    y->pathlen = strlen(y->path);
    return old;
}

void rs_yaml_pop(rs_yaml *y, size_t old)
{
    y->pathlen = old;
    y->path[old] = '\0';
}

/* ---- loading ---------------------------------------------------------------------------------- */

/* libyaml's error in our words: the reader's (not UTF-8) with byte and offset, a tab where an
 * indentation was expected, otherwise its problem and the construct it was in. */
/* What libyaml's problem wants instead, as the "allowed" every loader message ends with. */
static const char *rs_yaml_hint(const char *problem)
{
    static const struct {
        const char *problem, *hint;
    } hints[] = {
        {"expected ',' or '}'", "entries separated by ',' and the mapping closed with '}' on its line"},
        {"expected ',' or ']'", "items separated by ',' and the list closed with ']' on its line"},
        {"mapping values are not allowed", "one 'key: value' per line; quote a value that holds ': '"},
        {"did not find expected key", "the keys of a mapping at one indentation, each 'key: value'"},
        {"did not find expected '-'", "list items at one indentation, each '- value'"},
        {"undefined alias", "an anchor &name defined before its alias *name"},
        {"unexpected end of stream", "every quote and bracket closed"},
        {"cannot start any token", "spaces for indentation; quote a value starting with @ or `"},
        {"did not find expected node content", "a value after the key or '-'"},
    };
    for (size_t i = 0; i < RS_YAML_COUNT(hints); i++)
        if (strstr(problem, hints[i].problem))
            return hints[i].hint;
    return "YAML mappings of 'key: value', indented with spaces; scenarios/README.md";
}

static int rs_yaml_error(rs_yaml *y, const yaml_parser_t *p, const char *text, size_t len)
{
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->error == YAML_MEMORY_ERROR)
        return rs_yaml_fail(y, 1, "yaml", "out of memory");
    if (p->error == YAML_READER_ERROR) {
        size_t end = p->problem_offset < len ? p->problem_offset : len;
        int line = 1;
        for (size_t i = 0; i < end; i++)
            line += text[i] == '\n';
        if (p->problem_value >= 0)
            return rs_yaml_fail(y, line, "yaml", "%s: byte 0x%02X at offset %zu (allowed: UTF-8 text)", problem,
                                (unsigned)p->problem_value & 0xffu, p->problem_offset);
        return rs_yaml_fail(y, line, "yaml", "%s at offset %zu (allowed: UTF-8 text)", problem, p->problem_offset);
    }
    int line = (int)p->problem_mark.line + 1;
    size_t at = p->problem_mark.index;
    if (at < len && text[at] == '\t')
        return rs_yaml_fail(y, line, "yaml", "%s: a tab (allowed: spaces for indentation)", problem);
    if (p->context)
        return rs_yaml_fail(y, line, "yaml", "%s (%s that starts at line %d) (allowed: %s)", problem, p->context,
                            (int)p->context_mark.line + 1, rs_yaml_hint(problem));
    return rs_yaml_fail(y, line, "yaml", "%s (allowed: %s)", problem, rs_yaml_hint(problem));
}

/* A first pass over the events: syntax errors, more than one document, absurd nesting, all
 * found before libyaml builds a tree (whose size would grow with the nesting). */
static int rs_yaml_precheck(rs_yaml *y, const char *text, size_t len)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return rs_yaml_fail(y, 1, "yaml", "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, docs = 0, rc = 0, done = 0;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = rs_yaml_error(y, &p, text, len);
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        /* a local tag (!custom) would be dropped silently by the walker: say so instead */
        const unsigned char *tag = ev.type == YAML_SCALAR_EVENT           ? ev.data.scalar.tag
                                   : ev.type == YAML_MAPPING_START_EVENT  ? ev.data.mapping_start.tag
                                   : ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.tag
                                                                          : NULL;
        if (tag && strncmp((const char *)tag, "tag:yaml.org,2002:", 18) != 0)
            rc = rs_yaml_fail(y, line, "yaml", "tag '%.60s' (allowed: plain YAML, or the standard !!str, !!int, "
                              "!!float, !!bool, !!map, !!seq; a key's type comes from the key)", (const char *)tag);
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = rs_yaml_fail(y, line, "yaml", "a second document (allowed: one document per file)");
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (++depth > RS_YAML_MAX_DEPTH)
                rc = rs_yaml_fail(y, line, "yaml", "nested deeper than %d levels (allowed: at most %d)",
                                  RS_YAML_MAX_DEPTH, RS_YAML_MAX_DEPTH);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

int rs_yaml_load(rs_yaml *y, const char *text, size_t len)
{
    rs_yaml_free(y);
    if (text == NULL)
        text = "", len = 0;
    if (rs_yaml_precheck(y, text, len) != 0)
        return -1;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return rs_yaml_fail(y, 1, "yaml", "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc = 0;
    if (yaml_parser_load(&p, &y->doc))
        y->loaded = 1;
    else
        rc = rs_yaml_error(y, &p, text, len);
    yaml_parser_delete(&p);
    return rc;
}

char *rs_yaml_read_file(const char *path, size_t max, size_t *len, char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        /* opening a FIFO blocks until something writes to it: never wait on one */
        snprintf(why, whylen, "is not a regular file (a %s)",
                 S_ISFIFO(st.st_mode) ? "FIFO" : S_ISSOCK(st.st_mode) ? "socket" : "device");
        errno = EINVAL;
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int e = errno;
        snprintf(why, whylen, "cannot open: %s", strerror(e));
        errno = e;
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(why, whylen, "is a directory");
        errno = EISDIR;
        return NULL;
    }
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    int e = 0;
    for (;;) {
        if (buf == NULL) {
            snprintf(why, whylen, "out of memory");
            e = ENOMEM;
            break;
        }
        if (used + 1 >= cap) {
            if (cap > max) {
                snprintf(why, whylen, "larger than %zu bytes", max);
                e = EFBIG;
                free(buf);
                buf = NULL;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
            cap *= 2;
            continue;
        }
        size_t got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
        if (got == 0) {
            if (ferror(f)) {
                e = errno;
                snprintf(why, whylen, "cannot read: %s", strerror(e));
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    fclose(f);
    if (buf == NULL) {
        errno = e;
        return NULL;
    }
    buf[used] = '\0';
    *len = used;
    return buf;
}

char *rs_yaml_sibling(const char *file, const char *rel)
{
    const char *slash = strrchr(file, '/');
    size_t dir = rel[0] == '/' || slash == NULL ? 0 : (size_t)(slash - file) + 1;
    char *full = malloc(dir + strlen(rel) + 1);
    if (full) {
        memcpy(full, file, dir);
        strcpy(full + dir, rel);
    }
    return full;
}

char *rs_yaml_base_name(const char *file)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    size_t len = strlen(b);
    if (len > 5 && strcmp(b + len - 5, ".yaml") == 0)
        len -= 5;
    else if (len > 4 && strcmp(b + len - 4, ".yml") == 0)
        len -= 4;
    return strndup(b, len);
}

/* ---- nodes ------------------------------------------------------------------------------------ */

yaml_node_t *rs_yaml_root(rs_yaml *y) { return y->loaded ? yaml_document_get_root_node(&y->doc) : NULL; }

yaml_node_t *rs_yaml_node(rs_yaml *y, int id) { return yaml_document_get_node(&y->doc, id); }

int rs_yaml_line(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 1; }

const char *rs_yaml_scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

const char *rs_yaml_text(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? rs_yaml_scalar(n) : NULL;
}

int rs_yaml_is_text(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE && strlen(rs_yaml_scalar(n)) == n->data.scalar.length;
}

int rs_yaml_is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = rs_yaml_scalar(n);
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

const char *rs_yaml_what(const yaml_node_t *n)
{
    if (n == NULL)
        return "nothing";
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    return rs_yaml_is_null(n) || n->data.scalar.length == 0 ? "an empty value" : "a single value";
}

size_t rs_yaml_count(const yaml_node_t *n)
{
    if (n && n->type == YAML_MAPPING_NODE)
        return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (n && n->type == YAML_SEQUENCE_NODE)
        return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    return 0;
}

yaml_node_t *rs_yaml_item(rs_yaml *y, const yaml_node_t *seq, size_t i)
{
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE || i >= rs_yaml_count(seq))
        return NULL;
    return rs_yaml_node(y, seq->data.sequence.items.start[i]);
}

yaml_node_t *rs_yaml_pair_key(rs_yaml *y, const yaml_node_t *map, size_t i)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE || i >= rs_yaml_count(map))
        return NULL;
    return rs_yaml_node(y, map->data.mapping.pairs.start[i].key);
}

yaml_node_t *rs_yaml_pair_value(rs_yaml *y, const yaml_node_t *map, size_t i)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE || i >= rs_yaml_count(map))
        return NULL;
    return rs_yaml_node(y, map->data.mapping.pairs.start[i].value);
}

yaml_node_t *rs_yaml_get(rs_yaml *y, const yaml_node_t *map, const char *key, yaml_node_t **keynode)
{
    size_t n = rs_yaml_count(map);
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *k = rs_yaml_pair_key(y, map, i);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(rs_yaml_scalar(k), key) == 0) {
            if (keynode)
                *keynode = k;
            return rs_yaml_pair_value(y, map, i);
        }
    }
    return NULL;
}

int rs_yaml_check_keys(rs_yaml *y, const yaml_node_t *map, const char *const *names, size_t n,
                       const char *allowed)
{
    size_t pairs = rs_yaml_count(map);
    for (size_t i = 0; i < pairs; i++) {
        yaml_node_t *kn = rs_yaml_pair_key(y, map, i);
        if (!rs_yaml_is_text(kn))
            return rs_yaml_fail(y, rs_yaml_line(kn ? kn : map), NULL,
                                "a key must be a plain name, got %s (allowed: %s)", rs_yaml_what(kn), allowed);
        const char *name = rs_yaml_scalar(kn);
        size_t known = 0;
        while (known < n && strcmp(names[known], name) != 0)
            known++;
        if (known == n) {
            const char *hint = rs_yaml_suggest(name, names, n);
            char shown[64];
            snprintf(shown, sizeof shown, "%.48s", name);
            if (hint)
                return rs_yaml_fail(y, rs_yaml_line(kn), shown, "unknown key, did you mean '%s'? (allowed: %s)",
                                    hint, allowed);
            return rs_yaml_fail(y, rs_yaml_line(kn), shown, "unknown key (allowed: %s)", allowed);
        }
        for (size_t j = 0; j < i; j++) {
            yaml_node_t *qk = rs_yaml_pair_key(y, map, j);
            if (qk && qk->type == YAML_SCALAR_NODE && strcmp(rs_yaml_scalar(qk), name) == 0)
                return rs_yaml_fail(y, rs_yaml_line(kn), name,
                                    "duplicate key, first at line %d (allowed: each key once)", rs_yaml_line(qk));
        }
    }
    return 0;
}

/* ---- values ----------------------------------------------------------------------------------- */

int rs_yaml_parse_ll(const char *s, long long *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return -1;
    unsigned long long v = 0;
    int over = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (unsigned long long)LLONG_MAX / 10)
            over = 1;
        else
            v = v * 10 + (unsigned)(*p - '0');
        if (v > (unsigned long long)LLONG_MAX)
            over = 1;
    }
    if (*p != '\0')
        return -1;
    if (over)
        return -2;
    *out = neg ? -(long long)v : (long long)v;
    return 0;
}

int rs_yaml_parse_u64(const char *s, uint64_t *out)
{
    const char *p = s;
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (*p == '\0')
        return -1;
    uint64_t v = 0;
    for (; *p; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -2;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

void rs_yaml_show(const char *text, char *buf, size_t len)
{
    snprintf(buf, len, "'%.48s%s'", text, strlen(text) > 48 ? "..." : "");
}

/* Edit distance, case-blind. Names are short; anything long is not a typo of one. */
static size_t rs_yaml_distance(const char *a, size_t la, const char *b, size_t lb)
{
    if (la > 40 || lb > 40)
        return 99;
    size_t row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            char ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z')
                ca = (char)(ca - 'A' + 'a');
            if (cb >= 'A' && cb <= 'Z')
                cb = (char)(cb - 'A' + 'a');
            size_t best = diag + (ca != cb);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *rs_yaml_suggest(const char *s, const char *const *names, size_t n)
{
    size_t len = strlen(s);
    const char *best = NULL;
    size_t bestd = 99;
    for (size_t i = 0; i < n; i++) {
        size_t d = rs_yaml_distance(s, len, names[i], strlen(names[i]));
        if (d < bestd) {
            bestd = d;
            best = names[i];
        }
    }
    /* a typo changes a letter or two; more than that in a short word is another word */
    size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    return bestd <= limit ? best : NULL;
}

/* ---- names ------------------------------------------------------------------------------------ */

/* Entry i of e (its own table, or the engine's of its kind then e->extra), NULL past the last. */
static const rs_yaml_name *rs_yaml_entry(const rs_yaml_enum *e, size_t i)
{
    if (e->names)
        return i < e->count ? &e->names[i] : NULL;
    size_t count;
    const rs_yaml_name *engine = ncl_names(e->kind, &count);
    if (i < count)
        return &engine[i];
    return i - count < e->nextra ? &e->extra[i - count] : NULL;
}

const char *rs_yaml_enum_name(const rs_yaml_enum *e, int value)
{
    const rs_yaml_name *n;
    for (size_t i = 0; (n = rs_yaml_entry(e, i)) != NULL; i++)
        if (n->value == value && value != e->skip)
            return n->name;
    return "?";
}

void rs_yaml_enum_list(const rs_yaml_enum *e, char *buf, size_t len)
{
    size_t used = 0;
    const rs_yaml_name *n;
    buf[0] = '\0';
    for (size_t i = 0; (n = rs_yaml_entry(e, i)) != NULL; i++) {
        int first = n->value != e->skip;
        for (size_t j = 0; j < i; j++)
            first &= rs_yaml_entry(e, j)->value != n->value;
        if (!first)
            continue;
        int k = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n->name);
        if (k < 0 || (size_t)k >= len - used)
            break;
        used += (size_t)k;
    }
}

int rs_yaml_enum_lookup(const rs_yaml_enum *e, const char *s, int *value)
{
    const rs_yaml_name *n;
    for (size_t i = 0; (n = rs_yaml_entry(e, i)) != NULL; i++)
        if (n->value != e->skip && strcmp(n->name, s) == 0) {
            *value = n->value;
            return 0;
        }
    return -1;
}

int rs_yaml_bad_enum(rs_yaml *y, int line, const char *child, const rs_yaml_enum *e, const char *text)
{
    const char *names[32];
    size_t n = 0;
    const rs_yaml_name *entry;
    for (size_t i = 0; (entry = rs_yaml_entry(e, i)) != NULL && n < RS_YAML_COUNT(names); i++)
        if (entry->value != e->skip)
            names[n++] = entry->name;
    const char *hint = rs_yaml_suggest(text, names, n);
    char allowed[256], shown[64];
    rs_yaml_enum_list(e, allowed, sizeof allowed);
    rs_yaml_show(text, shown, sizeof shown);
    if (hint)
        return rs_yaml_fail(y, line, child, "%s is not %s, did you mean '%s'? (allowed: %s)", shown, e->what, hint,
                            allowed);
    return rs_yaml_fail(y, line, child, "%s is not %s (allowed: %s)", shown, e->what, allowed);
}
