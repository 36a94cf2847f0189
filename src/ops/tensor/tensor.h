/* ops/tensor/tensor.h: helpers shared by the layout and tensor operators (cast, transpose, pad,
 * slice, reshape, cat, stack, normalize, and image/crop, image/flip).
 *
 * Exports (internal to src/ops):
 *   convert.c  sl__convert_get: a generated table of element converters, one per (out, in) pair
 *              of the 12 dtypes, with DALI's ConvertSat semantics; sl__convert_scalar.
 *   axes.c     axis lists from `axes` / `axis_names`, out-of-bounds policies, window policy
 *              application, shape formatting for messages.
 *   copy_kernels.c sl__window_copy (an N-d window of the input, padded with fill values where it
 *              reaches outside, converted to the output type), sl__gather (an N-d strided copy:
 *              transposes and flips), sl__join_copy (cat / stack), sl__deinterleave.
 *   join.c     sl__join_setup, sl__join_run: the whole of cat and stack but their schemas
 *              (and SL__JOIN_INPUTS, the inputs table the two schemas share: any number).
 * The GPU twins of the copy kernels and converters are declared in tensor_gpu.h (device code:
 * tensor.cuh; CUDA builds only).
 * Invariant: none of these allocate; callers pass scratch from sl_ctx_scratch where needed, so
 * they run per sample in any worker.
 */
#ifndef SLUICE_OPS_TENSOR_H
#define SLUICE_OPS_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/batch.h"
#include "sluice/dtype.h"
#include "sluice/op.h"

/* ---- element conversion (convert.c) ------------------------------------------------------
 * DALI's ConvertSat: float -> integer rounds to nearest, halves away from zero, then saturates
 * (NaN -> 0, where DALI's result is undefined); integer -> integer saturates; any -> bool is
 * (x != 0); bool -> any is 0 / 1; float -> float and integer -> float are plain IEEE casts (round
 * to nearest even; float64 -> float16 rounds once, exactly like NumPy). */
typedef void (*sl__convert_fn)(void *restrict dst, const void *restrict src, int64_t n);

/* The converter from `in` to `out` elements; NULL when either type is invalid. Same-type
 * converters copy bytes. */
sl__convert_fn sl__convert_get(sl_dtype out, sl_dtype in);

/* Writes v converted to type t (one element) at dst. */
void sl__convert_scalar(sl_dtype t, double v, void *dst);

/* ---- axes, layouts, windows (axes.c) ----------------------------------------------------- */

/* Resolves `axes` (indices; negative ones count from the back) into out[0..n). Returns n, or -1
 * with a message in err (an index out of range or repeated). */
int sl__axes_from_ints(const int64_t *axes, int n, int ndim, int *out, char *err, size_t errlen);

/* Resolves `axis_names` (letters of the layout) into out[]. Returns the count, or -1 with a
 * message in err (empty layout, a letter not in the layout, or repeated). */
int sl__axes_from_names(const char *names, const char *layout, int *out, char *err, size_t errlen);

/* The axes an operator works on: `axis_names` (argument names_arg, resolved in layout) when
 * set, else `axes` (axes_arg, indices) when set; all axes 0..ndim-1 when neither is set or the
 * list is empty (DALI). An argument index of -1 means the op has no such argument. Returns the
 * count, or -1 after sl_fail naming the problem. */
int sl__axes_get(sl_ctx *ctx, int axes_arg, int names_arg, int ndim, const char *layout, int *out);

/* Position of axis letter `c` in layout, -1 when absent. */
int sl__layout_find(const char *layout, char c);

typedef enum sl__oob { SL__OOB_ERROR, SL__OOB_PAD, SL__OOB_TRIM } sl__oob;

/* "error" | "pad" | "trim_to_shape" (anything else: error). */
sl__oob sl__oob_parse(const char *s);

/* Applies the out-of-bounds policy to a window (anchor, shape) on an input of in_shape: "pad"
 * keeps it, "trim_to_shape" intersects it with the input, "error" keeps it. Returns false when
 * the window reaches outside the input (before trimming) and the policy is "error". A window of
 * extent 0 anywhere within [0, extent] is inside. */
bool sl__oob_apply(sl__oob policy, int ndim, const int64_t *in_shape, int64_t *anchor,
                   int64_t *shape);

/* Formats extents as "(a, b, c)" into buf; returns buf. */
char *sl__shape_str(char *buf, size_t len, const int64_t *shape, int ndim);

/* Most fill values an operator uses (per-channel fill of up to 256 channels). */
#define SL__MAX_FILL 256

/* Reads list argument `arg` (fill values) of sample i, converts the first min(max,
 * SL__MAX_FILL) values to type t into out (sl_dtype_size(t) bytes each). Returns the number of
 * values given, which may be larger. */
int sl__fill_read(sl_ctx *ctx, int arg, int i, sl_dtype t, void *out, int max);

/* ---- copy kernels (copy_kernels.c)
 * ----------------------------------------------------------------- */

/* An N-d window copy: output element o (a multi-index in out_shape) is input element o + anchor
 * when that lies inside in_shape, converted from in_type to out_type; otherwise a fill value. */
typedef struct sl__window_job {
    int ndim;
    const int64_t *in_shape;  /* ndim extents */
    const int64_t *anchor;    /* ndim offsets, any sign */
    const int64_t *out_shape; /* ndim extents */
    const void *in;
    sl_dtype in_type;
    void *out;
    sl_dtype out_type;
    /* Fill values, already of out_type: one value for every element (nfill 1), or one per
     * output index along fill_axis (nfill >= out_shape[fill_axis]). */
    const void *fill;
    int nfill;
    int fill_axis; /* -1: nfill must be 1 */
} sl__window_job;

/* Scratch bytes sl__window_copy needs for this job. */
size_t sl__window_scratch_bytes(const sl__window_job *j);

/* Runs the job; scratch has sl__window_scratch_bytes(j) bytes (64-byte aligned preferred). */
void sl__window_copy(const sl__window_job *j, void *scratch);

/* Strided gather: out is dense with `shape` (ndim extents, C order); out element at multi-index
 * k is in[sum k[d] * stride[d]] (strides in elements, possibly negative or 0; `in` points at the
 * element of multi-index 0). Elements are esize bytes. */
void sl__gather(void *restrict out, const void *restrict in, size_t esize, int ndim,
                const int64_t *shape, const int64_t *stride);

/* Interleaved -> planar: out[c * n + k] = in[k * C + c] for k < n, c < C (HWC -> CHW). */
void sl__deinterleave(void *restrict out, const void *restrict in, size_t esize, int64_t n,
                      int64_t C);

/* One input of a join: `outer` times, `block` contiguous bytes of `in` (advancing by block each
 * time) are written at out + k * row (k = 0 .. outer - 1). cat and stack call it once per input,
 * out pointing at that input's place in the first row. */
void sl__join_copy(void *restrict out, size_t row, const void *restrict in, size_t block,
                   int64_t outer);

/* ---- cat and stack (join.c) ------------------------------------------------------------------ */

/* The inputs table of cat / stack: one entry, describing every input (max_inputs
 * SL_INPUTS_ANY: any number, as in DALI). */
#define SL__JOIN_INPUTS(doc)                                                                       \
    {                                                                                              \
        {                                                                                          \
            "inputs", doc                                                                          \
        }                                                                                          \
    }

/* A join operator's flavour and where its arguments are. */
typedef struct sl__join_args {
    bool new_axis; /* stack: insert a new axis; cat: join along an existing one */
    int axis;      /* index of the `axis` argument (int) */
    int axis_name; /* index of the `axis_name` argument (string, optional) */
} sl__join_args;

/* setup of cat / stack: checks types, dimensions, layouts, axis and shapes; declares the
 * output and every sample's shape. Returns SL_OK or the sl_fail code. */
sl_status sl__join_setup(sl_ctx *ctx, const sl__join_args *a);

/* run_sample of cat / stack. */
sl_status sl__join_run(sl_ctx *ctx, const sl__join_args *a, int i);

#endif
