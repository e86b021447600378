/* rs_agents.c — the local agent processes a controller spawns: start in one process group, stop in order (wait, SIGTERM, SIGKILL), reap all. */
#define _GNU_SOURCE
#include "rs_agents.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double ags_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pid_t rs_agents_start(rs_agents *g, char *const args[])
{
    pid_t parent = getpid();
    fflush(NULL); /* the child must not write the controller's buffered output again */
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* one process group for all agents (killed as one); die with the controller */
        setpgid(0, g->pgid);
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
    if (!g->pgid)
        g->pgid = pid;
    setpgid(pid, g->pgid); /* also here: whichever runs first, the child is in the group */
    return pid;
}

/* Polls reap() until none runs or limit_s passed; 1 if none runs. */
static int ags_wait(double limit_s, int (*reap)(void *), void *ctx)
{
    double t0 = ags_now();
    while (reap(ctx) > 0) {
        if (ags_now() - t0 > limit_s)
            return 0;
        usleep(20000);
    }
    return 1;
}

void rs_agents_stop(const rs_agents *g, int n, double grace_s, int (*reap)(void *ctx),
                    pid_t (*alive)(void *ctx, int r), void *ctx)
{
    if (!g->spawned)
        return;
    static const int sigs[2] = {SIGTERM, SIGKILL};
    for (int step = 0; step < 2 && !ags_wait(step == 0 ? grace_s : 2.0, reap, ctx); step++) {
        kill(-g->pgid, sigs[step]);
        for (int r = 0; r < n; r++) {
            pid_t p = alive(ctx, r);
            if (p)
                kill(p, sigs[step]);
        }
    }
    if (ags_wait(2.0, reap, ctx))
        return;
    for (int r = 0; r < n; r++) { /* killed but not yet gone: block until the kernel has them */
        pid_t p = alive(ctx, r);
        if (p)
            waitpid(p, NULL, 0);
    }
}
