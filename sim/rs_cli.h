/* rs_cli.h — command-line options of `ringsim run` and their parser. */
#ifndef RS_CLI_H
#define RS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "ncl/ncl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RS_MAX_RANKS 1024
/* Exit statuses of the program. */
#define RS_EXIT_OK 0
#define RS_EXIT_WRONG 1   /* some result was wrong */
#define RS_EXIT_USAGE 2   /* bad command line or an output file that cannot be written */
#define RS_EXIT_ENGINE 3  /* the engine returned an error (timeout, ...) */

typedef enum rs_backend { RS_BACKEND_HOST = 0, RS_BACKEND_SIM, RS_BACKEND_ZMQ } rs_backend;

/** Everything `ringsim run` was asked to do. */
typedef struct rs_opts {
    rs_backend backend;
    uint64_t minbytes, maxbytes;
    uint64_t stepfactor;      /**< > 1: multiply sizes by it; 0: add stepbytes instead */
    uint64_t stepbytes;
    int iters, warmup_iters;
    int check;
    int nops;
    ncl_op ops[NCL_OP_COUNT];
    int ndtypes;
    ncl_dtype dtypes[NCL_DTYPE_COUNT];
    int ncolls;
    ncl_coll colls[NCL_COLL_COUNT];
    int root;
    int nranks;
    ncl_algo algo;
    uint32_t channels;
    double timeout_s;         /**< 0: the engine's default */
    const char *json_path;    /**< NULL: no JSON */
    uint64_t seed;
    int memprobe;
} rs_opts;

/** Fills opts with the defaults (allreduce + broadcast, 8 ranks, float, sum, 8 B .. 16 MiB). */
void rs_cli_defaults(rs_opts *opts);

/** The sweep's size after `size` (-f multiplies, else -i adds) in *next; 0 when `size` was the
 *  last one (the next would pass -e or overflow). */
int rs_opts_next_size(const rs_opts *o, uint64_t size, uint64_t *next);

/** Parses the arguments after `run`. Returns -1 when everything parsed (run it), else an
 *  exit status: RS_EXIT_OK after --help, RS_EXIT_USAGE after a message on `err`. */
int rs_cli_parse_run(int argc, char **argv, rs_opts *opts, FILE *out, FILE *err);

/** 1 if arg is an option of `run` whose value is the next argument (not attached with = or -bVALUE). */
int rs_cli_option_has_arg(const char *arg);

/** Prints the usage of `ringsim run`. */
void rs_cli_usage_run(FILE *out);

/** Parses a byte size: digits with an optional K, M or G suffix (binary). 0 on success. */
int rs_cli_parse_size(const char *text, uint64_t *bytes);

/** Names as nccl-tests prints them: "float", "half", "bfloat16", ... */
const char *rs_cli_dtype_name(ncl_dtype dt);
const char *rs_cli_op_name(ncl_op op);
const char *rs_cli_coll_name(ncl_coll coll);
const char *rs_cli_algo_name(ncl_algo algo);

#ifdef __cplusplus
}
#endif
#endif
