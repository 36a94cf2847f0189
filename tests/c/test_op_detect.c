/* test_op_detect: the geometry, detection and segmentation operators through the public C API
 * (the Python tests, tests/python/test_ops_detect.py, test_readers_coco.py, hold the full
 * reference comparisons; these run in the ASan+UBSan build too).
 *
 * Hand-computed values: transforms.* matrices (2-D and a 3-D rotation), their composition by
 * combine; coord_transform, coord_flip, bb_flip, bbox_paste, box_encoder on three anchors.
 * random_object_bbox on a one-object mask. Properties: random_bbox_crop's five outputs (labels,
 * indices) and window bounds, with and without crop_shape; ssd_random_crop's crop is a window of
 * the image; select_masks, random_mask_pixel; readers.coco on a two-image annotation file written
 * here. Every case has an empty sample; bad arguments and a corrupt annotation file fail with
 * messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice/sluice.h"

#define MAXIN 3

typedef struct feedspec {
    sl_dtype t;
    int ndim;
    const int64_t *shapes; /* 2 samples x ndim */
    const void *data[2];
} feedspec;

/* op with `nin` fed inputs in0.. and `nout` outputs; args "name=json" separated by ';'. */
static sl_pipeline *build(const char *op, int nin, int nout, const char *args, sl_status *st)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, op, "op", NULL), SL_OK);
    for (int k = 0; k < nin; k++) {
        char name[8];
        snprintf(name, sizeof name, "in%d", k);
        assert_int_equal(sl_graph_add(g, "external_source", name, NULL), SL_OK);
        assert_int_equal(sl_graph_input(g, "op", name), SL_OK);
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    for (char *save = NULL, *a = strtok_r(buf, ";", &save); a; a = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(a, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (sl_graph_arg_json(g, "op", a, eq + 1) != SL_OK)
            fail_msg("arg %s: %s", a, sl_last_error());
    }
    for (int k = 0; k < nout; k++) {
        char ref[16];
        snprintf(ref, sizeof ref, "op:%d", k);
        assert_int_equal(sl_graph_output(g, ref), SL_OK);
    }
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 2;
    o.num_threads = 2;
    o.prefetch_queue_depth = 1;
    sl_pipeline *p = NULL;
    if (sl_pipeline_create(g, &o, &p) != SL_OK)
        fail_msg("create: %s", sl_last_error());
    sl_graph_destroy(g);
    *st = sl_pipeline_build(p);
    return p;
}

/* Builds, feeds and runs; fails the test on any error. */
static sl_pipeline *run_op(const char *op, int nin, const feedspec *in, int nout, const char *args)
{
    sl_status st;
    sl_pipeline *p = build(op, nin, nout, args, &st);
    if (st != SL_OK)
        fail_msg("build %s: %s", op, sl_pipeline_error(p));
    for (int k = 0; k < nin; k++) {
        char name[8];
        snprintf(name, sizeof name, "in%d", k);
        sl_feed f = {.num_samples = 2,
                     .ndim = in[k].ndim,
                     .dtype = in[k].t,
                     .layout = "",
                     .shapes = in[k].shapes,
                     .data = in[k].data};
        if (sl_pipeline_feed_input(p, name, &f) != SL_OK)
            fail_msg("feed %s: %s", name, sl_pipeline_error(p));
    }
    if (sl_pipeline_run(p) != SL_OK)
        fail_msg("run %s: %s", op, sl_pipeline_error(p));
    return p;
}

static void expect_floats(const sl_batch *b, int i, const float *want, int n, double tol)
{
    assert_int_equal(sl_batch_sample_numel(b, i), n);
    const float *got = sl_batch_sample_data(b, i);
    for (int k = 0; k < n; k++)
        if (fabs(got[k] - want[k]) > tol)
            fail_msg("element %d: %g, expected %g", k, got[k], want[k]);
}

/* A no-input transform: sample 0 and 1 both equal want (rows x cols). */
static void check_matrix(const char *op, const char *args, const float *want, int n)
{
    sl_status st;
    sl_pipeline *p = build(op, 0, 1, args, &st);
    if (st != SL_OK || sl_pipeline_run(p) != SL_OK)
        fail_msg("%s: %s", op, sl_pipeline_error(p));
    for (int i = 0; i < 2; i++)
        expect_floats(sl_pipeline_output(p, 0), i, want, n, 1e-6);
    sl_pipeline_destroy(p);
}

static void test_transforms(void **state)
{
    (void)state;
    check_matrix("transforms.translation", "offset=[1,2]", (float[]){1, 0, 1, 0, 1, 2}, 6);
    check_matrix("transforms.rotation", "angle=90", (float[]){0, -1, 0, 1, 0, 0}, 6);
    check_matrix("transforms.rotation", "angle=90;axis=[0,0,2]",
                 (float[]){0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0}, 12);
    check_matrix("transforms.scale", "scale=[2,3];center=[1,1]", (float[]){2, 0, -1, 0, 3, -2}, 6);
    check_matrix("transforms.scale", "scale=[2];ndim=3",
                 (float[]){2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0}, 12);
    check_matrix("transforms.shear", "shear=[1,2]", (float[]){1, 1, 0, 2, 1, 0}, 6);
    check_matrix("transforms.crop", "from_end=[2,4]", (float[]){0.5f, 0, 0, 0, 0.25f, 0}, 6);
    check_matrix("transforms.crop", "from_start=[3];from_end=[1];to_start=[2];absolute=true",
                 (float[]){0.5f, 0.5f}, 2);
    /* combine(T, R): R after T; the input form of translation: T(R) */
    float t[6] = {1, 0, 1, 0, 1, 2}, r[6] = {0, -1, 0, 1, 0, 0};
    static const int64_t mshape[4] = {2, 3, 2, 3};
    feedspec in[2] = {{SL_DTYPE_FLOAT32, 2, mshape, {t, t}}, {SL_DTYPE_FLOAT32, 2, mshape, {r, r}}};
    sl_pipeline *p = run_op("transforms.combine", 2, in, 1, NULL);
    expect_floats(sl_pipeline_output(p, 0), 0, (float[]){0, -1, -2, 1, 0, 1}, 6, 1e-6);
    sl_pipeline_destroy(p);
    p = run_op("transforms.translation", 1, &in[1], 1, "offset=[1,2]");
    expect_floats(sl_pipeline_output(p, 0), 1, (float[]){0, -1, 1, 1, 0, 2}, 6, 1e-6);
    sl_pipeline_destroy(p);
    p = run_op("transforms.translation", 1, &in[1], 1, "offset=[1,2];reverse_order=true");
    expect_floats(sl_pipeline_output(p, 0), 1, (float[]){0, -1, -2, 1, 0, 1}, 6, 1e-6);
    sl_pipeline_destroy(p);
}

static void test_transforms_bad(void **state)
{
    (void)state;
    sl_status st;
    sl_pipeline *p = build("transforms.shear", 0, 1, "shear=[1,2];angles=[3,4]", &st);
    if (st == SL_OK)
        st = sl_pipeline_run(p);
    assert_int_equal(st, SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "exclusive"));
    sl_pipeline_destroy(p);
    p = build("coord_transform", 1, 1, "M=[1];MT=[1]", &st);
    assert_int_equal(st, SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "MT is exclusive"));
    sl_pipeline_destroy(p);
}

static void test_points_and_boxes(void **state)
{
    (void)state;
    float pts[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
    static const int64_t pshape[4] = {3, 2, 0, 2};
    feedspec in = {SL_DTYPE_FLOAT32, 2, pshape, {pts, pts}};
    sl_pipeline *p = run_op("coord_transform", 1, &in, 1, "MT=[0,1,5,1,0,6]");
    expect_floats(sl_pipeline_output(p, 0), 0, (float[]){5.2f, 6.1f, 5.4f, 6.3f, 5.6f, 6.5f}, 6,
                  1e-6);
    assert_int_equal(sl_batch_sample_numel(sl_pipeline_output(p, 0), 1), 0);
    sl_pipeline_destroy(p);
    p = run_op("coord_flip", 1, &in, 1, "flip_y=1;center_y=0");
    expect_floats(sl_pipeline_output(p, 0), 0, (float[]){0.9f, -0.2f, 0.7f, -0.4f, 0.5f, -0.6f}, 6,
                  1e-6);
    sl_pipeline_destroy(p);
    float boxes[8] = {0.1f, 0.2f, 0.5f, 0.6f, 0.0f, 0.0f, 0.25f, 1.0f};
    static const int64_t bshape[4] = {2, 4, 0, 4};
    feedspec bin = {SL_DTYPE_FLOAT32, 2, bshape, {boxes, boxes}};
    p = run_op("bb_flip", 1, &bin, 1, "ltrb=true;vertical=1");
    expect_floats(sl_pipeline_output(p, 0), 0,
                  (float[]){0.5f, 0.4f, 0.9f, 0.8f, 0.75f, 0.0f, 1.0f, 1.0f}, 8, 1e-6);
    sl_pipeline_destroy(p);
    p = run_op("bbox_paste", 1, &bin, 1, "ratio=2;paste_x=0;paste_y=1");
    expect_floats(sl_pipeline_output(p, 0), 0,
                  (float[]){0.05f, 0.6f, 0.25f, 0.3f, 0.0f, 0.5f, 0.125f, 0.5f}, 8, 1e-6);
    sl_pipeline_destroy(p);
    uint8_t img[2 * 3 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
    static const int64_t ishape[6] = {2, 3, 3, 0, 3, 3};
    feedspec iin = {SL_DTYPE_UINT8, 3, ishape, {img, img}};
    p = run_op("coord_transform", 1, &iin, 1, "M=[0,0,1,0,1,0,1,0,0];dtype=\"uint8\"");
    const uint8_t *o = sl_batch_sample_data(sl_pipeline_output(p, 0), 0);
    for (int k = 0; k < 6; k++)
        for (int c = 0; c < 3; c++)
            assert_int_equal(o[3 * k + c], img[3 * k + 2 - c]);
    sl_pipeline_destroy(p);
}

static void test_random_bbox_crop(void **state)
{
    (void)state;
    float boxes[12] = {0.1f, 0.1f, 0.3f, 0.3f, 0.5f, 0.5f, 0.9f, 0.8f, 0.2f, 0.6f, 0.4f, 0.9f};
    int32_t labels[3] = {7, 8, 9};
    static const int64_t bshape[4] = {3, 4, 0, 4}, lshape[2] = {3, 0};
    feedspec in[2] = {{SL_DTYPE_FLOAT32, 2, bshape, {boxes, boxes}},
                      {SL_DTYPE_INT32, 1, lshape, {labels, labels}}};
    for (int fixed = 0; fixed < 2; fixed++) {
        sl_pipeline *p =
            run_op("random_bbox_crop", 2, in, 5,
                   fixed ? "output_bbox_indices=true;input_shape=[400,300];crop_shape=[200,100];"
                           "allow_no_crop=false;num_attempts=20"
                         : "output_bbox_indices=true;scaling=[0.3,1];aspect_ratio=[0.5,2];"
                           "thresholds=[0,0.1,0.3];num_attempts=20");
        const float *anchor = sl_batch_sample_data(sl_pipeline_output(p, 0), 0);
        const float *shape = sl_batch_sample_data(sl_pipeline_output(p, 1), 0);
        const sl_batch *ob = sl_pipeline_output(p, 2), *ol = sl_pipeline_output(p, 3),
                       *oi = sl_pipeline_output(p, 4);
        int64_t m = sl_batch_shape(ob, 0)[0];
        assert_true(m >= 1 && m <= 3);
        assert_int_equal(sl_batch_shape(ol, 0)[0], m);
        for (int d = 0; d < 2; d++) {
            double hi = fixed ? (d ? 300 - 100 : 400 - 200) : 1.0 - shape[d];
            assert_true(anchor[d] >= 0 && anchor[d] <= hi + 1e-6);
            if (fixed)
                assert_true(shape[d] == (d ? 100.0f : 200.0f));
        }
        const float *b = sl_batch_sample_data(ob, 0);
        const int32_t *l = sl_batch_sample_data(ol, 0), *ix = sl_batch_sample_data(oi, 0);
        for (int64_t k = 0; k < m; k++) {
            assert_true(ix[k] >= 0 && ix[k] < 3 && (k == 0 || ix[k] > ix[k - 1]));
            assert_int_equal(l[k], labels[ix[k]]);
            for (int c = 0; c < 4; c++)
                assert_true(b[4 * k + c] >= 0 && b[4 * k + c] <= 1);
        }
        assert_int_equal(sl_batch_shape(ob, 1)[0], 0);
        sl_pipeline_destroy(p);
    }
    sl_status st;
    sl_pipeline *p = build("random_bbox_crop", 1, 3, "bbox_layout=\"xyXQ\"", &st);
    assert_int_equal(st, SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "bbox_layout"));
    sl_pipeline_destroy(p);
}

static void test_box_encoder(void **state)
{
    (void)state;
    float box[4] = {0.1f, 0.1f, 0.5f, 0.5f};
    int32_t label[1] = {7};
    static const int64_t bshape[4] = {1, 4, 0, 4}, lshape[2] = {1, 0};
    feedspec in[2] = {{SL_DTYPE_FLOAT32, 2, bshape, {box, box}},
                      {SL_DTYPE_INT32, 1, lshape, {label, label}}};
    sl_pipeline *p =
        run_op("box_encoder", 2, in, 2, "anchors=[0,0,0.5,0.5,0.5,0.5,1,1,0,0.5,0.5,1]");
    expect_floats(
        sl_pipeline_output(p, 0), 0,
        (float[]){0.3f, 0.3f, 0.4f, 0.4f, 0.75f, 0.75f, 0.5f, 0.5f, 0.25f, 0.75f, 0.5f, 0.5f}, 12,
        1e-6);
    const int32_t *l0 = sl_batch_sample_data(sl_pipeline_output(p, 1), 0);
    const int32_t *l1 = sl_batch_sample_data(sl_pipeline_output(p, 1), 1);
    assert_int_equal(l0[0], 7);
    assert_int_equal(l0[1] + l0[2] + l1[0] + l1[1] + l1[2], 0);
    sl_pipeline_destroy(p);
}

static void test_ssd_random_crop(void **state)
{
    (void)state;
    uint8_t img[10 * 20 * 3]; /* channel 0: the column, 1: the row */
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++) {
            img[(y * 20 + x) * 3] = (uint8_t)x;
            img[(y * 20 + x) * 3 + 1] = (uint8_t)y;
            img[(y * 20 + x) * 3 + 2] = 7;
        }
    float boxes[8] = {0.1f, 0.1f, 0.6f, 0.7f, 0.4f, 0.3f, 0.9f, 0.9f};
    int32_t labels[2] = {1, 2};
    static const int64_t ishape[6] = {10, 20, 3, 10, 20, 3}, bshape[4] = {2, 4, 0, 4},
                         lshape[2] = {2, 0};
    feedspec in[3] = {{SL_DTYPE_UINT8, 3, ishape, {img, img}},
                      {SL_DTYPE_FLOAT32, 2, bshape, {boxes, boxes}},
                      {SL_DTYPE_INT32, 1, lshape, {labels, labels}}};
    for (int it = 0; it < 3; it++) {
        sl_pipeline *p = run_op("ssd_random_crop", 3, in, 3, "num_attempts=5");
        const sl_batch *o = sl_pipeline_output(p, 0);
        for (int i = 0; i < 2; i++) {
            const int64_t *s = sl_batch_shape(o, i);
            assert_true(s[0] >= 1 && s[0] <= 10 && s[1] >= 1 && s[1] <= 20 && s[2] == 3);
            const uint8_t *d = sl_batch_sample_data(o, i);
            const int x0 = d[0], y0 = d[1]; /* the window's corner */
            for (int64_t y = 0; y < s[0]; y++)
                for (int64_t x = 0; x < s[1]; x++) {
                    assert_int_equal(d[(y * s[1] + x) * 3], x0 + x);
                    assert_int_equal(d[(y * s[1] + x) * 3 + 1], y0 + y);
                }
        }
        assert_int_equal(sl_batch_shape(sl_pipeline_output(p, 1), 1)[0], 0);
        sl_pipeline_destroy(p);
    }
}

static void test_select_masks_and_mask_pixel(void **state)
{
    (void)state;
    int32_t ids[2] = {2, 0};
    int32_t polys[9] = {0, 0, 2, 1, 2, 3, 2, 3, 5};
    float verts[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    static const int64_t ishape[2] = {2, 0}, pshape[4] = {3, 3, 0, 3}, vshape[4] = {5, 2, 0, 2};
    feedspec in[3] = {{SL_DTYPE_INT32, 1, ishape, {ids, ids}},
                      {SL_DTYPE_INT32, 2, pshape, {polys, polys}},
                      {SL_DTYPE_FLOAT32, 2, vshape, {verts, verts}}};
    sl_pipeline *p = run_op("segmentation.select_masks", 3, in, 2, "reindex_masks=true");
    const int32_t *op = sl_batch_sample_data(sl_pipeline_output(p, 0), 0);
    const int32_t want[6] = {0, 0, 2, 1, 2, 4};
    for (int k = 0; k < 6; k++)
        assert_int_equal(op[k], want[k]);
    expect_floats(sl_pipeline_output(p, 1), 0, (float[]){6, 7, 8, 9, 0, 1, 2, 3}, 8, 0);
    sl_pipeline_destroy(p);
    uint8_t mask[12] = {0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0};
    static const int64_t mshape[4] = {3, 4, 0, 0};
    feedspec min = {SL_DTYPE_UINT8, 2, mshape, {mask, mask}};
    p = run_op("segmentation.random_mask_pixel", 1, &min, 1, "foreground=1");
    const int64_t *px = sl_batch_sample_data(sl_pipeline_output(p, 0), 0);
    assert_int_equal(px[0], 1);
    assert_int_equal(px[1], 2);
    sl_pipeline_destroy(p);
    /* one object of class 3 at (1, 2): its box, its class; the empty mask: the whole input */
    p = run_op("segmentation.random_object_bbox", 1, &min, 2, "format=\"box\";output_class=true");
    const int32_t *box = sl_batch_sample_data(sl_pipeline_output(p, 0), 0);
    const int32_t want_box[4] = {1, 2, 2, 3};
    for (int k = 0; k < 4; k++)
        assert_int_equal(box[k], want_box[k]);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 1), 0), 3);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 1), 1), 0);
    sl_pipeline_destroy(p);
}

static void test_readers_coco(void **state)
{
    (void)state;
    char root[] = "/tmp/sluice-test-coco-XXXXXX", path[128];
    assert_non_null(mkdtemp(root));
    const char *files[2] = {"a.jpg", "b.jpg"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", root, files[k]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[k], f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/ann.json", root);
    FILE *f = fopen(path, "w");
    fputs("{\"images\": [{\"id\": 9, \"file_name\": \"b.jpg\", \"width\": 10, \"height\": 20},"
          " {\"id\": 4, \"file_name\": \"a.jpg\", \"width\": 10, \"height\": 10}],"
          " \"annotations\": [{\"image_id\": 9, \"category_id\": 30, \"bbox\": [1, 2, 3, 4],"
          " \"segmentation\": [[1, 2, 4, 2, 4, 6]]}],"
          " \"categories\": [{\"id\": 20}, {\"id\": 30}]}",
          f);
    fclose(f);
    char args[512];
    snprintf(args, sizeof args,
             "file_root=\"%s\";annotations_file=\"%s\";ltrb=true;ratio=true;polygon_masks=true;"
             "image_ids=true",
             root, path);
    sl_pipeline *p = run_op("readers.coco", 0, NULL, 6, args);
    /* sorted by id: a.jpg (4, no annotation), b.jpg (9) */
    assert_int_equal(sl_batch_shape(sl_pipeline_output(p, 1), 0)[0], 0);
    expect_floats(sl_pipeline_output(p, 1), 1, (float[]){0.1f, 0.1f, 0.4f, 0.3f}, 4, 1e-7);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 2), 1), 2);
    const int32_t *poly = sl_batch_sample_data(sl_pipeline_output(p, 3), 1);
    assert_int_equal(poly[0], 0);
    assert_int_equal(poly[2], 3);
    expect_floats(sl_pipeline_output(p, 4), 1, (float[]){0.1f, 0.1f, 0.4f, 0.1f, 0.4f, 0.3f}, 6,
                  1e-7);
    assert_int_equal(*(const int32_t *)sl_batch_sample_data(sl_pipeline_output(p, 5), 0), 4);
    assert_memory_equal(sl_batch_sample_data(sl_pipeline_output(p, 0), 1), "b.jpg", 5);
    sl_pipeline_destroy(p);
    f = fopen(path, "w");
    fputs("{\"images\": [{\"id\": 1, \"file_name\": 5}]}", f);
    fclose(f);
    sl_status st;
    snprintf(args, sizeof args, "file_root=\"%s\";annotations_file=\"%s\"", root, path);
    p = build("readers.coco", 0, 3, args, &st);
    assert_int_equal(st, SL_ECORRUPT);
    assert_non_null(strstr(sl_pipeline_error(p), "file_name"));
    sl_pipeline_destroy(p);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", root, files[k]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/ann.json", root);
    unlink(path);
    rmdir(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transforms),
        cmocka_unit_test(test_transforms_bad),
        cmocka_unit_test(test_points_and_boxes),
        cmocka_unit_test(test_random_bbox_crop),
        cmocka_unit_test(test_box_encoder),
        cmocka_unit_test(test_ssd_random_crop),
        cmocka_unit_test(test_select_masks_and_mask_pixel),
        cmocka_unit_test(test_readers_coco),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
