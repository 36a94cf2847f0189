/* cli/spec.c: reading a JSON pipeline spec, what `sluice run` and `sluice graph` share.
 *
 * Exports cli_spec_load: the file (or standard input) read whole, its graph and its "pipeline"
 * object parsed through the library (sl_graph_from_json, sl_pipeline_options_from_json), so
 * every command reads a spec by the same rules and reports a bad one in the same words.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/sluice.h"

#include "cli.h"

/* Reads a whole file ("-": standard input). Returns: malloc'd text, NULL after a message. */
char *cli_read_file(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    size_t n = 0, cap = 1 << 14;
    char *buf = f ? malloc(cap) : NULL;
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n + 1 < cap)
            break;
        char *bigger = realloc(buf, cap *= 2);
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    if (!f || !buf || ferror(f)) {
        fprintf(stderr, "sluice: cannot read \"%s\": %s\n", path,
                f && !buf ? "out of memory" : strerror(errno));
        free(buf);
        buf = NULL;
    } else {
        buf[n] = '\0';
    }
    if (f && f != stdin)
        fclose(f);
    return buf;
}

int cli_spec_load(const char *path, sl_graph **g, sl_pipeline_options *o)
{
    *g = NULL;
    char *text = cli_read_file(path);
    if (!text)
        return CLI_FAIL;
    sl_pipeline_options_init(o);
    int rc = CLI_OK;
    if (sl_graph_from_json(text, g) != SL_OK || sl_pipeline_options_from_json(text, o) != SL_OK) {
        fprintf(stderr, "sluice: %s: %s\n", path, sl_last_error());
        rc = CLI_FAIL;
    }
    free(text);
    return rc;
}
