/* zt_world.c — forked rank processes over the zmq backend and a bit-exact collective check (tests only). */
#define _POSIX_C_SOURCE 200809L
#include "zt_world.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ncl/ncl_dtype.h"
#include "sweep/rs_data.h"

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

static int zt_has_root(ncl_coll c)
{
    return c == NCL_COLL_BROADCAST || c == NCL_COLL_REDUCE;
}

int64_t zt_check(zt_rank *r, ncl_coll coll, ncl_dtype dt, ncl_op op, uint64_t count, int inplace, int root)
{
    int p = r->nranks, rank = r->rank;
    uint64_t es = ncl_dtype_size(dt);
    uint64_t sendn = count, recvn = count, expn = count;
    if (coll == NCL_COLL_REDUCE_SCATTER)
        sendn = expn = count * (uint64_t)p;
    if (coll == NCL_COLL_ALLGATHER)
        recvn = expn = count * (uint64_t)p;
    unsigned char *S = malloc(sendn * es + 64), *R = malloc(recvn * es + 64), *E = malloc(expn * es + 64);
    ncl_op fill = (coll == NCL_COLL_BROADCAST || coll == NCL_COLL_ALLGATHER) ? NCL_MAX : op;
    uint64_t seed = 7;
    memset(R, 0xa5, recvn * es);
    const void *sb = S;
    void *rb = R;
    uint64_t off = (uint64_t)rank * count * es;
    switch (coll) {
    case NCL_COLL_ALLREDUCE:
    case NCL_COLL_REDUCE:
        rs_data_fill(inplace ? R : S, count, dt, op, p, rank, seed, 0);
        rs_data_expected(E, count, dt, op, p, seed, 0, 1);
        if (inplace)
            sb = R;
        break;
    case NCL_COLL_BROADCAST:
        if (rank == root)
            rs_data_fill(inplace ? R : S, count, dt, fill, p, rank, seed, 0);
        rs_data_fill(E, count, dt, fill, p, root, seed, 0);
        if (inplace)
            sb = R;
        break;
    case NCL_COLL_REDUCE_SCATTER:
        rs_data_fill(S, sendn, dt, op, p, rank, seed, 0);
        rs_data_expected(E, sendn, dt, op, p, seed, 0, 1);
        if (inplace)
            rb = S + off;
        break;
    case NCL_COLL_ALLGATHER:
        for (int k = 0; k < p; k++)
            rs_data_fill(E + (uint64_t)k * count * es, count, dt, fill, p, k, seed, 0);
        rs_data_fill(inplace ? R + off : S, count, dt, fill, p, rank, seed, 0);
        if (inplace)
            sb = R + off;
        break;
    default:
        break;
    }
    ncl_result rc;
    switch (coll) {
    case NCL_COLL_ALLREDUCE: rc = ncl_allreduce(sb, rb, count, dt, op, r->comm); break;
    case NCL_COLL_BROADCAST: rc = ncl_broadcast(sb, rb, count, dt, root, r->comm); break;
    case NCL_COLL_REDUCE: rc = ncl_reduce(sb, rb, count, dt, op, root, r->comm); break;
    case NCL_COLL_REDUCE_SCATTER: rc = ncl_reduce_scatter(sb, rb, count, dt, op, r->comm); break;
    default: rc = ncl_allgather(sb, rb, count, dt, r->comm); break;
    }
    int64_t wrong;
    if (rc != NCL_SUCCESS) {
        snprintf(r->msg, sizeof r->msg, "%s %s %llu %s: %s | %s | %s", ncl_coll_name(coll), ncl_dtype_name(dt),
                 (unsigned long long)count, inplace ? "in place" : "out of place", ncl_strerror(rc),
                 ncl_comm_last_error(r->comm), ncl_zmq_last_error(r->zmq));
        wrong = -1;
    } else if (coll == NCL_COLL_REDUCE) {
        wrong = rank == root ? (int64_t)rs_data_count_wrong(rb, E, count, dt, op) : 0;
    } else if (coll == NCL_COLL_REDUCE_SCATTER) {
        wrong = (int64_t)rs_data_count_wrong(rb, E + off, count, dt, op);
    } else {
        wrong = (int64_t)rs_data_count_wrong(rb, E, recvn, dt, zt_has_root(coll) || coll == NCL_COLL_ALLGATHER ? NCL_MAX : op);
    }
    if (wrong > 0)
        snprintf(r->msg, sizeof r->msg, "%s %s %llu %s: %lld wrong", ncl_coll_name(coll), ncl_dtype_name(dt),
                 (unsigned long long)count, inplace ? "in place" : "out of place", (long long)wrong);
    free(S);
    free(R);
    free(E);
    return wrong;
}
