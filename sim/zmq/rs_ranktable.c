/* rs_ranktable.c — rank tables from YAML/JSON files (the scenario wing's YAML walker, with line numbers) or from a launcher's environment. */
#define _POSIX_C_SOURCE 200809L
#include "rs_ranktable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/rs_yaml.h"

#define RS_RT_FILE_MAX (4u << 20)

static const char rs_rt_entry_keys[] = "rank, host, endpoint, control";
static const char rs_rt_top_keys[] = "ranks, job";

int rs_ranktable_check_endpoint(const char *ep, char *why, size_t whylen)
{
    if (!strncmp(ep, "ipc://", 6)) {
        size_t n = strlen(ep + 6);
        if (n == 0 || (ep[6] == '@' && n == 1)) {
            snprintf(why, whylen, "'%s' has no path (allowed: ipc://@NAME or ipc:///PATH)", ep);
            return -1;
        }
        if (n > RS_RT_IPC_PATH_MAX) {
            snprintf(why, whylen, "ipc path of %zu characters is longer than %d, which ZeroMQ refuses (allowed: a "
                     "shorter path, or an abstract name ipc://@NAME)", n, RS_RT_IPC_PATH_MAX);
            return -1;
        }
        return 0;
    }
    if (!strncmp(ep, "tcp://", 6)) {
        const char *hp = ep + 6, *colon = strrchr(hp, ':');
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : -1;
        if (!colon || colon == hp || !end || *end || end == colon + 1 || port < 1 || port > 65535) {
            snprintf(why, whylen, "'%s' is not tcp://HOST:PORT with a port 1..65535", ep);
            return -1;
        }
        return 0;
    }
    snprintf(why, whylen, "'%s' is not an endpoint ringsim uses (allowed: ipc://@NAME, ipc:///PATH, tcp://HOST:PORT)",
             ep);
    return -1;
}

int rs_ranktable_control(const char *ep, char *out, size_t len, char *why, size_t whylen)
{
    if (!strncmp(ep, "ipc://", 6)) {
        if ((size_t)snprintf(out, len, "%s-ctl", ep) >= len || strlen(out) - 6 > RS_RT_IPC_PATH_MAX) {
            snprintf(why, whylen, "'%s-ctl' (the derived control endpoint) is too long; give control: explicitly", ep);
            return -1;
        }
        return 0;
    }
    const char *colon = strrchr(ep, ':');
    long port = colon ? strtol(colon + 1, NULL, 10) : 0;
    if (!colon || port + RS_RT_CONTROL_PORT_OFFSET > 65535) {
        snprintf(why, whylen, "cannot derive a control port from '%s' (port + %d > 65535); give control: explicitly",
                 ep, RS_RT_CONTROL_PORT_OFFSET);
        return -1;
    }
    snprintf(out, len, "%.*s:%ld", (int)(colon - ep), ep, port + RS_RT_CONTROL_PORT_OFFSET);
    return 0;
}

static int rt_set_string(rs_yaml *y, const yaml_node_t *v, const char *field, char *dst, size_t cap)
{
    const char *s = rs_yaml_text(v);
    if (!s)
        return rs_yaml_fail(y, rs_yaml_line(v), field, "must be a string");
    if (strlen(s) >= cap)
        return rs_yaml_fail(y, rs_yaml_line(v), field, "longer than %zu characters", cap - 1);
    snprintf(dst, cap, "%s", s);
    return 0;
}

/* One entry of the list: a mapping with rank, endpoint and optionally host and control. */
static int rt_entry(rs_yaml *y, yaml_node_t *n, size_t idx, int nranks, rs_rank_entry *tmp, int *seen)
{
    char field[64];
    snprintf(field, sizeof field, "ranks[%zu]", idx);
    if (n->type != YAML_MAPPING_NODE)
        return rs_yaml_fail(y, rs_yaml_line(n), field, "must be a mapping (allowed keys: %s)", rs_rt_entry_keys);
    rs_rank_entry e;
    memset(&e, 0, sizeof e);
    e.rank = -1;
    e.line = rs_yaml_line(n);
    int rank_line = e.line, ep_line = e.line, ctl_line = e.line;
    for (size_t i = 0; i < rs_yaml_count(n); i++) {
        yaml_node_t *k = rs_yaml_pair_key(y, n, i), *v = rs_yaml_pair_value(y, n, i);
        const char *key = rs_yaml_text(k);
        char f[96];
        snprintf(f, sizeof f, "%s.%s", field, key ? key : "?");
        if (!key)
            return rs_yaml_fail(y, rs_yaml_line(k), field, "keys must be strings (allowed: %s)", rs_rt_entry_keys);
        if (!strcmp(key, "rank")) {
            const char *s = rs_yaml_text(v);
            long long r = -1;
            if (!s || rs_yaml_parse_ll(s, &r) != 0)
                return rs_yaml_fail(y, rs_yaml_line(v), f, "'%s' is not an integer (allowed: 0..%d)", s ? s : "?",
                                    nranks - 1);
            if (r < 0 || r >= nranks)
                return rs_yaml_fail(y, rs_yaml_line(v), f, "%lld is out of range (allowed: 0..%d for %d entries)", r,
                                    nranks - 1, nranks);
            e.rank = (int)r;
            rank_line = rs_yaml_line(v);
        } else if (!strcmp(key, "host")) {
            if (rt_set_string(y, v, f, e.host, sizeof e.host))
                return -1;
        } else if (!strcmp(key, "endpoint") || !strcmp(key, "control")) {
            char *dst = !strcmp(key, "endpoint") ? e.endpoint : e.control, why[300];
            if (rt_set_string(y, v, f, dst, RS_RT_EP_MAX))
                return -1;
            if (rs_ranktable_check_endpoint(dst, why, sizeof why))
                return rs_yaml_fail(y, rs_yaml_line(v), f, "%s", why);
            if (dst == e.endpoint)
                ep_line = rs_yaml_line(v);
            else
                ctl_line = rs_yaml_line(v);
        } else {
            return rs_yaml_fail(y, rs_yaml_line(k), f, "unknown key (allowed: %s)", rs_rt_entry_keys);
        }
    }
    if (e.rank < 0)
        return rs_yaml_fail(y, e.line, field, "missing rank (allowed keys: %s)", rs_rt_entry_keys);
    if (!e.endpoint[0])
        return rs_yaml_fail(y, e.line, field, "missing endpoint (allowed keys: %s)", rs_rt_entry_keys);
    if (seen[e.rank])
        return rs_yaml_fail(y, rank_line, field, "rank %d is listed twice (first on line %d)", e.rank, seen[e.rank]);
    if (!e.control[0]) {
        char why[300];
        if (rs_ranktable_control(e.endpoint, e.control, sizeof e.control, why, sizeof why))
            return rs_yaml_fail(y, ep_line, field, "%s", why);
    }
    /* the agent binds both: one endpoint for the two sockets fails only when it starts */
    if (!strcmp(e.control, e.endpoint))
        return rs_yaml_fail(y, ctl_line, field, "control %s is the rank's own endpoint (allowed: an endpoint of its own)",
                            e.control);
    seen[e.rank] = e.line;
    tmp[e.rank] = e;
    return 0;
}

static int rt_parse(rs_yaml *y, rs_ranktable *t)
{
    yaml_node_t *root = rs_yaml_root(y);
    if (!root)
        return rs_yaml_fail(y, 1, "(file)", "empty (allowed: a mapping with %s, or a list of ranks)", rs_rt_top_keys);
    yaml_node_t *list = NULL;
    if (root->type == YAML_SEQUENCE_NODE) {
        list = root;
    } else if (root->type == YAML_MAPPING_NODE) {
        for (size_t i = 0; i < rs_yaml_count(root); i++) {
            yaml_node_t *k = rs_yaml_pair_key(y, root, i), *v = rs_yaml_pair_value(y, root, i);
            const char *key = rs_yaml_text(k);
            if (key && !strcmp(key, "ranks")) {
                if (v->type != YAML_SEQUENCE_NODE)
                    return rs_yaml_fail(y, rs_yaml_line(v), "ranks", "must be a list of {rank, endpoint, ...}");
                list = v;
            } else if (key && !strcmp(key, "job")) {
                if (rt_set_string(y, v, "job", t->job, sizeof t->job))
                    return -1;
            } else {
                return rs_yaml_fail(y, rs_yaml_line(k), key ? key : "?", "unknown key (allowed: %s)", rs_rt_top_keys);
            }
        }
        if (!list)
            return rs_yaml_fail(y, rs_yaml_line(root), "ranks", "missing (allowed: %s)", rs_rt_top_keys);
    } else {
        return rs_yaml_fail(y, rs_yaml_line(root), "(file)", "must be a mapping with %s, or a list of ranks",
                            rs_rt_top_keys);
    }
    size_t n = rs_yaml_count(list);
    if (n == 0)
        return rs_yaml_fail(y, rs_yaml_line(list), "ranks", "is empty (allowed: 1..%d entries)", RS_RT_MAX_RANKS);
    if (n > RS_RT_MAX_RANKS)
        return rs_yaml_fail(y, rs_yaml_line(list), "ranks", "%zu entries (allowed: 1..%d)", n, RS_RT_MAX_RANKS);
    rs_rank_entry *tmp = calloc(n, sizeof *tmp);
    int *seen = calloc(n, sizeof *seen);
    if (!tmp || !seen) {
        free(tmp);
        free(seen);
        return rs_yaml_fail(y, 0, "(file)", "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (rt_entry(y, rs_yaml_item(y, list, i), i, (int)n, tmp, seen) != 0) {
            free(tmp);
            free(seen);
            return -1;
        }
    }
    /* n entries, ranks < n, none twice: every rank is there. Endpoints must differ. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            const char *what = NULL;
            if (!strcmp(tmp[i].endpoint, tmp[j].endpoint) || !strcmp(tmp[i].endpoint, tmp[j].control))
                what = tmp[i].endpoint;
            else if (!strcmp(tmp[i].control, tmp[j].control) || !strcmp(tmp[i].control, tmp[j].endpoint))
                what = tmp[i].control;
            if (what) {
                const rs_rank_entry *late = tmp[i].line > tmp[j].line ? &tmp[i] : &tmp[j];
                const rs_rank_entry *early = late == &tmp[i] ? &tmp[j] : &tmp[i];
                char f[48];
                snprintf(f, sizeof f, "rank %d", late->rank);
                int rc = rs_yaml_fail(y, late->line, f, "endpoint %s is also used by rank %d (line %d)", what,
                                      early->rank, early->line);
                free(tmp);
                free(seen);
                return rc;
            }
        }
    free(seen);
    t->e = tmp;
    t->nranks = (int)n;
    return 0;
}

int rs_ranktable_load_string(const char *text, size_t len, const char *name, rs_ranktable *t, char *err,
                             size_t errlen)
{
    rs_yaml y;
    rs_yaml_init(&y, name, err, errlen);
    memset(t, 0, sizeof *t);
    int rc = rs_yaml_load(&y, text, len);
    if (rc == 0)
        rc = rt_parse(&y, t);
    rs_yaml_free(&y);
    if (rc != 0)
        rs_ranktable_free(t);
    else if (!t->job[0])
        snprintf(t->job, sizeof t->job, "table");
    return rc;
}

int rs_ranktable_load(const char *path, rs_ranktable *t, char *err, size_t errlen)
{
    rs_yaml y;
    rs_yaml_init(&y, path, err, errlen);
    memset(t, 0, sizeof *t);
    char why[300];
    size_t n = 0;
    char *buf = rs_yaml_read_file(path, RS_RT_FILE_MAX, &n, why, sizeof why);
    if (!buf && errno != EISDIR && errno != EFBIG && errno != ENOMEM)
        /* a file it cannot open or read is "cannot read" in a rank table's words */
        return rs_yaml_fail(&y, 0, "(file)", "cannot read: %s", strerror(errno));
    if (!buf)
        return rs_yaml_fail(&y, 0, "(file)", "%s", why);
    if (n > RS_RT_FILE_MAX) {
        free(buf);
        return rs_yaml_fail(&y, 0, "(file)", "larger than %u bytes", RS_RT_FILE_MAX);
    }
    int rc = rs_ranktable_load_string(buf, n, path, t, err, errlen);
    free(buf);
    return rc;
}

void rs_ranktable_free(rs_ranktable *t)
{
    if (!t)
        return;
    free(t->e);
    memset(t, 0, sizeof *t);
}

static int rt_alloc(rs_ranktable *t, int nranks, const char *job)
{
    memset(t, 0, sizeof *t);
    t->e = calloc((size_t)nranks, sizeof *t->e);
    if (!t->e)
        return -1;
    t->nranks = nranks;
    snprintf(t->job, sizeof t->job, "%s", job);
    return 0;
}

int rs_ranktable_local(int nranks, const char *job, rs_ranktable *t, char *err, size_t errlen)
{
    if (nranks < 1 || nranks > RS_RT_MAX_RANKS) {
        snprintf(err, errlen, "--ranks: %d is out of range (allowed: 1..%d)", nranks, RS_RT_MAX_RANKS);
        return -1;
    }
    if (rt_alloc(t, nranks, job)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < nranks; r++) {
        rs_rank_entry *e = &t->e[r];
        e->rank = r;
        snprintf(e->host, sizeof e->host, "localhost");
        snprintf(e->endpoint, sizeof e->endpoint, "ipc://@ringsim-%s-%d", job, r);
        snprintf(e->control, sizeof e->control, "ipc://@ringsim-%s-%d-ctl", job, r);
    }
    return 0;
}

static int rt_env_int(const char *name, long lo, long hi, long *out, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v)
        return 1;
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi) {
        snprintf(err, errlen, "environment: %s='%s' is not an integer in %ld..%ld", name, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int rs_ranktable_from_env(const char *base, const char *job, rs_ranktable *t, int *my_rank, char *err, size_t errlen)
{
    static const char *const pairs[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}};
    long rank = -1, size = -1;
    int found = 0;
    for (size_t i = 0; i < 3 && !found; i++) {
        int a = rt_env_int(pairs[i][1], 1, RS_RT_MAX_RANKS, &size, err, errlen);
        if (a < 0)
            return -1;
        if (a > 0)
            continue;
        int b = rt_env_int(pairs[i][0], 0, size - 1, &rank, err, errlen);
        if (b != 0) {
            if (b > 0)
                snprintf(err, errlen, "environment: %s is set but %s is not", pairs[i][1], pairs[i][0]);
            return -1;
        }
        found = 1;
    }
    if (!found) {
        snprintf(err, errlen, "no rank table and no launcher environment (looked for OMPI_COMM_WORLD_RANK/SIZE, "
                 "PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS)");
        return 1;
    }
    if (!job)
        job = getenv("RINGSIM_JOB");
    if (!job)
        job = getenv("SLURM_JOB_ID");
    if (!job)
        job = getenv("OMPI_MCA_ess_base_jobid");
    if (!job || !*job)
        job = "0";
    char defbase[RS_RT_EP_MAX];
    if (!base)
        base = getenv("RINGSIM_ZMQ_BASE");
    if (!base || !*base) {
        snprintf(defbase, sizeof defbase, "ipc://@ringsim-%s", job);
        base = defbase;
    }
    if (rt_alloc(t, (int)size, job)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char why[300];
    if (!strncmp(base, "ipc://", 6)) {
        for (int r = 0; r < size; r++) {
            snprintf(t->e[r].endpoint, RS_RT_EP_MAX, "%.200s-%d", base, r);
            snprintf(t->e[r].control, RS_RT_EP_MAX, "%.200s-%d-ctl", base, r);
        }
    } else if (!strncmp(base, "tcp://", 6)) {
        const char *colon = strrchr(base + 6, ':');
        char *end = NULL;
        long port = colon ? strtol(colon + 1, &end, 10) : -1;
        if (!colon || !end || *end || port < 1 || port > 65535) {
            snprintf(err, errlen, "RINGSIM_ZMQ_BASE: '%s' is not tcp://HOST[,HOST...]:PORT", base);
            rs_ranktable_free(t);
            return -1;
        }
        char hosts[RS_RT_EP_MAX];
        snprintf(hosts, sizeof hosts, "%.*s", (int)(colon - (base + 6)), base + 6);
        int nh = 1;
        for (const char *p = hosts; *p; p++)
            nh += *p == ',';
        long per = (size + nh - 1) / nh;
        for (int r = 0; r < size; r++) {
            int h = (int)(r / per);
            const char *s = hosts;
            for (int k = 0; k < h; k++)
                s = strchr(s, ',') + 1;
            size_t hl = strcspn(s, ",");
            rs_rank_entry *e = &t->e[r];
            snprintf(e->host, sizeof e->host, "%.*s", (int)(hl < sizeof e->host - 1 ? hl : sizeof e->host - 1), s);
            long pp = port + r % per;
            snprintf(e->endpoint, RS_RT_EP_MAX, "tcp://%s:%ld", e->host, pp);
            if (pp > 65535 || rs_ranktable_control(e->endpoint, e->control, RS_RT_EP_MAX, why, sizeof why)) {
                snprintf(err, errlen, "RINGSIM_ZMQ_BASE: rank %d: port %ld + %d is above 65535", r, pp,
                         RS_RT_CONTROL_PORT_OFFSET);
                rs_ranktable_free(t);
                return -1;
            }
        }
    } else {
        snprintf(err, errlen, "RINGSIM_ZMQ_BASE: '%s' (allowed: ipc://@NAME, ipc:///PATH, tcp://HOST[,HOST...]:PORT)",
                 base);
        rs_ranktable_free(t);
        return -1;
    }
    for (int r = 0; r < size; r++) {
        t->e[r].rank = r;
        if (rs_ranktable_check_endpoint(t->e[r].endpoint, why, sizeof why) ||
            rs_ranktable_check_endpoint(t->e[r].control, why, sizeof why)) {
            snprintf(err, errlen, "RINGSIM_ZMQ_BASE: rank %d: %s", r, why);
            rs_ranktable_free(t);
            return -1;
        }
    }
    *my_rank = (int)rank;
    return 0;
}
