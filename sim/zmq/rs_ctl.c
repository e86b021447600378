/* rs_ctl.c — the controller's side of agents: spawn, control sockets, requests and replies, orderly stop. */
#define _GNU_SOURCE
#include "rs_ctl.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "ncl/ncl_wire.h"
#include "sweep/rs_sweep.h"

static volatile sig_atomic_t ctl_stop;

static void ctl_on_signal(int sig)
{
    (void)sig;
    ctl_stop = 1;
}

int rs_ctl_stopped(void) { return ctl_stop != 0; }

static double ctl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- processes ------------------------------------------------------------------------------------ */

/* Starts /proc/self/exe with args in the agents' process group: killed as one, dying with the
 * controller (PR_SET_PDEATHSIG); the zmq backend's log is off unless NCL_ZMQ_LOG is set (the
 * controller prints every agent's failure with its rank). The pid, or -1 (errno says why). */
static pid_t ctl_start_process(rs_ctl *c, char *const args[])
{
    pid_t parent = getpid();
    fflush(NULL); /* the child must not write the controller's buffered output again */
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, c->pgid);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        setenv("NCL_ZMQ_LOG", "off", 0);
        execv("/proc/self/exe", args);
        fprintf(stderr, "ringsim: cannot run /proc/self/exe for an agent: %s\n", strerror(errno));
        _exit(127);
    }
    if (!c->pgid)
        c->pgid = pid;
    setpgid(pid, c->pgid); /* also here: whichever runs first, the child is in the group */
    return pid;
}

/* Reaps spawned agents that exited; one that was owed a reply (outside SHUTDOWN) or ended badly
 * failed, and is named once. Returns how many still run. */
static int ctl_reap(rs_ctl *c)
{
    int running = 0;
    for (int r = 0; r < c->n; r++) {
        rs_ctl_agent *a = &c->ag[r];
        if (!a->pid || a->exited)
            continue;
        int st = 0;
        if (waitpid(a->pid, &st, WNOHANG) != a->pid) {
            running++;
            continue;
        }
        a->exited = a->lost = 1;
        int sig = WIFSIGNALED(st), code = sig ? WTERMSIG(st) : WEXITSTATUS(st);
        if (sig || code != 0 || (a->waiting && !c->shutting)) {
            a->failed = 1;
            if (!a->error[0] || sig)
                snprintf(a->error, sizeof a->error, "agent rank %d (pid %d) %s %d%s", r, (int)a->pid,
                         sig ? "was killed by signal" : "exited with status", code,
                         sig && code == SIGKILL ? " (SIGKILL)" : "");
        }
        a->waiting = 0;
    }
    return running;
}

/* Polls ctl_reap until no spawned agent runs or limit_s passed; 1 if none runs. */
static int ctl_wait_exit(rs_ctl *c, double limit_s)
{
    double t0 = ctl_now();
    while (ctl_reap(c) > 0) {
        if (ctl_now() - t0 > limit_s)
            return 0;
        usleep(20000);
    }
    return 1;
}

/* Spawned agents still running after grace_s: SIGTERM, 2 s later SIGKILL, then reaped. */
static void ctl_stop_processes(rs_ctl *c, double grace_s)
{
    if (!c->pgid)
        return;
    static const int sigs[2] = {SIGTERM, SIGKILL};
    for (int step = 0; step < 2 && !ctl_wait_exit(c, step == 0 ? grace_s : 2.0); step++) {
        kill(-c->pgid, sigs[step]);
        for (int r = 0; r < c->n; r++)
            if (c->ag[r].pid && !c->ag[r].exited)
                kill(c->ag[r].pid, sigs[step]);
    }
    if (ctl_wait_exit(c, 2.0))
        return;
    for (int r = 0; r < c->n; r++) /* killed but not yet gone: block until the kernel has them */
        if (c->ag[r].pid && !c->ag[r].exited) {
            waitpid(c->ag[r].pid, NULL, 0);
            c->ag[r].exited = 1;
        }
}

static int ctl_spawn(rs_ctl *c, const char *job, const rs_ctl_opts *s)
{
    char nbuf[16], tbuf[32], cbuf[32], chbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", c->n);
    snprintf(tbuf, sizeof tbuf, "%.3f", s->timeout_s);
    snprintf(cbuf, sizeof cbuf, "%.3f", s->connect_s);
    snprintf(chbuf, sizeof chbuf, "%u", s->channels);
    for (int r = 0; r < c->n; r++) {
        char rbuf[16];
        snprintf(rbuf, sizeof rbuf, "%d", r);
        char *args[20] = {"ringsim", "agent", "--quiet", "--ranks", nbuf, "--rank", rbuf, "--job", (char *)job,
                          "--timeout", tbuf, "--connect-timeout", cbuf, "--channels", chbuf,
                          "--backend", (char *)s->backend};
        int k = 17;
        if (s->faults && s->faults[r][0]) {
            args[k++] = "--fault";
            args[k++] = s->faults[r];
        }
        args[k] = NULL;
        pid_t pid = ctl_start_process(c, args);
        if (pid < 0) {
            fprintf(c->err, "%s: cannot start agent rank %d: %s\n", c->who, r, strerror(errno));
            return -1;
        }
        c->ag[r].pid = pid;
    }
    return 0;
}

/* ---- requests and replies ------------------------------------------------------------------------- */

int rs_ctl_send(rs_ctl *c, int r, uint8_t cmd, const char *json)
{
    rs_ctl_agent *a = &c->ag[r];
    if (a->lost)
        return -1;
    ncl_wire_msg m;
    memset(&m, 0, sizeof m);
    m.command = cmd;
    m.seq = ++a->seq;
    m.src = NCL_WIRE_RANK_NONE;
    m.dst = (uint32_t)r;
    if (cmd == NCL_WIRE_HELLO) {
        m.hello.min_version = m.hello.max_version = NCL_WIRE_VERSION;
        m.hello.max_payload = c->max_reply;
        m.hello.nranks = (uint32_t)c->n;
        m.hello.caps = NCL_WIRE_CAP_CONTROL;
    } else if (json) {
        m.payload = (const uint8_t *)json;
        m.payload_len = (uint32_t)strlen(json);
    }
    cJSON_Delete(a->reply);
    a->reply = NULL;
    a->error[0] = '\0';
    a->failed = 0;
    a->cmd = cmd;
    size_t need = 0, len = 0;
    ncl_wire_encode(&m, NULL, 0, &need);
    zmq_msg_t f;
    zmq_msg_init_size(&f, need);
    if (ncl_wire_encode(&m, zmq_msg_data(&f), need, &len) != NCL_WIRE_OK || zmq_msg_send(&f, a->req, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f);
        a->failed = a->lost = 1;
        snprintf(a->error, sizeof a->error, "agent rank %d: cannot send %s: %s", r, ncl_wire_cmd_name(cmd),
                 zmq_strerror(errno));
        return -1;
    }
    a->waiting = 1;
    return 0;
}

/* Reads agent r's reply, if one is there: checked against the request it answers. */
static void ctl_take(rs_ctl *c, int r)
{
    rs_ctl_agent *a = &c->ag[r];
    zmq_msg_t f;
    zmq_msg_init(&f);
    if (zmq_msg_recv(&f, a->req, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&f);
        return;
    }
    a->waiting = 0;
    ncl_wire_msg m;
    char why[300];
    ncl_wire_limits lim = {c->max_reply, (uint32_t)c->n, NCL_WIRE_RANK_NONE, NCL_WIRE_VERSION, NCL_WIRE_VERSION};
    ncl_wire_result wr = ncl_wire_decode(zmq_msg_data(&f), zmq_msg_size(&f), &lim, &m, why, sizeof why);
    uint8_t want = a->cmd == NCL_WIRE_HELLO ? NCL_WIRE_HELLO_ACK : a->cmd;
    a->failed = 1;
    if (wr != NCL_WIRE_OK) {
        snprintf(a->error, sizeof a->error, "agent rank %d: reply rejected: %s: %s", r, ncl_wire_result_name(wr), why);
    } else if (m.command == NCL_WIRE_ERROR) {
        snprintf(a->error, sizeof a->error, "%.*s", (int)m.payload_len, (const char *)m.payload);
    } else if (m.command != want || m.seq != a->seq || m.src != (uint32_t)r) {
        snprintf(a->error, sizeof a->error, "agent rank %d: answered %s #%llu from rank %u to %s #%llu (miswired "
                 "rank table?)", r, ncl_wire_cmd_name(m.command), (unsigned long long)m.seq, (unsigned)m.src,
                 ncl_wire_cmd_name(a->cmd), (unsigned long long)a->seq);
    } else if (want == NCL_WIRE_HELLO_ACK) {
        a->failed = 0;
    } else if (!(a->reply = cJSON_ParseWithLength((const char *)m.payload, m.payload_len))) {
        snprintf(a->error, sizeof a->error, "agent rank %d: the reply is not JSON", r);
    } else {
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(a->reply, "ok");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(a->reply, "error");
        a->failed = cJSON_IsFalse(ok);
        if (a->failed)
            snprintf(a->error, sizeof a->error, "%s", cJSON_IsString(e) ? e->valuestring : "failed");
    }
    zmq_msg_close(&f);
}

int rs_ctl_wait(rs_ctl *c, double limit_s, const char *what)
{
    zmq_pollitem_t *items = calloc((size_t)c->n, sizeof *items);
    int *idx = calloc((size_t)c->n, sizeof *idx);
    double t0 = ctl_now(), t_fail = 0;
    int rc = 0;
    for (;;) {
        ctl_reap(c);
        int n = 0, any_failed = 0;
        for (int r = 0; r < c->n; r++) {
            any_failed |= c->ag[r].failed;
            if (c->ag[r].waiting && items && idx) {
                items[n].socket = c->ag[r].req;
                items[n].events = ZMQ_POLLIN;
                items[n].revents = 0;
                idx[n++] = r;
            }
        }
        if (n == 0)
            break;
        if (ctl_stop) {
            rc = -1;
            break;
        }
        double now = ctl_now();
        if (any_failed && t_fail == 0)
            t_fail = now;
        if ((limit_s > 0 && now - t0 > limit_s) || (c->grace_s > 0 && t_fail > 0 && now - t_fail > c->grace_s)) {
            for (int k = 0; k < n; k++) {
                rs_ctl_agent *a = &c->ag[idx[k]];
                a->failed = a->lost = 1;
                a->waiting = 0;
                snprintf(a->error, sizeof a->error, "agent rank %d (%s): no answer to %s within %.1f s%s", idx[k],
                         c->table.e[idx[k]].control, what, now - t0,
                         a->pid ? "" : " (is it running? started with the same rank table?)");
            }
            break;
        }
        if (zmq_poll(items, n, 50) > 0)
            for (int k = 0; k < n; k++)
                if (items[k].revents & ZMQ_POLLIN)
                    ctl_take(c, idx[k]);
    }
    free(items);
    free(idx);
    return rc;
}

int rs_ctl_all(rs_ctl *c, uint8_t cmd, const char *json, double limit_s, const char *what)
{
    for (int r = 0; r < c->n; r++)
        rs_ctl_send(c, r, cmd, json);
    return rs_ctl_wait(c, limit_s, what);
}

int rs_ctl_any_failed(const rs_ctl *c)
{
    for (int r = 0; r < c->n; r++)
        if (c->ag[r].failed)
            return 1;
    return 0;
}

int rs_ctl_print_failures(rs_ctl *c)
{
    int k = 0;
    for (int r = 0; r < c->n; r++)
        if (c->ag[r].failed && c->ag[r].error[0]) {
            fprintf(c->err, "%s: %s\n", c->who, c->ag[r].error);
            c->ag[r].error[0] = '\0'; /* once */
            k++;
        }
    return k;
}

/* ---- the session ------------------------------------------------------------------------------------ */

int rs_ctl_start(rs_ctl *c, const rs_ctl_opts *o)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ctl_on_signal; /* no SA_RESTART: zmq_poll returns EINTR */
    ctl_stop = 0;
    sigaction(SIGINT, &sa, &c->old_int);
    sigaction(SIGTERM, &sa, &c->old_term);
    c->signals = 1;
    c->ag = calloc((size_t)c->n, sizeof *c->ag);
    if (c->ag == NULL) {
        fprintf(c->err, "%s: out of memory\n", c->who);
        return RS_EXIT_USAGE;
    }
    if (o->spawn) {
        char job[RS_RT_JOB_MAX], e[RS_RT_ERRLEN] = "";
        const char *ej = getenv("RINGSIM_JOB");
        if (ej && *ej)
            snprintf(job, sizeof job, "%s", ej);
        else
            snprintf(job, sizeof job, "%s%d", o->job_prefix, (int)getpid());
        if (rs_ranktable_local(c->n, job, &c->table, e, sizeof e) || ctl_spawn(c, job, o)) {
            if (e[0])
                fprintf(c->err, "%s: %s\n", c->who, e);
            return RS_EXIT_USAGE;
        }
    }
    c->ctx = zmq_ctx_new();
    for (int r = 0; r < c->n; r++) {
        int zero = 0, one = 1;
        rs_ctl_agent *a = &c->ag[r];
        a->req = zmq_socket(c->ctx, ZMQ_REQ);
        zmq_setsockopt(a->req, ZMQ_LINGER, &zero, sizeof zero);
        /* a request may follow one that was never answered (that agent is then lost anyway) */
        zmq_setsockopt(a->req, ZMQ_REQ_RELAXED, &one, sizeof one);
        zmq_setsockopt(a->req, ZMQ_REQ_CORRELATE, &one, sizeof one);
        if (zmq_connect(a->req, c->table.e[r].control) != 0) {
            fprintf(c->err, "%s: agent rank %d: cannot connect to %s: %s\n", c->who, r, c->table.e[r].control,
                    zmq_strerror(errno));
            return RS_EXIT_USAGE;
        }
    }
    /* Agents answer HELLO once they are connected to all their peers; spawned ones get their
     * connect timeout for that, plus their start-up. */
    if (rs_ctl_all(c, NCL_WIRE_HELLO, NULL, o->spawn ? o->connect_s + 5.0 : o->connect_s, "HELLO") != 0)
        return RS_CTL_EXIT_INTERRUPTED;
    if (rs_ctl_any_failed(c)) {
        fprintf(c->err, "%s: the agents did not all come up:\n", c->who);
        rs_ctl_print_failures(c);
        return RS_EXIT_ENGINE;
    }
    return -1;
}

void rs_ctl_finish(rs_ctl *c, int all, int interrupted)
{
    if (c->ctx && (c->pgid || all) && !interrupted) {
        /* Orderly first: agents close their links with BYE and exit 0. One still owing a reply is
         * busy with a request it will not finish: the signals below stop it. */
        for (int r = 0; c->ag && r < c->n; r++)
            if (c->ag[r].waiting)
                c->ag[r].lost = 1;
        c->shutting = 1;
        c->grace_s = 0;
        rs_ctl_all(c, NCL_WIRE_SHUTDOWN, "{}", 3.0, "SHUTDOWN");
    }
    if (c->ag)
        ctl_stop_processes(c, interrupted ? 0.2 : 3.0);
    for (int r = 0; c->ag && r < c->n; r++) {
        if (c->ag[r].req)
            zmq_close(c->ag[r].req);
        cJSON_Delete(c->ag[r].reply);
    }
    if (c->ctx)
        zmq_ctx_term(c->ctx);
    free(c->ag);
    c->ag = NULL;
    c->ctx = NULL;
    rs_ranktable_free(&c->table);
    if (c->signals) {
        sigaction(SIGINT, &c->old_int, NULL);
        sigaction(SIGTERM, &c->old_term, NULL);
        c->signals = 0;
    }
}
