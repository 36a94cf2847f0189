/* sequence.c: readers.sequence: reads sequences of frames from a folder of streams — each
 * subfolder of file_root one stream, its image files (sorted by name) its frames — decoded
 * into one [F, H, W, C] uint8 sample per sequence, one epoch after another, optionally shuffled
 * and sharded (readers/reader.h).
 *
 * Exports sl_op_readers_sequence (listed in src/ops/ops.def).
 *
 * Sample enumeration (DALI's): the image files two levels below file_root (hidden names left
 * out, extensions matched without regard to case) sorted by path; a stream is the files of one
 * folder; in a stream of n frames a sequence starts at every step-th frame i while its last frame
 * i + (sequence_length - 1) * stride is inside the stream, and holds the frames i + k * stride.
 * Sequences never cross streams and are never padded.
 *
 * Invariant: after init the frame list and the sequence table never change. setup (serial)
 * picks the sequences; setup_sample reads the first frame's header for the output shape;
 * run_sample reads and decodes each frame in turn (pread of the whole file into scratch, the
 * codec of decoders.image) straight into the output; a frame of another size fails naming it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/op.h"

#include "core/core.h"
#include "ops/decoders/codec.h"
#include "ops/readers/reader.h"

enum {
    ARG_FILE_ROOT,
    ARG_SEQUENCE_LENGTH,
    ARG_STEP,
    ARG_STRIDE,
    ARG_IMAGE_TYPE,
    ARG_RANDOM_SHUFFLE,
    ARG_SEED,
    ARG_SHARD_ID,
    ARG_NUM_SHARDS,
    ARG_STICK_TO_SHARD,
    ARG_PAD_LAST_BATCH,
    NUM_ARGS
};

static const sl__cursor_args cursor_args = {.random_shuffle = ARG_RANDOM_SHUFFLE,
                                            .seed = ARG_SEED,
                                            .shard_id = ARG_SHARD_ID,
                                            .num_shards = ARG_NUM_SHARDS,
                                            .stick_to_shard = ARG_STICK_TO_SHARD,
                                            .pad_last_batch = ARG_PAD_LAST_BATCH};

typedef struct reader {
    char **frames; /* every frame's path, sorted */
    int64_t nframes, cap;
    int64_t *start; /* per sequence: its first frame's index in frames */
    int64_t nseq;
    int64_t length, stride;
    sl__color color;
    sl__cursor cur; /* setup only */
} reader;

typedef struct sample {
    int64_t k;
    int64_t h, w;
} sample;

/* ---- listing ---------------------------------------------------------------------------- */

/* DALI's known image extensions. */
static bool is_image(const char *name)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif", ".tiff",
                                      ".pnm", ".ppm",  ".pgm", ".pbm", ".jp2", ".webp"};
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++)
        if (strcasecmp(dot, ext[k]) == 0)
            return true;
    return false;
}

static bool push(reader *r, char *path)
{
    if (r->nframes == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 256;
        char **v = sl__realloc(r->frames, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        r->frames = v;
        r->cap = cap;
    }
    r->frames[r->nframes++] = path;
    return true;
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = sl__malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* Adds the image files of folder dir. */
static sl_status list_stream(sl_op_init *ini, reader *r, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return SL_OK; /* a file, or unreadable: not a stream */
    sl_status st = SL_OK;
    struct dirent *e;
    while (st == SL_OK && (e = readdir(d)) != NULL) {
        struct stat sb;
        if (e->d_name[0] == '.' || !is_image(e->d_name))
            continue;
        char *p = join(dir, e->d_name);
        if (!p)
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
        else if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
            sl__free(p);
        else if (!push(r, p)) {
            sl__free(p);
            st = sl_init_fail(ini, SL_ENOMEM, "out of memory");
        }
    }
    closedir(d);
    return st;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The parent folder's length in path (up to its last '/'). */
static size_t parent_len(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? (size_t)(s - path) : 0;
}

static bool same_parent(const char *a, const char *b)
{
    size_t n = parent_len(a);
    return n == parent_len(b) && strncmp(a, b, n) == 0;
}

static sl_status list_sequences(sl_op_init *ini, reader *r, const char *root, int64_t step)
{
    DIR *d = opendir(root);
    if (!d)
        return sl_init_fail(ini, errno == ENOENT ? SL_ENOTFOUND : SL_EIO,
                            "file_root \"%s\": cannot open the folder: %s", root, strerror(errno));
    sl_status st = SL_OK;
    struct dirent *e;
    while (st == SL_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = join(root, e->d_name);
        st = sub ? list_stream(ini, r, sub) : sl_init_fail(ini, SL_ENOMEM, "out of memory");
        sl__free(sub);
    }
    closedir(d);
    if (st != SL_OK)
        return st;
    if (r->nframes == 0)
        return sl_init_fail(ini, SL_ENOTFOUND,
                            "file_root \"%s\": no image files in its subfolders (each subfolder "
                            "is a stream of frames)",
                            root);
    qsort(r->frames, (size_t)r->nframes, sizeof *r->frames, cmp_path);
    if (!(r->start = sl__malloc((size_t)r->nframes * sizeof *r->start)))
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    int64_t span = (r->length - 1) * r->stride; /* from a sequence's first frame to its last */
    for (int64_t a = 0; a < r->nframes;) {
        int64_t b = a + 1;
        while (b < r->nframes && same_parent(r->frames[a], r->frames[b]))
            b++;
        for (int64_t i = 0; i + span < b - a; i += step)
            r->start[r->nseq++] = a + i;
        a = b;
    }
    if (r->nseq == 0)
        return sl_init_fail(ini, SL_ENOTFOUND,
                            "file_root \"%s\": no stream has the %lld frames a sequence of "
                            "sequence_length %lld with stride %lld spans",
                            root, (long long)(span + 1), (long long)r->length,
                            (long long)r->stride);
    return SL_OK;
}

/* ---- init ------------------------------------------------------------------------------- */

static void fini(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int64_t k = 0; k < r->nframes; k++)
        sl__free(r->frames[k]);
    sl__free(r->frames);
    sl__free(r->start);
    sl__cursor_fini(&r->cur);
    sl__free(r);
}

static sl_status init(sl_op_init *ini, void **state)
{
    reader *r = sl__calloc(1, sizeof *r);
    if (!r)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    r->length = sl_init_arg_int(ini, ARG_SEQUENCE_LENGTH);
    r->stride = sl_init_arg_int(ini, ARG_STRIDE);
    const char *type = sl_init_arg_str(ini, ARG_IMAGE_TYPE);
    r->color = strcmp(type, "BGR") == 0    ? SL__COLOR_BGR
               : strcmp(type, "GRAY") == 0 ? SL__COLOR_GRAY
                                           : SL__COLOR_RGB;
    sl_status st = sl__cursor_config(ini, &cursor_args, &r->cur);
    if (st == SL_OK)
        st = list_sequences(ini, r, sl_init_arg_str(ini, ARG_FILE_ROOT),
                            sl_init_arg_int(ini, ARG_STEP));
    if (st == SL_OK)
        st = sl__cursor_start(ini, &r->cur, r->nseq);
    if (st != SL_OK) {
        fini(r);
        return st;
    }
    *state = r;
    return SL_OK;
}

/* ---- per iteration --------------------------------------------------------------------------- */

static sl_status setup(sl_ctx *ctx)
{
    reader *r = sl_ctx_state(ctx);
    sample *ss = sl_ctx_iter_data(ctx);
    sl_ctx_set_output(ctx, 0, SL_DTYPE_UINT8, 4, "FHWC");
    for (int i = 0, bs = sl_ctx_batch_size(ctx); i < bs; i++) {
        ss[i].k = sl__cursor_next(&r->cur);
        sl_ctx_set_source(ctx, 0, i, r->frames[r->start[ss[i].k]]);
    }
    return SL_OK;
}

/* Reads frame f's file into scratch buffer 0: *data, *size. Fails once, naming the frame (a
 * sequence's frames are not its source, which is its first frame). */
static sl_status read_frame(sl_ctx *ctx, const reader *r, int64_t f, const uint8_t **data,
                            size_t *size)
{
    const char *path = r->frames[f];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return sl_fail(ctx, e == ENOENT ? SL_ENOTFOUND : SL_EIO, "frame \"%s\": %s", path,
                       strerror(e));
    }
    sl_status st = SL_OK;
    uint8_t *buf = NULL;
    int64_t n = (int64_t)sb.st_size, done = 0;
    if ((uint64_t)n > sl_ctx_max_sample_bytes(ctx))
        st = sl_fail(ctx, SL_EUNSUPPORTED,
                     "frame \"%s\" is %lld bytes, more than max_sample_bytes (%zu)", path,
                     (long long)n, sl_ctx_max_sample_bytes(ctx));
    else if (!(buf = sl_ctx_scratch(ctx, (size_t)(n ? n : 1))))
        st = sl_fail(ctx, SL_ENOMEM, "out of memory for the %lld-byte frame \"%s\"", (long long)n,
                     path);
    while (st == SL_OK && done < n) {
        ssize_t got = pread(fd, buf + done, (size_t)(n - done), (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            st = sl_fail(ctx, got < 0 ? SL_EIO : SL_ECORRUPT, "frame \"%s\": %s", path,
                         got < 0 ? strerror(errno) : "the file shrank while it was read");
        else
            done += got;
    }
    close(fd);
    *data = buf;
    *size = (size_t)n;
    return st;
}

static sl_status peek(sl_ctx *ctx, const reader *r, int64_t f, const uint8_t **data, size_t *size,
                      sl__image_info *info)
{
    char err[256];
    sl_status st = read_frame(ctx, r, f, data, size);
    if (st == SL_OK && (st = sl__image_peek(*data, *size, info, err, sizeof err)) != SL_OK)
        return sl_fail(ctx, st, "frame \"%s\": %s", r->frames[f], err);
    return st;
}

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    sample *s = (sample *)sl_ctx_iter_data(ctx) + i;
    const uint8_t *data;
    size_t size;
    sl__image_info info;
    sl_status st = peek(ctx, r, r->start[s->k], &data, &size, &info);
    if (st != SL_OK)
        return st;
    s->h = info.height;
    s->w = info.width;
    int64_t shape[4] = {r->length, s->h, s->w, r->color == SL__COLOR_GRAY ? 1 : 3};
    sl_ctx_set_shape(ctx, 0, i, shape);
    return SL_OK;
}

static void *scratch1(void *ctx, size_t bytes)
{
    return sl_ctx_scratch_n(ctx, 1, bytes);
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    const reader *r = sl_ctx_state(ctx);
    const sample *s = (const sample *)sl_ctx_iter_data(ctx) + i;
    uint8_t *out = sl_ctx_output_data(ctx, 0, i);
    size_t frame_bytes = (size_t)(s->h * s->w * (r->color == SL__COLOR_GRAY ? 1 : 3));
    const sl__decode_mem mem = {scratch1, ctx, sl_ctx_max_sample_bytes(ctx)};
    for (int64_t k = 0; k < r->length; k++) {
        int64_t f = r->start[s->k] + k * r->stride;
        const uint8_t *data;
        size_t size;
        sl__image_info info;
        char err[256];
        sl_status st = peek(ctx, r, f, &data, &size, &info);
        if (st != SL_OK)
            return st;
        if (info.height != s->h || info.width != s->w)
            return sl_fail(ctx, SL_ECORRUPT,
                           "frame \"%s\" is %d x %d, the sequence's first frame \"%s\" %lld x "
                           "%lld: the frames of a sequence must have one size",
                           r->frames[f], info.width, info.height, r->frames[r->start[s->k]],
                           (long long)s->w, (long long)s->h);
        st = sl__image_decode(data, size, r->color, 0, NULL, out + (size_t)k * frame_bytes, &mem,
                              err, sizeof err);
        if (st != SL_OK)
            return sl_fail(ctx, st, "frame \"%s\": %s", r->frames[f], err);
    }
    return SL_OK;
}

SL__CURSOR_READER(reader, cur)

/* ---- definition ------------------------------------------------------------------------- */

static const sl_io_def outputs[] = {
    {"sequences", "The sequence's frames decoded, uint8 [F, H, W, C] (F = sequence_length, C "
                  "= 3, or 1 for GRAY), layout FHWC."},
};

static const sl_arg_def args[] = {
    [ARG_FILE_ROOT] = {.name = "file_root",
                       .type = SL_ARG_STRING,
                       .doc = "The folder of streams: each subfolder is one stream, its image "
                              "files (sorted by name) its frames."},
    [ARG_SEQUENCE_LENGTH] = {.name = "sequence_length",
                             .type = SL_ARG_INT,
                             .flags = SL_ARG_RANGE,
                             .min = 1,
                             .max = 1 << 20,
                             .doc = "Frames per sequence (F)."},
    [ARG_STEP] = {.name = "step",
                  .type = SL_ARG_INT,
                  .def = "1",
                  .flags = SL_ARG_RANGE,
                  .min = 1,
                  .max = INT32_MAX,
                  .doc = "Frames between the first frames of consecutive sequences of a stream."},
    [ARG_STRIDE] = {.name = "stride",
                    .type = SL_ARG_INT,
                    .def = "1",
                    .flags = SL_ARG_RANGE,
                    .min = 1,
                    .max = INT32_MAX,
                    .doc = "Frames between consecutive frames of a sequence."},
    [ARG_IMAGE_TYPE] = {.name = "image_type",
                        .type = SL_ARG_STRING,
                        .def = "\"RGB\"",
                        .choices = "RGB|BGR|GRAY",
                        .doc = "The frames' color space, as decoders.image's output_type."},
    SL__CURSOR_ARG_DEFS,
};

#define NO_EFFECT(name)                                                                            \
    {                                                                                              \
        name, NULL, "readers.sequence reads with pread; " name " has no effect"                    \
    }
static const sl_arg_alias aliases[] = {
    NO_EFFECT("dont_use_mmap"),        NO_EFFECT("read_ahead"),        NO_EFFECT("lazy_init"),
    NO_EFFECT("prefetch_queue_depth"), NO_EFFECT("tensor_init_bytes"), NO_EFFECT("initial_fill"),
    NO_EFFECT("skip_cached_images"),
};

const sl_op_def sl_op_readers_sequence = {
    .name = "readers.sequence",
    .doc = "Reads sequences of frames from a folder of streams (video frames extracted as image "
           "files), decoded: one uint8 [F, H, W, C] sample per sequence.\n"
           "\n"
           "Each subfolder of `file_root` is a stream; its image files, sorted by name, are its "
           "frames (files two levels down with an image extension, hidden ones left out). In a "
           "stream of n frames a sequence starts at every `step`-th frame i whose sequence fits "
           "(i + (sequence_length - 1) * stride < n) and holds the frames i, i + stride, ...; "
           "sequences never cross streams and are never padded. Frames are decoded as "
           "decoders.image decodes (JPEG, PNG); the frames of a sequence must have one size, "
           "else the sample fails naming the frame. Order, shuffling and sharding (over the "
           "sequences) as readers.file.",
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .aliases = aliases,
    .num_aliases = sizeof aliases / sizeof *aliases,
    .devices = SL_OP_CPU,
    .flags = SL_OP_SOURCE | SL_OP_STATEFUL,
    .iter_bytes_per_sample = sizeof(sample),
    .init = init,
    .fini = fini,
    .setup = setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
    SL__CURSOR_READER_FNS,
};
