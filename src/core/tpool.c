/* src/core/tpool.c: the worker thread pool.
 *
 * Exports sl__tpool_*: N threads take tasks from one binary heap ordered by (prio, seq) under one
 * mutex. Tasks never block on each other: continuation work is submitted by the task that
 * finishes last. Destroy: queued tasks are dropped, running ones finish, threads are joined.
 * A pool of zero threads only queues: its owner takes the tasks (sl__tpool_take) and runs them
 * on its own thread (num_threads 0, src/exec/pipeline.c).
 */
#include <string.h>

#include "core/core.h"

struct sl__tpool {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled when tasks arrive or on stop */
    sl__task *heap;    /* (mu) binary min-heap by (prio, seq) */
    int len, cap;      /* (mu) */
    uint64_t next_seq; /* (mu) */
    bool stop;         /* (mu) */
    /* (mu) the workers' idle clock: waits ended so far, and the waiting workers with the sum
     * of their waits' starts (sl__tpool_idle_ns adds the waits under way) */
    int64_t idle_ns, idle_since;
    int nidle;
    int nthreads;
    pthread_t *threads;
};

typedef struct worker_arg {
    sl__tpool *pool;
    int index;
} worker_arg;

static bool before(const sl__task *a, const sl__task *b)
{
    return a->prio < b->prio || (a->prio == b->prio && a->seq < b->seq);
}

static void heap_push(sl__tpool *p, sl__task t)
{
    int i = p->len++;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!before(&t, &p->heap[parent]))
            break;
        p->heap[i] = p->heap[parent];
        i = parent;
    }
    p->heap[i] = t;
}

static sl__task heap_pop(sl__tpool *p)
{
    sl__task top = p->heap[0], last = p->heap[--p->len];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= p->len)
            break;
        if (c + 1 < p->len && before(&p->heap[c + 1], &p->heap[c]))
            c++;
        if (!before(&p->heap[c], &last))
            break;
        p->heap[i] = p->heap[c];
        i = c;
    }
    if (p->len > 0)
        p->heap[i] = last;
    return top;
}

static void *worker_main(void *arg)
{
    worker_arg wa = *(worker_arg *)arg;
    sl__tpool *p = wa.pool;
    sl__free(arg);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (!p->stop && p->len == 0) {
            int64_t t0 = sl__now_ns();
            p->nidle++;
            p->idle_since += t0;
            while (!p->stop && p->len == 0)
                pthread_cond_wait(&p->cv, &p->mu);
            p->nidle--;
            p->idle_since -= t0;
            p->idle_ns += sl__now_ns() - t0;
        }
        if (p->stop)
            break;
        sl__task t = heap_pop(p);
        pthread_mutex_unlock(&p->mu);
        t.fn(t.arg, t.i, wa.index);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Starts n workers; p->nthreads counts those running, so destroy joins exactly those. */
static sl_status start_threads(sl__tpool *p, int n)
{
    for (int i = 0; i < n; i++) {
        worker_arg *wa = sl__malloc(sizeof(*wa));
        if (!wa)
            return SL_ENOMEM;
        wa->pool = p;
        wa->index = i;
        if (pthread_create(&p->threads[i], NULL, worker_main, wa) != 0) {
            sl__free(wa);
            return SL_ENOMEM;
        }
        p->nthreads = i + 1;
    }
    return SL_OK;
}

sl_status sl__tpool_create(int threads, sl__tpool **out)
{
    *out = NULL;
    if (threads < 0)
        threads = 0;
    sl__tpool *p = sl__calloc(1, sizeof(*p));
    if (!p)
        return SL_ENOMEM;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threads = sl__calloc((size_t)(threads > 0 ? threads : 1), sizeof(pthread_t));
    p->cap = 256;
    p->heap = sl__malloc((size_t)p->cap * sizeof(sl__task));
    if (!p->threads || !p->heap || start_threads(p, threads) != SL_OK) {
        sl__tpool_destroy(p);
        return SL_ENOMEM;
    }
    *out = p;
    return SL_OK;
}

static sl_status grow(sl__tpool *p, int need)
{
    if (p->len + need <= p->cap)
        return SL_OK;
    int cap = p->cap;
    while (cap < p->len + need)
        cap *= 2;
    sl__task *h = sl__realloc(p->heap, (size_t)cap * sizeof(sl__task));
    if (!h)
        return SL_ENOMEM;
    p->heap = h;
    p->cap = cap;
    return SL_OK;
}

sl_status sl__tpool_submit(sl__tpool *p, const sl__task *tasks, int n)
{
    pthread_mutex_lock(&p->mu);
    sl_status st = p->stop ? SL_ECANCELED : grow(p, n);
    if (st == SL_OK) {
        for (int i = 0; i < n; i++) {
            sl__task t = tasks[i];
            t.seq = p->next_seq++;
            heap_push(p, t);
        }
        if (n == 1)
            pthread_cond_signal(&p->cv);
        else if (n > 1)
            pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return st;
}

bool sl__tpool_take(sl__tpool *p, sl__task *out)
{
    pthread_mutex_lock(&p->mu);
    bool any = !p->stop && p->len > 0;
    if (any)
        *out = heap_pop(p);
    pthread_mutex_unlock(&p->mu);
    return any;
}

int64_t sl__tpool_idle_ns(sl__tpool *p)
{
    pthread_mutex_lock(&p->mu);
    int64_t idle = p->idle_ns + (int64_t)p->nidle * sl__now_ns() - p->idle_since;
    pthread_mutex_unlock(&p->mu);
    return idle;
}

int sl__tpool_threads(const sl__tpool *p)
{
    return p->nthreads;
}

void sl__tpool_destroy(sl__tpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    p->len = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    sl__free(p->heap);
    sl__free(p->threads);
    sl__free(p);
}
