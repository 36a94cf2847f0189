/* tests/c/gpuutil.c: see gpuutil.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "gpuutil.h"
#include "testutil.h"

#ifdef SLUICE_HAVE_CUDA
#include "cuda/gpu.h"
#endif

bool tu_gpu_emulated(void)
{
    const char *v = getenv("SLUICE_GPU_EMULATE");
    return v && strcmp(v, "1") == 0;
}

void tu_gpu_require(void)
{
#ifndef SLUICE_HAVE_CUDA
    printf("SKIP: this build of sluice has no CUDA support (SLUICE_CUDA=OFF)\n");
    exit(77);
#else
    char why[256] = "";
    if (!sl__gpu_probe(0, why, sizeof why)) {
        printf("SKIP: no GPU to run on: %s (the .emulated variant of this test runs the GPU "
               "stage on the host)\n",
               why);
        exit(77);
    }
    printf("GPU stage: %s\n", tu_gpu_emulated() ? "emulated on the host" : "CUDA device 0");
#endif
}

/* Replaces every occurrence of key in s (owned) with val. */
static char *replace(char *s, const char *key, const char *val)
{
    size_t kl = strlen(key), vl = strlen(val), n = 0;
    for (const char *q = strstr(s, key); q; q = strstr(q + kl, key))
        n++;
    char *out = malloc(strlen(s) + n * vl + 1), *w = out;
    assert_non_null(out);
    const char *r = s;
    for (const char *q = strstr(r, key); q; q = strstr(r, key)) {
        memcpy(w, r, (size_t)(q - r));
        w += q - r;
        memcpy(w, val, vl);
        w += vl;
        r = q + kl;
    }
    strcpy(w, r);
    free(s);
    return out;
}

char *tu_gpu_spec(const char *spec, bool gpu)
{
    char *s = strdup(spec);
    assert_non_null(s);
    s = replace(s, "$MIX", gpu ? "mixed" : "cpu");
    return replace(s, "$GPU", gpu ? "gpu" : "cpu");
}

sl_pipeline *tu_gpu_build(const char *spec, bool gpu)
{
    char *json = tu_gpu_spec(spec, gpu);
    sl_pipeline_options o;
    sl_graph *g = NULL;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    if (sl_pipeline_options_from_json(json, &o) != SL_OK || sl_graph_from_json(json, &g) != SL_OK)
        fail_msg("spec: %s\n%s", sl_last_error(), json);
    o.device_id = gpu ? 0 : -1;
    if (sl_pipeline_create(g, &o, &p) != SL_OK)
        fail_msg("create: %s", sl_last_error());
    sl_graph_destroy(g);
    if (sl_pipeline_build(p) != SL_OK)
        fail_msg("build (%s): %s", gpu ? "gpu" : "cpu", sl_pipeline_error(p));
    free(json);
    return p;
}

void *tu_batch_to_host(const sl_batch *b)
{
    size_t n = sl_batch_nbytes(b);
    void *h = malloc(n ? n : 1);
    assert_non_null(h);
    if (sl_batch_copy_to_host(b, h, n) != SL_OK)
        fail_msg("copy to host: %s", sl_last_error());
    return h;
}

static double element(const void *base, sl_dtype t, size_t i)
{
    switch (t) {
    case SL_DTYPE_UINT8: return ((const uint8_t *)base)[i];
    case SL_DTYPE_INT8: return ((const int8_t *)base)[i];
    case SL_DTYPE_UINT16: return ((const uint16_t *)base)[i];
    case SL_DTYPE_INT16: return ((const int16_t *)base)[i];
    case SL_DTYPE_UINT32: return ((const uint32_t *)base)[i];
    case SL_DTYPE_INT32: return ((const int32_t *)base)[i];
    case SL_DTYPE_UINT64: return (double)((const uint64_t *)base)[i];
    case SL_DTYPE_INT64: return (double)((const int64_t *)base)[i];
    case SL_DTYPE_FLOAT32: return ((const float *)base)[i];
    case SL_DTYPE_FLOAT64: return ((const double *)base)[i];
    case SL_DTYPE_BOOL: return ((const uint8_t *)base)[i];
    case SL_DTYPE_FLOAT16: return sl__half_to_float(((const uint16_t *)base)[i]);
    default: fail_msg("dtype %d not comparable", (int)t);
    }
    return 0;
}

static bool is_int64(sl_dtype t)
{
    return t == SL_DTYPE_INT64 || t == SL_DTYPE_UINT64;
}

static void compare_batches(const sl_batch *c, const sl_batch *g, int it, int out, double tol,
                            bool rel, tu_diff *d, double *sum)
{
    assert_int_equal(sl_batch_device(c), SL_DEVICE_CPU);
    assert_int_equal(sl_batch_size(c), sl_batch_size(g));
    if (sl_batch_dtype(c) != sl_batch_dtype(g) || sl_batch_ndim(c) != sl_batch_ndim(g))
        fail_msg("iteration %d output %d: dtype/ndim %s/%d (cpu) vs %s/%d (gpu)", it, out,
                 sl_dtype_name(sl_batch_dtype(c)), sl_batch_ndim(c),
                 sl_dtype_name(sl_batch_dtype(g)), sl_batch_ndim(g));
    assert_string_equal(sl_batch_layout(c), sl_batch_layout(g));
    uint8_t *gh = tu_batch_to_host(g);
    const uint8_t *ch = sl_batch_data(c);
    size_t es = sl_dtype_size(sl_batch_dtype(c));
    for (int i = 0; i < sl_batch_size(c); i++) {
        for (int k = 0; k < sl_batch_ndim(c); k++) {
            if (sl_batch_shape(c, i)[k] != sl_batch_shape(g, i)[k])
                fail_msg("iteration %d output %d sample %d: extent %d is %lld (cpu) vs %lld (gpu)",
                         it, out, i, k, (long long)sl_batch_shape(c, i)[k],
                         (long long)sl_batch_shape(g, i)[k]);
        }
        const void *cs = ch + sl_batch_sample_offset(c, i);
        const void *gs = gh + sl_batch_sample_offset(g, i);
        for (int64_t e = 0; e < sl_batch_sample_numel(c, i); e++) {
            double a = element(cs, sl_batch_dtype(c), (size_t)e);
            double b = element(gs, sl_batch_dtype(c), (size_t)e);
            double diff = a == b || (isnan(a) && isnan(b)) ? 0 : fabs(a - b); /* inf == inf */
            if (es == 8 && is_int64(sl_batch_dtype(c)) &&
                memcmp((const char *)cs + e * 8, (const char *)gs + e * 8, 8) != 0)
                diff = diff > 1 ? diff : 1; /* 64-bit integers: exact, not through a double */
            const double allowed = rel && fabs(a) > 1 ? tol * fabs(a) : tol;
            if (!(diff <= allowed))
                fail_msg("iteration %d output %d sample %d element %lld: cpu %.9g, gpu %.9g "
                         "(tolerance %g%s)",
                         it, out, i, (long long)e, a, b, tol, rel ? ", relative above 1" : "");
            if (diff > d->max_abs)
                d->max_abs = diff;
            *sum += diff;
            d->elements++;
        }
    }
    free(gh);
}

static tu_diff compare(const char *spec, int iterations, double tol, bool rel)
{
    tu_diff d = {0};
    double sum = 0;
    sl_pipeline *pc = tu_gpu_build(spec, false), *pg = tu_gpu_build(spec, true);
    for (int it = 0; it < iterations; it++) {
        if (sl_pipeline_run(pc) != SL_OK)
            fail_msg("cpu run %d: %s", it, sl_pipeline_error(pc));
        if (sl_pipeline_run(pg) != SL_OK)
            fail_msg("gpu run %d: %s", it, sl_pipeline_error(pg));
        assert_int_equal(sl_pipeline_num_outputs(pc), sl_pipeline_num_outputs(pg));
        for (int o = 0; o < sl_pipeline_num_outputs(pc); o++)
            compare_batches(sl_pipeline_output(pc, o), sl_pipeline_output(pg, o), it, o, tol, rel,
                            &d, &sum);
    }
    d.mean_abs = d.elements ? sum / (double)d.elements : 0;
    print_message("compared %lld elements: max |diff| %g, mean %g\n", d.elements, d.max_abs,
                  d.mean_abs);
    sl_pipeline_destroy(pc);
    sl_pipeline_destroy(pg);
    return d;
}

tu_diff tu_gpu_compare(const char *spec, int iterations, double tol)
{
    return compare(spec, iterations, tol, false);
}

tu_diff tu_gpu_compare_rel(const char *spec, int iterations, double tol)
{
    return compare(spec, iterations, tol, true);
}

/* The sources every image test may use (see tu_gpu_source_json). */
static const tu_gpu_source common[] = {
    {"rgb", "{\"name\": \"in\", \"op\": \"decoders.image\", \"device\": \"$MIX\", \"inputs\": "
            "[\"reader:0\"], \"args\": {\"output_type\": \"RGB\"}}"},
    {"gray", "{\"name\": \"in\", \"op\": \"decoders.image\", \"device\": \"$MIX\", \"inputs\": "
             "[\"reader:0\"], \"args\": {\"output_type\": \"GRAY\"}}"},
    {"tiny", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
             "{\"name\": \"s_r\", \"op\": \"resize\", \"inputs\": [\"s_d\"], \"args\": "
             "{\"resize_x\": 1, \"resize_y\": 1}},"
             "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
             "[\"s_r\"]}"},
    {"rgba", "{\"name\": \"s_d\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},"
             "{\"name\": \"s_g\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], "
             "\"args\": {\"output_type\": \"GRAY\"}},"
             "{\"name\": \"s_c\", \"op\": \"cat\", \"inputs\": [\"s_d\", \"s_g\"], \"args\": "
             "{\"axis\": 2}},"
             "{\"name\": \"in\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": "
             "[\"s_c\"]}"},
};

const char *tu_gpu_source_json(const tu_gpu_source *own, size_t n, const char *kind)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(own[k].kind, kind))
            return own[k].json;
    for (size_t k = 0; k < sizeof common / sizeof common[0]; k++)
        if (!strcmp(common[k].kind, kind))
            return common[k].json;
    fail_msg("unknown source %s", kind);
    return NULL;
}

const char *tu_gpu_tree_spec(int batch, int seed, int reader_seed, const char *outputs,
                             const char *fmt, ...)
{
    static char spec[16384], nodes[16384];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(nodes, sizeof nodes, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof nodes);
    n = snprintf(spec, sizeof spec,
                 "{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, "
                 "\"prefetch_queue_depth\": 2, \"seed\": %d},"
                 " \"nodes\": ["
                 "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": "
                 "\"%s\", \"random_shuffle\": true, \"seed\": %d}},"
                 "  %s],"
                 " \"outputs\": [%s]}",
                 batch, seed, tu_env_dir("SLUICE_TEST_TREE"), reader_seed, nodes, outputs);
    assert_true(n > 0 && (size_t)n < sizeof spec);
    return spec;
}

void tu_gpu_expect_error(const char *spec, bool gpu, sl_status code, ...)
{
    sl_pipeline *p = tu_gpu_build(spec, gpu);
    sl_status st = sl_pipeline_run(p);
    const char *msg = sl_pipeline_error(p);
    print_message("%s\n", msg);
    if (code == TU_ANY_FAILURE)
        assert_int_not_equal(st, SL_OK);
    else
        assert_int_equal(st, code);
    va_list ap;
    va_start(ap, code);
    for (const char *w; (w = va_arg(ap, const char *)) != NULL;)
        if (!strstr(msg, w))
            fail_msg("message \"%s\" lacks \"%s\"", msg, w);
    va_end(ap);
    sl_pipeline_destroy(p);
}
