/* cmd_measured.c — `ringsim measured FILE...`: reads measured benchmark tables (sim/measured/) and shows them normalized, as text or JSON. */
#include "rs_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "measured/rs_measured.h"
#include "rs_cli.h"

void rs_cmd_measured_usage(FILE *out)
{
    fprintf(out,
        "usage: ringsim measured FILE... [--collective NAME] [--ranks N] [--json OUT]\n"
        "\n"
        "Reads measured collective benchmark tables and prints each file's format, metadata and its\n"
        "rows normalized (one per size and placement: collective, ranks, bytes, time, algbw, busbw,\n"
        "#wrong, source line). The format comes from the content:\n"
        "  nccl-tests / rccl-tests output (any collective, both placements, device lines, -C, -I, -S),\n"
        "  nccl-tests -J JSON, HCCL Test output (data_size | aveg_time | alg_bandwidth | check_result),\n"
        "  OSU collective latency tables (osu_allreduce, osu_bcast, ...; plain, -f, -c),\n"
        "  ringsim run --json (every backend) and ringsim bringup --json (ring rows and links),\n"
        "  measured CSV: '#' provenance lines (# source:, # hardware:, # software:, # command:,\n"
        "  # iters:, # warmup:, # note:), then a header naming the columns (size_bytes and time_us\n"
        "  required; collective, ranks, dtype, op, root, placement, algbw_gbps, busbw_gbps, wrong)\n"
        "  and one row per size and placement.\n"
        "A file that is truncated, mixes two outputs, has an unknown column or a row whose numbers\n"
        "contradict each other (algbw not size/time, busbw not algbw x the collective's factor) is\n"
        "refused with FILE:LINE: and the reason; no row is ever skipped.\n"
        "  --collective NAME  the collective, where the file does not name it (HCCL Test; nccl-tests\n"
        "                     output without its program name); a file that names another is refused\n"
        "                     (allowed: %s)\n"
        "  --ranks N          the rank count, where the file does not give it (OSU, HCCL Test)\n"
        "  --json OUT         write the tables as JSON to OUT instead of the text (only when every\n"
        "                     file reads)\n"
        "  -h, --help         this text\n"
        "Exit status: 0 when every file reads, 2 on bad usage or when a file does not read.\n",
        rs_meas_coll_allowed());
}

int rs_cmd_measured(int argc, char **argv)
{
    FILE *out = stdout, *err = stderr;
    const char *json_path = NULL;
    rs_meas_opts opts = {NULL, 0};
    const char **paths = calloc((size_t)(argc > 0 ? argc : 1), sizeof *paths);
    int npaths = 0;
    if (paths == NULL) {
        fprintf(err, "ringsim: measured: out of memory\n");
        return RS_EXIT_USAGE;
    }
    const char *usage = "usage: ringsim measured FILE... [--collective NAME] [--ranks N] [--json OUT]";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int valued = !strcmp(a, "--collective") || !strcmp(a, "--ranks") || !strcmp(a, "--json");
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            rs_cmd_measured_usage(out);
            free(paths);
            return RS_EXIT_OK;
        } else if (valued && i + 1 >= argc) {
            fprintf(err, "ringsim: measured: %s: missing value (%s)\n", a, usage);
            free(paths);
            return RS_EXIT_USAGE;
        } else if (!strcmp(a, "--collective")) {
            rs_meas_coll k;
            opts.collective = argv[++i];
            if (rs_meas_coll_parse(opts.collective, &k) != 0) {
                fprintf(err, "ringsim: measured: --collective '%s' (allowed: %s)\n", opts.collective,
                        rs_meas_coll_allowed());
                free(paths);
                return RS_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--ranks")) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || v < 1 || v > 1000000) {
                fprintf(err, "ringsim: measured: --ranks '%s' (allowed: a whole number from 1 to 1000000)\n", argv[i]);
                free(paths);
                return RS_EXIT_USAGE;
            }
            opts.ranks = (int)v;
        } else if (!strcmp(a, "--json")) {
            json_path = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(err, "ringsim: measured: unknown option '%s' (%s)\n", a, usage);
            free(paths);
            return RS_EXIT_USAGE;
        } else {
            paths[npaths++] = a;
        }
    }
    if (npaths == 0) {
        fprintf(err, "ringsim: measured: no file given (%s)\n", usage);
        free(paths);
        return RS_EXIT_USAGE;
    }
    rs_meas_table *tables = calloc((size_t)npaths, sizeof *tables);
    const rs_meas_table **read = calloc((size_t)npaths, sizeof *read);
    if (tables == NULL || read == NULL) {
        fprintf(err, "ringsim: measured: out of memory\n");
        free(tables);
        free(read);
        free(paths);
        return RS_EXIT_USAGE;
    }
    /* Every file is read and every refusal shown, as validate does: one run tells them all. */
    int status = RS_EXIT_OK;
    size_t nread = 0;
    for (int i = 0; i < npaths; i++) {
        char msg[RS_MEAS_ERRLEN];
        if (rs_meas_read(paths[i], &opts, &tables[i], msg, sizeof msg) != 0) {
            fprintf(err, "%s\n", msg);
            status = RS_EXIT_USAGE;
            continue;
        }
        read[nread++] = &tables[i];
        if (json_path == NULL) {
            if (nread > 1)
                fputc('\n', out);
            rs_meas_print(&tables[i], out);
        }
    }
    if (json_path && status == RS_EXIT_OK) {
        char *text = rs_meas_json(read, nread);
        FILE *f = text ? fopen(json_path, "w") : NULL;
        int bad = f == NULL || fputs(text, f) == EOF || fputc('\n', f) == EOF;
        int e = errno;
        if (f && fclose(f) != 0)
            bad = 1;
        if (bad) {
            fprintf(err, "ringsim: measured: --json: cannot write '%s': %s\n", json_path,
                    text ? strerror(e) : "out of memory");
            status = RS_EXIT_USAGE;
        } else {
            fprintf(out, "ringsim measured: %zu file(s), %s written\n", nread, json_path);
        }
        free(text);
    }
    for (int i = 0; i < npaths; i++)
        rs_meas_free(&tables[i]);
    free(tables);
    free(read);
    free(paths);
    return status;
}
