/* sluice/op.h: the API for operator authors.
 *
 * An operator is one C file that exports one `const sl_op_def`: a static schema (name, doc,
 * inputs, outputs, arguments with type, default and doc, supported devices, flags) and the
 * functions the executor calls. Everything else about an operator — Python's fn.*, the docs,
 * `sluice ops`, JSON spec validation — is derived from this definition.
 *
 * Life of an operator node:
 *   init(ini, &state)        once at build, constant arguments only; may fail (sl_init_fail)
 *   per iteration:
 *     setup(ctx)             serial: declare outputs (sl_ctx_set_output) and, if it can, the
 *                            per-sample shapes (sl_ctx_set_shape)
 *     setup_sample(ctx, i)   optional, parallel over samples: per-sample shapes
 *     run_sample(ctx, i)     parallel over samples, outputs already allocated
 *       or run_batch(ctx)    serial, for work that cannot be split
 *   fini(state)              at destroy
 * Argument values, argument inputs, RNG streams and scratch memory come from the context, so an
 * operator holds no locks and frees nothing per iteration. A SL_OP_STATEFUL operator's
 * iterations run one after another in order; any other operator must be a pure function of its
 * inputs, arguments and RNG streams (several iterations of it may run at once).
 *
 * Errors: `return sl_fail(ctx, SL_ECORRUPT, "premature end of data");` records the message with
 * the operator, node, iteration, sample and source file filled in by the executor.
 */
#ifndef SLUICE_OP_H
#define SLUICE_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice/batch.h"
#include "sluice/dtype.h"
#include "sluice/pipeline.h" /* sl_feed, sl_reader_meta: what a source's feed / reader_meta see */
#include "sluice/rng.h"
#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- schema ---------------------------------------------------------------------------- */

typedef enum sl_arg_type {
    SL_ARG_BOOL,
    SL_ARG_INT,
    SL_ARG_FLOAT,
    SL_ARG_STRING,
    SL_ARG_DTYPE, /* an element type, written by name ("float32", "FLOAT", "UINT8") */
    SL_ARG_INTS,
    SL_ARG_FLOATS,
    SL_ARG_STRINGS
} sl_arg_type;

/* sl_arg_def.flags */
#define SL_ARG_TENSOR 0x1u    /* may be given per sample as an argument input (CPU node) */
#define SL_ARG_OPTIONAL 0x2u  /* no default; may stay unset (sl_ctx_arg_is_set tells) */
#define SL_ARG_RANGE 0x4u     /* numeric value (each element of a list) within [min, max] */
#define SL_ARG_SCALAR_OK 0x8u /* a list argument also accepts one scalar (broadcast) */
/* An SL_ARG_INT argument that also takes the string "auto": the job's rank, or its world size,
 * from the launcher (sluice/distributed.h), resolved when the pipeline is built. */
#define SL_ARG_AUTO_RANK 0x10u
#define SL_ARG_AUTO_WORLD_SIZE 0x20u
/* An argument input whose samples' sizes the operator checks itself (the executor checks the
 * dtype and the count only): _conditional's predicate, to word DALI's error. */
#define SL_ARG_OWN_CHECK 0x40u

typedef struct sl_arg_def {
    const char *name;
    sl_arg_type type;
    /* Default as JSON text ("0.5", "[0.0]", "\"RGB\"", "false"). NULL: required unless
     * SL_ARG_OPTIONAL. */
    const char *def;
    const char *doc;
    unsigned flags;
    double min, max;      /* with SL_ARG_RANGE */
    int min_len, max_len; /* list lengths allowed (0, 0: any) */
    const char *choices;  /* SL_ARG_STRING: allowed values separated by '|', NULL: any */
} sl_arg_def;

typedef struct sl_io_def {
    const char *name;
    const char *doc;
} sl_io_def;

/* When an optional output exists (sl_op_def.output_when; DALI's optional outputs, such as
 * random_bbox_crop's labels and indices): only when the node has at least `inputs` inputs (0:
 * any number) and, when `arg` names an SL_ARG_BOOL argument (a constant, never per sample),
 * only when it is true; with `unless`, `arg` names an SL_ARG_STRING argument instead and the
 * output exists unless its value is `unless` (random_object_bbox's format "box"). A node's
 * outputs are the op's outputs whose conditions hold, numbered in order (sl_ctx_num_outputs
 * counts them; the operator maps its own numbering). With `in_range`, `arg` names an SL_ARG_INT
 * argument (a constant) instead and the output exists when lo <= its value <= hi
 * (readers.caffe2: its label output unless label_type is 4, one output per additional_inputs). */
typedef struct sl_output_when {
    int inputs;
    const char *arg;
    const char *unless;
    bool in_range;
    int64_t lo, hi;
} sl_output_when;

/* sl_op_def.max_inputs of an operator that takes any number of inputs, at least min_inputs
 * (cat, stack). Its `inputs` table then has max(min_inputs, 1) entries, the last one describing
 * every input from its position on (sl_op_num_input_defs). */
#define SL_INPUTS_ANY (-1)

/* A deprecated argument name an operator still accepts, as DALI does (its schemas'
 * DeprecateArgInFavorOf and DeprecateArg). `renamed_to` names the argument it is an alias of:
 * its value goes there (giving both is an error). NULL: an argument sluice does not use, whose
 * value is accepted and ignored. `msg` is what front ends show when it is used; NULL gives
 * DALI's default words (sl_arg_alias_message). The build accepts the old name silently; Python
 * issues the message as a DeprecationWarning. */
typedef struct sl_arg_alias {
    const char *name;
    const char *renamed_to;
    const char *msg;
} sl_arg_alias;

/* sl_op_def.devices */
#define SL_OP_CPU 0x1u
#define SL_OP_MIXED 0x2u
#define SL_OP_GPU 0x4u

/* sl_op_def.flags */
#define SL_OP_SOURCE 0x1u   /* reads data from outside the pipeline (readers, external sources) */
#define SL_OP_STATEFUL 0x2u /* iterations must run in order (readers) */
#define SL_OP_RANDOM 0x4u   /* draws from sl_ctx_rng; has a `seed` argument */
#define SL_OP_SIDE_EFFECTS 0x8u /* never pruned, even when no output is used */
/* Copies its one input unchanged (copy). On device "cpu" it may read GPU data: the executor
 * then copies the batch from the device itself (DataNode.cpu()). */
#define SL_OP_TRANSFER 0x10u
/* Sample by sample (a run_sample operator): setup, setup_sample and roi_sample read only the
 * shapes, dtypes, layouts and sources of its data inputs, never their data (no
 * sl_batch_sample_data there), and run_sample(i) reads only sample i of them, through
 * sl_batch_sample_data (never sl_batch_data, offsets or nbytes, meaningless for a fused
 * input). The executor may then fuse it with the producer of an input that nothing else reads:
 * both run per sample in one task, the intermediate sample in the thread's scratch instead of
 * a batch (sample fusion, sl_pipeline_options.fuse_samples). Any run_sample operator may be
 * such a producer, which is why run_sample(i) must write only sample i of its outputs, through
 * sl_ctx_output_data(ctx, o, i), and only during that call. */
#define SL_OP_SAMPLEWISE 0x20u
/* Reads only the shapes, dtypes, layouts and sources of its inputs, never their data (shapes).
 * On device "cpu" it may then read GPU data as it is: no copy to the host, no wait for the GPU
 * work that fills it. */
#define SL_OP_METADATA 0x40u
/* Runs code of the application's front end: a function registered for the node with
 * sl_pipeline_set_callback before the build (python_function: the Python API registers the
 * Python callable). A JSON spec cannot hold such a function, so a node without one fails to
 * build; Python's serialize() refuses a pipeline holding one. */
#define SL_OP_CALLBACK 0x80u
/* On device "mixed", the operator's CPU functions write no outputs: each sample's CPU result goes
 * to a per-sample staging area of pinned host memory (sized in setup_sample with
 * sl_ctx_set_staging, written in run_sample through sl_ctx_staging), which the executor copies
 * to the device in one copy; then run_gpu, on the node's stream, makes the outputs (device
 * memory) from it (sl_ctx_staging_device). The hybrid JPEG decoder: entropy decoding on the
 * CPU, the rest in kernels. Without this flag a mixed node's outputs are written on the CPU
 * into pinned memory and copied as they are. */
#define SL_OP_MIXED_GPU 0x100u
/* Deterministic, per sample (the sample cache, sl_pipeline_options.cache_bytes): sample i of
 * its outputs is a function of sample i of its inputs (data and argument inputs) and of its
 * constant arguments alone — no sl_ctx_rng, no state that changes between iterations, no
 * dependence on the other samples of the batch or on the iteration — and its setup reads only
 * the shapes, dtypes, layouts and sources of its data inputs. It runs per sample (run_sample).
 * A source with this flag (a reader) names each sample's identity in its setup with
 * sl_ctx_set_sample_key, reads only in setup_sample / run_sample, and its samples are a function
 * of that key. The executor may then, for a sample it has cached, skip the node's setup_sample
 * and run_sample (and a reader's reading) and give the outputs their cached shapes and bytes. */
#define SL_OP_DETERMINISTIC 0x200u

typedef struct sl_op_init sl_op_init;
typedef struct sl_ctx sl_ctx;

typedef struct sl_op_def {
    const char *name;        /* dotted, "decoders.image"; file src/ops/decoders/image.c */
    const char *doc;         /* first line a summary; rest in Markdown */
    const sl_io_def *inputs; /* max_inputs entries (SL_INPUTS_ANY: see there) */
    int min_inputs, max_inputs;
    const sl_io_def *outputs; /* num_outputs entries */
    int num_outputs;
    /* An operator whose number of outputs is an argument, as DALI's python_function: the name
     * of its SL_ARG_INT argument (with SL_ARG_RANGE from 0) whose value is a node's number of
     * outputs, or of its required constant SL_ARG_INTS or SL_ARG_STRINGS argument whose length
     * is (element_extract's element_map, readers.tfrecord's feature_names, readers.webdataset's
     * ext; one value given for an SL_ARG_SCALAR_OK list counts 1). `outputs` then has num_outputs =
     * 1 entry, which describes each of them. NULL: every node has num_outputs outputs. */
    const char *num_outputs_arg;
    /* NULL: every output always exists; else num_outputs entries, one per output, saying when
     * it exists (sl_output_when). */
    const sl_output_when *output_when;
    const sl_arg_def *args;
    int num_args;
    const sl_arg_alias *aliases; /* deprecated argument names still accepted; may be NULL */
    int num_aliases;
    unsigned devices; /* SL_OP_CPU | ... */
    unsigned flags;   /* SL_OP_SOURCE | ... */
    /* Bytes of per-iteration data per sample (sl_ctx_iter_data), kept per iteration slot. */
    size_t iter_bytes_per_sample;

    sl_status (*init)(sl_op_init *ini, void **state); /* optional */
    void (*fini)(void *state);                        /* optional */
    sl_status (*setup)(sl_ctx *ctx);                  /* required */
    sl_status (*setup_sample)(sl_ctx *ctx, int sample);
    sl_status (*run_sample)(sl_ctx *ctx, int sample);
    sl_status (*run_batch)(sl_ctx *ctx);
    /* Readers: fill *meta (called after init, from any thread; must not change state). */
    void (*reader_meta)(const void *state, sl_reader_meta *meta);
    /* Sources fed by the application (external_source): queue one batch, copied. Called from
     * the consumer's thread while iterations run; the op synchronises with its setup. */
    sl_status (*feed)(void *state, const struct sl_feed *batch, char *err, size_t errlen);
    /* Sources that decide an iteration's batch size (external_source): the number of samples
     * of `iteration`, or 0 when not known yet. Called under the executor's lock when the
     * iteration starts; must not block. Without such a source every iteration has the
     * pipeline's batch_size. */
    int (*batch_size)(void *state, int64_t iteration);
    /* device "gpu" (SL_OP_GPU): after setup/setup_sample (which see only shapes, never GPU
     * data), enqueue the whole batch's work on sl_ctx_stream(ctx). Inputs and outputs are
     * device memory; per-sample parameters go to the device with sl_ctx_gpu_upload. Must not
     * wait for the GPU. Only in builds with CUDA (SLUICE_HAVE_CUDA). */
    sl_status (*run_gpu)(sl_ctx *ctx);
    /* Optional, SL_OP_SAMPLEWISE operators: tells with sl_ctx_input_roi which part of input
     * samples run_sample(sample) will read, from shapes, arguments, iteration data and
     * sl_ctx_output_roi. Called only where the node's producer runs fused into it (sample
     * fusion), per sample, after every setup and before the fused chain runs that sample,
     * the chain's tail first; the producer may then write only that part. */
    sl_status (*roi_sample)(sl_ctx *ctx, int sample);
    /* Checkpointing (sl_pipeline_checkpoint), for SL_OP_STATEFUL operators whose state a
     * restored pipeline needs (readers: epoch and position). `checkpoint` writes the node's
     * state as it is between two iterations — before the setup of the next one — as at most
     * `cap` integers into vals, and returns how many it needs (the executor calls again with
     * room for them when that is more than cap), or -1 when the state cannot be saved (why in
     * err). The executor calls it only while no setup of the node runs, from any thread, when
     * enable_checkpointing is set. `restore`, after init and before the first iteration, sets
     * the state `checkpoint` wrote (n values) in a pipeline whose first iteration is
     * `iteration`; SL_EINVAL with why in err for values it cannot take. A stateful operator
     * without them has no state a checkpoint needs; one with only `restore` saves nothing but
     * learns the first iteration (external_source numbers its batches from it). */
    int (*checkpoint)(const void *state, int64_t *vals, int cap, char *err, size_t errlen);
    sl_status (*restore)(void *state, int64_t iteration, const int64_t *vals, int n, char *err,
                         size_t errlen);
} sl_op_def;

/* The `seed` argument every SL_OP_RANDOM operator declares. */
#define SL_ARG_SEED_DEF                                                                            \
    {                                                                                              \
        .name = "seed", .type = SL_ARG_INT, .def = "-1",                                           \
        .doc = "Random seed; -1 derives one from the pipeline seed and the node's name."           \
    }

/* ---- init (build time, constant arguments) -------------------------------------------- */

/* True when the user gave the argument (a constant or an argument input); false when it has
 * its default or, for SL_ARG_OPTIONAL arguments, no value. Same for sl_ctx_arg_is_set. */
SL_API bool sl_init_arg_is_set(const sl_op_init *ini, int arg);
/* True when the argument is given per sample as an argument input: its value is then only
 * known per iteration (sl_ctx_arg_*). */
SL_API bool sl_init_arg_is_input(const sl_op_init *ini, int arg);
SL_API bool sl_init_arg_bool(const sl_op_init *ini, int arg);
SL_API int64_t sl_init_arg_int(const sl_op_init *ini, int arg);
SL_API double sl_init_arg_float(const sl_op_init *ini, int arg);
SL_API const char *sl_init_arg_str(const sl_op_init *ini, int arg);
SL_API sl_dtype sl_init_arg_dtype(const sl_op_init *ini, int arg);
/* List arguments: *n receives the length. Borrowed until fini. */
SL_API const int64_t *sl_init_arg_ints(const sl_op_init *ini, int arg, int *n);
SL_API const double *sl_init_arg_floats(const sl_op_init *ini, int arg, int *n);
SL_API const char *const *sl_init_arg_strs(const sl_op_init *ini, int arg, int *n);
SL_API int sl_init_batch_size(const sl_op_init *ini);
/* The node's seed: its `seed` argument when set (not -1), else derived from the pipeline seed
 * and the node name. */
SL_API uint64_t sl_init_seed(const sl_op_init *ini);
SL_API const char *sl_init_node_name(const sl_op_init *ini);
/* The node's number of outputs: num_outputs, or the value of num_outputs_arg. Same for
 * sl_ctx_num_outputs. */
SL_API int sl_init_num_outputs(const sl_op_init *ini);
/* SL_OP_CALLBACK operators: the function registered for the node (sl_pipeline_set_callback).
 * Returns: false, *fn and *user untouched, when none was registered; *user is the
 * application's, valid until the pipeline is destroyed. */
SL_API bool sl_init_callback(const sl_op_init *ini, sl_callback_fn *fn, void **user);
/* A reader's or decoder's "on_bad_sample" argument (a string: "raise", "skip", "replace"):
 * when the user set it, the node's per-sample failures follow it instead of the pipeline's
 * on_bad_sample. SL_EINVAL (recorded) for another value. */
SL_API sl_status sl_init_on_bad_sample(sl_op_init *ini, int arg);
/* Records an error for this node. Returns: code, so `return sl_init_fail(...)` reads well. */
SL_API sl_status sl_init_fail(sl_op_init *ini, sl_status code, const char *fmt, ...)
    SL_PRINTF(3, 4);

/* ---- per iteration -------------------------------------------------------------------- */

/* Samples in this iteration: the pipeline's batch_size, or fewer when an external source was
 * fed a smaller batch for it; inside a conditional branch (after a _conditional.split), the
 * branch's samples, possibly none: every operator must handle a batch of 0 samples (setup is
 * called, per-sample functions are not). sl_init_batch_size is the maximum. */
SL_API int sl_ctx_batch_size(const sl_ctx *ctx);
SL_API int64_t sl_ctx_iteration(const sl_ctx *ctx);
SL_API int sl_ctx_num_inputs(const sl_ctx *ctx);
SL_API int sl_ctx_num_outputs(const sl_ctx *ctx);
SL_API const sl_batch *sl_ctx_input(const sl_ctx *ctx, int i);
SL_API void *sl_ctx_state(const sl_ctx *ctx);
/* Per-iteration data: iter_bytes_per_sample * batch size bytes, kept between setup and run of
 * one iteration (and reused by later iterations of the same slot). */
SL_API void *sl_ctx_iter_data(const sl_ctx *ctx);

/* setup: declare output o. Layout may be NULL (unknown). */
SL_API void sl_ctx_set_output(sl_ctx *ctx, int o, sl_dtype dtype, int ndim, const char *layout);
/* setup or setup_sample: shape of sample i of output o (ndim extents, each >= 0). */
SL_API void sl_ctx_set_shape(sl_ctx *ctx, int o, int sample, const int64_t *shape);
/* setup/setup_sample/run: the source (file path) of sample i of output o; borrowed, must live
 * as long as the node's state. By default outputs inherit the sources of input 0. */
SL_API void sl_ctx_set_source(sl_ctx *ctx, int o, int sample, const char *source);
/* setup of an SL_OP_DETERMINISTIC source: the identity of sample i (its index in the data set,
 * 0 <= key < the reader_meta epoch_size), the key of the sample cache. Samples with equal keys
 * must be equal. Not called (or key < 0): the sample is not cached. */
SL_API void sl_ctx_set_sample_key(sl_ctx *ctx, int sample, int64_t key);
/* run: where sample i of output o is written (allocated by the executor after setup). */
SL_API void *sl_ctx_output_data(sl_ctx *ctx, int o, int sample);
SL_API const int64_t *sl_ctx_output_shape(const sl_ctx *ctx, int o, int sample);
/* roi_sample: run_sample(sample) reads only the box [lo, hi) (ndim extents each, clipped to
 * the sample's shape) of sample `sample` of input i. Several calls for one input make the
 * box that covers them. Ignored unless input i's producer runs fused into this node. */
SL_API void sl_ctx_input_roi(sl_ctx *ctx, int i, int sample, const int64_t *lo, const int64_t *hi);
/* run_sample and roi_sample: true when only the box [lo, hi) (ndim extents each) of sample
 * `sample` of output o will ever be read (its one consumer said so with sl_ctx_input_roi);
 * the rest of the sample may then be left unwritten. false: write all of it. */
SL_API bool sl_ctx_output_roi(const sl_ctx *ctx, int o, int sample, int64_t *lo, int64_t *hi);

/* Argument values for a sample: the argument input's value when one is connected, otherwise
 * the constant (or default). The executor has already checked types and lengths. */
SL_API bool sl_ctx_arg_is_set(const sl_ctx *ctx, int arg);
SL_API bool sl_ctx_arg_bool(const sl_ctx *ctx, int arg, int sample);
SL_API int64_t sl_ctx_arg_int(const sl_ctx *ctx, int arg, int sample);
SL_API double sl_ctx_arg_float(const sl_ctx *ctx, int arg, int sample);
SL_API const char *sl_ctx_arg_str(const sl_ctx *ctx, int arg);
SL_API sl_dtype sl_ctx_arg_dtype(const sl_ctx *ctx, int arg);
/* List values copied into out (at most max; out may be NULL when max is 0, to ask for the
 * length); returns the length (which may exceed max). */
SL_API int sl_ctx_arg_floats(const sl_ctx *ctx, int arg, int sample, double *out, int max);
SL_API int sl_ctx_arg_ints(const sl_ctx *ctx, int arg, int sample, int64_t *out, int max);

/* Per-worker scratch memory of at least `bytes`, 64-byte aligned, valid until the task returns
 * or the next call for the same buffer (which may move it). NULL on allocation failure (return
 * SL_ENOMEM then). sl_ctx_scratch_n gives SL_SCRATCH_BUFFERS independent buffers (k = 0 is
 * sl_ctx_scratch's), for a task that needs several at once. */
#define SL_SCRATCH_BUFFERS 4
/* The pipeline's per-sample limit (sl_pipeline_options.max_sample_bytes): the executor refuses
 * an output sample larger than this before allocating it; an operator that needs working memory
 * proportional to its input (a decoder's coefficient buffer) refuses more than this too. */
SL_API size_t sl_ctx_max_sample_bytes(const sl_ctx *ctx);
SL_API void *sl_ctx_scratch(sl_ctx *ctx, size_t bytes);
SL_API void *sl_ctx_scratch_n(sl_ctx *ctx, int k, size_t bytes);

/* ---- GPU stage (run_gpu) --------------------------------------------------------------
 * Device "mixed" needs nothing of these: a mixed node runs the op's CPU functions into pinned
 * host memory and the executor copies its outputs to the device. */

/* The CUDA stream (a cudaStream_t) the node's work must be enqueued on; NULL outside run_gpu. */
SL_API void *sl_ctx_stream(const sl_ctx *ctx);
/* Copies `bytes` of host memory to device memory that stays valid (and unchanged) until this
 * iteration's GPU work is done; k < SL_GPU_UPLOADS selects one of the node's buffers. The copy
 * is ordered on sl_ctx_stream before the kernels enqueued after this call. Returns the device
 * pointer, or NULL (SL_ENOMEM; the context's error is set). Threads: run_gpu only. */
#define SL_GPU_UPLOADS 4
SL_API void *sl_ctx_gpu_upload(sl_ctx *ctx, int k, const void *host, size_t bytes);
/* Device scratch memory of the node for this iteration (k < SL_GPU_UPLOADS, independent of the
 * upload buffers); NULL on failure. Ask for each k once per run_gpu (with its largest size). */
SL_API void *sl_ctx_gpu_scratch(sl_ctx *ctx, int k, size_t bytes);
/* A per-sample error only the device can see (an integer division by zero inside a tensor):
 * a device int for this iteration that the node's kernels set with sl_gpu_flag_sample
 * (src/cuda/kernel.cuh; the lowest sample wins). When the iteration's GPU work is done, a set
 * flag fails the iteration with `message` (copied), naming the node, the sample and its file,
 * as a CPU failure would. Returns NULL on failure (error recorded). Threads: run_gpu only. */
SL_API int *sl_ctx_gpu_error_flag(sl_ctx *ctx, const char *message);
/* True when the GPU is emulated on the host (SLUICE_GPU_EMULATE=1, tests): kernels then run on
 * the calling thread; device pointers are host addresses that only emulated kernels and copies
 * (src/cuda/kernel.cuh) may touch — anything else faults, as on a GPU. */
SL_API bool sl_ctx_gpu_emulated(const sl_ctx *ctx);

/* SL_OP_MIXED_GPU operators on device "mixed" (see there). setup_sample: sample i's staging
 * takes `bytes` (0 unless called). run_sample: its pinned host memory, 256-byte aligned; run_gpu
 * may read it on the host too (what run_sample wrote, e.g. a header), and
 * sl_ctx_staging_device gives its copy on the device, complete before run_gpu's kernels run.
 * NULL outside such a node. */
SL_API void sl_ctx_set_staging(sl_ctx *ctx, int sample, size_t bytes);
/* True in the functions of such a node (the op then writes staging, not outputs, on the CPU). */
SL_API bool sl_ctx_staged(const sl_ctx *ctx);
SL_API void *sl_ctx_staging(const sl_ctx *ctx, int sample);
SL_API const void *sl_ctx_staging_device(const sl_ctx *ctx, int sample);
/* Counts one sample that the node ran through its fallback rather than its fast path (the
 * hybrid decoder's CPU decode), in sl_node_stats.fallbacks. Any thread. */
SL_API void sl_ctx_count_fallback(sl_ctx *ctx);

/* run_batch / run_gpu, which work on the whole batch: the errors sl_fail records from now on
 * name sample `sample` and its source file, as a per-sample function's do (-1: no sample). */
SL_API void sl_ctx_focus_sample(sl_ctx *ctx, int sample);

/* Records an error with full context (operator, node, iteration, sample, source).
 * Returns: code. */
SL_API sl_status sl_fail(sl_ctx *ctx, sl_status code, const char *fmt, ...) SL_PRINTF(3, 4);

/* The random stream of sample i in this iteration for this node (sluice/rng.h): keyed by the
 * node's seed, counted by (iteration, sample) — inside a conditional branch, by the sample's
 * index in the iteration's whole batch, so a branch draws what the node would draw without the
 * conditional. */
SL_API sl_rng sl_ctx_rng(const sl_ctx *ctx, int sample);

#ifdef __cplusplus
}
#endif
#endif
