/* src/exec/cache.h: the sample cache (sl_pipeline_options.cache_bytes), as the executor sees it.
 *
 * cache.c keeps, per sample key of a reader, the outputs of the nodes that hang off that reader
 * through SL_OP_DETERMINISTIC operators only (the cacheable subgraph). The scheduler (sched.c)
 * calls these hooks, each a no-op unless p->cache is set:
 *   node_task, after a root's (reader's) setup   sl__cache_root_setup: per sample hit, fill or
 *                                                neither, from the keys the setup named
 *   sample_step (setup_sample and run_sample)    sl__cache_run instead of the op's function: a
 *                                                hit skips it (the run phase copies the cached
 *                                                outputs in), a fill stores what run_sample made
 *   fused_run_task, chain_rois                   sl__cache_chain, sl__cache_roi: the same
 *                                                for a fused chain whose tail is cacheable
 *   alloc_and_run, before allocating             sl__cache_shapes: a hit's cached shapes
 *   complete_node_locked, frame done             sl__cache_frame_done_locked: complete fills
 *                                                become hits for later iterations, others are
 *                                                dropped
 * Threads: a root's setup runs serially in iteration order (stateful), so the key table is
 * touched by one thread at a time; an entry's parts are written by the tasks of the frame that
 * claimed it and published under mu when that frame is done.
 */
#ifndef SLUICE_EXEC_CACHE_H
#define SLUICE_EXEC_CACHE_H

#include "exec/exec.h"

/* At build, after the slots and the operators' init: finds the cacheable subgraph and, when
 * cache_bytes > 0 and it is not empty, sets p->cache (and each slot's cache). Fails (message
 * in p->error) when the cache file cannot be created or memory runs out. */
sl_status sl__cache_create(sl_pipeline *p);
void sl__cache_destroy(sl_pipeline *p);

/* After node sn's setup succeeded: when sn is a root, decides each sample (hit, fill, compute). */
void sl__cache_root_setup(sl_ctx *ctx);
/* Runs fn(ctx, sample) — setup_sample or run_sample of ctx's node — unless the sample is a hit
 * there; in the run phase (run) a hit's cached outputs are copied in, and a filled sample's
 * outputs are stored once fn succeeded. Returns fn's status, or the cache's error (recorded). */
sl_status sl__cache_run(sl_ctx *ctx, int sample, sl_status (*fn)(sl_ctx *, int), bool run);
/* A fused chain's tail: true when sample `sample` is a hit there, its cached outputs then
 * copied in (or the failure recorded); the chain must not run. A chain whose tail is not cached
 * runs, its cached nodes through sl__cache_run: a fused node's cached output then points into
 * the cache (a file cache: read into the sample's scratch). */
bool sl__cache_chain(sl__snode *tail, int sample, int worker);
/* Before node sn's roi_sample in a fused chain: true when the sample is a hit there (no
 * roi_sample: the node does not run); for a sample being filled whose output is cached, clears
 * the box its consumer asked for, so that the whole sample is computed and stored. */
bool sl__cache_roi(sl__snode *sn, int sample);
/* Before node sn allocates its outputs: the hits' cached shapes. */
void sl__cache_shapes(sl__snode *sn, int worker);
/* The slot's frame is done (needs mu). */
void sl__cache_frame_done_locked(sl_pipeline *p, sl__slot *slot);

#endif
