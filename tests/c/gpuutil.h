/* tests/c/gpuutil.h: GPU-stage tests (C test library, gpuutil.c).
 *
 * A GPU test runs twice under ctest (cmake/SluiceTests.cmake): on the real device, and with
 * SLUICE_GPU_EMULATE=1, where the GPU stage runs on the host. tu_gpu_require() exits 77 (SKIP,
 * with the reason on stdout) when neither is possible, so a skipped GPU test never passes.
 *
 * tu_gpu_compare() is the usual check of a GPU operator: one JSON spec written with device
 * placeholders is built twice — "$MIX" and "$GPU" become "cpu" in the reference pipeline and
 * "mixed" / "gpu" in the GPU pipeline — and every output of several iterations is compared
 * sample by sample (shape, dtype, then values within `tol`, 0 for exact). tu_gpu_tree_spec()
 * and tu_gpu_source_json() write such specs over the JPEG tree, tu_gpu_expect_error() checks a
 * run that must fail.
 */
#ifndef SLUICE_TEST_GPUUTIL_H
#define SLUICE_TEST_GPUUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "sluice/sluice.h"

/* Exits 77 with "SKIP: <reason>" unless GPU work can run here (real or emulated). */
void tu_gpu_require(void);
/* True under SLUICE_GPU_EMULATE=1. */
bool tu_gpu_emulated(void);

/* The spec with $MIX / $GPU replaced for the cpu (gpu = false) or gpu pipeline; free(). */
char *tu_gpu_spec(const char *spec, bool gpu);
/* Builds the spec (its "pipeline" options; device_id 0 for the gpu one), failing the test on
 * error. */
sl_pipeline *tu_gpu_build(const char *spec, bool gpu);
/* All samples of b copied to host memory (malloc'd; free()). */
void *tu_batch_to_host(const sl_batch *b);

typedef struct tu_diff {
    double max_abs;  /* largest |cpu - gpu| over all compared elements */
    double mean_abs; /* mean |cpu - gpu| */
    long long elements;
} tu_diff;

/* Runs both pipelines `iterations` times and compares all outputs; fails the test when a shape
 * or dtype differs or any element differs by more than tol. Returns the differences seen. */
tu_diff tu_gpu_compare(const char *spec, int iterations, double tol);
/* The same, with tol relative where the CPU's value exceeds 1 in magnitude (|cpu - gpu| <=
 * tol * |cpu|) and absolute below: for functions whose results grow (exp, sinh, cosh). */
tu_diff tu_gpu_compare_rel(const char *spec, int iterations, double tol);

/* A way to make node "in" from the reader's output "reader:0": the spec nodes of one kind. */
typedef struct tu_gpu_source {
    const char *kind, *json;
} tu_gpu_source;

/* The nodes of source `kind`: one of the test's own n sources, else a common one: "rgb",
 * "gray" (decoders.image RGB / GRAY on $MIX), "tiny" (1x1 RGB, resized on the CPU) or "rgba"
 * (cat of RGB and GRAY on the CPU), the last two copied with $MIX. Fails the test otherwise. */
const char *tu_gpu_source_json(const tu_gpu_source *own, size_t n, const char *kind);

/* A spec over the JPEG tree (SLUICE_TEST_TREE): `batch` samples, 2 threads, prefetch depth 2,
 * pipeline seed `seed`; node "reader" (readers.file, shuffled with seed reader_seed), then the
 * nodes printf'd from fmt (JSON objects, comma-separated), and outputs `outputs` (the body of a
 * JSON list). Returns a static buffer (16 KiB, overwritten by the next call). */
const char *tu_gpu_tree_spec(int batch, int seed, int reader_seed, const char *outputs,
                             const char *fmt, ...);

/* tu_gpu_expect_error's code that accepts any failure. */
#define TU_ANY_FAILURE SL_OK

/* Builds the spec's cpu (gpu false) or gpu pipeline, runs it once and expects the status code
 * (TU_ANY_FAILURE: any but SL_OK) and a message, printed, holding each of the strings that
 * follow, up to a NULL. */
void tu_gpu_expect_error(const char *spec, bool gpu, sl_status code, ...);

#endif
