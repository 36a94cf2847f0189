/* tests/fuzz/fuzz_spec.c: fuzz target "spec": the JSON pipeline spec (`sluice run`'s input) read
 * with sl_graph_from_json and sl_pipeline_options_from_json, written back, drawn as DOT and
 * built (docs/fuzzing.md).
 *
 * Input: the spec's text (a NUL ends it early, as it would for a C caller).
 * Checks, for a spec that parses:
 * - sl_graph_to_json writes it, the text reads back, and writing that again gives the same text
 *   (the round trip include/sluice/graph.h promises);
 * - with options that parse, sl_pipeline_write_dot draws the plan before the build (it reads no
 *   file and starts no thread): its strings balance their quotes, and drawing again, after the
 *   build too, gives the same text (pipeline.h: the text depends on the graph and the options
 *   alone); when it fails, the build fails with the same code and message;
 * - the graph is built: success, or a failure with a message and a code that is not
 *   SL_EINTERNAL or SL_EMISUSE (a build never runs an iteration here, so a spec needs no data).
 *   Options are bounded first so that building stays cheap: num_threads <= 2, batch_size <= 8,
 *   every queue depth <= 2, device_id -1 (values <= 0 are kept: they must be refused with a
 *   message, or mean what they document: num_threads 0 runs the tasks on the caller, -1 and
 *   a depth of 0 are "auto"). Graphs with a reader (readers.*) are drawn but not built: their
 * arguments name files and folders anywhere (file_root "/" would list the whole disk); the
 * file_list target fuzzes the reader's own parsing. A spec that fails to parse must say why
 * (sl_last_error) with a code other than SL_EINTERNAL.
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"

static void bad_code(sl_status s, const char *what, const char *msg)
{
    if (s == SL_EINTERNAL || s == SL_EMISUSE)
        fz_fail("%s failed with %s: %s", what, sl_status_name(s), msg);
    if (!msg || !*msg)
        fz_fail("%s failed with %s and no message", what, sl_status_name(s));
}

static void bound(int *v, int max)
{
    if (*v > max)
        *v = max;
}

/* Writes g, reads the text back, writes again: the same text. Returns the first text (free). */
static char *round_trip(const sl_graph *g)
{
    char *t1 = NULL, *t2 = NULL;
    sl_graph *g2 = NULL;
    if (sl_graph_to_json(g, &t1) != SL_OK)
        fz_fail("sl_graph_to_json failed on a graph read from JSON: %s", sl_last_error());
    if (sl_graph_from_json(t1, &g2) != SL_OK)
        fz_fail("the written spec does not read back: %s\n%s", sl_last_error(), t1);
    if (sl_graph_to_json(g2, &t2) != SL_OK)
        fz_fail("sl_graph_to_json failed on its own spec read back: %s", sl_last_error());
    if (strcmp(t1, t2) != 0)
        fz_fail("written, read back and written again, the spec changed:\n%s\n---\n%s", t1, t2);
    free(t2);
    sl_graph_destroy(g2);
    return t1;
}

/* The pipeline's DOT picture (sl_pipeline_write_dot), malloc'ed in *dot; the status. */
static sl_status dot_of(const sl_pipeline *p, char **dot)
{
    size_t n;
    *dot = NULL;
    FILE *f = open_memstream(dot, &n);
    if (!f)
        fz_fail("open_memstream failed");
    sl_status s = sl_pipeline_write_dot(p, f);
    if (fclose(f) != 0)
        fz_fail("open_memstream: writing failed");
    return s;
}

/* DOT quotes every name: an unescaped '"' left unpaired (a name's own quote or a trailing
 * backslash written as they are) would end a string early. */
static void check_quotes(const char *dot)
{
    int quotes = 0;
    for (const char *c = dot; *c; c++) {
        if (*c == '\\' && c[1])
            c++;
        else if (*c == '"')
            quotes++;
    }
    if (quotes % 2)
        fz_fail("sl_pipeline_write_dot wrote an odd number of quotes:\n%s", dot);
}

/* Options as the spec gives them, bounded; the DOT picture before the build (which must not
 * depend on anything but the graph and the options, nor differ from the built pipeline's) and,
 * when `run_build`, the build (which must fail with the picture's error when that failed). */
static void build(const sl_graph *g, const char *text, bool run_build)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    sl_status s = sl_pipeline_options_from_json(text, &o);
    if (s != SL_OK) {
        bad_code(s, "sl_pipeline_options_from_json", sl_last_error());
        return;
    }
    bound(&o.num_threads, 2);
    bound(&o.batch_size, 8);
    bound(&o.prefetch_queue_depth, 2);
    bound(&o.cpu_queue_depth, 2);
    bound(&o.gpu_queue_depth, 2);
    o.device_id = -1;
    sl_pipeline *p = NULL;
    s = sl_pipeline_create(g, &o, &p);
    if (s != SL_OK) {
        bad_code(s, "sl_pipeline_create", sl_last_error());
        return;
    }
    char *dot = NULL, *again = NULL, *dot_error = NULL;
    sl_status sd = dot_of(p, &dot);
    if (sd != SL_OK) {
        bad_code(sd, "sl_pipeline_write_dot", sl_pipeline_error(p));
        dot_error = strdup(sl_pipeline_error(p));
    } else {
        check_quotes(dot);
    }
    if (run_build) {
        s = sl_pipeline_build(p);
        if (s != SL_OK)
            bad_code(s, "sl_pipeline_build", sl_pipeline_error(p));
        if (sd != SL_OK && (s != sd || strcmp(sl_pipeline_error(p), dot_error) != 0))
            fz_fail("sl_pipeline_write_dot failed with %s (%s), the build %s (%s)",
                    sl_status_name(sd), dot_error, sl_status_name(s), sl_pipeline_error(p));
    }
    if (sd == SL_OK && (dot_of(p, &again) != SL_OK || strcmp(dot, again) != 0))
        fz_fail("sl_pipeline_write_dot wrote another picture the second time%s:\n%s\n---\n%s",
                run_build ? ", after the build" : "", dot, again ? again : "(failed)");
    free(again);
    free(dot);
    free(dot_error);
    sl_pipeline_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    sl_graph *g = NULL;
    sl_status s = sl_graph_from_json(text, &g);
    if (s != SL_OK) {
        bad_code(s, "sl_graph_from_json", sl_last_error());
        free(text);
        return 0;
    }
    char *written = round_trip(g);
    build(g, text, !strstr(written, "\"readers."));
    free(written);
    sl_graph_destroy(g);
    free(text);
    return 0;
}
