/* rs_cmd.h — the program's commands: each takes the arguments after its name, prints on stdout
 * and stderr, and returns the exit status (RS_EXIT_*). main.c's table dispatches to them. */
#ifndef RS_CMD_H
#define RS_CMD_H

#include <stdio.h>

#include "sweep/rs_sweep.h"

int rs_cmd_run(int argc, char **argv);
/** `ringsim run SCENARIO` with argv the options after the scenario (compare runs it too). */
int rs_cmd_run_scenario(const char *path, int argc, char **argv);
int rs_cmd_compare(int argc, char **argv);
void rs_cmd_compare_usage(FILE *out);
int rs_cmd_plan(int argc, char **argv);
void rs_cmd_plan_usage(FILE *out);
int rs_cmd_train(int argc, char **argv);
void rs_cmd_train_usage(FILE *out);
/** `ringsim validate [-v] [--keys] FILE...`: 0 when every file is valid, 2 otherwise. */
int rs_cmd_validate(int argc, char **argv);
void rs_cmd_validate_usage(FILE *out);
int rs_cmd_agent(int argc, char **argv);
void rs_cmd_agent_usage(FILE *out);
int rs_cmd_bringup(int argc, char **argv);
void rs_cmd_bringup_usage(FILE *out);
/** `ringsim measured FILE... [--collective NAME] [--ranks N] [--json OUT]`: 0 when every file
 *  reads, 2 on bad usage or a file refused (FILE:LINE: on stderr). */
int rs_cmd_measured(int argc, char **argv);
void rs_cmd_measured_usage(FILE *out);
/** `ringsim calibrate MACHINE MEASURED... [--fit KEYS] [--pin KEY=VALUE] [--hold-out SPEC] [--out FILE]
 *  [--json FILE]`: 0 when fitted and written, 2 on bad usage or input, else a simulation's status. */
int rs_cmd_calibrate(int argc, char **argv);
void rs_cmd_calibrate_usage(FILE *out);
/** `ringsim sweep GRID.yaml [--jobs N] [--out DIR] [--force] [--timeout SEC] [--plot FILE] [--merge]`:
 *  0 when every point ran OK, 1 when one failed (or is missing), 2 on a bad grid file or usage. */
int rs_cmd_sweep(int argc, char **argv);
void rs_cmd_sweep_usage(FILE *out);

#endif
