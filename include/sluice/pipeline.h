/* sluice/pipeline.h: building a graph into a pipeline and running it.
 *
 * The run API follows DALI's: sl_pipeline_schedule_run() asks for one more iteration (the first
 * call asks for prefetch_queue_depth of them); sl_pipeline_share_outputs() waits for the oldest
 * asked-for iteration and lends its outputs; sl_pipeline_release_outputs() gives them back.
 * sl_pipeline_run() = release the previously shared outputs (if any) + schedule_run +
 * share_outputs. Iterations run concurrently on the pipeline's threads, up to
 * prefetch_queue_depth of them (cpu_queue_depth + gpu_queue_depth with separated queues), and
 * are delivered strictly in order. With num_threads 0 there are no such threads: the consumer's
 * thread runs the work while it waits in share_outputs (sl_pipeline_run).
 *
 * An error inside iteration k (a corrupt file, say) is returned by the share_outputs() that
 * delivers k, with sl_pipeline_error() naming operator, node, iteration, sample and file; the
 * next call continues with k+1. Threads: one consumer thread at a time per pipeline.
 */
#ifndef SLUICE_PIPELINE_H
#define SLUICE_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sluice/batch.h"
#include "sluice/graph.h"
#include "sluice/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sl_pipeline sl_pipeline;

/* What a reader reports about its epoch (DALI's reader_meta). */
typedef struct sl_reader_meta {
    int64_t epoch_size;        /* samples in the whole data set */
    int64_t epoch_size_padded; /* with pad_last_batch: ceil(epoch_size / shards) * shards */
    int number_of_shards;
    int shard_id;
    bool pad_last_batch;
    bool stick_to_shard;
} sl_reader_meta;

/* A batch handed to sl_pipeline_feed_input: borrowed for the duration of the call. */
typedef struct sl_feed {
    int num_samples;
    int ndim;
    sl_dtype dtype;
    const char *layout;      /* may be NULL */
    const int64_t *shapes;   /* num_samples * ndim extents */
    const void *const *data; /* per sample, contiguous C order */
    /* Optional: lend the data instead of copying it. When release is set, nothing is copied at
     * feed time; the samples must stay valid and unchanged until release(release_ctx) is
     * called — once, from any thread, when the iteration no longer reads them: external_source
     * calls it as soon as it copied the last sample (an iteration that failed first: when its
     * slot moves on, or when the pipeline is destroyed). */
    void (*release)(void *release_ctx);
    void *release_ctx;
} sl_feed;

/* sl_pipeline_options.device_id: the local rank of a distributed job ("auto" in a spec). */
#define SL_DEVICE_ID_AUTO (-2)
/* sl_pipeline_options.prefetch_queue_depth: tuned while the pipeline runs ("auto"; default). */
#define SL_PREFETCH_AUTO 0
/* sl_pipeline_options.num_threads: the CPUs this process may run on ("auto"; default). */
#define SL_NUM_THREADS_AUTO (-1)

/* The longest cache_file path, its terminating NUL included. */
#define SL_CACHE_FILE_MAX 1024

typedef struct sl_pipeline_options {
    int batch_size; /* samples per iteration (default 1) */
    /* CPU worker threads, 0 to 1024; SL_NUM_THREADS_AUTO (-1, "auto"; default): the CPUs the
     * process may run on (sched_getaffinity), resolved by sl_pipeline_create. 0: no worker
     * threads; the thread that waits for an iteration (sl_pipeline_run, share_outputs) runs
     * its tasks itself, one at a time, in a fixed order (single-threaded and deterministic, as
     * PyTorch's num_workers=0; nothing runs ahead while the caller is away, and "auto" prefetch
     * stays at 2). The outputs are the same at any num_threads. */
    int num_threads;
    /* Iterations in flight or waiting for the consumer, 1 to 64; SL_PREFETCH_AUTO (0, "auto";
     * default): tuned while it runs, from 2 up to 8, within prefetch_max_bytes: more when the
     * threads idle at the tails of the batches in flight while the consumer waits, fewer when
     * the consumer is the bottleneck (sl_pipeline_prefetch_stats shows the decisions). The
     * outputs are the same whatever the depth. A pipeline with an external source or a GPU
     * stage runs "auto" at the fixed depth 2 (DALI's default). */
    int prefetch_queue_depth;
    /* Pipeline seed: every random operator without a seed of its own draws from it. Negative
     * (default -1): a fresh seed drawn for each pipeline by sl_pipeline_create, as DALI does
     * (sl_pipeline_seed() tells which); give one to make runs reproducible. */
    int64_t seed;
    /* CUDA device, -1 for a CPU-only pipeline (default -1), SL_DEVICE_ID_AUTO for the job's
     * local rank (sluice/distributed.h), resolved by sl_pipeline_create. */
    int device_id;
    /* Sample fusion (default 1): a CPU node whose one output only feeds an SL_OP_SAMPLEWISE
     * consumer runs sample by sample with it, the intermediate sample in per-thread scratch
     * instead of a whole batch (less memory, the sample still in cache). 0 runs every node
     * batch by batch; the outputs are the same either way. */
    int fuse_samples;
    /* Separated queues, DALI's prefetch_queue_depth=dict(cpu_size=, gpu_size=) (default 0, 0:
     * one queue of prefetch_queue_depth iterations for both stages). Both >= 1: the mixed and
     * gpu stages get gpu_queue_depth buffer sets (device outputs, pinned staging), taken in
     * iteration order and given back as the consumer releases (and unpins) outputs, and the
     * CPU stage may run cpu_queue_depth iterations beyond them: cpu + gpu iterations in
     * flight (the first schedule_run asks for all of them); prefetch_queue_depth is not used
     * then. */
    int cpu_queue_depth;
    int gpu_queue_depth;
    /* Outputs released while pinned views still reference them are set aside, and the
     * pipeline goes on with other buffers (sl_pipeline_outputs_pin): at most this many bytes of
     * host memory, and as many of device memory, at a time. Default 0: a quarter of the
     * machine's physical memory and a quarter of the GPU's. */
    int64_t max_held_bytes;
    /* The largest output sample any node may produce, and the most working memory an operator
     * may take for one sample (a decoder's), in bytes (default 1 GiB). A sample past it fails
     * its iteration with SL_EINVAL naming the node, the sample and its file, before anything is
     * allocated for it: a hostile header or a mistaken size cannot take the machine's memory. */
    int64_t max_sample_bytes;
    /* What a sample whose per-sample work fails (a decoder's header or decode, a file past
     * max_sample_bytes) does to its batch (sl_bad_sample; "on_bad_sample" in a spec and in
     * Python, by name): SL_BAD_SAMPLE_RAISE (default) fails the batch and the pipeline goes on
     * with the next; SL_BAD_SAMPLE_SKIP delivers the batch without it (the remaining samples in
     * their order: a smaller batch); SL_BAD_SAMPLE_REPLACE puts in its place, in every output,
     * the next good sample of the same batch (i + 1, i + 2, ..., wrapping around). A reader's or
     * decoder's own "on_bad_sample" argument overrides it for the failures of that node.
     * Skipped and replaced samples are logged to stderr with their file (sl_pipeline_set_log
     * redirects them) and counted (sl_pipeline_bad_samples, sl_node_stats.bad_samples). A batch
     * with no good sample left fails. Pipelines with a GPU stage support only "raise". */
    int on_bad_sample;
    /* Skipped or replaced samples the pipeline tolerates over its life (default 0: no limit);
     * the batch that brings the count past it fails with its first bad sample's error. */
    int64_t max_bad_samples;
    /* prefetch_queue_depth "auto": the host bytes that the outputs of the iterations in flight
     * or waiting may take; the depth rises past 2 only while one more iteration fits. Default
     * 0: 1 GiB, or an eighth of the machine's memory when that is less. */
    int64_t prefetch_max_bytes;
    /* ---- sample cache (src/exec/cache.c; docs/guide.md, "The sample cache") ----
     * Bytes the cache of the deterministic subgraph may keep (default 0: no cache). The outputs
     * of the nodes that hang off a reader through deterministic operators only (the trait
     * SL_OP_DETERMINISTIC: decoders.image, resize, crop_mirror_normalize, ...; never a random
     * operator, an external source or a Python function) are kept per sample, keyed by the
     * sample's index in the data set, so a later epoch — shuffled, sharded, at any thread count
     * — copies them instead of reading, decoding and transforming again: byte for byte what
     * the work would give. Samples are admitted in the order they are first computed until the
     * next one does not fit; nothing is evicted (see the guide for why). */
    int64_t cache_bytes;
    /* "" (default): the cache lives in memory. A path: the cached samples are written to this
     * file (created or truncated at build, removed when the pipeline is destroyed) and read back
     * with pread; cache_bytes then bounds the file's size. */
    char cache_file[SL_CACHE_FILE_MAX];
    /* Checkpointing (DALI's enable_checkpointing; default 0): 1 lets sl_pipeline_checkpoint
     * save the pipeline's state; each iteration then records its stateful nodes' state when
     * it starts (a few integers per reader). */
    int enable_checkpointing;
    /* A checkpoint to restore (sl_pipeline_checkpoint's text; DALI's checkpoint=), NULL for
     * none (default): the pipeline continues from the checkpoint's iteration with the readers'
     * positions, the random operators' streams and the bad-sample count it saved, and its
     * outputs are those the checkpointed pipeline would have delivered next, byte for byte. A
     * negative seed takes the checkpoint's. Borrowed until sl_pipeline_create returns: create
     * checks the text (and the seed), build the rest — a checkpoint of another graph, batch
     * size, seed, shard or data set fails, saying which. Not a key of a spec's "pipeline"
     * object (`sluice run --resume FILE` reads one). */
    const char *checkpoint;
} sl_pipeline_options;

typedef enum sl_bad_sample {
    SL_BAD_SAMPLE_RAISE = 0,
    SL_BAD_SAMPLE_SKIP = 1,
    SL_BAD_SAMPLE_REPLACE = 2
} sl_bad_sample;

/* Fills *o with the defaults. */
SL_API void sl_pipeline_options_init(sl_pipeline_options *o);
/* Reads the "pipeline" object of a JSON spec into *o (keys not given keep their value). */
SL_API sl_status sl_pipeline_options_from_json(const char *json, sl_pipeline_options *o);

/* Copies the graph and the options (a negative seed replaced by a fresh one); the graph is
 * checked at build.
 * Returns: *out owned (sl_pipeline_destroy). Errors in sl_last_error(). */
SL_API sl_status sl_pipeline_create(const sl_graph *g, const sl_pipeline_options *o,
                                    sl_pipeline **out);
/* The pipeline's seed: the options' seed, or the one sl_pipeline_create drew when it was
 * negative (write it into a spec to reproduce the run). -1 for NULL. */
SL_API int64_t sl_pipeline_seed(const sl_pipeline *p);
/* Validates, prunes, orders and places the graph, initialises the operators (a file reader
 * lists its files here) and starts the threads. Calling it twice is harmless. */
SL_API sl_status sl_pipeline_build(sl_pipeline *p);
/* Cancels queued work, joins every thread, frees everything. NULL is ignored. */
SL_API void sl_pipeline_destroy(sl_pipeline *p);

SL_API sl_status sl_pipeline_schedule_run(sl_pipeline *p);
SL_API sl_status sl_pipeline_share_outputs(sl_pipeline *p);
SL_API sl_status sl_pipeline_release_outputs(sl_pipeline *p);
SL_API sl_status sl_pipeline_run(sl_pipeline *p);

/* Feeds one batch to the external_source node `name`: the data is copied, so the caller's
 * memory may be reused at once. The k-th batch fed to a node is iteration k's; feed it before
 * the iteration is scheduled (with prefetch_queue_depth D the first schedule_run starts D
 * iterations, so feed D batches first). num_samples, 1 to the pipeline's batch size, is that
 * iteration's batch size: a smaller last batch of an epoch is fine (external sources of one
 * pipeline must agree).
 * Returns SL_ENOTFOUND if no such node, SL_EINVAL for data that does not fit the node
 * (dtype/ndim/layout it declares), with the message in sl_pipeline_error(). */
SL_API sl_status sl_pipeline_feed_input(sl_pipeline *p, const char *name, const sl_feed *batch);

/* ---- callbacks: nodes that run the application's code (python_function) -----------------
 * A node of an SL_OP_CALLBACK operator calls a function the application registers for it
 * before the build. The node calls it once per iteration, in iteration order and one call at a
 * time (the operator is stateful), on one of the pipeline's threads, with the iteration's
 * inputs; the function hands back a view of each output sample, which the node checks (one
 * dtype and one number of dimensions per output) and copies into its outputs. The executor
 * owns scheduling, ordering and errors: a failed call fails its iteration, delivered in order
 * by share_outputs with the node's context, and the pipeline goes on. */

/* One output sample as a callback hands it back: any layout in memory (strides), read by the
 * node until sl_callback_call.release. */
typedef struct sl_sample_view {
    sl_dtype dtype;
    int ndim;               /* 0 to SL_MAX_NDIM */
    const int64_t *shape;   /* ndim extents, each >= 0 */
    const int64_t *strides; /* ndim steps in bytes (negative or 0 allowed); NULL: C order */
    const void *data;       /* the element at index (0, ..., 0); may be NULL when empty */
} sl_sample_view;

/* What a callback gets: borrowed for the duration of the call, except the views it fills. */
typedef struct sl_callback_call {
    int64_t iteration;
    int batch_size; /* samples of this iteration */
    int num_inputs;
    const sl_batch *const *inputs; /* the node's inputs (host memory), valid during the call */
    int num_outputs;
    /* num_outputs * batch_size views, zeroed: the callback fills outputs[o * batch_size + i]
     * with sample i of output o. */
    sl_sample_view *outputs;
    /* Set by the callback when its views hold resources: called once, from any thread, when
     * the node no longer reads them (after copying them, or when the iteration failed first;
     * also after a failed call); NULL: nothing to release. */
    void (*release)(void *release_ctx);
    void *release_ctx;
    char *err; /* the callback's message on failure (errlen bytes, "" before the call) */
    size_t errlen;
} sl_callback_call;

/* A node's function. Returns SL_OK, or an error code (SL_ECALLBACK when the application's code
 * failed) with its message in call->err; the iteration then fails with that code, the message
 * prefixed with the node's context. */
typedef sl_status (*sl_callback_fn)(void *user, sl_callback_call *call);

/* Registers fn (with `user`) for node `name`, of an SL_OP_CALLBACK operator, before the build;
 * a second call for the node replaces the first. A node of such an operator without a function
 * fails to build.
 * Returns SL_ENOTFOUND if no such node, SL_EINVAL if its operator takes no callback,
 * SL_EMISUSE once built (or fn NULL); the message in sl_pipeline_error().
 * Owns: user is borrowed; it must stay valid until sl_pipeline_destroy returns.
 * Threads: fn runs on the pipeline's threads, never two calls for one node at once. */
SL_API sl_status sl_pipeline_set_callback(sl_pipeline *p, const char *name, sl_callback_fn fn,
                                          void *user);

/* Outputs of the iteration last shared: borrowed until its release. */
SL_API int sl_pipeline_num_outputs(const sl_pipeline *p);
SL_API const sl_batch *sl_pipeline_output(const sl_pipeline *p, int i);
/* The CUDA device of the pipeline's GPU stage (options.device_id; -1 for CPU-only). */
SL_API int sl_pipeline_device_id(const sl_pipeline *p);
/* Iteration number of the outputs last shared (0, 1, ...), -1 before the first. */
SL_API int64_t sl_pipeline_iteration(const sl_pipeline *p);

/* Pinned outputs: keep the buffers of the outputs last shared valid after release_outputs (or
 * the next run) — what a zero-copy view (a NumPy array, a DLPack capsule) needs. Memory a pin
 * can see is never written or freed. Releasing pinned outputs sets them aside: the pipeline
 * goes on with other buffers (a spare set aside earlier, or new ones), so holding a few batches
 * costs memory, not progress; once every pin is dropped the buffers are reused. Past
 * max_held_bytes the release leaves them in place instead, the iteration that needs their slot
 * waits, and share_outputs fails with SL_EMISUSE after ~2 s (rather than hang), naming the
 * iterations whose views hold the memory. Returns NULL when no outputs are shared. Pins are
 * counted: each pin needs one unpin; sl_outputs_get's batches stay valid until the last.
 * Owns: the handle is the pipeline's; the pipeline must outlive it.
 * Threads: sl_outputs_unpin may be called from any thread. */
typedef struct sl_outputs sl_outputs;
SL_API sl_outputs *sl_pipeline_outputs_pin(sl_pipeline *p);
SL_API const sl_batch *sl_outputs_get(const sl_outputs *o, int i);
SL_API int64_t sl_outputs_iteration(const sl_outputs *o);
SL_API void sl_outputs_unpin(sl_outputs *o);
/* GPU outputs read by a consumer's CUDA stream (a cudaStream_t; DLPack's `stream`): when the
 * last pin of these outputs is dropped, the executor records an event after the work of every
 * stream named so (up to 16 distinct ones; past that it waits for the whole device then) and
 * waits for it (on the device) before reusing the buffers, so kernels the consumers queued on
 * them finish first. The outputs themselves are complete before share_outputs returns. No
 * effect in a pipeline without GPU outputs. Threads: any. */
SL_API void sl_outputs_set_stream(sl_outputs *o, void *stream);

/* ---- checkpoints ------------------------------------------------------------------------
 * The state of the pipeline after the iterations its consumer has taken (share_outputs calls,
 * failed iterations included): the next iteration's number, each reader's epoch and position,
 * the bad-sample count. Iterations scheduled or prefetched but not taken yet are not counted:
 * a pipeline restored from the checkpoint (sl_pipeline_options.checkpoint) runs them again.
 * Random operators draw from streams counted by iteration, so the restored pipeline delivers,
 * byte for byte, what this one delivers next. An external_source's application restarts its
 * feeding at the checkpoint's iteration itself.
 * Returns: SL_OK and *out, NUL-terminated JSON text of *len bytes (len may be NULL), owned by
 * the caller (sl_checkpoint_free); SL_EMISUSE without enable_checkpointing; SL_EUNSUPPORTED
 * when a node cannot save its state (naming it and why); the build's error when the pipeline
 * was not built yet (it is built). Message in sl_pipeline_error().
 * Threads: the consumer's thread, like the run calls; iterations in flight go on meanwhile. */
SL_API sl_status sl_pipeline_checkpoint(sl_pipeline *p, char **out, size_t *len);
/* Frees a checkpoint's text. NULL is ignored. */
SL_API void sl_checkpoint_free(char *text);

/* Message of the last failure of a call on p, "" if none. Valid until the next call on p. */
SL_API const char *sl_pipeline_error(const sl_pipeline *p);

typedef struct sl_error_detail {
    sl_status code;
    const char *op;     /* operator name or NULL */
    const char *node;   /* node name or NULL */
    int64_t iteration;  /* -1 when not tied to an iteration */
    int sample;         /* -1 when not tied to a sample */
    const char *source; /* file or record, NULL when unknown */
    const char *detail; /* the failing component's own words */
} sl_error_detail;
/* Structured form of sl_pipeline_error(); strings valid as long as that message. */
SL_API void sl_pipeline_error_detail(const sl_pipeline *p, sl_error_detail *d);

/* Reader metadata of node `name` (DALI's reader_meta). SL_ENOTFOUND if no such reader. */
SL_API sl_status sl_pipeline_reader_meta(const sl_pipeline *p, const char *name,
                                         sl_reader_meta *meta);
/* Epoch size of reader `name`; NULL = the first reader. Returns -1 when there is none. */
SL_API int64_t sl_pipeline_epoch_size(const sl_pipeline *p, const char *name);

typedef struct sl_node_stats {
    const char *name; /* node name */
    const char *op;   /* operator */
    const char *device;
    int64_t iterations; /* iterations completed */
    double total_ms;    /* wall time from the node's start to its end, summed */
    double busy_ms;     /* thread time spent in its functions, summed over threads */
    double gpu_ms;      /* mixed and gpu nodes: device time of its copies / kernels (CUDA events),
                         * summed; 0 for CPU nodes and when the GPU is emulated */
    const char *fused_into; /* the node this one runs sample by sample with (its output then
                             * never exists as a batch), NULL when not fused */
    int64_t fallbacks;      /* samples run through the operator's fallback instead of its fast path
                             * (decoders.image on mixed: decoded whole on the CPU), summed */
    int64_t bad_samples;    /* samples this node failed that were skipped or replaced (the
                             * on_bad_sample policy), summed */
} sl_node_stats;
/* Per-node timing of the built pipeline's nodes in execution order (0 <= i < num_nodes). */
SL_API int sl_pipeline_num_nodes(const sl_pipeline *p);
/* Samples skipped or replaced so far (on_bad_sample), over the pipeline's life. */
SL_API int64_t sl_pipeline_bad_samples(const sl_pipeline *p);
/* What the sample cache (options.cache_bytes) did so far. */
typedef struct sl_cache_stats {
    int nodes;        /* nodes whose per-sample work a cached sample skips (0: nothing cacheable,
                       * or no cache) */
    int64_t hits;     /* samples served from the cache (their subgraph did no work) */
    int64_t misses;   /* samples of a cacheable reader that were computed */
    int64_t entries;  /* samples held */
    int64_t bytes;    /* bytes they take (memory, or the file with cache_file) */
    int64_t capacity; /* options.cache_bytes */
    bool full;        /* a sample did not fit: no more are admitted */
} sl_cache_stats;
/* Fills *s (zeros, capacity 0, for a pipeline without a cache). SL_EMISUSE for NULL or a
 * pipeline not built. Threads: any, while the pipeline runs. */
SL_API sl_status sl_pipeline_cache_stats(const sl_pipeline *p, sl_cache_stats *s);
/* Where the line logged for each skipped or replaced sample goes ("sluice: iteration 3, sample
 * 5 (file /data/x.jpg) skipped: decoders.image ...", no newline): fn(user, line) on the thread
 * that delivers the batch, in sample order; NULL (the default) writes it to stderr. */
typedef void (*sl_log_fn)(void *user, const char *line);
SL_API void sl_pipeline_set_log(sl_pipeline *p, sl_log_fn fn, void *user);
SL_API sl_status sl_pipeline_node_stats(const sl_pipeline *p, int i, sl_node_stats *s);
/* Writes the last iterations' per-node spans as a Chrome/Perfetto trace (JSON). */
SL_API sl_status sl_pipeline_write_trace(const sl_pipeline *p, FILE *f);
/* Writes a picture of the pipeline's graph to f as Graphviz DOT text (`dot -Tsvg` draws it):
 * one box per node of the plan with its name, operator and device ("gpu (from inputs)" where
 * the build placed a node that was given none), data edges solid (labelled with the output
 * index where the producer has several outputs), argument inputs dashed and labelled with the
 * argument, the pipeline outputs as ovals "output k", each fused chain (sample fusion) in a
 * cluster; pruned nodes are left out and named in a comment at the top. Before
 * sl_pipeline_build it draws the plan the build will make, without initialising an operator
 * (no file is read, no thread started): a graph the build rejects fails with the build's error.
 * The text depends on the graph and the options alone: the same pipeline gives the same bytes.
 * Returns: SL_OK; the build's error; SL_EIO when writing to f failed; SL_EMISUSE for NULL. The
 * message is in sl_pipeline_error(p) (sl_last_error() for NULL).
 * Owns: nothing; f is borrowed, written from its current position and left open.
 * Threads: one thread at a time per pipeline, like the run calls. */
SL_API sl_status sl_pipeline_write_dot(const sl_pipeline *p, FILE *f);

/* What prefetch_queue_depth "auto" decided (autotune.c): the depth now and its limit (the
 * slots, and prefetch_max_bytes over one iteration's output bytes), the decisions so far, the
 * last window's measurements and reason, and the last changes (iteration delivered, new
 * depth). A fixed depth: autotune false, depth the fixed one. */
typedef struct sl_prefetch_stats {
    bool autotune;
    int depth;
    int depth_limit;
    int num_threads;
    int64_t iteration_bytes; /* host bytes of one iteration's own outputs */
    int64_t budget_bytes;    /* prefetch_max_bytes resolved */
    int64_t increases, decreases, windows;
    double idle;          /* last window: fraction of the threads' time idle */
    double consumer_wait; /* last window: fraction of the time the consumer waited */
    char reason[64];      /* of the last decision */
    int nchanges;
    int64_t change_iteration[16];
    int change_depth[16];
} sl_prefetch_stats;
SL_API sl_status sl_pipeline_prefetch_stats(const sl_pipeline *p, sl_prefetch_stats *s);

#ifdef __cplusplus
}
#endif
#endif
