/* tests/fuzz/fuzz_coco.c: fuzz target "coco": the annotation JSON of readers.coco, parsed when
 * the pipeline is built (docs/fuzzing.md).
 *
 * Input: the annotation file's bytes, written to ANN in a private temporary folder ROOT that
 * also holds the image files a.jpg and b.jpg (a few bytes each); the reader gets file_root =
 * ROOT, annotations_file = ANN, image_ids on, ratio on or off by the input's length (both
 * parsers' paths), and by bit 1 of the length either polygon_masks or pixelwise_masks (then
 * with max_sample_bytes of 16 MiB, so a huge image entry fails the run, not the fuzzer).
 * Checks:
 * - the build succeeds or fails with a message and a code that blames the input (SL_EINVAL,
 *   SL_ECORRUPT, SL_ENOTFOUND), never SL_EINTERNAL / SL_EMISUSE, never a crash or a leak;
 * - after a successful build, up to 3 iterations run with fz_run's contract (a missing image is
 *   SL_EIO), and every produced sample keeps the output contract: bboxes float32 (N, 4),
 *   labels int32 (N, 1), polygons int32 (P, 3) whose box index is < N and whose vertex range
 *   [start, end) lies within the V vertices (V, 2) and is in order, image_ids int32 (1,);
 *   pixelwise_masks int32 (H, W, 1) whose every value is 0 or one of the sample's labels;
 * - a second pipeline over the same file gives the same first sample (the parse is a function
 *   of the bytes).
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"

#define ANN "instances.json"

static const char *const FILES[][2] = {{"a.jpg", "\xff\xd8 a"}, {"b.jpg", "b"}};
enum { NUM_FILES = sizeof FILES / sizeof FILES[0] };
/* outputs with polygon_masks; with pixelwise_masks OUT_MASKS replaces polygons and vertices */
enum { OUT_IMAGES, OUT_BOXES, OUT_LABELS, OUT_POLYS, OUT_VERTS, OUT_IDS, NUM_OUT };
enum { OUT_MASKS = OUT_POLYS, OUT_IDS_PIX, NUM_OUT_PIX };

static char root[64]; /* made once, removed at exit */
static bool made;
static char ann_path[sizeof root + sizeof ANN];

static sl_graph *graphs[2][2]; /* the reader's graphs (the_graph), made once */

static void remove_root(void)
{
    for (int i = 0; i < 4; i++)
        sl_graph_destroy(graphs[i / 2][i % 2]);
    char path[sizeof root + 64];
    for (int i = 0; i < NUM_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", root, FILES[i][0]);
        unlink(path);
    }
    unlink(ann_path);
    rmdir(root);
}

static void make_root(void)
{
    made = true;
    fz_mkdtemp(root, sizeof root, "sluice-fuzz-coco-XXXXXX");
    snprintf(ann_path, sizeof ann_path, "%s/%s", root, ANN);
    atexit(remove_root);
    char path[sizeof root + 64];
    for (int i = 0; i < NUM_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", root, FILES[i][0]);
        FILE *f = fopen(path, "wb");
        if (!f || fputs(FILES[i][1], f) < 0 || fclose(f) != 0)
            fz_fail("cannot write %s", path);
    }
}

static void write_ann(const uint8_t *data, size_t size)
{
    FILE *f = fopen(ann_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fz_fail("cannot write %s", ann_path);
}

/* The reader's graph for (ratio, pixel): the same for every input (the paths do not change), so
 * each of the four is made once and kept; each pipeline copies it. */
static sl_graph *the_graph(bool ratio, bool pixel)
{
    sl_graph *g = graphs[ratio][pixel];
    if (g)
        return g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "readers.coco", "r", NULL), "add r");
    fz_check(sl_graph_arg_str(g, "r", "file_root", root), "file_root");
    fz_check(sl_graph_arg_str(g, "r", "annotations_file", ann_path), "annotations_file");
    fz_check(sl_graph_arg_bool(g, "r", pixel ? "pixelwise_masks" : "polygon_masks", true), "masks");
    fz_check(sl_graph_arg_bool(g, "r", "image_ids", true), "image_ids");
    fz_check(sl_graph_arg_bool(g, "r", "ratio", ratio), "ratio");
    for (int k = 0; k < (pixel ? NUM_OUT_PIX : NUM_OUT); k++) {
        char ref[8];
        snprintf(ref, sizeof ref, "r:%d", k);
        fz_check(sl_graph_output(g, ref), "output");
    }
    return graphs[ratio][pixel] = g;
}

/* A pipeline over the file; *st: its build's status. */
static sl_pipeline *make(bool ratio, bool pixel, sl_status *st)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    if (pixel)
        o.max_sample_bytes = 16 << 20;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(the_graph(ratio, pixel), &o, &p), "sl_pipeline_create");
    *st = sl_pipeline_build(p);
    return p;
}

static void expect_shape(const sl_batch *b, sl_dtype dt, int64_t d0, int64_t d1, const char *what)
{
    const int64_t *s = sl_batch_shape(b, 0);
    if (sl_batch_dtype(b) != dt || sl_batch_ndim(b) != (d1 < 0 ? 1 : 2) ||
        (d0 >= 0 && s[0] != d0) || (d1 >= 0 && s[1] != d1))
        fz_fail("%s: dtype %s, %d-D, shape[0] %lld", what, sl_dtype_name(sl_batch_dtype(b)),
                sl_batch_ndim(b), (long long)s[0]);
}

static void check_masks(sl_pipeline *p, int64_t n)
{
    const sl_batch *m = sl_pipeline_output(p, OUT_MASKS);
    const int64_t *s = sl_batch_shape(m, 0);
    if (sl_batch_dtype(m) != SL_DTYPE_INT32 || sl_batch_ndim(m) != 3 || s[2] != 1)
        fz_fail("pixelwise_masks: dtype %s, %d-D", sl_dtype_name(sl_batch_dtype(m)),
                sl_batch_ndim(m));
    const int32_t *v = sl_batch_sample_data(m, 0),
                  *lab = sl_batch_sample_data(sl_pipeline_output(p, OUT_LABELS), 0);
    for (int64_t k = 0; k < s[0] * s[1]; k++) {
        bool known = v[k] == 0;
        for (int64_t j = 0; j < n && !known; j++)
            known = v[k] == lab[j];
        if (!known)
            fz_fail("pixelwise_masks: pixel %lld holds %d, not a label of the sample", (long long)k,
                    v[k]);
    }
    expect_shape(sl_pipeline_output(p, OUT_IDS_PIX), SL_DTYPE_INT32, 1, -1, "image_ids");
}

static void check_sample(sl_pipeline *p, bool pixel)
{
    const sl_batch *boxes = sl_pipeline_output(p, OUT_BOXES);
    int64_t n = sl_batch_shape(boxes, 0)[0];
    expect_shape(boxes, SL_DTYPE_FLOAT32, -1, 4, "bboxes");
    expect_shape(sl_pipeline_output(p, OUT_LABELS), SL_DTYPE_INT32, n, 1, "labels");
    if (pixel) {
        check_masks(p, n);
        return;
    }
    const sl_batch *polys = sl_pipeline_output(p, OUT_POLYS),
                   *verts = sl_pipeline_output(p, OUT_VERTS);
    expect_shape(polys, SL_DTYPE_INT32, -1, 3, "polygons");
    expect_shape(verts, SL_DTYPE_FLOAT32, -1, 2, "vertices");
    expect_shape(sl_pipeline_output(p, OUT_IDS), SL_DTYPE_INT32, 1, -1, "image_ids");
    int64_t np = sl_batch_shape(polys, 0)[0], nv = sl_batch_shape(verts, 0)[0];
    const int32_t *pp = sl_batch_sample_data(polys, 0);
    for (int64_t k = 0; k < np; k++) {
        const int32_t *q = pp + 3 * k;
        if (q[0] < 0 || q[0] >= n || q[1] < 0 || q[1] > q[2] || q[2] > nv)
            fz_fail("polygon %lld = [%d, %d, %d] with %lld boxes and %lld vertices", (long long)k,
                    q[0], q[1], q[2], (long long)n, (long long)nv);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!made)
        make_root();
    write_ann(data, size);
    bool ratio = size % 2, pixel = (size >> 1) % 2;
    sl_status s;
    sl_pipeline *p = make(ratio, pixel, &s);
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
    if (sl_pipeline_epoch_size(p, "r") < 1)
        fz_fail("built with an epoch of %lld images", (long long)sl_pipeline_epoch_size(p, "r"));
    sl_status first = fz_run(p);
    if (first == SL_OK) {
        check_sample(p, pixel);
        sl_status s2;
        sl_pipeline *q = make(ratio, pixel, &s2);
        if (s2 != SL_OK || fz_run(q) != SL_OK)
            fz_fail("a second pipeline over the same file fails: %s", sl_pipeline_error(q));
        for (int k = 0; k < (pixel ? NUM_OUT_PIX : NUM_OUT); k++) {
            const char *why = NULL;
            if (!fz_sample_equal(sl_pipeline_output(p, k), 0, sl_pipeline_output(q, k), 0, &why))
                fz_fail("output %d differs between two pipelines over the same file: %s", k, why);
        }
        sl_pipeline_destroy(q);
    }
    for (int it = 1; it < 3; it++)
        if (fz_run(p) == SL_OK)
            check_sample(p, pixel);
    sl_pipeline_destroy(p);
    return 0;
}
