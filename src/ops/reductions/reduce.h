/* src/ops/reductions/reduce.h: the reduction family (internal to src/ops/reductions).
 *
 * One implementation (reduce.c) serves DALI's eight reductions `reductions.min`, `max`, `sum`,
 * `mean`, `mean_square`, `rms`, `std_dev` and `variance`; each operator's file is one
 * SL__RED_OP line: its name, kind, schema and documentation. The schemas:
 *   BASIC     axes, axis_names, keep_dims                       (min, max)
 *   DTYPE     axes, axis_names, keep_dims, dtype                (sum, mean, mean_square, rms)
 *   MEAN_IN   axes, axis_names, keep_dims, ddof; a second input, the mean (std_dev, variance)
 * The argument indices are the same in every schema (A_AXES .. A_EXTRA), so one setup and one
 * run serve all.
 *
 * Invariant: the operators hold no state; everything is recomputed per iteration from the
 * inputs and arguments (setup: output types, layouts and shapes; run_sample: one sample).
 */
#ifndef SLUICE_OPS_REDUCTIONS_REDUCE_H
#define SLUICE_OPS_REDUCTIONS_REDUCE_H

#include "sluice/op.h"

typedef enum sl__red_kind {
    SL__RED_MIN,
    SL__RED_MAX,
    SL__RED_SUM,
    SL__RED_MEAN,
    SL__RED_MEAN_SQUARE,
    SL__RED_RMS,
    SL__RED_STD_DEV,
    SL__RED_VARIANCE
} sl__red_kind;

/* Argument positions shared by the three schemas; A_EXTRA is dtype (DTYPE) or ddof (MEAN_IN). */
enum { SL__RED_A_AXES, SL__RED_A_AXIS_NAMES, SL__RED_A_KEEP_DIMS, SL__RED_A_EXTRA };

sl_status sl__red_init(sl_op_init *ini, sl__red_kind kind);
sl_status sl__red_setup(sl_ctx *ctx, sl__red_kind kind);
sl_status sl__red_run_sample(sl_ctx *ctx, sl__red_kind kind, int sample);
#ifdef SLUICE_HAVE_CUDA
/* device "gpu": the same reductions in two launches per batch (reduce.c plans, reduce.cu runs). */
sl_status sl__red_run_gpu(sl_ctx *ctx, sl__red_kind kind);
#endif

/* ---- GPU (reduce.c plans each sample on the host from shapes and arguments only; reduce.cu) ----
 * A sample's reduction is P outputs of N reduced elements each. Its dimensions, extents of 1
 * dropped and adjacent ones of the same kind merged, split into kept runs (C order = the output
 * index p) and reduced runs (C order = the reduced index r); element (p, r) of the input is at
 * koff(p) + roff(r). The first launch folds, for each (p, c < C), the reduced elements
 * r = c, c + C, c + 2C, ... into partial (c, p) (consecutive threads: consecutive p, then c, so
 * a per-channel reduction of HWC data reads consecutive elements); the second folds the C
 * partials of p in order c = 0..C-1, finishes (divides, roots) and converts into the output.
 * C depends only on P and N (sl__red_gchunks), so the result is the same on every device. */
typedef struct sl__red_gjob {
    const void *in;   /* device: the sample's data */
    void *out;        /* device: its P outputs */
    const void *mean; /* device: std_dev / variance, its P means (or 1: mean_step 0); else NULL */
    int64_t mean_step;
    int64_t P, N, C; /* outputs, reduced elements per output, chunks per output */
    int64_t part;    /* index of its first partial (P * C of them) in the partial array */
    double div;      /* mean, mean_square, rms: N; std_dev, variance: N - ddof (0 if <= 0) */
    int32_t nk, nr;  /* kept and reduced runs */
    int64_t kext[SL_MAX_NDIM], kstride[SL_MAX_NDIM]; /* strides in input elements */
    int64_t rext[SL_MAX_NDIM], rstride[SL_MAX_NDIM];
} sl__red_gjob;

/* Accumulator kinds (reduce.c's acc_kind). */
enum { SL__RED_ACC_I64, SL__RED_ACC_U64, SL__RED_ACC_F64 };

/* The chunks each output's reduced elements are split into on the GPU: about 64 elements each,
 * enough of them for 32768 threads per sample, at most 1024. */
static inline int64_t sl__red_gchunks(int64_t P, int64_t N)
{
    int64_t c = (N + 63) / 64, want = P > 0 ? (32768 + P - 1) / P : 1;
    if (c > want)
        c = want;
    if (c > 1024)
        c = 1024;
    return c > 0 ? c : 1;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Runs the n jobs (host array): kind, accumulator (SL__RED_ACC_*), input / output / mean
 * types; nparts partials in all. Returns SL_OK or the error recorded with sl_fail. */
sl_status sl__red_gpu_launch(sl_ctx *ctx, const sl__red_gjob *jobs, int n, int kind, int acc,
                             sl_dtype in, sl_dtype out, sl_dtype mean, int64_t nparts);
#ifdef __cplusplus
}
#endif

/* Schemas (reduce.c). */
extern const sl_arg_def sl__red_basic_args[3], sl__red_dtype_args[4], sl__red_mean_in_args[4];
extern const sl_io_def sl__red_inputs[2], sl__red_outputs[1];

#define SL__RED_BASIC_SCHEMA                                                                       \
    .inputs = sl__red_inputs, .min_inputs = 1, .max_inputs = 1, .args = sl__red_basic_args,        \
    .num_args = 3
#define SL__RED_DTYPE_SCHEMA                                                                       \
    .inputs = sl__red_inputs, .min_inputs = 1, .max_inputs = 1, .args = sl__red_dtype_args,        \
    .num_args = 4
#define SL__RED_MEAN_IN_SCHEMA                                                                     \
    .inputs = sl__red_inputs, .min_inputs = 2, .max_inputs = 2, .args = sl__red_mean_in_args,      \
    .num_args = 4

#ifdef SLUICE_HAVE_CUDA
#define SL__RED_RUN_GPU(NAME) .run_gpu = NAME##_run_gpu
#define SL__RED_DEF_RUN_GPU(NAME, KIND)                                                            \
    static sl_status NAME##_run_gpu(sl_ctx *ctx)                                                   \
    {                                                                                              \
        return sl__red_run_gpu(ctx, KIND);                                                         \
    }
#else
#define SL__RED_RUN_GPU(NAME) .run_gpu = NULL
#define SL__RED_DEF_RUN_GPU(NAME, KIND)
#endif

/* A whole reduction operator: `const sl_op_def sl_op_reductions_NAME`, the operator
 * "reductions.NAME" of kind KIND with schema SCHEMA (BASIC, DTYPE or MEAN_IN) and doc DOC. */
#define SL__RED_OP(NAME, KIND, SCHEMA, DOC)                                                        \
    static sl_status NAME##_init(sl_op_init *ini, void **state)                                    \
    {                                                                                              \
        *state = NULL;                                                                             \
        return sl__red_init(ini, KIND);                                                            \
    }                                                                                              \
    static sl_status NAME##_setup(sl_ctx *ctx)                                                     \
    {                                                                                              \
        return sl__red_setup(ctx, KIND);                                                           \
    }                                                                                              \
    static sl_status NAME##_run_sample(sl_ctx *ctx, int i)                                         \
    {                                                                                              \
        return sl__red_run_sample(ctx, KIND, i);                                                   \
    }                                                                                              \
    SL__RED_DEF_RUN_GPU(NAME, KIND)                                                                \
    const sl_op_def sl_op_reductions_##NAME = {.name = "reductions." #NAME,                        \
                                               .doc = DOC,                                         \
                                               SL__RED_##SCHEMA##_SCHEMA,                          \
                                               .outputs = sl__red_outputs,                         \
                                               .num_outputs = 1,                                   \
                                               .devices = SL_OP_CPU | SL_OP_GPU,                   \
                                               .init = NAME##_init,                                \
                                               .setup = NAME##_setup,                              \
                                               .run_sample = NAME##_run_sample,                    \
                                               SL__RED_RUN_GPU(NAME)}

#endif
