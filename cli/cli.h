/* cli/cli.h: what the files of the `sluice` command share.
 *
 * sluice.c dispatches to one function per command (ops.c, run.c, graph.c); spec.c reads a
 * JSON spec for run and graph. The command uses only the public API of libsluice. Exit status: 0
 * success, 1 failure (a bad spec, a build error, a failed iteration), 2 bad usage.
 */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stdio.h>

#include "sluice/sluice.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* `sluice ops [--markdown] [NAME]`: argv holds what follows "ops".
 * Returns: the exit status. */
int cli_ops(int argc, char **argv);
/* `sluice run SPEC.json [options]`: argv holds what follows "run". Returns: the exit status. */
int cli_run(int argc, char **argv);
/* `sluice graph SPEC.json [-o FILE]`: argv holds what follows "graph". Returns: the exit
 * status. */
int cli_graph(int argc, char **argv);
/* sluice tfrecord-index FILE INDEX (index.c). */
int cli_tfrecord_index(int argc, char **argv);
/* sluice wds-index TAR INDEX (index.c). */
int cli_wds_index(int argc, char **argv);
int cli_rec_index(int argc, char **argv);
/* Reads the JSON spec at path ("-": standard input): its graph into *g (owned:
 * sl_graph_destroy; NULL on failure) and its "pipeline" object into *o over the defaults.
 * Returns: CLI_OK, or CLI_FAIL after a message on stderr naming the file. */
int cli_spec_load(const char *path, sl_graph **g, sl_pipeline_options *o);
/* Writes the usage text (every command and option) to f. */
void cli_usage(FILE *f);
/* Reads a whole file ("-": standard input). Returns: malloc'd text, NULL after a message on
 * stderr. */
char *cli_read_file(const char *path);

#endif
