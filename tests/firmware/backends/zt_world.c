/* zt_world.c — forked rank processes over the zmq backend: one case on a rank, the matrix's zmq world, one function per rank (tests only). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, with POSIX 2008 */
#define _POSIX_C_SOURCE 200809L
#include "zt_world.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep/rs_shape.h"

static double zt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A TCP port free right now on 127.0.0.1 (the kernel picks it). */
static int zt_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

static void *zt_alloc(void *ud, size_t n)
{
    (void)ud;
    return malloc(n);
}

static void zt_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static int zt_child(const zt_world *w, int rank, char **eps, zt_fn fn, void *arg, int fd)
{
    zt_rank r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    r.nranks = w->nranks;
    r.arg = arg;
    ncl_zmq_config zc = NCL_ZMQ_CONFIG_INIT;
    zc.nranks = w->nranks;
    zc.rank = rank;
    zc.endpoints = (const char *const *)eps;
    zc.connect_timeout_ns = w->connect_timeout_ns ? w->connect_timeout_ns : 10000000000ull;
    if (w->max_payload)
        zc.max_payload = w->max_payload;
    zc.fault_corrupt_nth = w->corrupt_nth[rank];
    zc.fault_die_nth = w->die_nth[rank];
    int status = 0;
    ncl_result rc = ncl_zmq_create(&r.zmq, &zc, r.msg, sizeof r.msg);
    if (rc != NCL_SUCCESS) {
        status = 10 + (int)rc;
    } else {
        ncl_config cfg = NCL_CONFIG_INIT;
        cfg.alloc = zt_alloc;
        cfg.free = zt_free;
        cfg.timeout_ns = w->timeout_ns ? w->timeout_ns : 10000000000ull;
        cfg.deterministic = cfg.wide_accumulation = w->wide;
        rc = ncl_comm_create(&r.comm, w->nranks, rank, ncl_zmq_hal(r.zmq), &cfg);
        if (rc != NCL_SUCCESS) {
            snprintf(r.msg, sizeof r.msg, "ncl_comm_create: %s", ncl_strerror(rc));
            status = 9;
        } else {
            status = fn(&r);
            ncl_comm_destroy(r.comm);
        }
        ncl_zmq_destroy(r.zmq);
    }
    size_t n = strlen(r.msg);
    if (write(fd, r.msg, n) < 0)
        status = 99;
    close(fd);
    return status;
}

double zt_run(const zt_world *w, zt_fn fn, void *arg, zt_result *res)
{
    static int instance;
    char *eps[ZT_MAX_RANKS];
    pid_t pid[ZT_MAX_RANKS];
    int fd[ZT_MAX_RANKS];
    instance++;
    for (int i = 0; i < w->nranks; i++) {
        eps[i] = malloc(96);
        if (w->tcp)
            snprintf(eps[i], 96, "tcp://127.0.0.1:%d", zt_free_port());
        else
            snprintf(eps[i], 96, "ipc://@rs-zt-%d-%d-%d", (int)getpid(), instance, i);
        memset(&res[i], 0, sizeof res[i]);
    }
    fflush(NULL);
    double t0 = zt_now();
    for (int i = 0; i < w->nranks; i++) {
        pid[i] = -1;
        fd[i] = -1;
        if (w->absent[i])
            continue;
        int p[2];
        if (pipe(p) != 0)
            abort();
        pid[i] = fork();
        if (pid[i] == 0) {
            close(p[0]);
            for (int k = 0; k < i; k++)
                if (fd[k] >= 0)
                    close(fd[k]);
            _exit(zt_child(w, i, eps, fn, arg, p[1]));
        }
        close(p[1]);
        fd[i] = p[0];
    }
    /* Read the messages while waiting: a child blocks on a full pipe otherwise. */
    size_t got[ZT_MAX_RANKS] = {0};
    int open_fds = 0;
    for (int i = 0; i < w->nranks; i++)
        open_fds += fd[i] >= 0;
    while (open_fds > 0 && zt_now() - t0 < 60) {
        struct pollfd pf[ZT_MAX_RANKS];
        int idx[ZT_MAX_RANKS], n = 0;
        for (int i = 0; i < w->nranks; i++)
            if (fd[i] >= 0) {
                pf[n].fd = fd[i];
                pf[n].events = POLLIN;
                idx[n++] = i;
            }
        if (poll(pf, (nfds_t)n, 500) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP)))
                continue;
            int i = idx[k];
            ssize_t m = read(fd[i], res[i].msg + got[i], ZT_MSG - 1 - got[i]);
            if (m > 0 && got[i] + (size_t)m < ZT_MSG - 1) {
                got[i] += (size_t)m;
            } else {
                close(fd[i]);
                fd[i] = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < w->nranks; i++) {
        if (fd[i] >= 0) {
            close(fd[i]);
            kill(pid[i], SIGKILL);
        }
        free(eps[i]);
        if (pid[i] < 0) {
            res[i].exited = 1;
            continue;
        }
        int st = 0;
        waitpid(pid[i], &st, 0);
        res[i].exited = WIFEXITED(st);
        res[i].status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        res[i].signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    }
    return zt_now() - t0;
}

int zt_case(zt_rank *r, const mx_case *c, ncl_result *rc, uint64_t *wrong, char *what, size_t len)
{
    rs_shape s;
    mx_shape(&s, c, r->nranks);
    uint64_t in_bytes = rs_shape_input_elems(&s, r->rank) * s.es;
    unsigned char *a = malloc(rs_shape_a_bytes(&s) + 1), *b = malloc(rs_shape_b_bytes(&s) + 1);
    unsigned char *in = malloc(in_bytes + 1), *expected = malloc(s.result_elems * s.es + 1);
    const void *send;
    void *recv;
    mx_place(&s, r->rank, a, b, c->inplace, &send, &recv);
    rs_shape_input(&s, r->rank, MX_SEED, in); /* kept: out of place, send must still hold it */
    mx_prepare(&s, r->rank, in, send, recv);
    *wrong = 0;
    what[0] = 0;
    *rc = ncl_comm_set_algorithm(r->comm, c->coll, c->algo);
    if (*rc == NCL_SUCCESS)
        *rc = rs_shape_call(&s, send, recv, r->comm);
    if (*rc != NCL_SUCCESS) {
        snprintf(what, len, "%s | %s", ncl_comm_last_error(r->comm), ncl_zmq_last_error(r->zmq));
    } else {
        uint64_t lo, hi;
        rs_shape_checked(&s, r->rank, &lo, &hi);
        rs_shape_expected(&s, MX_SEED, lo, hi, expected + lo * s.es);
        *wrong = mx_check(&s, r->rank, send, recv, c->inplace ? NULL : in, expected, what, len);
    }
    free(a);
    free(b);
    free(in);
    free(expected);
    return *rc != NCL_SUCCESS || *wrong != 0;
}

/* ---- the matrix's world ------------------------------------------------------------------------ */

/* One rank's word on one case, written by the rank process into memory the parent shares. */
typedef struct zt_report {
    int failed;
    ncl_result rc;
    uint64_t wrong;
    char what[MX_DETAIL];
} zt_report;

typedef struct zt_shared {
    size_t done[ZT_MAX_RANKS]; /* cases each rank reported */
    zt_report rep[];           /* [rank * n + case] */
} zt_shared;

typedef struct zt_batch {
    const mx_case *cases;
    size_t n;
    zt_shared *sh;
} zt_batch;

static int zt_cases_rank(zt_rank *r)
{
    const zt_batch *b = r->arg;
    for (size_t i = 0; i < b->n; i++) {
        zt_report *p = &b->sh->rep[(size_t)r->rank * b->n + i];
        p->failed = zt_case(r, &b->cases[i], &p->rc, &p->wrong, p->what, sizeof p->what);
        b->sh->done[r->rank] = i + 1;
        if (p->failed && p->rc != NCL_SUCCESS)
            return 3; /* the backend is broken after an engine error: every later call fails at once */
    }
    return 0;
}

static size_t zt_mx_run(mx_world *w, const mx_case *cases, size_t n, mx_result *res)
{
    zt_mx_world *z = w->ctx;
    size_t bytes = sizeof(zt_shared) + (size_t)w->nranks * n * sizeof(zt_report);
    zt_shared *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        mx_result_fail(&res[0], 0, NCL_SUCCESS, 0, "mmap of %zu bytes for the ranks' reports failed", bytes);
        return 0;
    }
    zt_batch b = {cases, n, sh};
    zt_result pr[ZT_MAX_RANKS];
    zt_run(&z->cfg, zt_cases_rank, &b, pr);
    /* The culprit's words first (mx_result keeps the first rank's): a rank process that failed on
     * its own (not created, killed at the 60 s limit, a crash: charged to the case it was on), then
     * a rank's own engine error or wrong result, then the ranks it broke (a remote error). Status 3
     * is a rank that stopped after the engine error it reported. */
    for (int pass = 0; pass < 3; pass++)
        for (int rank = 0; rank < w->nranks; rank++) {
            size_t done = sh->done[rank];
            if (pass == 0) {
                if (!pr[rank].exited || (pr[rank].status != 0 && !(pr[rank].status == 3 && done > 0)))
                    mx_result_fail(&res[done < n ? done : n - 1], rank, NCL_SUCCESS, 0,
                                   "rank process %s %d after %zu cases%s%s",
                                   pr[rank].exited ? "exit status" : "killed by signal",
                                   pr[rank].exited ? pr[rank].status : pr[rank].signal, done,
                                   pr[rank].msg[0] ? ": " : "", pr[rank].msg);
                continue;
            }
            for (size_t i = 0; i < done; i++) {
                const zt_report *p = &sh->rep[(size_t)rank * n + i];
                if (p->failed && (p->rc == NCL_ERR_REMOTE) == (pass == 2))
                    mx_result_fail(&res[i], rank, p->rc, p->wrong, "%s", p->what);
            }
        }
    size_t ran = n; /* the cases every rank reported */
    for (int rank = 0; rank < w->nranks; rank++)
        if (sh->done[rank] < ran)
            ran = sh->done[rank];
    for (size_t i = 0; i < ran; i++)
        res[i].run = 1;
    munmap(sh, bytes);
    return ran;
}

void zt_mx_init(zt_mx_world *z, const zt_world *cfg)
{
    memset(z, 0, sizeof *z);
    z->cfg = *cfg;
    if (cfg->max_payload)
        snprintf(z->name, sizeof z->name, "zmq %s %u-byte frames", cfg->tcp ? "tcp" : "ipc", cfg->max_payload);
    else
        snprintf(z->name, sizeof z->name, "zmq %s", cfg->tcp ? "tcp" : "ipc");
    z->world.name = z->name;
    z->world.nranks = cfg->nranks;
    z->world.run = zt_mx_run;
    z->world.ctx = z;
}
