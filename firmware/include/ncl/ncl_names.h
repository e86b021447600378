/* ncl_names.h — the one table of names: collectives, algorithms, dtypes, ops, results (and their messages), task kinds and buffers, with their accepted aliases and parsing. */
#ifndef NCL_NAMES_H
#define NCL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every tool that prints or reads one of these names asks here, so a name is spelled once: the
 * report, the scenario loader, the CLI and the engine's own messages agree. Each value has one
 * canonical name (what the *_name functions return and every report prints) and may have
 * aliases that parsing also accepts (other spellings users type: nccl-tests' "half" is the
 * canonical fp16 name, "fp16" and "float16" are aliases). Matching is exact and case-sensitive.
 */

/** The kinds of names the table holds. */
typedef enum ncl_name_kind {
    NCL_NAMES_COLL = 0,  /**< ncl_coll: allreduce, broadcast, ... */
    NCL_NAMES_ALGO,      /**< ncl_algo: auto, ring, ... */
    NCL_NAMES_DTYPE,     /**< ncl_dtype: nccl-tests' names (int8, ..., half, bfloat16, float, double) */
    NCL_NAMES_OP,        /**< ncl_op: sum, prod, max, min, avg */
    NCL_NAMES_RESULT,    /**< ncl_result: "success", "timeout", ... (ncl_strerror's first words) */
    NCL_NAMES_TASK_KIND, /**< ncl_task_kind (ncl_sched.h): WRITE, ...; aliases are the user-schedule spellings */
    NCL_NAMES_BUF,       /**< ncl_buf (ncl_sched.h): SEND, RECV, SCRATCH */
    NCL_NAMES_KIND_COUNT
} ncl_name_kind;

/** One entry of the table. */
typedef struct ncl_name {
    const char *name;
    int32_t value; /**< the enum value it names */
    uint8_t alias; /**< 0: the canonical name of `value`; 1: an accepted alias */
} ncl_name;

/** The entries of `kind` in a stable order, *count of them (NULL and 0 for an unknown kind):
 *  the canonical names first, in value order (entry v names value v), then the aliases. For
 *  "allowed: ..." lists and did-you-mean suggestions. */
const ncl_name *ncl_names(ncl_name_kind kind, size_t *count);
/** The canonical name of `value`, or "?" when it names nothing. */
const char *ncl_name_of(ncl_name_kind kind, int value);
/** Sets *value to what `text` names (canonical name or alias) and returns 0; -1 (and *value
 *  untouched) when it names nothing or text is NULL. */
int ncl_name_parse(ncl_name_kind kind, const char *text, int *value);

/* Typed forms. The *_name functions return "?" for a value out of range; the *_parse functions
 * return 0 and set *out, or -1 and leave it. */
const char *ncl_coll_name(ncl_coll coll);
const char *ncl_algo_name(ncl_algo algo);
const char *ncl_dtype_name(ncl_dtype dtype);
const char *ncl_op_name(ncl_op op);
/** "success", "timeout", "invalid argument", ...: the short name of a result. */
const char *ncl_result_name(ncl_result result);
/** What went wrong and what to do next: the result's name, ": ", advice. Never NULL. */
const char *ncl_strerror(ncl_result result);
/** "WRITE", "NOTIFY_WAIT", ... (ncl_task_kind). */
const char *ncl_task_kind_name(uint32_t kind);
/** "SEND", "RECV", "SCRATCH" (ncl_buf). */
const char *ncl_buf_name(uint32_t buf);

int ncl_coll_parse(const char *text, ncl_coll *out);
int ncl_algo_parse(const char *text, ncl_algo *out);
int ncl_dtype_parse(const char *text, ncl_dtype *out);
int ncl_op_parse(const char *text, ncl_op *out);
/** A task kind (out: an ncl_task_kind value). */
int ncl_task_kind_parse(const char *text, uint32_t *out);
/** A buffer (out: an ncl_buf value). */
int ncl_buf_parse(const char *text, uint32_t *out);

#ifdef __cplusplus
}
#endif
#endif
