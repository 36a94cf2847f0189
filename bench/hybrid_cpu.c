/* bench/hybrid_cpu.c: the CPU share of the hybrid JPEG decoder (decoders.image on "mixed",
 * src/ops/decoders/hybrid.h) against a whole CPU decode, per image, on one thread.
 *
 *   bench_hybrid_cpu DIR [--reps R]
 *
 * DIR is searched recursively for *.jpg / *.jpeg (any case); the files are read into memory,
 * sorted by path. Each file is decoded R times (default 3) both ways, after one warm-up pass,
 * timed with the thread's CPU clock:
 *   full    what decoders.image does on "cpu" (jpeg.c): RGB, JDCT_ISLOW, fancy upsampling,
 *           rows read into an output buffer, jpeg_abort_decompress after the last row;
 *   hybrid  what the mixed decoder's CPU half does per sample (jpeg.c's sl__jpeg_hybrid_plan in
 *           setup_sample, sl__jpeg_hybrid_coefs in run_sample): the header parsed twice, then
 *           a single-scan file decoded in raw-data mode with an IDCT method that copies each
 *           block into a staging buffer, a multi-scan (progressive) file read with
 *           jpeg_read_coefficients and its blocks copied.
 * One line of JSON goes to stdout: files, mean megapixels, mean CPU microseconds per image of
 * each, and hybrid / full. Exit status 2 on bad usage or when DIR holds no JPEG, 1 when a file
 * fails.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jpeglib.h>

#include <jpegint.h> /* struct jpeg_inverse_dct, as jpeg.c */

typedef struct file {
    char *path;
    unsigned char *data;
    size_t size;
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
    files[nfiles++] = (file){strdup(path), d, (size_t)n};
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

typedef struct err_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} err_mgr;

static void on_error(j_common_ptr c)
{
    longjmp(((err_mgr *)(void *)c->err)->jump, 1);
}

static void quiet(j_common_ptr c, int level)
{
    (void)c;
    (void)level;
}

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static unsigned char *buf;
static size_t bufcap;

static unsigned char *room(size_t n)
{
    if (n > bufcap) {
        free(buf);
        buf = malloc(n);
        bufcap = n;
    }
    return buf;
}

/* The single-scan path's IDCT: the block into the staging (jpeg.c's store_block). */
static JSAMPARRAY raw_rows[4];
static size_t comp_off[4], comp_bw[4];

static void store_block(j_decompress_ptr c, jpeg_component_info *ci, JCOEFPTR coef,
                        JSAMPARRAY output_buf, JDIMENSION output_col)
{
    int k = ci->component_index;
    size_t by = (size_t)c->input_iMCU_row * (size_t)ci->v_samp_factor +
                (size_t)(output_buf - raw_rows[k]) / DCTSIZE;
    memcpy(buf + comp_off[k] + (by * comp_bw[k] + output_col / DCTSIZE) * sizeof(JBLOCK), coef,
           sizeof(JBLOCK));
}

/* Returns 0 on success. */
static int decode(const file *f, int hybrid)
{
    struct jpeg_decompress_struct c;
    err_mgr m;
    c.err = jpeg_std_error(&m.pub);
    m.pub.error_exit = on_error;
    m.pub.emit_message = quiet;
    if (setjmp(m.jump)) {
        jpeg_destroy_decompress(&c);
        return 1;
    }
    jpeg_create_decompress(&c);
    if (hybrid) { /* setup_sample's plan: a header parse of its own */
        jpeg_mem_src(&c, f->data, (unsigned long)f->size);
        jpeg_read_header(&c, TRUE);
        jpeg_calc_output_dimensions(&c);
        jpeg_abort_decompress(&c);
    }
    jpeg_mem_src(&c, f->data, (unsigned long)f->size);
    jpeg_read_header(&c, TRUE);
    if (hybrid && !jpeg_has_multiple_scans(&c)) {
        jpeg_calc_output_dimensions(&c);
        size_t total = 0;
        for (int k = 0; k < c.num_components; k++) {
            comp_off[k] = total;
            comp_bw[k] = c.comp_info[k].width_in_blocks;
            total += (size_t)c.comp_info[k].width_in_blocks * c.comp_info[k].height_in_blocks *
                     sizeof(JBLOCK);
        }
        room(total);
        c.raw_data_out = TRUE;
        c.out_color_space = c.jpeg_color_space;
        jpeg_start_decompress(&c);
        static JSAMPLE dummy[1];
        static JSAMPROW rows[4][4 * DCTSIZE];
        for (int k = 0; k < c.num_components; k++) {
            for (int r = 0; r < 4 * DCTSIZE; r++)
                rows[k][r] = dummy;
            raw_rows[k] = rows[k];
            c.idct->inverse_DCT[k] = store_block;
        }
        while (c.output_scanline < c.output_height)
            jpeg_read_raw_data(&c, raw_rows, (JDIMENSION)(c.max_v_samp_factor * DCTSIZE));
        jpeg_abort_decompress(&c);
    } else if (hybrid) {
        jpeg_calc_output_dimensions(&c);
        jvirt_barray_ptr *arrays = jpeg_read_coefficients(&c);
        size_t total = 0;
        for (int k = 0; k < c.num_components; k++)
            total += (size_t)c.comp_info[k].width_in_blocks * c.comp_info[k].height_in_blocks *
                     sizeof(JBLOCK);
        unsigned char *dst = room(total);
        for (int k = 0; k < c.num_components; k++) {
            const jpeg_component_info *ci = &c.comp_info[k];
            size_t row = (size_t)ci->width_in_blocks * sizeof(JBLOCK);
            for (JDIMENSION by = 0; by < ci->height_in_blocks; by++) {
                JBLOCKARRAY rows =
                    c.mem->access_virt_barray((j_common_ptr)&c, arrays[k], by, 1, FALSE);
                memcpy(dst, rows[0], row);
                dst += row;
            }
        }
    } else {
        c.out_color_space = JCS_RGB;
        c.dct_method = JDCT_ISLOW;
        c.do_fancy_upsampling = TRUE;
        jpeg_start_decompress(&c);
        size_t stride = (size_t)c.output_width * 3;
        unsigned char *out = room(stride * c.output_height);
        while (c.output_scanline < c.output_height) {
            JSAMPROW rows[16];
            for (int i = 0; i < 16; i++)
                rows[i] = out + (size_t)(c.output_scanline + (JDIMENSION)i < c.output_height
                                             ? c.output_scanline + (JDIMENSION)i
                                             : c.output_height - 1) *
                                    stride;
            jpeg_read_scanlines(&c, rows, 16);
        }
        jpeg_abort_decompress(&c);
    }
    jpeg_destroy_decompress(&c);
    return 0;
}

static double megapixels(const file *f)
{
    struct jpeg_decompress_struct c;
    err_mgr m;
    c.err = jpeg_std_error(&m.pub);
    m.pub.error_exit = on_error;
    if (setjmp(m.jump)) {
        jpeg_destroy_decompress(&c);
        return 0;
    }
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, f->data, (unsigned long)f->size);
    jpeg_read_header(&c, TRUE);
    double mp = (double)c.image_width * c.image_height / 1e6;
    jpeg_destroy_decompress(&c);
    return mp;
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
    double t[2] = {0, 0}, mp = 0;
    for (int k = 0; k < nfiles; k++) {
        for (int h = 0; h < 2; h++) {
            if (decode(&files[k], h)) { /* the warm-up */
                fprintf(stderr, "%s: decode failed\n", files[k].path);
                return 1;
            }
            double t0 = cpu_us();
            for (int r = 0; r < reps; r++)
                decode(&files[k], h);
            t[h] += (cpu_us() - t0) / reps;
        }
        mp += megapixels(&files[k]);
    }
    printf("{\"files\": %d, \"mean_mp\": %.4f, \"full_us\": %.1f, \"hybrid_cpu_us\": %.1f, "
           "\"ratio\": %.3f}\n",
           nfiles, mp / nfiles, t[0] / nfiles, t[1] / nfiles, t[1] / t[0]);
    return 0;
}
