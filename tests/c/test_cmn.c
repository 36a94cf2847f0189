/* test_cmn: crop_mirror_normalize through the public C API.
 *
 * Pipelines readers.file (SLUICE_TEST_TREE, a class tree of real JPEGs of 40..120 px a side) ->
 * decoders.image -> crop_mirror_normalize, with the decoder's output also a pipeline output, so
 * every CMN output is checked against a reference computed here from the decoded pixels of the
 * same iteration: a plain per-element loop (window, mirror, (x - mean) * (scale * (1/std)) +
 * shift in float32, fill, cast) written independently of the operator's row kernels. Window
 * anchors of the DALI rounding example (in - crop = 9 along H, -1 along W, pos 0.5 -> anchor_y
 * 5 round / 4 truncate, anchor_x -1 round / 0 truncate) are hand-computed constants, not the
 * formula. A float32 input comes from random.uniform.
 *
 * Tolerances: float32 1e-5 relative (an FMA-contracting build may differ in the last bit);
 * float16 one unit in the last place; integers exact except within 1e-4 of a .5 (but exact
 * ties, e.g. scale 0.5, must round away from zero).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/sluice.h"

#include "core/half.h"

static const char *g_tree; /* SLUICE_TEST_TREE */

/* ---- pipeline helpers -------------------------------------------------------------------- */

static sl_pipeline *make(sl_graph *g, int batch_size, sl_status *status)
{
    sl_pipeline_options o;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    o.batch_size = batch_size;
    o.num_threads = 2;
    o.prefetch_queue_depth = 2;
    o.seed = 7;
    if (sl_pipeline_create(g, &o, &p) != SL_OK)
        fail_msg("create: %s", sl_last_error());
    sl_graph_destroy(g);
    *status = sl_pipeline_build(p);
    return p;
}

static sl_pipeline *make_ok(sl_graph *g, int batch_size)
{
    sl_status st;
    sl_pipeline *p = make(g, batch_size, &st);
    if (st != SL_OK)
        fail_msg("build: %s: %s", sl_status_name(st), sl_pipeline_error(p));
    return p;
}

static void run_ok(sl_pipeline *p)
{
    sl_status st = sl_pipeline_run(p);
    if (st != SL_OK)
        fail_msg("run: %s: %s", sl_status_name(st), sl_pipeline_error(p));
}

/* reader -> "dec" -> "cmn" with the given (name, JSON) argument pairs, NULL-terminated; no
 * outputs yet. */
static sl_graph *cmn_chain(const char *const *kv)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", g_tree), SL_OK);
    assert_int_equal(sl_graph_add(g, "decoders.image", "dec", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "dec", "reader:0"), SL_OK);
    assert_int_equal(sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "cmn", "dec"), SL_OK);
    for (int k = 0; kv && kv[k]; k += 2)
        if (sl_graph_arg_json(g, "cmn", kv[k], kv[k + 1]) != SL_OK)
            fail_msg("arg %s = %s: %s", kv[k], kv[k + 1], sl_last_error());
    return g;
}

/* cmn_chain with "dec" as pipeline output 0 and "cmn" as output 1. */
static sl_graph *cmn_graph(const char *const *kv)
{
    sl_graph *g = cmn_chain(kv);
    assert_int_equal(sl_graph_output(g, "dec"), SL_OK);
    assert_int_equal(sl_graph_output(g, "cmn"), SL_OK);
    return g;
}

/* ---- the reference ----------------------------------------------------------------------- */

enum { OOB_ERROR, OOB_PAD, OOB_TRIM };

typedef struct ref {
    double crop_h, crop_w; /* 0: the whole extent */
    double pos_x, pos_y;
    bool truncate;
    int policy;
    int nmean, nstd, nfill;
    double mean[4], std[4], fill[4];
    double scale, shift;
    sl_dtype dtype;
    bool hwc, pad_output;
    int mirror;
    bool fixed_anchor; /* use ay, ax (hand-computed) instead of the formula */
    int64_t ay, ax;
    const sl_batch *crop_in; /* per-sample crop (H, W) as float32, or NULL */
} ref;

static ref ref_default(void)
{
    ref r;
    memset(&r, 0, sizeof r);
    r.pos_x = r.pos_y = 0.5;
    r.nmean = r.nstd = r.nfill = 1;
    r.std[0] = 1.0;
    r.scale = 1.0;
    r.dtype = SL_DTYPE_FLOAT32;
    return r;
}

static double in_at(const sl_batch *b, int i, int64_t k)
{
    const void *d = sl_batch_sample_data(b, i);
    return sl_batch_dtype(b) == SL_DTYPE_UINT8 ? ((const uint8_t *)d)[k] : ((const float *)d)[k];
}

static double scalar_at(const sl_batch *b, int i)
{
    const void *d = sl_batch_sample_data(b, i);
    switch (sl_batch_dtype(b)) {
    case SL_DTYPE_INT32: return *(const int32_t *)d;
    case SL_DTYPE_FLOAT32: return *(const float *)d;
    default: fail_msg("unexpected argument dtype");
    }
    return 0;
}

static int64_t rounded(float f, bool truncate)
{
    return (int64_t)(truncate ? truncf(f) : roundf(f));
}

/* Halves away from zero, saturated to [lo, hi]. */
static double to_int(double v, double lo, double hi)
{
    double r = v < 0 ? -floor(-v + 0.5) : floor(v + 0.5);
    return r < lo ? lo : r > hi ? hi : r;
}

static void check_elem(const ref *r, const sl_batch *out, int i, int64_t k, float v, bool fill,
                       const char *where)
{
    const void *d = sl_batch_sample_data(out, i);
    switch (r->dtype) {
    case SL_DTYPE_FLOAT32: {
        float got = ((const float *)d)[k];
        if (!(fabsf(got - v) <= 1e-5f * fmaxf(1.0f, fabsf(v))))
            fail_msg("%s: got %.9g, expected %.9g", where, got, v);
        break;
    }
    case SL_DTYPE_FLOAT16: {
        float c = v < -65504.0f ? -65504.0f : v > 65504.0f ? 65504.0f : v;
        int e = sl__half_from_float(c), got = ((const uint16_t *)d)[k];
        if (abs(got - e) > (fill ? 0 : 1))
            fail_msg("%s: got half 0x%04x, expected 0x%04x (%g)", where, got, e, v);
        break;
    }
    case SL_DTYPE_UINT8:
    case SL_DTYPE_INT8: {
        bool u = r->dtype == SL_DTYPE_UINT8;
        double got = u ? ((const uint8_t *)d)[k] : ((const int8_t *)d)[k];
        double e = u ? to_int(v, 0, 255) : to_int(v, -128, 127);
        double frac = fabs(v - floor(v) - 0.5);
        bool near_tie = frac > 0 && frac < 1e-4;
        if (got != e && !(near_tie && fabs(got - e) <= 1))
            fail_msg("%s: got %g, expected %g (from %.9g)", where, got, e, v);
        break;
    }
    default: fail_msg("bad dtype");
    }
}

/* Checks sample i of out against img. mirror / posx / posy: per-sample argument batches or NULL
 * for r's constants. */
static void check_sample(const ref *r, const sl_batch *img, const sl_batch *out, int i,
                         const sl_batch *mirror, const sl_batch *posx, const sl_batch *posy)
{
    const int64_t *s = sl_batch_shape(img, i);
    const int64_t H = s[0], W = s[1], C = s[2];
    double crop_h = r->crop_h, crop_w = r->crop_w;
    if (r->crop_in) {
        const float *cv = sl_batch_sample_data(r->crop_in, i);
        crop_h = cv[0];
        crop_w = cv[1];
    }
    int64_t ch = crop_h > 0 ? (int64_t)crop_h : H; /* truncated */
    int64_t cw = crop_w > 0 ? (int64_t)crop_w : W;
    double px = posx ? scalar_at(posx, i) : r->pos_x, py = posy ? scalar_at(posy, i) : r->pos_y;
    int64_t ay = r->fixed_anchor ? r->ay : rounded((float)py * (float)(H - ch), r->truncate);
    int64_t ax = r->fixed_anchor ? r->ax : rounded((float)px * (float)(W - cw), r->truncate);
    if (r->policy == OOB_TRIM) {
        int64_t y1 = ay + ch < H ? ay + ch : H, x1 = ax + cw < W ? ax + cw : W;
        ay = ay < 0 ? 0 : ay;
        ax = ax < 0 ? 0 : ax;
        ch = y1 - ay;
        cw = x1 - ax;
    }
    int64_t OC = C;
    if (r->pad_output)
        for (OC = 1; OC < C; OC *= 2) {
        }
    bool mir = mirror ? scalar_at(mirror, i) != 0 : r->mirror != 0;

    assert_int_equal(sl_batch_ndim(out), 3);
    const int64_t *os = sl_batch_shape(out, i);
    const int64_t want[3] = {r->hwc ? ch : OC, r->hwc ? cw : ch, r->hwc ? OC : cw};
    if (os[0] != want[0] || os[1] != want[1] || os[2] != want[2])
        fail_msg("sample %d (%lldx%lld): output shape (%lld, %lld, %lld), expected (%lld, %lld, "
                 "%lld)",
                 i, (long long)H, (long long)W, (long long)os[0], (long long)os[1],
                 (long long)os[2], (long long)want[0], (long long)want[1], (long long)want[2]);
    for (int64_t c = 0; c < OC; c++) {
        float m = (float)r->mean[r->nmean == 1 ? 0 : c];
        float k = (float)r->scale * (1.0f / (float)r->std[r->nstd == 1 ? 0 : c]);
        for (int64_t y = 0; y < ch; y++) {
            for (int64_t x = 0; x < cw; x++) {
                int64_t iy = ay + y, ix = mir ? ax + cw - 1 - x : ax + x;
                bool fill = c >= C || iy < 0 || iy >= H || ix < 0 || ix >= W;
                float v =
                    fill ? (float)r->fill[r->nfill == 1 ? 0 : c]
                         : ((float)in_at(img, i, (iy * W + ix) * C + c) - m) * k + (float)r->shift;
                int64_t o = r->hwc ? (y * cw + x) * OC + c : (c * ch + y) * cw + x;
                char where[128];
                snprintf(where, sizeof where, "sample %d, c %lld y %lld x %lld%s", i, (long long)c,
                         (long long)y, (long long)x, fill ? " (fill)" : "");
                check_elem(r, out, i, o, v, fill, where);
            }
        }
    }
}

static void check_batch(const ref *r, const sl_batch *img, const sl_batch *out,
                        const sl_batch *mirror, const sl_batch *posx)
{
    assert_int_equal(sl_batch_size(out), sl_batch_size(img));
    assert_int_equal(sl_batch_dtype(out), r->dtype);
    assert_string_equal(sl_batch_layout(out), r->hwc ? "HWC" : "CHW");
    for (int i = 0; i < sl_batch_size(img); i++)
        check_sample(r, img, out, i, mirror, posx, NULL);
}

/* Builds cmn_graph(kv), runs `iters` iterations of batch 6 and checks each against r. */
static void run_case(const char *const *kv, const ref *r, int iters)
{
    sl_pipeline *p = make_ok(cmn_graph(kv), 6);
    for (int it = 0; it < iters; it++) {
        run_ok(p);
        check_batch(r, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1), NULL, NULL);
    }
    sl_pipeline_destroy(p);
}

/* ---- cases ------------------------------------------------------------------------------- */

static void test_defaults_whole_image_chw(void **state)
{
    (void)state;
    ref r = ref_default();
    run_case(NULL, &r, 2);
}

static void test_imagenet_crop_chw(void **state)
{
    (void)state;
    static const char *const kv[] = {
        "crop", "[32, 32]", "mean", "[123.675, 116.28, 103.53]", "std", "[58.395, 57.12, 57.375]",
        NULL};
    ref r = ref_default();
    r.crop_h = r.crop_w = 32;
    r.nmean = r.nstd = 3;
    memcpy(r.mean, (double[]){123.675, 116.28, 103.53}, 3 * sizeof(double));
    memcpy(r.std, (double[]){58.395, 57.12, 57.375}, 3 * sizeof(double));
    run_case(kv, &r, 2);
}

/* The same normalisation when cmn runs fused into a consumer (its output then never exists as a
 * batch, so it stores through the cache; as the last node it streams its stores around the
 * cache): cast float32 -> float32 copies it out. */
static void test_fused_into_consumer_chw(void **state)
{
    (void)state;
    static const char *const kv[] = {
        "crop", "[32, 32]", "mean", "[123.675, 116.28, 103.53]", "std", "[58.395, 57.12, 57.375]",
        NULL};
    sl_graph *g = cmn_chain(kv);
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "mirror", "coin"), SL_OK);
    assert_int_equal(sl_graph_add(g, "cast", "copy", NULL), SL_OK);
    assert_int_equal(sl_graph_input(g, "copy", "cmn"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "copy", "dtype", "FLOAT"), SL_OK);
    assert_int_equal(sl_graph_output(g, "dec"), SL_OK);
    assert_int_equal(sl_graph_output(g, "copy"), SL_OK);
    assert_int_equal(sl_graph_output(g, "coin"), SL_OK);
    ref r = ref_default();
    r.crop_h = r.crop_w = 32;
    r.nmean = r.nstd = 3;
    memcpy(r.mean, (double[]){123.675, 116.28, 103.53}, 3 * sizeof(double));
    memcpy(r.std, (double[]){58.395, 57.12, 57.375}, 3 * sizeof(double));
    sl_pipeline *p = make_ok(g, 8);
    for (int it = 0; it < 2; it++) {
        run_ok(p);
        check_batch(&r, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1),
                    sl_pipeline_output(p, 2), NULL);
    }
    const char *fused_into = NULL;
    for (int n = 0; n < sl_pipeline_num_nodes(p); n++) {
        sl_node_stats st;
        assert_int_equal(sl_pipeline_node_stats(p, n, &st), SL_OK);
        if (!strcmp(st.name, "cmn"))
            fused_into = st.fused_into;
    }
    assert_non_null(fused_into); /* the case this test is for */
    assert_string_equal(fused_into, "copy");
    sl_pipeline_destroy(p);
}

/* Fractional crop extents are truncated; crop_h / crop_w alone; positions 0 and 1. */
static void test_crop_hw_truncated_and_positions(void **state)
{
    (void)state;
    static const char *const kv[] = {"crop_h", "30.9",       "crop_w", "21.5", "crop_pos_x",
                                     "1.0",    "crop_pos_y", "0.0",    NULL};
    ref r = ref_default();
    r.crop_h = 30;
    r.crop_w = 21;
    r.pos_x = 1.0;
    r.pos_y = 0.0;
    run_case(kv, &r, 1);

    static const char *const kv2[] = {"crop_w",   "17",           "crop_pos_x", "0.3",
                                      "rounding", "\"truncate\"", NULL};
    ref r2 = ref_default();
    r2.crop_w = 17;
    r2.pos_x = 0.3;
    r2.truncate = true;
    run_case(kv2, &r2, 1);
}

static void test_hwc_scale_shift_scalar_mean_std(void **state)
{
    (void)state;
    static const char *const kv[] = {
        "output_layout", "\"HWC\"", "mean", "100",  "std",      "50", "scale",
        "2.0",           "shift",   "10.0", "crop", "[24, 36]", NULL};
    ref r = ref_default();
    r.hwc = true;
    r.mean[0] = 100;
    r.std[0] = 50;
    r.scale = 2;
    r.shift = 10;
    r.crop_h = 24;
    r.crop_w = 36;
    run_case(kv, &r, 1);
}

static void test_float16(void **state)
{
    (void)state;
    static const char *const kv[] = {"dtype",  "\"float16\"",
                                     "mean",   "[123.675, 116.28, 103.53]",
                                     "std",    "[58.395, 57.12, 57.375]",
                                     "crop",   "[33, 35]",
                                     "mirror", "1",
                                     NULL};
    ref r = ref_default();
    r.dtype = SL_DTYPE_FLOAT16;
    r.nmean = r.nstd = 3;
    memcpy(r.mean, (double[]){123.675, 116.28, 103.53}, 3 * sizeof(double));
    memcpy(r.std, (double[]){58.395, 57.12, 57.375}, 3 * sizeof(double));
    r.crop_h = 33;
    r.crop_w = 35;
    r.mirror = 1;
    run_case(kv, &r, 1);

    /* Beyond the float16 range: saturated to +-65504 (DALI's ConvertSat), not inf. */
    static const char *const kv2[] = {"dtype", "\"float16\"", "scale", "1000",
                                      "shift", "-100000",     NULL};
    ref r2 = ref_default();
    r2.dtype = SL_DTYPE_FLOAT16;
    r2.scale = 1000;
    r2.shift = -100000;
    sl_pipeline *p = make_ok(cmn_graph(kv2), 6);
    run_ok(p);
    const sl_batch *out = sl_pipeline_output(p, 1);
    check_batch(&r2, sl_pipeline_output(p, 0), out, NULL, NULL);
    int seen_max = 0, seen_min = 0;
    for (int i = 0; i < sl_batch_size(out); i++) {
        const uint16_t *h = sl_batch_sample_data(out, i);
        for (int64_t k = 0; k < sl_batch_sample_numel(out, i); k++) {
            seen_max |= h[k] == 0x7bff;             /* 65504: x > 165.5 */
            seen_min |= h[k] == 0xfbff;             /* -65504: x < 34.5 */
            assert_true((h[k] & 0x7c00) != 0x7c00); /* no inf, no NaN */
        }
    }
    assert_true(seen_max && seen_min);
    sl_pipeline_destroy(p);
}

/* Counts outputs equal to v over a uint8/int8 batch. */
static int64_t count_value(const sl_batch *b, int v)
{
    int64_t n = 0;
    for (int i = 0; i < sl_batch_size(b); i++) {
        const void *d = sl_batch_sample_data(b, i);
        for (int64_t k = 0; k < sl_batch_sample_numel(b, i); k++) {
            int x = sl_batch_dtype(b) == SL_DTYPE_UINT8 ? ((const uint8_t *)d)[k]
                                                        : ((const int8_t *)d)[k];
            n += x == v;
        }
    }
    return n;
}

static void test_integer_outputs_saturate_and_round(void **state)
{
    (void)state;
    /* uint8: 4x - 300 saturates below x = 75 and above x = 138 */
    static const char *const kv[] = {"dtype", "\"uint8\"",     "scale",   "4", "shift",
                                     "-300",  "output_layout", "\"HWC\"", NULL};
    ref r = ref_default();
    r.dtype = SL_DTYPE_UINT8;
    r.scale = 4;
    r.shift = -300;
    r.hwc = true;
    sl_pipeline *p = make_ok(cmn_graph(kv), 6);
    run_ok(p);
    check_batch(&r, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1), NULL, NULL);
    assert_true(count_value(sl_pipeline_output(p, 1), 0) > 0);
    assert_true(count_value(sl_pipeline_output(p, 1), 255) > 0);
    sl_pipeline_destroy(p);

    /* uint8, scale 0.5: odd inputs are exact ties, which round away from zero */
    static const char *const kv2[] = {"dtype", "\"uint8\"", "scale", "0.5", NULL};
    ref r2 = ref_default();
    r2.dtype = SL_DTYPE_UINT8;
    r2.scale = 0.5;
    run_case(kv2, &r2, 1);

    /* int8: 2x - 256 saturates at both ends; shift -127.5 makes negative ties */
    static const char *const kv3[] = {"dtype", "\"int8\"", "scale", "2", "shift", "-256", NULL};
    ref r3 = ref_default();
    r3.dtype = SL_DTYPE_INT8;
    r3.scale = 2;
    r3.shift = -256;
    p = make_ok(cmn_graph(kv3), 6);
    run_ok(p);
    check_batch(&r3, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1), NULL, NULL);
    assert_true(count_value(sl_pipeline_output(p, 1), -128) > 0);
    assert_true(count_value(sl_pipeline_output(p, 1), 127) > 0);
    sl_pipeline_destroy(p);

    static const char *const kv4[] = {"dtype", "\"INT8\"", "shift", "-127.5", NULL};
    ref r4 = ref_default();
    r4.dtype = SL_DTYPE_INT8;
    r4.shift = -127.5;
    run_case(kv4, &r4, 1);
}

static void test_pad_output_fill_42(void **state)
{
    (void)state;
    static const char *const kv[] = {"pad_output",    "true",         "fill_values",
                                     "[0, 0, 0, 42]", "crop",         "[20, 20]",
                                     "mean",          "[10, 20, 30]", NULL};
    ref r = ref_default();
    r.pad_output = true;
    r.nfill = 4;
    r.fill[3] = 42;
    r.crop_h = r.crop_w = 20;
    r.nmean = 3;
    memcpy(r.mean, (double[]){10, 20, 30}, 3 * sizeof(double));
    sl_pipeline *p = make_ok(cmn_graph(kv), 6);
    run_ok(p);
    const sl_batch *out = sl_pipeline_output(p, 1);
    check_batch(&r, sl_pipeline_output(p, 0), out, NULL, NULL);
    const float *d = sl_batch_sample_data(out, 0); /* CHW: plane 3 all 42 */
    assert_int_equal(sl_batch_shape(out, 0)[0], 4);
    for (int k = 0; k < 20 * 20; k++)
        assert_true(d[3 * 400 + k] == 42.0f);
    sl_pipeline_destroy(p);

    /* HWC, uint8, one fill value for the padded channel */
    static const char *const kv2[] = {"pad_output", "true",  "fill_values", "255", "output_layout",
                                      "\"HWC\"",    "dtype", "\"uint8\"",   NULL};
    ref r2 = ref_default();
    r2.pad_output = true;
    r2.fill[0] = 255;
    r2.hwc = true;
    r2.dtype = SL_DTYPE_UINT8;
    run_case(kv2, &r2, 1);
}

/* Mirror per sample from random.coin_flip; crop_pos_x per sample from random.uniform. */
static void test_mirror_and_position_per_sample(void **state)
{
    (void)state;
    static const char *const kv[] = {
        "crop", "[32, 32]", "mean", "[123.675, 116.28, 103.53]", "std", "[58.395, 57.12, 57.375]",
        NULL};
    sl_graph *g = cmn_graph(kv);
    double unit[] = {0.0, 1.0};
    assert_int_equal(sl_graph_add(g, "random.coin_flip", "coin", NULL), SL_OK);
    assert_int_equal(sl_graph_add(g, "random.uniform", "pos", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_floats(g, "pos", "range", unit, 2), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "mirror", "coin"), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "crop_pos_x", "pos"), SL_OK);
    assert_int_equal(sl_graph_output(g, "coin"), SL_OK);
    assert_int_equal(sl_graph_output(g, "pos"), SL_OK);
    ref r = ref_default();
    r.crop_h = r.crop_w = 32;
    r.nmean = r.nstd = 3;
    memcpy(r.mean, (double[]){123.675, 116.28, 103.53}, 3 * sizeof(double));
    memcpy(r.std, (double[]){58.395, 57.12, 57.375}, 3 * sizeof(double));
    sl_pipeline *p = make_ok(g, 8);
    int seen[2] = {0, 0};
    for (int it = 0; it < 3; it++) {
        run_ok(p);
        const sl_batch *coin = sl_pipeline_output(p, 2);
        check_batch(&r, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1), coin,
                    sl_pipeline_output(p, 3));
        for (int i = 0; i < sl_batch_size(coin); i++)
            seen[scalar_at(coin, i) != 0]++;
    }
    assert_true(seen[0] > 0 && seen[1] > 0);
    sl_pipeline_destroy(p);
}

/* crop per sample from random.uniform: fractional extents, truncated per sample. */
static void test_crop_per_sample(void **state)
{
    (void)state;
    static const char *const kv[] = {"crop_pos_y", "0.7", "output_layout", "\"HWC\"", NULL};
    sl_graph *g = cmn_graph(kv);
    double range[] = {10.0, 40.0};
    int64_t two[] = {2};
    assert_int_equal(sl_graph_add(g, "random.uniform", "size", NULL), SL_OK);
    assert_int_equal(sl_graph_arg_floats(g, "size", "range", range, 2), SL_OK);
    assert_int_equal(sl_graph_arg_ints(g, "size", "shape", two, 1), SL_OK);
    assert_int_equal(sl_graph_arg_input(g, "cmn", "crop", "size"), SL_OK);
    assert_int_equal(sl_graph_output(g, "size"), SL_OK);
    ref r = ref_default();
    r.pos_y = 0.7;
    r.hwc = true;
    sl_pipeline *p = make_ok(g, 6);
    for (int it = 0; it < 2; it++) {
        run_ok(p);
        r.crop_in = sl_pipeline_output(p, 2);
        check_batch(&r, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1), NULL, NULL);
    }
    sl_pipeline_destroy(p);
}

/* Size of the first image of the tree (iteration 0, sample 0 of an unshuffled reader). */
static void first_image_size(int64_t *H, int64_t *W)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "readers.file", "reader", NULL);
    sl_graph_arg_str(g, "reader", "file_root", g_tree);
    sl_graph_add(g, "decoders.image", "dec", NULL);
    sl_graph_input(g, "dec", "reader:0");
    sl_graph_output(g, "dec");
    sl_pipeline *p = make_ok(g, 1);
    run_ok(p);
    *H = sl_batch_shape(sl_pipeline_output(p, 0), 0)[0];
    *W = sl_batch_shape(sl_pipeline_output(p, 0), 0)[1];
    sl_pipeline_destroy(p);
    assert_true(*H > 9 && *W > 1);
}

/* DALI's test_crop_rounding geometry on a real image: crop (H - 9, W + 1), pos 0.5. */
static void test_dali_rounding_example(void **state)
{
    (void)state;
    int64_t H, W;
    first_image_size(&H, &W);
    char crop[64];
    snprintf(crop, sizeof crop, "[%lld, %lld]", (long long)(H - 9), (long long)(W + 1));

    static const struct {
        const char *rounding, *policy;
        int64_t ay, ax; /* hand-computed: 0.5 * 9 = 4.5, 0.5 * -1 = -0.5 */
        int pol;
    } cases[] = {
        {"\"round\"", "\"pad\"", 5, -1, OOB_PAD},           /* pad column on the left */
        {"\"truncate\"", "\"pad\"", 4, 0, OOB_PAD},         /* pad column on the right */
        {"\"round\"", "\"trim_to_shape\"", 5, 0, OOB_TRIM}, /* window [-1, W] -> [0, W) */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *const kv[] = {"crop",
                                  crop,
                                  "rounding",
                                  cases[c].rounding,
                                  "out_of_bounds_policy",
                                  cases[c].policy,
                                  "fill_values",
                                  "7",
                                  "output_layout",
                                  "\"HWC\"",
                                  NULL};
        ref r = ref_default();
        r.crop_h = (double)(H - 9);
        r.crop_w = (double)(W + 1);
        r.policy = cases[c].pol;
        r.fill[0] = 7;
        r.hwc = true;
        r.fixed_anchor = true;
        r.ay = cases[c].ay;
        r.ax = cases[c].ax;
        sl_pipeline *p = make_ok(cmn_graph(kv), 1);
        run_ok(p);
        const sl_batch *img = sl_pipeline_output(p, 0), *out = sl_pipeline_output(p, 1);
        check_sample(&r, img, out, 0, NULL, NULL, NULL);

        /* The same, spelled out for row 0 and the edge columns. */
        const float *o = sl_batch_sample_data(out, 0);
        const uint8_t *in = sl_batch_sample_data(img, 0);
        int64_t ow = sl_batch_shape(out, 0)[1];
        if (cases[c].pol == OOB_TRIM) {
            assert_int_equal(ow, W);
            assert_true(o[0] == in[(5 * W + 0) * 3]);
        } else if (cases[c].ax < 0) {
            assert_int_equal(ow, W + 1);
            assert_true(o[0] == 7.0f && o[3] == in[(5 * W + 0) * 3]);
            assert_true(o[W * 3] == in[(5 * W + W - 1) * 3]);
        } else {
            assert_true(o[0] == in[(4 * W + 0) * 3] && o[W * 3] == 7.0f);
        }
        sl_pipeline_destroy(p);
    }
}

/* The mirror reverses the padded window too (DALI flips the whole window). */
static void test_mirror_with_padding(void **state)
{
    (void)state;
    static const char *const kv[] = {"crop",    "[130, 130]",  "out_of_bounds_policy",
                                     "\"pad\"", "fill_values", "[1, 2, 3]",
                                     "mirror",  "1",           NULL};
    ref r = ref_default();
    r.crop_h = r.crop_w = 130; /* larger than any image of the tree (<= 120) */
    r.policy = OOB_PAD;
    r.nfill = 3;
    memcpy(r.fill, (double[]){1, 2, 3}, 3 * sizeof(double));
    r.mirror = 1;
    run_case(kv, &r, 1);
}

static void test_out_of_bounds_error(void **state)
{
    (void)state;
    static const char *const kv[] = {"crop", "[200, 200]", NULL};
    sl_pipeline *p = make_ok(cmn_graph(kv), 4);
    sl_status st = sl_pipeline_run(p);
    assert_int_equal(st, SL_EINVAL);
    const char *msg = sl_pipeline_error(p);
    if (!strstr(msg, "out of bounds"))
        fail_msg("message: %s", msg);
    sl_error_detail d;
    sl_pipeline_error_detail(p, &d);
    assert_string_equal(d.op, "crop_mirror_normalize");
    assert_int_equal(d.iteration, 0);
    assert_true(d.sample >= 0);
    sl_pipeline_destroy(p);
}

static void expect_run_error(const char *const *kv, const char *word)
{
    sl_status st;
    sl_pipeline *p = make(cmn_graph(kv), 4, &st);
    if (st == SL_OK)
        st = sl_pipeline_run(p);
    assert_int_equal(st, SL_EINVAL);
    if (!strstr(sl_pipeline_error(p), word))
        fail_msg("expected \"%s\" in: %s", word, sl_pipeline_error(p));
    sl_pipeline_destroy(p);
}

static void test_bad_lengths(void **state)
{
    (void)state;
    static const char *const mean[] = {"mean", "[1.0, 2.0]", NULL};
    static const char *const std[] = {"std", "[1.0, 2.0, 3.0, 4.0]", NULL};
    static const char *const fill[] = {"pad_output", "true", "fill_values", "[1.0, 2.0, 3.0]",
                                       NULL};
    expect_run_error(mean, "mean");
    expect_run_error(std, "std");
    expect_run_error(fill, "fill_values");
}

static void expect_build_error(const char *const *kv, sl_status code, const char *w1,
                               const char *w2)
{
    sl_status st;
    sl_pipeline *p = make(cmn_graph(kv), 2, &st);
    assert_int_equal(st, code);
    const char *msg = sl_pipeline_error(p);
    if (!strstr(msg, w1) || (w2 && !strstr(msg, w2)))
        fail_msg("expected \"%s\"%s%s in: %s", w1, w2 ? " and " : "", w2 ? w2 : "", msg);
    sl_pipeline_destroy(p);
}

static void test_build_errors(void **state)
{
    (void)state;
    static const char *const both[] = {"crop", "[10, 10]", "crop_h", "10", NULL};
    static const char *const dtype[] = {"dtype", "\"int32\"", NULL};
    expect_build_error(both, SL_EINVAL, "crop_h", "crop and");
    expect_build_error(dtype, SL_EUNSUPPORTED, "int32", NULL);
}

/* A float32 HWC input with no layout, from random.uniform. */
static void test_float_input(void **state)
{
    (void)state;
    sl_graph *g = NULL;
    double range[] = {-20.0, 300.0};
    int64_t shape[] = {6, 5, 3};
    assert_int_equal(sl_graph_create(&g), SL_OK);
    sl_graph_add(g, "random.uniform", "img", NULL);
    sl_graph_arg_floats(g, "img", "range", range, 2);
    sl_graph_arg_ints(g, "img", "shape", shape, 3);
    sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL);
    sl_graph_input(g, "cmn", "img");
    sl_graph_arg_json(g, "cmn", "crop", "[4, 4]");
    sl_graph_arg_json(g, "cmn", "crop_pos_x", "0.25");
    sl_graph_arg_json(g, "cmn", "mirror", "1");
    sl_graph_arg_json(g, "cmn", "mean", "[10, 20, 30]");
    sl_graph_arg_json(g, "cmn", "std", "[2, 4, 8]");
    sl_graph_arg_json(g, "cmn", "dtype", "\"uint8\"");
    sl_graph_output(g, "img");
    sl_graph_output(g, "cmn");
    ref r = ref_default();
    r.crop_h = r.crop_w = 4;
    r.pos_x = 0.25; /* 0.25 * 1 = 0.25 -> 0 */
    r.mirror = 1;
    r.nmean = r.nstd = 3;
    memcpy(r.mean, (double[]){10, 20, 30}, 3 * sizeof(double));
    memcpy(r.std, (double[]){2, 4, 8}, 3 * sizeof(double));
    r.dtype = SL_DTYPE_UINT8;
    sl_pipeline *p = make_ok(g, 5);
    for (int it = 0; it < 2; it++) {
        run_ok(p);
        check_batch(&r, sl_pipeline_output(p, 0), sl_pipeline_output(p, 1), NULL, NULL);
    }
    sl_pipeline_destroy(p);
}

static int group_setup(void **state)
{
    (void)state;
    g_tree = getenv("SLUICE_TEST_TREE");
    return 0;
}

int main(void)
{
    if (!getenv("SLUICE_TEST_TREE")) {
        fprintf(stderr, "SKIP: SLUICE_TEST_TREE is not set (run under ctest)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_whole_image_chw),
        cmocka_unit_test(test_imagenet_crop_chw),
        cmocka_unit_test(test_fused_into_consumer_chw),
        cmocka_unit_test(test_crop_hw_truncated_and_positions),
        cmocka_unit_test(test_hwc_scale_shift_scalar_mean_std),
        cmocka_unit_test(test_float16),
        cmocka_unit_test(test_integer_outputs_saturate_and_round),
        cmocka_unit_test(test_pad_output_fill_42),
        cmocka_unit_test(test_mirror_and_position_per_sample),
        cmocka_unit_test(test_crop_per_sample),
        cmocka_unit_test(test_dali_rounding_example),
        cmocka_unit_test(test_mirror_with_padding),
        cmocka_unit_test(test_out_of_bounds_error),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_float_input),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
