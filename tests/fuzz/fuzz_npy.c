/* tests/fuzz/fuzz_npy.c: fuzz target "npy": a .npy file read by readers.numpy (its header
 * parser, src/ops/readers/npy.c, and the region reads behind it; docs/fuzzing.md).
 *
 * Input: the file's bytes, written to x.npy in a private temporary folder; the reader gets
 * files = [that path]. Inputs of odd length also ask for a region of interest: roi_start [1],
 * roi_shape [2] on axis 0 with out_of_bounds_policy "pad" and fill_value 7, which reads a box
 * clipped to the array and pads around it (rank 0 arrays fail: there is no axis 0).
 * max_sample_bytes is 16 MiB, so a header announcing a huge padded region fails before any
 * allocation.
 * Checks:
 * - the build succeeds (files mode reads nothing at build);
 * - each of 2 iterations keeps fz_run's contract (SL_OK, or a message and a code blaming the
 *   input); a successful sample holds no more bytes than the file (without ROI) and its dtype
 *   is one readers.numpy documents;
 * - a second pipeline over the same file gives the same sample (a function of the bytes).
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
static char path[sizeof root + 8];

static sl_graph *graphs[2]; /* the reader's graphs (the_graph), made once */

static void remove_root(void)
{
    sl_graph_destroy(graphs[0]);
    sl_graph_destroy(graphs[1]);
    unlink(path);
    rmdir(root);
}

static void write_input(const uint8_t *data, size_t size)
{
    if (!made) {
        made = true;
        fz_mkdtemp(root, sizeof root, "sluice-fuzz-npy-XXXXXX");
        snprintf(path, sizeof path, "%s/x.npy", root);
        atexit(remove_root);
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fz_fail("cannot write %s", path);
}

/* The reader's graph with or without a region of interest: the same for every input (the path
 * does not change), so each is made once and kept; each pipeline copies it. */
static sl_graph *the_graph(bool roi)
{
    sl_graph *g = graphs[roi];
    if (g)
        return g;
    const char *files[1] = {path};
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "readers.numpy", "r", NULL), "add r");
    fz_check(sl_graph_arg_strs(g, "r", "files", files, 1), "files");
    if (roi) {
        const int64_t start[1] = {1}, shape[1] = {2}, axes[1] = {0};
        fz_check(sl_graph_arg_ints(g, "r", "roi_start", start, 1), "roi_start");
        fz_check(sl_graph_arg_ints(g, "r", "roi_shape", shape, 1), "roi_shape");
        fz_check(sl_graph_arg_ints(g, "r", "roi_axes", axes, 1), "roi_axes");
        fz_check(sl_graph_arg_str(g, "r", "out_of_bounds_policy", "pad"), "policy");
        fz_check(sl_graph_arg_float(g, "r", "fill_value", 7.0), "fill_value");
    }
    fz_check(sl_graph_output(g, "r:0"), "output");
    return graphs[roi] = g;
}

static sl_pipeline *make(bool roi)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    o.max_sample_bytes = 16 << 20;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(the_graph(roi), &o, &p), "sl_pipeline_create");
    sl_status st = sl_pipeline_build(p);
    if (st != SL_OK)
        fz_fail("build failed with %s: %s", sl_status_name(st), sl_pipeline_error(p));
    return p;
}

static void check_sample(sl_pipeline *p, size_t size, bool roi)
{
    const sl_batch *b = sl_pipeline_output(p, 0);
    sl_dtype t = sl_batch_dtype(b);
    if (t == SL_DTYPE_INVALID || t >= SL_DTYPE_COUNT)
        fz_fail("output dtype %d", (int)t);
    int64_t n = sl_batch_sample_numel(b, 0) * (int64_t)sl_dtype_size(t);
    if (!roi && n > (int64_t)size)
        fz_fail("a sample of %lld bytes from a file of %zu", (long long)n, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    write_input(data, size);
    bool roi = size % 2;
    sl_pipeline *p = make(roi);
    if (fz_run(p) == SL_OK) {
        check_sample(p, size, roi);
        sl_pipeline *q = make(roi);
        if (fz_run(q) != SL_OK)
            fz_fail("a second pipeline over the same file fails: %s", sl_pipeline_error(q));
        const char *why = NULL;
        if (!fz_sample_equal(sl_pipeline_output(p, 0), 0, sl_pipeline_output(q, 0), 0, &why))
            fz_fail("two pipelines over the same file differ: %s", why);
        sl_pipeline_destroy(q);
    }
    if (fz_run(p) == SL_OK)
        check_sample(p, size, roi);
    sl_pipeline_destroy(p);
    return 0;
}
