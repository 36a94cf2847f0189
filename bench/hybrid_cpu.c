/* bench/hybrid_cpu.c: the CPU share of the hybrid JPEG decoder (decoders.image and
 * decoders.image_random_crop on "mixed", src/ops/decoders/hybrid.h) against the CPU decoder,
 * per image, on one thread.
 *
 *   bench_hybrid_cpu DIR [--reps R]
 *
 * DIR is searched recursively for *.jpg / *.jpeg (any case); the files are read into memory,
 * sorted by path. Three cases, each file decoded R times (default 3) per case and way, after
 * one warm-up pass, timed with the thread's CPU clock:
 *   full   the whole image;
 *   train  a window drawn as decoders.image_random_crop draws it (torchvision's
 *          RandomResizedCrop: area [0.08, 1], aspect ratio [3/4, 4/3]; crop_window.c), a new
 *          one per file and repetition, the same for both ways;
 *   val    the centre crop a validation pipeline keeps (shorter side resized to 256, centre
 *          224 x 224): the centred square of 224/256 of the shorter side.
 * The two ways call the library's own functions (jpeg.c):
 *   cpu     sl__jpeg_decode, what decoders.image(_random_crop) does on "cpu" (RGB, JDCT_ISLOW,
 *           fancy upsampling; a window through jpeg_crop_scanline and skipped rows, the rows
 *           below it never read: a file already known whole);
 *   hybrid  the mixed decoder's CPU half: sl__jpeg_hybrid_plan (setup_sample) and
 *           sl__jpeg_hybrid_coefs (run_sample) for the window, a file known whole (rows below
 *           the window not read); and hybrid_first, the same for a file not yet known whole
 *           (SL__DECODE_TO_END: every row entropy-decoded, the first epoch's cost);
 *   hybrid_libjpeg  hybrid with a single-scan file's entropy decoding left to libjpeg-turbo's
 *           own decoder (SL__HYB_LIBJPEG_HUFF) instead of jpeg_huff.c's: the decoder before
 *           jpeg_huff.c, measured in the same run;
 *   hybrid_device  hybrid staged for device entropy decoding (SL__HYB_DEVICE_HUFF: a file
 *           jpeg_huff.c decoded cleanly in an earlier epoch): the header parsed and the job
 *           written (tables and the compressed scan), no entropy decoding on the CPU;
 *   floor   (whole images only) the same for a window of the bottom-right pixel: every MCU
 *           entropy-decoded (by jpeg_huff.c; a progressive file's by libjpeg) and almost none
 *           kept, the floor of this split for a whole image.
 * Per case one line of JSON goes to stdout: files, mean megapixels, mean CPU microseconds per
 * image of each way, hybrid / cpu of the same case, hybrid / full cpu decode (the issue's
 * measure, the whole decode timed again in the same case's loop, file by file, so that a load
 * drifting between cases does not skew it; also for the single-scan files alone), and the
 * samples the kernels would not decode (fallbacks) and the progressive ones (their whole image
 * entropy-decoded whatever the window), and for hybrid_device the mean staging per sample in
 * KiB: the coefficient area (written by the device) and the job (device_job_kib; 0 for a
 * progressive file, which stays on the CPU). Last lines ("case": "chunks", one per chunk
 * size: 256, SL__HYB_CHUNK = 512, 1024 bytes) measure the device's chunked entropy decoding
 * (hybrid_job.h) of every single-scan file's whole-image job on this CPU: chunks per job, the
 * share of chunks whose entry is still wrong after 1, 2, 3 and 4 rounds (wrong_after_rounds:
 * what is left to the fixup's one thread per sample), and, for the device's size with its 3
 * rounds, the chunked decode's CPU time against the one-thread walk's (work_over_walk: the
 * passes decode each bit about 3 times, some more). The very last line ("case": "intervals")
 * does the same for the whole-image jobs with a restart interval (hybrid_job.h's decode by
 * intervals): intervals per job, the scan's KiB, the KiB of the longest thread's intervals
 * (the device's time for the sample goes as that) and its share of the scan (the one-thread
 * walk's: 1), and the CPU time of the walk and of the decode by intervals (work_over_walk:
 * about 1, the markers found twice besides). Exit status 2 on bad usage or when DIR
 * holds no JPEG, 1 when a file fails.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ops/decoders/codec.h"
#include "ops/decoders/hybrid.h"
#include "ops/decoders/hybrid_job.h"
#include "ops/image/crop_window.h"

typedef struct file {
    char *path;
    unsigned char *data;
    size_t size;
    int w, h;
    int progressive; /* a multi-scan file: its whole image entropy-decoded */
} file;

static file *files;
static int nfiles, capfiles;

static int by_path(const void *a, const void *b)
{
    return strcmp(((const file *)a)->path, ((const file *)b)->path);
}

static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc(n > 0 ? (size_t)n : 1);
    if (!d || fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        fclose(f);
        return;
    }
    fclose(f);
    if (nfiles == capfiles) {
        capfiles = capfiles ? 2 * capfiles : 64;
        files = realloc(files, sizeof(file) * (size_t)capfiles);
    }
    files[nfiles++] = (file){strdup(path), d, (size_t)n, 0, 0, 0};
}

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        const char *dot = strrchr(e->d_name, '.');
        if (e->d_type == DT_DIR)
            walk(p);
        else if (dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0))
            add_file(p);
    }
    if (d)
        closedir(d);
}

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* One growing buffer for the output / staging, one for the codec's scratch (as a worker's). */
static unsigned char *room(unsigned char **buf, size_t *cap, size_t n)
{
    if (n > *cap) {
        free(*buf);
        *buf = malloc(n);
        *cap = n;
    }
    return *buf;
}

static unsigned char *out_buf, *scratch_buf;
static size_t out_cap, scratch_cap;

static void *scratch(void *ctx, size_t bytes)
{
    (void)ctx;
    return room(&scratch_buf, &scratch_cap, bytes);
}

static const sl__decode_mem mem = {scratch, NULL, SIZE_MAX};

enum { CASE_FULL, CASE_TRAIN, CASE_VAL, NCASES };
static const char *const case_names[NCASES] = {"full", "train", "val"};
enum {
    WAY_CPU,
    WAY_HYBRID,
    WAY_HYBRID_FIRST,
    WAY_HYBRID_LIBJPEG,
    WAY_HYBRID_DEVICE,
    WAY_FLOOR,
    WAY_FULL,
    NWAYS
};

/* WAY_HYBRID_DEVICE's staging of the last decode: coefficient and job bytes. */
static size_t last_coef_bytes, last_job_bytes;

/* File k's window for case `cs`, repetition r (the whole image for CASE_FULL). */
static sl__roi window_of(int k, int cs, int r)
{
    const file *f = &files[k];
    sl__roi roi = {0, 0, f->w, f->h, 0};
    if (cs == CASE_TRAIN) {
        static const double area[2] = {0.08, 1.0}, ratio[2] = {3.0 / 4.0, 4.0 / 3.0};
        sl_rng g;
        sl_rng_init(&g, 1234, (uint64_t)k, (uint64_t)r);
        sl__window w;
        sl__random_window(&g, f->w, f->h, area, ratio, 10, &w);
        roi = (sl__roi){w.x, w.y, w.w, w.h, 0};
    } else if (cs == CASE_VAL) {
        int shorter = f->w < f->h ? f->w : f->h;
        int side = (int)(((long long)shorter * 224 + 128) / 256);
        side = side < 1 ? 1 : side;
        roi = (sl__roi){(f->w - side) / 2, (f->h - side) / 2, side, side, 0};
    }
    return roi;
}

/* Returns 0 on success; *fallback: the kernels would not decode it; *progressive. */
static int decode(int k, int cs, int r, int way, int *fallback)
{
    const file *f = &files[k];
    sl__roi roi = window_of(k, cs, r);
    const sl__roi *win = cs == CASE_FULL ? NULL : &roi;
    if (way == WAY_FLOOR) { /* the bottom-right pixel: every MCU decoded, almost none kept */
        roi = (sl__roi){f->w - 1, f->h - 1, 1, 1, 0};
        win = &roi;
    }
    if (way == WAY_FULL) { /* the whole image on the CPU, again in this case's loop */
        roi = (sl__roi){0, 0, f->w, f->h, 0};
        win = NULL;
        way = WAY_CPU;
    }
    char err[256];
    sl_status s;
    if (way == WAY_CPU) {
        unsigned char *out = room(&out_buf, &out_cap, (size_t)roi.w * (size_t)roi.h * 3);
        s = sl__jpeg_decode(f->data, f->size, SL__COLOR_RGB, 0, win, out, &mem, err, sizeof err);
    } else {
        unsigned flags = way == WAY_HYBRID_FIRST     ? SL__DECODE_TO_END
                         : way == WAY_HYBRID_LIBJPEG ? SL__HYB_LIBJPEG_HUFF
                         : way == WAY_HYBRID_DEVICE  ? SL__HYB_DEVICE_HUFF
                                                     : 0;
        sl__hyb_head head;
        size_t bytes = 0;
        const char *why = NULL;
        s = sl__jpeg_hybrid_plan(f->data, f->size, SL__COLOR_RGB, flags, win, &mem, &head, &bytes,
                                 &why, err, sizeof err);
        if (s == SL_OK && head.kind == SL__HYB_COEFS) {
            unsigned char *out = room(&out_buf, &out_cap, bytes);
            s = sl__jpeg_hybrid_coefs(f->data, f->size, SL__COLOR_RGB, flags, win, &mem, out, bytes,
                                      &why, err, sizeof err);
            const sl__hyb_head *h = (const sl__hyb_head *)(void *)out;
            if (s == SL_OK && h->kind != SL__HYB_COEFS)
                head.kind = SL__HYB_PIXELS;
            if (s == SL_OK && way == WAY_HYBRID_DEVICE) {
                last_coef_bytes = (size_t)h->nblocks * 128;
                last_job_bytes = h->huff_off ? bytes - (size_t)h->huff_off : 0;
            }
        }
        if (s == SL_OK && head.kind != SL__HYB_COEFS) { /* the fallback: the CPU decode */
            *fallback = 1;
            unsigned char *out = room(&out_buf, &out_cap, (size_t)roi.w * (size_t)roi.h * 3);
            s = sl__jpeg_decode(f->data, f->size, SL__COLOR_RGB, 0, win, out, &mem, err,
                                sizeof err);
        }
    }
    if (s != SL_OK)
        fprintf(stderr, "%s: %s\n", f->path, err);
    return s != SL_OK;
}

/* File f's whole-image job for device entropy decoding, staged into a new *stage, with a zeroed
 * coefficient area in a new *coefs (both the caller's to free). Returns 1, 0 where the file
 * has no such job (progressive, or not for the kernels), or -1 where the staging failed
 * (reported). */
static int stage_job(const file *f, unsigned char **stage, unsigned char **coefs)
{
    sl__hyb_head head;
    size_t bytes = 0;
    const char *why = NULL;
    char err[256] = "out of memory";
    *stage = *coefs = NULL;
    if (sl__jpeg_hybrid_plan(f->data, f->size, SL__COLOR_RGB, SL__HYB_DEVICE_HUFF, NULL, &mem,
                             &head, &bytes, &why, err, sizeof err) != SL_OK ||
        head.kind != SL__HYB_COEFS || !head.huff_off)
        return 0;
    snprintf(err, sizeof err, "out of memory");
    *stage = malloc(bytes);
    *coefs = calloc(1, SL__HYB_HEAD_BYTES + (size_t)head.nblocks * 128);
    bool clean = false;
    if (!*stage || !*coefs ||
        sl__jpeg_hybrid_stage(f->data, f->size, SL__COLOR_RGB, SL__HYB_DEVICE_HUFF, NULL, &mem,
                              *stage, bytes, &why, &clean, err, sizeof err) != SL_OK) {
        fprintf(stderr, "%s: staging the job failed: %s\n", f->path, err);
        return -1;
    }
    return 1;
}

/* A "chunks" line (see the top) for chunks of `chunk` bytes: the whole-image job of every
 * single-scan file through the kernels' passes (the entries checked after each round), and
 * with timed set, the one-thread walk and the chunked decode (3 rounds) timed. */
/* The one-thread walk over file f's staged job, reps times: its mean CPU time in
 * microseconds, or -1 (said on stderr) where it gave up. What the chunks and intervals lines
 * time their decodes against. */
static double walk_time(const file *f, const sl__hyb_head *h, const unsigned char *job,
                        unsigned char *coefs, int reps)
{
    const double t0 = cpu_us();
    for (int r = 0; r < reps; r++)
        if (sl__hyb_job_decode(h, job, coefs) != SL__HUFF_OK) {
            fprintf(stderr, "%s: the job's walk gave up\n", f->path);
            return -1;
        }
    return (cpu_us() - t0) / reps;
}

static int chunk_stats(int reps, int chunk, int timed)
{
    enum { ROUNDS = 4 };
    double walk_us = 0, chunked_us = 0;
    long chunks = 0, wrong[ROUNDS] = {0}, jobs = 0;
    for (int k = 0; k < nfiles; k++) {
        const file *f = &files[k];
        unsigned char *stage, *coefs;
        const int got = stage_job(f, &stage, &coefs);
        if (got < 0)
            return 1;
        if (got == 0)
            continue; /* progressive, or not for the kernels */
        const sl__hyb_head *h = (const sl__hyb_head *)(void *)stage;
        const unsigned char *job = stage + h->huff_off;
        const int n = sl__hyb_job_chunks((const sl__hyb_huff_job *)(const void *)job, chunk);
        sl__hyb_chunk *rec = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *rec);
        if (n < 1 || !rec) { /* a restart interval: one thread */
            free(rec);
            free(stage);
            free(coefs);
            continue;
        }
        jobs++;
        const int last = sl__hyb_chunks_first(h, job, n, chunk, rec);
        chunks += last > 1 ? last - 1 : 0; /* the chunks a round may decode again */
        sl__hyb_chunk *cur = rec, *next = rec + n;
        for (int r = 0; r < ROUNDS; r++) {
            sl__hyb_chunks_round(h, job, n, last, &cur, &next);
            for (int t = 1; t < last; t++)
                wrong[r] += cur[t].gpos != cur[t - 1].xpos || cur[t].gb != cur[t - 1].xb;
        }
        if (timed) {
            const double w = walk_time(f, h, job, coefs, reps), t1 = cpu_us();
            if (w < 0)
                return 1;
            for (int r = 0; r < reps; r++)
                if (sl__hyb_job_decode_chunked(h, job, coefs, chunk, 3, rec) != SL__HUFF_OK) {
                    fprintf(stderr, "%s: the chunked decode gave up\n", f->path);
                    return 1;
                }
            walk_us += w;
            chunked_us += (cpu_us() - t1) / reps;
        }
        free(rec);
        free(stage);
        free(coefs);
    }
    double w[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        w[r] = chunks ? (double)wrong[r] / (double)chunks : 0.0;
    printf("{\"case\": \"chunks\", \"jobs\": %ld, \"chunk_bytes\": %d, \"chunks_per_job\": %.1f, "
           "\"wrong_after_rounds\": [%.4f, %.4f, %.4f, %.4f]",
           jobs, chunk, jobs ? (double)chunks / jobs : 0.0, w[0], w[1], w[2], w[3]);
    if (timed)
        printf(", \"walk_us\": %.1f, \"chunked_us\": %.1f, \"work_over_walk\": %.2f",
               jobs ? walk_us / jobs : 0.0, jobs ? chunked_us / jobs : 0.0,
               walk_us > 0 ? chunked_us / walk_us : 0.0);
    printf("}\n");
    return 0;
}

/* The "intervals" line (see the top): every whole-image job with a restart interval, its
 * decode by intervals (hybrid_job.h, markers found in SL__HYB_CHUNK-byte chunks): the bytes of
 * the longest thread's intervals (each chunk's thread decodes the intervals whose marker
 * starts in it; an interval runs from its marker to the next), against the job's scan, and
 * the CPU time of the one-thread walk and of the decode by intervals on one thread. */
static int interval_stats(int reps)
{
    double walk_us = 0, by_intervals_us = 0, longest = 0, scan = 0, share = 0, intervals = 0;
    long jobs = 0;
    for (int k = 0; k < nfiles; k++) {
        const file *f = &files[k];
        unsigned char *stage, *coefs;
        const int got = stage_job(f, &stage, &coefs);
        if (got < 0)
            return 1;
        if (got == 0)
            continue;
        const sl__hyb_head *h = (const sl__hyb_head *)(void *)stage;
        const unsigned char *job = stage + h->huff_off;
        const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
        const int n = sl__hyb_job_marker_chunks(jb, SL__HYB_CHUNK);
        int32_t *cnt = malloc((size_t)(n > 0 ? n : 1) * sizeof *cnt);
        double *work = calloc((size_t)(n > 0 ? n : 1), sizeof *work);
        if (n < 1 || !cnt || !work) { /* no restart interval */
            free(cnt);
            free(work);
            free(stage);
            free(coefs);
            continue;
        }
        jobs++;
        /* interval j (j >= 1) from marker j - 1 to marker j, interval 0 from the data's start */
        const unsigned char *d = job + jb->data_off;
        const int64_t len = (int64_t)jb->data_len, m = sl__hyb_job_intervals(jb);
        int64_t from = 0, j = 0, owner = 0;
        for (int64_t i = 0; i < len && j < m; i++) {
            if (!sl__hyb_marker_at(d, len, i))
                continue;
            work[owner] += (double)(i - from);
            from = i;
            owner = i / SL__HYB_CHUNK;
            j++;
        }
        double most = 0;
        for (int t = 0; t < n; t++)
            most = work[t] > most ? work[t] : most;
        longest += most;
        scan += (double)from; /* the scan's bytes up to its last interval's end */
        share += from > 0 ? most / (double)from : 0.0;
        intervals += (double)m;
        const double w = walk_time(f, h, job, coefs, reps), t1 = cpu_us();
        if (w < 0)
            return 1;
        for (int r = 0; r < reps; r++)
            if (sl__hyb_job_decode_intervals(h, job, coefs, SL__HYB_CHUNK, cnt) != SL__HUFF_OK) {
                fprintf(stderr, "%s: the decode by intervals gave up\n", f->path);
                return 1;
            }
        walk_us += w;
        by_intervals_us += (cpu_us() - t1) / reps;
        free(cnt);
        free(work);
        free(stage);
        free(coefs);
    }
    const double j = jobs ? (double)jobs : 1.0;
    printf("{\"case\": \"intervals\", \"jobs\": %ld, \"intervals_per_job\": %.1f, "
           "\"scan_kib\": %.1f, \"longest_thread_kib\": %.2f, \"longest_thread_share\": %.4f, "
           "\"walk_us\": %.1f, \"intervals_us\": %.1f, \"work_over_walk\": %.2f}\n",
           jobs, intervals / j, scan / j / 1024, longest / j / 1024, share / j, walk_us / j,
           by_intervals_us / j, walk_us > 0 ? by_intervals_us / walk_us : 0.0);
    return 0;
}

/* A progressive (SOF2) or other multi-scan file: the first SOFn marker's type. */
static int is_progressive(const file *f)
{
    for (size_t i = 2; i + 3 < f->size;) {
        if (f->data[i] != 0xff) {
            i++;
            continue;
        }
        unsigned m = f->data[i + 1];
        if (m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce)
            return 1;
        if ((m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) || m == 0xda)
            return 0;
        if (m == 0xff || m == 0xd8 || (m >= 0xd0 && m <= 0xd7)) {
            i += m == 0xff ? 1 : 2;
            continue;
        }
        i += 2 + ((size_t)f->data[i + 2] << 8 | f->data[i + 3]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 3;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            dir = argv[i];
    }
    if (!dir || reps < 1) {
        fprintf(stderr, "usage: bench_hybrid_cpu DIR [--reps R]\n");
        return 2;
    }
    walk(dir);
    if (nfiles == 0) {
        fprintf(stderr, "%s: no JPEG files\n", dir);
        return 2;
    }
    qsort(files, (size_t)nfiles, sizeof(file), by_path);
    double mp = 0;
    int progressive = 0;
    double file_kib = 0;
    for (int k = 0; k < nfiles; k++) {
        file_kib += (double)files[k].size / 1024 / nfiles;
        sl__image_info info;
        char err[256];
        if (sl__jpeg_peek(files[k].data, files[k].size, &info, err, sizeof err) != SL_OK) {
            fprintf(stderr, "%s: %s\n", files[k].path, err);
            return 1;
        }
        files[k].w = info.width;
        files[k].h = info.height;
        mp += (double)info.width * info.height / 1e6;
        files[k].progressive = is_progressive(&files[k]);
        progressive += files[k].progressive;
    }
    /* [case][way], all files and the single-scan (baseline) ones alone */
    double t[NCASES][NWAYS] = {{0}}, tb[NCASES][NWAYS] = {{0}};
    double coef_kib[NCASES] = {0}, job_kib[NCASES] = {0};
    int nbase = nfiles - progressive;
    for (int cs = 0; cs < NCASES; cs++) {
        int fallbacks = 0;
        for (int k = 0; k < nfiles; k++) {
            for (int way = 0; way < NWAYS; way++) {
                if ((way == WAY_FLOOR && cs != CASE_FULL) || (way == WAY_FULL && cs == CASE_FULL))
                    continue;
                int fb = 0;
                if (decode(k, cs, 0, way, &fb)) /* the warm-up */
                    return 1;
                fallbacks += way == WAY_HYBRID && fb;
                double t0 = cpu_us();
                for (int r = 0; r < reps; r++)
                    decode(k, cs, r, way, &fb);
                double us = (cpu_us() - t0) / reps;
                if (way == WAY_HYBRID_DEVICE) {
                    coef_kib[cs] += (double)last_coef_bytes / 1024 / nfiles;
                    job_kib[cs] += (double)last_job_bytes / 1024 / nfiles;
                }
                t[cs][way] += us / nfiles;
                if (!files[k].progressive)
                    tb[cs][way] += us / (nbase ? nbase : 1);
            }
        }
        /* the whole decode measured in this case's own loop (the load may drift between cases) */
        int full = cs == CASE_FULL ? WAY_CPU : WAY_FULL;
        printf("{\"case\": \"%s\", \"files\": %d, \"mean_mp\": %.4f, \"progressive\": %d, "
               "\"fallbacks\": %d, \"cpu_us\": %.1f, \"full_cpu_us\": %.1f, \"hybrid_us\": %.1f, "
               "\"hybrid_first_us\": %.1f, \"hybrid_libjpeg_us\": %.1f, "
               "\"hybrid_over_cpu\": %.3f, \"hybrid_over_full\": %.3f, "
               "\"hybrid_first_over_full\": %.3f, \"hybrid_libjpeg_over_full\": %.3f, "
               "\"baseline_hybrid_over_full\": %.3f, \"entropy_floor_over_full\": %.3f, "
               "\"hybrid_device_us\": %.1f, \"hybrid_device_over_full\": %.3f, "
               "\"coef_kib\": %.1f, \"device_job_kib\": %.1f, \"file_kib\": %.1f}\n",
               case_names[cs], nfiles, mp / nfiles, progressive, fallbacks, t[cs][WAY_CPU],
               t[cs][full], t[cs][WAY_HYBRID], t[cs][WAY_HYBRID_FIRST], t[cs][WAY_HYBRID_LIBJPEG],
               t[cs][WAY_HYBRID] / t[cs][WAY_CPU], t[cs][WAY_HYBRID] / t[cs][full],
               t[cs][WAY_HYBRID_FIRST] / t[cs][full], t[cs][WAY_HYBRID_LIBJPEG] / t[cs][full],
               nbase ? tb[cs][WAY_HYBRID] / tb[cs][full] : 0.0,
               t[CASE_FULL][WAY_FLOOR] / t[CASE_FULL][WAY_CPU], t[cs][WAY_HYBRID_DEVICE],
               t[cs][WAY_HYBRID_DEVICE] / t[cs][full], coef_kib[cs], job_kib[cs], file_kib);
        fflush(stdout);
    }
    static const int sizes[] = {256, SL__HYB_CHUNK, 1024};
    for (int k = 0; k < 3; k++)
        if (chunk_stats(reps, sizes[k], sizes[k] == SL__HYB_CHUNK))
            return 1;
    return interval_stats(reps);
}
