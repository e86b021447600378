/* rs_yaml.h — the one YAML walker of the program's file formats: libyaml documents, FILE:LINE: KEY: PROBLEM errors, key paths, names with did-you-mean. */
#ifndef RS_YAML_H
#define RS_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "ncl/ncl_names.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RS_YAML_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RS_YAML_PRINTF(f, a)
#endif

/** Deepest nesting a document may have (a scenario nests 4 deep; anything deeper is junk, and
 *  refusing it before libyaml builds the tree keeps hostile input from growing it). */
#define RS_YAML_MAX_DEPTH 32

/**
 * One YAML file being read: its document, where messages go, and the dotted path of the key
 * being read ("topology.overrides[0]"). Every message has one shape,
 *     FILE:LINE: KEY: PROBLEM (allowed: ...)
 * one line (control characters become '?'), and only the first failure is kept: the walk stops
 * there, and what fails on the way out cannot overwrite the message that says why.
 */
typedef struct rs_yaml {
    const char *file;      /**< as messages name it */
    yaml_document_t doc;
    int loaded;            /**< doc holds a document (rs_yaml_free deletes it) */
    char *err;             /**< the message (NULL or errlen 0: none is written) */
    size_t errlen;
    int failed;            /**< a message has been written */
    char path[256];        /**< key path of the value being read, "" at the top */
    size_t pathlen;
} rs_yaml;

/** An empty walker for `file` (the name messages use) writing its message to err. */
void rs_yaml_init(rs_yaml *y, const char *file, char *err, size_t errlen);

/**
 * Parses len bytes of text (no terminator needed). Returns 0 with the document loaded — its root
 * is NULL when the text holds no document, which the caller words ("the file is empty (allowed:
 * ...)") — or -1 with the message: a syntax error with libyaml's problem and context ("yaml:
 * mapping values are not allowed in this context"), a tab where indentation was expected, bytes
 * that are not UTF-8 (with the byte and its offset), a second document, nesting deeper than
 * RS_YAML_MAX_DEPTH. The key of these messages is "yaml".
 */
int rs_yaml_load(rs_yaml *y, const char *text, size_t len);

/** Deletes the document; the walker may be loaded again. */
void rs_yaml_free(rs_yaml *y);

/** A whole file, NUL-terminated (*len bytes before the NUL, malloc'ed), or NULL with the reason in
 *  why: "cannot open: REASON", "is a directory", "larger than MAX bytes", "cannot read: REASON",
 *  "out of memory"; errno is then that of the failing call. */
char *rs_yaml_read_file(const char *path, size_t max, size_t *len, char *why, size_t whylen);

/** `rel` taken relative to the directory of `file` (rel itself when absolute or file has no
 *  directory), malloc'ed: where a file names another file. NULL when out of memory. */
char *rs_yaml_sibling(const char *file, const char *rel);

/** The base name of `file` without .yaml or .yml, malloc'ed (a file's default name). */
char *rs_yaml_base_name(const char *file);

/**
 * Writes the message "FILE:LINE: KEY: PROBLEM" unless one was written, and returns -1. KEY is
 * the current path with `child` appended ("." before a name, nothing before "[i]"), or `child`
 * alone at the top, or the path alone when child is NULL ("(document)" at the top).
 */
int rs_yaml_fail(rs_yaml *y, int line, const char *child, const char *fmt, ...) RS_YAML_PRINTF(4, 5);

/** Appends ".name" (or "name" at the top) / "[i]" to the path; returns what rs_yaml_pop restores. */
size_t rs_yaml_push(rs_yaml *y, const char *name);
size_t rs_yaml_push_index(rs_yaml *y, size_t i);
void rs_yaml_pop(rs_yaml *y, size_t old);

/* ---- nodes ------------------------------------------------------------------------------------ */

/** The root node, NULL when the text held no document. */
yaml_node_t *rs_yaml_root(rs_yaml *y);
/** The node of an id (pairs and items hold ids), NULL for none. */
yaml_node_t *rs_yaml_node(rs_yaml *y, int id);
/** 1-based line where a node starts (1 for NULL). */
int rs_yaml_line(const yaml_node_t *n);
/** A scalar's text (the node must be a scalar). */
const char *rs_yaml_scalar(const yaml_node_t *n);
/** A scalar's text, NULL for NULL or a mapping or a list. */
const char *rs_yaml_text(const yaml_node_t *n);
/** 1 for a scalar whose text holds no NUL character (C string functions see all of it). */
int rs_yaml_is_text(const yaml_node_t *n);
/** 1 for a plain empty value: nothing, ~, null (YAML 1.2 core schema). */
int rs_yaml_is_null(const yaml_node_t *n);
/** What a node is, for "expected X, got Y": "a mapping", "a list", "an empty value", "a single
 *  value", "nothing" (NULL). */
const char *rs_yaml_what(const yaml_node_t *n);

/** Entries of a mapping or a list (0 for a scalar or NULL). */
size_t rs_yaml_count(const yaml_node_t *n);
/** Item i of a list, NULL past its end. */
yaml_node_t *rs_yaml_item(rs_yaml *y, const yaml_node_t *seq, size_t i);
/** Key and value of pair i of a mapping, NULL past its end. */
yaml_node_t *rs_yaml_pair_key(rs_yaml *y, const yaml_node_t *map, size_t i);
yaml_node_t *rs_yaml_pair_value(rs_yaml *y, const yaml_node_t *map, size_t i);
/** The value of `key` in a mapping (and the key's node in *keynode when asked), NULL when the
 *  node is not a mapping or has no such key. */
yaml_node_t *rs_yaml_get(rs_yaml *y, const yaml_node_t *map, const char *key, yaml_node_t **keynode);

/**
 * Checks the keys of a mapping against `names` (n of them): each a plain name, known, written
 * once. Messages name the key under the current path: "a key must be a plain name, got a list
 * (allowed: ALLOWED)", "unknown key, did you mean 'bandwidth'? (allowed: ALLOWED)", "duplicate
 * key, first at line 7 (allowed: each key once)". Returns 0 or -1.
 */
int rs_yaml_check_keys(rs_yaml *y, const yaml_node_t *map, const char *const *names, size_t n,
                       const char *allowed);

/* ---- values ----------------------------------------------------------------------------------- */

/** Strict whole number: optional sign, digits, nothing else. 0, -1 not a number, -2 overflow. */
int rs_yaml_parse_ll(const char *s, long long *out);
/** Unsigned 64-bit, decimal or 0x hex. 0, -1 not a number, -2 overflow. */
int rs_yaml_parse_u64(const char *s, uint64_t *out);
/** A value as messages quote it: 'text', clipped to 48 characters with "...". */
void rs_yaml_show(const char *text, char *buf, size_t len);
/** The closest of `names` to s when it is close enough to be a typo of it, else NULL. */
const char *rs_yaml_suggest(const char *s, const char *const *names, size_t n);

/* ---- names ------------------------------------------------------------------------------------ */

/** One accepted spelling of a value (the engine's name type: {name, value, alias}). */
typedef ncl_name rs_yaml_name;

/** The names of one kind of value; the first entry of each value is the one printed and listed
 *  as allowed, later ones are aliases. The engine's kinds (collectives, algorithms, dtypes, ops)
 *  are not written again: names NULL means ncl_names(kind), the one table every tool reads. */
typedef struct rs_yaml_enum {
    const char *what; /**< "a topology kind", for "'x' is not a topology kind" */
    const rs_yaml_name *names;
    size_t count;
    ncl_name_kind kind; /**< with names NULL */
    int skip;           /**< a value of the engine's kind that is not allowed here, or -1 */
    const rs_yaml_name *extra; /**< with names NULL: nextra more after the engine's */
    size_t nextra;
} rs_yaml_enum;
/* A table of its own; the engine's names of kind but the value skip's; the engine's and more. */
#define RS_YAML_ENUM(what, names) {what, names, sizeof(names) / sizeof((names)[0]), NCL_NAMES_KIND_COUNT, -1, NULL, 0}
#define RS_YAML_ENGINE_ENUM(what, kind, skip) {what, NULL, 0, kind, skip, NULL, 0}
#define RS_YAML_ENGINE_ENUM_AND(what, kind, extra, nextra) {what, NULL, 0, kind, -1, extra, nextra}

/** The printed name of a value, "?" for none. */
const char *rs_yaml_enum_name(const rs_yaml_enum *e, int value);
/** "a, b, c": the printed names, aliases left out. */
void rs_yaml_enum_list(const rs_yaml_enum *e, char *buf, size_t len);
/** 0 with *value set when s is one of the names (aliases included), else -1. */
int rs_yaml_enum_lookup(const rs_yaml_enum *e, const char *s, int *value);
/** The message for text that is none of the names, its key named as rs_yaml_fail names it: "'flaot'
 *  is not a dtype, did you mean 'float'? (allowed: ...)". Returns -1. */
int rs_yaml_bad_enum(rs_yaml *y, int line, const char *child, const rs_yaml_enum *e, const char *text);

#ifdef __cplusplus
}
#endif
#endif
