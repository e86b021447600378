/* rs_chakra.c — reads a Chakra execution trace: protobuf wire format decoded by hand (varints, length-delimited records), checked as it is read. */
#define _POSIX_C_SOURCE 200809L
#include "rs_chakra.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chakra's NodeType values (et_def.proto) */
enum { ET_INVALID = 0, ET_METADATA = 1, ET_MEM_LOAD = 2, ET_MEM_STORE = 3, ET_COMP = 4, ET_SEND = 5, ET_RECV = 6,
       ET_COLL = 7, ET_STORAGE = 8, ET_BATCH = 9, ET_CHECKPOINT = 10 };
/* protobuf wire types */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

static const char *const k_node_types[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                           "COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
                                           "STORAGE_NODE", "BATCH_NODE", "CHECKPOINT_NODE"};
static const char *const k_comm_types[] = {"ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER",
                                           "BROADCAST", "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK",
                                           "BARRIER"};
#define ALLOWED_COLLS "ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, BARRIER"

const char *rs_et_comm_name(int comm_type)
{
    return comm_type >= 0 && comm_type < (int)(sizeof k_comm_types / sizeof *k_comm_types) ? k_comm_types[comm_type]
                                                                                          : "?";
}

/* A span of the file being decoded: [pos, end), offsets from the file's start. */
typedef struct span {
    const uint8_t *buf;
    size_t pos, end;
} span;

typedef struct reader {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} reader;

static int fail(reader *r, size_t at, const char *fmt, ...)
{
    if (r->failed++)
        return -1;
    int n = snprintf(r->err, r->errlen, "%s: byte %zu: ", r->path, at);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int varint(reader *r, span *s, uint64_t *v)
{
    uint64_t x = 0;
    size_t at = s->pos;
    for (int shift = 0; shift < 70; shift += 7) {
        if (s->pos >= s->end)
            return fail(r, at, "a varint runs past the end of its record (truncated file?)");
        uint8_t b = s->buf[s->pos++];
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail(r, at, "a varint longer than 10 bytes (not a protobuf record)");
}

/* Reads a field's key; a length-delimited field's body becomes *body. */
static int field(reader *r, span *s, uint32_t *num, int *wt, uint64_t *value, span *body)
{
    size_t at = s->pos;
    uint64_t key = 0;
    if (varint(r, s, &key) != 0)
        return -1;
    *num = (uint32_t)(key >> 3);
    *wt = (int)(key & 7);
    if (*num == 0)
        return fail(r, at, "field number 0 (not a protobuf record)");
    switch (*wt) {
    case WT_VARINT:
        return varint(r, s, value);
    case WT_I64:
    case WT_I32: {
        size_t w = *wt == WT_I64 ? 8 : 4;
        if (s->end - s->pos < w)
            return fail(r, at, "a fixed-width field runs past the end of its record (truncated file?)");
        uint64_t x = 0;
        for (size_t i = 0; i < w; i++)
            x |= (uint64_t)s->buf[s->pos + i] << (8 * i);
        s->pos += w;
        *value = x;
        return 0;
    }
    case WT_LEN: {
        uint64_t len = 0;
        if (varint(r, s, &len) != 0)
            return -1;
        if (len > s->end - s->pos)
            return fail(r, at, "a field of %llu bytes runs past the end of its record (truncated file?)",
                        (unsigned long long)len);
        body->buf = s->buf;
        body->pos = s->pos;
        body->end = s->pos + (size_t)len;
        s->pos += (size_t)len;
        *value = len;
        return 0;
    }
    default:
        return fail(r, at, "wire type %d of field %u (allowed: 0, 1, 2, 5; groups are not used by Chakra)", *wt,
                    *num);
    }
}

static void copy_text(char *dst, size_t cap, const span *b)
{
    size_t n = b->end - b->pos < cap - 1 ? b->end - b->pos : cap - 1;
    memcpy(dst, b->buf + b->pos, n);
    dst[n] = '\0';
}

static int push_dep(reader *r, rs_et_node *nd, uint64_t id, size_t at)
{
    if ((nd->ndeps & (nd->ndeps + 1)) == 0 || nd->ndeps == 0) { /* grow at 0, 1, 3, 7, ... */
        size_t cap = nd->ndeps ? 2 * (nd->ndeps + 1) : 4;
        uint64_t *d = realloc(nd->deps, cap * sizeof *d);
        if (d == NULL)
            return fail(r, at, "out of memory");
        nd->deps = d;
    }
    nd->deps[nd->ndeps++] = id;
    return 0;
}

/* One AttributeProto: the names ringsim reads take integer values of any integer type, and
 * pg_name a string. */
static int attribute(reader *r, span *s, rs_et_node *nd, int *have_size, int *have_type)
{
    char name[32] = "";
    int have_int = 0;
    uint64_t ival = 0;
    span text = {NULL, 0, 0};
    while (s->pos < s->end) {
        uint32_t num;
        int wt;
        uint64_t v;
        span b;
        if (field(r, s, &num, &wt, &v, &b) != 0)
            return -1;
        if (num == 1 && wt == WT_LEN)
            copy_text(name, sizeof name, &b);
        else if ((num == 7 || num == 9 || num == 11 || num == 13 || num == 27) && wt == WT_VARINT)
            ival = num == 7 ? (uint64_t)(int64_t)(int32_t)v : v, have_int = 1;
        else if ((num == 15 || num == 17) && wt == WT_VARINT)
            ival = (uint64_t)((int64_t)(v >> 1) ^ -(int64_t)(v & 1)), have_int = 1; /* zigzag */
        else if ((num == 19 || num == 23) && wt == WT_I32)
            ival = num == 23 ? (uint64_t)(int64_t)(int32_t)v : v, have_int = 1;
        else if ((num == 21 || num == 25) && wt == WT_I64)
            ival = v, have_int = 1;
        else if (num == 29 && wt == WT_LEN)
            text = b;
    }
    if (text.buf && strcmp(name, "pg_name") == 0) {
        if (text.end - text.pos >= sizeof nd->pg)
            return fail(r, s->pos, "node %llu: pg_name of %zu bytes (allowed: up to %zu)", (unsigned long long)nd->id,
                        text.end - text.pos, sizeof nd->pg - 1);
        copy_text(nd->pg, sizeof nd->pg, &text);
    }
    if (!have_int)
        return 0;
    if (strcmp(name, "is_cpu_op") == 0)
        nd->cpu = ival != 0;
    else if (strcmp(name, "comm_type") == 0)
        nd->comm_type = (int64_t)ival < 0 || ival > 1000 ? -1 : (int)ival, *have_type = 1;
    else if (strcmp(name, "comm_size") == 0) {
        if ((int64_t)ival < 0)
            return fail(r, s->pos, "node %llu: comm_size %lld (allowed: bytes >= 0)", (unsigned long long)nd->id,
                        (long long)ival);
        nd->comm_size = ival, *have_size = 1;
    } else if (strcmp(name, "comm_src") == 0 || strcmp(name, "comm_dst") == 0) {
        if ((int64_t)ival < 0 || ival > 0x7fffffff)
            return fail(r, s->pos, "node %llu: %s %lld (allowed: a rank >= 0)", (unsigned long long)nd->id, name,
                        (long long)ival);
        if (strcmp(name, "comm_src") == 0)
            nd->src = (int32_t)ival;
        else
            nd->dst = (int32_t)ival;
    } else if (strcmp(name, "comm_tag") == 0)
        nd->tag = (int64_t)ival < 0 ? -1 : (int64_t)(ival & 0x7fffffffffffffffull);
    return 0;
}

static int node(reader *r, span *s, rs_et_node *nd)
{
    const size_t at = nd->offset;
    uint64_t type = ET_INVALID;
    int have_size = 0, have_type = 0;
    span inputs = {NULL, 0, 0};
    nd->comm_type = -1;
    nd->src = nd->dst = -1;
    nd->tag = -1;
    while (s->pos < s->end) {
        uint32_t num;
        int wt;
        uint64_t v;
        span b;
        size_t fat = s->pos;
        if (field(r, s, &num, &wt, &v, &b) != 0)
            return -1;
        if (num == 1 && wt == WT_VARINT)
            nd->id = v;
        else if (num == 2 && wt == WT_LEN)
            copy_text(nd->name, sizeof nd->name, &b);
        else if (num == 3 && wt == WT_VARINT)
            type = v;
        else if ((num == 4 || num == 5) && wt == WT_VARINT) {
            if (push_dep(r, nd, v, fat) != 0)
                return -1;
        } else if ((num == 4 || num == 5) && wt == WT_LEN) { /* packed */
            while (b.pos < b.end) {
                uint64_t id = 0;
                if (varint(r, &b, &id) != 0 || push_dep(r, nd, id, fat) != 0)
                    return -1;
            }
        } else if (num == 7 && wt == WT_VARINT)
            nd->duration_us = v;
        else if (num == 8 && wt == WT_LEN)
            inputs = b;
        else if (num == 10 && wt == WT_LEN) {
            if (attribute(r, &b, nd, &have_size, &have_type) != 0)
                return -1;
        }
    }
    const char *tn = type < sizeof k_node_types / sizeof *k_node_types ? k_node_types[type] : "an unknown type";
    switch (type) {
    case ET_COMP:
        nd->kind = RS_ET_COMPUTE;
        return 0;
    case ET_METADATA:
        nd->kind = RS_ET_METADATA;
        while (inputs.buf && strstr(nd->name, "process_group:init") && inputs.pos < inputs.end) {
            uint32_t num; /* IOInfo: its values (1) are the process groups PyTorch made */
            int wt;
            uint64_t v;
            span b;
            if (field(r, &inputs, &num, &wt, &v, &b) != 0)
                return -1;
            if (num == 1 && wt == WT_LEN && !nd->pg_info) {
                if ((nd->pg_info = malloc(b.end - b.pos + 1)) == NULL)
                    return fail(r, at, "out of memory");
                copy_text(nd->pg_info, b.end - b.pos + 1, &b);
            }
        }
        return 0;
    case ET_COLL:
        nd->kind = RS_ET_COLLECTIVE;
        if (!have_type)
            return fail(r, at, "node %llu (%s): a COMM_COLL_NODE without comm_type", (unsigned long long)nd->id,
                        nd->name);
        if (nd->comm_type != RS_ET_ALL_REDUCE && nd->comm_type != RS_ET_REDUCE && nd->comm_type != RS_ET_ALL_GATHER &&
            nd->comm_type != RS_ET_BROADCAST && nd->comm_type != RS_ET_ALL_TO_ALL &&
            nd->comm_type != RS_ET_REDUCE_SCATTER && nd->comm_type != RS_ET_BARRIER)
            return fail(r, at, "node %llu (%s): collective %s is not run (allowed: " ALLOWED_COLLS ")",
                        (unsigned long long)nd->id, nd->name, rs_et_comm_name(nd->comm_type));
        if (!have_size && nd->comm_type != RS_ET_BARRIER)
            return fail(r, at, "node %llu (%s): a %s without comm_size (allowed: its bytes as an integer attribute)",
                        (unsigned long long)nd->id, nd->name, rs_et_comm_name(nd->comm_type));
        return 0;
    case ET_SEND:
    case ET_RECV:
        nd->kind = type == ET_SEND ? RS_ET_SEND : RS_ET_RECV;
        if (!have_size)
            return fail(r, at, "node %llu (%s): a %s without comm_size (allowed: its bytes as an integer attribute)",
                        (unsigned long long)nd->id, nd->name, tn);
        if ((type == ET_SEND ? nd->dst : nd->src) < 0)
            return fail(r, at, "node %llu (%s): a %s without %s (allowed: the peer's rank as an integer attribute)",
                        (unsigned long long)nd->id, nd->name, tn, type == ET_SEND ? "comm_dst" : "comm_src");
        return 0;
    default:
        return fail(r, at, "node %llu (%s): %s is not run (allowed: COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, "
                           "COMM_RECV_NODE, METADATA_NODE; memory and storage nodes are not modelled)",
                    (unsigned long long)nd->id, nd->name, tn);
    }
}

/* (id, index) of a node, sorted by id: dependencies are found by binary search. */
typedef struct id_index {
    uint64_t id;
    size_t index;
} id_index;

static int by_id(const void *a, const void *b)
{
    const id_index *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : x->index < y->index ? -1 : x->index > y->index;
}

/* Ids are unique, every dependency names a node of the file (each becomes that node's index),
 * and the graph has no cycle: Kahn's algorithm over the nodes' users, O((n + deps) log n). */
static int check_graph(reader *r, rs_et_trace *t)
{
    const size_t n = t->n;
    size_t ndeps = 0;
    for (size_t i = 0; i < n; i++)
        ndeps += t->nodes[i].ndeps;
    id_index *ids = malloc((n ? n : 1) * sizeof *ids);
    size_t *indeg = calloc(n + 1, sizeof *indeg), *first = calloc(n + 1, sizeof *first);
    size_t *users = malloc((ndeps ? ndeps : 1) * sizeof *users), *queue = malloc((n ? n : 1) * sizeof *queue);
    int rc = 0;
    if (!ids || !indeg || !first || !users || !queue) {
        rc = fail(r, 0, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = (id_index){t->nodes[i].id, i};
    qsort(ids, n, sizeof *ids, by_id);
    for (size_t k = 1; k < n; k++)
        if (ids[k].id == ids[k - 1].id) {
            rc = fail(r, t->nodes[ids[k].index].offset, "node id %llu again (first at byte %zu; allowed: unique ids)",
                      (unsigned long long)ids[k].id, t->nodes[ids[k - 1].index].offset);
            goto out;
        }
    for (size_t i = 0; i < n; i++) { /* each dependency's id becomes its node's index */
        rs_et_node *nd = &t->nodes[i];
        for (size_t d = 0; d < nd->ndeps; d++) {
            const uint64_t want = nd->deps[d];
            size_t lo = 0, hi = n;
            while (lo < hi) { /* the first entry with an id >= want */
                size_t mid = lo + (hi - lo) / 2;
                if (ids[mid].id < want)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || ids[lo].id != want) {
                rc = fail(r, nd->offset, "node %llu depends on node %llu, which the file does not hold",
                          (unsigned long long)nd->id, (unsigned long long)want);
                goto out;
            }
            nd->deps[d] = ids[lo].index;
            first[ids[lo].index + 1]++; /* one more user of that node */
            indeg[i]++;
        }
    }
    for (size_t i = 0; i < n; i++) /* users of node i: users[first[i] .. first[i + 1]) */
        first[i + 1] += first[i];
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < t->nodes[i].ndeps; d++)
            users[first[t->nodes[i].deps[d]]++] = i;
    for (size_t i = n; i > 0; i--) /* the filling moved each start to the next one's: move back */
        first[i] = first[i - 1];
    first[0] = 0;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            queue[tail++] = i;
    while (head < tail) {
        size_t v = queue[head++];
        for (size_t u = first[v]; u < first[v + 1]; u++)
            if (--indeg[users[u]] == 0)
                queue[tail++] = users[u];
    }
    if (tail < n)
        for (size_t i = 0; i < n; i++)
            if (indeg[i]) {
                rc = fail(r, t->nodes[i].offset, "node %llu is on a dependency cycle (allowed: an acyclic graph)",
                          (unsigned long long)t->nodes[i].id);
                break;
            }
out:
    free(ids);
    free(indeg);
    free(first);
    free(users);
    free(queue);
    return rc;
}

int rs_et_load(const char *path, rs_et_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    reader r = {path, err, errlen, 0};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (b == NULL)
                free(buf);
            buf = b;
        }
    }
    int rd_err = ferror(f);
    fclose(f);
    if (buf == NULL || rd_err) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read%s", path, buf ? "" : ": out of memory");
        return -1;
    }
    int rc = 0;
    span file = {buf, 0, len};
    if (len == 0)
        rc = fail(&r, 0, "empty file (allowed: a Chakra trace: GlobalMetadata, then nodes)");
    else if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
        rc = fail(&r, 0, "gzip-compressed (allowed: a plain trace; gunzip it first)");
    size_t cap_nodes = 0;
    for (int first = 1; rc == 0 && file.pos < file.end; first = 0) {
        size_t at = file.pos;
        uint64_t mlen = 0;
        if (varint(&r, &file, &mlen) != 0 || mlen > file.end - file.pos) {
            rc = fail(&r, at, "a record of %llu bytes runs past the end of the file (truncated file?)",
                      (unsigned long long)mlen);
            break;
        }
        span m = {buf, file.pos, file.pos + (size_t)mlen};
        file.pos += (size_t)mlen;
        if (first) { /* GlobalMetadata: version = 1 */
            while (rc == 0 && m.pos < m.end) {
                uint32_t num;
                int wt;
                uint64_t v;
                span b;
                if (field(&r, &m, &num, &wt, &v, &b) != 0)
                    rc = -1;
                else if (num == 1 && wt == WT_LEN)
                    copy_text(t->version, sizeof t->version, &b);
            }
            if (rc == 0 && t->version[0] == '\0')
                rc = fail(&r, at, "the first record has no version (allowed: Chakra's GlobalMetadata first)");
            continue;
        }
        if (t->n == cap_nodes) {
            cap_nodes = cap_nodes ? 2 * cap_nodes : 16;
            rs_et_node *nn = realloc(t->nodes, cap_nodes * sizeof *nn);
            if (nn == NULL) {
                rc = fail(&r, at, "out of memory");
                break;
            }
            t->nodes = nn;
        }
        rs_et_node *nd = &t->nodes[t->n++];
        memset(nd, 0, sizeof *nd);
        nd->offset = at;
        rc = node(&r, &m, nd);
    }
    if (rc == 0 && t->n == 0)
        rc = fail(&r, len, "no nodes after the metadata (allowed: at least one node)");
    if (rc == 0)
        rc = check_graph(&r, t);
    free(buf);
    return rc;
}

void rs_et_free(rs_et_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->nodes[i].deps), free(t->nodes[i].pg_info);
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

/* ---- comm group files ------------------------------------------------------------------------- */

typedef struct jscan {
    const char *path, *p;
    int line;
    char *err;
    size_t errlen;
    const char *form; /* what the text should look like, for messages */
} jscan;

static int jfail(jscan *j, const char *fmt, ...)
{
    int n = snprintf(j->err, j->errlen, "%s:%d: ", j->path, j->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < j->errlen)
        vsnprintf(j->err + n, j->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Skips blanks (counting lines); the next character, '\0' at the end. */
static char jpeek(jscan *j)
{
    for (; *j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'; j->p++)
        j->line += *j->p == '\n';
    return *j->p;
}

static int jexpect(jscan *j, char c, const char *what)
{
    if (jpeek(j) != c) {
        char found[24] = "the end of the file";
        if (*j->p)
            snprintf(found, sizeof found, "'%c'", *j->p);
        return jfail(j, "expected %s, found %s (allowed: %s)", what, found, j->form);
    }
    j->p++;
    return 0;
}

/* A JSON string at j (after blanks) into out; cap 0: skipped. 0 or -1 (the message in j's err). */
static int jstring(jscan *j, char *out, size_t cap)
{
    if (jexpect(j, '"', "a string") != 0)
        return -1;
    size_t n = 0;
    for (; *j->p && *j->p != '"'; j->p++) {
        if (*j->p == '\\' && j->p[1])
            j->p++; /* an escaped character: taken as it is (names here are plain) */
        if (cap && n + 1 >= cap)
            return jfail(j, "a name longer than %zu characters", cap - 1);
        if (cap)
            out[n++] = *j->p;
    }
    if (cap)
        out[n] = '\0';
    return jexpect(j, '"', "the string's closing quote");
}

/* A list of distinct ranks below nranks, [R, ...], into ranks (room for nranks): *n of them. */
static int jranks(jscan *j, const char *group, int nranks, int32_t *ranks, size_t *n)
{
    *n = 0;
    if (jexpect(j, '[', "'[' (the group's ranks)") != 0)
        return -1;
    while (jpeek(j) != ']') {
        if (*n && jexpect(j, ',', "',' or ']'") != 0)
            return -1;
        jpeek(j);
        char *end;
        errno = 0;
        long v = strtol(j->p, &end, 10);
        int twice = 0;
        for (size_t k = 0; k < *n; k++)
            twice |= ranks[k] == (int32_t)v;
        if (end == j->p || errno || v < 0 || v >= nranks || twice)
            return jfail(j, "group \"%s\": rank %.*s (allowed: 0 to %d, the scenario's ranks, each once)", group,
                         end == j->p ? 1 : (int)(end - j->p), j->p, nranks - 1);
        j->p = end;
        ranks[(*n)++] = (int32_t)v;
    }
    j->p++; /* ']' */
    return 0;
}

/* Skips one JSON value of any kind. */
static int jskip(jscan *j)
{
    char c = jpeek(j);
    if (c == '"') {
        char scrap[1];
        return jstring(j, scrap, 0);
    }
    if (c == '[' || c == '{') {
        const char close = c == '[' ? ']' : '}';
        j->p++;
        for (int first = 1; jpeek(j) != close; first = 0) {
            if ((!first && jexpect(j, ',', "','") != 0) ||
                (c == '{' && (jskip(j) != 0 || jexpect(j, ':', "':'") != 0)) || jskip(j) != 0)
                return -1;
        }
        j->p++;
        return 0;
    }
    const char *start = j->p;
    while (*j->p && strchr(",]} \t\r\n", *j->p) == NULL)
        j->p++;
    return j->p > start ? 0 : jfail(j, "expected a value, found %s", *j->p ? "a separator" : "the end");
}

/* Adds (name, ranks) to gs, or checks it against the group of that name already there. */
static int group_put(jscan *j, rs_et_groups *gs, const char *name, const int32_t *ranks, size_t n)
{
    for (size_t k = 0; k < gs->n; k++)
        if (strcmp(gs->g[k].name, name) == 0) {
            if (gs->g[k].n == n && memcmp(gs->g[k].ranks, ranks, n * sizeof *ranks) == 0)
                return 0;
            return jfail(j, "group \"%s\" has other ranks than before (allowed: one list per name)", name);
        }
    rs_et_group *g = realloc(gs->g, (gs->n + 1) * sizeof *g);
    if (g == NULL)
        return jfail(j, "out of memory");
    gs->g = g;
    g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    if ((g->ranks = malloc(n * sizeof *ranks)) == NULL)
        return jfail(j, "out of memory");
    memcpy(g->ranks, ranks, n * sizeof *ranks);
    g->n = n;
    gs->n++;
    return 0;
}

int rs_et_groups_load(const char *path, int nranks, rs_et_groups *gs, char *err, size_t errlen)
{
    memset(gs, 0, sizeof *gs);
    jscan j = {path, NULL, 1, err, errlen, "{\"NAME\": [RANK, ...], ...}"};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *t = realloc(text, cap = 2 * cap + 4096 + 1);
            if (t == NULL) {
                free(text);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    text[len] = '\0';
    j.p = text;
    int32_t *ranks = malloc((size_t)nranks * sizeof *ranks);
    int rc = ranks ? jexpect(&j, '{', "'{'") : jfail(&j, "out of memory");
    for (int first = 1; rc == 0 && jpeek(&j) != '}'; first = 0) {
        if (!first && (rc = jexpect(&j, ',', "',' or '}'")) != 0)
            break;
        char name[sizeof gs->g->name];
        size_t n = 0;
        if ((rc = jstring(&j, name, sizeof name)) != 0)
            break;
        if (!name[0] || rs_et_group_find(gs, name)) {
            rc = name[0] ? jfail(&j, "group \"%s\" again (allowed: each name once)", name)
                         : jfail(&j, "an empty group name (allowed: 1 to %zu characters)", sizeof name - 1);
            break;
        }
        if ((rc = jexpect(&j, ':', "':'")) != 0 || (rc = jranks(&j, name, nranks, ranks, &n)) != 0)
            break;
        rc = n ? group_put(&j, gs, name, ranks, n) : jfail(&j, "group \"%s\" has no ranks (allowed: at least one)", name);
    }
    if (rc == 0) {
        j.p++; /* '}' */
        if (jpeek(&j) != '\0')
            rc = jfail(&j, "text after the closing '}'");
        else if (gs->n == 0)
            rc = jfail(&j, "no groups (allowed: at least one)");
    }
    free(ranks);
    free(text);
    return rc;
}

void rs_et_groups_free(rs_et_groups *gs)
{
    for (size_t i = 0; i < gs->n; i++)
        free(gs->g[i].ranks);
    free(gs->g);
    memset(gs, 0, sizeof *gs);
}

const rs_et_group *rs_et_group_find(const rs_et_groups *gs, const char *name)
{
    for (size_t i = 0; gs && i < gs->n; i++)
        if (strcmp(gs->g[i].name, name) == 0)
            return &gs->g[i];
    return NULL;
}

int rs_et_groups_add_declared(const rs_et_trace *t, const char *path, int nranks, rs_et_groups *gs, char *err,
                              size_t errlen)
{
    int32_t *ranks = malloc((size_t)nranks * sizeof *ranks);
    if (ranks == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        const rs_et_node *nd = &t->nodes[i];
        if (!nd->pg_info)
            continue;
        char where[256];
        snprintf(where, sizeof where, "%s: node %llu (%s): inputs", path, (unsigned long long)nd->id, nd->name);
        /* the converter writes Python's str() of a one-element list holding the JSON: ['...'] */
        const char *text = nd->pg_info;
        size_t len = strlen(text);
        char *json = malloc(len + 1);
        if (json == NULL) {
            rc = -1;
            snprintf(err, errlen, "%s: out of memory", where);
            break;
        }
        if (len >= 4 && text[0] == '[' && text[1] == '\'' && text[len - 2] == '\'' && text[len - 1] == ']')
            memcpy(json, text + 2, len - 4), json[len - 4] = '\0';
        else
            memcpy(json, text, len + 1);
        jscan j = {where, json, 1, err, errlen, "[{\"pg_name\": \"NAME\", \"ranks\": [RANK, ...], ...}, ...]"};
        rc = jexpect(&j, '[', "'[' (a list of process groups)");
        for (int first = 1; rc == 0 && jpeek(&j) != ']'; first = 0) {
            if ((!first && (rc = jexpect(&j, ',', "',' or ']'")) != 0) || (rc = jexpect(&j, '{', "'{'")) != 0)
                break;
            char name[32] = "";
            size_t n = 0;
            int have_ranks = 0;
            for (int key1 = 1; rc == 0 && jpeek(&j) != '}'; key1 = 0) {
                char key[256]; /* room for any key the converter writes */
                if ((!key1 && (rc = jexpect(&j, ',', "',' or '}'")) != 0) || (rc = jstring(&j, key, sizeof key)) != 0 ||
                    (rc = jexpect(&j, ':', "':'")) != 0)
                    break;
                if (strcmp(key, "pg_name") == 0) {
                    rc = jstring(&j, name, sizeof name);
                } else if (strcmp(key, "ranks") == 0) {
                    have_ranks = 1;
                    rc = jranks(&j, name, nranks, ranks, &n);
                } else {
                    rc = jskip(&j);
                }
            }
            if (rc != 0)
                break;
            j.p++; /* '}' */
            if (!name[0] || !have_ranks) {
                rc = jfail(&j, "a process group without %s (allowed: %s)", name[0] ? "ranks" : "pg_name", j.form);
                break;
            }
            if (n == 0) /* PyTorch's default group: every rank */
                for (n = 0; n < (size_t)nranks; n++)
                    ranks[n] = (int32_t)n;
            rc = group_put(&j, gs, name, ranks, n);
        }
        free(json);
    }
    free(ranks);
    return rc;
}
