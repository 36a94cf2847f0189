/* transforms.h: the family helper of the transforms.* operators (DALI's fn.transforms.*), which
 * make affine transform matrices.
 *
 * Each operator produces, per sample, one float32 matrix of shape (ndim, ndim + 1): the top
 * rows of the homogeneous (ndim + 1) x (ndim + 1) matrix, the linear part and the translation
 * in the last column (what coord_transform's MT and warp_affine's matrix take). An operator
 * gives only the number of dimensions its arguments imply and its own matrix; this helper
 * reads the optional input transform (same shape), composes them (reverse_order false:
 * out = own · input, so the operator's transform is applied after the input's; true:
 * out = input · own), checks shapes and writes the output. Matrices are built and multiplied
 * in double and rounded to float32 once.
 */
#ifndef SLUICE_OPS_TRANSFORMS_H
#define SLUICE_OPS_TRANSFORMS_H

#include "sluice/op.h"

/* Largest number of dimensions of a transform (DALI's limit for combine). */
#define SL__XF_MAX_NDIM 6
#define SL__XF_MAT (SL__XF_MAX_NDIM + 1) /* row stride of a homogeneous matrix */

typedef struct sl__xform {
    /* The number of dimensions sample i's arguments imply: > 0; 0 when they leave it open (a
     * scalar scale, crop's one-value bounds); negative after sl_fail (bad arguments). */
    int (*arg_ndim)(sl_ctx *ctx, int i);
    /* Sample i's homogeneous matrix m (row stride SL__XF_MAT, identity on entry) for ndim. */
    sl_status (*matrix)(sl_ctx *ctx, int i, int ndim, double *m);
    int arg_reverse;       /* index of the reverse_order argument */
    int default_ndim;      /* ndim when neither arguments nor the input fix it; 0: an error */
    const char *ndim_hint; /* says how to fix the number of dimensions, for that error */
} sl__xform;

/* setup / setup_sample / run_sample of a transforms.* operator with one optional input. */
sl_status sl__xform_setup(sl_ctx *ctx);
sl_status sl__xform_setup_sample(sl_ctx *ctx, int i, const sl__xform *x);
sl_status sl__xform_run_sample(sl_ctx *ctx, int i, const sl__xform *x);

/* Reads input in's sample i (float32 or float64, shape (n, n + 1) or (n + 1, n + 1)) into the
 * homogeneous m; ndim is known to match. */
void sl__xform_read(const sl_batch *in, int i, int ndim, double *m);
/* The number of dimensions of input in's sample i: n for a (n, n + 1) or (n + 1, n + 1)
 * float matrix; negative after sl_fail. */
int sl__xform_input_ndim(sl_ctx *ctx, int input, int i);
/* c = a · b, homogeneous (ndim + 1)^2, row stride SL__XF_MAT; c may alias neither. */
void sl__xform_mul(int ndim, const double *a, const double *b, double *c);
/* Writes the top ndim rows of m as float32 to out. */
void sl__xform_write(int ndim, const double *m, float *out);
/* m = T(center) · m · T(-center) for the linear m: the transform about `center` (ndim values). */
void sl__xform_center(int ndim, double *m, const double *center);
/* The length of list argument `arg` of sample i, or 0 when it is unset. */
int sl__xform_arg_len(sl_ctx *ctx, int arg, int i);
/* Checks that list argument `arg` (given or defaulted) of sample i has 1 (when scalar_ok) or ndim
 * values. */
sl_status sl__xform_check_len(sl_ctx *ctx, int arg, const char *name, int i, int ndim,
                              bool scalar_ok);

#endif
