/* rs_usersched.c — user-defined schedule files (YAML, read by the walker rs_yaml) -> ncl_user_schedule, checked field by field. */
#define _POSIX_C_SOURCE 200809L
#include "rs_usersched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_yaml.h"

#define US_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define US_MAX_RANKS 65536
#define US_MAX_CHUNKS (1 << 20)

static const rs_yaml_name us_op_names[] = {
    {"write", NCL_TASK_WRITE, 0}, {"write_reduce", NCL_TASK_WRITE_REDUCE, 0}, {"copy", NCL_TASK_LOCAL_COPY, 0},
    {"reduce", NCL_TASK_LOCAL_REDUCE, 0}, {"div", NCL_TASK_LOCAL_DIV, 0}, {"record", NCL_TASK_NOTIFY_RECORD, 0},
    {"wait", NCL_TASK_NOTIFY_WAIT, 0},
};
static const rs_yaml_name us_buf_names[] = {{"send", NCL_BUF_SEND, 0}, {"recv", NCL_BUF_RECV, 0}, {"scratch", NCL_BUF_SCRATCH, 0}};
static const rs_yaml_enum us_colls = RS_YAML_ENGINE_ENUM("a collective", NCL_NAMES_COLL, -1);
static const rs_yaml_enum us_ops = RS_YAML_ENUM("an op", us_op_names);
static const rs_yaml_enum us_bufs = RS_YAML_ENUM("a buffer", us_buf_names);

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

/* Keys in messages are written out in full ("streams[0].steps[2].peer"): the walker's path stays
 * at the top, except while the walker checks a mapping's keys under `path`. */

static void us_list(const char *const *names, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

/* Checks a mapping's keys against `allowed`: plain names, known, each once. */
static int us_keys(rs_yaml *y, yaml_node_t *map, const char *path, const char *const *allowed, size_t n)
{
    char list[160];
    us_list(allowed, n, list, sizeof list);
    size_t old = rs_yaml_push(y, path);
    int rc = rs_yaml_check_keys(y, map, allowed, n, list);
    rs_yaml_pop(y, old);
    return rc;
}

/* A whole number in [lo, hi]. */
static int us_int(rs_yaml *y, yaml_node_t *v, const char *key, long long lo, long long hi, long long *out)
{
    char allowed[96];
    snprintf(allowed, sizeof allowed, "a whole number from %lld to %lld", lo, hi);
    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
        return rs_yaml_fail(y, rs_yaml_line(v), key, "expected a number, got %s (allowed: %s)", rs_yaml_what(v),
                            allowed);
    const char *s = rs_yaml_scalar(v);
    long long x = 0;
    int rc = rs_yaml_parse_ll(s, &x);
    if (rc == -1 || !rs_yaml_is_text(v))
        return rs_yaml_fail(y, rs_yaml_line(v), key, "'%.40s' is not a whole number (allowed: %s)", s, allowed);
    if (rc == -2 || x < lo || x > hi)
        return rs_yaml_fail(y, rs_yaml_line(v), key, "%.40s is out of range (allowed: %s)", s, allowed);
    *out = x;
    return 0;
}

static int us_enum(rs_yaml *y, yaml_node_t *v, const char *key, const rs_yaml_enum *e, int *out)
{
    char list[160];
    rs_yaml_enum_list(e, list, sizeof list);
    if (!v || v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0)
        return rs_yaml_fail(y, rs_yaml_line(v), key, "expected %s, got %s (allowed: %s)", e->what, rs_yaml_what(v),
                            list);
    if (rs_yaml_enum_lookup(e, rs_yaml_scalar(v), out) != 0)
        return rs_yaml_bad_enum(y, rs_yaml_line(v), key, e, rs_yaml_scalar(v));
    return 0;
}

/* [buffer, chunk] */
static int us_ref(rs_yaml *y, yaml_node_t *v, const char *key, uint8_t *buf, uint32_t *chunk)
{
    static const char allowed[] = "[buffer, chunk]: buffer send, recv or scratch, chunk a whole number";
    if (!v || v->type != YAML_SEQUENCE_NODE || rs_yaml_count(v) != 2)
        return rs_yaml_fail(y, rs_yaml_line(v), key, "expected a list of a buffer and a chunk, got %s (allowed: %s)",
                            v && v->type == YAML_SEQUENCE_NODE ? "a list of another length" : rs_yaml_what(v),
                            allowed);
    int b = 0;
    long long x = 0;
    if (us_enum(y, rs_yaml_item(y, v, 0), key, &us_bufs, &b) ||
        us_int(y, rs_yaml_item(y, v, 1), key, 0, UINT32_MAX, &x))
        return -1;
    *buf = (uint8_t)b;
    *chunk = (uint32_t)x;
    return 0;
}

/* Optional number: *out keeps its default when the key is absent. */
static int us_opt_int(rs_yaml *y, yaml_node_t *map, const char *path, const char *name, long long lo, long long hi,
                      long long *out)
{
    yaml_node_t *v = rs_yaml_get(y, map, name, NULL);
    char key[192];
    snprintf(key, sizeof key, "%s%s%s", path, path[0] ? "." : "", name);
    return v ? us_int(y, v, key, lo, hi, out) : 0;
}

static int us_step(rs_yaml *y, yaml_node_t *n, const char *path, const ncl_user_schedule *s, ncl_user_step *st)
{
    char key[192], list[160];
    if (n->type != YAML_MAPPING_NODE)
        return rs_yaml_fail(y, rs_yaml_line(n), path, "expected a mapping, got %s (allowed: {op: ..., ...})", rs_yaml_what(n));
    if (us_keys(y, n, path, us_step_keys, US_COUNT(us_step_keys)))
        return -1;
    int op = 0;
    snprintf(key, sizeof key, "%s.op", path);
    yaml_node_t *opv = rs_yaml_get(y, n, "op", NULL);
    if (!opv) {
        rs_yaml_enum_list(&us_ops, list, sizeof list);
        return rs_yaml_fail(y, rs_yaml_line(n), key, "missing (allowed: %s)", list);
    }
    /* the wide-accumulation kinds are det's private fp32 accumulator: user chunks are elements
     * of the plan's dtype, so they have no place to name one; say so rather than "unknown" */
    static const char *const wide_ops[] = {"widen", "reduce_wide", "narrow"};
    for (size_t i = 0; opv->type == YAML_SCALAR_NODE && i < US_COUNT(wide_ops); i++)
        if (strcmp(rs_yaml_scalar(opv), wide_ops[i]) == 0) {
            rs_yaml_enum_list(&us_ops, list, sizeof list);
            return rs_yaml_fail(y, rs_yaml_line(opv), key, "'%s' (LOCAL_%s) is not available in user schedules: wide "
                           "accumulation is the det algorithm's (allowed: %s)", wide_ops[i],
                           i == 0 ? "WIDEN" : i == 1 ? "REDUCE_WIDE" : "NARROW", list);
        }
    if (us_enum(y, opv, key, &us_ops, &op))
        return -1;
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)op;
    /* what the op takes and needs */
    for (size_t i = 0; i < US_COUNT(us_step_keys); i++) {
        yaml_node_t *kn = NULL, *v = rs_yaml_get(y, n, us_step_keys[i], &kn);
        snprintf(key, sizeof key, "%s.%s", path, us_step_keys[i]);
        const char *takes[US_COUNT(us_step_keys)];
        size_t nt = 0;
        for (size_t j = 0; j < US_COUNT(us_step_keys); j++)
            if (us_op_keys[op].takes & (1u << j))
                takes[nt++] = us_step_keys[j];
        us_list(takes, nt, list, sizeof list);
        if (v && !(us_op_keys[op].takes & (1u << i)))
            return rs_yaml_fail(y, rs_yaml_line(kn), key, "not used by op %s (allowed with %s: %s)", rs_yaml_scalar(opv),
                           rs_yaml_scalar(opv), list);
        if (!v && (us_op_keys[op].needs & (1u << i)))
            return rs_yaml_fail(y, rs_yaml_line(n), key, "missing: op %s needs it (allowed with %s: %s)", rs_yaml_scalar(opv),
                           rs_yaml_scalar(opv), list);
    }
    long long x = 0;
    st->peer = -1;
    if (rs_yaml_get(y, n, "peer", NULL)) {
        if (us_opt_int(y, n, path, "peer", 0, s->nranks - 1, &x))
            return -1;
        st->peer = (int32_t)x;
    }
    yaml_node_t *v;
    if ((v = rs_yaml_get(y, n, "src", NULL))) {
        snprintf(key, sizeof key, "%s.src", path);
        if (us_ref(y, v, key, &st->src_buf, &st->src_chunk))
            return -1;
    }
    if ((v = rs_yaml_get(y, n, "dst", NULL))) {
        snprintf(key, sizeof key, "%s.dst", path);
        if (us_ref(y, v, key, &st->dst_buf, &st->dst_chunk))
            return -1;
    }
    if (op == NCL_TASK_LOCAL_DIV) { /* in place: the source is the destination */
        st->src_buf = st->dst_buf;
        st->src_chunk = st->dst_chunk;
    }
    x = op <= NCL_TASK_LOCAL_DIV ? 1 : 0;
    if (us_opt_int(y, n, path, "chunks", 1, UINT32_MAX, &x))
        return -1;
    st->chunks = (uint32_t)x;
    x = 0;
    if (us_opt_int(y, n, path, "notify", 0, NCL_NOTIFY_IDS - 1, &x))
        return -1;
    st->notify = (uint32_t)x;
    x = op == NCL_TASK_NOTIFY_WAIT ? 1 : 0;
    if (us_opt_int(y, n, path, "count", 1, UINT32_MAX, &x))
        return -1;
    st->count = (uint32_t)x;
    return 0;
}

/* Line of a step's field (or of the step) for ncl_user_validate's findings. */
static int us_field_line(rs_yaml *y, yaml_node_t *step, const char *field)
{
    yaml_node_t *k = NULL;
    return rs_yaml_get(y, step, field, &k) ? rs_yaml_line(k) : rs_yaml_line(step);
}

static int us_parse(rs_yaml *y, yaml_node_t *root, rs_usersched *u)
{
    ncl_user_schedule *s = &u->sched;
    if (root->type != YAML_MAPPING_NODE)
        return rs_yaml_fail(y, rs_yaml_line(root), "(document)", "expected a mapping, got %s (allowed: a mapping of "
                       "name, collective, ranks, chunks, queues, streams)", rs_yaml_what(root));
    if (us_keys(y, root, "", us_top_keys, US_COUNT(us_top_keys)))
        return -1;
    static const char *const required[] = {"collective", "ranks", "streams"};
    for (size_t i = 0; i < US_COUNT(required); i++)
        if (!rs_yaml_get(y, root, required[i], NULL))
            return rs_yaml_fail(y, rs_yaml_line(root), required[i], "missing (allowed: %s)",
                           i == 0 ? "allreduce, broadcast, reduce, reduce_scatter, allgather"
                           : i == 1 ? "the rank count the schedule is written for"
                                    : "a list of {rank, queue, steps}");
    yaml_node_t *v = rs_yaml_get(y, root, "name", NULL);
    if (v) {
        if (!rs_yaml_is_text(v) || v->data.scalar.length == 0)
            return rs_yaml_fail(y, rs_yaml_line(v), "name", "expected a name, got %s (allowed: a short name)", rs_yaml_what(v));
        free(u->name);
        if (!(u->name = strdup(rs_yaml_scalar(v))))
            return rs_yaml_fail(y, rs_yaml_line(v), "name", "out of memory");
    }
    int coll = 0;
    if (us_enum(y, rs_yaml_get(y, root, "collective", NULL), "collective", &us_colls, &coll))
        return -1;
    long long ranks = 0, chunks = 1, queues = 1;
    if (us_opt_int(y, root, "", "ranks", 1, US_MAX_RANKS, &ranks) ||
        us_opt_int(y, root, "", "chunks", 1, US_MAX_CHUNKS, &chunks) ||
        us_opt_int(y, root, "", "queues", 1, NCL_MAX_QUEUES, &queues))
        return -1;
    s->coll = (uint8_t)coll;
    s->nranks = (int32_t)ranks;
    s->chunks = (uint32_t)chunks;
    s->queues = (uint32_t)queues;

    yaml_node_t *streams = rs_yaml_get(y, root, "streams", NULL);
    if (streams->type != YAML_SEQUENCE_NODE)
        return rs_yaml_fail(y, rs_yaml_line(streams), "streams", "expected a list, got %s (allowed: a list of {rank, queue, "
                       "steps})", rs_yaml_what(streams));
    size_t nstreams = rs_yaml_count(streams), total = 0;
    /* count first: one allocation for every step */
    for (size_t i = 0; i < nstreams; i++) {
        yaml_node_t *e = rs_yaml_item(y, streams, i);
        char path[64];
        snprintf(path, sizeof path, "streams[%zu]", i);
        if (!e || e->type != YAML_MAPPING_NODE)
            return rs_yaml_fail(y, rs_yaml_line(e ? e : streams), path, "expected a mapping, got %s (allowed: {rank, queue, "
                           "steps})", rs_yaml_what(e));
        yaml_node_t *st = rs_yaml_get(y, e, "steps", NULL);
        if (st && st->type == YAML_SEQUENCE_NODE)
            total += rs_yaml_count(st);
    }
    if (total > RS_USERSCHED_MAX_STEPS)
        return rs_yaml_fail(y, rs_yaml_line(streams), "streams", "%zu steps (allowed: at most %u)", total,
                       RS_USERSCHED_MAX_STEPS);
    u->steps = calloc(total ? total : 1, sizeof *u->steps);
    yaml_node_t **nodes = calloc(total ? total : 1, sizeof *nodes);
    size_t *where = calloc(total ? total : 1, 2 * sizeof *where);
    unsigned char *seen = calloc((size_t)ranks * (size_t)queues, 1);
    int rc = 0;
    if (!u->steps || !nodes || !where || !seen)
        rc = rs_yaml_fail(y, rs_yaml_line(streams), "streams", "out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < nstreams; i++) {
        yaml_node_t *e = rs_yaml_item(y, streams, i);
        char path[64], key[96];
        snprintf(path, sizeof path, "streams[%zu]", i);
        long long rank = 0, queue = 0;
        if ((rc = us_keys(y, e, path, us_stream_keys, US_COUNT(us_stream_keys))) != 0)
            break;
        snprintf(key, sizeof key, "%s.rank", path);
        yaml_node_t *rv = rs_yaml_get(y, e, "rank", NULL), *qk = NULL, *sv = rs_yaml_get(y, e, "steps", NULL);
        if (!rv) {
            rc = rs_yaml_fail(y, rs_yaml_line(e), key, "missing (allowed: a rank from 0 to %lld)", ranks - 1);
            break;
        }
        if ((rc = us_int(y, rv, key, 0, ranks - 1, &rank)) != 0 ||
            (rc = us_opt_int(y, e, path, "queue", 0, queues - 1, &queue)) != 0)
            break;
        rs_yaml_get(y, e, "queue", &qk);
        size_t slot = (size_t)rank * (size_t)queues + (size_t)queue;
        if (seen[slot]) {
            rc = rs_yaml_fail(y, rs_yaml_line(qk ? qk : rv), path, "rank %lld queue %lld is listed twice (allowed: one entry "
                         "per rank and queue)", rank, queue);
            break;
        }
        seen[slot] = 1;
        snprintf(key, sizeof key, "%s.steps", path);
        if (!sv || sv->type != YAML_SEQUENCE_NODE) {
            rc = rs_yaml_fail(y, rs_yaml_line(sv ? sv : e), key, "%s (allowed: a list of steps {op: ..., ...})",
                         sv ? "is not a list" : "missing");
            break;
        }
        for (size_t j = 0; rc == 0 && j < rs_yaml_count(sv); j++) {
            char spath[96];
            snprintf(spath, sizeof spath, "%s.steps[%zu]", path, j);
            yaml_node_t *n = rs_yaml_item(y, sv, j);
            if (!n) {
                rc = rs_yaml_fail(y, rs_yaml_line(sv), spath, "missing entry");
                break;
            }
            if ((rc = us_step(y, n, spath, s, &u->steps[k])) != 0)
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
                rc = rs_yaml_fail(y, rs_yaml_line(root), w.field, "%s", msg);
            } else {
                char key[128];
                const char *field = strcmp(w.field, "kind") == 0 ? "op" : w.field;
                snprintf(key, sizeof key, "streams[%zu].steps[%zu].%s", where[2 * w.step], where[2 * w.step + 1],
                         field);
                rc = rs_yaml_fail(y, us_field_line(y, nodes[w.step], field), key, "%s", msg);
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

int rs_usersched_load(const char *path, const char *shown, rs_usersched **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    char why[128] = "";
    size_t len = 0;
    char *text = rs_yaml_read_file(path, RS_USERSCHED_MAX_FILE, &len, why, sizeof why);
    if (!text) {
        if (err && errlen)
            snprintf(err, errlen, "%s", why);
        return -2;
    }
    rs_yaml y;
    rs_yaml_init(&y, shown ? shown : path, err, errlen);
    rs_usersched *u = calloc(1, sizeof *u);
    int rc = u ? rs_yaml_load(&y, text, len) : rs_yaml_fail(&y, 1, "yaml", "out of memory");
    if (rc == 0) {
        yaml_node_t *root = rs_yaml_root(&y);
        rc = root ? us_parse(&y, root, u)
                  : rs_yaml_fail(&y, 1, "(document)", "the file is empty (allowed: a mapping with collective, ranks, "
                                                      "streams)");
    }
    if (rc == 0 && !u->name && !(u->name = rs_yaml_base_name(y.file)))
        rc = rs_yaml_fail(&y, 1, "name", "out of memory");
    rs_yaml_free(&y);
    free(text);
    if (rc != 0) {
        rs_usersched_free(u);
        return -1;
    }
    u->sched.name = u->name;
    *out = u;
    return 0;
}
