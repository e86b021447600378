/* cmd_train.c — `ringsim train`: runs the data-parallel example (dp/) against its single-rank
 * references, on host threads or a scenario's simulated NPUs, and prints the loss curves. */
#include "rs_cmd.h"

#include "harness/rs_simworld.h"
#include "rs_cli.h"

#include "dp/dp_train.h"
#include "scenario/rs_fusion.h"
#include "scenario/rs_scenario.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void rs_cmd_train_usage(FILE *f)
{
    fprintf(f,
            "usage: ringsim train [options]\n"
            "  Trains an MLP on seeded Gaussian blobs with N data-parallel ranks (host backend, or the\n"
            "  simulated machine of a scenario) and the same training on 1 rank with the global batch;\n"
            "  prints both loss curves and their difference.\n"
            "  --ranks N          data-parallel ranks (default 4; with --scenario: its rank count)\n"
            "  --scenario FILE    run the N ranks on the scenario's simulated NPUs and network (real data,\n"
            "                     the unchanged engine on every NPU) instead of host threads\n"
            "  --steps S          SGD steps (default 60)\n"
            "  --batch B          global batch; rank r gets batch positions r, r+N, ... (default 64)\n"
            "  --lr X             learning rate (default 0.2)\n"
            "  --momentum X       SGD momentum in [0, 1) (default 0)\n"
            "  --hidden H         hidden units; 0 = softmax regression (default 32)\n"
            "  --fusion SPEC      gradient fusion, as a scenario's workload.training.fusion: default\n"
            "                     (sizes: 96.54, 3.46) | 'sizes: P1, P2, ...' | 'indices: I1, I2, ...' (inclusive\n"
            "                     end indices, gradients in back-propagation order) | 'threshold: 64 KiB' |\n"
            "                     single | none\n"
            "  --deterministic    rank-ordered reduction (ncl_config.deterministic); also runs the 1-rank\n"
            "                     reference that adds the N shard gradients in rank order and checks that\n"
            "                     it is bit-identical to the N-rank run\n"
            "  --plot FILE.svg    write the loss curves as an SVG chart\n"
            "  --seed N           dataset and initialisation seed (default 1)\n"
            "  --every K          print every K-th step (default: about 20 rows)\n"
            "exit status: 0 agree within tolerance, 1 differ, 2 usage, 3 a run failed\n");
}

static int parse_long(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "ringsim train: %s '%s': expected an integer in %ld..%ld\n", opt, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_double(const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x)) {
        fprintf(stderr, "ringsim train: %s '%s': expected a number\n", opt, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* A plain SVG line chart: one polyline per series, axes with a few labelled ticks. */
static int write_svg(const char *path, const char *title, int steps, const double *const *ys,
                     const char *const *names, int nseries)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "ringsim train: --plot: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    const double W = 720, Hh = 440, L = 70, R = 180, T = 40, B = 50;
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < nseries; s++)
        for (int t = 0; t < steps; t++) {
            if (ys[s][t] < lo)
                lo = ys[s][t];
            if (ys[s][t] > hi)
                hi = ys[s][t];
        }
    if (!(hi > lo)) {
        lo -= 0.5;
        hi += 0.5;
    }
    double pad = (hi - lo) * 0.05;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad; /* a loss axis does not go below 0 */
    hi += pad;
    double xs = steps > 1 ? (W - L - R) / (double)(steps - 1) : 0;
#define PX(t) (L + (t) * xs)
#define PY(v) (T + (Hh - T - B) * (1.0 - ((v) - lo) / (hi - lo)))
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%.0f\" y=\"22\" font-size=\"14\">%s</text>\n",
            W, Hh, W, Hh, L, title);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, Hh - B, W - R, Hh - B);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T, L, Hh - B);
    for (int i = 0; i <= 5; i++) {
        double v = lo + (hi - lo) * i / 5.0, y = PY(v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, W - R, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3f</text>\n", L - 6, y + 4, v);
    }
    for (int i = 0; i <= 5 && steps > 0; i++) {
        int t = (int)((steps - 1) * i / 5.0 + 0.5);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", PX(t), Hh - B + 16, t);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step</text>\n", (L + W - R) / 2, Hh - 12);
    fprintf(f, "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\">loss</text>\n",
            (T + Hh - B) / 2, (T + Hh - B) / 2);
    static const char *const colour[] = {"#1f77b4", "#ff7f0e", "#2ca02c"};
    static const char *const dash[] = {"", " stroke-dasharray=\"6 4\"", " stroke-dasharray=\"2 3\""};
    for (int s = 0; s < nseries; s++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", colour[s % 3], dash[s % 3]);
        for (int t = 0; t < steps; t++)
            fprintf(f, "%s%.2f,%.2f", t ? " " : "", PX(t), PY(ys[s][t]));
        fprintf(f, "\"/>\n");
        double ly = T + 10 + 20 * s;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                W - R + 10, ly, W - R + 40, ly, colour[s % 3], dash[s % 3]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", W - R + 46, ly + 4, names[s]);
    }
#undef PX
#undef PY
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "ringsim train: --plot: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int rs_cmd_train(int argc, char **argv)
{
    dp_train_config c = DP_TRAIN_CONFIG_INIT;
    c.ranks = 4;
    const char *plot = NULL, *scenario = NULL;
    long every = 0;
    int ranks_given = 0;
    rs_fusion fusion;
    rs_fusion_parse(NULL, &fusion, NULL, 0);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            rs_cmd_train_usage(stdout);
            return RS_EXIT_OK;
        } else if (strcmp(a, "--deterministic") == 0) {
            c.deterministic = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "ringsim train: %s: %s\n", a,
                    a[0] == '-' && a[1] == '-' ? "missing value (or unknown option; see --help)" : "unknown argument");
            return RS_EXIT_USAGE;
        }
        int bad = 0;
        if (strcmp(a, "--ranks") == 0)
            bad = parse_long(a, v, 1, 256, &x), c.ranks = (int)x, ranks_given = 1;
        else if (strcmp(a, "--scenario") == 0)
            scenario = v;
        else if (strcmp(a, "--steps") == 0)
            bad = parse_long(a, v, 1, 1000000, &x), c.steps = (int)x;
        else if (strcmp(a, "--batch") == 0)
            bad = parse_long(a, v, 1, 1000000, &x), c.batch = (int)x;
        else if (strcmp(a, "--hidden") == 0)
            bad = parse_long(a, v, 0, 4096, &x), c.hidden = (int)x;
        else if (strcmp(a, "--seed") == 0)
            bad = parse_long(a, v, 0, 2147483647L, &x), c.seed = (uint64_t)x;
        else if (strcmp(a, "--every") == 0)
            bad = parse_long(a, v, 1, 1000000, &every);
        else if (strcmp(a, "--lr") == 0)
            bad = parse_double(a, v, &c.lr);
        else if (strcmp(a, "--momentum") == 0)
            bad = parse_double(a, v, &c.momentum);
        else if (strcmp(a, "--fusion") == 0) {
            char why[300];
            if ((bad = rs_fusion_parse(v, &fusion, why, sizeof why)) != 0)
                fprintf(stderr, "ringsim train: --fusion '%s': %s\n", v, why);
        }
        else if (strcmp(a, "--plot") == 0) {
            size_t n = strlen(v);
            if (n < 5 || strcmp(v + n - 4, ".svg") != 0) {
                fprintf(stderr, "ringsim train: --plot '%s': the file name must end in .svg\n", v);
                return RS_EXIT_USAGE;
            }
            plot = v;
        } else {
            fprintf(stderr, "ringsim train: unknown option '%s' (see --help)\n", a);
            return RS_EXIT_USAGE;
        }
        if (bad)
            return RS_EXIT_USAGE;
        i++;
    }
    c.fusion = fusion.dp;
    if (scenario) {
        rs_scenario sc;
        if (rs_cli_load_scenario(scenario, &sc) != 0)
            return RS_EXIT_USAGE;
        int p = sc.topo.nranks;
        rs_scenario_free(&sc);
        if (ranks_given && c.ranks != p) {
            fprintf(stderr, "ringsim train: --ranks %d, but %s has %d ranks (allowed: leave --ranks out, or %d)\n",
                    c.ranks, scenario, p, p);
            return RS_EXIT_USAGE;
        }
        c.ranks = p;
        c.runner = rs_simworld_run_scenario;
        c.runner_ud = (void *)scenario;
    }
    if (c.batch < c.ranks) {
        fprintf(stderr, "ringsim train: --batch %d is smaller than --ranks %d: every rank needs a sample\n",
                c.batch, c.ranks);
        return RS_EXIT_USAGE;
    }
    if (!(c.lr > 0) || !(c.momentum >= 0) || c.momentum >= 1) {
        fprintf(stderr, "ringsim train: --lr must be > 0 and --momentum in [0, 1)\n");
        return RS_EXIT_USAGE;
    }

    size_t T = dp_train_param_count(&c);
    int S = c.steps;
    double *loss_dp = calloc((size_t)S, sizeof(double)), *loss_ref = calloc((size_t)S, sizeof(double));
    double *loss_ord = calloc((size_t)S, sizeof(double));
    float *p_dp = calloc(T, sizeof(float)), *p_ref = calloc(T, sizeof(float)), *p_ord = calloc(T, sizeof(float));
    int status = RS_EXIT_OK;
    if (!loss_dp || !loss_ref || !loss_ord || !p_dp || !p_ref || !p_ord) {
        fprintf(stderr, "ringsim train: out of memory\n");
        status = RS_EXIT_ENGINE;
        goto out;
    }

    dp_train_result rdp = {0}, rref = {0}, rord = {0};
    rdp.loss = loss_dp, rdp.params = p_dp;
    dp_result r = dp_train_run(&c, &rdp);
    if (r != DP_OK) {
        fprintf(stderr, "ringsim train: %d-rank run: %s\n", c.ranks, rdp.msg);
        status = r == DP_ERR_STRATEGY || r == DP_ERR_ARGUMENT ? RS_EXIT_USAGE : RS_EXIT_ENGINE;
        goto out;
    }
    dp_train_config cr = c;
    cr.ranks = 1;
    cr.shards = 0;
    rref.loss = loss_ref, rref.params = p_ref;
    if ((r = dp_train_run(&cr, &rref)) != DP_OK) {
        fprintf(stderr, "ringsim train: 1-rank reference: %s\n", rref.msg);
        status = RS_EXIT_ENGINE;
        goto out;
    }
    if (c.deterministic) {
        dp_train_config co = cr;
        co.shards = c.ranks;
        rord.loss = loss_ord, rord.params = p_ord;
        if ((r = dp_train_run(&co, &rord)) != DP_OK) {
            fprintf(stderr, "ringsim train: 1-rank rank-ordered reference: %s\n", rord.msg);
            status = RS_EXIT_ENGINE;
            goto out;
        }
    }

    const char *fus = fusion.text, *where = scenario ? "simulated NPUs" : "host backend";
    char model[64];
    if (c.hidden)
        snprintf(model, sizeof model, "MLP %d-%d-%d", c.features, c.hidden, c.classes);
    else
        snprintf(model, sizeof model, "softmax regression %d-%d", c.features, c.classes);
    printf("# ringsim train: %s (%zu parameters), %d samples of %d Gaussian blobs, seed %llu\n", model, T, c.samples,
           c.classes, (unsigned long long)c.seed);
    printf("# %d ranks (%s), global batch %d (shard(%d, rank): %d..%d samples per rank), %d steps, "
           "lr %g, momentum %g\n",
           c.ranks, where, c.batch, c.ranks, c.batch / c.ranks, (c.batch + c.ranks - 1) / c.ranks, S, c.lr,
           c.momentum);
    printf("# fusion %s -> %u bucket(s), %llu collectives per rank, deterministic %s\n", fus, rdp.buckets,
           (unsigned long long)rdp.collectives, c.deterministic ? "on" : "off");
    printf("# broadcast from rank %d: initial parameters %s before, identical after: %s\n", c.root,
           rdp.init_differed ? "differed" : "were equal", rdp.init_identical ? "yes" : "NO");
    if (every <= 0)
        every = S > 20 ? (S + 19) / 20 : 1;
    printf("#   step   loss (%d ranks)   loss (1 rank)      |diff|\n", c.ranks);
    double max_loss = 0, max_rel = 0, max_param = 0;
    int diverged = -1; /* the first step whose loss is not finite in either run */
    for (int t = 0; t < S; t++) {
        if (diverged < 0 && !(isfinite(loss_dp[t]) && isfinite(loss_ref[t])))
            diverged = t;
        double d = fabs(loss_dp[t] - loss_ref[t]);
        double rel = d / fmax(fabs(loss_ref[t]), 1e-30);
        max_loss = fmax(max_loss, d);
        max_rel = fmax(max_rel, rel);
        if (t % every == 0 || t == S - 1)
            printf("  %6d   %-15.9f   %-15.9f   %.2e\n", t, loss_dp[t], loss_ref[t], d);
    }
    for (size_t i = 0; i < T; i++) {
        if (diverged < 0 && !(isfinite(p_dp[i]) && isfinite(p_ref[i])))
            diverged = S - 1;
        max_param = fmax(max_param, fabs((double)p_dp[i] - (double)p_ref[i]));
    }
    /* NaN compares false and fmax drops it: a diverged run would otherwise "agree" */
    int agree = diverged < 0 && max_loss <= DP_TRAIN_LOSS_ATOL && max_param <= DP_TRAIN_PARAM_ATOL &&
                rdp.ranks_identical && rdp.init_identical;
    if (diverged >= 0)
        printf("# training diverged: the loss or the parameters are not finite by step %d (lr %g): nothing to "
               "compare; lower --lr\n",
               diverged, c.lr);
    printf("# max |loss diff| %.3e (relative %.3e; tolerance %.0e absolute), max |parameter diff| %.3e "
           "(tolerance %.0e): %s\n",
           max_loss, max_rel, DP_TRAIN_LOSS_ATOL, max_param, DP_TRAIN_PARAM_ATOL, agree ? "agree" : "DIFFER");
    printf("# every rank ended with the same parameters: %s\n", rdp.ranks_identical ? "yes (bit-exact)" : "NO");
    if (!agree)
        status = RS_EXIT_WRONG;
    if (c.deterministic) {
        int exact = memcmp(loss_dp, loss_ord, (size_t)S * sizeof(double)) == 0 &&
                    memcmp(p_dp, p_ord, T * sizeof(float)) == 0;
        printf("# deterministic: %d-rank run vs 1 rank adding the %d shard gradients in rank order: %s "
               "(%d losses, %zu parameters)\n", c.ranks, c.ranks, exact ? "bit-exact" : "NOT bit-exact", S, T);
        if (!exact)
            status = RS_EXIT_WRONG;
    }
    if (plot) {
        char title[400], n0[64], n1[64];
        snprintf(title, sizeof title, "%s, %d ranks vs 1 rank, batch %d, fusion %s", model, c.ranks, c.batch, fus);
        snprintf(n0, sizeof n0, "%d ranks (dp)", c.ranks);
        snprintf(n1, sizeof n1, "1 rank");
        const double *ys[2] = {loss_dp, loss_ref};
        const char *names[2] = {n0, n1};
        if (write_svg(plot, title, S, ys, names, 2) != 0)
            status = RS_EXIT_USAGE;
        else
            printf("# plot: %s\n", plot);
    }
out:
    free(loss_dp);
    free(loss_ref);
    free(loss_ord);
    free(p_dp);
    free(p_ref);
    free(p_ord);
    return status;
}
