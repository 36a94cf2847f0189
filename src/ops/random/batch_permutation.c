/* batch_permutation: a random permutation of the sample indices of a batch (DALI's
 * fn.batch_permutation).
 *
 * Exports: const sl_op_def sl_op_batch_permutation ("batch_permutation", CPU, random).
 *
 * Output sample i is an int32 scalar: index perm[i] of a permutation of 0 .. n-1 (n: the
 * iteration's batch size), drawn by a Fisher-Yates shuffle from the stream of sample 0 of the
 * iteration (sl_ctx_rng(ctx, 0)), so it depends only on (seed, node, iteration). With
 * allow_repetitions each index is drawn independently (uniform in [0, n)) from sample i's
 * stream instead. no_fixed_points: no i with perm[i] == i (a random derangement, by Sattolo's
 * algorithm for permutations; redrawn per index for repetitions); a batch of one sample cannot
 * have one and fails.
 * Invariant: stateless; feeds permute_batch's indices.
 */
#include "sluice/op.h"

enum { A_ALLOW_REPETITIONS, A_NO_FIXED_POINTS, A_SEED, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_ALLOW_REPETITIONS] = {.name = "allow_repetitions",
                             .type = SL_ARG_BOOL,
                             .def = "false",
                             .doc = "Draw each index independently (indices may repeat)."},
    [A_NO_FIXED_POINTS] = {.name = "no_fixed_points",
                           .type = SL_ARG_BOOL,
                           .def = "false",
                           .doc = "No sample keeps its place: out[i] != i for every i."},
    [A_SEED] = SL_ARG_SEED_DEF,
};

static const sl_io_def outputs[] = {{"output", "One int32 index per sample."}};

static sl_status batch_permutation_setup(sl_ctx *ctx)
{
    const int n = sl_ctx_batch_size(ctx);
    if (n == 1 && sl_ctx_arg_bool(ctx, A_NO_FIXED_POINTS, 0))
        return sl_fail(ctx, SL_EINVAL, "no_fixed_points needs a batch of at least 2 samples");
    sl_ctx_set_output(ctx, 0, SL_DTYPE_INT32, 0, NULL);
    for (int i = 0; i < n; i++)
        sl_ctx_set_shape(ctx, 0, i, NULL);
    return SL_OK;
}

static sl_status batch_permutation_run_batch(sl_ctx *ctx)
{
    const int n = sl_ctx_batch_size(ctx);
    const bool rep = sl_ctx_arg_bool(ctx, A_ALLOW_REPETITIONS, 0);
    const bool nofix = sl_ctx_arg_bool(ctx, A_NO_FIXED_POINTS, 0);
    if (rep) {
        for (int i = 0; i < n; i++) {
            sl_rng r = sl_ctx_rng(ctx, i);
            int32_t v;
            do
                v = (int32_t)sl_rng_below(&r, (uint64_t)n);
            while (nofix && v == i);
            *(int32_t *)sl_ctx_output_data(ctx, 0, i) = v;
        }
        return SL_OK;
    }
    for (int i = 0; i < n; i++)
        *(int32_t *)sl_ctx_output_data(ctx, 0, i) = i;
    sl_rng r = sl_ctx_rng(ctx, 0);
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates; Sattolo (j < i) for a derangement */
        int j = (int)sl_rng_below(&r, (uint64_t)(nofix ? i : i + 1));
        int32_t *a = sl_ctx_output_data(ctx, 0, i), *b = sl_ctx_output_data(ctx, 0, j);
        int32_t t = *a;
        *a = *b;
        *b = t;
    }
    return SL_OK;
}

const sl_op_def sl_op_batch_permutation = {
    .name = "batch_permutation",
    .doc = "A random permutation of the sample indices 0 .. n-1 of the batch, one int32 index "
           "per sample (DALI's batch_permutation), for permute_batch.\n\n"
           "allow_repetitions draws each index independently; no_fixed_points makes sure no "
           "index equals its position (Sattolo's algorithm: a random cyclic permutation).",
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    .devices = SL_OP_CPU,
    .flags = SL_OP_RANDOM,
    .setup = batch_permutation_setup,
    .run_batch = batch_permutation_run_batch,
};
