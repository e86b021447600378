/* rs_cli.c — parses `ringsim run` flags (nccl-tests' names where they mean the same). */
#include "rs_cli.h"

#include "ncl/ncl_names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Largest accepted byte size: far beyond memory, small enough that nothing overflows. */
#define RS_SIZE_MAX (1ull << 40)

typedef enum rs_opt_id {
    OPT_HELP, OPT_BACKEND, OPT_MINBYTES, OPT_MAXBYTES, OPT_STEPFACTOR, OPT_STEPBYTES, OPT_ITERS,
    OPT_WARMUP, OPT_CHECK, OPT_OP, OPT_DTYPE, OPT_ROOT, OPT_RANKS, OPT_COLL, OPT_ALGO,
    OPT_CHANNELS, OPT_TIMEOUT, OPT_JSON, OPT_JUNIT, OPT_SEED, OPT_SKEW, OPT_MEMPROBE, OPT_NO_MEMPROBE
} rs_opt_id;

typedef struct rs_optdef {
    char short_name; /* 0: long only */
    const char *long_name;
    int has_arg;
    rs_opt_id id;
} rs_optdef;

static const rs_optdef rs_optdefs[] = {
    {'h', "help", 0, OPT_HELP},
    {0, "backend", 1, OPT_BACKEND},
    {'b', "minbytes", 1, OPT_MINBYTES},
    {'e', "maxbytes", 1, OPT_MAXBYTES},
    {'f', "stepfactor", 1, OPT_STEPFACTOR},
    {'i', "stepbytes", 1, OPT_STEPBYTES},
    {'n', "iters", 1, OPT_ITERS},
    {'w', "warmup_iters", 1, OPT_WARMUP},
    {'c', "check", 1, OPT_CHECK},
    {'o', "op", 1, OPT_OP},
    {'d', "datatype", 1, OPT_DTYPE},
    {'r', "root", 1, OPT_ROOT},
    {0, "ranks", 1, OPT_RANKS},
    {'C', "collective", 1, OPT_COLL},
    {0, "algo", 1, OPT_ALGO},
    {0, "channels", 1, OPT_CHANNELS},
    {0, "timeout", 1, OPT_TIMEOUT},
    {0, "json", 1, OPT_JSON},
    {0, "junit", 1, OPT_JUNIT},
    {0, "seed", 1, OPT_SEED},
    {0, "skew", 1, OPT_SKEW},
    {0, "memprobe", 0, OPT_MEMPROBE},
    {0, "no-memprobe", 0, OPT_NO_MEMPROBE},
};

/* "a|alias, b, ..., TAIL": every spelling of kind the names table accepts but value skip's, then
 * the nextra names of extra (the run's own beyond the engine's). */
static void rs_allowed(ncl_name_kind kind, int skip, const ncl_name *extra, size_t nextra, const char *tail, char *buf,
                       size_t len)
{
    size_t count = 0, k = 0;
    const ncl_name *names = ncl_names(kind, &count);
#define RS_PUT(...) (k += (size_t)snprintf(buf + k, k < len ? len - k : 0, __VA_ARGS__))
    for (size_t v = 0; v < count && !names[v].alias; v++) {
        if (names[v].value == skip)
            continue;
        RS_PUT("%s", names[v].name);
        for (size_t a = v + 1; a < count; a++)
            if (names[a].alias && names[a].value == names[v].value)
                RS_PUT("|%s", names[a].name);
        RS_PUT(", ");
    }
    for (size_t e = 0; e < nextra; e++)
        RS_PUT("%s, ", extra[e].name);
    RS_PUT("%s", tail);
#undef RS_PUT
}

#define RS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const rs_optdef *rs_find_long(const char *name, size_t len);
static const rs_optdef *rs_find_short(char c);

void rs_cli_run_defaults(rs_cli_run *run)
{
    memset(run, 0, sizeof *run);
    rs_sweep_defaults(&run->sweep);
}

void rs_cli_usage_run(FILE *out)
{
    fprintf(out,
        "usage: ringsim run                      simulate scenarios/default.yaml on the model\n"
        "       ringsim run SCENARIO [--json FILE] [--stats] [--waves FILE] [--chakra PREFIX [--chakra-groups FILE]]\n"
        "       ringsim run --backend host [options | SCENARIO [--ranks N] [--timeout S] [--json FILE]]\n"
        "\n"
        "Runs an nccl-tests-style sweep of collectives on N ranks and checks every result\n"
        "bit-exactly: on the SystemC model as a scenario (YAML, see scenarios/README.md) says,\n"
        "or on host threads as the flags below say. Exit status: 0 all correct, 1 wrong\n"
        "values, 2 bad usage or scenario, 3 engine error (timeout, dead link, ...). --waves FILE\n"
        "writes a VCD of a scenario's RTL devices (device.fidelity: rtl). --chakra PREFIX runs the\n"
        "Chakra execution traces PREFIX.0.et, PREFIX.1.et, ... (one per rank; ASTRA-sim's workload\n"
        "format) on the scenario's machine instead of its workload; --chakra-groups FILE gives their\n"
        "process groups (pg_name) as ASTRA-sim's comm group file: {\"1\": [0, 1], \"2\": [2, 3]}.\n"
        "\n"
        "nccl-tests flags:\n"
        "  -b, --minbytes SIZE      smallest size (default 8); SIZE takes a K, M or G suffix\n"
        "  -e, --maxbytes SIZE      largest size (default 16M)\n"
        "  -f, --stepfactor N       multiply the size by N each step (default 2)\n"
        "  -i, --stepbytes SIZE     add SIZE each step instead of multiplying\n"
        "  -n, --iters N            timed iterations per size (default 20)\n"
        "  -w, --warmup_iters N     untimed iterations before them (default 5)\n"
        "  -c, --check 0|1          check results bit-exactly (default 1)\n"
        "  -o, --op LIST            sum, prod, max, min, avg or all (default sum)\n"
        "  -d, --datatype LIST      int8, uint8, int32, uint32, int64, half, bfloat16, float,\n"
        "                           double or all (default float)\n"
        "  -r, --root N             root of broadcast and reduce (default 0)\n"
        "ringsim flags:\n"
        "  --backend NAME           host: ranks are threads of this process (default);\n"
        "                           zmq: one process per rank ('ringsim agent'), see sim/zmq/ZMQ.md:\n"
        "                           [--ranks N | --ranktable FILE] [--connect-timeout S] [SCENARIO]\n"
        "                           [--agent-backend zmq|mmio] (mmio: emulated boards)\n"
        "  --ranks N                number of ranks (default 8)\n"
        "  -C, --collective LIST    allreduce, broadcast, reduce, reduce_scatter, allgather,\n"
        "                           alltoall, alltoallv, sendrecv (every rank to rank + 1 and\n"
        "                           from rank - 1, out of place) or all (default allreduce,broadcast)\n"
        "  --skew F                 alltoallv's blocks: (1 - F) .. (1 + F) x the mean, 0..1\n"
        "                           (default 1: some ranks exchange nothing, some twice)\n"
        "  --algo NAME              auto, ring, chain, tree, hd, mesh, sag, dbtree, det, hier or\n"
        "                           pairwise\n"
        "                           (default auto; an algorithm for the chosen collectives)\n"
        "  --channels N             parallel queues of ring algorithms, 1..%u (default 2)\n"
        "  --timeout SECONDS        limit of every notify wait (default: the engine's, 30)\n"
        "  --json FILE              also write the rows as JSON to FILE\n"
        "  --junit FILE             also write JUnit XML to FILE: a testcase per row and placement\n"
        "  --seed N                 seed of the input data (default 1)\n"
        "  --memprobe, --no-memprobe  measure single-thread memcpy bandwidth of each size\n"
        "                           and print it beside the row (default on)\n"
        "  -h, --help               this text\n"
        "LISTs are comma-separated. Sizes are binary: 1K = 1024.\n",
        (unsigned)NCL_MAX_QUEUES);
}

int rs_cli_option_has_arg(const char *arg)
{
    const rs_optdef *def = NULL;
    if (arg[0] != '-' || arg[1] == '\0')
        return 0;
    if (arg[1] == '-') {
        if (strchr(arg, '='))
            return 0;
        def = rs_find_long(arg + 2, strlen(arg + 2));
    } else {
        if (arg[2] != '\0')
            return 0;
        def = rs_find_short(arg[1]);
    }
    return def != NULL && def->has_arg;
}

int rs_cli_parse_size(const char *text, uint64_t *bytes)
{
    const char *p = text;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > RS_SIZE_MAX)
            return -1;
    }
    uint64_t mult = 1;
    switch (*p) {
    case '\0': break;
    case 'k': case 'K': mult = 1ull << 10; p++; break;
    case 'm': case 'M': mult = 1ull << 20; p++; break;
    case 'g': case 'G': mult = 1ull << 30; p++; break;
    default: return -1;
    }
    if (*p != '\0' || v > RS_SIZE_MAX / mult)
        return -1;
    *bytes = v * mult;
    return 0;
}

int rs_cli_int(const char *who, const char *flag, const char *text, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE) {
        fprintf(stderr, "%s: %s: '%s' is not an integer (allowed: %lld..%lld)\n", who, flag, text, lo, hi);
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(stderr, "%s: %s: '%s' is out of range (allowed: %lld..%lld)\n", who, flag, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int rs_cli_seconds(const char *who, const char *flag, const char *text, double max, double *out)
{
    char *end = NULL;
    double s = text ? strtod(text, &end) : -1;
    /* at least 1 ms: agents get times in ms, and a shorter one is not a usable limit anywhere */
    if (!text || end == text || *end || !(s >= 1e-3) || s > max) {
        fprintf(stderr, "%s: %s: '%s' is not a time (allowed: seconds from 0.001 to %g, e.g. 0.5)\n", who, flag,
                text ? text : "", max);
        return -1;
    }
    *out = s;
    return 0;
}

int rs_cli_load_scenario(const char *path, rs_scenario *sc)
{
    char msg[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load(path, sc, msg, sizeof msg) == 0)
        return 0;
    fprintf(stderr, "%s\n", msg);
    return -1;
}

/* 0 with *v when word is one of the nextra names of extra, else -1. */
static int rs_extra_parse(const ncl_name *extra, size_t nextra, const char *word, int *v)
{
    for (size_t e = 0; e < nextra; e++)
        if (strcmp(word, extra[e].name) == 0) {
            *v = extra[e].value;
            return 0;
        }
    return -1;
}

/* Parses "a,b,c" or "all" into distinct values of kind (the names table's spellings, and the nextra
 * names of extra), in the order given; "all" is values 0 .. all_count - 1. */
static int rs_parse_list(const char *flag, const char *text, ncl_name_kind kind, const ncl_name *extra, size_t nextra,
                         int all_count, const char *what, int *values, int *nvalues, FILE *err)
{
    char allowed[400], word[64];
    rs_allowed(kind, -1, extra, nextra, "all; comma-separated", allowed, sizeof allowed);
    int n = 0;
    const char *p = text;
    if (*p == '\0') {
        fprintf(err, "ringsim: %s: '' is not %s (allowed: %s)\n", flag, what, allowed);
        return -1;
    }
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int v = -1;
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        if (len < sizeof word && strcmp(word, "all") == 0) {
            for (v = 0; v < all_count; v++) {
                int dup = 0;
                for (int k = 0; k < n; k++)
                    dup |= values[k] == v;
                if (!dup)
                    values[n++] = v;
            }
        } else if (len < sizeof word && (ncl_name_parse(kind, word, &v) == 0 || rs_extra_parse(extra, nextra, word, &v) == 0)) {
            int dup = 0;
            for (int k = 0; k < n; k++)
                dup |= values[k] == v;
            if (!dup)
                values[n++] = v;
        } else {
            fprintf(err, "ringsim: %s: '%.*s' is not %s (allowed: %s)\n", flag, (int)len, p, what, allowed);
            return -1;
        }
        p += len;
        if (*p == ',') {
            p++;
            if (*p == '\0') {
                fprintf(err, "ringsim: %s: '%s' ends with a comma (allowed: %s)\n", flag, text, allowed);
                return -1;
            }
        }
    }
    *nvalues = n;
    return 0;
}

static const rs_optdef *rs_find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < RS_COUNT(rs_optdefs); i++)
        if (strlen(rs_optdefs[i].long_name) == len && strncmp(rs_optdefs[i].long_name, name, len) == 0)
            return &rs_optdefs[i];
    return NULL;
}

static const rs_optdef *rs_find_short(char c)
{
    for (size_t i = 0; i < RS_COUNT(rs_optdefs); i++)
        if (rs_optdefs[i].short_name == c)
            return &rs_optdefs[i];
    return NULL;
}

/* Checks that ask for more than one flag at a time, once everything is parsed. */
static int rs_validate(rs_sweep *o, const char *root_flag, const char *minb_flag,
                       const char *algo_flag, int step_f_given, int step_i_given, FILE *err)
{
    if (step_f_given && step_i_given) {
        fprintf(err, "ringsim: -i: a step size cannot be combined with -f (allowed: one of -f N or -i SIZE)\n");
        return -1;
    }
    if (step_i_given)
        o->stepfactor = 0;
    if (o->minbytes > o->maxbytes) {
        fprintf(err, "ringsim: %s: %llu bytes is larger than the largest size %llu (allowed: at most -e)\n",
                minb_flag, (unsigned long long)o->minbytes, (unsigned long long)o->maxbytes);
        return -1;
    }
    if (o->root >= o->nranks) {
        fprintf(err, "ringsim: %s: '%d' is out of range (allowed: 0..%d with --ranks %d)\n",
                root_flag, o->root, o->nranks - 1, o->nranks);
        return -1;
    }
    if (o->algo != NCL_ALGO_AUTO) {
        int any = 0;
        for (int i = 0; i < o->ncolls; i++)
            any |= ncl_algo_supported(rs_coll_engine(o->colls[i]), o->algo) != 0;
        if (!any) {
            fprintf(err, "ringsim: %s: '%s' implements none of the chosen collectives (allowed for %s:",
                    algo_flag, ncl_algo_name(o->algo), rs_coll_name(o->colls[0]));
            for (int a = 0; a < NCL_ALGO_COUNT; a++)
                if (a != NCL_ALGO_USER && ncl_algo_supported(rs_coll_engine(o->colls[0]), (ncl_algo)a))
                    fprintf(err, " %s", ncl_algo_name((ncl_algo)a));
            fprintf(err, ")\n");
            return -1;
        }
    }
    return 0;
}

int rs_cli_parse_run(int argc, char **argv, rs_cli_run *run, FILE *out, FILE *err)
{
    rs_sweep *o = &run->sweep;
    const char *root_flag = "-r", *minb_flag = "-b", *algo_flag = "--algo";
    int step_f_given = 0, step_i_given = 0;
    char flag[64];
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const rs_optdef *def = NULL;
        const char *value = NULL;
        if (strcmp(arg, "--") == 0 || arg[0] != '-' || arg[1] == '\0') {
            const char *what = strcmp(arg, "--") == 0 ? (i + 1 < argc ? argv[i + 1] : "") : arg;
            fprintf(err, "ringsim: run: unexpected argument '%s' (allowed: options and one scenario file; see "
                         "'ringsim run --help')\n", what);
            return RS_EXIT_USAGE;
        }
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            def = rs_find_long(name, len);
            snprintf(flag, sizeof flag, "--%.*s", (int)(len < 40 ? len : 40), name);
            if (def == NULL) {
                fprintf(err, "ringsim: run: unknown option '%s' (see 'ringsim run --help')\n", flag);
                return RS_EXIT_USAGE;
            }
            if (eq) {
                if (!def->has_arg) {
                    fprintf(err, "ringsim: %s: takes no value, got '%s'\n", flag, eq + 1);
                    return RS_EXIT_USAGE;
                }
                value = eq + 1;
            }
        } else {
            def = rs_find_short(arg[1]);
            snprintf(flag, sizeof flag, "-%c", arg[1]);
            if (def == NULL) {
                fprintf(err, "ringsim: run: unknown option '%s' (see 'ringsim run --help')\n", arg);
                return RS_EXIT_USAGE;
            }
            if (arg[2] != '\0') {
                if (!def->has_arg) {
                    fprintf(err, "ringsim: run: unknown option '%s' (see 'ringsim run --help')\n", arg);
                    return RS_EXIT_USAGE;
                }
                value = arg + 2;
            }
        }
        if (def->has_arg && value == NULL) {
            if (i + 1 >= argc) {
                fprintf(err, "ringsim: %s: missing value (see 'ringsim run --help')\n", flag);
                return RS_EXIT_USAGE;
            }
            value = argv[++i];
        }
        long long v = 0;
        int rc = 0;
        switch (def->id) {
        case OPT_HELP:
            rs_cli_usage_run(out);
            return RS_EXIT_OK;
        case OPT_BACKEND:
            if (strcmp(value, "host") != 0 && strcmp(value, "zmq") != 0) {
                fprintf(err, "ringsim: %s: backend '%s' takes no flags (allowed: host, zmq; the simulated "
                             "machine runs a scenario: ringsim run SCENARIO)\n", flag, value);
                return RS_EXIT_USAGE;
            }
            o->backend = strcmp(value, "zmq") == 0 ? RS_BACKEND_ZMQ : RS_BACKEND_HOST;
            break;
        case OPT_MINBYTES:
        case OPT_MAXBYTES:
        case OPT_STEPBYTES: {
            uint64_t bytes;
            if (rs_cli_parse_size(value, &bytes) != 0) {
                fprintf(err, "ringsim: %s: '%s' is not a size (allowed: a number with an optional K, M or G "
                             "suffix, up to 1024G)\n", flag, value);
                return RS_EXIT_USAGE;
            }
            if (def->id == OPT_STEPBYTES && bytes == 0) {
                fprintf(err, "ringsim: %s: '%s' would never advance (allowed: a size of at least 1)\n", flag, value);
                return RS_EXIT_USAGE;
            }
            if (def->id == OPT_MINBYTES) {
                o->minbytes = bytes;
                minb_flag = arg[1] == '-' ? "--minbytes" : "-b";
            } else if (def->id == OPT_MAXBYTES) {
                o->maxbytes = bytes;
            } else {
                o->stepbytes = bytes;
                step_i_given = 1;
            }
            break;
        }
        case OPT_STEPFACTOR:
            rc = rs_cli_int("ringsim", flag, value, 2, 1 << 20, &v);
            o->stepfactor = (uint64_t)v;
            step_f_given = 1;
            break;
        case OPT_ITERS:
            rc = rs_cli_int("ringsim", flag, value, 1, 1000000000, &v);
            o->iters = (int)v;
            break;
        case OPT_WARMUP:
            rc = rs_cli_int("ringsim", flag, value, 0, 1000000000, &v);
            o->warmup_iters = (int)v;
            break;
        case OPT_CHECK:
            rc = rs_cli_int("ringsim", flag, value, 0, 1, &v);
            o->check = (int)v;
            break;
        case OPT_ROOT:
            rc = rs_cli_int("ringsim", flag, value, 0, RS_MAX_RANKS - 1, &v);
            o->root = (int)v;
            root_flag = arg[1] == '-' ? "--root" : "-r";
            break;
        case OPT_RANKS:
            rc = rs_cli_int("ringsim", flag, value, 1, RS_MAX_RANKS, &v);
            o->nranks = (int)v;
            break;
        case OPT_CHANNELS:
            rc = rs_cli_int("ringsim", flag, value, 1, NCL_MAX_QUEUES, &v);
            o->channels = (uint32_t)v;
            break;
        case OPT_OP: {
            int vals[NCL_OP_COUNT + 1], n = 0;
            rc = rs_parse_list(flag, value, NCL_NAMES_OP, NULL, 0, NCL_OP_COUNT, "an op", vals, &n, err);
            for (int k = 0; k < n; k++)
                o->ops[k] = (ncl_op)vals[k];
            if (rc == 0)
                o->nops = n;
            break;
        }
        case OPT_DTYPE: {
            int vals[NCL_DTYPE_COUNT + 1], n = 0;
            rc = rs_parse_list(flag, value, NCL_NAMES_DTYPE, NULL, 0, NCL_DTYPE_COUNT, "a datatype", vals, &n, err);
            for (int k = 0; k < n; k++)
                o->dtypes[k] = (ncl_dtype)vals[k];
            if (rc == 0)
                o->ndtypes = n;
            break;
        }
        case OPT_COLL: {
            int vals[RS_COLL_COUNT + 1], n = 0;
            rc = rs_parse_list(flag, value, NCL_NAMES_COLL, rs_coll_extra_names, RS_COLL_EXTRA_COUNT, RS_COLL_COUNT,
                               "a collective", vals, &n, err);
            for (int k = 0; k < n; k++)
                o->colls[k] = (rs_coll)vals[k];
            if (rc == 0)
                o->ncolls = n;
            break;
        }
        case OPT_ALGO: {
            if (ncl_algo_parse(value, &o->algo) != 0 || o->algo == NCL_ALGO_USER) {
                char allowed[400];
                /* user: a schedule given as data is a scenario's (workload.schedule) */
                rs_allowed(NCL_NAMES_ALGO, NCL_ALGO_USER, NULL, 0, "or a scenario's workload.schedule", allowed, sizeof allowed);
                fprintf(err, "ringsim: %s: '%s' is not an algorithm (allowed: %s)\n", flag, value, allowed);
                rc = -1;
            }
            algo_flag = "--algo";
            break;
        }
        case OPT_SKEW: {
            char *end = NULL;
            double f = strtod(value, &end);
            if (end == value || *end != '\0' || !(f >= 0 && f <= 1)) {
                fprintf(err, "ringsim: %s: '%s' is not a skew (allowed: a number from 0 to 1, e.g. 0.5)\n", flag, value);
                rc = -1;
            } else {
                o->a2av_skew = f;
            }
            break;
        }
        case OPT_TIMEOUT: {
            char *end = NULL;
            errno = 0;
            double s = strtod(value, &end);
            if (end == value || *end != '\0' || errno == ERANGE || !(s >= 1e-3) || !(s <= 1e6)) {
                fprintf(err, "ringsim: %s: '%s' is not a timeout (allowed: seconds from 0.001 to 1000000, "
                             "e.g. 0.5)\n", flag, value);
                rc = -1;
            }
            o->timeout_s = s;
            break;
        }
        case OPT_JSON:
        case OPT_JUNIT:
            if (*value == '\0') {
                fprintf(err, "ringsim: %s: '' is not a file name (allowed: a path to write)\n", flag);
                rc = -1;
            }
            *(def->id == OPT_JSON ? &run->json_path : &run->junit_path) = value;
            break;
        case OPT_SEED: {
            char *end = NULL;
            errno = 0;
            unsigned long long s = strtoull(value, &end, 0);
            if (end == value || *end != '\0' || errno == ERANGE || value[0] == '-') {
                fprintf(err, "ringsim: %s: '%s' is not a seed (allowed: an unsigned 64-bit integer, "
                             "decimal or 0x hex)\n", flag, value);
                rc = -1;
            }
            o->seed = s;
            break;
        }
        case OPT_MEMPROBE:
            o->memprobe = 1;
            break;
        case OPT_NO_MEMPROBE:
            o->memprobe = 0;
            break;
        }
        if (rc != 0)
            return RS_EXIT_USAGE;
    }
    if (rs_validate(o, root_flag, minb_flag, algo_flag, step_f_given, step_i_given, err) != 0)
        return RS_EXIT_USAGE;
    return -1;
}
