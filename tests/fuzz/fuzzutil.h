/* tests/fuzz/fuzzutil.h: what the fuzz targets share (fuzzutil.c), over the public C API only.
 *
 * Exports fz_fail (a finding: message + abort), fz_check (a harness call that must succeed),
 * small-pipeline creation, feeding an external_source, batch comparison and a conservative
 * image-size check. Invariant: nothing here reaches past the headers of include/sluice, so a target
 * exercises exactly what a user's program can.
 */
#ifndef SLUICE_FUZZUTIL_H
#define SLUICE_FUZZUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/sluice.h"

/* Images whose header asks for more pixels than this are skipped by the image targets: their
 * decode is slow and memory-bound rather than interesting (issue 15's findings 4 and 5 cover
 * them), and a fuzzer would otherwise spend its time there. 1 MP is 3 MiB of RGB. */
#define FZ_MAX_PIXELS ((int64_t)1 << 20)

/* A finding: prints "sluice fuzz finding: <message>" to stderr and aborts (libFuzzer then
 * writes the input out as a crash; replay.c names it). */
__attribute__((noreturn, format(printf, 1, 2))) void fz_fail(const char *fmt, ...);

/* A call of the harness itself (building a graph it controls) must succeed: otherwise the
 * target is broken, which is reported like a finding, with sl_last_error(). */
void fz_check(sl_status s, const char *what);

/* A pipeline over g: batch_size 1, num_threads 0 (the caller runs it), prefetch 1, seed 1,
 * fuse_samples as given, built. Fails (fz_fail) when the build fails: the targets' graphs are valid
 * by construction. Returns: owned (sl_pipeline_destroy). */
sl_pipeline *fz_pipeline(const sl_graph *g, int fuse_samples);

/* Feeds one sample to external_source `name`: n bytes of uint8, 1-D (n may be 0). */
void fz_feed_bytes(sl_pipeline *p, const char *name, const uint8_t *data, size_t n);
/* Feeds one float32 sample: a scalar when n == 0 (v[0]), else a 1-D array of n values. */
void fz_feed_floats(sl_pipeline *p, const char *name, const float *v, int n);

/* True when a and b's sample i have the same dtype, shape and bytes. When they differ and why
 * is not NULL, *why receives a static description ("shape 3x4x3 vs 3x5x3", "byte 17: 4 vs 6"). */
bool fz_sample_equal(const sl_batch *a, int i, const sl_batch *b, int j, const char **why);

/* True when the header of a JPEG (its first SOFn marker, found as libjpeg finds it) or a PNG
 * (IHDR) announces more than max_pixels pixels. Bytes that are neither are never too large. */
bool fz_image_too_large(const uint8_t *data, size_t n, int64_t max_pixels);

/* Makes the target's private temporary folder: `name` (ending in XXXXXX, mkdtemp's pattern) in
 * $FUZZ_TMPDIR if set, else in /dev/shm when it is a writable folder (tmpfs), else in /tmp;
 * its path goes to dir (cap bytes). The targets write every input to a file there: on a disk
 * file system, truncating and rewriting a file makes the kernel write it back on close (ext4's
 * auto_da_alloc), which took a third of file_list's time. fz_fail when it cannot. */
void fz_mkdtemp(char *dir, size_t cap, const char *name);

/* sl_pipeline_run with the contract every run must keep: SL_OK, or a failure with a message
 * and a code that blames the input (not SL_EINTERNAL, not SL_EMISUSE). Returns the status. */
sl_status fz_run(sl_pipeline *p);

#endif
