/* transforms.crop: the affine matrix mapping one box onto another (DALI's fn.transforms.crop).
 *
 * Exports: const sl_op_def sl_op_transforms_crop ("transforms.crop", CPU).
 *
 * Per dimension d: x' = to_start + (x - from_start) * (to_end - to_start) / (from_end -
 * from_start), so from_start maps to to_start and from_end to to_end. Each bound is ndim values
 * or one (repeated); the number of dimensions is the longest bound's length (1 when all have
 * one value and there is no input transform). `absolute` swaps start and end where start >
 * end. An empty source extent (from_start == from_end) is an error.
 */
#include "ops/transforms/transforms.h"

enum { A_FROM_START, A_FROM_END, A_TO_START, A_TO_END, A_ABSOLUTE, A_REVERSE, NUM_ARGS };

#define BOUND(nm, dflt, text)                                                                      \
    {                                                                                              \
        .name = nm, .type = SL_ARG_FLOATS, .def = dflt, .doc = text,                               \
        .flags = SL_ARG_TENSOR | SL_ARG_SCALAR_OK, .min_len = 1, .max_len = SL__XF_MAX_NDIM        \
    }

static const sl_arg_def args[NUM_ARGS] = {
    [A_FROM_START] = BOUND("from_start", "[0.0]",
                           "Lower bound of the source box (ndim values, or one for all)."),
    [A_FROM_END] =
        BOUND("from_end", "[1.0]", "Upper bound of the source box (ndim values, or one for all)."),
    [A_TO_START] = BOUND("to_start", "[0.0]",
                         "Lower bound of the destination box (ndim values, or one for all)."),
    [A_TO_END] = BOUND("to_end", "[1.0]",
                       "Upper bound of the destination box (ndim values, or one for all)."),
    [A_ABSOLUTE] = {.name = "absolute",
                    .type = SL_ARG_BOOL,
                    .def = "false",
                    .doc = "Swap start and end (of each box, per dimension) where start > end."},
    [A_REVERSE] = {.name = "reverse_order",
                   .type = SL_ARG_BOOL,
                   .def = "false",
                   .doc = "With an input transform: false applies this mapping after the "
                          "input's (out = C · in), true before it (out = in · C)."},
};

static const sl_io_def inputs[] = {
    {"input", "Optional transform to compose with, (ndim, ndim+1)."}};
static const sl_io_def outputs[] = {{"output", "The affine matrix, float32 (ndim, ndim + 1)."}};

static const char *const names[] = {"from_start", "from_end", "to_start", "to_end"};

static int arg_ndim(sl_ctx *ctx, int i)
{
    int n = 1;
    for (int a = A_FROM_START; a <= A_TO_END; a++) {
        int len = sl_ctx_arg_floats(ctx, a, i, NULL, 0);
        if (len > 1 && n > 1 && len != n) {
            sl_fail(ctx, SL_EINVAL,
                    "%s has %d values, but another bound has %d: give ndim values or one", names[a],
                    len, n);
            return -1;
        }
        if (len > n)
            n = len;
    }
    return n > 1 ? n : 0;
}

static sl_status matrix(sl_ctx *ctx, int i, int ndim, double *m)
{
    double b[4][SL__XF_MAX_NDIM];
    for (int a = A_FROM_START; a <= A_TO_END; a++) {
        sl_status st = sl__xform_check_len(ctx, a, names[a], i, ndim, true);
        if (st != SL_OK)
            return st;
        int n = sl_ctx_arg_floats(ctx, a, i, b[a], ndim);
        for (int d = 1; d < ndim && n == 1; d++)
            b[a][d] = b[a][0];
    }
    const bool absolute = sl_ctx_arg_bool(ctx, A_ABSOLUTE, i);
    for (int d = 0; d < ndim; d++) {
        double fs = b[A_FROM_START][d], fe = b[A_FROM_END][d];
        double ts = b[A_TO_START][d], te = b[A_TO_END][d];
        if (absolute && fs > fe) {
            double t = fs;
            fs = fe;
            fe = t;
        }
        if (absolute && ts > te) {
            double t = ts;
            ts = te;
            te = t;
        }
        /* an empty source extent divides by zero: inf / NaN entries, as DALI (whose own CPU
         * smoke test asks for such a box); computed in float like DALI's */
        double s = (float)(te - ts) / (float)(fe - fs);
        m[d * SL__XF_MAT + d] = s;
        m[d * SL__XF_MAT + ndim] = ts - fs * s;
    }
    return SL_OK;
}

static const sl__xform xf = {
    .arg_ndim = arg_ndim, .matrix = matrix, .arg_reverse = A_REVERSE, .default_ndim = 1};

static sl_status setup_sample(sl_ctx *ctx, int i)
{
    return sl__xform_setup_sample(ctx, i, &xf);
}

static sl_status run_sample(sl_ctx *ctx, int i)
{
    return sl__xform_run_sample(ctx, i, &xf);
}

const sl_op_def sl_op_transforms_crop = {
    .name = "transforms.crop",
    .doc = "Produces an affine matrix mapping one box onto another (DALI's transforms.crop).\n\n"
           "from_start maps to to_start and from_end to to_end, per dimension (use it to carry "
           "coordinates through a crop). Bounds are ndim values or one (repeated); defaults "
           "[0] and [1]. `absolute=True` swaps start and end where start > end. float32 (ndim, "
           "ndim + 1). With an input transform the mapping is applied after it "
           "(`reverse_order=True`: before it).",
    .inputs = inputs,
    .min_inputs = 0,
    .max_inputs = 1,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .setup = sl__xform_setup,
    .setup_sample = setup_sample,
    .run_sample = run_sample,
};
