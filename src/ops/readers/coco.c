/* readers.coco: reads a COCO-format detection data set: image files and their boxes, labels,
 * polygons and ids from the annotation JSON (DALI's fn.readers.coco).
 *
 * Exports: const sl_op_def sl_op_readers_coco ("readers.coco", CPU).
 *
 * init parses `annotations_file` with jansson into a flat table (boxes, labels, polygons and
 * vertices of all images, and per image its offsets and counts), following DALI's rules:
 * images sorted by id (or in the order of `images`, whose names not in the JSON are skipped);
 * annotations of an image in file order, without those whose bbox w or h is below
 * `size_threshold`, or (without include_iscrowd) marked iscrowd; categories renumbered 1, 2, ...
 * in the order of "categories" (unless avoid_class_remapping; an unknown id becomes 0);
 * `ltrb` makes boxes [l, t, r, b], `ratio` divides x by the image's width and y by its height;
 * `skip_empty` drops images without annotations. Malformed JSON or fields of the wrong type fail
 * the build naming the file and the entry. With pixelwise_masks the table keeps the polygons in
 * pixels and the RLE segmentations' runs (decoded and bounds-checked here); run_sample
 * rasterises them into each sample's (H, W, 1) mask (see "pixelwise masks" below).
 * Invariant: after init the table never changes; setup (serial, in order) moves the cursor
 * shared by the readers (reader.h) and writes the picked image indices into the iteration data.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/readers/reader.h"

enum {
    A_FILE_ROOT,
    A_ANNOTATIONS_FILE,
    A_LTRB,
    A_RATIO,
    A_SIZE_THRESHOLD,
    A_SKIP_EMPTY,
    A_INCLUDE_ISCROWD,
    A_AVOID_CLASS_REMAPPING,
    A_IMAGES,
    A_POLYGON_MASKS,
    A_PIXELWISE_MASKS,
    A_IMAGE_IDS,
    A_RANDOM_SHUFFLE,
    A_SEED,
    A_SHARD_ID,
    A_NUM_SHARDS,
    A_STICK_TO_SHARD,
    A_PAD_LAST_BATCH,
    NUM_ARGS
};

enum { O_IMAGES, O_BBOXES, O_LABELS, O_POLYGONS, O_VERTICES, O_MASKS, O_IMAGE_IDS, NUM_OUTPUTS };

typedef struct image {
    char *path; /* file_root/file_name, owned; the samples' source */
    int32_t id, width, height;
    int64_t box0, nbox;   /* into boxes (x4) and labels */
    int64_t poly0, npoly; /* into polys (x3) */
    int64_t vert0, nvert; /* into verts (x2) */
    int64_t rle0, nrle;   /* into rles */
} image;

/* An RLE segmentation (COCO's "counts", column-major runs starting with background) of object
 * `obj` of its image: counts[c0, c1). */
typedef struct rle {
    int32_t obj;
    int64_t c0, c1;
} rle;

/* Largest pixelwise mask (pixels): 2^28, an int32 mask of 1 GiB. */
#define MAX_MASK_PIXELS ((int64_t)1 << 28)
/* Largest |vertex coordinate| the rasteriser takes: 5x it still fits an int. */
#define MAX_MASK_COORD ((double)(1 << 26))

typedef struct coco {
    image *img;
    int64_t nimg;
    float *boxes;
    int32_t *labels;
    int32_t *polys; /* [object, first vertex, end vertex] per polygon, per image */
    float *verts;   /* ratio-scaled with polygon_masks; pixels with pixelwise_masks */
    rle *rles;
    uint32_t *counts;
    int64_t nboxes, npolys, nverts, cap_boxes, cap_labels, cap_polys, cap_verts;
    int64_t nrles, ncounts, cap_rles, cap_counts;
    bool polygon_masks, pixelwise_masks, image_ids;
    sl__cursor cur;
} coco;

static const sl__cursor_args cursor_args = {.random_shuffle = A_RANDOM_SHUFFLE,
                                            .seed = A_SEED,
                                            .shard_id = A_SHARD_ID,
                                            .num_shards = A_NUM_SHARDS,
                                            .stick_to_shard = A_STICK_TO_SHARD,
                                            .pad_last_batch = A_PAD_LAST_BATCH};

static void coco_fini(void *state)
{
    coco *c = state;
    if (!c)
        return;
    for (int64_t i = 0; i < c->nimg; i++)
        sl__free(c->img[i].path);
    sl__free(c->img);
    sl__free(c->boxes);
    sl__free(c->labels);
    sl__free(c->polys);
    sl__free(c->verts);
    sl__free(c->rles);
    sl__free(c->counts);
    sl__cursor_fini(&c->cur);
    sl__free(c);
}

/* Grows *p (entries of `size` bytes, *cap of them) to hold `need` entries. */
static bool grow(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return true;
    int64_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *q = sl__realloc(*p, (size_t)nc * size);
    if (!q)
        return false;
    *p = q;
    *cap = nc;
    return true;
}

/* ---- parsing ------------------------------------------------------------------------------ */

typedef struct parser {
    sl_op_init *ini;
    const char *file;
    coco *c;
    float threshold;
    bool ltrb, ratio, iscrowd, remap, skip_empty;
    json_t *cats;   /* the "categories" array or NULL */
    json_t *anns;   /* the "annotations" array or NULL */
    json_t *images; /* the "images" array or NULL */
} parser;

static sl_status bad(parser *P, const char *what, size_t k, const char *msg)
{
    return sl_init_fail(P->ini, SL_ECORRUPT, "annotations_file \"%s\": %s[%zu]: %s", P->file, what,
                        k, msg);
}

/* An integer field of an object: SL_OK and *v, SL_ENOTFOUND when absent, else an error. */
static sl_status int_field(parser *P, json_t *o, const char *key, const char *what, size_t k,
                           int32_t *v)
{
    json_t *x = json_object_get(o, key);
    if (!x)
        return SL_ENOTFOUND;
    double d = json_is_integer(x) ? (double)json_integer_value(x)
               : json_is_real(x)  ? json_real_value(x)
                                  : NAN;
    if (!(d >= INT32_MIN && d <= INT32_MAX) || d != floor(d)) {
        char msg[96];
        snprintf(msg, sizeof msg, "\"%s\" is not a 32-bit integer", key);
        return bad(P, what, k, msg);
    }
    *v = (int32_t)d;
    return SL_OK;
}

/* Category id -> label: its 1-based position in "categories" (the first of equal ids), or the
 * id itself without remapping; 0 for an id not listed. */
static int32_t label_of(parser *P, int32_t id)
{
    if (!P->remap)
        return id;
    size_t k;
    json_t *cat;
    json_array_foreach(P->cats, k, cat)
    {
        json_t *x = json_is_object(cat) ? json_object_get(cat, "id") : NULL;
        if (json_is_integer(x) && json_integer_value(x) == id)
            return (int32_t)(k + 1);
    }
    return 0;
}

static sl_status check_categories(parser *P)
{
    size_t k;
    json_t *cat;
    json_array_foreach(P->cats, k, cat)
    {
        int32_t id;
        if (!json_is_object(cat))
            continue;
        sl_status st = int_field(P, cat, "id", "categories", k, &id);
        if (st == SL_ENOTFOUND)
            return bad(P, "categories", k, "missing \"id\"");
        if (st != SL_OK)
            return st;
    }
    return SL_OK;
}

/* Appends one run to c->counts. */
static bool push_count(coco *c, int64_t v)
{
    if (!grow((void **)&c->counts, &c->cap_counts, c->ncounts + 1, sizeof(uint32_t)))
        return false;
    c->counts[c->ncounts++] = (uint32_t)v;
    return true;
}

/* Checks one decoded run and appends it. Returns NULL or what is wrong. */
static const char *add_count(coco *c, int64_t x, int64_t npix, int64_t *sum)
{
    if (x < 0 || x > npix - *sum)
        return "its runs are negative or cover more than the image's height x width pixels";
    *sum += x;
    return push_count(c, x) ? NULL : "out of memory";
}

/* Decodes COCO's compressed RLE string into c->counts (its runs start at c->counts[c0]): each
 * count is a little-endian series of 5-bit groups, one character ('0' + group) each, bit 0x20
 * of a group saying "more follow" and bit 0x10 of the last one the sign; from the fourth count
 * on, the value is a difference to the count two places before. Returns NULL or what is wrong
 * with the string. */
static const char *decode_counts(coco *c, const char *str, int64_t c0, int64_t npix)
{
    int64_t sum = 0;
    for (size_t p = 0; str[p];) {
        int64_t x = 0;
        bool more = true;
        for (int k = 0; more; k++, p++) {
            if (!str[p])
                return "it ends inside a count";
            int g = (unsigned char)str[p] - 48;
            if (g < 0 || g > 63)
                return "it holds a character outside '0'..'o'";
            if (k >= 7)
                return "a count is longer than 7 characters";
            x |= (int64_t)(g & 0x1f) << (5 * k);
            more = g & 0x20;
            if (!more && (g & 0x10))
                x -= (int64_t)1 << (5 * (k + 1)); /* the last group's sign bit */
        }
        if (c->ncounts - c0 > 2)
            x += c->counts[c->ncounts - 2];
        const char *why = add_count(c, x, npix, &sum);
        if (why)
            return why;
    }
    return NULL;
}

/* Adds the RLE segmentation `seg` ({"size": [h, w], "counts": [...] or "..."}) of object `obj`
 * of image im, annotation k. */
static sl_status add_rle(parser *P, image *im, json_t *seg, size_t k, int32_t obj)
{
    coco *c = P->c;
    json_t *size = json_object_get(seg, "size"), *cnt = json_object_get(seg, "counts");
    int64_t h = -1, w = -1;
    if (json_is_array(size) && json_array_size(size) == 2 &&
        json_is_integer(json_array_get(size, 0)) && json_is_integer(json_array_get(size, 1))) {
        h = json_integer_value(json_array_get(size, 0));
        w = json_integer_value(json_array_get(size, 1));
    }
    if (h != im->height || w != im->width) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "RLE \"segmentation\" \"size\" must be [height, width] of its image, [%d, %d]",
                 (int)im->height, (int)im->width);
        return bad(P, "annotations", k, msg);
    }
    if (!grow((void **)&c->rles, &c->cap_rles, c->nrles + 1, sizeof(rle)))
        return sl_init_fail(P->ini, SL_ENOMEM, "out of memory for the annotations");
    const int64_t c0 = c->ncounts, npix = h * w;
    const char *why = NULL;
    if (json_is_string(cnt) && json_string_length(cnt) > 0) {
        why = decode_counts(c, json_string_value(cnt), c0, npix);
    } else if (json_is_array(cnt) && json_array_size(cnt) > 0) {
        int64_t sum = 0;
        for (size_t q = 0; !why && q < json_array_size(cnt); q++) {
            json_t *x = json_array_get(cnt, q);
            why = json_is_integer(x) ? add_count(c, json_integer_value(x), npix, &sum)
                                     : "its counts must be integers";
        }
    } else {
        why = "it needs \"counts\": a non-empty list of runs or a compressed RLE string";
    }
    if (why) {
        c->ncounts = c0;
        if (strcmp(why, "out of memory") == 0)
            return sl_init_fail(P->ini, SL_ENOMEM, "out of memory for the annotations");
        char msg[192];
        snprintf(msg, sizeof msg, "RLE \"segmentation\": %s", why);
        return bad(P, "annotations", k, msg);
    }
    c->rles[c->nrles++] = (rle){.obj = obj, .c0 = c0, .c1 = c->ncounts};
    im->nrle++;
    return SL_OK;
}

/* Adds annotation k (of image im) to the table, when it passes the filters. */
static sl_status add_annotation(parser *P, image *im, json_t *a, size_t k)
{
    coco *c = P->c;
    int32_t cat = 0, crowd = 0;
    sl_status st = int_field(P, a, "category_id", "annotations", k, &cat);
    if (st == SL_ENOTFOUND)
        return bad(P, "annotations", k, "missing \"category_id\"");
    if (st != SL_OK || ((st = int_field(P, a, "iscrowd", "annotations", k, &crowd)) != SL_OK &&
                        st != SL_ENOTFOUND))
        return st;
    json_t *bb = json_object_get(a, "bbox");
    if (!json_is_array(bb) || json_array_size(bb) != 4)
        return bad(P, "annotations", k, "\"bbox\" must be a list of exactly 4 numbers");
    double b[4];
    for (int q = 0; q < 4; q++) {
        json_t *x = json_array_get(bb, (size_t)q);
        if (!json_is_number(x))
            return bad(P, "annotations", k, "\"bbox\" must be a list of exactly 4 numbers");
        b[q] = json_number_value(x);
    }
    if (crowd && !P->iscrowd)
        return SL_OK;
    if (!((float)b[2] >= P->threshold && (float)b[3] >= P->threshold))
        return SL_OK;
    json_t *seg =
        c->polygon_masks || c->pixelwise_masks ? json_object_get(a, "segmentation") : NULL;
    int64_t npoly = 0, nvert = 0;
    if (json_is_array(seg)) {
        size_t q;
        json_t *poly;
        json_array_foreach(seg, q, poly)
        {
            if (!json_is_array(poly) || json_array_size(poly) % 2)
                return bad(P, "annotations", k,
                           "\"segmentation\" polygons must be lists of x, y coordinates");
            for (size_t v = 0; v < json_array_size(poly); v++) {
                json_t *x = json_array_get(poly, v);
                if (!json_is_number(x))
                    return bad(P, "annotations", k,
                               "\"segmentation\" polygons must be lists of x, y numbers");
                if (c->pixelwise_masks && !(fabs(json_number_value(x)) <= MAX_MASK_COORD))
                    return bad(P, "annotations", k,
                               "\"segmentation\" polygon coordinates must lie within "
                               "+-67108864 to be rasterised (pixelwise_masks)");
            }
            npoly++;
            nvert += (int64_t)json_array_size(poly) / 2;
        }
    }
    if (!grow((void **)&c->boxes, &c->cap_boxes, c->nboxes + 1, 4 * sizeof(float)) ||
        !grow((void **)&c->labels, &c->cap_labels, c->nboxes + 1, sizeof(int32_t)) ||
        !grow((void **)&c->polys, &c->cap_polys, c->npolys + npoly, 3 * sizeof(int32_t)) ||
        !grow((void **)&c->verts, &c->cap_verts, c->nverts + nvert, 2 * sizeof(float)))
        return sl_init_fail(P->ini, SL_ENOMEM, "out of memory for the annotations");
    const double sx = P->ratio ? im->width : 1.0, sy = P->ratio ? im->height : 1.0;
    /* the masks are rasterised in pixels, whatever `ratio` says (as DALI) */
    const double vx = c->pixelwise_masks ? 1.0 : sx, vy = c->pixelwise_masks ? 1.0 : sy;
    if (P->ltrb) {
        b[2] += b[0];
        b[3] += b[1];
    }
    float *o = c->boxes + 4 * c->nboxes;
    o[0] = (float)(b[0] / sx);
    o[1] = (float)(b[1] / sy);
    o[2] = (float)(b[2] / sx);
    o[3] = (float)(b[3] / sy);
    c->labels[c->nboxes] = label_of(P, cat);
    if (json_is_array(seg)) {
        size_t q;
        json_t *poly;
        json_array_foreach(seg, q, poly)
        {
            int32_t *pp = c->polys + 3 * c->npolys;
            pp[0] = (int32_t)im->nbox;
            pp[1] = (int32_t)im->nvert;
            for (size_t v = 0; v + 1 < json_array_size(poly); v += 2) {
                float *vv = c->verts + 2 * c->nverts++;
                vv[0] = (float)(json_number_value(json_array_get(poly, v)) / vx);
                vv[1] = (float)(json_number_value(json_array_get(poly, v + 1)) / vy);
                im->nvert++;
            }
            pp[2] = (int32_t)im->nvert;
            c->npolys++;
            im->npoly++;
        }
    } else if (c->pixelwise_masks && json_is_object(seg)) {
        if ((st = add_rle(P, im, seg, k, (int32_t)im->nbox)) != SL_OK)
            return st;
    }
    c->nboxes++;
    im->nbox++;
    return SL_OK;
}

typedef struct entry {
    int32_t id, width, height;
    const char *name;
    size_t k;
} entry;

static int cmp_id(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_ann(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* (image id, position) */
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The images to read, in order: entries of "images" sorted by id, or those named by `images`. */
static sl_status list_images(parser *P, entry **out, size_t *n)
{
    size_t k, m = 0;
    json_t *e;
    entry *all = sl__calloc(json_array_size(P->images) + 1, sizeof *all);
    if (!all)
        return sl_init_fail(P->ini, SL_ENOMEM, "out of memory for the image list");
    json_array_foreach(P->images, k, e)
    {
        if (!json_is_object(e))
            continue;
        entry *x = &all[m];
        sl_status st = int_field(P, e, "id", "images", k, &x->id);
        if (st == SL_ENOTFOUND)
            st = bad(P, "images", k, "missing \"id\"");
        if (st == SL_OK && (st = int_field(P, e, "width", "images", k, &x->width)) == SL_ENOTFOUND)
            st = SL_OK;
        if (st == SL_OK &&
            (st = int_field(P, e, "height", "images", k, &x->height)) == SL_ENOTFOUND)
            st = SL_OK;
        json_t *name = json_object_get(e, "file_name");
        if (st == SL_OK && !json_is_string(name))
            st = bad(P, "images", k, "missing \"file_name\" (a string)");
        if (st == SL_OK && P->ratio && (x->width <= 0 || x->height <= 0))
            st = bad(P, "images", k, "ratio=True needs a positive \"width\" and \"height\"");
        if (st == SL_OK && P->c->pixelwise_masks &&
            (x->width <= 0 || x->height <= 0 || (int64_t)x->width * x->height > MAX_MASK_PIXELS))
            st = bad(P, "images", k,
                     "pixelwise_masks=True needs a positive \"width\" and \"height\", at most "
                     "2^28 pixels in all");
        if (st != SL_OK) {
            sl__free(all);
            return st;
        }
        x->name = json_string_value(name);
        x->k = k;
        m++;
    }
    int nsel = 0;
    const char *const *sel =
        sl_init_arg_is_set(P->ini, A_IMAGES) ? sl_init_arg_strs(P->ini, A_IMAGES, &nsel) : NULL;
    if (!sel) {
        qsort(all, m, sizeof *all, cmp_id);
        *out = all;
        *n = m;
        return SL_OK;
    }
    entry *picked = sl__calloc((size_t)nsel + 1, sizeof *picked);
    size_t np = 0;
    if (!picked) {
        sl__free(all);
        return sl_init_fail(P->ini, SL_ENOMEM, "out of memory for the image list");
    }
    for (int s = 0; s < nsel; s++)
        for (size_t q = 0; q < m; q++)
            if (strcmp(all[q].name, sel[s]) == 0) {
                picked[np++] = all[q];
                break;
            }
    sl__free(all);
    *out = picked;
    *n = np;
    return SL_OK;
}

static char *join(const char *root, const char *name)
{
    size_t a = strlen(root), b = strlen(name);
    char *p = sl__malloc(a + b + 2);
    if (p) {
        memcpy(p, root, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

static sl_status build_table(parser *P)
{
    coco *c = P->c;
    entry *ents = NULL;
    size_t nent = 0;
    sl_status st = check_categories(P);
    if (st == SL_OK)
        st = list_images(P, &ents, &nent);
    if (st != SL_OK)
        return st;
    /* annotations grouped by image id, in file order: (image id, position) sorted */
    size_t nann = json_array_size(P->anns), k;
    int64_t *order = sl__calloc(2 * nann + 2, sizeof *order);
    c->img = sl__calloc(nent + 1, sizeof *c->img);
    if (!order || !c->img) {
        st = sl_init_fail(P->ini, SL_ENOMEM, "out of memory for %zu annotations", nann);
        goto done;
    }
    size_t na = 0;
    json_t *a;
    json_array_foreach(P->anns, k, a)
    {
        int32_t id;
        if (!json_is_object(a))
            continue;
        st = int_field(P, a, "image_id", "annotations", k, &id);
        if (st == SL_ENOTFOUND)
            st = bad(P, "annotations", k, "missing \"image_id\"");
        if (st != SL_OK)
            goto done;
        order[2 * na] = id;
        order[2 * na + 1] = (int64_t)k;
        na++;
    }
    qsort(order, na, 2 * sizeof *order, cmp_ann);
    const char *root = sl_init_arg_str(P->ini, A_FILE_ROOT);
    for (size_t e = 0; e < nent; e++) {
        image *im = &c->img[c->nimg];
        *im = (image){.id = ents[e].id,
                      .width = ents[e].width,
                      .height = ents[e].height,
                      .box0 = c->nboxes,
                      .poly0 = c->npolys,
                      .vert0 = c->nverts,
                      .rle0 = c->nrles};
        /* binary search the first annotation of this id */
        size_t lo = 0, hi = na;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (order[2 * mid] < im->id)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t q = lo; q < na && order[2 * q] == im->id; q++) {
            size_t ak = (size_t)order[2 * q + 1];
            if ((st = add_annotation(P, im, json_array_get(P->anns, ak), ak)) != SL_OK)
                goto done;
        }
        if (P->skip_empty && im->nbox == 0) {
            c->nboxes = im->box0; /* nothing was added */
            continue;
        }
        if (!(im->path = join(root, ents[e].name))) {
            st = sl_init_fail(P->ini, SL_ENOMEM, "out of memory for the image paths");
            goto done;
        }
        c->nimg++;
    }
    if (c->nimg == 0)
        st = sl_init_fail(P->ini, SL_ENOTFOUND,
                          "annotations_file \"%s\": no images to read (none listed%s)", P->file,
                          P->skip_empty ? ", or none with annotations (skip_empty)" : "");
done:
    sl__free(order);
    sl__free(ents);
    return st;
}

static sl_status parse(sl_op_init *ini, coco *c)
{
    const char *file = sl_init_arg_str(ini, A_ANNOTATIONS_FILE);
    json_error_t err;
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return sl_init_fail(ini, errno == ENOENT && err.line < 0 ? SL_ENOTFOUND : SL_ECORRUPT,
                            "annotations_file \"%s\": line %d, column %d: %s", file, err.line,
                            err.column, err.text);
    parser P = {.ini = ini,
                .file = file,
                .c = c,
                .threshold = (float)sl_init_arg_float(ini, A_SIZE_THRESHOLD),
                .ltrb = sl_init_arg_bool(ini, A_LTRB),
                .ratio = sl_init_arg_bool(ini, A_RATIO),
                .iscrowd = sl_init_arg_bool(ini, A_INCLUDE_ISCROWD),
                .remap = !sl_init_arg_bool(ini, A_AVOID_CLASS_REMAPPING),
                .skip_empty = sl_init_arg_bool(ini, A_SKIP_EMPTY)};
    sl_status st = SL_OK;
    if (!json_is_object(root))
        st = sl_init_fail(ini, SL_ECORRUPT, "annotations_file \"%s\": not a JSON object", file);
    static const char *const keys[] = {"images", "annotations", "categories"};
    json_t **slots[] = {&P.images, &P.anns, &P.cats};
    for (int q = 0; st == SL_OK && q < 3; q++) {
        json_t *v = json_object_get(root, keys[q]);
        if (v && !json_is_array(v))
            st = sl_init_fail(ini, SL_ECORRUPT, "annotations_file \"%s\": \"%s\" is not a list",
                              file, keys[q]);
        *slots[q] = v;
    }
    json_t *empty = json_array();
    for (int q = 0; q < 3; q++)
        if (!*slots[q])
            *slots[q] = empty;
    if (st == SL_OK && !empty)
        st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
    if (st == SL_OK)
        st = build_table(&P);
    json_decref(empty);
    json_decref(root);
    return st;
}

static sl_status coco_init(sl_op_init *ini, void **state)
{
    *state = NULL;
    if (!sl_init_arg_is_set(ini, A_FILE_ROOT))
        return sl_init_fail(ini, SL_EINVAL, "file_root is required: the images' directory");
    if (!sl_init_arg_str(ini, A_ANNOTATIONS_FILE)[0])
        return sl_init_fail(ini, SL_EINVAL,
                            "annotations_file is required (preprocessed annotations are not "
                            "supported)");
    if (sl_init_arg_bool(ini, A_PIXELWISE_MASKS) && sl_init_arg_bool(ini, A_POLYGON_MASKS))
        return sl_init_fail(ini, SL_EINVAL,
                            "pixelwise_masks and polygon_masks are mutually exclusive");
    coco *c = sl__calloc(1, sizeof *c);
    if (!c)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    c->polygon_masks = sl_init_arg_bool(ini, A_POLYGON_MASKS);
    c->pixelwise_masks = sl_init_arg_bool(ini, A_PIXELWISE_MASKS);
    c->image_ids = sl_init_arg_bool(ini, A_IMAGE_IDS);
    sl_status st = sl__cursor_config(ini, &cursor_args, &c->cur);
    if (st == SL_OK)
        st = parse(ini, c);
    if (st == SL_OK)
        st = sl__cursor_start(ini, &c->cur, c->nimg);
    if (st != SL_OK) {
        coco_fini(c);
        return st;
    }
    *state = c;
    return SL_OK;
}

/* ---- pixelwise masks ------------------------------------------------------------------------
 * The mask of an image is int32 (H, W, 1): each pixel holds the label of the objects whose
 * segmentation covers it, 0 where none does. An object's segmentation is the union of its
 * polygons, or its RLE; where objects of different labels overlap the larger label wins (DALI
 * merges the labels in ascending order, each over the ones before).
 * A polygon covers the pixels it would in COCO's own rasteriser (cocoapi's maskApi, which DALI
 * uses), re-derived here: the vertices are scaled by 5 and rounded to integers; each edge is
 * walked one unit at a time along its longer axis, the other coordinate rounded; wherever that
 * walk steps across the centre of pixel column X (between 5X + 2 and 5X + 3), the edge's
 * (smaller) y there, scaled back, becomes a boundary at row ceil(y / 5 + 0.1 - 0.5), clamped to
 * [0, H]. Pixels are toggled at each boundary going down a column, the columns one after the
 * other (so a boundary clamped to H toggles the top of the next column, as in COCO). In effect
 * pixel (X, Y) is inside when its centre (X + 0.5, Y + 0.5) is, up to the 1/5 pixel grid. */

/* Boundary at column X for an edge point at scaled y `v` (the smaller of the step's two). */
static int64_t boundary(int64_t X, int v, int64_t h)
{
    double y = ((double)v + 0.5) / 5.0 - 0.5;
    y = y < 0 ? 0 : y > (double)h ? (double)h : y;
    return X * h + (int64_t)ceil(y);
}

static int64_t ceil5(int64_t a)
{
    return a >= 0 ? (a + 4) / 5 : -((-a) / 5);
}
static int64_t floor5(int64_t a)
{
    return a >= 0 ? a / 5 : -((-a + 4) / 5);
}

/* The boundaries edge (xs, ys) -> (xe, ye) (scaled) makes in an h x w mask, appended to t[m..]
 * (t NULL: only counted). Returns the new m. */
static int64_t edge_boundaries(int xs, int ys, int xe, int ye, int64_t h, int64_t w, int64_t *t,
                               int64_t m)
{
    const int dx = abs(xe - xs), dy = abs(ye - ys);
    const bool along_x = dx >= dy;
    if (along_x ? xs > xe : ys > ye) { /* walk in increasing order of the longer axis */
        int q = xs;
        xs = xe;
        xe = q;
        q = ys;
        ys = ye;
        ye = q;
    }
    if (along_x) {
        if (dx == 0)
            return m;
        const double s = (double)(ye - ys) / dx;
        /* steps (i, i + 1), i in [0, dx), at x = xs + i: a column centre when xs + i = 5X + 2 */
        int64_t X0 = ceil5((int64_t)xs - 2), X1 = floor5((int64_t)xs + dx - 1 - 2);
        X0 = X0 < 0 ? 0 : X0;
        X1 = X1 > w - 1 ? w - 1 : X1;
        for (int64_t X = X0; X <= X1; X++, m++) {
            if (!t)
                continue;
            const int64_t i = 5 * X + 2 - xs;
            const int v0 = (int)(ys + s * (double)i + 0.5),
                      v1 = (int)(ys + s * (double)(i + 1) + 0.5);
            t[m] = boundary(X, v0 < v1 ? v0 : v1, h);
        }
        return m;
    }
    /* along y: x(i) = (int)(xs + s i + 0.5) is monotonic in i and moves by at most 1 a step */
    const double s = (double)(xe - xs) / dy;
#define XAT(i) ((int64_t)(int)(xs + s * (double)(i) + 0.5))
    const int64_t u0 = XAT(0), u1 = XAT(dy), lo = u0 < u1 ? u0 : u1, hi = u0 < u1 ? u1 : u0;
    int64_t X0 = ceil5(lo - 2), X1 = floor5(hi - 1 - 2);
    X0 = X0 < 0 ? 0 : X0;
    X1 = X1 > w - 1 ? w - 1 : X1;
    for (int64_t X = X0; X <= X1; X++, m++) {
        if (!t)
            continue;
        /* the first step end i1 in [1, dy] past column centre X, in the walk's direction */
        int64_t a = 1, b = dy;
        while (a < b) {
            const int64_t mid = a + (b - a) / 2;
            if (u1 > u0 ? XAT(mid) >= 5 * X + 3 : XAT(mid) <= 5 * X + 2)
                b = mid;
            else
                a = mid + 1;
        }
        t[m] = boundary(X, ys + (int)(a - 1), h);
    }
#undef XAT
    return m;
}

/* The boundaries of polygon verts[0..n) (pixels) in an h x w mask, into t (NULL: counted). */
static int64_t polygon_boundaries(const float *verts, int64_t n, int64_t h, int64_t w, int64_t *t)
{
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++) {
        const float *p = verts + 2 * j, *q = verts + 2 * ((j + 1) % n);
        /* |coordinates| <= MAX_MASK_COORD (checked at init), so 5x fits an int */
        m = edge_boundaries((int)(5.0 * p[0] + 0.5), (int)(5.0 * p[1] + 0.5),
                            (int)(5.0 * q[0] + 0.5), (int)(5.0 * q[1] + 0.5), h, w, t, m);
    }
    return m;
}

/* Sets pixels [a, b) of the column-major order of an h x w row-major mask to `label`. */
static void fill_run(int32_t *mask, int64_t h, int64_t w, int64_t a, int64_t b, int32_t label)
{
    while (a < b) {
        const int64_t x = a / h, y0 = a % h, y1 = y0 + (b - a < h - y0 ? b - a : h - y0);
        for (int64_t y = y0; y < y1; y++)
            mask[y * w + x] = label;
        a += y1 - y0;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Rasterises the masks of image im into mask (h x w). */
static sl_status render_masks(sl_ctx *ctx, const coco *c, const image *im, int32_t *mask)
{
    const int64_t h = im->height, w = im->width;
    memset(mask, 0, (size_t)(h * w) * sizeof *mask);
    if (im->nbox == 0)
        return SL_OK;
    /* objects by (label, index): a larger label is drawn later, over a smaller one */
    int64_t *order = sl_ctx_scratch_n(ctx, 0, (size_t)im->nbox * sizeof *order);
    if (!order)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for the masks of %lld objects",
                       (long long)im->nbox);
    for (int64_t j = 0; j < im->nbox; j++)
        order[j] = (int64_t)c->labels[im->box0 + j] * ((int64_t)1 << 32) + j;
    qsort(order, (size_t)im->nbox, sizeof *order, cmp_i64);
    for (int64_t r = 0; r < im->nbox; r++) {
        const int64_t obj = order[r] & 0xffffffff;
        const int32_t label = c->labels[im->box0 + obj];
        for (int64_t p = im->poly0; p < im->poly0 + im->npoly; p++) {
            const int32_t *pp = c->polys + 3 * p;
            if (pp[0] != obj || pp[2] <= pp[1])
                continue;
            const float *v = c->verts + 2 * (im->vert0 + pp[1]);
            const int64_t n = pp[2] - pp[1], nb = polygon_boundaries(v, n, h, w, NULL);
            if ((uint64_t)nb > sl_ctx_max_sample_bytes(ctx) / sizeof(int64_t))
                return sl_fail(ctx, SL_EINVAL,
                               "a polygon of object %lld crosses %lld pixel columns in all, more "
                               "than max_sample_bytes allows for rasterising it",
                               (long long)obj, (long long)nb);
            int64_t *t = sl_ctx_scratch_n(ctx, 1, (size_t)(nb + 1) * sizeof *t);
            if (!t)
                return sl_fail(ctx, SL_ENOMEM, "out of memory for a polygon's %lld boundaries",
                               (long long)nb);
            polygon_boundaries(v, n, h, w, t);
            qsort(t, (size_t)nb, sizeof *t, cmp_i64);
            t[nb] = h * w; /* an odd count: inside to the end */
            for (int64_t q = 0; q < nb; q += 2)
                fill_run(mask, h, w, t[q] < h * w ? t[q] : h * w,
                         t[q + 1] < h * w ? t[q + 1] : h * w, label);
        }
        for (int64_t k = im->rle0; k < im->rle0 + im->nrle; k++) {
            const rle *e = &c->rles[k];
            if (e->obj != obj)
                continue;
            int64_t at = 0;
            for (int64_t q = e->c0; q < e->c1; q++) {
                if ((q - e->c0) % 2)
                    fill_run(mask, h, w, at, at + c->counts[q], label);
                at += c->counts[q];
            }
        }
    }
    return SL_OK;
}

/* ---- per iteration ------------------------------------------------------------------------ */

/* The node's output index of each of NUM_OUTPUTS (-1: absent), as output_when says. */
static void output_index(const coco *c, int *o)
{
    int k = 0;
    for (int q = 0; q < NUM_OUTPUTS; q++)
        o[q] = -1;
    o[O_IMAGES] = k++;
    o[O_BBOXES] = k++;
    o[O_LABELS] = k++;
    if (c->polygon_masks) {
        o[O_POLYGONS] = k++;
        o[O_VERTICES] = k++;
    }
    if (c->pixelwise_masks)
        o[O_MASKS] = k++;
    if (c->image_ids)
        o[O_IMAGE_IDS] = k;
}

static sl_status coco_setup(sl_ctx *ctx)
{
    coco *c = sl_ctx_state(ctx);
    int64_t *idx = sl_ctx_iter_data(ctx);
    int o[NUM_OUTPUTS];
    output_index(c, o);
    sl_ctx_set_output(ctx, o[O_IMAGES], SL_DTYPE_UINT8, 1, "");
    sl_ctx_set_output(ctx, o[O_BBOXES], SL_DTYPE_FLOAT32, 2, "");
    sl_ctx_set_output(ctx, o[O_LABELS], SL_DTYPE_INT32, 2, "");
    if (c->polygon_masks) {
        sl_ctx_set_output(ctx, o[O_POLYGONS], SL_DTYPE_INT32, 2, "");
        sl_ctx_set_output(ctx, o[O_VERTICES], SL_DTYPE_FLOAT32, 2, "");
    }
    if (c->pixelwise_masks)
        sl_ctx_set_output(ctx, o[O_MASKS], SL_DTYPE_INT32, 3, "HWC");
    if (c->image_ids)
        sl_ctx_set_output(ctx, o[O_IMAGE_IDS], SL_DTYPE_INT32, 1, "");
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        idx[i] = sl__cursor_next(&c->cur);
        const image *im = &c->img[idx[i]];
        int64_t bshape[2] = {im->nbox, 4}, lshape[2] = {im->nbox, 1};
        sl_ctx_set_shape(ctx, o[O_BBOXES], i, bshape);
        sl_ctx_set_shape(ctx, o[O_LABELS], i, lshape);
        if (c->polygon_masks) {
            int64_t ps[2] = {im->npoly, 3}, vs[2] = {im->nvert, 2};
            sl_ctx_set_shape(ctx, o[O_POLYGONS], i, ps);
            sl_ctx_set_shape(ctx, o[O_VERTICES], i, vs);
        }
        if (c->pixelwise_masks) {
            int64_t ms[3] = {im->height, im->width, 1};
            sl_ctx_set_shape(ctx, o[O_MASKS], i, ms);
        }
        if (c->image_ids) {
            int64_t one = 1;
            sl_ctx_set_shape(ctx, o[O_IMAGE_IDS], i, &one);
        }
        for (int q = 0; q < NUM_OUTPUTS; q++)
            if (o[q] >= 0)
                sl_ctx_set_source(ctx, o[q], i, im->path);
    }
    return SL_OK;
}

static sl_status coco_setup_sample(sl_ctx *ctx, int i)
{
    const coco *c = sl_ctx_state(ctx);
    const image *im = &c->img[((const int64_t *)sl_ctx_iter_data(ctx))[i]];
    int64_t size = 0;
    sl_status st = sl__reader_file_size(ctx, im->path, &size);
    if (st == SL_OK)
        sl_ctx_set_shape(ctx, O_IMAGES, i, &size);
    return st;
}

static sl_status coco_run_sample(sl_ctx *ctx, int i)
{
    const coco *c = sl_ctx_state(ctx);
    const image *im = &c->img[((const int64_t *)sl_ctx_iter_data(ctx))[i]];
    int o[NUM_OUTPUTS];
    output_index(c, o);
    /* the tables are NULL when the data set has no annotations: copy only what exists */
    if (im->nbox) {
        memcpy(sl_ctx_output_data(ctx, o[O_BBOXES], i), c->boxes + 4 * im->box0,
               (size_t)im->nbox * 4 * sizeof(float));
        memcpy(sl_ctx_output_data(ctx, o[O_LABELS], i), c->labels + im->box0,
               (size_t)im->nbox * sizeof(int32_t));
    }
    if (c->polygon_masks && im->npoly)
        memcpy(sl_ctx_output_data(ctx, o[O_POLYGONS], i), c->polys + 3 * im->poly0,
               (size_t)im->npoly * 3 * sizeof(int32_t));
    if (c->polygon_masks && im->nvert)
        memcpy(sl_ctx_output_data(ctx, o[O_VERTICES], i), c->verts + 2 * im->vert0,
               (size_t)im->nvert * 2 * sizeof(float));
    if (c->image_ids)
        *(int32_t *)sl_ctx_output_data(ctx, o[O_IMAGE_IDS], i) = im->id;
    if (c->pixelwise_masks) {
        sl_status st = render_masks(ctx, c, im, sl_ctx_output_data(ctx, o[O_MASKS], i));
        if (st != SL_OK)
            return st;
    }
    int64_t size = sl_ctx_output_shape(ctx, O_IMAGES, i)[0];
    return sl__reader_read_file(ctx, im->path, sl_ctx_output_data(ctx, O_IMAGES, i), size);
}

SL__CURSOR_READER(coco, cur)

/* ---- definition --------------------------------------------------------------------------- */

static const sl_io_def outputs[NUM_OUTPUTS] = {
    [O_IMAGES] = {"images", "The image file's bytes, 1-D uint8 (feed it to decoders.image)."},
    [O_BBOXES] = {"bboxes", "The boxes, float32 (N, 4): [x, y, w, h] or [l, t, r, b]."},
    [O_LABELS] = {"labels", "The boxes' labels, int32 (N, 1)."},
    [O_POLYGONS] = {"polygons",
                    "With polygon_masks: int32 (P, 3) [box index, first vertex, end vertex]."},
    [O_VERTICES] = {"vertices", "With polygon_masks: the polygons' vertices, float32 (V, 2)."},
    [O_MASKS] = {"pixelwise_masks",
                 "With pixelwise_masks: int32 (H, W, 1), layout HWC, each pixel the label of "
                 "the object covering it (0: none)."},
    [O_IMAGE_IDS] = {"image_ids", "With image_ids: the image's COCO id, int32 (1,)."},
};
static const sl_output_when output_when[NUM_OUTPUTS] = {
    [O_POLYGONS] = {.arg = "polygon_masks"},
    [O_VERTICES] = {.arg = "polygon_masks"},
    [O_MASKS] = {.arg = "pixelwise_masks"},
    [O_IMAGE_IDS] = {.arg = "image_ids"},
};

#define FLAG(nm, dflt, text)                                                                       \
    {                                                                                              \
        .name = nm, .type = SL_ARG_BOOL, .def = dflt, .doc = text                                  \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_FILE_ROOT] = {.name = "file_root",
                     .type = SL_ARG_STRING,
                     .flags = SL_ARG_OPTIONAL,
                     .doc = "Directory the images' file_name paths start from (required)."},
    [A_ANNOTATIONS_FILE] = {.name = "annotations_file",
                            .type = SL_ARG_STRING,
                            .def = "\"\"",
                            .doc = "The COCO annotation JSON (images, annotations, categories)."},
    [A_LTRB] = FLAG("ltrb", "false", "Boxes as [l, t, r, b] instead of COCO's [x, y, w, h]."),
    [A_RATIO] =
        FLAG("ratio", "false", "Boxes and vertices relative to the image's width and height."),
    [A_SIZE_THRESHOLD] = {.name = "size_threshold",
                          .type = SL_ARG_FLOAT,
                          .def = "0.1",
                          .doc = "Annotations whose box width or height (pixels) is below this "
                                 "are skipped."},
    [A_SKIP_EMPTY] = FLAG("skip_empty", "false", "Skip images without (kept) annotations."),
    [A_INCLUDE_ISCROWD] =
        FLAG("include_iscrowd", "true", "Keep annotations marked iscrowd (false: skip them)."),
    [A_AVOID_CLASS_REMAPPING] =
        FLAG("avoid_class_remapping", "false",
             "Labels are the category ids as written; default: 1, 2, ... in the order of "
             "\"categories\"."),
    [A_IMAGES] = {.name = "images",
                  .type = SL_ARG_STRINGS,
                  .flags = SL_ARG_OPTIONAL | SL_ARG_SCALAR_OK,
                  .doc = "Read only these file_names, in this order (names the JSON does not "
                         "list are skipped). Default: every image, sorted by id."},
    [A_POLYGON_MASKS] = FLAG("polygon_masks", "false",
                             "Add the polygons and vertices outputs from the segmentations."),
    [A_PIXELWISE_MASKS] = FLAG("pixelwise_masks", "false",
                               "Add a pixelwise_masks output: the polygon and RLE segmentations "
                               "rasterised at the image's size (exclusive with polygon_masks)."),
    [A_IMAGE_IDS] = FLAG("image_ids", "false", "Add an output with each image's COCO id."),
    [A_RANDOM_SHUFFLE] = FLAG("random_shuffle", "false",
                              "Read each epoch in a fresh random permutation (as readers.file)."),
    [A_SEED] = {.name = "seed",
                .type = SL_ARG_INT,
                .def = "-1",
                .doc = "Seed of the epoch permutations; -1: a fixed default (as readers.file), "
                       "the same on every rank."},
    [A_SHARD_ID] = {.name = "shard_id",
                    .type = SL_ARG_INT,
                    .def = "0",
                    .flags = SL_ARG_RANGE,
                    .min = 0,
                    .max = INT32_MAX,
                    .doc = "Which shard this reader reads, 0 <= shard_id < num_shards."},
    [A_NUM_SHARDS] = {.name = "num_shards",
                      .type = SL_ARG_INT,
                      .def = "1",
                      .flags = SL_ARG_RANGE,
                      .min = 1,
                      .max = INT32_MAX,
                      .doc = "Number of shards the data set is split into."},
    [A_STICK_TO_SHARD] =
        FLAG("stick_to_shard", "false",
             "Read the same shard every epoch (default: epoch e reads shard_id + e)."),
    [A_PAD_LAST_BATCH] = FLAG("pad_last_batch", "false",
                              "Pad every shard's epoch to whole batches by repeating its last "
                              "sample (as readers.file)."),
};

const sl_op_def sl_op_readers_coco = {
    .name = "readers.coco",
    .doc = "Reads a COCO-format detection data set: image files with their boxes, labels and, "
           "optionally, polygons and ids (DALI's readers.coco).\n\n"
           "Outputs images (encoded bytes), bboxes (float32 (N, 4), [x, y, w, h] or with "
           "`ltrb` [l, t, r, b]; with `ratio` relative to the image size), labels (int32 (N, "
           "1); categories renumbered 1.. in the JSON's order unless avoid_class_remapping), "
           "then polygons and vertices with `polygon_masks`, or pixelwise_masks with "
           "`pixelwise_masks` (int32 (H, W, 1) at the image entry's height and width, layout "
           "HWC: each pixel the label of the object whose polygons or RLE (compressed or not) "
           "cover it, the larger label where objects overlap, 0 for background; rasterised as "
           "COCO's own API does, in pixels whatever `ratio` says), image_ids with `image_ids`. "
           "Images come sorted by id (or as listed in `images`); `size_threshold`, "
           "`include_iscrowd` and `skip_empty` filter as in DALI. Shuffling and sharding are "
           "readers.file's (random_shuffle, seed, shard_id, num_shards, stick_to_shard, "
           "pad_last_batch).\n\n"
           "Differs from DALI: preprocessed annotations are not supported; RLE (crowd) "
           "segmentations are skipped by polygon_masks, as in DALI; with pixelwise_masks an "
           "RLE whose size is not its image's, a run past the image or a corrupt RLE string "
           "fails the build (DALI reads out of bounds), and an object's RLE and polygons of "
           "one label are all drawn (DALI keeps one of them).",
    .inputs = NULL,
    .min_inputs = 0,
    .max_inputs = 0,
    .outputs = outputs,
    .num_outputs = NUM_OUTPUTS,
    .output_when = output_when,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(int64_t),
    .init = coco_init,
    .fini = coco_fini,
    .setup = coco_setup,
    .setup_sample = coco_setup_sample,
    .run_sample = coco_run_sample,
    SL__CURSOR_READER_FNS,
};
