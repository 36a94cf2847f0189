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
 * the build naming the file and the entry.
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
} image;

typedef struct coco {
    image *img;
    int64_t nimg;
    float *boxes;
    int32_t *labels;
    int32_t *polys; /* [object, first vertex, end vertex] per polygon, per image */
    float *verts;
    int64_t nboxes, npolys, nverts, cap_boxes, cap_labels, cap_polys, cap_verts;
    bool polygon_masks, image_ids;
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
    json_t *seg = c->polygon_masks ? json_object_get(a, "segmentation") : NULL;
    int64_t npoly = 0, nvert = 0;
    if (json_is_array(seg)) {
        size_t q;
        json_t *poly;
        json_array_foreach(seg, q, poly)
        {
            if (!json_is_array(poly) || json_array_size(poly) % 2)
                return bad(P, "annotations", k,
                           "\"segmentation\" polygons must be lists of x, y coordinates");
            for (size_t v = 0; v < json_array_size(poly); v++)
                if (!json_is_number(json_array_get(poly, v)))
                    return bad(P, "annotations", k,
                               "\"segmentation\" polygons must be lists of x, y numbers");
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
                vv[0] = (float)(json_number_value(json_array_get(poly, v)) / sx);
                vv[1] = (float)(json_number_value(json_array_get(poly, v + 1)) / sy);
                im->nvert++;
            }
            pp[2] = (int32_t)im->nvert;
            c->npolys++;
            im->npoly++;
        }
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
                      .vert0 = c->nverts};
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
    if (sl_init_arg_bool(ini, A_PIXELWISE_MASKS))
        return sl_init_fail(ini, SL_EUNSUPPORTED,
                            "pixelwise_masks is not supported yet; use polygon_masks");
    coco *c = sl__calloc(1, sizeof *c);
    if (!c)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    c->polygon_masks = sl_init_arg_bool(ini, A_POLYGON_MASKS);
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
    int64_t size = sl_ctx_output_shape(ctx, O_IMAGES, i)[0];
    return sl__reader_read_file(ctx, im->path, sl_ctx_output_data(ctx, O_IMAGES, i), size);
}

static void coco_meta(const void *state, sl_reader_meta *m)
{
    sl__cursor_meta(&((const coco *)state)->cur, m);
}

/* ---- definition --------------------------------------------------------------------------- */

static const sl_io_def outputs[NUM_OUTPUTS] = {
    [O_IMAGES] = {"images", "The image file's bytes, 1-D uint8 (feed it to decoders.image)."},
    [O_BBOXES] = {"bboxes", "The boxes, float32 (N, 4): [x, y, w, h] or [l, t, r, b]."},
    [O_LABELS] = {"labels", "The boxes' labels, int32 (N, 1)."},
    [O_POLYGONS] = {"polygons",
                    "With polygon_masks: int32 (P, 3) [box index, first vertex, end vertex]."},
    [O_VERTICES] = {"vertices", "With polygon_masks: the polygons' vertices, float32 (V, 2)."},
    [O_MASKS] = {"pixelwise_masks", "With pixelwise_masks (not supported yet)."},
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
                               "Add a rasterised mask output (not supported yet: fails)."),
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
           "then polygons and vertices with `polygon_masks`, image_ids with `image_ids`. "
           "Images come sorted by id (or as listed in `images`); `size_threshold`, "
           "`include_iscrowd` and `skip_empty` filter as in DALI. Shuffling and sharding are "
           "readers.file's (random_shuffle, seed, shard_id, num_shards, stick_to_shard, "
           "pad_last_batch).\n\n"
           "Differs from DALI: pixelwise_masks and preprocessed annotations are not supported; "
           "polygons of RLE (crowd) segmentations are skipped, as DALI does without "
           "pixelwise_masks.",
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
    .reader_meta = coco_meta,
};
