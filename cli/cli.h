/* cli/cli.h: what the files of the `sluice` command share.
 *
 * sluice.c dispatches to one function per command (ops.c, run.c). The command uses only the
 * public API of libsluice. Exit status: 0 success, 1 failure (a bad spec, a build error, a
 * failed iteration), 2 bad usage.
 */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* `sluice ops [--markdown] [NAME]`: argv holds what follows "ops".
 * Returns: the exit status. */
int cli_ops(int argc, char **argv);
/* `sluice run SPEC.json [options]`: argv holds what follows "run". Returns: the exit status. */
int cli_run(int argc, char **argv);
/* Writes the usage text (every command and option) to f. */
void cli_usage(FILE *f);

#endif
