/* test_measured.c — the readers of measured tables: every format's fixture read to the values it holds, every refusal with its exact FILE:LINE: and reason. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "measured/rs_measured.h"

#ifndef RS_MEAS_DIR
#error "RS_MEAS_DIR must name tests/sim/measured"
#endif

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char path_buf[4][1024];
static int path_next;

/* RS_MEAS_DIR/sub/name, in one of four rotating buffers (two paths may be alive at once). */
static const char *path(const char *sub, const char *name)
{
    char *p = path_buf[path_next++ % 4];
    snprintf(p, sizeof path_buf[0], "%s/%s/%s", RS_MEAS_DIR, sub, name);
    return p;
}

static char *read_all(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Reads a good fixture, failing the test with the reader's message if it is refused. */
static void read_ok(const char *name, const rs_meas_opts *o, rs_meas_table *t)
{
    char err[RS_MEAS_ERRLEN];
    int rc = rs_meas_read(path("data", name), o, t, err, sizeof err);
    if (rc != 0)
        fail_msg("%s", err);
}

/* Reads text that must be refused with exactly "NAME:want". */
static void buffer_refused(const char *text, const char *name, const rs_meas_opts *o, const char *want)
{
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN], full[RS_MEAS_ERRLEN + 64];
    assert_int_equal(rs_meas_read_buffer(text, strlen(text), name, o, &t, err, sizeof err), -1);
    snprintf(full, sizeof full, "%s:%s", name, want);
    assert_string_equal(err, full);
    assert_int_equal(t.nrows, 0);
    assert_null(t.rows);
}

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%.9g is not %.9g (+-%g)", got, want, tol);
}

/* ---- the good fixtures, one per format ----------------------------------------------------- */

static void test_nccl_allreduce_8(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("nccl_allreduce_8.txt", NULL, &t);
    assert_int_equal(t.format, RS_MEAS_FMT_NCCL_TEXT);
    assert_string_equal(t.tool, "nccl-tests");
    assert_string_equal(t.version, "2.19.6");
    assert_string_equal(t.program, "all_reduce_perf");
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLREDUCE);
    assert_string_equal(t.coll_from, "program all_reduce_perf, line 2");
    assert_int_equal(t.ranks, 8);
    assert_string_equal(t.ranks_from, "device lines 6-13");
    assert_int_equal(t.hosts, 1);
    assert_int_equal(t.nthreads, 1);
    assert_int_equal(t.ngpus, 8);
    assert_int_equal(t.minbytes, 8);
    assert_int_equal(t.maxbytes, 134217728);
    assert_int_equal(t.iters, 20);
    assert_int_equal(t.warmup_iters, 5);
    assert_int_equal(t.out_of_bounds, 0);
    near(t.avg_busbw, 72.1265, 1e-9);
    assert_int_equal(t.ndevices, 8);
    assert_string_equal(t.devices[7].host, "dgx-h100a");
    assert_string_equal(t.devices[7].name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(t.devices[7].line, 13);
    /* 25 sizes (8 B .. 128 MiB), each out of place then in place */
    assert_int_equal(t.nrows, 50);
    const rs_meas_row *r = &t.rows[0];
    assert_int_equal(r->coll, RS_MEAS_COLL_ALLREDUCE);
    assert_int_equal(r->ranks, 8);
    assert_int_equal(r->bytes, 8);
    assert_int_equal(r->nccl_bytes, 8);
    assert_int_equal(r->count, 2);
    assert_string_equal(r->dtype, "float");
    assert_string_equal(r->op, "sum");
    assert_int_equal(r->root, -1);
    assert_int_equal(r->place, RS_MEAS_PLACE_OUT);
    near(r->time_us, 28.11, 1e-9);
    near(r->time_res, 0.01, 1e-12);
    near(r->algbw, 0.0, 0);
    assert_int_equal(r->wrong, 0);
    assert_int_equal(r->check, RS_MEAS_CHECK_PASS);
    assert_int_equal(r->line, 18);
    assert_int_equal(t.rows[1].place, RS_MEAS_PLACE_IN);
    near(t.rows[1].time_us, 28.64, 1e-9);
    r = &t.rows[49];
    assert_int_equal(r->bytes, 134217728);
    assert_int_equal(r->place, RS_MEAS_PLACE_IN);
    near(r->time_us, 688.77, 1e-9);
    near(r->algbw, 194.87, 1e-9);
    near(r->busbw, 341.01, 1e-9);
    assert_int_equal(r->line, 42);
    /* every row as nccl-tests promises: algbw = size / time, busbw = algbw x 2(p-1)/p */
    for (size_t i = 0; i < t.nrows; i++) {
        r = &t.rows[i];
        near(r->algbw, (double)r->bytes / (r->time_us * 1e3), 0.006 + r->algbw * 0.0001);
        near(r->busbw, r->algbw * 1.75, 0.02);
    }
    rs_meas_free(&t);
    assert_null(t.rows);
    rs_meas_free(&t); /* twice is harmless */
}

static void test_nccl_allgather_16(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("nccl_allgather_16.txt", NULL, &t);
    /* nccl-tests 2.13: no version line, no program line; the command line kept above names it */
    assert_string_equal(t.version, "");
    assert_string_equal(t.program, "all_gather_perf");
    assert_string_equal(t.command, "$ mpirun -np 16 -H node1:8,node2:8 ./build/all_gather_perf -b 1K -e 1G -f 2 -g 1");
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLGATHER);
    assert_string_equal(t.coll_from, "command line all_gather_perf, line 1");
    assert_int_equal(t.ranks, 16);
    assert_int_equal(t.hosts, 2);
    assert_string_equal(t.devices[8].host, "node2");
    assert_int_equal(t.nrows, 42);
    assert_int_equal(t.rows[0].bytes, 1024);
    assert_int_equal(t.rows[0].count, 16); /* per rank: 16 floats x 16 ranks = 1024 B */
    assert_int_equal(t.rows[0].line, 25);
    assert_string_equal(t.rows[0].op, "none");
    for (size_t i = 0; i < t.nrows; i++) {
        assert_int_equal(t.rows[i].count * 4 * 16, t.rows[i].bytes);
        near(t.rows[i].busbw, t.rows[i].algbw * 15.0 / 16.0, 0.011);
    }
    const rs_meas_row *r = &t.rows[41];
    assert_int_equal(r->bytes, 1073741824);
    near(r->time_us, 7827.0, 1e-9);
    near(r->time_res, 0.1, 1e-12); /* "%7.1f" from 100 us to 10 ms */
    near(r->algbw, 137.18, 1e-9);
    rs_meas_free(&t);
}

static void test_nccl_reduce_scatter_4(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("nccl_reduce_scatter_4.txt", NULL, &t);
    assert_string_equal(t.version, "2.18.3");
    assert_int_equal(t.coll, RS_MEAS_COLL_REDUCE_SCATTER);
    assert_int_equal(t.ranks, 4);
    assert_int_equal(t.log_lines, 4); /* NCCL_DEBUG=INFO lines: counted, never rows */
    assert_int_equal(t.nrows, 38);
    for (size_t i = 0; i < t.nrows; i++) {
        assert_int_equal(t.rows[i].wrong, -1); /* -c 0: N/A */
        assert_int_equal(t.rows[i].check, RS_MEAS_CHECK_NONE);
        assert_string_equal(t.rows[i].dtype, "half");
        assert_int_equal(t.rows[i].count * 2 * 4, t.rows[i].bytes);
    }
    assert_int_equal(t.rows[0].line, 18); /* after the four log lines, 14-17 */
    assert_int_equal(t.rows[2].line, 19);
    rs_meas_free(&t);
}

static void test_nccl_broadcast_8(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("nccl_broadcast_8.txt", NULL, &t);
    assert_int_equal(t.coll, RS_MEAS_COLL_BROADCAST);
    assert_int_equal(t.nrows, 50);
    for (size_t i = 0; i < t.nrows; i++) {
        assert_int_equal(t.rows[i].root, 0);
        assert_string_equal(t.rows[i].op, "none");
        near(t.rows[i].busbw, t.rows[i].algbw, 0); /* factor 1 */
    }
    near(t.rows[0].time_us, 24.17, 1e-9);
    rs_meas_free(&t);
}

static void test_rccl_allreduce_8(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("rccl_allreduce_8.txt", NULL, &t);
    assert_string_equal(t.tool, "rccl-tests");
    assert_string_equal(t.version, "develop:ae3e635");
    assert_string_equal(t.program, "");
    /* no program name anywhere: redop sum, root -1, count x 4 = size tell allreduce */
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLREDUCE);
    assert_string_equal(t.coll_from, "the columns redop, root and count (line 42)");
    assert_int_equal(t.ranks, 8);
    assert_string_equal(t.devices[3].name, "AMD Instinct MI300X");
    assert_int_equal(t.nrows, 52);
    near(t.rows[51].time_us, 1622.0, 1e-9);
    near(t.rows[51].time_res, 0.1, 1e-12); /* "%7.1f" from 100 us */
    rs_meas_free(&t);
}

static void test_nccl_json(void **state)
{
    (void)state;
    rs_meas_table j, x;
    read_ok("nccl_allreduce_8.json", NULL, &j);
    read_ok("nccl_allreduce_8.txt", NULL, &x);
    assert_int_equal(j.format, RS_MEAS_FMT_NCCL_JSON);
    assert_string_equal(j.version, "JSON v3");
    assert_string_equal(j.program, "all_reduce_perf");
    assert_string_equal(j.command, "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8 -J ar8.json");
    assert_int_equal(j.coll, RS_MEAS_COLL_ALLREDUCE);
    assert_int_equal(j.ranks, 8); /* one device entry per process x nthreads 1 x ngpus 8 */
    assert_int_equal(j.out_of_bounds, 0);
    /* the same run as the text: the same rows, at six decimals instead of two */
    assert_int_equal(j.nrows, x.nrows);
    for (size_t i = 0; i < j.nrows; i++) {
        assert_int_equal(j.rows[i].bytes, x.rows[i].bytes);
        assert_int_equal(j.rows[i].place, x.rows[i].place);
        near(j.rows[i].time_us, x.rows[i].time_us, 0.005 + 1e-6);
        near(j.rows[i].algbw, x.rows[i].algbw, 0.005 + 1e-6);
        near(j.rows[i].time_res, 1e-6, 1e-15);
        assert_int_equal(j.rows[i].iters, 20);
        assert_int_equal(j.rows[i].line, 1); /* nccl-tests writes one line */
    }
    rs_meas_free(&j);
    rs_meas_free(&x);
}

static void test_hccl(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("hccl_allreduce_8.txt", NULL, &t);
    assert_int_equal(t.format, RS_MEAS_FMT_HCCL);
    assert_string_equal(t.program, "all_reduce_test");
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLREDUCE);
    assert_int_equal(t.ranks, 8);
    assert_string_equal(t.ranks_from, "mpirun -n, line 1");
    assert_string_equal(t.dtype, "float");
    assert_int_equal(t.minbytes, 8192);
    assert_int_equal(t.maxbytes, 67108864);
    assert_int_equal(t.warmup_iters, 10);
    assert_int_equal(t.nrows, 14);
    const rs_meas_row *r = &t.rows[0];
    assert_int_equal(r->bytes, 8192);
    near(r->time_us, 31.47, 1e-9);
    near(r->algbw, 0.26029, 1e-12);
    near(r->algbw_res, 1e-5, 1e-15);
    assert_true(isnan(r->busbw));
    assert_int_equal(r->check, RS_MEAS_CHECK_PASS);
    assert_string_equal(r->op, "sum");
    assert_int_equal(r->place, RS_MEAS_PLACE_NONE);
    assert_int_equal(r->line, 4);
    near(t.rows[13].time_us, 1452.21, 1e-9);
    rs_meas_free(&t);

    /* the same output without its command line: the collective must be said */
    char err[RS_MEAS_ERRLEN], want[RS_MEAS_ERRLEN + 1100];
    assert_int_equal(rs_meas_read(path("data", "hccl_nocmd.txt"), NULL, &t, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: which collective? HCCL Test does not print it (allowed: --collective NAME, or the "
             "command line, e.g. 'mpirun -n 8 ./bin/all_reduce_test ...', kept above the output)",
             path("data", "hccl_nocmd.txt"));
    assert_string_equal(err, want);
    rs_meas_opts o = {"allgather", 8};
    read_ok("hccl_nocmd.txt", &o, &t);
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLGATHER);
    assert_string_equal(t.coll_from, "--collective");
    assert_int_equal(t.ranks, 8);
    assert_int_equal(t.rows[0].bytes_slack, 8 * 8); /* 8 ranks' shares rounded up to whole elements */
    rs_meas_free(&t);
}

static void test_osu(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("osu_allreduce.txt", NULL, &t);
    assert_int_equal(t.format, RS_MEAS_FMT_OSU);
    assert_string_equal(t.version, "7.4");
    assert_string_equal(t.program, "osu_allreduce");
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLREDUCE);
    assert_int_equal(t.ranks, 0); /* OSU does not print it */
    assert_string_equal(t.dtype, "int8");
    assert_int_equal(t.nrows, 21);
    assert_int_equal(t.rows[0].bytes, 1);
    near(t.rows[0].time_us, 4.15, 1e-9);
    assert_true(isnan(t.rows[0].algbw) && isnan(t.rows[0].min_us));
    assert_int_equal(t.rows[0].line, 5);
    assert_int_equal(t.rows[20].bytes, 1048576);
    near(t.rows[20].time_us, 99.50, 1e-9);
    rs_meas_free(&t);

    read_ok("osu_allreduce_full.txt", NULL, &t);
    assert_string_equal(t.accel, "CUDA");
    assert_string_equal(t.dtype, "float");
    assert_int_equal(t.nrows, 21);
    near(t.rows[0].time_us, 18.93, 1e-9);
    near(t.rows[0].min_us, 17.39, 1e-9);
    near(t.rows[0].max_us, 20.14, 1e-9);
    assert_int_equal(t.rows[0].iters, 1000);
    assert_int_equal(t.rows[20].iters, 100);
    rs_meas_free(&t);

    read_ok("osu_bcast.txt", NULL, &t); /* 5.3: no datatype line */
    assert_string_equal(t.version, "5.3");
    assert_int_equal(t.coll, RS_MEAS_COLL_BROADCAST);
    assert_string_equal(t.dtype, "");
    assert_int_equal(t.rows[0].line, 4);
    rs_meas_free(&t);

    rs_meas_opts o = {NULL, 8};
    read_ok("osu_bcast_full_validate.txt", &o, &t);
    assert_int_equal(t.ranks, 8);
    for (size_t i = 0; i < t.nrows; i++) {
        assert_int_equal(t.rows[i].check, RS_MEAS_CHECK_PASS);
        assert_int_equal(t.rows[i].nccl_bytes, t.rows[i].bytes); /* a broadcast's size is the buffer */
    }
    rs_meas_free(&t);

    /* allgather sizes are per rank: their nccl-tests size needs the rank count */
    const char *ag = "\n# OSU MPI Allgather Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"
                     "1                       3.05\n2                       3.11\n";
    char err[RS_MEAS_ERRLEN];
    assert_int_equal(rs_meas_read_buffer(ag, strlen(ag), "ag.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.rows[1].nccl_bytes, 0);
    assert_non_null(strstr(t.notes, "--ranks N"));
    rs_meas_free(&t);
    assert_int_equal(rs_meas_read_buffer(ag, strlen(ag), "ag.txt", &o, &t, err, sizeof err), 0);
    assert_int_equal(t.rows[1].nccl_bytes, 16);
    assert_int_equal(t.rows[1].bytes, 2);
    rs_meas_free(&t);
}

/* Measured CSV: named columns in any order, '#' provenance, several collectives in one file. */
static void test_csv(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("csv_mixed_4.csv", NULL, &t);
    assert_int_equal(t.format, RS_MEAS_FMT_CSV);
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLREDUCE);
    assert_string_equal(t.coll_from, "rows: allreduce, broadcast, allgather");
    assert_int_equal(t.ranks, 4);
    assert_int_equal(t.iters, 2);
    assert_int_equal(t.warmup_iters, 1);
    assert_non_null(strstr(t.notes, "hardware: a 4-NPU ring on the SystemC model"));
    assert_int_equal(t.nrows, 18);
    const rs_meas_row *r = &t.rows[6];
    assert_int_equal(r->coll, RS_MEAS_COLL_BROADCAST);
    assert_int_equal(r->root, 1);
    assert_string_equal(r->op, "none");
    assert_string_equal(r->dtype, "half");
    assert_int_equal(r->nccl_bytes, 1024);
    assert_int_equal(r->place, RS_MEAS_PLACE_OUT);
    near(r->time_us, 5.559, 1e-12);
    near(r->time_res, 0.001, 1e-15);
    assert_int_equal(r->check, RS_MEAS_CHECK_PASS);
    assert_int_equal(r->line, 15);
    rs_meas_free(&t);

    /* the fewest columns, in another order; the rest from the user; a comment that is no key */
    char err[RS_MEAS_ERRLEN];
    const char *min = "# measured by hand, see the lab notebook p. 12\ntime_us,size_bytes\n10.5,1024\n20.25,4096\n";
    rs_meas_opts o = {"broadcast", 2};
    assert_int_equal(rs_meas_read_buffer(min, strlen(min), "m.csv", &o, &t, err, sizeof err), 0);
    assert_int_equal(t.format, RS_MEAS_FMT_CSV);
    assert_int_equal(t.nrows, 2);
    assert_int_equal(t.rows[1].coll, RS_MEAS_COLL_BROADCAST);
    assert_int_equal(t.rows[1].ranks, 2);
    assert_int_equal(t.rows[1].place, RS_MEAS_PLACE_NONE);
    assert_true(isnan(t.rows[1].algbw));
    rs_meas_free(&t);
    buffer_refused(min, "m.csv", NULL, "3: which collective? no 'collective' field (allowed: the column, or --collective "
                   "NAME)");
    buffer_refused("# tool: x\nsize_bytes,time_us\n8,1.0\n", "k.csv", &o, "1: unknown metadata 'tool' (allowed: # source, "
                   "hardware, software, command, iters, warmup, note: ..., or a comment that is no 'key:')");
    buffer_refused("size_bytes,time_us,size_bytes\n8,1.0,8\n", "d.csv", &o, "1: column 'size_bytes' twice (fields 1 and 3)");
    buffer_refused("collective,time_us\nallreduce,1.0\n", "n.csv", NULL, "1: no 'size_bytes' column (allowed: collective, "
                   "ranks, dtype, op, root, size_bytes, placement, time_us, algbw_gbps, busbw_gbps, wrong; size_bytes and "
                   "time_us required)");
    buffer_refused("collective,size_bytes,time_us\nalltogether,8,1.0\n", "c.csv", NULL, "2: collective 'alltogether' "
                   "(allowed: allreduce, broadcast, reduce, reduce_scatter, allgather, alltoall, sendrecv, gather, scatter)");
    buffer_refused("size_bytes,time_us\n8,1.0\n# late\n", "l.csv", &o, "3: a comment after the header (line 1) (allowed: "
                   "'#' lines before it)");
    buffer_refused("size_bytes,time_us\n8,\n", "e.csv", &o, "2: time_us '' is not a number of microseconds");
    buffer_refused("size_bytes,time_us\n8,1.0", "t.csv", &o, "2: the file ends inside this row, with no end of line "
                   "(truncated?)");
    buffer_refused("collective,size_bytes,time_us\nallreduce,8,1.0\n", "h.csv", &o, "2: --collective broadcast, but the "
                   "file measures allreduce (line 2) (allowed: --collective allreduce or none)");
}

static void test_ringsim_json(void **state)
{
    (void)state;
    rs_meas_table t;
    read_ok("ringsim_run_host.json", NULL, &t);
    assert_int_equal(t.format, RS_MEAS_FMT_RINGSIM_RUN);
    assert_int_equal(t.ranks, 4);
    assert_string_equal(t.coll_from, "rows: allreduce, broadcast");
    assert_int_equal(t.nrows, 16);
    near(t.rows[0].time_us, 293.3263000488281, 1e-12);
    near(t.rows[0].algbw, 0.0034909927948143125, 1e-18);
    assert_int_equal(t.rows[0].line, 34);
    assert_int_equal(t.rows[15].coll, RS_MEAS_COLL_BROADCAST);
    assert_int_equal(t.rows[15].root, 0);
    rs_meas_free(&t);

    read_ok("ringsim_run_zmq.json", NULL, &t);
    assert_int_equal(t.ranks, 2);
    assert_non_null(strstr(t.notes, "backend zmq"));
    rs_meas_free(&t);
    read_ok("ringsim_run_sim.json", NULL, &t);
    assert_string_equal(t.coll_from, "rows: allreduce, broadcast, reduce, reduce_scatter, allgather");
    assert_int_equal(t.nrows, 30);
    rs_meas_free(&t);

    read_ok("ringsim_bringup_2.json", NULL, &t);
    assert_int_equal(t.format, RS_MEAS_FMT_RINGSIM_BRINGUP);
    assert_int_equal(t.nrows, 1); /* the ring allreduce */
    assert_int_equal(t.rows[0].ranks, 2);
    assert_int_equal(t.rows[0].bytes, 65536);
    assert_string_equal(t.rows[0].dtype, "int32");
    near(t.rows[0].time_us, 801.2050018310547, 1e-12);
    assert_int_equal(t.nlinks, 2);
    assert_int_equal(t.links[1].src, 1);
    assert_int_equal(t.links[1].dst, 0);
    assert_string_equal(t.links[1].verdict, "good");
    near(t.links[0].gbps, 0.5912531882927385, 1e-15);
    near(t.links[0].rtt_median_us, 325.7295, 1e-12);
    assert_int_equal(t.links[0].line, 13);
    rs_meas_free(&t);
}

/* ---- the refusals -------------------------------------------------------------------------- */

static const struct {
    const char *file, *message;
} bad[] = {
    {"empty.txt", "1: the file is empty (allowed: nccl-tests or rccl-tests output, nccl-tests -J JSON, HCCL Test output, "
                  "an OSU collective latency table, ringsim run --json, ringsim bringup --json, measured CSV)"},
    {"csv_unknown_column.csv", "2: unknown column 'gpu_util' (allowed: collective, ranks, dtype, op, root, size_bytes, "
                               "placement, time_us, algbw_gbps, busbw_gbps, wrong; size_bytes and time_us required)"},
    {"csv_bad_busbw.csv", "3: busbw 10.49 GB/s is not algbw x 1.7500 (allreduce on 8 ranks, REFERENCE.md): 10.49 x 1.7500 "
                          "= 18.358 GB/s (allowed: 18.34 to 18.37 GB/s within the printed precision)"},
    {"csv_repeat.csv", "5: the same measurement as line 3 (allreduce, 1024 B, out_of_place): one row each (allowed: "
                       "another size, placement, dtype, op or root)"},
    {"csv_bad_meta.csv", "1: iters 'twenty' is not a whole number of iterations"},
    {"csv_short_row.csv", "4: 4 fields, the header (line 2) has 5"},
    {"nccl_cut_row.txt", "27: the file ends inside this row: 8 of 13 columns and no end of line (truncated?)"},
    {"nccl_no_rows.txt", "17: the file ends before any row of the table (truncated? the column names are at line 16)"},
    {"mixed_nccl_osu.txt", "24: OSU output after nccl-tests text output (line 1): two tools' outputs in one file "
                           "(allowed: one file per run)"},
    {"nccl_unknown_column.txt", "16: unknown column 'sm_util' where 'time' belongs (allowed: size count type redop "
                                "root, then per placement time (or cputime) algbw busbw #wrong [i_min i_max i_p99 "
                                "i_cv%], then [timestamp]; older: without root or redop, 'error' for '#wrong')"},
    {"nccl_bad_algbw.txt", "35: algbw 39.01 GB/s contradicts size / time: 1048576 B in 33.59 us is 31.217 GB/s "
                           "(allowed: 31.21 to 31.23 GB/s within the printed precision)"},
    {"nccl_bad_busbw.txt", "32: busbw 177.85 GB/s is not algbw x 0.7500 (reduce_scatter on 4 ranks, REFERENCE.md): "
                           "101.63 x 0.7500 = 76.222 GB/s (allowed: 76.21 to 76.23 GB/s within the printed precision)"},
    {"nccl_size_falls.txt", "28: size 4096 B after 8192 B at line 27: sizes must rise within a sweep (a new sweep "
                            "starts at its first size again, or with another type, redop or root)"},
    {"nccl_short_row.txt", "31: the row has 12 columns, the header at line 16 has 13 (its size count type [redop] [root], "
                           "then time algbw busbw #wrong per placement)"},
    {"nccl_footer_contradicts.txt", "43: out of bounds values 0, but 1 row(s) of the table report #wrong > 0 "
                                    "(expected: 0 exactly when no row does)"},
    {"nccl_cut.json", "1: the JSON ends early, inside a value (truncated?)"},
    {"osu_min_above_avg.txt", "13: min 19.71 us <= avg 18.71 us <= max 20.90 us does not hold (allowed: min <= avg <= "
                              "max)"},
    {"ringsim_run_error.json", "8: the run failed ('rank 2: timeout waiting for notify 7 from rank 1'): its rows stop "
                               "at the failure (allowed: the JSON of a run that completed)"},
    {"hccl_three_fields.txt", "7: '65536             | 32.43          | 2.02065' has 3 fields, the header has 4 "
                              "(data_size | aveg_time | alg_bandwidth | check_result)"},
};

static void test_bad_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < COUNT(bad); i++) {
        rs_meas_table t;
        char err[RS_MEAS_ERRLEN], want[2048];
        const char *p = path("bad", bad[i].file);
        int rc = rs_meas_read(p, NULL, &t, err, sizeof err);
        if (rc == 0)
            fail_msg("%s was read (%zu rows), expected: %s", bad[i].file, t.nrows, bad[i].message);
        snprintf(want, sizeof want, "%s:%s", p, bad[i].message);
        assert_string_equal(err, want);
        assert_null(t.rows);
        assert_null(t.name);
    }
}

/* What the user says must agree with what the file says. */
static void test_hints(void **state)
{
    (void)state;
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN], want[2048];
    const char *p = path("data", "nccl_allreduce_8.txt");
    rs_meas_opts o = {"allgather", 0};
    assert_int_equal(rs_meas_read(p, &o, &t, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: --collective allgather, but the file measures allreduce (program all_reduce_perf, "
             "line 2) (allowed: --collective allreduce or none)", p);
    assert_string_equal(err, want);
    rs_meas_opts r = {NULL, 4};
    assert_int_equal(rs_meas_read(p, &r, &t, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:5: --ranks 4, but the file ran on 8 ranks (device lines 6-13) (allowed: --ranks 8 or "
             "none)", p);
    assert_string_equal(err, want);
    rs_meas_opts n = {"allreducez", 0};
    assert_int_equal(rs_meas_read(p, &n, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: --collective 'allreducez' is not a collective (allowed: allreduce, broadcast,"));
    rs_meas_opts same = {"all_reduce", 8}; /* a spelling of the tools, and the same count: accepted */
    read_ok("nccl_allreduce_8.txt", &same, &t);
    assert_string_equal(t.coll_from, "program all_reduce_perf, line 2");
    rs_meas_free(&t);
    rs_meas_opts osu = {"broadcast", 0};
    const char *q = path("data", "osu_allreduce.txt");
    assert_int_equal(rs_meas_read(q, &osu, &t, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: --collective broadcast, but the file measures allreduce (OSU title, line 2) "
             "(allowed: --collective allreduce or none)", q);
    assert_string_equal(err, want);
}

/* ---- variants written inline: each layout option of the tools, and each refusal class ------- */

#define NCCL_HEAD                                                                                                    \
    "# nThread 1 nGpus 2 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "       \
    "validation: 1 graph: 0\n#\n# Using devices\n"                                                                  \
    "#  Rank  0 Group  0 Pid   1234 on      boxa device  0 [0x07] NVIDIA A100\n"                                     \
    "#  Rank  1 Group  0 Pid   1234 on      boxa device  1 [0x0b] NVIDIA A100\n#\n"
#define PLACES "#                                    out-of-place                       in-place\n"
#define COLS "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
#define UNITS "#  (B)  (elements)  (us)  (GB/s)  (GB/s)  (us)  (GB/s)  (GB/s)\n"
#define FOOT "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.1 \n#\n"
/* allreduce on 2 ranks: busbw = algbw x 1 */
#define ROW1K "1024  256  float  sum  -1  10.24  0.10  0.10  0  10.24  0.10  0.10  0\n"
#define ROW2K "2048  512  float  sum  -1  10.24  0.20  0.20  0  10.24  0.20  0.20  0\n"
#define ROW4K "4096  1024  float  sum  -1  20.48  0.20  0.20  0  20.48  0.20  0.20  0\n"

static void test_nccl_variants(void **state)
{
    (void)state;
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN];
    const char *base = NCCL_HEAD PLACES COLS UNITS ROW1K ROW2K ROW4K FOOT;
    assert_int_equal(rs_meas_read_buffer(base, strlen(base), "v.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.coll, RS_MEAS_COLL_ALLREDUCE); /* from the columns */
    assert_int_equal(t.nrows, 6);
    rs_meas_free(&t);

    /* CRLF line ends read the same */
    char crlf[4096];
    size_t o = 0;
    for (const char *p = base; *p && o + 2 < sizeof crlf; p++) {
        if (*p == '\n')
            crlf[o++] = '\r';
        crlf[o++] = *p;
    }
    assert_int_equal(rs_meas_read_buffer(crlf, o, "crlf.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.nrows, 6);
    rs_meas_free(&t);

    /* -I 1 (per-iteration columns) and -S 1 (timestamp), -C 1 (cputime) */
    const char *periter = NCCL_HEAD
        "#   out-of-place (+ per-iteration)   in-place (+ per-iteration)\n"
        "#  size  count  type  redop  root  cputime  algbw  busbw  #wrong  i_min  i_max  i_p99  i_cv%  cputime  algbw  "
        "busbw  #wrong  i_min  i_max  i_p99  i_cv%  timestamp\n"
        "#  (B)  (elements)  (us)  (GB/s)  (GB/s)  (us)  (us)  (us)  (%)  (us)  (GB/s)  (GB/s)  (us)  (us)  (us)  (%)  "
        "%Y-%m-%d %H:%M:%S\n"
        "1024  256  float  sum  -1  10.24  0.10  0.10  0  9.90  11.02  11.00  3.10  10.24  0.10  0.10  0  9.80  10.90  "
        "10.85  2.90  2026-07-10 09:14:03\n" FOOT;
    assert_int_equal(rs_meas_read_buffer(periter, strlen(periter), "i.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.nrows, 2);
    assert_int_equal(t.rows[0].cpu_time, 1);
    assert_true(isnan(t.rows[1].min_us)); /* per-iteration statistics: read, not bounds of the row */
    assert_non_null(strstr(t.notes, "CPU times"));
    rs_meas_free(&t);

    /* -C 1: the CPU time printed is not the device time algbw comes from */
    const char *cpu = NCCL_HEAD PLACES
        "#  size  count  type  redop  root  cputime  algbw  busbw  #wrong  cputime  algbw  busbw  #wrong\n" UNITS
        "1024  256  float  sum  -1  15.02  0.10  0.10  0  14.87  0.10  0.10  0\n" FOOT;
    assert_int_equal(rs_meas_read_buffer(cpu, strlen(cpu), "cpu.txt", NULL, &t, err, sizeof err), 0);
    near(t.rows[0].time_us, 15.02, 1e-9);
    rs_meas_free(&t);
    /* but busbw still follows algbw */
    buffer_refused(NCCL_HEAD PLACES "#  size  count  type  redop  root  cputime  algbw  busbw  #wrong  cputime  algbw  "
                   "busbw  #wrong\n" UNITS "1024  256  float  sum  -1  15.02  0.10  0.20  0  14.87  0.10  0.10  0\n" FOOT,
                   "cpu2.txt", NULL, "10: busbw 0.20 GB/s is not algbw x 1.0000 (allreduce on 2 ranks, REFERENCE.md): 0.10 x "
                   "1.0000 = 0.100 GB/s (allowed: 0.09 to 0.11 GB/s within the printed precision)");

    /* rccl-tests' in-place-only table, and its "# Testing N cycle." repeats */
    const char *inplace = NCCL_HEAD "#     in-place\n#  size  count  type  redop  root  time  algbw  busbw  #wrong\n"
                                    "#  (B)  (elements)  (us)  (GB/s)  (GB/s)\n"
                                    "1024  256  float  sum  -1  10.24  0.10  0.10  0\n"
                                    "2048  512  float  sum  -1  10.24  0.20  0.20  0\n"
                                    "# Testing 2 cycle.\n"
                                    "1024  256  float  sum  -1  10.24  0.10  0.10  0\n" FOOT;
    assert_int_equal(rs_meas_read_buffer(inplace, strlen(inplace), "r.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.nrows, 3);
    assert_int_equal(t.rows[2].place, RS_MEAS_PLACE_IN);
    rs_meas_free(&t);

    /* -d all: a new type starts a new sweep at the first size */
    const char *types = NCCL_HEAD PLACES COLS UNITS ROW1K ROW2K
        "1024  512  half  sum  -1  10.24  0.10  0.10  0  10.24  0.10  0.10  0\n" FOOT;
    assert_int_equal(rs_meas_read_buffer(types, strlen(types), "d.txt", NULL, &t, err, sizeof err), 0);
    assert_string_equal(t.rows[4].dtype, "half");
    rs_meas_free(&t);

    /* without device lines the rank count comes from busbw / algbw */
    const char *nodev = "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
                        PLACES COLS UNITS
                        "1048576  262144  float  sum  -1  76.91  13.63  23.86  0  70.97  14.77  25.86  0\n" FOOT;
    assert_int_equal(rs_meas_read_buffer(nodev, strlen(nodev), "n.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.ranks, 8);
    assert_string_equal(t.ranks_from, "busbw / algbw (line 5)");
    rs_meas_free(&t);

    /* the refusals, each at its line */
    buffer_refused(NCCL_HEAD PLACES COLS UNITS ROW1K ROW2K ROW4K FOOT "# nThread 1 nGpus 2 minBytes 8 maxBytes 8\n",
                   "two.txt", NULL, "16: a second nccl-tests run starts here (the first at line 1) (allowed: one run per "
                   "file)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS ROW1K "2048  512  float  sum  -1  10.24  0.20  0.20  0  10.24  0.20  "
                   "0.20  0  7\n" FOOT, "extra.txt", NULL, "11: the row has 14 columns, the header at line 8 has 13 (its "
                   "size count type [redop] [root], then time algbw busbw #wrong per placement)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS ROW1K ROW2K ROW4K, "nofoot.txt", NULL,
                   "12: the file ends after the row at line 12 without the footer '# Out of bounds values : N OK' "
                   "(truncated?)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS "1024  256  flaot  sum  -1  10.24  0.10  0.10  0  10.24  0.10  0.10  0\n"
                   FOOT, "type.txt", NULL, "10: type 'flaot' is unknown (allowed: int8, uint8, int16, uint16, int32, "
                   "uint32, int64, uint64, half, bfloat16, float, double, f8e4m3, f8e5m2, or char, int, fp16, bfp16, "
                   "fp32, fp64, fp8_e4m3, fp8_e5m2)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS "1024  256  float  sum  -1  10.2x  0.10  0.10  0  10.24  0.10  0.10  0\n"
                   FOOT, "num.txt", NULL, "10: time '10.2x' in column 6 is not a number (allowed: digits, a fraction, an "
                   "exponent)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS "1024  200  float  sum  -1  10.24  0.10  0.10  0  10.24  0.10  0.10  0\n"
                   FOOT, "count.txt", NULL, "10: count 200 x 4 B (float) is 800 B, not the size 1024 B");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS "1024  256  float  none  -1  10.24  0.10  0.10  0  10.24  0.10  0.10  0\n"
                   FOOT, "shape.txt", &(rs_meas_opts){"allreduce", 0}, "10: redop none for allreduce (--collective) "
                   "(allowed: sum, prod, max, min, avg, mulsum)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS "1024  64  float  none  -1  10.24  0.10  0.10  0  10.24  0.10  0.10  0\n"
                   FOOT, "ambig.txt", NULL, "10: which collective? The file does not name its program, and allgather and "
                   "alltoall print the same table (name it: --collective NAME, or keep nccl-tests' '# Collective test "
                   "starting:' line or the command line in the file)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS ROW1K "  8192  2048  float  sum  -1  10.24  0.80  0.80  0  10.24  0.80  "
                   "0.80  0\n" FOOT, "max.txt", NULL, "11: size 8192 B is above maxBytes 4096 of the header at line 1");
    buffer_refused(NCCL_HEAD "#  Rank  1 Group  0 Pid   1234 on      boxa device  1 [0x0b] NVIDIA A100\n" PLACES COLS
                   UNITS ROW1K FOOT, "dup.txt", NULL, "7: rank 1 has a second device line (first at line 5) (allowed: each "
                   "rank once)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS ROW1K "# Collective test concluded: all_reduce_perf\n" FOOT, "conc.txt",
                   NULL, "11: 'Collective test concluded' before the footer (expected: after "
                   "'# Avg bus bandwidth')");
    buffer_refused("# Collective test starting: hypercube_perf\n", "hyper.txt", NULL, "1: program 'hypercube_perf' is "
                   "not a collective this reader knows (allowed: all_reduce_perf, all_gather_perf, broadcast_perf, "
                   "reduce_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, gather_perf, scatter_perf)");
    buffer_refused(NCCL_HEAD PLACES COLS UNITS ROW1K "some words the tool never prints\n" FOOT, "junk.txt", NULL,
                   "11: the row has 6 columns, the header at line 8 has 13 (its size count type [redop] [root], then "
                   "time algbw busbw #wrong per placement)");
    buffer_refused(NCCL_HEAD "# Something new\n" PLACES COLS UNITS ROW1K FOOT, "cmt.txt", NULL,
                   "7: '# Something new' is no line of nccl-tests output (expected: its header, device lines, column "
                   "names, rows and footer)");
    /* a NUL byte is binary data, refused at its line */
    const char nul[] = "# nThread 1 nGpus 2 minBytes 8 maxBytes 8\n#\n# Us\0ing devices\n";
    rs_meas_table z;
    assert_int_equal(rs_meas_read_buffer(nul, sizeof nul - 1, "nul.txt", NULL, &z, err, sizeof err), -1);
    assert_string_equal(err, "nul.txt:3: a NUL byte at column 5: binary data, not a tool's text output (allowed: the "
                             "text the benchmark printed)");
}

static void test_json_variants(void **state)
{
    (void)state;
    const char *row = "{\"size\":1024,\"count\":256,\"type\":\"float\",\"redop\":\"sum\",\"root\":\"    -1\","
                      "\"out_of_place\":{\"time\":10.240000,\"alg_bw\":0.100000,\"bus_bw\":0.100000,\"nwrong\":0.000000},"
                      "\"in_place\":null,\"actual_iterations\":20,\"experiment_name\":\"\"}";
    char doc[4096];
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN];
    snprintf(doc, sizeof doc, "{\"version\":1,\"args\":[\"./all_reduce_perf\"],\"config\":{\"nthreads\":1,\"ngpus\":2,"
             "\"devices\":[{\"rank\":0,\"hostname\":\"h\",\"device\":0}]},\"results\":[%s],"
             "\"average_bus_bandwidith\":{\"bandwidith\":0.1,\"okay\":\"unchecked\"}}", row);
    assert_int_equal(rs_meas_read_buffer(doc, strlen(doc), "v1.json", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.nrows, 1); /* in_place null: not run */
    near(t.avg_busbw, 0.1, 1e-12);  /* version 1's spelling */
    rs_meas_free(&t);

    snprintf(doc, sizeof doc, "{\"version\":4,\"results\":[%s]}", row);
    buffer_refused(doc, "v4.json", NULL, "1: version: 4 is not a whole number from 1 to 3");
    snprintf(doc, sizeof doc, "{\"version\":3,\"args\":[\"./all_reduce_perf\"],\"results\":[\n%s,\n{\"size\":2048,"
             "\"count\":512,\"type\":\"float\",\"redop\":\"sum\",\"root\":\"-1\",\"latency\":3}]}", row);
    buffer_refused(doc, "key.json", NULL, "3: results[1]: unknown key 'latency' (allowed: size, count, type, redop, root, "
                   "out_of_place, in_place, *_per_iter, actual_iterations, experiment_name)");
    buffer_refused("{\"version\":3,\"results\":[]} {}", "two.json", NULL,
                   "1: text after the JSON document (allowed: one document per file)");
    buffer_refused("{\n\"program\": \"ringsim\",\n\"command\": \"compare\"\n}\n", "cmp.json", NULL,
                   "1: ringsim compare JSON holds no measured rows (allowed: ringsim run --json, ringsim bringup --json)");
    buffer_refused("{\"a\": 1}", "other.json", NULL, "1: a JSON document of no format this reader knows (allowed: "
                   "nccl-tests -J {version, config, results}, ringsim run --json {program: ringsim, rows}, ringsim bringup "
                   "--json {agents, links, rings})");
    buffer_refused("{\n  \"version\": 3,\n  \"results\": [\n    {\"size\": 1, ]\n}", "bad.json", NULL,
                   "4: not valid JSON at column 17, near '    {\"size\": 1, ]' (allowed: a JSON document)");
}

static void test_hccl_osu_variants(void **state)
{
    (void)state;
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN];
    /* a rank's own failure line marks the row of its size failed */
    const char *fail = "mpirun -n 2 ./bin/broadcast_test -b 8K -e 16K -f 2 -d int8 -r 1\n"
                       "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
                       "rank id 1, check result failed, 8192              | 20.48          | 0.40000              | failed\n"
                       "8192              | 20.48          | 0.40000              | success\n"
                       "16384             | 20.48          | 0.80000              | NULL\n";
    assert_int_equal(rs_meas_read_buffer(fail, strlen(fail), "f.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.coll, RS_MEAS_COLL_BROADCAST);
    assert_int_equal(t.rows[0].check, RS_MEAS_CHECK_FAIL);
    assert_int_equal(t.rows[1].check, RS_MEAS_CHECK_NONE);
    assert_int_equal(t.rows[0].root, 1);
    assert_string_equal(t.rows[0].dtype, "int8");
    rs_meas_free(&t);
    buffer_refused("data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
                   "8192              | 20.48          | 0.80000              | success\n", "h.txt",
                   &(rs_meas_opts){"allreduce", 0}, "2: algbw 0.80000 GB/s contradicts size / time: 8192 B in 20.48 us "
                   "is 0.400000 GB/s (allowed: 0.39990 to 0.40049 GB/s within the printed precision)");
    buffer_refused("data_size(Bytes): | aveg_time(us): | alg_bw(GB/s): | check_result:\n", "hh.txt", NULL,
                   "1: unknown column 'alg_bw(GB/s):' where 'alg_bandwidth(GB/s):' belongs (allowed: data_size(Bytes): | "
                   "aveg_time(us): | alg_bandwidth(GB/s): | check_result:)");
    buffer_refused("# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)   Median Latency(us)\n", "o.txt",
                   NULL, "2: unknown column 'Median Latency(us)' (allowed: Avg Latency(us), then Min Latency(us) Max "
                   "Latency(us) Iterations (-f), Validation (-c), P<N> Tail Lat(us))");
    buffer_refused("# OSU MPI Non-blocking Allreduce Latency Test v7.4\n", "nb.txt", NULL,
                   "1: 'Non-blocking Allreduce' is not a collective latency test this reader knows (allowed: Allreduce, "
                   "Broadcast, Reduce, Reduce_scatter, Allgather, All-to-All Personalized Exchange, Gather, Scatter; "
                   "blocking, or Persistent)");
    buffer_refused("# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)\n1    2.00\n2    2.10", "cut.txt",
                   NULL, "4: the file ends inside this row, with no end of line (truncated?)");
    buffer_refused("# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)\n1    2.00\n1    2.10\n", "s.txt",
                   NULL, "4: size 1 B after 1 B at line 3: sizes must rise (a new datatype starts a new table)");
    buffer_refused("# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)  Validation\n1    2.00   Maybe\n",
                   "v.txt", NULL, "3: validation 'Maybe' (allowed: Pass, Fail)");
    /* OSU tail-latency columns read (and are not rows of their own) */
    const char *pct = "# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)    P50 Tail Lat(us)   P99 Tail "
                      "Lat(us)\n1    2.00    1.90    4.00\n";
    assert_int_equal(rs_meas_read_buffer(pct, strlen(pct), "p.txt", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.nrows, 1);
    rs_meas_free(&t);
}

/* Each reader on another format's text refuses it at its first line that does not fit. */
static void test_direct_readers(void **state)
{
    (void)state;
    size_t len;
    char *nccl = read_all(path("data", "nccl_allreduce_8.txt"), &len);
    rs_meas_table t;
    char err[RS_MEAS_ERRLEN];
    assert_int_equal(rs_meas_read_nccl_text(nccl, len, "n", NULL, &t, err, sizeof err), 0);
    assert_int_equal(t.nrows, 50);
    rs_meas_free(&t);
    assert_int_equal(rs_meas_read_osu(nccl, len, "n", NULL, &t, err, sizeof err), -1);
    assert_string_equal(err, "n:1: '# nccl-tests version 2.19.6 nccl-headers=22807 n...' is no line of an OSU collective "
                             "latency table (expected: the title, '# Datatype:', '# Size ...' and rows)");
    assert_int_equal(rs_meas_read_hccl(nccl, len, "n", NULL, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "n:1: '# nccl-tests version 2.19.6 nccl-headers=22807 n...' is no line of HCCL Test "
                                "output"));
    assert_int_equal(rs_meas_read_json(nccl, len, "n", NULL, &t, err, sizeof err), -1);
    assert_string_equal(err, "n:1: not valid JSON at column 1, near '# nccl-t' (allowed: a JSON document)");
    free(nccl);
    char *osu = read_all(path("data", "osu_allreduce.txt"), &len);
    assert_int_equal(rs_meas_read_nccl_text(osu, len, "o", NULL, &t, err, sizeof err), -1);
    assert_string_equal(err, "o:2: '# OSU MPI Allreduce Latency Test v7.4' is no line of nccl-tests output (expected: its "
                             "header, device lines, column names, rows and footer)");
    free(osu);
}

/* Every prefix of every good fixture: read (only where the tool's output could end there) or
 * refused with one located message; a prefix of nccl-tests output before its footer never reads. */
static void test_truncations(void **state)
{
    (void)state;
    static const char *const files[] = {
        "nccl_allreduce_8.txt", "nccl_allgather_16.txt", "rccl_allreduce_8.txt", "nccl_allreduce_8.json",
        "hccl_allreduce_8.txt", "osu_allreduce_full.txt", "ringsim_run_host.json", "ringsim_bringup_2.json",
        "csv_mixed_4.csv",
    };
    for (size_t f = 0; f < COUNT(files); f++) {
        size_t len;
        char *text = read_all(path("data", files[f]), &len);
        const char *foot = strstr(text, "# Avg bus bandwidth");
        size_t must_fail = foot ? (size_t)(foot - text) + 20 : 0;
        for (size_t n = 0; n < len; n += 1 + n / 64) {
            char *copy = malloc(n ? n : 1); /* exact size: a read past the end is an ASan error */
            memcpy(copy, text, n);
            rs_meas_table t;
            char err[RS_MEAS_ERRLEN];
            int rc = rs_meas_read_buffer(copy, n, "cut", NULL, &t, err, sizeof err);
            if (rc == 0) {
                if (n < must_fail)
                    fail_msg("%s cut at %zu of %zu bytes (before its footer) was read", files[f], n, len);
                rs_meas_free(&t);
            } else {
                if (strncmp(err, "cut:", 4) != 0 || strchr(err, '\n'))
                    fail_msg("%s cut at %zu: '%s' is not one located line", files[f], n, err);
                assert_null(t.rows);
            }
            free(copy);
        }
        free(text);
    }
}

static void test_row_check(void **state)
{
    (void)state;
    char why[RS_MEAS_ERRLEN];
    rs_meas_row r;
    memset(&r, 0, sizeof r);
    r.coll = RS_MEAS_COLL_ALLREDUCE;
    r.ranks = 8;
    r.bytes = r.nccl_bytes = 1048576;
    r.count = -1;
    r.root = -1;
    r.time_us = 76.91;
    r.time_res = r.algbw_res = r.busbw_res = 0.01;
    r.algbw = 13.63; /* 1048576 / 76.91 us = 13.634 */
    r.busbw = 23.86;
    r.wrong = 0;
    r.check = RS_MEAS_CHECK_PASS;
    r.min_us = r.max_us = NAN;
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), 0);
    /* the edges: 1048576 B over 76.905..76.915 us is 13.6328..13.6346 GB/s, +-0.005 printed */
    r.algbw = 13.627;
    r.busbw = 23.85;
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), -1);
    r.algbw = 13.628;
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), 0);
    r.algbw = 13.63;
    r.busbw = 23.84; /* (13.625 .. 13.635) x 1.75 = 23.844 .. 23.861, +-0.005 */
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), 0);
    r.busbw = 23.83;
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), -1);
    assert_non_null(strstr(why, "busbw 23.83 GB/s is not algbw x 1.7500 (allreduce on 8 ranks"));
    r.busbw = 23.86;
    r.time_us = 0;
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), -1);
    assert_string_equal(why, "time 0.00 us is not a positive duration (allowed: > 0)");
    r.time_us = 76.91;
    r.ranks = 0; /* busbw needs the rank count */
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), -1);
    assert_string_equal(why, "busbw of allreduce needs the rank count, which the file does not give (allowed: --ranks N)");
    r.ranks = 8;
    r.wrong = 2; /* #wrong and the verdict must agree */
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), -1);
    r.check = RS_MEAS_CHECK_FAIL;
    assert_int_equal(rs_meas_row_check(&r, why, sizeof why), 0);

    near(rs_meas_bus_factor(RS_MEAS_COLL_ALLREDUCE, 8), 1.75, 0);
    near(rs_meas_bus_factor(RS_MEAS_COLL_ALLGATHER, 16), 15.0 / 16, 0);
    near(rs_meas_bus_factor(RS_MEAS_COLL_REDUCE_SCATTER, 4), 0.75, 0);
    near(rs_meas_bus_factor(RS_MEAS_COLL_ALLTOALL, 4), 0.75, 0);
    near(rs_meas_bus_factor(RS_MEAS_COLL_BROADCAST, 0), 1.0, 0);
    assert_true(isnan(rs_meas_bus_factor(RS_MEAS_COLL_ALLREDUCE, 0)));
    rs_meas_coll k;
    assert_int_equal(rs_meas_coll_parse("all_gather", &k), 0);
    assert_int_equal(k, RS_MEAS_COLL_ALLGATHER);
    assert_int_equal(rs_meas_coll_parse("bcast", &k), 0);
    assert_int_equal(k, RS_MEAS_COLL_BROADCAST);
    assert_int_equal(rs_meas_coll_parse("hypercube", &k), -1);
    assert_string_equal(rs_meas_coll_name(RS_MEAS_COLL_REDUCE_SCATTER), "reduce_scatter");
}

/* The JSON the command writes holds every row with its line. */
static void test_json_out(void **state)
{
    (void)state;
    rs_meas_table a, b;
    read_ok("nccl_allreduce_8.txt", NULL, &a);
    read_ok("ringsim_bringup_2.json", NULL, &b);
    const rs_meas_table *both[2] = {&a, &b};
    char *text = rs_meas_json(both, 2);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    cJSON *files = cJSON_GetObjectItem(doc, "files");
    assert_int_equal(cJSON_GetArraySize(files), 2);
    cJSON *f0 = cJSON_GetArrayItem(files, 0);
    assert_string_equal(cJSON_GetObjectItem(f0, "collective")->valuestring, "allreduce");
    cJSON *rows = cJSON_GetObjectItem(f0, "rows");
    assert_int_equal(cJSON_GetArraySize(rows), 50);
    cJSON *last = cJSON_GetArrayItem(rows, 49);
    near(cJSON_GetObjectItem(last, "busbw_gbps")->valuedouble, 341.01, 1e-9);
    assert_int_equal((int)cJSON_GetObjectItem(last, "line")->valuedouble, 42);
    assert_string_equal(cJSON_GetObjectItem(last, "placement")->valuestring, "in_place");
    cJSON *f1 = cJSON_GetArrayItem(files, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(f1, "rows"), 0), "algbw_gbps")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(f1, "links")), 2);
    cJSON_Delete(doc);
    free(text);
    rs_meas_free(&a);
    rs_meas_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_allreduce_8), cmocka_unit_test(test_nccl_allgather_16),
        cmocka_unit_test(test_nccl_reduce_scatter_4), cmocka_unit_test(test_nccl_broadcast_8),
        cmocka_unit_test(test_rccl_allreduce_8), cmocka_unit_test(test_nccl_json),
        cmocka_unit_test(test_hccl), cmocka_unit_test(test_osu),
        cmocka_unit_test(test_ringsim_json), cmocka_unit_test(test_csv), cmocka_unit_test(test_bad_fixtures),
        cmocka_unit_test(test_hints), cmocka_unit_test(test_nccl_variants),
        cmocka_unit_test(test_json_variants), cmocka_unit_test(test_hccl_osu_variants),
        cmocka_unit_test(test_direct_readers), cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_row_check), cmocka_unit_test(test_json_out),
    };
    return cmocka_run_group_tests_name("measured", tests, NULL, NULL);
}
