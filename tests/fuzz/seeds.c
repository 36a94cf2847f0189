/* tests/fuzz/seeds.c: fuzz_seeds OUT TESTDATA [SPEC.json...]: writes the seed corpora of the fuzz
 * targets (docs/fuzzing.md), generated, never committed:
 *
 *   OUT/decode/     every JPEG and PNG of TESTDATA (tests/data/make_images.py's output, corrupt
 *                   files included) behind a selector byte that cycles through the output
 *                   types and use_fast_idct
 *   OUT/roi/        every image twice behind an 8-byte header that cycles through the target's
 *                   cases, variants and output types
 *   OUT/hybrid/     every JPEG behind a mode byte that cycles through fuzz_hybrid.c's windows,
 *                   GRAY and SL__DECODE_TO_END
 *   OUT/spec/       the SPEC.json files given (examples/, bench/specs/), and one spec per
 *                   registered operator: a node with every argument at its default (required
 *                   ones filled in), its inputs from external_source nodes
 *   OUT/spec.dict   a libFuzzer dictionary for the spec target: the spec's keys, every operator
 *                   and argument name, every choice, the dtype and device names
 *   OUT/file_list/  small list files over the names fuzz_file_list.c creates
 *   OUT/coco/       small annotation files over the names fuzz_coco.c creates
 *   OUT/recordio/   small .rec files: a whole record, one split in three parts, a multi-label
 *                   header, two records back to back
 *   OUT/npy/        small .npy files: C and Fortran order, big-endian, rank 0, bool, a
 *                   format 2.0 header, one of each length parity (fuzz_npy.c's ROI switch)
 *   OUT/wds/        small tar archives (ustar members a/b/c of two samples, a hidden file, a
 *                   directory, a GNU long name) over fuzz_wds.c's extensions
 *   OUT/tfrecord/   small Example payloads (mode byte 0 and 2: the target frames them) and
 *                   one framed file of two records (mode byte 1), over fuzz_tfrecord.c's
 *                   features
 *   OUT/caffe/      small LMDB values behind fuzz_caffe.c's mode byte: Datum messages (encoded,
 *                   raw, negative label) and TensorProtos (an encoded image with each label
 *                   type, a raw image with additional inputs and a bounding box)
 *
 * Exports main. Deterministic: the same inputs give the same files, and only those (the
 * folders are emptied first). Exit status 0 on success,
 * 1 (with a message) when TESTDATA holds no image or a file cannot be written.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/sluice.h"

static const char *out_dir;

static void die(const char *what, const char *path)
{
    fprintf(stderr, "fuzz_seeds: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

/* Creates OUT/sub (OUT when sub is NULL), or empties it of the files an earlier run wrote, so
 * that seeds no longer made do not stay. */
static void make_dir(const char *sub)
{
    char path[4096], file[8192];
    snprintf(path, sizeof path, "%s%s%s", out_dir, sub ? "/" : "", sub ? sub : "");
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        die("cannot create", path);
    DIR *d = sub ? opendir(path) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        if (e->d_name[0] != '.' && unlink(file) != 0)
            die("cannot remove", file);
    }
    if (d)
        closedir(d);
}

/* Writes OUT/sub/name: head (hn bytes) then body (bn bytes). */
static void write_seed(const char *sub, const char *name, const void *head, size_t hn,
                       const void *body, size_t bn)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(head, 1, hn, f) != hn || fwrite(body, 1, bn, f) != bn || fclose(f) != 0)
        die("cannot write", path);
}

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot read", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
        die("cannot read", path);
    fclose(f);
    buf[len] = '\0';
    *n = (size_t)len;
    return buf;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- images: decode and roi ------------------------------------------------------------- */

static void image_seeds(const char *testdata)
{
    DIR *d = opendir(testdata);
    if (!d)
        die("cannot open", testdata);
    char *names[1024];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 1024)
        if (has_suffix(e->d_name, ".jpg") || has_suffix(e->d_name, ".png"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    if (n == 0) {
        fprintf(stderr, "fuzz_seeds: no .jpg or .png in %s\n", testdata);
        exit(1);
    }
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int k = 0; k < n; k++) {
        char path[4096], name[300];
        size_t len;
        snprintf(path, sizeof path, "%s/%s", testdata, names[k]);
        char *img = read_file(path, &len);
        uint8_t sel = (uint8_t)(k % 8);
        write_seed("decode", names[k], &sel, 1, img, len);
        if (has_suffix(names[k], ".jpg")) {
            uint8_t mode = (uint8_t)(k % 16);
            write_seed("hybrid", names[k], &mode, 1, img, len);
        }
        /* roi: two headers (the target's bare mode, eight checks per input, is left to the
         * plain images of its regressions): cases k and k + 3, variants, fast IDCT every third,
         * output types, and windows and sizes that differ from image to image */
        for (int v = 0; v < 2; v++) {
            int c = k + 3 * v;
            uint8_t h[8] = {
                (uint8_t)((c % 8) | ((c / 8) % 4) << 3 | (c % 3 == 0) << 5 | ((c / 2) % 3) << 6),
                (uint8_t)(7 + 13 * c),
                (uint8_t)(5 + 29 * c),
                (uint8_t)(37 * c),
                (uint8_t)(255 - 41 * c),
                (uint8_t)(11 + 17 * c),
                (uint8_t)(23 + 7 * c),
                0};
            snprintf(name, sizeof name, "%s.%d", names[k], v);
            write_seed("roi", name, h, sizeof h, img, len);
        }
        free(img);
        free(names[k]);
    }
}

/* ---- specs and the spec dictionary ------------------------------------------------------ */

/* A value for an argument without a default: its first choice, or one of its type. */
static const char *required_value(const sl_arg_def *a)
{
    static char first[128];
    if (a->type == SL_ARG_STRING && a->choices) {
        snprintf(first, sizeof first, "\"%.*s\"", (int)strcspn(a->choices, "|"), a->choices);
        return first;
    }
    switch (a->type) {
    case SL_ARG_BOOL: return "false";
    case SL_ARG_INT: return "1";
    case SL_ARG_FLOAT: return "1.0";
    case SL_ARG_STRING: return "\"\"";
    case SL_ARG_DTYPE: return "\"uint8\"";
    case SL_ARG_INTS: return a->min_len >= 2 ? "[1, 1]" : "[1]";
    case SL_ARG_FLOATS: return a->min_len >= 2 ? "[16.0, 16.0]" : "[16.0]";
    case SL_ARG_STRINGS: return "[\"x\"]";
    }
    return "0";
}

static void op_spec(const sl_op_def *op, FILE *f)
{
    fprintf(f, "{\"pipeline\": {\"batch_size\": 2, \"num_threads\": 1, \"seed\": 7},\n"
               " \"nodes\": [\n");
    for (int i = 0; i < op->min_inputs; i++)
        fprintf(f, "  {\"name\": \"in%d\", \"op\": \"external_source\", \"device\": \"cpu\"},\n",
                i);
    fprintf(f, "  {\"name\": \"n\", \"op\": \"%s\"", op->name);
    if (op->min_inputs > 0) {
        fprintf(f, ", \"inputs\": [");
        for (int i = 0; i < op->min_inputs; i++)
            fprintf(f, "%s\"in%d\"", i ? ", " : "", i);
        fprintf(f, "]");
    }
    fprintf(f, ",\n   \"args\": {");
    int written = 0;
    for (int i = 0; i < sl_op_num_args(op); i++) {
        const sl_arg_def *a = sl_op_arg(op, i);
        const char *v = a->def ? a->def : (a->flags & SL_ARG_OPTIONAL) ? NULL : required_value(a);
        if (v)
            fprintf(f, "%s\"%s\": %s", written++ ? ", " : "", a->name, v);
    }
    fprintf(f, "}}\n ],\n \"outputs\": [");
    for (int i = 0; i < op->num_outputs; i++)
        fprintf(f, "%s\"n:%d\"", i ? ", " : "", i);
    fprintf(f, "]}\n");
}

/* One dictionary entry: the JSON string "s" (quotes included), escaped for libFuzzer. */
static void dict_word(FILE *f, const char *s)
{
    fputs("\"\\\"", f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\\\\\%c", *s);
        else
            fputc(*s, f);
    }
    fputs("\\\"\"\n", f);
}

static void spec_seeds(char **specs, int nspecs)
{
    for (int i = 0; i < nspecs; i++) {
        size_t len;
        char *text = read_file(specs[i], &len);
        const char *base = strrchr(specs[i], '/');
        write_seed("spec", base ? base + 1 : specs[i], "", 0, text, len);
        free(text);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/spec.dict", out_dir);
    FILE *dict = fopen(path, "w");
    if (!dict)
        die("cannot write", path);
    static const char *const words[] = {"pipeline",
                                        "batch_size",
                                        "num_threads",
                                        "prefetch_queue_depth",
                                        "seed",
                                        "device_id",
                                        "fuse_samples",
                                        "cpu_queue_depth",
                                        "gpu_queue_depth",
                                        "max_held_bytes",
                                        "nodes",
                                        "name",
                                        "op",
                                        "device",
                                        "inputs",
                                        "args",
                                        "arg_inputs",
                                        "outputs",
                                        "cpu",
                                        "mixed",
                                        "gpu",
                                        "uint8",
                                        "int32",
                                        "int64",
                                        "float32",
                                        "float16",
                                        "float64",
                                        "bool",
                                        "HWC",
                                        "CHW"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        dict_word(dict, words[i]);
    for (int k = 0; k < sl_registry_count(); k++) {
        const sl_op_def *op = sl_registry_get(k);
        dict_word(dict, op->name);
        for (int i = 0; i < sl_op_num_args(op); i++) {
            const sl_arg_def *a = sl_op_arg(op, i);
            dict_word(dict, a->name);
            for (const char *c = a->choices; c && *c;) {
                size_t n = strcspn(c, "|");
                char choice[128];
                snprintf(choice, sizeof choice, "%.*s", (int)n, c);
                dict_word(dict, choice);
                c += n + (c[n] == '|');
            }
        }
        char name[300];
        snprintf(name, sizeof name, "op-%s.json", op->name);
        snprintf(path, sizeof path, "%s/spec/%s", out_dir, name);
        FILE *f = fopen(path, "w");
        if (!f)
            die("cannot write", path);
        op_spec(op, f);
        if (fclose(f) != 0)
            die("cannot write", path);
    }
    if (fclose(dict) != 0)
        die("cannot write", path);
}

/* ---- list files ------------------------------------------------------------------------- */

static void file_list_seeds(void)
{
    static const char *const lists[] = {
        "a 0\n",
        "a 1\nb c 2\n\n  d.jpg   -3  \n0 4",
        "missing 5\n",
        "a 2147483647\r\n0 -2147483648\r\n",
        "a 2147483648\n",
        "a\n",
        "\n \t\n",
        "a 0x1\n",
        "sub/dir/file.jpg 3\n/abs/path.png 1\n",
        "b c\t+7\vd.jpg 8\n",
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "list-%02zu.txt", i);
        write_seed("file_list", name, "", 0, lists[i], strlen(lists[i]));
    }
}

/* Small annotation files over the image names fuzz_coco.c creates (a.jpg, b.jpg). */
#define MASKS_DOC                                                                                  \
    "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 6, \"height\": 5}],"           \
    " \"annotations\": [{\"image_id\": 1, \"category_id\": 5, \"bbox\": [0, 0, 4, 4],"             \
    " \"segmentation\": [[0.4, 0.2, 4.6, 1, 3, 4.9], [5, 5, 6, 5, 6, 4]]},"                        \
    " {\"image_id\": 1, \"category_id\": 9, \"bbox\": [0, 0, 6, 5], \"iscrowd\": 1,"               \
    " \"segmentation\": {\"size\": [5, 6], \"counts\": \"3253O1\"}}],"                             \
    " \"categories\": [{\"id\": 9}, {\"id\": 5}]}"
static void coco_seeds(void)
{
    static const char *const docs[] = {
        "{\"images\": [{\"id\": 2, \"file_name\": \"b.jpg\", \"width\": 20, \"height\": 10},"
        " {\"id\": 1, \"file_name\": \"a.jpg\", \"width\": 8, \"height\": 8}],"
        " \"annotations\": [{\"image_id\": 1, \"category_id\": 5, \"bbox\": [1, 2, 3, 4],"
        " \"segmentation\": [[1, 2, 4, 2, 4, 6]], \"iscrowd\": 0},"
        " {\"image_id\": 2, \"category_id\": 9, \"bbox\": [0.5, 1, 10, 5], \"iscrowd\": 1,"
        " \"segmentation\": {\"size\": [10, 20], \"counts\": [0, 200]}}],"
        " \"categories\": [{\"id\": 9}, {\"id\": 5}]}",
        "{\"images\": [{\"id\": 1, \"file_name\": \"a.jpg\"}], \"annotations\": []}",
        "{\"images\": [{\"id\": 1, \"file_name\": \"missing.jpg\"}]}",
        "{\"images\": [{\"id\": 1}], \"annotations\": [{\"bbox\": [1, 2, 3]}]}",
        "{\"images\": 3}",
        "[]",
        /* pixelwise masks: overlapping labels, a compressed RLE string; twice, padded so
         * that one length picks pixelwise_masks in fuzz_coco.c and the other polygon_masks */
        MASKS_DOC " ",
        MASKS_DOC "   ",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "ann-%02zu.json", i);
        write_seed("coco", name, "", 0, docs[i], strlen(docs[i]));
    }
}

/* Example payloads (hand-encoded protobuf) behind fuzz_tfrecord.c's mode byte. */
static void tfrecord_seeds(void)
{
    /* {label: int64 [5]} */
    static const char label[] = "\x0a\x0f\x0a\x0d\x0a\x05label\x12\x04\x1a\x02\x08\x05";
    /* {boxes: float [1, 1, 1, 1] packed, label: int64 [5]} */
    static const char boxes[] = "\x0a\x2e"
                                "\x0a\x1d\x0a\x05"
                                "boxes\x12\x14\x12\x12\x0a\x10"
                                "\0\0\x80\x3f\0\0\x80\x3f\0\0\x80\x3f\0\0\x80\x3f"
                                "\x0a\x0d\x0a\x05label\x12\x04\x1a\x02\x08\x05";
    /* {image: bytes ["ab"], grid: int64 [1..6] packed} */
    static const char image[] = "\x0a\x25"
                                "\x0a\x0f\x0a\x05image\x12\x06\x0a\x04\x0a\x02"
                                "ab"
                                "\x0a\x12\x0a\x04grid\x12\x0a\x1a\x08\x0a\x06"
                                "\x01\x02\x03\x04\x05\x06";
    static const struct {
        const char *name, *data;
        size_t n;
        char mode;
    } seeds[] = {
        {"label.bin", label, sizeof label - 1, 0},
        {"boxes.bin", boxes, sizeof boxes - 1, 2},
        {"image.bin", image, sizeof image - 1, 0},
        {"empty.bin", "", 0, 0},
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        write_seed("tfrecord", seeds[i].name, &seeds[i].mode, 1, seeds[i].data, seeds[i].n);
    /* mode 1: a file of two framed records (label, boxes) */
    unsigned char file[256];
    size_t n = 0;
    const char *const recs[] = {label, boxes};
    const size_t lens[] = {sizeof label - 1, sizeof boxes - 1};
    for (int r = 0; r < 2; r++) {
        unsigned char *h = file + n;
        for (int k = 0; k < 8; k++)
            h[k] = (unsigned char)((uint64_t)lens[r] >> (8 * k));
        uint32_t c = sl_tfrecord_masked_crc(h, 8), d = sl_tfrecord_masked_crc(recs[r], lens[r]);
        for (int k = 0; k < 4; k++)
            h[8 + k] = (unsigned char)(c >> (8 * k));
        memcpy(h + 12, recs[r], lens[r]);
        for (int k = 0; k < 4; k++)
            h[12 + lens[r] + k] = (unsigned char)(d >> (8 * k));
        n += 16 + lens[r];
    }
    write_seed("tfrecord", "file.bin", "\x01", 1, file, n);
}

/* One ustar header block for a member of `size` bytes and type `type`, checksum filled in. */
static void tar_header(unsigned char *h, const char *name, size_t size, char type)
{
    memset(h, 0, 512);
    snprintf((char *)h, 100, "%s", name);
    memcpy(h + 100, "0000644", 7);
    memcpy(h + 108, "0000000", 7);
    memcpy(h + 116, "0000000", 7);
    snprintf((char *)h + 124, 12, "%011o", (unsigned)size);
    memcpy(h + 136, "00000000000", 11);
    h[156] = (unsigned char)type;
    memcpy(h + 257,
           "ustar\0"
           "00",
           8);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

static void wds_seeds(void)
{
    static const struct {
        const char *name, *data;
        char type;
    } members[] = {
        {"d/", "", '5'},
        {"d/k1.a", "hello", '0'},
        {"d/k1.b", "xyz", '0'},
        {"d/.hidden", "h", '0'},
        {"k2.c", "cc", '0'},
        {"././@LongLink", "k3.a", 'L'},
        {"ignored-by-long-name", "long", '0'},
    };
    static unsigned char tar[16 * 1024];
    size_t n = 0;
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        size_t len = strlen(members[i].data);
        tar_header(tar + n, members[i].name, len, members[i].type);
        memcpy(tar + n + 512, members[i].data, len);
        n += 512 + (len + 511) / 512 * 512;
        if (i == 4) {
            write_seed("wds", "short.tar", "", 0, tar, n); /* no end blocks */
            write_seed("wds", "cut.tar", "", 0, tar, n - 700);
        }
    }
    memset(tar + n, 0, 1024);
    write_seed("wds", "full.tar", "", 0, tar, n + 1024);
}

/* One .npy file: magic, version, header length, the dictionary padded to 64 bytes, `nbytes`
 * bytes of data counting up. */
static void npy_seed(const char *name, int major, const char *dict, size_t nbytes)
{
    char file[1024];
    size_t pre = major == 1 ? 10 : 12, dn = strlen(dict);
    size_t hlen = dn + 1 + (64 - (pre + dn + 1) % 64) % 64;
    if (pre + hlen + nbytes > sizeof file)
        die("npy seed too large", name);
    memcpy(file, "\x93NUMPY", 6);
    file[6] = (char)major, file[7] = 0;
    for (size_t k = 0; k < pre - 8; k++)
        file[8 + k] = (char)(hlen >> (8 * k));
    memset(file + pre, ' ', hlen);
    memcpy(file + pre, dict, dn);
    file[pre + hlen - 1] = '\n';
    for (size_t k = 0; k < nbytes; k++)
        file[pre + hlen + k] = (char)(k * 7 + 1);
    write_seed("npy", name, "", 0, file, pre + hlen + nbytes);
}

static void npy_seeds(void)
{
    npy_seed("c_f4.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 48);
    npy_seed("f_i2.npy", 1, "{'descr': '<i2', 'fortran_order': True, 'shape': (3, 2, 2), }",
             25); /* odd: ROI on */
    npy_seed("be_f8.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }", 32);
    npy_seed("r0_u8.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1);
    npy_seed("b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", 5);
    npy_seed("v2_u2.npy", 2, "{'descr': '<u2', 'fortran_order': False, 'shape': (4, 1), }", 9);
    npy_seed("c8.npy", 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16);
}

/* Appends one RecordIO part (magic, cflag << 29 | length, data, padding) to buf at *n. */
static void rec_part(uint8_t *buf, size_t *n, unsigned cflag, const uint8_t *data, uint32_t len)
{
    uint32_t w[2] = {0xced7230au, cflag << 29 | len};
    for (int k = 0; k < 8; k++)
        buf[(*n)++] = (uint8_t)(w[k / 4] >> (8 * (k % 4)));
    memcpy(buf + *n, data, len);
    *n += len;
    while (*n % 4)
        buf[(*n)++] = 0;
}

static void recordio_seeds(void)
{
    uint8_t data[64] = {0}, buf[512];
    for (int k = 24; k < 64; k++)
        data[k] = (uint8_t)(k * 13);
    data[4] = 0x00, data[5] = 0x00, data[6] = 0x80, data[7] = 0x3f; /* label 1.0f */
    size_t n = 0;
    rec_part(buf, &n, 0, data, 40);
    write_seed("recordio", "whole.rec", "", 0, buf, n);
    n = 0; /* the writer split at two magics: parts 24 + 8 + 12 bytes of data */
    rec_part(buf, &n, 1, data, 24);
    rec_part(buf, &n, 2, data + 24, 8);
    rec_part(buf, &n, 3, data + 36, 12);
    write_seed("recordio", "split.rec", "", 0, buf, n);
    uint8_t multi[40] = {2, 0, 0, 0};
    memcpy(multi + 24, data + 4, 4);
    memcpy(multi + 28, data + 4, 4);
    n = 0;
    rec_part(buf, &n, 0, multi, 37);
    rec_part(buf, &n, 0, data, 25);
    write_seed("recordio", "multi_two.rec", "", 0, buf, n);
}

/* ---- caffe: protobuf by hand (field key, varint, length-delimited) ---------------------- */

typedef struct pb {
    uint8_t b[512];
    size_t n;
} pb;

static void pb_varint(pb *m, uint64_t x)
{
    do {
        m->b[m->n++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
        x >>= 7;
    } while (x);
}

static void pb_int(pb *m, unsigned field, int64_t x)
{
    pb_varint(m, field << 3);
    pb_varint(m, (uint64_t)x);
}

static void pb_bytes(pb *m, unsigned field, const void *d, size_t len)
{
    pb_varint(m, field << 3 | 2);
    pb_varint(m, len);
    memcpy(m->b + m->n, d, len);
    m->n += len;
}

static void caffe_seed(const char *name, uint8_t mode, const pb *m)
{
    write_seed("caffe", name, &mode, 1, m->b, m->n);
}

static void caffe_seeds(void)
{
    static const uint8_t jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 0xff, 0xd9};
    uint8_t pixels[2 * 3 * 3];
    for (size_t k = 0; k < sizeof pixels; k++)
        pixels[k] = (uint8_t)(k * 7);
    pb d = {.n = 0};
    pb_bytes(&d, 4, jpeg, sizeof jpeg);
    pb_int(&d, 5, 7);
    pb_int(&d, 7, 1);
    caffe_seed("datum_encoded", 0, &d);
    d.n = 0;
    pb_int(&d, 1, 3);
    pb_int(&d, 2, 2);
    pb_int(&d, 3, 3);
    pb_bytes(&d, 4, pixels, sizeof pixels);
    pb_int(&d, 5, -2);
    pb_int(&d, 7, 0);
    caffe_seed("datum_raw", 0, &d);
    /* caffe2: image STRING, then labels of each type (INT32, packed) */
    for (int lt = 0; lt < 5; lt++) {
        pb img = {.n = 0}, lab = {.n = 0}, w = {.n = 0}, all = {.n = 0};
        pb_int(&img, 2, 4);
        pb_bytes(&img, 6, jpeg, sizeof jpeg);
        pb_bytes(&all, 1, img.b, img.n);
        const uint8_t idx[] = {0, 2};
        pb_int(&lab, 2, 2);
        pb_bytes(&lab, 4, idx, lt == 0 ? 1 : 2);
        if (lt != 4)
            pb_bytes(&all, 1, lab.b, lab.n);
        if (lt == 3) {
            const float wt[2] = {0.5f, 2.0f};
            pb_int(&w, 2, 1);
            pb_bytes(&w, 3, wt, sizeof wt);
            pb_bytes(&all, 1, w.b, w.n);
        }
        char name[32];
        snprintf(name, sizeof name, "c2_label_type_%d", lt);
        caffe_seed(name, (uint8_t)(1 | lt << 2 | 128), &all);
    }
    /* a raw image (BYTE, dims 2x3x3), a dense float label, two additional inputs, a bbox */
    pb img = {.n = 0}, lab = {.n = 0}, a0 = {.n = 0}, a1 = {.n = 0}, bb = {.n = 0}, all = {.n = 0};
    pb_int(&img, 2, 3);
    pb_int(&img, 1, 2);
    pb_int(&img, 1, 3);
    pb_int(&img, 1, 3);
    pb_bytes(&img, 5, pixels, sizeof pixels);
    const float f[3] = {1.5f, -2.0f, 3.25f};
    pb_bytes(&lab, 3, f, sizeof f);
    pb_int(&a0, 2, 10);
    pb_int(&a0, 10, -5);
    pb_int(&a0, 10, 1LL << 40);
    pb_int(&a1, 2, 2);
    pb_int(&a1, 4, 9);
    const uint8_t box[] = {1, 2, 30, 40};
    pb_int(&bb, 2, 2);
    pb_bytes(&bb, 4, box, sizeof box);
    pb_bytes(&all, 1, img.b, img.n);
    pb_bytes(&all, 1, lab.b, lab.n);
    pb_bytes(&all, 1, a0.b, a0.n);
    pb_bytes(&all, 1, a1.b, a1.n);
    pb_bytes(&all, 1, bb.b, bb.n);
    caffe_seed("c2_raw_additional_bbox", 1 | 2 << 2 | 32 | 64, &all);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz_seeds OUT TESTDATA [SPEC.json...]\n");
        return 2;
    }
    out_dir = argv[1];
    make_dir(NULL);
    make_dir("decode");
    make_dir("roi");
    make_dir("hybrid");
    make_dir("spec");
    make_dir("file_list");
    make_dir("coco");
    make_dir("tfrecord");
    make_dir("wds");
    make_dir("npy");
    make_dir("recordio");
    make_dir("caffe");
    image_seeds(argv[2]);
    spec_seeds(argv + 3, argc - 3);
    file_list_seeds();
    coco_seeds();
    tfrecord_seeds();
    wds_seeds();
    npy_seeds();
    recordio_seeds();
    caffe_seeds();
    printf("fuzz_seeds: seeds in %s\n", out_dir);
    return 0;
}
