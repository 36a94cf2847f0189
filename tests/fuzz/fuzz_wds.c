/* tests/fuzz/fuzz_wds.c: fuzz target "wds": tar headers as readers.webdataset and
 * sl_wds_index walk them (docs/fuzzing.md).
 *
 * Input: the tar archive's bytes, written to TAR in a private temporary folder.
 * Checks:
 * - sl_wds_index succeeds, or fails with SL_ECORRUPT / SL_ENOTFOUND and a message naming the
 *   file;
 * - readers.webdataset (ext ["a", "b;c"], missing_component_behavior "empty") over the archive
 *   builds exactly when indexing succeeded (or failed only for white space in a member name,
 *   which the index format cannot hold), and then over the index too, with the same epoch
 *   size as the index's sample count;
 * - up to 3 runs of each keep fz_run's contract, outputs uint8 1-D; the first sample read
 *   through the index equals the one read through the headers.
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"

static char root[64]; /* made once, removed at exit */
static bool made;
static char tar_path[sizeof root + 16], index_path[sizeof root + 16];

static sl_graph *graphs[2]; /* the reader's graphs (the_graph), made once */

static void remove_root(void)
{
    sl_graph_destroy(graphs[0]);
    sl_graph_destroy(graphs[1]);
    unlink(tar_path);
    unlink(index_path);
    rmdir(root);
}

static void make_root(void)
{
    made = true;
    fz_mkdtemp(root, sizeof root, "sluice-fuzz-wds-XXXXXX");
    snprintf(tar_path, sizeof tar_path, "%s/f.tar", root);
    snprintf(index_path, sizeof index_path, "%s/f.idx", root);
    atexit(remove_root);
}

/* The reader's graph over the headers or over the index: the same for every input (the paths
 * do not change), so each is made once and kept; each pipeline copies it. */
static sl_graph *the_graph(bool with_index)
{
    sl_graph *g = graphs[with_index];
    if (g)
        return g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "readers.webdataset", "r", NULL), "add r");
    fz_check(sl_graph_arg_str(g, "r", "paths", tar_path), "paths");
    if (with_index)
        fz_check(sl_graph_arg_str(g, "r", "index_paths", index_path), "index_paths");
    fz_check(sl_graph_arg_json(g, "r", "ext", "[\"a\", \"b;c\"]"), "ext");
    fz_check(sl_graph_output(g, "r:0"), "output");
    fz_check(sl_graph_output(g, "r:1"), "output");
    return graphs[with_index] = g;
}

static sl_pipeline *make(bool with_index, sl_status *st)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    o.max_sample_bytes = 1 << 20;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(the_graph(with_index), &o, &p), "sl_pipeline_create");
    *st = sl_pipeline_build(p);
    return p;
}

static void check_sample(sl_pipeline *p)
{
    for (int k = 0; k < 2; k++) {
        const sl_batch *b = sl_pipeline_output(p, k);
        if (sl_batch_dtype(b) != SL_DTYPE_UINT8 || sl_batch_ndim(b) != 1)
            fz_fail("output %d: dtype %s, %d-D", k, sl_dtype_name(sl_batch_dtype(b)),
                    sl_batch_ndim(b));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!made)
        make_root();
    FILE *f = fopen(tar_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fz_fail("cannot write %s", tar_path);
    int64_t n = 0;
    sl_status s = sl_wds_index(tar_path, index_path, &n);
    if (s != SL_OK &&
        ((s != SL_ECORRUPT && s != SL_ENOTFOUND) || !strstr(sl_last_error(), tar_path)))
        fz_fail("sl_wds_index failed with %s: %s", sl_status_name(s), sl_last_error());
    sl_status b;
    sl_pipeline *p = make(false, &b);
    bool white = s == SL_ECORRUPT && strstr(sl_last_error(), "white space");
    if ((b == SL_OK) != (s == SL_OK || white))
        fz_fail("the index %s (%s) but the reader's build %s: %s", s ? "failed" : "succeeded",
                s ? sl_last_error() : "", b ? "failed" : "succeeded", sl_pipeline_error(p));
    if (b != SL_OK) {
        if (b != SL_ECORRUPT && b != SL_ENOTFOUND)
            fz_fail("build failed with %s: %s", sl_status_name(b), sl_pipeline_error(p));
        sl_pipeline_destroy(p);
        return 0;
    }
    if (white) { /* the headers alone: the contract of each run */
        for (int it = 0; it < 3; it++)
            if (fz_run(p) == SL_OK)
                check_sample(p);
        sl_pipeline_destroy(p);
        return 0;
    }
    if (sl_pipeline_epoch_size(p, "r") != n)
        fz_fail("epoch of %lld samples, the index has %lld",
                (long long)sl_pipeline_epoch_size(p, "r"), (long long)n);
    sl_pipeline *q = make(true, &b);
    if (b != SL_OK || sl_pipeline_epoch_size(q, "r") != n)
        fz_fail("the reader over the index: %s", sl_pipeline_error(q));
    sl_status r1 = fz_run(p), r2 = fz_run(q);
    if (r1 == SL_OK && r2 == SL_OK) {
        check_sample(p);
        for (int k = 0; k < 2; k++) {
            const char *why = NULL;
            if (!fz_sample_equal(sl_pipeline_output(p, k), 0, sl_pipeline_output(q, k), 0, &why))
                fz_fail("output %d differs between headers and index: %s", k, why);
        }
    }
    for (int it = 1; it < 3; it++) {
        if (fz_run(p) == SL_OK)
            check_sample(p);
        if (fz_run(q) == SL_OK)
            check_sample(q);
    }
    sl_pipeline_destroy(q);
    sl_pipeline_destroy(p);
    return 0; /* the next input's sl_wds_index replaces (or removes) the index */
}
