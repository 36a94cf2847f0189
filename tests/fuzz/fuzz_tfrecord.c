/* tests/fuzz/fuzz_tfrecord.c: fuzz target "tfrecord": the TFRecord framing (sl_tfrecord_index and
 * readers.tfrecord's record checks) and the tf.train.Example parser of readers.tfrecord
 * (docs/fuzzing.md).
 *
 * Input: a mode byte, then bytes. Mode odd: the bytes are the TFRecord file as it is (framing
 * and CRCs fuzzed). Mode even: the bytes are one Example payload, which the harness frames with
 * correct CRCs (sl_tfrecord_masked_crc) so that random bytes reach the Example parser; with
 * mode & 2 the record is written twice.
 * The file is written to FILE in a private temporary folder, indexed with sl_tfrecord_index
 * into INDEX, and read by readers.tfrecord with the features FEATS (every kind, dtype and
 * shape rule).
 * Checks:
 * - indexing succeeds or fails with SL_ECORRUPT and a message naming the file; in mode even it
 *   succeeds with 1 or 2 records;
 * - the build then succeeds with an epoch of as many records as the index has;
 * - each run (up to 4) keeps fz_run's contract, and a successful one the output contract:
 *   image uint8 1-D, label int64 (1,), grid int64 (2, 3), boxes float32 (N, 4), any float32
 *   1-D;
 * - a record that reads once reads the same again (the parse is a function of the bytes).
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
static char file_path[sizeof root + 16], index_path[sizeof root + 16];

enum { OUT_IMAGE, OUT_LABEL, OUT_GRID, OUT_BOXES, OUT_ANY, NUM_OUT };

static sl_graph *g; /* the reader's graph (the_graph), made once */

static void remove_root(void)
{
    sl_graph_destroy(g);
    unlink(file_path);
    unlink(index_path);
    rmdir(root);
}

static void make_root(void)
{
    made = true;
    fz_mkdtemp(root, sizeof root, "sluice-fuzz-tfrecord-XXXXXX");
    snprintf(file_path, sizeof file_path, "%s/f.tfrecord", root);
    snprintf(index_path, sizeof index_path, "%s/f.idx", root);
    atexit(remove_root);
}

static void put_record(FILE *f, const uint8_t *p, size_t n)
{
    uint8_t hdr[12], foot[4];
    for (int i = 0; i < 8; i++)
        hdr[i] = (uint8_t)((uint64_t)n >> (8 * i));
    uint32_t c = sl_tfrecord_masked_crc(hdr, 8), d = sl_tfrecord_masked_crc(p, n);
    for (int i = 0; i < 4; i++) {
        hdr[8 + i] = (uint8_t)(c >> (8 * i));
        foot[i] = (uint8_t)(d >> (8 * i));
    }
    if (fwrite(hdr, 1, 12, f) != 12 || fwrite(p, 1, n, f) != n || fwrite(foot, 1, 4, f) != 4)
        fz_fail("cannot write %s", file_path);
}

static void write_file(const uint8_t *data, size_t size)
{
    FILE *f = fopen(file_path, "wb");
    if (!f)
        fz_fail("cannot write %s", file_path);
    if (size && (data[0] & 1)) {
        if (fwrite(data + 1, 1, size - 1, f) != size - 1)
            fz_fail("cannot write %s", file_path);
    } else {
        const uint8_t *p = size ? data + 1 : data;
        size_t n = size ? size - 1 : 0;
        put_record(f, p, n);
        if (size && (data[0] & 2))
            put_record(f, p, n);
    }
    if (fclose(f) != 0)
        fz_fail("cannot write %s", file_path);
}

/* The reader's graph: the same for every input (the file's and the index's paths do not change),
 * so it is made once and kept; each pipeline copies it. */
static sl_graph *the_graph(void)
{
    if (g)
        return g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "readers.tfrecord", "r", NULL), "add r");
    fz_check(sl_graph_arg_str(g, "r", "path", file_path), "path");
    fz_check(sl_graph_arg_str(g, "r", "index_path", index_path), "index_path");
    fz_check(sl_graph_arg_json(g, "r", "feature_names",
                               "[\"image\", \"label\", \"grid\", \"boxes\", \"any\"]"),
             "feature_names");
    fz_check(sl_graph_arg_json(g, "r", "feature_kinds",
                               "[\"fixed\", \"fixed\", \"fixed\", \"var\", \"var\"]"),
             "feature_kinds");
    fz_check(sl_graph_arg_json(g, "r", "feature_dtypes",
                               "[\"string\", \"int64\", \"int64\", \"float32\", \"float32\"]"),
             "feature_dtypes");
    fz_check(sl_graph_arg_json(g, "r", "feature_ndims", "[0, 1, 2, 1, 0]"), "feature_ndims");
    fz_check(sl_graph_arg_json(g, "r", "feature_shapes", "[1, 2, 3, 4]"), "feature_shapes");
    fz_check(sl_graph_arg_json(g, "r", "feature_defaults", "[\"x\", \"-1\", \"7\", \"0\", \"0\"]"),
             "feature_defaults");
    for (int k = 0; k < NUM_OUT; k++) {
        char ref[8];
        snprintf(ref, sizeof ref, "r:%d", k);
        fz_check(sl_graph_output(g, ref), "output");
    }
    return g;
}

static sl_pipeline *make(sl_status *st)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    o.max_sample_bytes = 1 << 20;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(the_graph(), &o, &p), "sl_pipeline_create");
    *st = sl_pipeline_build(p);
    return p;
}

static void expect(const sl_batch *b, sl_dtype dt, int ndim, int64_t d0, int64_t d1,
                   const char *what)
{
    const int64_t *s = sl_batch_shape(b, 0);
    if (sl_batch_dtype(b) != dt || sl_batch_ndim(b) != ndim || (d0 >= 0 && s[0] != d0) ||
        (d1 >= 0 && s[1] != d1))
        fz_fail("%s: dtype %s, %d-D, shape[0] %lld", what, sl_dtype_name(sl_batch_dtype(b)),
                sl_batch_ndim(b), (long long)s[0]);
}

static void check_sample(sl_pipeline *p)
{
    expect(sl_pipeline_output(p, OUT_IMAGE), SL_DTYPE_UINT8, 1, -1, -1, "image");
    expect(sl_pipeline_output(p, OUT_LABEL), SL_DTYPE_INT64, 1, 1, -1, "label");
    expect(sl_pipeline_output(p, OUT_GRID), SL_DTYPE_INT64, 2, 2, 3, "grid");
    expect(sl_pipeline_output(p, OUT_BOXES), SL_DTYPE_FLOAT32, 2, -1, 4, "boxes");
    expect(sl_pipeline_output(p, OUT_ANY), SL_DTYPE_FLOAT32, 1, -1, -1, "any");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!made)
        make_root();
    write_file(data, size);
    bool framed = !size || !(data[0] & 1);
    int64_t n = 0;
    sl_status s = sl_tfrecord_index(file_path, index_path, &n);
    if (s != SL_OK) {
        if (framed || s != SL_ECORRUPT || !strstr(sl_last_error(), file_path))
            fz_fail("sl_tfrecord_index failed with %s: %s", sl_status_name(s), sl_last_error());
        return 0;
    }
    if (framed && n != (size && (data[0] & 2) ? 2 : 1))
        fz_fail("%lld records indexed in a file of framed records", (long long)n);
    if (n == 0)
        return 0; /* the next input's sl_tfrecord_index replaces (or removes) the index */
    sl_pipeline *p = make(&s);
    if (s != SL_OK)
        fz_fail("build failed with %s: %s", sl_status_name(s), sl_pipeline_error(p));
    if (sl_pipeline_epoch_size(p, "r") != n)
        fz_fail("epoch of %lld records, the index has %lld",
                (long long)sl_pipeline_epoch_size(p, "r"), (long long)n);
    sl_status first = fz_run(p);
    if (first == SL_OK) {
        check_sample(p);
        sl_status s2;
        sl_pipeline *q = make(&s2);
        if (s2 != SL_OK || fz_run(q) != SL_OK)
            fz_fail("a second pipeline over the same file fails: %s", sl_pipeline_error(q));
        for (int k = 0; k < NUM_OUT; k++) {
            const char *why = NULL;
            if (!fz_sample_equal(sl_pipeline_output(p, k), 0, sl_pipeline_output(q, k), 0, &why))
                fz_fail("output %d differs between two pipelines over the same file: %s", k, why);
        }
        sl_pipeline_destroy(q);
    }
    for (int it = 1; it < 4; it++)
        if (fz_run(p) == SL_OK)
            check_sample(p);
    sl_pipeline_destroy(p);
    return 0;
}
