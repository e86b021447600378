/* test_scenario.c — the scenario loader: units, the library, every error class, hostile input. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario/rs_scenario.h"
#include "scenario/rs_units.h"

#ifndef RS_SOURCE_DIR
#error "RS_SOURCE_DIR must name the source tree"
#endif

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Every file of scenarios/: each must load (and each is also run through `ringsim validate`). */
static const char *const library[] = {
    "default", "ring8", "ring64", "ring1024", "ring2048", "torus4x4", "cluster4x8", "irregular", "degraded",
};

/* One fixture per error class; the first line of each says the message expected. Listed here
 * (not globbed) so a lost fixture fails the test instead of shrinking it. */
static const char *const fixtures[] = {
    "unknown_key", "wrong_unit", "missing_unit", "ambiguous_unit", "out_of_range", "huge_number",
    "missing_required", "missing_for_kind", "duplicate_key", "bad_endpoint", "no_such_link", "bad_enum",
    "bad_collective", "syntax_error", "tab_indent", "empty", "not_a_mapping", "wrong_type",
    "kind_mismatch", "ranks_mismatch", "root_range", "algo_mismatch", "sizes_order", "memory",
    "links_disconnected", "fault_no_change", "fault_down_with_bandwidth", "two_documents", "not_utf8",
    "train_fusion_sum", "train_fusion_unsorted", "train_fusion_segments", "train_fusion_index_beyond",
    "train_fusion_word", "train_model_missing", "train_sweep_key", "train_no_model",
};

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static void library_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/scenarios/%s.yaml", RS_SOURCE_DIR, name);
}

/* ---- units ------------------------------------------------------------------------------------ */

static void test_units_good(void **state)
{
    (void)state;
    static const struct { const char *text; rs_unit_kind kind; double si; } cases[] = {
        {"30 GB/s", RS_UNIT_BANDWIDTH, 30e9},
        {"100 Gb/s", RS_UNIT_BANDWIDTH, 12.5e9},
        {"25 GiB/s", RS_UNIT_BANDWIDTH, 25.0 * 1073741824.0},
        {"800 MB/s", RS_UNIT_BANDWIDTH, 800e6},
        {"10 Kib/s", RS_UNIT_BANDWIDTH, 1280},
        {"1 TB/s", RS_UNIT_BANDWIDTH, 1e12},
        {"2e3 MB/s", RS_UNIT_BANDWIDTH, 2e9},
        {"30GB/s", RS_UNIT_BANDWIDTH, 30e9},
        {"1.5 us", RS_UNIT_TIME, 1.5e-6},
        {"1.5 \xc2\xb5s", RS_UNIT_TIME, 1.5e-6},
        {"1.5 \xce\xbcs", RS_UNIT_TIME, 1.5e-6},
        {"200 ns", RS_UNIT_TIME, 200e-9},
        {"2 ms", RS_UNIT_TIME, 2e-3},
        {"1 s", RS_UNIT_TIME, 1},
        {".5 s", RS_UNIT_TIME, 0.5},
        {"1e-3 s", RS_UNIT_TIME, 1e-3},
        {"  7 ns  ", RS_UNIT_TIME, 7e-9},
        {"0 s", RS_UNIT_TIME, 0},
        {"-0 s", RS_UNIT_TIME, 0},
        {"3 ps", RS_UNIT_TIME, 3e-12},
        {"4 KiB", RS_UNIT_SIZE, 4096},
        {"64 MiB", RS_UNIT_SIZE, 64.0 * 1048576},
        {"512 B", RS_UNIT_SIZE, 512},
        {"1 GB", RS_UNIT_SIZE, 1e9},
        {"1.5 KiB", RS_UNIT_SIZE, 1536},
        {"1 TiB", RS_UNIT_SIZE, 1099511627776.0},
        {"8", RS_UNIT_COUNT, 8},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        double v = -1;
        char why[160] = "";
        rs_units_status st = rs_units_parse(cases[i].text, cases[i].kind, &v, why, sizeof why);
        if (st != RS_UNITS_OK || v != cases[i].si)
            fail_msg("'%s': status %d, %.17g, expected %.17g (%s)", cases[i].text, st, v, cases[i].si, why);
    }
}

static void test_units_bad(void **state)
{
    (void)state;
    static const struct { const char *text; rs_unit_kind kind; rs_units_status st; const char *why; } cases[] = {
        {"30", RS_UNIT_BANDWIDTH, RS_UNITS_MISSING, "'30' has no bandwidth unit"},
        {"2", RS_UNIT_TIME, RS_UNITS_MISSING, "'2' has no time unit"},
        {"30 GB", RS_UNIT_BANDWIDTH, RS_UNITS_WRONG_KIND, "'30 GB' is a size, not a bandwidth"},
        {"4 KiB", RS_UNIT_TIME, RS_UNITS_WRONG_KIND, "'4 KiB' is a size, not a time"},
        {"1 us", RS_UNIT_SIZE, RS_UNITS_WRONG_KIND, "'1 us' is a time, not a size"},
        {"8 B", RS_UNIT_COUNT, RS_UNITS_WRONG_KIND, "'8 B' has a unit (B), but this is a plain number"},
        {"30 KB/s", RS_UNIT_BANDWIDTH, RS_UNITS_UNKNOWN,
         "unit 'KB/s' is ambiguous: write kB/s (x1000) or KiB/s (x1024)"},
        {"4 KB", RS_UNIT_SIZE, RS_UNITS_UNKNOWN, "unit 'KB' is ambiguous: write kB (x1000) or KiB (x1024)"},
        {"30 Gbps", RS_UNIT_BANDWIDTH, RS_UNITS_UNKNOWN, "unknown unit 'Gbps', did you mean 'Gb/s'?"},
        {"30 GBps", RS_UNIT_BANDWIDTH, RS_UNITS_UNKNOWN, "unknown unit 'GBps', did you mean 'GB/s'?"},
        {"64 mib", RS_UNIT_SIZE, RS_UNITS_UNKNOWN, "unknown unit 'mib', did you mean 'MiB'?"},
        {"30 gb/s", RS_UNIT_BANDWIDTH, RS_UNITS_UNKNOWN, "unknown unit 'gb/s'"}, /* Gb/s or GB/s? ask */
        {"1.5 us extra", RS_UNIT_TIME, RS_UNITS_UNKNOWN, "unknown unit 'us extra'"},
        {"3 0 GB/s", RS_UNIT_BANDWIDTH, RS_UNITS_UNKNOWN, "unknown unit '0 GB/s'"},
        {"fast", RS_UNIT_BANDWIDTH, RS_UNITS_NOT_NUMBER, "'fast' is not a number with a unit"},
        {"", RS_UNIT_TIME, RS_UNITS_NOT_NUMBER, "'' is not a number with a unit"},
        {"GB/s", RS_UNIT_BANDWIDTH, RS_UNITS_NOT_NUMBER, "'GB/s' is not a number with a unit"},
        {"nan s", RS_UNIT_TIME, RS_UNITS_NOT_NUMBER, "'nan s' is not a number with a unit"},
        {"inf s", RS_UNIT_TIME, RS_UNITS_NOT_NUMBER, "'inf s' is not a number with a unit"},
        {"- 5 s", RS_UNIT_TIME, RS_UNITS_NOT_NUMBER, "'- 5 s' is not a number with a unit"},
        {"x", RS_UNIT_COUNT, RS_UNITS_NOT_NUMBER, "'x' is not a number"},
        {"1e999 GB/s", RS_UNIT_BANDWIDTH, RS_UNITS_RANGE, "'1e999 GB/s' is too large for a number"},
        {"1e-999 s", RS_UNIT_TIME, RS_UNITS_RANGE, "'1e-999 s' is too small for a number"},
        {"1e308 TiB/s", RS_UNIT_BANDWIDTH, RS_UNITS_RANGE, "'1e308 TiB/s' is too large for a number"},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        double v = 12345;
        char why[160] = "";
        rs_units_status st = rs_units_parse(cases[i].text, cases[i].kind, &v, why, sizeof why);
        if (st != cases[i].st || strcmp(why, cases[i].why) != 0 || v != 12345)
            fail_msg("'%s': status %d (expected %d), why \"%s\" (expected \"%s\"), value %g", cases[i].text, st,
                     cases[i].st, why, cases[i].why, v);
    }
    /* a NULL why is fine */
    double v;
    assert_int_equal(rs_units_parse("30", RS_UNIT_BANDWIDTH, &v, NULL, 0), RS_UNITS_MISSING);
    /* a very long number: no fixed buffer in the way */
    char big[2100];
    memset(big, '1', 2000);
    strcpy(big + 2000, " B");
    assert_int_equal(rs_units_parse(big, RS_UNIT_SIZE, &v, NULL, 0), RS_UNITS_RANGE);
    memcpy(big, "0.", 2);
    assert_int_equal(rs_units_parse(big, RS_UNIT_SIZE, &v, NULL, 0), RS_UNITS_OK);
}

static void test_units_format(void **state)
{
    (void)state;
    static const struct { double si; rs_unit_kind kind; const char *text; } cases[] = {
        {30e9, RS_UNIT_BANDWIDTH, "30 GB/s"},     {12.5e9, RS_UNIT_BANDWIDTH, "12.5 GB/s"},
        {800e6, RS_UNIT_BANDWIDTH, "800 MB/s"},   {0, RS_UNIT_BANDWIDTH, "0 B/s"},
        {100e12, RS_UNIT_BANDWIDTH, "100 TB/s"},  {1.5e-6, RS_UNIT_TIME, "1.5 us"},
        {500e-9, RS_UNIT_TIME, "500 ns"},         {2e-3, RS_UNIT_TIME, "2 ms"},
        {1, RS_UNIT_TIME, "1 s"},                 {0, RS_UNIT_TIME, "0 s"},
        {4096, RS_UNIT_SIZE, "4 KiB"},            {1e9, RS_UNIT_SIZE, "1 GB"},
        {1536, RS_UNIT_SIZE, "1536 B"},           {0, RS_UNIT_SIZE, "0 B"},
        {65600, RS_UNIT_SIZE, "65600 B"},         {1073741824.0, RS_UNIT_SIZE, "1 GiB"},
        {8, RS_UNIT_COUNT, "8"},
    };
    char buf[80];
    for (size_t i = 0; i < COUNT(cases); i++) {
        rs_units_format(cases[i].si, cases[i].kind, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
    }
    /* whatever the value, the text reads back as exactly the same double */
    static const double values[] = {30e9, 12.5e9, 1.5e-6, 2e-7, 1.0 / 3, 0.1, 123456789.123, 1e-12, 5e-13,
                                    7e-15, 0, 99.99e12, 26843545600.0, 1e15, 3.3e-9, 1e6 / 7};
    static const rs_unit_kind kinds[] = {RS_UNIT_BANDWIDTH, RS_UNIT_TIME, RS_UNIT_COUNT};
    for (size_t k = 0; k < COUNT(kinds); k++)
        for (size_t i = 0; i < COUNT(values); i++) {
            double back = -1;
            rs_units_format(values[i], kinds[k], buf, sizeof buf);
            assert_int_equal(rs_units_parse(buf, kinds[k], &back, NULL, 0), RS_UNITS_OK);
            if (back != values[i])
                fail_msg("%.17g -> '%s' -> %.17g", values[i], buf, back);
        }
}

/* ---- the library ------------------------------------------------------------------------------ */

static char *dump_text(const rs_scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(rs_scenario_dump(sc, f), 0);
    fclose(f);
    return text;
}

/* The scenario's dump, which must load back and dump the same (free it). */
static char *dump_round_trip(const rs_scenario *sc)
{
    rs_scenario again;
    char err[RS_SCENARIO_ERRLEN];
    char *d1 = dump_text(sc);
    if (rs_scenario_load_string(d1, strlen(d1), "again.yaml", &again, err, sizeof err) != 0)
        fail_msg("dump does not load: %s\n%s", err, d1);
    char *d2 = dump_text(&again);
    assert_string_equal(d1, d2);
    free(d2);
    rs_scenario_free(&again);
    return d1;
}

static void test_library_loads(void **state)
{
    (void)state;
    for (size_t i = 0; i < COUNT(library); i++) {
        char path[512], err[RS_SCENARIO_ERRLEN];
        library_path(path, sizeof path, library[i]);
        rs_scenario sc;
        if (rs_scenario_load(path, &sc, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_string_equal(sc.path, path);
        assert_true(sc.topo.nranks >= 2);
        assert_true(sc.workload.colls_count >= 1);
        /* the dump is a scenario too, and the same one: dump(load(dump)) == dump */
        char *d1 = dump_text(&sc);
        rs_scenario again;
        if (rs_scenario_load_string(d1, strlen(d1), path, &again, err, sizeof err) != 0)
            fail_msg("%s: dump does not load: %s\n%s", library[i], err, d1);
        char *d2 = dump_text(&again);
        assert_string_equal(d1, d2);
        assert_true(again.topo.link.bandwidth == sc.topo.link.bandwidth);
        assert_true(again.topo.link.latency == sc.topo.link.latency);
        assert_int_equal(again.topo.links_count, sc.topo.links_count);
        free(d1);
        free(d2);
        rs_scenario_free(&again);
        rs_scenario_free(&sc);
    }
}

static void load_library(const char *name, rs_scenario *sc)
{
    char path[512], err[RS_SCENARIO_ERRLEN];
    library_path(path, sizeof path, name);
    if (rs_scenario_load(path, sc, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void test_library_values(void **state)
{
    (void)state;
    rs_scenario sc;
    load_library("default", &sc);
    assert_string_equal(sc.name, "atlas-8npu-server");
    assert_int_equal(sc.topo.kind, RS_TOPO_SERVER8);
    assert_int_equal(sc.topo.nranks, 8);
    assert_true(sc.topo.link.bandwidth == 30e9);
    assert_true(sc.topo.link.latency == 1.5e-6);
    assert_int_equal(sc.topo.link.packet_bytes, 4096);
    assert_int_equal(sc.topo.link.header_bytes, 64);
    assert_int_equal(sc.topo.link.buffer_bytes, 262144);
    assert_int_equal(sc.workload.colls_count, 2);
    assert_int_equal(sc.workload.colls[0], NCL_COLL_ALLREDUCE);
    assert_int_equal(sc.workload.colls[1], NCL_COLL_BROADCAST);
    assert_int_equal(sc.workload.begin_bytes, 8);
    assert_int_equal(sc.workload.end_bytes, 64u << 20);
    assert_int_equal(rs_scenario_size_count(&sc.workload), 24);
    assert_int_equal(sc.payload_real, 1);
    assert_int_equal(sc.fidelity, RS_FIDELITY_MESSAGE);
    rs_scenario_free(&sc);

    load_library("ring1024", &sc);
    assert_int_equal(sc.topo.kind, RS_TOPO_RING);
    assert_int_equal(sc.topo.nranks, 1024);
    assert_int_equal(sc.payload_real, 0);
    assert_int_equal(sc.workload.begin_bytes, 1u << 30);
    assert_int_equal(rs_scenario_size_count(&sc.workload), 1);
    rs_scenario_free(&sc);

    load_library("torus4x4", &sc);
    assert_int_equal(sc.topo.nranks, 16);
    assert_int_equal(sc.topo.dims[0], 4);
    assert_int_equal(sc.topo.dims[1], 4);
    rs_scenario_free(&sc);

    load_library("cluster4x8", &sc);
    assert_int_equal(sc.topo.kind, RS_TOPO_CLUSTER);
    assert_int_equal(sc.topo.servers, 4);
    assert_int_equal(sc.topo.nranks, 32);
    assert_true(sc.topo.nic.bandwidth == 12.5e9);
    assert_int_equal(sc.topo.sw.buffer_bytes, 4u << 20);
    rs_scenario_free(&sc);

    load_library("irregular", &sc);
    assert_int_equal(sc.topo.kind, RS_TOPO_LINKS);
    assert_int_equal(sc.topo.nranks, 6);
    assert_int_equal(sc.topo.links_count, 7);
    assert_true(sc.topo.links[0].params.bandwidth == 30e9); /* inherited from topology.link */
    assert_true(sc.topo.links[3].params.bandwidth == 10e9);
    assert_true(sc.topo.links[3].params.latency == 1.5e-6);
    assert_int_equal(sc.topo.links[3].ends.both, 1);
    assert_int_equal(sc.topo.links[6].ends.both, 0);
    assert_true(sc.topo.links[6].params.latency == 3e-6);
    assert_true(rs_scenario_link_exists(&sc.topo, 0, 3));
    assert_false(rs_scenario_link_exists(&sc.topo, 3, 0));
    assert_true(rs_scenario_link_exists(&sc.topo, 4, 3));
    rs_scenario_free(&sc);

    load_library("degraded", &sc);
    assert_int_equal(sc.topo.overrides_count, 1);
    assert_int_equal(sc.topo.overrides[0].ends.a, 2);
    assert_int_equal(sc.topo.overrides[0].ends.b, 6);
    assert_true(sc.topo.overrides[0].bandwidth == 5e9);
    assert_true(sc.topo.overrides[0].latency < 0); /* unchanged */
    assert_int_equal(sc.faults_count, 1);
    assert_true(sc.faults[0].at == 50e-6);
    assert_int_equal(sc.faults[0].kind, RS_FAULT_DEGRADE);
    assert_int_equal(sc.faults[0].ends.a, 1);
    assert_int_equal(sc.faults[0].ends.b, 5);
    assert_true(sc.faults[0].bandwidth == 10e9);
    assert_true(sc.faults[0].latency == 5e-6);
    assert_true(sc.faults[0].ends.line > 1);
    rs_scenario_free(&sc);
}

/* The defaults scenarios/README.md promises. */
static void test_defaults(void **state)
{
    (void)state;
    static const char text[] = "topology: {kind: ring, ranks: 4}\n";
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load_string(text, strlen(text), "dir/mini.yaml", &sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(sc.name, "mini");
    assert_string_equal(sc.description, "");
    assert_int_equal(sc.topo.nranks, 4);
    assert_true(sc.topo.link.bandwidth == 30e9);
    assert_true(sc.topo.link.latency == 1.5e-6);
    assert_int_equal(sc.topo.link.packet_bytes, 4096);
    assert_int_equal(sc.topo.link.header_bytes, 64);
    assert_int_equal(sc.topo.link.buffer_bytes, 262144);
    assert_true(sc.topo.nic.bandwidth == 12.5e9);
    assert_true(sc.topo.nic.latency == 2e-6);
    assert_int_equal(sc.topo.nic.buffer_bytes, 262144);
    assert_true(sc.topo.sw.latency == 500e-9);
    assert_int_equal(sc.topo.sw.buffer_bytes, 1u << 20);
    assert_int_equal(sc.topo.overrides_count, 0);
    assert_int_equal(sc.device.dma_engines, 4);
    assert_int_equal(sc.device.queue_depth, 16);
    assert_true(sc.device.mem_bandwidth == 400e9);
    assert_true(sc.device.reduce_bandwidth == 200e9);
    assert_true(sc.device.task_overhead == 1e-6);
    assert_int_equal(sc.device.memory_bytes, 1u << 30);
    assert_int_equal(sc.workload.colls_count, 1);
    assert_int_equal(sc.workload.colls[0], NCL_COLL_ALLREDUCE);
    assert_int_equal(sc.workload.algo, NCL_ALGO_AUTO);
    assert_int_equal(sc.workload.dtype, NCL_FLOAT32);
    assert_int_equal(sc.workload.op, NCL_SUM);
    assert_int_equal(sc.workload.root, 0);
    assert_int_equal(sc.workload.begin_bytes, 8);
    assert_int_equal(sc.workload.end_bytes, 16u << 20);
    assert_int_equal(sc.workload.factor, 2);
    assert_int_equal(sc.workload.iters, 1);
    assert_int_equal(sc.workload.warmup, 0);
    assert_int_equal(sc.payload_real, 1);
    assert_int_equal(sc.fidelity, RS_FIDELITY_MESSAGE);
    assert_int_equal(sc.seed, 1);
    assert_int_equal(sc.faults_count, 0);
    rs_scenario_free(&sc);

    /* derived values */
    static const char ft[] = "topology: {kind: fat_tree, ranks: 32, per_leaf: 8}\nseed: 0xFFFFFFFFFFFFFFFF\n"
                             "workload: {collectives: all, dtype: bf16}\n";
    if (rs_scenario_load_string(ft, strlen(ft), "ft.yml", &sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(sc.name, "ft");
    assert_int_equal(sc.topo.spines, 8);
    assert_int_equal(sc.workload.colls_count, RS_COLL_COUNT); /* alltoallv too */
    assert_int_equal(sc.workload.dtype, NCL_BFLOAT16);
    assert_true(sc.seed == UINT64_MAX);
    assert_int_equal(rs_scenario_link_count(&sc.topo), 2 * 32 + 2 * 4 * 8);
    rs_scenario_free(&sc);
}

/* Corrupt faults: every and crc read (crc true by default), left out of other actions' dumps, and
 * the dump loads back to the same dump. */
static void test_corrupt_faults(void **state)
{
    (void)state;
    static const char text[] = "topology: {kind: ring, ranks: 4}\n"
                               "faults:\n"
                               "  - {at: 10 us, link: [1, 2], both: false, action: corrupt, every: 4}\n"
                               "  - {at: 0 s, link: [2, 3], both: false, action: corrupt, every: 1, crc: false}\n"
                               "  - {at: 1 ms, link: [3, 0], both: false, action: degrade, bandwidth: 1 GB/s}\n";
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load_string(text, strlen(text), "c.yaml", &sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(sc.faults_count, 3);
    assert_int_equal(sc.faults[0].kind, RS_FAULT_CORRUPT);
    assert_int_equal(sc.faults[0].every, 4);
    assert_int_equal(sc.faults[0].crc, 1);
    assert_true(sc.faults[0].bandwidth < 0 && sc.faults[0].latency < 0);
    assert_int_equal(sc.faults[1].every, 1);
    assert_int_equal(sc.faults[1].crc, 0);
    assert_int_equal(sc.faults[2].every, 0);
    char *d1 = dump_round_trip(&sc);
    assert_non_null(strstr(d1, "action: corrupt, every: 4, crc: true}"));
    assert_non_null(strstr(d1, "action: corrupt, every: 1, crc: false}"));
    assert_non_null(strstr(d1, "action: degrade, bandwidth: 1 GB/s}"));
    free(d1);
    rs_scenario_free(&sc);
}

/* A linear sweep (nccl-tests -f 0 -i) and per-collective protocol switches: read, counted, dumped
 * without the factor or the switches not given, and read back the same. */
static void test_linear_sweep_and_switches(void **state)
{
    (void)state;
    static const char text[] = "topology: {kind: ring, ranks: 2}\n"
                               "workload:\n"
                               "  latency_path: 92 KiB\n"
                               "  latency_paths: {allreduce: 442 KiB, reduce: 0 B}\n"
                               "  sizes: {begin: 1 KiB, end: 1047 KiB, step: 2 KiB}\n";
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    if (rs_scenario_load_string(text, strlen(text), "l.yaml", &sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(sc.workload.step_bytes, 2048);
    assert_int_equal(rs_scenario_size_count(&sc.workload), 524); /* 1, 3, ..., 1047 KiB */
    uint64_t next = 0;
    assert_int_equal(rs_scenario_next_size(&sc.workload, 1024, &next), 1);
    assert_int_equal(next, 3072);
    assert_int_equal(rs_scenario_next_size(&sc.workload, 1047 * 1024, &next), 0);
    assert_true(sc.workload.latency_path_of[NCL_COLL_ALLREDUCE] == 442 * 1024.0);
    assert_true(sc.workload.latency_path_of[NCL_COLL_REDUCE] == 0);
    assert_true(sc.workload.latency_path_of[NCL_COLL_BROADCAST] < 0);
    char *d1 = dump_round_trip(&sc);
    assert_non_null(strstr(d1, "sizes: {begin: 1 KiB, end: 1047 KiB, step: 2 KiB}"));
    assert_non_null(strstr(d1, "latency_paths: {allreduce: 442 KiB, reduce: 0 B}"));
    assert_non_null(strstr(d1, "+2 KiB (524 sizes)"));
    free(d1);
    rs_scenario_free(&sc);
    /* without either: no factor-less sweep, no empty mapping in the dump */
    static const char plain[] = "topology: {kind: ring, ranks: 2}\n";
    if (rs_scenario_load_string(plain, strlen(plain), "p.yaml", &sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    d1 = dump_text(&sc);
    assert_null(strstr(d1, "latency_paths"));
    assert_null(strstr(d1, "step"));
    free(d1);
    rs_scenario_free(&sc);
}

/* Every ```yaml block of scenarios/README.md is a valid scenario, but the grid files of its
 * "Sweeps" section (a top-level `grid:`), which the sweep tests check through scenarios/sweeps/. */
static void test_readme_examples(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/scenarios/README.md", RS_SOURCE_DIR);
    size_t len = 0;
    char *doc = read_all(path, &len);
    assert_non_null(doc);
    int blocks = 0;
    for (char *p = strstr(doc, "```yaml\n"); p; p = strstr(p, "```yaml\n")) {
        p += 8;
        char *end = strstr(p, "```");
        assert_non_null(end);
        const char *grid = strstr(p, "\ngrid:\n");
        if (grid && grid < end) {
            p = end + 3;
            continue;
        }
        rs_scenario sc;
        char err[RS_SCENARIO_ERRLEN];
        /* named by its path: files an example names resolve next to the README */
        if (rs_scenario_load_string(p, (size_t)(end - p), path, &sc, err, sizeof err) != 0)
            fail_msg("README example %d: %s", blocks + 1, err);
        rs_scenario_free(&sc);
        blocks++;
        p = end + 3;
    }
    assert_true(blocks >= 2);
    free(doc);
}

/* ---- errors ----------------------------------------------------------------------------------- */

static void test_bad_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < COUNT(fixtures); i++) {
        char path[512], err[RS_SCENARIO_ERRLEN], expected[RS_SCENARIO_ERRLEN + 512];
        snprintf(path, sizeof path, "%s/tests/sim/scenario/bad/%s.yaml", RS_SOURCE_DIR, fixtures[i]);
        size_t len = 0;
        char *text = read_all(path, &len);
        if (text == NULL)
            fail_msg("%s: cannot read", path);
        if (strncmp(text, "# expect: ", 10) != 0)
            fail_msg("%s: the first line must be '# expect: LINE: KEY: PROBLEM'", path);
        char *nl = strchr(text, '\n');
        snprintf(expected, sizeof expected, "%s:%.*s", path, (int)(nl ? nl - text - 10 : (long)len - 10), text + 10);
        free(text);
        rs_scenario sc;
        memset(&sc, 0x5a, sizeof sc);
        assert_int_equal(rs_scenario_load(path, &sc, err, sizeof err), -1);
        assert_string_equal(err, expected);
        assert_null(sc.path); /* left empty on failure */
        assert_null(sc.topo.links);
        rs_scenario_free(&sc);
    }
}

/* workload.training: the model table is read with the scenario, its errors name its own file and
 * line; the library's training scenarios carry the published parameter counts. */
static void test_training(void **state)
{
    (void)state;
    char path[512], err[RS_SCENARIO_ERRLEN], want[RS_SCENARIO_ERRLEN + 512];
    rs_scenario sc;
    library_path(path, sizeof path, "train_resnet50");
    assert_int_equal(rs_scenario_load(path, &sc, err, sizeof err), 0);
    const rs_training *t = &sc.workload.training;
    assert_string_equal(t->model_name, "ResNet-50");
    assert_int_equal(t->tensors_count, 161);
    uint64_t params = 0;
    double backward = 0;
    for (size_t i = 0; i < t->tensors_count; i++) {
        params += t->tensors[i].params;
        backward += t->tensors[i].backward;
    }
    assert_int_equal(params, 25557032);
    assert_true(backward > 0);
    assert_string_equal(t->tensors[160].name, "fc.bias");
    assert_int_equal(t->micro_batch, 32);
    rs_scenario_free(&sc);

    snprintf(path, sizeof path, "%s/tests/sim/scenario/bad/models/zero_params.yaml", RS_SOURCE_DIR);
    char text[1024];
    int n = snprintf(text, sizeof text, "topology: {kind: ring, ranks: 2}\nworkload:\n  training: {model: %s}\n", path);
    assert_int_equal(rs_scenario_load_string(text, (size_t)n, "t.yaml", &sc, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:6: tensors[1].params: 0 (allowed: at least 1 element)", path);
    assert_string_equal(err, want);
    rs_scenario_free(&sc);
}

static void expect_error(const char *text, size_t len, const char *expected_prefix)
{
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    assert_int_equal(rs_scenario_load_string(text, len, "t.yaml", &sc, err, sizeof err), -1);
    if (strncmp(err, expected_prefix, strlen(expected_prefix)) != 0)
        fail_msg("got \"%s\", expected it to start with \"%s\"", err, expected_prefix);
    assert_null(strchr(err, '\n'));
    rs_scenario_free(&sc);
}

/* sizeof, not strlen: a literal may hold a NUL on purpose */
#define EXPECT(literal, prefix) expect_error(literal, sizeof(literal) - 1, prefix)

static void test_hostile_inputs(void **state)
{
    (void)state;
    char err[RS_SCENARIO_ERRLEN];
    rs_scenario sc;

    assert_int_equal(rs_scenario_load("/nonexistent/x.yaml", &sc, err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/x.yaml:0: (file): cannot open: No such file or directory (allowed: a "
                             "readable YAML file)");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/scenarios", RS_SOURCE_DIR);
    assert_int_equal(rs_scenario_load(dir, &sc, err, sizeof err), -1);
    assert_non_null(strstr(err, ":0: (file): is a directory"));
    assert_int_equal(rs_scenario_load(NULL, &sc, err, sizeof err), -1);

    /* a zero-byte file */
    char tmp[] = "/tmp/rs_scenario_XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rs_scenario_load(tmp, &sc, err, sizeof err), -1);
    assert_non_null(strstr(err, ":1: (document): the file is empty"));
    unlink(tmp);

    expect_error(NULL, 0, "t.yaml:1: (document): the file is empty");
    EXPECT("", "t.yaml:1: (document): the file is empty");
    EXPECT("---\n", "t.yaml:2: (document): expected a mapping, got an empty value");
    EXPECT("42", "t.yaml:1: (document): expected a mapping, got a single value");
    EXPECT("topology: {kind: ring, ranks: 4}\nseed: 99999999999999999999999\n",
                 "t.yaml:2: seed: '99999999999999999999999' is out of range");
    EXPECT("topology: {kind: ring, ranks: 4, link: {bandwidth: 1e308 TB/s}}",
                 "t.yaml:1: topology.link.bandwidth: '1e308 TB/s' is too large for a number");
    EXPECT("topology: {kind: ring, ranks: -4}", "t.yaml:1: topology.ranks: '-4' is out of range");
    EXPECT("topology: {kind: ring, ranks: 4.0}", "t.yaml:1: topology.ranks: '4.0' is not a whole number");
    EXPECT("topology: {kind: ring, ranks: }", "t.yaml:1: topology.ranks: has no value");
    EXPECT("topology: {kind: ring, ranks: [4]}", "t.yaml:1: topology.ranks: expected a single value, got a list");
    EXPECT("topology: {kind: ring, ranks: 4, link: {packet: 0.5 B}}",
                 "t.yaml:1: topology.link.packet: '0.5 B' is out of range");
    EXPECT("topology: {kind: ring, ranks: 4, link: {packet: 100.5 B}}",
                 "t.yaml:1: topology.link.packet: '100.5 B' is not a whole number of bytes");
    EXPECT("topology: {kind: ring, ranks: 4, [a]: 1}", "t.yaml:1: topology: a key must be a plain name");
    EXPECT("topology: {kind: ring, ranks: 4}\nfaults: {at: 1 s}", "t.yaml:2: faults: expected a list");
    EXPECT("topology: {kind: ring, ranks: 4}\nworkload: {collectives: []}",
                 "t.yaml:2: workload.collectives: the list is empty");
    EXPECT("topology: {kind: biring, ranks: 2}\nfaults: [{at: 1 s, link: [0], action: down}]",
                 "t.yaml:2: faults[0].link: expected a list of two numbers");
    EXPECT("topology: {kind: ring, ranks: 4, both: true}",
                 "t.yaml:1: topology.both: unknown key (allowed: kind, ranks");
    EXPECT("topology: {kind: torus2d, dims: [300, 300]}",
                 "t.yaml:1: topology.dims: 300 x 300 = 90000 ranks is out of range");
    EXPECT("topology: {kind: switch, ranks: 4}\nfaults: [{at: 1 s, link: [0, 1], action: down}]",
           "t.yaml:2: faults[0].link: kind switch has no link 0 -> 1 (allowed: a rank and the switch");
    EXPECT("topology: {kind: switch, ranks: 4}\nfaults: [{at: 1 s, link: [0, 5], action: down}]",
           "t.yaml:2: faults[0].link: 5 is not a node (allowed: ranks 0 to 3, switches 4 to 4)");
    EXPECT("topology: {kind: switch, ranks: 1}", "t.yaml:1: topology.ranks: '1' is out of range (allowed: a "
           "whole number from 2 to 65536)");
    EXPECT("topology: {kind: links, links: [{from: 0, to: 0}]}", "t.yaml:1: topology.links[0].to: both ends");
    EXPECT("topology: {kind: switch, ranks: 4, nic: {}}",
                 "t.yaml:1: topology.nic: not used by kind switch (allowed with kind: cluster)");
    EXPECT("name: \"\"\ntopology: {kind: server8}", "t.yaml:1: name: is empty");
    EXPECT("topology: {kind: ring, ranks: \"4\\0\"}",
                 "t.yaml:1: topology.ranks: the value contains a NUL character");
    EXPECT("topology: {kind: ring,\0 ranks: 4}", "t.yaml:1: yaml: control characters are not allowed");
    EXPECT("topology: {kind: ring, ranks: 4}\nworkload: {op: \"s\\num\"}",
                 "t.yaml:2: workload.op: 's?um' is not an op");
    EXPECT("a: *x", "t.yaml:1: yaml: found undefined alias");
    /* an alias that contains itself: libyaml builds a cycle; the walker must not follow it */
    static const char cyc[] = "topology: &a {kind: ring, ranks: 2, overrides: [*a]}";
    expect_error(cyc, strlen(cyc), "t.yaml:1: topology.overrides[0].kind: unknown key");
    static const char cyc2[] = "faults: &f [*f]\ntopology: {kind: ring, ranks: 2}";
    expect_error(cyc2, strlen(cyc2), "t.yaml:1: faults[0]: expected a mapping, got a list");

    /* deep nesting, flow and block */
    size_t n = 200000;
    char *deep = malloc(n + 16);
    assert_non_null(deep);
    memcpy(deep, "topology: ", 10);
    memset(deep + 10, '[', n);
    expect_error(deep, n + 10, "t.yaml:1: yaml: nested deeper than 32 levels");
    memset(deep + 10, '{', n);
    expect_error(deep, n + 10, "t.yaml:1: yaml: nested deeper than 32 levels");
    size_t k = 0;
    for (int d = 0; d < 100 && k + 300 < n; d++) {
        memset(deep + k, ' ', (size_t)d);
        k += (size_t)d;
        memcpy(deep + k, "- \n", 3);
        k += 3;
    }
    expect_error(deep, k, "t.yaml:");
    free(deep);

    /* keys far too long: clipped in the message; past 1024 characters libyaml refuses them */
    char *longkey = malloc(20000);
    assert_non_null(longkey);
    memset(longkey, 'k', 20000);
    memcpy(longkey + 1000, ": 1\n", 4);
    expect_error(longkey, 1004, "t.yaml:1: kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: unknown key (allowed: name");
    memset(longkey, 'k', 20000);
    memcpy(longkey + 19990, ": 1\n", 4);
    expect_error(longkey, 19994, "t.yaml:1: yaml: ");
    free(longkey);

    /* binary junk */
    unsigned char junk[4096];
    uint32_t x = 12345;
    for (int seed = 0; seed < 200; seed++) {
        for (size_t i = 0; i < sizeof junk; i++) {
            x = x * 1103515245u + 12345u;
            junk[i] = (unsigned char)(x >> 16);
        }
        if (seed % 2) /* ASCII junk gets past the UTF-8 reader */
            for (size_t i = 0; i < sizeof junk; i++)
                junk[i] = (unsigned char)(" :-[]{}#&*!|>'\"\n\tak,0.9"[junk[i] % 24]);
        rs_scenario s2;
        if (rs_scenario_load_string((const char *)junk, sizeof junk, "junk", &s2, err, sizeof err) == 0)
            rs_scenario_free(&s2);
        else
            assert_null(strchr(err, '\n'));
    }

    /* too big, refused before anything is read */
    expect_error("x", (size_t)RS_SCENARIO_MAX_FILE + 1, "t.yaml:0: (file): larger than");

    /* small or missing message buffers */
    char small[8];
    assert_int_equal(rs_scenario_load_string("[1]", 3, "t.yaml", &sc, small, sizeof small), -1);
    assert_string_equal(small, "t.yaml:");
    assert_int_equal(rs_scenario_load_string("[1]", 3, "t.yaml", &sc, NULL, 0), -1);
    rs_scenario_free(NULL);
}

static void test_links(void **state)
{
    (void)state;
    rs_topology_spec t;
    memset(&t, 0, sizeof t);
    t.kind = RS_TOPO_SERVER8;
    t.nranks = 8;
    assert_true(rs_scenario_link_exists(&t, 0, 4));
    assert_true(rs_scenario_link_exists(&t, 7, 3));
    assert_true(rs_scenario_link_exists(&t, 0, 3));
    assert_true(rs_scenario_link_exists(&t, 5, 6));
    assert_false(rs_scenario_link_exists(&t, 1, 6));
    assert_false(rs_scenario_link_exists(&t, 2, 2));
    assert_false(rs_scenario_link_exists(&t, 0, 8));
    assert_int_equal(rs_scenario_link_count(&t), 32);

    t.kind = RS_TOPO_RING;
    t.nranks = 4;
    assert_true(rs_scenario_link_exists(&t, 3, 0));
    assert_false(rs_scenario_link_exists(&t, 0, 3));
    t.kind = RS_TOPO_BIRING;
    assert_true(rs_scenario_link_exists(&t, 0, 3));
    assert_false(rs_scenario_link_exists(&t, 0, 2));
    assert_int_equal(rs_scenario_link_count(&t), 8);

    t.kind = RS_TOPO_TORUS2D;
    t.dims[0] = 3;
    t.dims[1] = 4;
    t.nranks = 12;
    assert_true(rs_scenario_link_exists(&t, 5, 4));
    assert_true(rs_scenario_link_exists(&t, 5, 6));
    assert_true(rs_scenario_link_exists(&t, 5, 1));
    assert_true(rs_scenario_link_exists(&t, 5, 9));
    assert_true(rs_scenario_link_exists(&t, 4, 7)); /* row wrap */
    assert_true(rs_scenario_link_exists(&t, 1, 9)); /* column wrap */
    assert_false(rs_scenario_link_exists(&t, 5, 7));
    assert_false(rs_scenario_link_exists(&t, 5, 10));
    assert_int_equal(rs_scenario_link_count(&t), 12 * 4);
    t.dims[0] = 2;
    t.nranks = 8;
    assert_int_equal(rs_scenario_link_count(&t), 8 * 3);

    t.kind = RS_TOPO_CLUSTER;
    t.servers = 2;
    t.nranks = 16;
    assert_true(rs_scenario_link_exists(&t, 8, 12));
    assert_true(rs_scenario_link_exists(&t, 9, 10));
    assert_false(rs_scenario_link_exists(&t, 0, 8));
    assert_int_equal(rs_scenario_link_count(&t), 2 * 32 + 2 * 16);

    /* switches are nodes after the ranks */
    assert_true(rs_scenario_link_exists(&t, 3, 16));
    assert_true(rs_scenario_link_exists(&t, 16, 15));
    assert_false(rs_scenario_link_exists(&t, 16, 17));
    t.kind = RS_TOPO_SWITCH;
    assert_int_equal(rs_scenario_switch_count(&t), 1);
    assert_false(rs_scenario_link_exists(&t, 0, 1));
    assert_true(rs_scenario_link_exists(&t, 0, 16));
    assert_true(rs_scenario_link_exists(&t, 16, 0));
    t.kind = RS_TOPO_FAT_TREE; /* 16 ranks, leaves 16..19 (4 ranks each), spines 20..21 */
    t.per_leaf = 4;
    t.spines = 2;
    assert_int_equal(rs_scenario_switch_count(&t), 6);
    assert_true(rs_scenario_link_exists(&t, 5, 17));
    assert_false(rs_scenario_link_exists(&t, 5, 16));
    assert_true(rs_scenario_link_exists(&t, 19, 21));
    assert_true(rs_scenario_link_exists(&t, 20, 16));
    assert_false(rs_scenario_link_exists(&t, 16, 17));
    assert_false(rs_scenario_link_exists(&t, 20, 21));
    assert_false(rs_scenario_link_exists(&t, 5, 20));
    assert_false(rs_scenario_link_exists(&t, 5, 22));
    t.kind = RS_TOPO_FULL_MESH;
    assert_true(rs_scenario_link_exists(&t, 0, 15));
    assert_int_equal(rs_scenario_link_count(&t), 16 * 15);
}

/* ---- what `ringsim validate` prints (its flags are sim/cli/cmd_validate.c's) ------------------ */

static char *capture(void (*write)(const void *arg, FILE *f), const void *arg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    write(arg, f);
    fclose(f);
    return text;
}

static void write_dump(const void *arg, FILE *f) { assert_int_equal(rs_scenario_dump(arg, f), 0); }
static void write_keys(const void *arg, FILE *f)
{
    (void)arg;
    rs_scenario_print_keys(f);
}

static void test_validate_output(void **state)
{
    (void)state;
    char good[512], err[RS_SCENARIO_ERRLEN], summary[256];
    library_path(good, sizeof good, "default");
    rs_scenario sc;
    if (rs_scenario_load(good, &sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    rs_scenario_summary(&sc, summary, sizeof summary);
    assert_string_equal(summary, "server8, 8 ranks, 32 links, allreduce+broadcast float sum, 8 B..64 MiB x2 (24 sizes), "
                                 "payload real, message fidelity");

    /* -v: the resolved scenario, every default filled in */
    char *out = capture(write_dump, &sc);
    assert_non_null(strstr(out, "\ntopology:\n  kind: server8\n  ranks: 8\n  link: {bandwidth: 30 GB/s, latency: "
                                "1.5 us, packet: 4 KiB, header: 64 B, buffer: 256 KiB}\n"));
    free(out);
    rs_scenario_free(&sc);

    /* --keys: the reference generated from the tables */
    out = capture(write_keys, NULL);
    assert_non_null(strstr(out, "### `topology.link`"));
    assert_non_null(strstr(out, "| `bandwidth` | bandwidth | `30 GB/s` |"));
    free(out);
}

/* ---- truncation and mutation (also run under AddressSanitizer: label firmware) ----------------- */

static unsigned long g_no_hint; /* refusals whose message has no "(allowed: ...)" */

static unsigned long try_load(const char *text, size_t len)
{
    /* an exact-size heap copy, so a read past `len` is an ASan error, not a lucky NUL */
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    rs_scenario sc;
    char err[RS_SCENARIO_ERRLEN];
    int rc = rs_scenario_load_string(copy, len, "cut.yaml", &sc, err, sizeof err);
    free(copy);
    if (rc == 0) {
        assert_non_null(sc.name);
        rs_scenario_free(&sc);
        return 1;
    }
    assert_int_equal(rc, -1);
    if (strncmp(err, "cut.yaml:", 9) != 0 || strchr(err, '\n') != NULL)
        fail_msg("bad message: \"%s\"", err);
    if (!strstr(err, "(allowed: ") && g_no_hint++ < 5)
        print_message("no hint: %s\n", err);
    return 0;
}

static void test_truncate_and_mutate(void **state)
{
    (void)state;
    static const char marks[] = {':', '[', '{', '-', '\n', '&', '*', '"', '\xff', '9'};
    unsigned long loads = 0, ok = 0;
    for (size_t i = 0; i < COUNT(library); i++) {
        char path[512];
        library_path(path, sizeof path, library[i]);
        size_t len = 0;
        char *text = read_all(path, &len);
        assert_non_null(text);
        for (size_t cut = 0; cut <= len; cut++, loads++)
            ok += try_load(text, cut);
        char *m = malloc(len);
        assert_non_null(m);
        /* RINGSIM_MATRIX=quick (the sanitizer pass, ~10x slower): the marks at every third byte,
         * each cut still everywhere; the Release pass marks every byte */
        const char *mode = getenv("RINGSIM_MATRIX");
        const size_t step = mode && !strcmp(mode, "quick") ? 3 : 1;
        for (size_t at = 0; at < len; at += step)
            for (size_t k = 0; k < COUNT(marks); k++, loads++) {
                memcpy(m, text, len);
                m[at] = marks[k];
                ok += try_load(m, len);
            }
        free(m);
        free(text);
    }
    print_message("%lu loads, %lu of them valid scenarios, %lu refusals without an allowed hint\n", loads, ok,
                  g_no_hint);
    assert_true(ok > 0 && ok < loads);
    assert_int_equal(g_no_hint, 0); /* every refusal says what is allowed (issue 19: 9 % did not) */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "truncate") == 0) {
        const struct CMUnitTest fuzz[] = {cmocka_unit_test(test_truncate_and_mutate)};
        return cmocka_run_group_tests_name("scenario_truncate", fuzz, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_good),     cmocka_unit_test(test_units_bad),
        cmocka_unit_test(test_units_format),   cmocka_unit_test(test_library_loads),
        cmocka_unit_test(test_library_values), cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_bad_fixtures),   cmocka_unit_test(test_hostile_inputs),
        cmocka_unit_test(test_links),          cmocka_unit_test(test_validate_output),
        cmocka_unit_test(test_readme_examples), cmocka_unit_test(test_training),
        cmocka_unit_test(test_corrupt_faults), cmocka_unit_test(test_linear_sweep_and_switches),
    };
    return cmocka_run_group_tests_name("scenario", tests, NULL, NULL);
}
