/* test_ranktable.c — rank tables: YAML and JSON files, every error as file:line: field: problem, launcher environments. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zmq/rs_ranktable.h"

static int load(const char *text, rs_ranktable *t, char *err)
{
    return rs_ranktable_load_string(text, strlen(text), "t.yaml", t, err, RS_RT_ERRLEN);
}

static void test_yaml_ok(void **state)
{
    (void)state;
    rs_ranktable t;
    char err[RS_RT_ERRLEN];
    const char *y = "job: bringup\n"
                    "ranks:\n"
                    "  - {rank: 1, host: b, endpoint: 'tcp://b:7001'}\n"
                    "  - rank: 0\n"
                    "    host: a\n"
                    "    endpoint: tcp://a:7000\n"
                    "    control: tcp://a:9000\n"
                    "  - {rank: 2, endpoint: 'ipc://@x-2'}\n";
    if (load(y, &t, err))
        fail_msg("%s", err);
    assert_int_equal(t.nranks, 3);
    assert_string_equal(t.job, "bringup");
    assert_string_equal(t.e[0].endpoint, "tcp://a:7000");
    assert_string_equal(t.e[0].control, "tcp://a:9000");
    assert_string_equal(t.e[1].control, "tcp://b:8001"); /* derived: port + 1000 */
    assert_string_equal(t.e[1].host, "b");
    assert_string_equal(t.e[2].control, "ipc://@x-2-ctl");
    assert_int_equal(t.e[0].line, 4);
    rs_ranktable_free(&t);
}

static void test_json_ok(void **state)
{
    (void)state;
    rs_ranktable t;
    char err[RS_RT_ERRLEN];
    const char *j = "[{\"rank\": 0, \"host\": \"n0\", \"endpoint\": \"tcp://10.0.0.1:5555\"},\n"
                    " {\"rank\": 1, \"host\": \"n1\", \"endpoint\": \"tcp://10.0.0.2:5555\"}]\n";
    if (load(j, &t, err))
        fail_msg("%s", err);
    assert_int_equal(t.nranks, 2);
    assert_string_equal(t.e[1].endpoint, "tcp://10.0.0.2:5555");
    assert_string_equal(t.e[1].control, "tcp://10.0.0.2:6555");
    rs_ranktable_free(&t);
}

typedef struct bad_case {
    const char *text, *expect;
} bad_case;

static void test_errors(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"ranks:\n  - {rank: 0, endpoint: 'tcp://a:1', port: 3}\n",
         "t.yaml:2: ranks[0].port: unknown key (allowed: rank, host, endpoint, control)"},
        {"ranks:\n  - {rank: 0}\n", "t.yaml:2: ranks[0]: missing endpoint (allowed keys: rank, host, endpoint, control)"},
        {"ranks:\n  - {endpoint: 'ipc://@a'}\n", "t.yaml:2: ranks[0]: missing rank"},
        {"ranks:\n  - {rank: 0, endpoint: 'ipc://@a'}\n  - {rank: 0, endpoint: 'ipc://@b'}\n",
         "t.yaml:3: ranks[1]: rank 0 is listed twice (first on line 2)"},
        {"ranks:\n  - {rank: 0, endpoint: 'ipc://@a'}\n  - {rank: 2, endpoint: 'ipc://@b'}\n",
         "t.yaml:3: ranks[1].rank: 2 is out of range (allowed: 0..1 for 2 entries)"},
        {"ranks:\n  - {rank: x, endpoint: 'ipc://@a'}\n", "t.yaml:2: ranks[0].rank: 'x' is not an integer (allowed: 0..0)"},
        {"ranks:\n  - {rank: 0, endpoint: 'udp://a:1'}\n",
         "t.yaml:2: ranks[0].endpoint: 'udp://a:1' is not an endpoint ringsim uses (allowed: ipc://@NAME, ipc:///PATH, "
         "tcp://HOST:PORT)"},
        {"ranks:\n  - {rank: 0, endpoint: 'tcp://a:99999'}\n",
         "t.yaml:2: ranks[0].endpoint: 'tcp://a:99999' is not tcp://HOST:PORT with a port 1..65535"},
        {"ranks:\n  - {rank: 0, endpoint: 'ipc:///tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}\n",
         "t.yaml:2: ranks[0].endpoint: ipc path of 138 characters is longer than 107"},
        {"ranks:\n  - {rank: 0, endpoint: 'ipc://@a'}\n  - {rank: 1, endpoint: 'ipc://@a'}\n",
         "t.yaml:3: rank 1: endpoint ipc://@a is also used by rank 0 (line 2)"},
        {"ranks:\n  - {rank: 0, endpoint: 'tcp://a:65000'}\n",
         "t.yaml:2: ranks[0]: cannot derive a control port from 'tcp://a:65000' (port + 1000 > 65535)"},
        {"rank:\n  - {rank: 0, endpoint: 'ipc://@a'}\n", "t.yaml:1: rank: unknown key (allowed: ranks, job)"},
        {"ranks: []\n", "t.yaml:1: ranks: is empty"},
        {"ranks: 3\n", "t.yaml:1: ranks: must be a list"},
        {"ranks:\n  - [0, 'ipc://@a']\n", "t.yaml:2: ranks[0]: must be a mapping"},
        {"ranks: [\n", "t.yaml:2: yaml: "},
        {"", "t.yaml:1: (file): empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rs_ranktable t;
        char err[RS_RT_ERRLEN] = "";
        if (load(cases[i].text, &t, err) == 0)
            fail_msg("case %zu accepted", i);
        if (strncmp(err, cases[i].expect, strlen(cases[i].expect)) != 0)
            fail_msg("case %zu:\n  got  %s\n  want %s", i, err, cases[i].expect);
        assert_null(t.e);
    }
}

static void test_file(void **state)
{
    (void)state;
    rs_ranktable t;
    char err[RS_RT_ERRLEN];
    assert_int_equal(rs_ranktable_load("/nonexistent/ranks.yaml", &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/ranks.yaml:0: (file): cannot read: No such file"));
}

static void clear_env(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                                       "SLURM_PROCID", "SLURM_NTASKS", "RINGSIM_ZMQ_BASE", "RINGSIM_JOB",
                                       "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void test_env(void **state)
{
    (void)state;
    rs_ranktable t;
    char err[RS_RT_ERRLEN];
    int me = -1;
    clear_env();
    assert_int_equal(rs_ranktable_from_env(NULL, NULL, &t, &me, err, sizeof err), 1);
    assert_non_null(strstr(err, "OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS"));

    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("RINGSIM_JOB", "j7", 1);
    assert_int_equal(rs_ranktable_from_env(NULL, NULL, &t, &me, err, sizeof err), 0);
    assert_int_equal(me, 2);
    assert_int_equal(t.nranks, 4);
    assert_string_equal(t.e[3].endpoint, "ipc://@ringsim-j7-3");
    assert_string_equal(t.e[3].control, "ipc://@ringsim-j7-3-ctl");
    rs_ranktable_free(&t);

    clear_env();
    setenv("SLURM_PROCID", "5", 1);
    setenv("SLURM_NTASKS", "6", 1);
    setenv("RINGSIM_ZMQ_BASE", "tcp://n0,n1:7000", 1);
    assert_int_equal(rs_ranktable_from_env(NULL, NULL, &t, &me, err, sizeof err), 0);
    assert_int_equal(me, 5);
    assert_string_equal(t.e[0].endpoint, "tcp://n0:7000");
    assert_string_equal(t.e[2].endpoint, "tcp://n0:7002");
    assert_string_equal(t.e[3].endpoint, "tcp://n1:7000");
    assert_string_equal(t.e[5].endpoint, "tcp://n1:7002");
    assert_string_equal(t.e[5].control, "tcp://n1:8002");
    assert_string_equal(t.e[5].host, "n1");
    rs_ranktable_free(&t);

    clear_env();
    setenv("PMI_RANK", "9", 1);
    setenv("PMI_SIZE", "4", 1);
    assert_int_equal(rs_ranktable_from_env(NULL, NULL, &t, &me, err, sizeof err), -1);
    assert_non_null(strstr(err, "PMI_RANK='9' is not an integer in 0..3"));
    setenv("PMI_RANK", "1", 1);
    setenv("RINGSIM_ZMQ_BASE", "udp://x:1", 1);
    assert_int_equal(rs_ranktable_from_env(NULL, NULL, &t, &me, err, sizeof err), -1);
    assert_non_null(strstr(err, "RINGSIM_ZMQ_BASE: 'udp://x:1'"));
    clear_env();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_ok), cmocka_unit_test(test_json_ok), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_file),    cmocka_unit_test(test_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
