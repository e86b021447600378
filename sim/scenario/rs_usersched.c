/* rs_usersched.c — user-defined schedule files (YAML, libyaml's document API) -> ncl_user_schedule. */
#define _POSIX_C_SOURCE 200809L
#include "rs_usersched.h"

#include "rs_scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define US_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define US_MAX_RANKS 65536
#define US_MAX_CHUNKS (1 << 20)

typedef struct us_ctx {
    const char *file; /* as messages show it */
    yaml_document_t *doc;
    char *err;
    size_t errlen;
    int failed;
} us_ctx;

typedef struct us_name {
    const char *name;
    int value;
} us_name;

static const us_name us_colls[] = {
    {"allreduce", NCL_COLL_ALLREDUCE}, {"broadcast", NCL_COLL_BROADCAST}, {"reduce", NCL_COLL_REDUCE},
    {"reduce_scatter", NCL_COLL_REDUCE_SCATTER}, {"allgather", NCL_COLL_ALLGATHER},
};
static const us_name us_ops[] = {
    {"write", NCL_TASK_WRITE}, {"write_reduce", NCL_TASK_WRITE_REDUCE}, {"copy", NCL_TASK_LOCAL_COPY},
    {"reduce", NCL_TASK_LOCAL_REDUCE}, {"div", NCL_TASK_LOCAL_DIV}, {"record", NCL_TASK_NOTIFY_RECORD},
    {"wait", NCL_TASK_NOTIFY_WAIT},
};
static const us_name us_bufs[] = {{"send", NCL_BUF_SEND}, {"recv", NCL_BUF_RECV}, {"scratch", NCL_BUF_SCRATCH}};

static const char *const us_top_keys[] = {"name", "collective", "ranks", "chunks", "queues", "streams"};
static const char *const us_stream_keys[] = {"rank", "queue", "steps"};
static const char *const us_step_keys[] = {"op", "peer", "src", "dst", "chunks", "notify", "count"};

/* Which step keys each op takes (bit i = us_step_keys[i]) and which it needs. */
#define K_OP 1u
#define K_PEER 2u
#define K_SRC 4u
#define K_DST 8u
#define K_CHUNKS 16u
#define K_NOTIFY 32u
#define K_COUNT 64u
static const struct {
    unsigned takes, needs;
} us_op_keys[NCL_TASK_KIND_COUNT] = {
    [NCL_TASK_WRITE] = {K_OP | K_PEER | K_SRC | K_DST | K_CHUNKS, K_OP | K_PEER | K_SRC | K_DST},
    [NCL_TASK_WRITE_REDUCE] = {K_OP | K_PEER | K_SRC | K_DST | K_CHUNKS, K_OP | K_PEER | K_SRC | K_DST},
    [NCL_TASK_LOCAL_COPY] = {K_OP | K_SRC | K_DST | K_CHUNKS, K_OP | K_SRC | K_DST},
    [NCL_TASK_LOCAL_REDUCE] = {K_OP | K_SRC | K_DST | K_CHUNKS, K_OP | K_SRC | K_DST},
    [NCL_TASK_LOCAL_DIV] = {K_OP | K_DST | K_CHUNKS, K_OP | K_DST},
    [NCL_TASK_NOTIFY_RECORD] = {K_OP | K_PEER | K_NOTIFY, K_OP | K_PEER | K_NOTIFY},
    [NCL_TASK_NOTIFY_WAIT] = {K_OP | K_PEER | K_NOTIFY | K_COUNT, K_OP | K_PEER | K_NOTIFY},
};

/* "SHOWN:LINE: KEY: PROBLEM", one line. Always returns -1. */
static int us_fail(us_ctx *c, int line, const char *key, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    if (!c->err || !c->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    rs_scenario_vformat_error(c->err, c->errlen, c->file, line, key, fmt, ap);
    va_end(ap);
    return -1;
}

static int us_line(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 1; }
static yaml_node_t *us_node(us_ctx *c, int id) { return yaml_document_get_node(c->doc, id); }
static const char *us_scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static const char *us_what(const yaml_node_t *n)
{
    if (!n)
        return "nothing";
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    return n->data.scalar.length ? "a single value" : "an empty value";
}

static void us_list(const char *const *names, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

static void us_names(const us_name *names, size_t n, char *buf, size_t len)
{
    const char *v[16];
    for (size_t i = 0; i < n && i < US_COUNT(v); i++)
        v[i] = names[i].name;
    us_list(v, n < US_COUNT(v) ? n : US_COUNT(v), buf, len);
}

/* Checks a mapping's keys against `allowed`: plain names, known, each once. */
static int us_keys(us_ctx *c, yaml_node_t *map, const char *path, const char *const *allowed, size_t n)
{
    char list[160], key[192];
    us_list(allowed, n, list, sizeof list);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = us_node(c, p->key);
        if (!k || k->type != YAML_SCALAR_NODE || strlen(us_scalar(k)) != k->data.scalar.length)
            return us_fail(c, us_line(k ? k : map), path[0] ? path : "(document)",
                           "a key must be a plain name, got %s (allowed: %s)", us_what(k), list);
        const char *name = us_scalar(k);
        size_t i = 0;
        while (i < n && strcmp(allowed[i], name) != 0)
            i++;
        snprintf(key, sizeof key, "%s%s%.48s", path, path[0] ? "." : "", name);
        if (i == n)
            return us_fail(c, us_line(k), key, "unknown key (allowed: %s)", list);
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *qk = us_node(c, q->key);
            if (qk && qk->type == YAML_SCALAR_NODE && strcmp(us_scalar(qk), name) == 0)
                return us_fail(c, us_line(k), key, "duplicate key, first at line %d (allowed: each key once)",
                               us_line(qk));
        }
    }
    return 0;
}

/* The value of `key` in a mapping (and the key node), or NULL. */
static yaml_node_t *us_get(us_ctx *c, yaml_node_t *map, const char *key, yaml_node_t **keynode)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = us_node(c, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(us_scalar(k), key) == 0) {
            if (keynode)
                *keynode = k;
            return us_node(c, p->value);
        }
    }
    return NULL;
}

/* A whole number in [lo, hi]. */
static int us_int(us_ctx *c, yaml_node_t *v, const char *key, long long lo, long long hi, long long *out)
{
    char allowed[96];
    snprintf(allowed, sizeof allowed, "a whole number from %lld to %lld", lo, hi);
    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
        return us_fail(c, us_line(v), key, "expected a number, got %s (allowed: %s)", us_what(v), allowed);
    const char *s = us_scalar(v);
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || strlen(s) != v->data.scalar.length)
        return us_fail(c, us_line(v), key, "'%.40s' is not a whole number (allowed: %s)", s, allowed);
    if (errno == ERANGE || x < lo || x > hi)
        return us_fail(c, us_line(v), key, "%.40s is out of range (allowed: %s)", s, allowed);
    *out = x;
    return 0;
}

static int us_enum(us_ctx *c, yaml_node_t *v, const char *key, const char *what, const us_name *names, size_t n,
                   int *out)
{
    char list[160];
    us_names(names, n, list, sizeof list);
    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
        return us_fail(c, us_line(v), key, "expected %s, got %s (allowed: %s)", what, us_what(v), list);
    for (size_t i = 0; i < n; i++)
        if (strcmp(us_scalar(v), names[i].name) == 0) {
            *out = names[i].value;
            return 0;
        }
    return us_fail(c, us_line(v), key, "'%.40s' is not %s (allowed: %s)", us_scalar(v), what, list);
}

/* [buffer, chunk] */
static int us_ref(us_ctx *c, yaml_node_t *v, const char *key, uint8_t *buf, uint32_t *chunk)
{
    static const char allowed[] = "[buffer, chunk]: buffer send, recv or scratch, chunk a whole number";
    if (!v || v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top - v->data.sequence.items.start != 2)
        return us_fail(c, us_line(v), key, "expected a list of a buffer and a chunk, got %s%s (allowed: %s)",
                       v && v->type == YAML_SEQUENCE_NODE ? "a list of another length" : us_what(v), "", allowed);
    int b = 0;
    long long x = 0;
    if (us_enum(c, us_node(c, v->data.sequence.items.start[0]), key, "a buffer", us_bufs, US_COUNT(us_bufs), &b) ||
        us_int(c, us_node(c, v->data.sequence.items.start[1]), key, 0, UINT32_MAX, &x))
        return -1;
    *buf = (uint8_t)b;
    *chunk = (uint32_t)x;
    return 0;
}

/* Optional number: *out keeps its default when the key is absent. */
static int us_opt_int(us_ctx *c, yaml_node_t *map, const char *path, const char *name, long long lo, long long hi,
                      long long *out)
{
    yaml_node_t *v = us_get(c, map, name, NULL);
    char key[192];
    snprintf(key, sizeof key, "%s%s%s", path, path[0] ? "." : "", name);
    return v ? us_int(c, v, key, lo, hi, out) : 0;
}

static int us_step(us_ctx *c, yaml_node_t *n, const char *path, const ncl_user_schedule *s, ncl_user_step *st)
{
    char key[192], list[160];
    if (n->type != YAML_MAPPING_NODE)
        return us_fail(c, us_line(n), path, "expected a mapping, got %s (allowed: {op: ..., ...})", us_what(n));
    if (us_keys(c, n, path, us_step_keys, US_COUNT(us_step_keys)))
        return -1;
    int op = 0;
    snprintf(key, sizeof key, "%s.op", path);
    yaml_node_t *opv = us_get(c, n, "op", NULL);
    if (!opv) {
        us_names(us_ops, US_COUNT(us_ops), list, sizeof list);
        return us_fail(c, us_line(n), key, "missing (allowed: %s)", list);
    }
    /* the wide-accumulation kinds are det's private fp32 accumulator: user chunks are elements
     * of the plan's dtype, so they have no place to name one; say so rather than "unknown" */
    static const char *const wide_ops[] = {"widen", "reduce_wide", "narrow"};
    for (size_t i = 0; opv->type == YAML_SCALAR_NODE && i < US_COUNT(wide_ops); i++)
        if (strcmp(us_scalar(opv), wide_ops[i]) == 0) {
            us_names(us_ops, US_COUNT(us_ops), list, sizeof list);
            return us_fail(c, us_line(opv), key, "'%s' (LOCAL_%s) is not available in user schedules: wide "
                           "accumulation is the det algorithm's (allowed: %s)", wide_ops[i],
                           i == 0 ? "WIDEN" : i == 1 ? "REDUCE_WIDE" : "NARROW", list);
        }
    if (us_enum(c, opv, key, "an op", us_ops, US_COUNT(us_ops), &op))
        return -1;
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)op;
    /* what the op takes and needs */
    for (size_t i = 0; i < US_COUNT(us_step_keys); i++) {
        yaml_node_t *kn = NULL, *v = us_get(c, n, us_step_keys[i], &kn);
        snprintf(key, sizeof key, "%s.%s", path, us_step_keys[i]);
        const char *takes[US_COUNT(us_step_keys)];
        size_t nt = 0;
        for (size_t j = 0; j < US_COUNT(us_step_keys); j++)
            if (us_op_keys[op].takes & (1u << j))
                takes[nt++] = us_step_keys[j];
        us_list(takes, nt, list, sizeof list);
        if (v && !(us_op_keys[op].takes & (1u << i)))
            return us_fail(c, us_line(kn), key, "not used by op %s (allowed with %s: %s)", us_scalar(opv),
                           us_scalar(opv), list);
        if (!v && (us_op_keys[op].needs & (1u << i)))
            return us_fail(c, us_line(n), key, "missing: op %s needs it (allowed with %s: %s)", us_scalar(opv),
                           us_scalar(opv), list);
    }
    long long x = 0;
    st->peer = -1;
    if (us_get(c, n, "peer", NULL)) {
        if (us_opt_int(c, n, path, "peer", 0, s->nranks - 1, &x))
            return -1;
        st->peer = (int32_t)x;
    }
    yaml_node_t *v;
    if ((v = us_get(c, n, "src", NULL))) {
        snprintf(key, sizeof key, "%s.src", path);
        if (us_ref(c, v, key, &st->src_buf, &st->src_chunk))
            return -1;
    }
    if ((v = us_get(c, n, "dst", NULL))) {
        snprintf(key, sizeof key, "%s.dst", path);
        if (us_ref(c, v, key, &st->dst_buf, &st->dst_chunk))
            return -1;
    }
    if (op == NCL_TASK_LOCAL_DIV) { /* in place: the source is the destination */
        st->src_buf = st->dst_buf;
        st->src_chunk = st->dst_chunk;
    }
    x = op <= NCL_TASK_LOCAL_DIV ? 1 : 0;
    if (us_opt_int(c, n, path, "chunks", 1, UINT32_MAX, &x))
        return -1;
    st->chunks = (uint32_t)x;
    x = 0;
    if (us_opt_int(c, n, path, "notify", 0, NCL_NOTIFY_IDS - 1, &x))
        return -1;
    st->notify = (uint32_t)x;
    x = op == NCL_TASK_NOTIFY_WAIT ? 1 : 0;
    if (us_opt_int(c, n, path, "count", 1, UINT32_MAX, &x))
        return -1;
    st->count = (uint32_t)x;
    return 0;
}

/* Line of a step's field (or of the step) for ncl_user_validate's findings. */
static int us_field_line(us_ctx *c, yaml_node_t *step, const char *field)
{
    yaml_node_t *k = NULL;
    return us_get(c, step, field, &k) ? us_line(k) : us_line(step);
}

static int us_parse(us_ctx *c, yaml_node_t *root, rs_usersched *u)
{
    ncl_user_schedule *s = &u->sched;
    if (root->type != YAML_MAPPING_NODE)
        return us_fail(c, us_line(root), "(document)", "expected a mapping, got %s (allowed: a mapping of "
                       "name, collective, ranks, chunks, queues, streams)", us_what(root));
    if (us_keys(c, root, "", us_top_keys, US_COUNT(us_top_keys)))
        return -1;
    static const char *const required[] = {"collective", "ranks", "streams"};
    for (size_t i = 0; i < US_COUNT(required); i++)
        if (!us_get(c, root, required[i], NULL))
            return us_fail(c, us_line(root), required[i], "missing (allowed: %s)",
                           i == 0 ? "allreduce, broadcast, reduce, reduce_scatter, allgather"
                           : i == 1 ? "the rank count the schedule is written for"
                                    : "a list of {rank, queue, steps}");
    yaml_node_t *v = us_get(c, root, "name", NULL);
    if (v) {
        if (v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0 ||
            strlen(us_scalar(v)) != v->data.scalar.length)
            return us_fail(c, us_line(v), "name", "expected a name, got %s (allowed: a short name)", us_what(v));
        free(u->name);
        if (!(u->name = strdup(us_scalar(v))))
            return us_fail(c, us_line(v), "name", "out of memory");
    }
    int coll = 0;
    if (us_enum(c, us_get(c, root, "collective", NULL), "collective", "a collective", us_colls, US_COUNT(us_colls),
                &coll))
        return -1;
    long long ranks = 0, chunks = 1, queues = 1;
    if (us_opt_int(c, root, "", "ranks", 1, US_MAX_RANKS, &ranks) ||
        us_opt_int(c, root, "", "chunks", 1, US_MAX_CHUNKS, &chunks) ||
        us_opt_int(c, root, "", "queues", 1, NCL_MAX_QUEUES, &queues))
        return -1;
    s->coll = (uint8_t)coll;
    s->nranks = (int32_t)ranks;
    s->chunks = (uint32_t)chunks;
    s->queues = (uint32_t)queues;

    yaml_node_t *streams = us_get(c, root, "streams", NULL);
    if (streams->type != YAML_SEQUENCE_NODE)
        return us_fail(c, us_line(streams), "streams", "expected a list, got %s (allowed: a list of {rank, queue, "
                       "steps})", us_what(streams));
    size_t nstreams = (size_t)(streams->data.sequence.items.top - streams->data.sequence.items.start), total = 0;
    /* count first: one allocation for every step */
    for (size_t i = 0; i < nstreams; i++) {
        yaml_node_t *e = us_node(c, streams->data.sequence.items.start[i]);
        char path[64];
        snprintf(path, sizeof path, "streams[%zu]", i);
        if (!e || e->type != YAML_MAPPING_NODE)
            return us_fail(c, us_line(e ? e : streams), path, "expected a mapping, got %s (allowed: {rank, queue, "
                           "steps})", us_what(e));
        yaml_node_t *st = us_get(c, e, "steps", NULL);
        if (st && st->type == YAML_SEQUENCE_NODE)
            total += (size_t)(st->data.sequence.items.top - st->data.sequence.items.start);
    }
    if (total > RS_USERSCHED_MAX_STEPS)
        return us_fail(c, us_line(streams), "streams", "%zu steps (allowed: at most %u)", total,
                       RS_USERSCHED_MAX_STEPS);
    u->steps = calloc(total ? total : 1, sizeof *u->steps);
    yaml_node_t **nodes = calloc(total ? total : 1, sizeof *nodes);
    size_t *where = calloc(total ? total : 1, 2 * sizeof *where);
    unsigned char *seen = calloc((size_t)ranks * (size_t)queues, 1);
    int rc = 0;
    if (!u->steps || !nodes || !where || !seen)
        rc = us_fail(c, us_line(streams), "streams", "out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < nstreams; i++) {
        yaml_node_t *e = us_node(c, streams->data.sequence.items.start[i]);
        char path[64], key[96];
        snprintf(path, sizeof path, "streams[%zu]", i);
        long long rank = 0, queue = 0;
        if ((rc = us_keys(c, e, path, us_stream_keys, US_COUNT(us_stream_keys))) != 0)
            break;
        snprintf(key, sizeof key, "%s.rank", path);
        yaml_node_t *rv = us_get(c, e, "rank", NULL), *qk = NULL, *sv = us_get(c, e, "steps", NULL);
        if (!rv) {
            rc = us_fail(c, us_line(e), key, "missing (allowed: a rank from 0 to %lld)", ranks - 1);
            break;
        }
        if ((rc = us_int(c, rv, key, 0, ranks - 1, &rank)) != 0 ||
            (rc = us_opt_int(c, e, path, "queue", 0, queues - 1, &queue)) != 0)
            break;
        us_get(c, e, "queue", &qk);
        size_t slot = (size_t)rank * (size_t)queues + (size_t)queue;
        if (seen[slot]) {
            rc = us_fail(c, us_line(qk ? qk : rv), path, "rank %lld queue %lld is listed twice (allowed: one entry "
                         "per rank and queue)", rank, queue);
            break;
        }
        seen[slot] = 1;
        snprintf(key, sizeof key, "%s.steps", path);
        if (!sv || sv->type != YAML_SEQUENCE_NODE) {
            rc = us_fail(c, us_line(sv ? sv : e), key, "%s (allowed: a list of steps {op: ..., ...})",
                         sv ? "is not a list" : "missing");
            break;
        }
        for (yaml_node_item_t *it = sv->data.sequence.items.start; rc == 0 && it < sv->data.sequence.items.top;
             it++) {
            size_t j = (size_t)(it - sv->data.sequence.items.start);
            char spath[96];
            snprintf(spath, sizeof spath, "%s.steps[%zu]", path, j);
            yaml_node_t *n = us_node(c, *it);
            if (!n) {
                rc = us_fail(c, us_line(sv), spath, "missing entry");
                break;
            }
            if ((rc = us_step(c, n, spath, s, &u->steps[k])) != 0)
                break;
            u->steps[k].rank = (int32_t)rank;
            u->steps[k].queue = (uint32_t)queue;
            nodes[k] = n;
            where[2 * k] = i;
            where[2 * k + 1] = j;
            k++;
        }
    }
    if (rc == 0) {
        s->steps = u->steps;
        s->step_count = (uint32_t)k;
        /* what the engine itself refuses: peers, chunk ranges, reductions in a gather, ... */
        ncl_user_where w = {NCL_USER_NO_STEP, NULL};
        char msg[256];
        if (ncl_user_validate(s, &w, msg, sizeof msg) != NCL_SUCCESS) {
            if (w.step == NCL_USER_NO_STEP) {
                rc = us_fail(c, us_line(root), w.field, "%s", msg);
            } else {
                char key[128];
                const char *field = strcmp(w.field, "kind") == 0 ? "op" : w.field;
                snprintf(key, sizeof key, "streams[%zu].steps[%zu].%s", where[2 * w.step], where[2 * w.step + 1],
                         field);
                rc = us_fail(c, us_field_line(c, nodes[w.step], field), key, "%s", msg);
            }
        }
    }
    free(nodes);
    free(where);
    free(seen);
    return rc;
}

void rs_usersched_free(rs_usersched *u)
{
    if (!u)
        return;
    free(u->name);
    free(u->steps);
    free(u);
}

static char *us_read(const char *path, size_t *len, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(why, whylen, "cannot open: is a directory");
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = cap > RS_USERSCHED_MAX_FILE ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                snprintf(why, whylen, cap > RS_USERSCHED_MAX_FILE ? "larger than %u bytes" : "out of memory",
                         RS_USERSCHED_MAX_FILE);
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (!buf && why[0] == '\0')
        snprintf(why, whylen, "out of memory");
    fclose(f);
    *len = n;
    return buf;
}

int rs_usersched_load(const char *path, const char *shown, rs_usersched **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    us_ctx c;
    memset(&c, 0, sizeof c);
    c.file = shown ? shown : path;
    c.err = err;
    c.errlen = errlen;
    char why[128] = "";
    size_t len = 0;
    char *text = us_read(path, &len, why, sizeof why);
    if (!text) {
        if (err && errlen)
            snprintf(err, errlen, "%s", why);
        return -2;
    }
    rs_usersched *u = calloc(1, sizeof *u);
    yaml_parser_t p;
    yaml_document_t doc;
    int rc = 0, have_doc = 0;
    if (!u || !yaml_parser_initialize(&p)) {
        free(u);
        free(text);
        return us_fail(&c, 1, "yaml", "out of memory");
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        rc = us_fail(&c, (int)p.problem_mark.line + 1, "yaml", "%s", p.problem ? p.problem : "syntax error");
    } else {
        have_doc = 1;
        c.doc = &doc;
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            rc = us_fail(&c, 1, "(document)", "the file is empty (allowed: a mapping with collective, ranks, "
                         "streams)");
        } else {
            yaml_document_t second;
            if (!yaml_parser_load(&p, &second)) {
                rc = us_fail(&c, (int)p.problem_mark.line + 1, "yaml", "%s", p.problem ? p.problem : "syntax error");
            } else {
                if (yaml_document_get_root_node(&second))
                    rc = us_fail(&c, (int)second.start_mark.line + 1, "yaml",
                                 "a second document (allowed: one document per file)");
                yaml_document_delete(&second);
            }
        }
        if (rc == 0)
            rc = us_parse(&c, root, u);
    }
    if (rc == 0 && !u->name) {
        /* the file name without .yaml */
        const char *b = strrchr(c.file, '/');
        b = b ? b + 1 : c.file;
        size_t n = strlen(b);
        if (n > 5 && strcmp(b + n - 5, ".yaml") == 0)
            n -= 5;
        else if (n > 4 && strcmp(b + n - 4, ".yml") == 0)
            n -= 4;
        if (!(u->name = strndup(b, n)))
            rc = us_fail(&c, 1, "name", "out of memory");
    }
    if (have_doc)
        yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    free(text);
    if (rc != 0) {
        rs_usersched_free(u);
        return -1;
    }
    u->sched.name = u->name;
    *out = u;
    return 0;
}
