/* tests/fuzz/fuzz_roi.c: fuzz target "roi": decoding only part of an image must give the bytes
 * of the whole decode (docs/fuzzing.md). Wrong pixels are findings, not only crashes.
 *
 * Two kinds of check:
 * - Fused chains: decoders.image feeding a consumer that reads a window (crop,
 *   crop_mirror_normalize, resize, random_resized_crop) runs fused (fuse_samples=1: the decoder
 *   decodes only the window's columns, from its first row) and unfused (the whole decode, then
 *   the consumer). Both must succeed or both fail, and give the same bytes. The harness checks
 *   that the fused decoder really is fused (sl_node_stats.fused_into).
 * - decoders.image_random_crop: its window, decoded alone, must equal the same window of the
 *   whole decode; the window is recomputed here from its documented algorithm (torchvision's
 *   RandomResizedCrop, ops/image/crop_window.h) and the public sl_rng, keyed by (seed,
 *   iteration 0, sample 0). With `size`, it must equal random_resized_crop (same seed, so the
 *   same window) of the whole decode exactly when no DCT scaling applies (a PNG, or a window
 *   less than 4 x size in some extent); a DCT-scaled decode is only checked for its shape. It
 *   must not fail where the whole decode succeeds. (The reverse, a damaged file it accepts
 *   because its window ends above the damage, is issue 15's finding 6, left open: not checked.)
 *
 * Input, header mode: 8 bytes h[0..7], then the image.
 *   h[0] bits 0-2  the case: 0 crop, 1 crop_mirror_normalize, 2 resize -> crop,
 *                  3 random_resized_crop, 4 image_random_crop, 5 image_random_crop with size,
 *                  6 crop -> resize, 7 resize(resize_shorter) -> crop_mirror_normalize
 *        bits 3-4  variant: crops' out_of_bounds_policy (error, pad, trim_to_shape,
 *                  trim_to_shape); random cases' random_area / random_aspect_ratio /
 *                  num_attempts set (VARIANTS)
 *        bit 5     use_fast_idct
 *        bits 6-7  output_type: RGB, BGR, GRAY, RGB
 *   h[1], h[2]  crops: window height, width = 1 + h; random cases: seed = h[1] | h[2] << 8
 *   h[3], h[4]  crops: crop_pos_x, crop_pos_y = h / 255
 *   h[5], h[6]  resize -> crop, crop -> resize: resize_y, resize_x = 1 + h; case 7:
 *               resize_shorter = 1 + h[5]; random cases with a size: (h[5] % 64 + 1) x
 *               (h[6] % 64 + 1); crop_mirror_normalize (cases 1, 7): h[6] bit 0 mirror, bit 1
 *               output_layout HWC (else CHW)
 *   h[7]        unused
 * Bare mode: an input that starts like a JPEG (ff d8 ff) or a PNG is the image itself, checked
 * in each of the BARE configurations (among them issue 15's two crop windows of finding 1), so
 * that plain image files are regression inputs as they are.
 *
 * Images announcing more than MAX_PIXELS (256 Ki) are skipped. Pipelines are kept across inputs,
 * the least recently used replaced: the deterministic cases' fused/unfused pairs (KEPT
 * configurations) and the random cases' pipelines (KEPT_RANDOM, keyed by the whole
 * configuration, seed and size included), each random input at its pipeline's next iteration
 * (the windows are drawn per seed, iteration and sample; the reference draws the same). A
 * random case's finding at an iteration other than 0 is rechecked on a fresh pipeline
 * (iteration 0), so that it reproduces from its file where it can; where only that iteration
 * fails, the message says which, and FUZZ_ROI_ITERATION=k in the environment reruns the random
 * cases at iteration k (a fresh pipeline, the same input run k times before).
 *
 * libFuzzer mutates only header-mode inputs (LLVMFuzzerCustomMutator: a bare input is mutated as
 * the image of a header-mode one): bare mode, eight checks per input, is for given files.
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"

/* Every input decodes its image 2 to 18 times: a quarter of the decode target's limit (512 x 512)
 * keeps the target fast; larger images take the same paths. */
#define MAX_PIXELS (FZ_MAX_PIXELS / 4)

enum kase { CROP, CMN, RESIZE_CROP, RRC, IRC, IRC_SIZE, CROP_RESIZE, RESIZE_CMN };

static const char *const case_names[] = {"crop",
                                         "crop_mirror_normalize",
                                         "resize -> crop",
                                         "random_resized_crop",
                                         "decoders.image_random_crop",
                                         "decoders.image_random_crop(size)",
                                         "crop -> resize",
                                         "resize -> crop_mirror_normalize"};
static const char *const type_names[] = {"RGB", "BGR", "GRAY", "RGB"};
static const char *const policies[] = {"error", "pad", "trim_to_shape", "trim_to_shape"};

/* random_area, random_aspect_ratio, num_attempts of the random cases, by variant. */
static const struct {
    double area[2], ratio[2];
    int attempts;
} VARIANTS[4] = {
    {{0.08, 1.0}, {0.75, 1.333333}, 10},
    {{0.01, 0.2}, {0.1, 10.0}, 10},
    {{0.5, 1.0}, {0.2, 5.0}, 1},
    {{1e-6, 1e-3}, {0.5, 2.0}, 3},
};

/* What one check runs: the choices made in the graph (config), then the per-sample values. */
typedef struct config {
    int kase, variant, type;
    bool fast, mirror, hwc;
    int size[2];   /* random cases: output size (h, w) */
    uint32_t seed; /* random cases */
} config;

typedef struct params {
    config c;
    float crop[2]; /* window (h, w) */
    float pos[2];  /* crop_pos_x, crop_pos_y */
    float resize[2];
} params;

/* The bare-mode configurations: plain image files run each of these. */
static const params BARE[] = {
    /* issue 15, finding 1: the fused crops that differed (trim_to_shape) */
    {.c = {.kase = CROP, .variant = 2, .type = 0}, .crop = {13, 21}, .pos = {0.7f, 0.6f}},
    {.c = {.kase = CROP, .variant = 2, .type = 2}, .crop = {9, 30}, .pos = {0.3f, 0.9f}},
    {.c = {.kase = CMN, .variant = 1, .type = 1, .mirror = true},
     .crop = {17, 11},
     .pos = {0.25f, 1.0f}},
    {.c = {.kase = RESIZE_CROP, .variant = 2, .type = 0},
     .crop = {5, 40},
     .pos = {0.5f, 0.1f},
     .resize = {47, 61}},
    {.c = {.kase = RRC, .variant = 0, .type = 0, .size = {32, 24}, .seed = 5}},
    {.c = {.kase = IRC, .variant = 0, .type = 0, .seed = 8}},
    {.c = {.kase = IRC, .variant = 1, .type = 2, .seed = 2}},
    {.c = {.kase = IRC_SIZE, .variant = 0, .type = 0, .size = {24, 20}, .seed = 3}},
};

static bool is_random(int kase)
{
    return kase == RRC || kase == IRC || kase == IRC_SIZE;
}

static bool uses_window(int kase)
{
    return kase == CROP || kase == CMN || kase == RESIZE_CROP || kase == CROP_RESIZE ||
           kase == RESIZE_CMN;
}

/* Resize values fed per sample: resize_y and resize_x, or resize_shorter alone. */
static int uses_resize(int kase)
{
    return kase == RESIZE_CROP || kase == CROP_RESIZE ? 2 : kase == RESIZE_CMN;
}

static void parse_header(const uint8_t *h, params *p)
{
    memset(p, 0, sizeof *p);
    p->c.kase = h[0] & 7;
    p->c.variant = (h[0] >> 3) & 3;
    p->c.fast = (h[0] >> 5) & 1;
    p->c.type = h[0] >> 6;
    if (is_random(p->c.kase)) {
        p->c.seed = (uint32_t)h[1] | (uint32_t)h[2] << 8;
        if (p->c.kase != IRC) {
            p->c.size[0] = h[5] % 64 + 1;
            p->c.size[1] = h[6] % 64 + 1;
        }
        return;
    }
    p->crop[0] = 1.0f + h[1];
    p->crop[1] = 1.0f + h[2];
    p->pos[0] = h[3] / 255.0f;
    p->pos[1] = h[4] / 255.0f;
    p->resize[0] = 1.0f + h[5];
    p->resize[1] = 1.0f + h[6];
    if (p->c.kase == CMN || p->c.kase == RESIZE_CMN) {
        p->c.mirror = h[6] & 1;
        p->c.hwc = (h[6] >> 1) & 1;
    }
}

/* ---- graphs ----------------------------------------------------------------------------- */

static void add(sl_graph *g, const char *op, const char *name, const char *input)
{
    fz_check(sl_graph_add(g, op, name, NULL), name);
    if (input)
        fz_check(sl_graph_input(g, name, input), name);
}

static void add_decoder(sl_graph *g, const char *op, const char *name, const config *c)
{
    add(g, op, name, "img");
    fz_check(sl_graph_arg_str(g, name, "output_type", type_names[c->type]), "output_type");
    fz_check(sl_graph_arg_bool(g, name, "use_fast_idct", c->fast), "use_fast_idct");
}

static void set_random(sl_graph *g, const char *node, const config *c, bool size)
{
    fz_check(sl_graph_arg_int(g, node, "seed", c->seed), "seed");
    fz_check(sl_graph_arg_floats(g, node, "random_area", VARIANTS[c->variant].area, 2), "area");
    fz_check(sl_graph_arg_floats(g, node, "random_aspect_ratio", VARIANTS[c->variant].ratio, 2),
             "random_aspect_ratio");
    fz_check(sl_graph_arg_int(g, node, "num_attempts", VARIANTS[c->variant].attempts), "attempts");
    if (size) {
        double s[2] = {c->size[0], c->size[1]};
        fz_check(sl_graph_arg_floats(g, node, "size", s, 2), "size");
    }
}

/* A window consumer (crop or crop_mirror_normalize) `name` of `input`, the window per sample. */
static void add_window_op(sl_graph *g, const char *op, const char *name, const char *input,
                          const config *c)
{
    add(g, op, name, input);
    fz_check(sl_graph_arg_input(g, name, "crop", "win"), "crop");
    fz_check(sl_graph_arg_input(g, name, "crop_pos_x", "px"), "crop_pos_x");
    fz_check(sl_graph_arg_input(g, name, "crop_pos_y", "py"), "crop_pos_y");
    fz_check(sl_graph_arg_str(g, name, "out_of_bounds_policy", policies[c->variant]), "policy");
    if (strcmp(op, "crop_mirror_normalize") == 0) {
        double mean[] = {12.5, 130.0, 255.0}, std[] = {3.0, 64.0, 0.5};
        int ch = c->type == 2 ? 1 : 3;
        fz_check(sl_graph_arg_int(g, name, "mirror", c->mirror), "mirror");
        fz_check(sl_graph_arg_floats(g, name, "mean", mean, ch), "mean");
        fz_check(sl_graph_arg_floats(g, name, "std", std, ch), "std");
        fz_check(sl_graph_arg_str(g, name, "output_layout", c->hwc ? "HWC" : "CHW"), "layout");
    }
}

/* The graph of check c. Deterministic cases: the chain, output "out" (run fused and unfused).
 * Random cases, one pipeline (windows are drawn per node from the seed alone, so equal nodes
 * draw equal windows): RRC: "dec" -> "out" (fused) beside "whole" -> "rrc" with "whole" an
 * output (so never fused); IRC: "out" beside "whole"; IRC_SIZE: "out" beside "whole" -> "rrc".
 * Outputs: "out", then "whole", then "rrc" where present. */
static sl_graph *graph(const config *c)
{
    sl_graph *g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    add(g, "external_source", "img", NULL);
    if (uses_window(c->kase)) {
        add(g, "external_source", "win", NULL);
        add(g, "external_source", "px", NULL);
        add(g, "external_source", "py", NULL);
    }
    if (uses_resize(c->kase) > 0)
        add(g, "external_source", "ry", NULL);
    if (uses_resize(c->kase) > 1)
        add(g, "external_source", "rx", NULL);
    switch (c->kase) {
    case CROP:
    case CMN:
        add_decoder(g, "decoders.image", "dec", c);
        add_window_op(g, c->kase == CROP ? "crop" : "crop_mirror_normalize", "out", "dec", c);
        break;
    case RESIZE_CROP:
    case RESIZE_CMN:
        add_decoder(g, "decoders.image", "dec", c);
        add(g, "resize", "rs", "dec");
        if (c->kase == RESIZE_CROP) {
            fz_check(sl_graph_arg_input(g, "rs", "resize_y", "ry"), "resize_y");
            fz_check(sl_graph_arg_input(g, "rs", "resize_x", "rx"), "resize_x");
        } else {
            fz_check(sl_graph_arg_input(g, "rs", "resize_shorter", "ry"), "resize_shorter");
        }
        add_window_op(g, c->kase == RESIZE_CROP ? "crop" : "crop_mirror_normalize", "out", "rs", c);
        break;
    case CROP_RESIZE:
        add_decoder(g, "decoders.image", "dec", c);
        add_window_op(g, "crop", "cr", "dec", c);
        add(g, "resize", "out", "cr");
        fz_check(sl_graph_arg_input(g, "out", "resize_y", "ry"), "resize_y");
        fz_check(sl_graph_arg_input(g, "out", "resize_x", "rx"), "resize_x");
        break;
    case RRC:
        add_decoder(g, "decoders.image", "dec", c);
        add(g, "random_resized_crop", "out", "dec");
        set_random(g, "out", c, true);
        break;
    case IRC:
    case IRC_SIZE:
        add_decoder(g, "decoders.image_random_crop", "out", c);
        set_random(g, "out", c, c->kase == IRC_SIZE);
        break;
    }
    fz_check(sl_graph_output(g, "out"), "output out");
    if (is_random(c->kase)) {
        add_decoder(g, "decoders.image", "whole", c);
        fz_check(sl_graph_output(g, "whole"), "output whole");
        if (c->kase != IRC) {
            add(g, "random_resized_crop", "rrc", "whole");
            set_random(g, "rrc", c, true);
            fz_check(sl_graph_output(g, "rrc"), "output rrc");
        }
    }
    return g;
}

/* The whole decode alone, for a verdict: does the image decode? */
static sl_graph *whole_graph(const config *c)
{
    sl_graph *g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    add(g, "external_source", "img", NULL);
    add_decoder(g, "decoders.image", "whole", c);
    fz_check(sl_graph_output(g, "whole"), "output whole");
    return g;
}

/* The harness must test what it means to: `node` runs fused into another node, or not. */
static void expect_fused(const sl_pipeline *p, const char *node, bool fused)
{
    for (int i = 0; i < sl_pipeline_num_nodes(p); i++) {
        sl_node_stats st;
        fz_check(sl_pipeline_node_stats(p, i, &st), "sl_pipeline_node_stats");
        if (strcmp(st.name, node) == 0 && (st.fused_into != NULL) != fused)
            fz_fail("harness: node \"%s\" is%s fused, expected the opposite", node,
                    fused ? " not" : "");
    }
}

/* ---- running ---------------------------------------------------------------------------- */

static void feed(sl_pipeline *p, const params *pr, const uint8_t *img, size_t n)
{
    fz_feed_bytes(p, "img", img, n);
    if (uses_window(pr->c.kase)) {
        fz_feed_floats(p, "win", pr->crop, 2);
        fz_feed_floats(p, "px", &pr->pos[0], 0);
        fz_feed_floats(p, "py", &pr->pos[1], 0);
    }
    if (uses_resize(pr->c.kase) > 0)
        fz_feed_floats(p, "ry", &pr->resize[0], 0);
    if (uses_resize(pr->c.kase) > 1)
        fz_feed_floats(p, "rx", &pr->resize[1], 0);
}

static void describe(const params *pr, char *out, size_t cap)
{
    const config *c = &pr->c;
    int k = snprintf(out, cap, "%s, %s, variant %d%s: ", case_names[c->kase], type_names[c->type],
                     c->variant, c->fast ? ", fast IDCT" : "");
    if (is_random(c->kase))
        snprintf(out + k, cap - (size_t)k, "seed %u, size %dx%d", c->seed, c->size[0], c->size[1]);
    else
        snprintf(out + k, cap - (size_t)k, "window %gx%g at (%g, %g), resize %gx%g", pr->crop[0],
                 pr->crop[1], pr->pos[0], pr->pos[1], pr->resize[0], pr->resize[1]);
}

/* Fused against unfused: same verdict, same bytes. */
static void check_fused(sl_pipeline *f, sl_pipeline *u, const params *pr, const uint8_t *img,
                        size_t n)
{
    feed(f, pr, img, n);
    feed(u, pr, img, n);
    sl_status sf = fz_run(f), su = fz_run(u);
    char what[256];
    describe(pr, what, sizeof what);
    if ((sf == SL_OK) != (su == SL_OK))
        fz_fail("%s: fused run %s, unfused run %s (%s)", what, sl_status_name(sf),
                sl_status_name(su), sf != SL_OK ? sl_pipeline_error(f) : sl_pipeline_error(u));
    const char *why;
    if (sf == SL_OK &&
        !fz_sample_equal(sl_pipeline_output(f, 0), 0, sl_pipeline_output(u, 0), 0, &why))
        fz_fail("%s: fused and unfused outputs differ: %s", what, why);
}

/* ops/image/crop_window.h's algorithm, written again from its description: the window of sample
 * 0 in iteration `it`. */
static void reference_window(const config *c, int64_t it, int W, int H, int win[4])
{
    const double *area = VARIANTS[c->variant].area, *ratio = VARIANTS[c->variant].ratio;
    sl_rng r;
    sl_rng_init(&r, c->seed, (uint64_t)it, 0);
    double total = (double)W * H, lr0 = log(ratio[0]), lr1 = log(ratio[1]);
    for (int k = 0; k < VARIANTS[c->variant].attempts; k++) {
        double a = total * (area[0] + (area[1] - area[0]) * sl_rng_uniform(&r));
        double q = exp(lr0 + (lr1 - lr0) * sl_rng_uniform(&r));
        double w = rint(sqrt(a * q)), h = rint(sqrt(a / q));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            win[2] = (int)w, win[3] = (int)h;
            win[1] = (int)sl_rng_below(&r, (uint64_t)(H - win[3] + 1));
            win[0] = (int)sl_rng_below(&r, (uint64_t)(W - win[2] + 1));
            return;
        }
    }
    double in = (double)W / H, v;
    win[2] = W, win[3] = H;
    if (in < ratio[0]) {
        v = rint(W / ratio[0]);
        win[3] = v < 1 ? 1 : v > H ? H : (int)v;
    } else if (in > ratio[1]) {
        v = rint(H * ratio[1]);
        win[2] = v < 1 ? 1 : v > W ? W : (int)v;
    }
    win[0] = (W - win[2]) / 2;
    win[1] = (H - win[3]) / 2;
}

/* The window out of the whole decode must be the operator's output. Returns NULL, or the
 * finding's text (in msg). */
static const char *check_window(const sl_batch *crop, const sl_batch *full, const int win[4],
                                const char *what, char *msg, size_t cap)
{
    const int64_t *cs = sl_batch_shape(crop, 0), *fs = sl_batch_shape(full, 0);
    if (cs[0] != win[3] || cs[1] != win[2] || cs[2] != fs[2]) {
        snprintf(msg, cap,
                 "%s: output %lldx%lldx%lld, the window is %dx%d at (%d, %d) of %lldx%lld", what,
                 (long long)cs[0], (long long)cs[1], (long long)cs[2], win[3], win[2], win[0],
                 win[1], (long long)fs[0], (long long)fs[1]);
        return msg;
    }
    const uint8_t *c = sl_batch_sample_data(crop, 0), *f = sl_batch_sample_data(full, 0);
    size_t row = (size_t)(win[2] * cs[2]);
    for (int y = 0; y < win[3]; y++) {
        const uint8_t *want = f + (((int64_t)(win[1] + y) * fs[1] + win[0]) * fs[2]);
        if (memcmp(c + (size_t)y * row, want, row) != 0) {
            snprintf(msg, cap,
                     "%s: row %d of the %dx%d window at (%d, %d) differs from the whole decode",
                     what, y, win[3], win[2], win[0], win[1]);
            return msg;
        }
    }
    return NULL;
}

/* ---- the pipelines: kept per configuration, or built per input -------------------------- */

/* Pipelines kept across inputs: the deterministic cases' fused and unfused pair, and the whole
 * decode alone (kase -1) per output type and IDCT. Up to KEPT configurations at a time, the
 * least recently used one replaced: a fuzzing run draws from about 150 configurations, of which
 * a few dozen carry most executions; 12 kept round-robin rebuilt a pair every third input. */
#define KEPT 48
static struct kept {
    config c;
    sl_pipeline *p[2];
    uint64_t used; /* when last used (a count of uses) */
} kept[KEPT];
static uint64_t kept_clock;

/* Configurations that build the same graph: output types 0 and 3 are both RGB, the crops'
 * variants 2 and 3 both trim_to_shape. */
static bool same_config(const config *a, const config *b)
{
    return a->kase == b->kase && strcmp(policies[a->variant], policies[b->variant]) == 0 &&
           strcmp(type_names[a->type], type_names[b->type]) == 0 && a->fast == b->fast &&
           a->mirror == b->mirror && a->hwc == b->hwc;
}

/* The kept pipelines of c: built on first use. */
static sl_pipeline **kept_pipelines(const config *c)
{
    struct kept *k = &kept[0];
    for (int i = 0; i < KEPT; i++) {
        if (kept[i].p[0] && same_config(&kept[i].c, c)) {
            kept[i].used = ++kept_clock;
            return kept[i].p;
        }
        if (kept[i].used < k->used)
            k = &kept[i];
    }
    sl_pipeline_destroy(k->p[0]);
    sl_pipeline_destroy(k->p[1]);
    k->c = *c;
    k->used = ++kept_clock;
    sl_graph *g = c->kase < 0 ? whole_graph(c) : graph(c);
    k->p[0] = fz_pipeline(g, 1);
    k->p[1] = c->kase < 0 ? NULL : fz_pipeline(g, 0);
    sl_graph_destroy(g);
    if (c->kase >= 0)
        expect_fused(k->p[0], "dec", true);
    return k->p;
}

/* Does the image decode whole (decoders.image, the same output type and IDCT)? */
static bool decodes_whole(const params *pr, const uint8_t *img, size_t n)
{
    config w = {.kase = -1, .type = pr->c.type, .fast = pr->c.fast};
    sl_pipeline *p = kept_pipelines(&w)[0];
    fz_feed_bytes(p, "img", img, n);
    return fz_run(p) == SL_OK;
}

/* ---- the random cases ------------------------------------------------------------------ */

/* A fresh pipeline for random case c (graph's comment): at iteration 0. */
static sl_pipeline *random_pipeline(const config *c)
{
    sl_graph *g = graph(c);
    sl_pipeline *p = fz_pipeline(g, 1);
    sl_graph_destroy(g);
    if (c->kase == RRC) {
        expect_fused(p, "dec", true);
        expect_fused(p, "whole", false);
    }
    return p;
}

/* Runs random case pr on p, whose next iteration is `it`, and checks it. Returns NULL, or the
 * finding's text (in msg). */
static const char *random_check(sl_pipeline *p, int64_t it, const params *pr, const uint8_t *img,
                                size_t n, char *msg, size_t cap)
{
    const config *c = &pr->c;
    char what[256];
    describe(pr, what, sizeof what);
    feed(p, pr, img, n);
    if (fz_run(p) != SL_OK) {
        /* the whole decode fails too: fine (and image_random_crop may well have accepted it,
         * issue 15's finding 6, not checked); if it succeeds, the failure is the window's */
        sl_error_detail d;
        sl_pipeline_error_detail(p, &d);
        if (!decodes_whole(pr, img, n))
            return NULL;
        snprintf(msg, cap, "%s: node \"%s\" fails where the whole decode succeeds: %s", what,
                 d.node ? d.node : "?", sl_pipeline_error(p));
        return msg;
    }
    if (sl_pipeline_iteration(p) != it)
        fz_fail("harness: iteration %lld ran, %lld expected", (long long)sl_pipeline_iteration(p),
                (long long)it);
    const sl_batch *out = sl_pipeline_output(p, 0), *whole = sl_pipeline_output(p, 1);
    const int64_t *ws = sl_batch_shape(whole, 0), *os = sl_batch_shape(out, 0);
    int win[4];
    reference_window(c, it, (int)ws[1], (int)ws[0], win);
    const char *why;
    if (c->kase == IRC)
        return check_window(out, whole, win, what, msg, cap);
    if (c->kase == RRC) {
        if (fz_sample_equal(out, 0, sl_pipeline_output(p, 2), 0, &why))
            return NULL;
        snprintf(msg, cap, "%s: fused and unfused outputs differ (window %dx%d at (%d, %d)): %s",
                 what, win[3], win[2], win[0], win[1], why);
        return msg;
    }
    if (os[0] != c->size[0] || os[1] != c->size[1] || os[2] != ws[2]) {
        snprintf(msg, cap, "%s: output %lldx%lldx%lld", what, (long long)os[0], (long long)os[1],
                 (long long)os[2]);
        return msg;
    }
    bool jpeg = n >= 2 && img[0] == 0xff && img[1] == 0xd8;
    bool scaled = jpeg && win[2] >= 4 * c->size[1] && win[3] >= 4 * c->size[0];
    if (scaled || fz_sample_equal(out, 0, sl_pipeline_output(p, 2), 0, &why))
        return NULL;
    snprintf(msg, cap,
             "%s: differs from random_resized_crop of the whole decode (window %dx%d at (%d, %d)): "
             "%s",
             what, win[3], win[2], win[0], win[1], why);
    return msg;
}

/* Random pipelines kept across inputs, keyed by their whole configuration (seed and size
 * included), the least recently used replaced: a fuzzer's mutants mostly keep their base
 * input's header, so the next inputs of a configuration run on its pipeline, each at the next
 * iteration, whose windows (keyed by seed, iteration and sample) the reference draws for that
 * iteration. Building a pipeline per input took about a seventh of the target's time. */
#define KEPT_RANDOM 32
static struct kept_random {
    config c;
    sl_pipeline *p;
    int64_t runs;  /* iterations run: the next one's number */
    uint64_t used; /* when last used (kept_clock) */
} kept_random[KEPT_RANDOM];

static bool same_random(const config *a, const config *b)
{
    return a->kase == b->kase && a->variant == b->variant &&
           strcmp(type_names[a->type], type_names[b->type]) == 0 && a->fast == b->fast &&
           a->seed == b->seed && a->size[0] == b->size[0] && a->size[1] == b->size[1];
}

static struct kept_random *kept_random_pipeline(const config *c)
{
    struct kept_random *k = &kept_random[0];
    for (int i = 0; i < KEPT_RANDOM; i++) {
        if (kept_random[i].p && same_random(&kept_random[i].c, c)) {
            k = &kept_random[i];
            k->used = ++kept_clock;
            return k;
        }
        if (kept_random[i].used < k->used)
            k = &kept_random[i];
    }
    sl_pipeline_destroy(k->p);
    k->c = *c;
    k->p = random_pipeline(c);
    k->runs = 0;
    k->used = ++kept_clock;
    return k;
}

/* FUZZ_ROI_ITERATION=k (replay): random cases run on a fresh pipeline at iteration k (the k
 * iterations before it run the same input), as a kept pipeline ran them; -1 when unset. */
static int64_t replay_iteration(void)
{
    static int64_t it = -2;
    if (it == -2) {
        const char *e = getenv("FUZZ_ROI_ITERATION");
        it = e && *e ? strtoll(e, NULL, 10) : -1;
    }
    return it;
}

/* A random case: on its kept pipeline; a finding at an iteration other than 0 is checked again
 * on a fresh pipeline (iteration 0), so that it reproduces from its file where it can, and says
 * its iteration where it does not (FUZZ_ROI_ITERATION then reruns it). */
static void check_random(const params *pr, const uint8_t *img, size_t n)
{
    char msg[512], msg0[512];
    int64_t at = replay_iteration();
    if (at >= 0) {
        sl_pipeline *p = random_pipeline(&pr->c);
        for (int64_t i = 0; i < at; i++) {
            feed(p, pr, img, n);
            fz_run(p);
        }
        const char *f = random_check(p, at, pr, img, n, msg, sizeof msg);
        if (f)
            fz_fail("%s (iteration %lld)", f, (long long)at);
        sl_pipeline_destroy(p);
        return;
    }
    struct kept_random *k = kept_random_pipeline(&pr->c);
    int64_t it = k->runs++;
    const char *f = random_check(k->p, it, pr, img, n, msg, sizeof msg);
    if (!f)
        return;
    if (it == 0)
        fz_fail("%s", f);
    sl_pipeline *q = random_pipeline(&pr->c);
    const char *f0 = random_check(q, 0, pr, img, n, msg0, sizeof msg0);
    if (f0)
        fz_fail("%s", f0);
    fz_fail("%s (at iteration %lld of a pipeline kept across inputs; at iteration 0 this input "
            "passes: FUZZ_ROI_ITERATION=%lld reruns it at that iteration)",
            f, (long long)it, (long long)it);
}

static void check(const params *pr, const uint8_t *img, size_t n)
{
    if (is_random(pr->c.kase)) {
        check_random(pr, img, n);
        return;
    }
    sl_pipeline **fu = kept_pipelines(&pr->c);
    check_fused(fu[0], fu[1], pr, img, n);
}

/* True for a bare-mode input: one that starts like a JPEG (ff d8 ff) or a PNG. */
static bool is_bare(const uint8_t *data, size_t size)
{
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    return (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) ||
           (size >= 8 && memcmp(data, png, 8) == 0);
}

/* ---- mutation: header mode only --------------------------------------------------------- */

/* libFuzzer's own mutator (weak: the replay build has no libFuzzer and never mutates). */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Turns an input into a header-mode one: 8 header bytes drawn from seed before it (its last
 * bytes dropped when it would exceed max). */
static size_t add_header(uint8_t *data, size_t size, size_t max, unsigned int seed)
{
    if (max < 8)
        return size;
    if (size > max - 8)
        size = max - 8;
    memmove(data + 8, data, size);
    for (int i = 0; i < 8; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = (uint8_t)(seed >> 16);
    }
    if (is_bare(data, size + 8))
        data[1] ^= 0x80; /* neither ff d8 ff nor the PNG signature any more */
    return size + 8;
}

/* libFuzzer's mutations, but never a bare-mode mutant: a bare input (a plain image among the
 * regression inputs, or one the corpus kept from earlier runs) is mutated as the image of a
 * header-mode input. Bare mode runs eight checks per input and four pipeline builds, about
 * five times a header-mode input's cost, and its configurations are among header mode's; with
 * bare mutants a quarter of the executions were bare and took more than half of the target's time.
 * Every input that runs is still checked as before, bare ones included (the regression inputs in
 * the first pass over the corpus). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (is_bare(data, size))
        size = add_header(data, size, max_size, seed);
    size = LLVMFuzzerMutate(data, size, max_size);
    if (is_bare(data, size))
        size = add_header(data, size, max_size, ~seed);
    return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (is_bare(data, size)) {
        if (fz_image_too_large(data, size, MAX_PIXELS))
            return 0;
        for (size_t k = 0; k < sizeof BARE / sizeof BARE[0]; k++)
            check(&BARE[k], data, size);
        return 0;
    }
    if (size < 8 || fz_image_too_large(data + 8, size - 8, MAX_PIXELS))
        return 0;
    params pr;
    parse_header(data, &pr);
    check(&pr, data + 8, size - 8);
    return 0;
}
