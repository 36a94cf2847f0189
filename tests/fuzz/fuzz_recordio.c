/* tests/fuzz/fuzz_recordio.c: fuzz target "recordio": the RecordIO record framing and image
 * record header of readers.mxnet (src/ops/readers/mxnet.c; docs/fuzzing.md).
 *
 * Input: the .rec file's bytes, written to x.rec in a private temporary folder, with an index
 * x.idx made from the input the way an indexer would: one line per 4-aligned offset where the
 * RecordIO magic stands with part flag 0 or 1 (at most 16; offset 0 when none is found, so the
 * reader still reads a non-record).
 * Checks:
 * - the build succeeds or fails blaming the input (SL_EINVAL, SL_ECORRUPT, SL_ENOTFOUND: an
 *   input shorter than 8 bytes has no offset an index may name);
 * - each of 3 iterations keeps fz_run's contract (SL_OK, or a message and a code blaming the
 *   input); a successful sample's image and labels together hold fewer bytes than the file,
 *   and its labels are float32 (1,) or (flag,);
 * - a second pipeline over the same file gives the same first sample.
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
static char rec_path[sizeof root + 8], idx_path[sizeof root + 8];

static sl_graph *g; /* the reader's graph (the_graph), made once */

static void remove_root(void)
{
    sl_graph_destroy(g);
    unlink(rec_path);
    unlink(idx_path);
    rmdir(root);
}

static void write_inputs(const uint8_t *data, size_t size)
{
    if (!made) {
        made = true;
        fz_mkdtemp(root, sizeof root, "sluice-fuzz-recordio-XXXXXX");
        snprintf(rec_path, sizeof rec_path, "%s/x.rec", root);
        snprintf(idx_path, sizeof idx_path, "%s/x.idx", root);
        atexit(remove_root);
    }
    FILE *f = fopen(rec_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fz_fail("cannot write %s", rec_path);
    f = fopen(idx_path, "w");
    if (!f)
        fz_fail("cannot write %s", idx_path);
    int n = 0;
    for (size_t at = 0; at + 8 <= size && n < 16; at += 4) {
        uint32_t magic = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 |
                         (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
        unsigned cflag = data[at + 7] >> 5;
        if (magic == 0xced7230au && cflag <= 1)
            fprintf(f, "%d\t%zu\n", n++, at);
    }
    if (n == 0)
        fputs("0\t0\n", f);
    if (fclose(f) != 0)
        fz_fail("cannot write %s", idx_path);
}

/* The reader's graph: the same for every input (the paths do not change), so it is made once
 * and kept; each pipeline copies it. */
static sl_graph *the_graph(void)
{
    if (g)
        return g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "readers.mxnet", "r", NULL), "add r");
    fz_check(sl_graph_arg_str(g, "r", "path", rec_path), "path");
    fz_check(sl_graph_arg_str(g, "r", "index_path", idx_path), "index_path");
    fz_check(sl_graph_output(g, "r:0"), "output 0");
    fz_check(sl_graph_output(g, "r:1"), "output 1");
    return g;
}

static sl_pipeline *make(sl_status *st)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(the_graph(), &o, &p), "sl_pipeline_create");
    *st = sl_pipeline_build(p);
    return p;
}

static void check_sample(sl_pipeline *p, size_t size)
{
    const sl_batch *d = sl_pipeline_output(p, 0), *l = sl_pipeline_output(p, 1);
    if (sl_batch_dtype(d) != SL_DTYPE_UINT8 || sl_batch_ndim(d) != 1 ||
        sl_batch_dtype(l) != SL_DTYPE_FLOAT32 || sl_batch_ndim(l) != 1)
        fz_fail("outputs %s %d-D, %s %d-D", sl_dtype_name(sl_batch_dtype(d)), sl_batch_ndim(d),
                sl_dtype_name(sl_batch_dtype(l)), sl_batch_ndim(l));
    int64_t bytes = sl_batch_sample_numel(d, 0) + 4 * sl_batch_sample_numel(l, 0);
    if (sl_batch_sample_numel(l, 0) < 1 || bytes >= (int64_t)size)
        fz_fail("a sample of %lld bytes (%lld labels) from a file of %zu", (long long)bytes,
                (long long)sl_batch_sample_numel(l, 0), size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    write_inputs(data, size);
    sl_status s;
    sl_pipeline *p = make(&s);
    if (s != SL_OK) {
        const char *msg = sl_pipeline_error(p);
        if (!msg || !*msg)
            fz_fail("build failed with %s and no message", sl_status_name(s));
        if (s != SL_EINVAL && s != SL_ECORRUPT && s != SL_ENOTFOUND)
            fz_fail("build failed with %s, which does not blame the input: %s", sl_status_name(s),
                    msg);
        sl_pipeline_destroy(p);
        return 0;
    }
    if (fz_run(p) == SL_OK) {
        check_sample(p, size);
        sl_status s2;
        sl_pipeline *q = make(&s2);
        if (s2 != SL_OK || fz_run(q) != SL_OK)
            fz_fail("a second pipeline over the same file fails: %s", sl_pipeline_error(q));
        for (int k = 0; k < 2; k++) {
            const char *why = NULL;
            if (!fz_sample_equal(sl_pipeline_output(p, k), 0, sl_pipeline_output(q, k), 0, &why))
                fz_fail("output %d differs between two pipelines over the same file: %s", k, why);
        }
        sl_pipeline_destroy(q);
    }
    for (int it = 1; it < 3; it++)
        if (fz_run(p) == SL_OK)
            check_sample(p, size);
    sl_pipeline_destroy(p);
    return 0;
}
