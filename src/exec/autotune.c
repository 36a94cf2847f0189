/* src/exec/autotune.c: prefetch_queue_depth "auto", the executor's run-ahead tuned while it
 * runs (issue 21 point 1; the idea of tf.data's AUTOTUNE for a prefetch buffer).
 *
 * Exports sl__autotune_init (at build), sl__autotune_decide (the policy: a pure function of
 * the state and one window of measurements, so tests drive it with injected windows),
 * sl__autotune_shared_locked (share_outputs' measurements, a decision every window) and
 * sl_pipeline_prefetch_stats (pipeline.h).
 *
 * What it tunes: `ahead`, the iterations in flight or waiting for the consumer (what a fixed
 * prefetch_queue_depth sets): schedule_run asks for runs - 1 + ahead iterations. The pipeline
 * has SL__AUTO_SLOTS slots, so raising `ahead` needs no new slot; iteration k still runs in
 * slot k % depth (determinism and every ordering rule stay as they are), and a frame starting
 * in a slot that has no output storage yet takes a free slot's (sched.c: start_frame_locked),
 * so the memory held is that of the slots in use, about `ahead` of them, not SL__AUTO_SLOTS.
 *
 * The measurements of one window (SL__AUTO_WINDOW delivered iterations): the fraction of the
 * threads' time spent idle (the thread pool's idle clock), the fraction of the window the
 * consumer spent waiting in share_outputs, and how many iterations were ready when asked for.
 * The policy:
 *   - the consumer waited (wait > 2 %) while threads idled (idle > 5 %): the threads run out of
 *     work at the tails of the batches in flight: one more iteration ahead, if the memory
 *     budget (prefetch_max_bytes over one iteration's output bytes) and the slots allow;
 *   - the consumer never waited and every iteration was ready (the consumer is the
 *     bottleneck) for 3 windows in a row: one fewer, down to 2 (DALI's default) or to the
 *     depth a later rise proved useful (no oscillation);
 *   - the budget shrinks `ahead` at once when one iteration's outputs grew;
 *   - after each change one window is skipped (the queue settles).
 * Outputs never depend on `ahead`: iteration k reads and draws the same whatever ran before it.
 */
#include <string.h>
#include <unistd.h>

#include "exec/exec.h"

#define WAIT_MIN 0.02      /* the consumer waited for the pipeline */
#define IDLE_MIN 0.05      /* the threads had nothing to do */
#define CONSUMER_WINDOWS 3 /* consumer-bound windows before a step down */

static int64_t default_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    int64_t ram = pages > 0 && size > 0 ? (int64_t)pages * size : 0;
    int64_t gib = (int64_t)1 << 30;
    return ram > 0 && ram / 8 < gib ? ram / 8 : gib;
}

void sl__autotune_init(sl__autotune *a, bool on, int fixed, int slots, int64_t budget)
{
    memset(a, 0, sizeof(*a));
    a->on = on;
    a->depth = on ? SL__AUTO_START : fixed;
    a->floor = on ? SL__AUTO_START : fixed;
    a->slots = slots;
    a->budget = budget > 0 ? budget : default_budget();
    a->high = a->depth;
    a->since_down = 1 << 20; /* no step down yet */
    a->reason = on ? "start" : "fixed prefetch_queue_depth";
}

int sl__autotune_limit(const sl__autotune *a)
{
    int limit = a->slots;
    if (a->slot_bytes > 0 && a->budget / a->slot_bytes < limit)
        limit = (int)(a->budget / a->slot_bytes);
    return limit < SL__AUTO_START ? SL__AUTO_START : limit;
}

int sl__autotune_decide(sl__autotune *a, const sl__autotune_window *w)
{
    if (!a->on)
        return a->depth;
    a->windows++;
    a->idle = w->idle;
    a->wait = w->wait;
    if (w->slot_bytes > a->slot_bytes)
        a->slot_bytes = w->slot_bytes;
    int limit = sl__autotune_limit(a);
    if (a->depth > limit) {
        a->depth = limit;
        a->downs++;
        a->reason = "memory budget";
        a->settle = 1;
        a->calm = 0;
        return a->depth;
    }
    if (a->since_down < 1 << 20)
        a->since_down++;
    if (a->settle > 0) {
        a->settle--;
        return a->depth;
    }
    bool waited = w->wait > WAIT_MIN;
    if (waited && w->idle > IDLE_MIN) {
        a->calm = 0;
        if (a->depth >= limit) {
            a->reason = a->depth >= a->slots ? "idle threads, at the most slots"
                                             : "idle threads, at the memory budget";
            return a->depth;
        }
        a->depth++;
        a->ups++;
        if (a->depth > a->high)
            a->high = a->depth;
        if (a->since_down <= 2) /* it just went down and had to come back: stay here */
            a->floor = a->depth;
        a->settle = 1;
        a->reason = "threads idle while the consumer waited";
        return a->depth;
    }
    if (!waited && w->n > 0 && w->ready == w->n) {
        a->reason = "the consumer is the bottleneck";
        if (++a->calm >= CONSUMER_WINDOWS && a->depth > a->floor) {
            a->depth--;
            a->downs++;
            a->calm = 0;
            a->settle = 1;
            a->since_down = 0;
        }
        return a->depth;
    }
    a->calm = 0;
    a->reason = waited ? "threads busy while the consumer waited" : "balanced";
    return a->depth;
}

/* Host bytes of the slot's own output storage (what one more iteration ahead costs). */
static int64_t slot_bytes(const sl_pipeline *p, const sl__slot *slot)
{
    int64_t bytes = 0;
    for (int j = 0; j < p->plan->n; j++) {
        const sl__pnode *pn = &p->plan->nodes[j];
        for (int o = 0; pn->stage == SL__STAGE_CPU && o < pn->nout; o++) {
            if (!p->istores[j].stored[o])
                bytes += (int64_t)slot->nodes[j].outs[o].bytes_cap;
        }
    }
    return bytes;
}

void sl__autotune_shared_locked(sl_pipeline *p, sl__slot *slot, int64_t waited_ns, bool ready)
{
    SL__ASSERT_LOCKED(p);
    sl__autotune *a = &p->tune;
    if (!a->on)
        return;
    int64_t now = sl__now_ns(), idle = sl__tpool_idle_ns(p->pool);
    if (a->win_n == 0) { /* the first delivery opens the first window */
        a->win_start = now;
        a->win_idle = idle;
        a->win_n = 1;
        return;
    }
    a->win_wait += waited_ns;
    a->win_ready += ready;
    int64_t bytes = slot_bytes(p, slot);
    if (bytes > a->win_bytes)
        a->win_bytes = bytes;
    if (a->win_n++ < SL__AUTO_WINDOW)
        return;
    /* the window's measurements: the deliveries after the one that opened it */
    double span = (double)(now - a->win_start);
    sl__autotune_window w = {
        .idle = span > 0
                    ? (double)(idle - a->win_idle) / (span * (double)sl__tpool_threads(p->pool))
                    : 0,
        .wait = span > 0 ? (double)a->win_wait / span : 0,
        .ready = a->win_ready,
        .n = SL__AUTO_WINDOW,
        .slot_bytes = a->win_bytes,
    };
    if (a->inject) /* tests: a synthetic window instead of the measured one */
        a->inject(a->inject_user, &w);
    /* this delivery closes the window and opens the next */
    a->win_n = 1;
    a->win_start = now;
    a->win_idle = idle;
    a->win_wait = 0;
    a->win_ready = 0;
    a->win_bytes = 0;
    int before = a->depth;
    sl__autotune_decide(a, &w);
    if (a->depth != before)
        a->history[a->nhistory++ % SL__AUTO_HISTORY] =
            (sl__autotune_change){.iteration = slot->iteration, .depth = a->depth};
    if (a->depth > before) { /* more ahead now: schedule and start them */
        int64_t want = p->runs - 1 + a->depth;
        if (p->scheduled < want)
            p->scheduled = want;
        sl__exec_start_frames_locked(p);
    }
}

sl_status sl_pipeline_prefetch_stats(const sl_pipeline *p, sl_prefetch_stats *s)
{
    if (!p || !s)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_prefetch_stats: p or s is NULL");
    memset(s, 0, sizeof(*s));
    if (!p->built)
        return sl__last_error_set(SL_EMISUSE, "sl_pipeline_prefetch_stats: not built");
    sl__exec_lock(p);
    const sl__autotune *a = &p->tune;
    s->autotune = a->on;
    s->depth = a->depth;
    s->depth_limit = a->on ? sl__autotune_limit(a) : a->depth;
    s->num_threads = p->opt.num_threads;
    s->iteration_bytes = a->slot_bytes;
    s->budget_bytes = a->on ? a->budget : 0;
    s->increases = a->ups;
    s->decreases = a->downs;
    s->windows = a->windows;
    s->idle = a->idle;
    s->consumer_wait = a->wait;
    snprintf(s->reason, sizeof s->reason, "%s", a->reason ? a->reason : "");
    s->nchanges = a->nhistory < SL__AUTO_HISTORY ? (int)a->nhistory : SL__AUTO_HISTORY;
    for (int k = 0; k < s->nchanges; k++) {
        const sl__autotune_change *c =
            &a->history[(a->nhistory - s->nchanges + k) % SL__AUTO_HISTORY];
        s->change_iteration[k] = c->iteration;
        s->change_depth[k] = c->depth;
    }
    sl__exec_unlock(p);
    return SL_OK;
}
