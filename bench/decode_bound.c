/* bench/decode_bound.c: the decode bound of /work/shared/BENCHMARK.md — how fast libjpeg-turbo
 * alone turns the data set's JPEG files into RGB pixels on N threads, with every file already
 * in memory. No CPU pipeline that decodes every file whole can beat it; sluice's val pipeline is
 * measured against the "full" figure, its train pipeline (which may decode only the crop
 * window) against both.
 *
 *   bench_decode_bound DIR [--threads N] [--mode full|roi|roi-scaled] [--epochs E]
 *                      [--warmup W] [--split dynamic|static] [--seed S] [--target T]
 *                      [--scales all|pow2]
 *
 * DIR is searched recursively for *.jpg / *.jpeg (any case); the files are read into memory,
 * sorted by path. Then W warm-up epochs (default 1) and E timed epochs (default 1) each decode
 * every file once, split over N threads (default: the online CPUs) either dynamically (an
 * atomic counter, one file at a time: the default) or statically (thread t takes the t-th
 * contiguous slice). One line of JSON goes to stdout: images/s over the timed epochs and their
 * wall time, the per-epoch rates, the mean megapixels of output (the window, in the roi modes) per
 * image, and failures.
 *
 * Decoding is set up like sluice's decoders.image (src/ops/decoders/jpeg.c): output RGB (gray
 * files too), JDCT_ISLOW, fancy upsampling and block smoothing on, rows read straight into a
 * per-thread output buffer, jpeg_abort_decompress after the last row (the EOI is never read).
 *
 * Modes:
 *   full        the whole image.
 *   roi         only the window of a random resized crop, drawn like torchvision's
 *               RandomResizedCrop.get_params (area [0.08, 1] of the image, aspect log-uniform
 *               in [3/4, 4/3], 10 tries, then the centred crop with the aspect clamped), from a
 *               seeded generator per (seed, epoch, file): jpeg_crop_scanline narrows the columns
 *               (widened by 4 px of context on each side, as sluice does, then to iMCU
 *               boundaries), jpeg_skip_scanlines skips the rows above, decoding stops after the
 *               window's last row.
 *   roi-scaled  as roi, and the file is decoded at the smallest DCT scale n/8 at which the
 *               window still covers T x T pixels (--target, default 224), n = 1..8 (--scales
 *               all, the default: what decoders.image_random_crop with `size` does) or n in
 *               {1, 2, 4, 8} (--scales pow2: the scales libjpeg-turbo has SIMD IDCTs for; the
 *               others run plain C and can cost more than they save).
 * Exit status: 0, or 1 when a file failed to decode (counted in "failed", named on stderr),
 * 2 on bad usage or when DIR holds no JPEG.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>

#define CROP_MARGIN 4 /* columns of context kept on each side of a window, as in sluice */
#define MAX_THREADS 1024
#define STR_(x) #x
#define STR(x) STR_(x)

typedef enum { MODE_FULL, MODE_ROI, MODE_ROI_SCALED } decode_mode;
static const char *const mode_names[] = {"full", "roi", "roi-scaled"};

typedef struct file {
    char *path;
    uint8_t *data;
    size_t size;
} file;

typedef struct config {
    const char *dir;
    int threads, epochs, warmup, target;
    bool dynamic, pow2;
    decode_mode mode;
    uint64_t seed;
} config;

/* Shared by the threads of one epoch. */
typedef struct epoch_job {
    const config *cfg;
    const file *files;
    size_t nfiles;
    int epoch;
    atomic_size_t next;  /* dynamic split: the next file to take */
    atomic_long failed;  /* files that failed this epoch */
    atomic_llong pixels; /* pixels written this epoch */
} epoch_job;

typedef struct worker {
    epoch_job *job;
    int index;
    size_t out_cap;
    uint8_t *out; /* this thread's output buffer, reused for every image */
} worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the data set ---------------------------------------------------------------------------- */

static bool is_jpeg_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

typedef struct file_list {
    file *v;
    size_t n, cap;
} file_list;

static int list_dir(const char *dir, file_list *fl)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "bench_decode_bound: cannot open \"%s\": %s\n", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) {
            free(path);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = list_dir(path, fl);
            free(path);
        } else if (S_ISREG(st.st_mode) && is_jpeg_name(e->d_name)) {
            if (fl->n == fl->cap) {
                size_t cap = fl->cap ? fl->cap * 2 : 1024;
                file *v = realloc(fl->v, cap * sizeof *v);
                if (!v) {
                    free(path);
                    rc = -1;
                    break;
                }
                fl->v = v;
                fl->cap = cap;
            }
            fl->v[fl->n++] = (file){.path = path, .size = (size_t)st.st_size};
        } else {
            free(path);
        }
    }
    closedir(d);
    return rc;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(((const file *)a)->path, ((const file *)b)->path);
}

static int load_files(file_list *fl)
{
    qsort(fl->v, fl->n, sizeof *fl->v, cmp_path);
    for (size_t i = 0; i < fl->n; i++) {
        file *f = &fl->v[i];
        FILE *fp = fopen(f->path, "rb");
        f->data = fp && f->size ? malloc(f->size) : NULL;
        if (!fp || !f->data || fread(f->data, 1, f->size, fp) != f->size) {
            fprintf(stderr, "bench_decode_bound: cannot read \"%s\"\n", f->path);
            if (fp)
                fclose(fp);
            return -1;
        }
        fclose(fp);
    }
    return 0;
}

/* ---- random windows (torchvision's RandomResizedCrop.get_params) ----------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

typedef struct window {
    int x, y, w, h;
} window;

/* A window of a W x H image, from the generator of (seed, epoch, file index). Python's round()
 * rounds halves to even, as nearbyint() does in the default rounding mode. */
static window random_window(int W, int H, uint64_t seed, int epoch, size_t index)
{
    uint64_t s = seed * 0x100000001B3ull ^ ((uint64_t)epoch << 40) ^ (uint64_t)index;
    splitmix64(&s);
    const double area = (double)W * H, lo = log(3.0 / 4.0), hi = log(4.0 / 3.0);
    for (int attempt = 0; attempt < 10; attempt++) {
        double target = area * (0.08 + 0.92 * uniform01(&s));
        double aspect = exp(lo + (hi - lo) * uniform01(&s));
        int w = (int)nearbyint(sqrt(target * aspect));
        int h = (int)nearbyint(sqrt(target / aspect));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            int y = (int)(uniform01(&s) * (H - h + 1));
            int x = (int)(uniform01(&s) * (W - w + 1));
            return (window){x, y, w, h};
        }
    }
    double in_ratio = (double)W / H;
    int w = W, h = H;
    if (in_ratio < 3.0 / 4.0)
        h = (int)nearbyint(w / (3.0 / 4.0));
    else if (in_ratio > 4.0 / 3.0)
        w = (int)nearbyint(h * (4.0 / 3.0));
    return (window){(W - w) / 2, (H - h) / 2, w, h};
}

/* ---- decoding -------------------------------------------------------------------------------- */

typedef struct error_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} error_mgr;

static void on_error(j_common_ptr c)
{
    longjmp(((error_mgr *)c->err)->jump, 1);
}

static void on_message(j_common_ptr c, int level)
{
    (void)c; /* warnings (corrupt-data recovery) are not counted: sluice treats them alike */
    (void)level;
}

/* Makes sure w->out holds n bytes. */
static bool reserve(worker *w, size_t n)
{
    if (n <= w->out_cap)
        return true;
    uint8_t *p = realloc(w->out, n);
    if (!p)
        return false;
    w->out = p;
    w->out_cap = n;
    return true;
}

/* Decodes file `index` into w->out. Returns: pixels written, or -1 on failure. */
static long long decode_one(worker *w, struct jpeg_decompress_struct *c, error_mgr *em,
                            size_t index)
{
    const epoch_job *job = w->job;
    const file *f = &job->files[index];
    if (setjmp(em->jump)) {
        char msg[JMSG_LENGTH_MAX];
        c->err->format_message((j_common_ptr)c, msg);
        fprintf(stderr, "bench_decode_bound: %s: %s\n", f->path, msg);
        jpeg_abort_decompress(c);
        return -1;
    }
    jpeg_mem_src(c, f->data, (unsigned long)f->size);
    jpeg_read_header(c, TRUE);
    c->out_color_space = JCS_RGB;
    c->dct_method = JDCT_ISLOW;
    c->do_fancy_upsampling = TRUE;
    c->do_block_smoothing = TRUE;
    window r = {0, 0, (int)c->image_width, (int)c->image_height};
    if (job->cfg->mode != MODE_FULL) {
        r = random_window((int)c->image_width, (int)c->image_height, job->cfg->seed, job->epoch,
                          index);
        if (job->cfg->mode == MODE_ROI_SCALED) {
            int n = 1, t = job->cfg->target;
            while (n < 8 && ((long)r.w * n < 8L * t || (long)r.h * n < 8L * t))
                n = job->cfg->pow2 ? 2 * n : n + 1;
            c->scale_num = (unsigned)n;
            c->scale_denom = 8;
            /* the window in scaled coordinates, kept inside the scaled image */
            jpeg_calc_output_dimensions(c);
            int x0 = r.x * n / 8, y0 = r.y * n / 8;
            int x1 = (int)ceil((r.x + r.w) * n / 8.0), y1 = (int)ceil((r.y + r.h) * n / 8.0);
            x1 = x1 > (int)c->output_width ? (int)c->output_width : x1;
            y1 = y1 > (int)c->output_height ? (int)c->output_height : y1;
            r = (window){x0, y0, x1 - x0, y1 - y0};
        }
    }
    jpeg_start_decompress(c);
    if (job->cfg->mode != MODE_FULL) {
        int left = r.x < CROP_MARGIN ? 0 : r.x - CROP_MARGIN;
        int right = (int)c->output_width - (r.x + r.w) < CROP_MARGIN ? (int)c->output_width
                                                                     : r.x + r.w + CROP_MARGIN;
        JDIMENSION x0 = (JDIMENSION)left, cw = (JDIMENSION)(right - left);
        if (cw != c->output_width)
            jpeg_crop_scanline(c, &x0, &cw);
        if (r.y > 0 && jpeg_skip_scanlines(c, (JDIMENSION)r.y) != (JDIMENSION)r.y) {
            fprintf(stderr, "bench_decode_bound: %s: fewer rows than the header\n", f->path);
            jpeg_abort_decompress(c);
            return -1;
        }
    }
    size_t row = (size_t)c->output_width * 3; /* the (cropped) width libjpeg writes */
    if (!reserve(w, row * (size_t)r.h)) {
        jpeg_abort_decompress(c);
        return -1;
    }
    int y = 0;
    while (y < r.h) {
        JSAMPROW rows[16];
        int n = r.h - y < 16 ? r.h - y : 16;
        for (int i = 0; i < n; i++)
            rows[i] = w->out + (size_t)(y + i) * row;
        JDIMENSION got = jpeg_read_scanlines(c, rows, (JDIMENSION)n);
        if (got == 0)
            break;
        y += (int)got;
    }
    jpeg_abort_decompress(c); /* rows below the window and the EOI are never read */
    return (long long)r.w * y;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    epoch_job *job = w->job;
    struct jpeg_decompress_struct c;
    error_mgr em;
    c.err = jpeg_std_error(&em.pub);
    em.pub.error_exit = on_error;
    em.pub.emit_message = on_message;
    jpeg_create_decompress(&c);
    long failed = 0;
    long long pixels = 0;
    int nt = job->cfg->threads;
    size_t lo = job->nfiles * (size_t)w->index / (size_t)nt;
    size_t hi = job->nfiles * (size_t)(w->index + 1) / (size_t)nt;
    for (size_t k = lo;; k++) {
        size_t i = job->cfg->dynamic ? atomic_fetch_add(&job->next, 1) : k;
        if (i >= (job->cfg->dynamic ? job->nfiles : hi))
            break;
        long long p = decode_one(w, &c, &em, i);
        if (p < 0)
            failed++;
        else
            pixels += p;
    }
    jpeg_destroy_decompress(&c);
    atomic_fetch_add(&job->failed, failed);
    atomic_fetch_add(&job->pixels, pixels);
    return NULL;
}

/* Runs one epoch. Returns: its wall time in seconds, or -1 when a thread did not start. */
static double run_epoch(epoch_job *job, worker *workers)
{
    pthread_t tid[MAX_THREADS];
    int started = 0;
    atomic_store(&job->next, 0);
    double t0 = now_s();
    for (; started < job->cfg->threads; started++) {
        workers[started].job = job;
        if (pthread_create(&tid[started], NULL, worker_main, &workers[started]) != 0)
            break;
    }
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    double t = now_s() - t0;
    return started == job->cfg->threads ? t : -1.0;
}

/* ---- command line ---------------------------------------------------------------------------- */

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "bench_decode_bound: %s\n", why);
    fprintf(stderr, "usage: bench_decode_bound DIR [--threads N] [--mode full|roi|roi-scaled] "
                    "[--epochs E] [--warmup W]\n"
                    "                          [--split dynamic|static] [--seed S] [--target T]"
                    " [--scales all|pow2]\n");
    return 2;
}

static bool int_arg(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

static int parse(int argc, char **argv, config *cfg)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    *cfg = (config){.threads = ncpu > 0 ? (int)ncpu : 1,
                    .epochs = 1,
                    .warmup = 1,
                    .target = 224,
                    .dynamic = true,
                    .mode = MODE_FULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int seed = 0;
        bool ok = true;
        if (a[0] != '-') {
            if (cfg->dir)
                return usage("one directory only");
            cfg->dir = a;
            continue;
        }
        if (!v)
            return usage("an option needs a value");
        if (strcmp(a, "--threads") == 0) {
            ok = int_arg(v, 1, MAX_THREADS, &cfg->threads);
        } else if (strcmp(a, "--epochs") == 0) {
            ok = int_arg(v, 1, 1000000, &cfg->epochs);
        } else if (strcmp(a, "--warmup") == 0) {
            ok = int_arg(v, 0, 1000000, &cfg->warmup);
        } else if (strcmp(a, "--target") == 0) {
            ok = int_arg(v, 1, 65535, &cfg->target);
        } else if (strcmp(a, "--seed") == 0) {
            ok = int_arg(v, 0, 2147483647, &seed);
            cfg->seed = (uint64_t)seed;
        } else if (strcmp(a, "--scales") == 0) {
            ok = strcmp(v, "all") == 0 || strcmp(v, "pow2") == 0;
            cfg->pow2 = strcmp(v, "pow2") == 0;
        } else if (strcmp(a, "--split") == 0) {
            ok = strcmp(v, "dynamic") == 0 || strcmp(v, "static") == 0;
            cfg->dynamic = strcmp(v, "static") != 0;
        } else if (strcmp(a, "--mode") == 0) {
            ok = false;
            for (int m = 0; m < 3; m++) {
                if (strcmp(v, mode_names[m]) == 0) {
                    cfg->mode = (decode_mode)m;
                    ok = true;
                }
            }
        } else {
            return usage("unknown option");
        }
        if (!ok) {
            fprintf(stderr, "bench_decode_bound: bad value for %s: \"%s\"\n", a, v);
            return usage(NULL);
        }
        i++;
    }
    return cfg->dir ? 0 : usage("no directory given");
}

int main(int argc, char **argv)
{
    config cfg;
    int rc = parse(argc, argv, &cfg);
    if (rc)
        return rc;
    file_list fl = {0};
    if (list_dir(cfg.dir, &fl) != 0)
        return 2;
    if (fl.n == 0) {
        fprintf(stderr, "bench_decode_bound: no .jpg/.jpeg file under \"%s\"\n", cfg.dir);
        return 2;
    }
    if (load_files(&fl) != 0)
        return 2;
    size_t bytes = 0;
    for (size_t i = 0; i < fl.n; i++)
        bytes += fl.v[i].size;

    worker *workers = calloc((size_t)cfg.threads, sizeof *workers);
    double *rates = calloc((size_t)cfg.epochs, sizeof *rates);
    if (!workers || !rates)
        return 2;
    for (int t = 0; t < cfg.threads; t++)
        workers[t].index = t;

    double timed = 0.0;
    long failed = 0;
    long long pixels = 0;
    for (int e = 0; e < cfg.warmup + cfg.epochs; e++) {
        epoch_job job = {.cfg = &cfg, .files = fl.v, .nfiles = fl.n, .epoch = e};
        atomic_init(&job.next, 0);
        atomic_init(&job.failed, 0);
        atomic_init(&job.pixels, 0);
        double t = run_epoch(&job, workers);
        if (t < 0) {
            fprintf(stderr, "bench_decode_bound: cannot start %d threads\n", cfg.threads);
            return 2;
        }
        if (e >= cfg.warmup) {
            timed += t;
            rates[e - cfg.warmup] = (double)fl.n / t;
            failed += atomic_load(&job.failed);
            pixels += atomic_load(&job.pixels);
        }
    }

    long long images = (long long)fl.n * cfg.epochs;
    printf("{\"bench\": \"decode_bound\", \"mode\": \"%s\", \"threads\": %d, \"split\": \"%s\", "
           "\"files\": %zu, \"mean_file_kib\": %.1f, \"warmup_epochs\": %d, \"epochs\": %d, "
           "\"seconds\": %.4f, \"images_per_s\": %.1f, \"epoch_images_per_s\": [",
           mode_names[cfg.mode], cfg.threads, cfg.dynamic ? "dynamic" : "static", fl.n,
           (double)bytes / 1024.0 / (double)fl.n, cfg.warmup, cfg.epochs, timed,
           (double)images / timed);
    for (int e = 0; e < cfg.epochs; e++)
        printf("%s%.1f", e ? ", " : "", rates[e]);
    printf("], \"mean_mpix_out\": %.4f, \"failed\": %ld, \"target\": %d, \"scales\": \"%s\", "
           "\"libjpeg_turbo\": \"%s\"}\n",
           (double)pixels / 1e6 / (double)(images - failed > 0 ? images - failed : 1), failed,
           cfg.target, cfg.pow2 ? "pow2" : "all", STR(LIBJPEG_TURBO_VERSION));

    for (size_t i = 0; i < fl.n; i++) {
        free(fl.v[i].path);
        free(fl.v[i].data);
    }
    free(fl.v);
    for (int t = 0; t < cfg.threads; t++)
        free(workers[t].out);
    free(workers);
    free(rates);
    return failed ? 1 : 0;
}
