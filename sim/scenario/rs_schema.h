/* rs_schema.h — typed key tables (rs_key, rs_map) and the engine that reads a YAML mapping into a C struct against one, defaults and units included. */
#ifndef RS_SCHEMA_H
#define RS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rs_units.h"
#include "rs_yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rs_schema_ctx rs_schema_ctx;
typedef struct rs_map rs_map;

/** What a key holds and how it is read. */
typedef enum rs_type {
    RS_T_INT,   /**< whole number in [min, max], stored as int32 or uint32 */
    RS_T_U64,   /**< whole number up to 2^64-1, decimal or 0x hex */
    RS_T_UNIT,  /**< number + unit of `unit` in [min, max], stored as double (SI) or whole bytes */
    RS_T_BOOL,  /**< true/false (`names`), stored as int32 */
    RS_T_ENUM,  /**< one of `names`, stored as int32 */
    RS_T_STR,   /**< text, malloc'ed char * at offset */
    RS_T_PAIR,  /**< [x, y]: two whole numbers in [min, max], stored as int32[2] */
    RS_T_COLLS, /**< one collective or a list of them: int32_t[max] at offset (values 0 .. max - 1 of
                     names), count at offset2 */
    RS_T_MAP,   /**< a mapping described by `sub`, its struct at offset */
    RS_T_SEQ    /**< a list of mappings `sub`: malloc'ed items at offset, size_t count at offset2 */
} rs_type;

/** Where a number is stored. */
typedef enum rs_store { RS_S_NONE, RS_S_I32, RS_S_U32, RS_S_U64, RS_S_DBL } rs_store;

#define RS_F_REQUIRED 1u  /**< every file must give it */
#define RS_F_MIN_EXCL 2u  /**< value must be > min, not >= */
#define RS_F_UNSET 4u     /**< absent = -1.0 ("keep the built value"); left out of dumps */

/** Bit of one value of the schema's variant key in rs_key.kinds. */
#define RS_K(kind) (1u << (kind))

/** One key of a mapping. */
typedef struct rs_key {
    const char *name;
    rs_type type;
    rs_unit_kind unit;
    rs_store store;
    size_t offset, offset2;
    double min, max;
    unsigned flags;
    unsigned kinds;        /**< values of the variant key that use it (0: all) */
    unsigned req_kinds;    /**< values of the variant key that need it */
    const char *def;       /**< default as written in a file; NULL: none */
    const char *def_doc;   /**< reference text for a default `def` cannot say */
    const rs_yaml_enum *names;
    const rs_map *sub;
    const char *desc;
} rs_key;

/** A mapping: its keys, how it is written back, and the check that runs once it is read. */
struct rs_map {
    const char *path;   /**< in the reference: "topology.link" */
    const char *title;  /**< one line for the reference */
    const rs_key *keys;
    size_t nkeys;
    int flow;           /**< dumped as one {flow} mapping */
    size_t item_size;   /**< list items: struct size */
    size_t line_offset; /**< list items: offset of the int32 line the item starts on */
    /** list items: fills an item's defaults that come from elsewhere in the file (before its keys) */
    void (*item_init)(void *item, const void *root);
    /** checks what the keys alone cannot (0, or -1 after one message) */
    int (*check)(rs_schema_ctx *c, yaml_node_t *node, void *base);
};

/**
 * A file format: its top mapping and its variant key — the key whose value decides which other
 * keys apply (a scenario's topology.kind: `dims` only for torus2d). Keys list the values that use
 * them (rs_key.kinds) and need them (req_kinds), as bits of the int32 stored at variant_offset in
 * the root struct.
 */
typedef struct rs_schema {
    const rs_map *top;
    const char *variant_key;        /**< "kind", in messages */
    const rs_yaml_enum *variants;   /**< its names */
    size_t variant_offset;          /**< where the root struct stores its value */
} rs_schema;

/** One file being read against a schema. */
struct rs_schema_ctx {
    rs_yaml *y;                 /**< the document, the key path and the message */
    const rs_schema *schema;
    void *root;                 /**< the struct the top map fills */
    int owner_line;             /**< line of the key whose value is read (0 at the top) */
    void *state;                /**< the format's checks' own state */
};

/** Applies the defaults of every key of m (recursively) to base. Defaults are parsed by the same
 *  code as file values, so a bad default fails every load (and the tests) instead of slipping
 *  through. 0, or -1 after one message. */
int rs_schema_defaults(rs_schema_ctx *c, const rs_map *m, void *base);

/**
 * Reads a mapping node into base against m: unknown and duplicate keys first (in file order),
 * then every key of m in table order (so the variant key is known before the keys that depend on
 * it, and a key before the keys that inherit from it), then m's check. 0, or -1 after one message.
 */
int rs_schema_parse(rs_schema_ctx *c, yaml_node_t *node, const rs_map *m, void *base);

/** Line of `key` in a mapping: where the key is written, else the owner's line. */
int rs_schema_key_line(rs_schema_ctx *c, yaml_node_t *map, const char *key);
/** Line of sub.key in map: of `key` if written, else of `sub`, else of the owner. */
int rs_schema_sub_key_line(rs_schema_ctx *c, yaml_node_t *map, const char *sub, const char *key);
/** Line of `field` of item i of the list `seqkey` in map (field NULL: the item), falling back to
 *  the item, the list, the map. */
int rs_schema_item_line(rs_schema_ctx *c, yaml_node_t *map, const char *seqkey, size_t i, const char *field);

/** What a key accepts, for "(allowed: ...)". */
void rs_schema_allowed(const rs_key *k, char *buf, size_t len);
/** The type of a key as the reference names it: "number", "size", "name or list", ... */
const char *rs_schema_type_name(const rs_key *k);
/** The schema's variant values in a mask, "torus2d" or "switch, fat_tree, cluster". */
void rs_schema_variant_list(const rs_schema *s, unsigned mask, char *buf, size_t len);

/** 0 when a key's value at base is its "not given" state (an RS_F_UNSET number below 0, a NULL
 *  text, an empty list, a count with no default left at 0: worked out later), else 1. */
int rs_schema_is_set(const rs_key *k, const void *base);
/** Writes a key's value at base as YAML with units (not RS_T_MAP/RS_T_SEQ). */
void rs_schema_write_value(FILE *f, const rs_key *k, const void *base);

/** Which keys a dump writes (1) or leaves out (0); `root` is the whole struct. */
typedef int (*rs_schema_shown_fn)(const void *root, const rs_map *m, const rs_key *k, const void *base);
/** Writes base as block YAML against m, `indent` spaces deep; maps marked flow and list items as
 *  {flow} mappings. */
void rs_schema_write_block(FILE *f, const rs_map *m, const void *base, int indent, rs_schema_shown_fn shown,
                           const void *root);

#ifdef __cplusplus
}
#endif
#endif
