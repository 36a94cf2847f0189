/* cli/run.c: `sluice run SPEC.json [options]`: build the pipeline a JSON spec describes, run
 * it for some iterations (default: one epoch of the first reader) and report the throughput.
 *
 * Order of settings: the spec's "pipeline" object, then --batch/--threads/--prefetch/--seed;
 * the spec's node arguments, then --set and --root. A build error ends the run (exit 1). An
 * iteration that fails on its data (a corrupt file) is reported as a warning and the run goes
 * on; the exit status is then 1 after the summary. Any other failure (out of memory, a worker
 * died) ends the loop at once. The progress bar goes to stderr, only on a terminal; the summary
 * and --stats go to stdout.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sluice/sluice.h"

#include "cli.h"

#define MAX_WARNINGS 20 /* failed iterations reported one by one; the rest are counted */
#define BAR_WIDTH 30
#define BAR_PERIOD 0.1 /* s between progress bar updates */

typedef struct run_args {
    const char *spec;
    long iters, epochs;            /* 0: not given */
    long batch, threads, prefetch; /* 0: not given */
    long seed;
    bool has_seed;
    const char **sets; /* "NODE.ARG=VALUE", borrowed from argv */
    int nsets;
    const char *root;
    const char *trace;
    const char *checkpoint; /* --checkpoint FILE: written after the run (and every N) */
    long checkpoint_every;  /* --checkpoint-every N: 0, only at the end */
    const char *resume;     /* --resume FILE: a checkpoint to continue from */
    bool stats, quiet;
} run_args;

typedef struct tally {
    double t0, t_built, t_first, t_end; /* s, monotonic: build start, built, first output, end */
    long total, done, failed;           /* iterations */
    int batch;
    int64_t seed;      /* the pipeline's, drawn at create when the spec and --seed give none */
    bool bar;          /* progress bar shown */
    double last_drawn; /* s */
} tally;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- command line --------------------------------------------------------------------------- */

static int usage_error(const char *fmt, ...) SL_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sluice: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n\n", stderr);
    cli_usage(stderr);
    return CLI_USAGE;
}

static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* True when argument a is option `name`, alone or as "name=value". */
static bool is_opt(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* The value of the option at argv[*i] ("--x=V" or "--x V"); NULL when it has none. */
static const char *opt_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq)
        return eq + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Checks the form NODE.ARG=VALUE (the node name may hold dots; the argument's may not). */
static bool valid_set(const char *s)
{
    const char *eq = strchr(s, '='), *dot = NULL;
    for (const char *c = s; eq && c < eq; c++)
        dot = *c == '.' ? c : dot;
    return eq && dot && dot > s && dot + 1 < eq;
}

/* Parses one numeric option if argv[*i] is one. Returns: -1 when it is not, else the status. */
static int numeric_opt(int argc, char **argv, int *i, run_args *ra)
{
    const struct {
        const char *name;
        long *dst, min, max;
    } nums[] = {{"--iters", &ra->iters, 1, LONG_MAX},
                {"--epochs", &ra->epochs, 1, 1000000},
                {"--batch", &ra->batch, 1, INT_MAX},
                {"--threads", &ra->threads, 1, 1024},
                {"--prefetch", &ra->prefetch, 1, 64},
                {"--seed", &ra->seed, LONG_MIN, LONG_MAX},
                {"--checkpoint-every", &ra->checkpoint_every, 1, LONG_MAX}};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        if (!is_opt(argv[*i], nums[k].name))
            continue;
        const char *v = opt_value(argc, argv, i);
        if (!v)
            return usage_error("%s needs a value", nums[k].name);
        /* --threads auto, --prefetch auto: the options' "auto" (-1 here, 0 being "not given") */
        if (strcmp(v, "auto") == 0 &&
            (nums[k].dst == &ra->threads || nums[k].dst == &ra->prefetch)) {
            *nums[k].dst = -1;
            return CLI_OK;
        }
        if (!parse_long(v, nums[k].min, nums[k].max, nums[k].dst))
            return usage_error("%s: expected an integer in [%ld, %ld], got \"%s\"", nums[k].name,
                               nums[k].min, nums[k].max, v);
        ra->has_seed |= nums[k].dst == &ra->seed;
        return CLI_OK;
    }
    return -1;
}

/* Parses one string-valued option (--set, --root, --trace). Returns: -1 when argv[*i] is not
 * one, else the status. */
static int string_opt(int argc, char **argv, int *i, run_args *ra)
{
    const char *name = argv[*i];
    bool set = is_opt(name, "--set"), root = is_opt(name, "--root"),
         trace = is_opt(name, "--trace"), ckpt = is_opt(name, "--checkpoint"),
         resume = is_opt(name, "--resume");
    if (!set && !root && !trace && !ckpt && !resume)
        return -1;
    const char *v = opt_value(argc, argv, i);
    if (!v)
        return usage_error("%.*s needs a value", (int)strcspn(name, "="), name);
    if (set && !valid_set(v))
        return usage_error("--set %s: expected NODE.ARG=VALUE", v);
    if (set)
        ra->sets[ra->nsets++] = v;
    else if (root)
        ra->root = v;
    else if (ckpt)
        ra->checkpoint = v;
    else if (resume)
        ra->resume = v;
    else
        ra->trace = v;
    return CLI_OK;
}

static int parse_args(int argc, char **argv, run_args *ra)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (ra->spec)
                return usage_error("run takes one spec file, got \"%s\" and \"%s\"", ra->spec, a);
            ra->spec = a;
        } else if (strcmp(a, "--stats") == 0) {
            ra->stats = true;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            ra->quiet = true;
        } else if ((rc = numeric_opt(argc, argv, &i, ra)) >= 0 ||
                   (rc = string_opt(argc, argv, &i, ra)) >= 0) {
            if (rc != CLI_OK)
                return rc;
        } else {
            return usage_error("run: unknown option \"%s\"", a);
        }
    }
    if (!ra->spec)
        return usage_error("run needs a spec file: sluice run SPEC.json");
    if (ra->iters && ra->epochs)
        return usage_error("--iters and --epochs exclude each other");
    if (ra->checkpoint_every && !ra->checkpoint)
        return usage_error("--checkpoint-every needs --checkpoint FILE");
    return CLI_OK;
}

/* ---- the spec ------------------------------------------------------------------------------- */

/* --set NODE.ARG=VALUE: VALUE is JSON; text that does not start like a JSON string, list or
 * object and does not parse is taken as a string (the shell has eaten its quotes). */
static int apply_set(sl_graph *g, const char *set)
{
    char node[256], arg[256];
    const char *eq = strchr(set, '='), *dot = eq;
    while (*dot != '.')
        dot--;
    snprintf(node, sizeof node, "%.*s", (int)(dot - set), set);
    snprintf(arg, sizeof arg, "%.*s", (int)(eq - dot - 1), dot + 1);
    const char *v = eq + 1;
    sl_status st = sl_graph_arg_json(g, node, arg, v);
    if (st == SL_EINVAL && !strchr("[{\"", v[0]))
        st = sl_graph_arg_str(g, node, arg, v);
    if (st != SL_OK) {
        fprintf(stderr, "sluice: --set %s: %s\n", set, sl_last_error());
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* --root DIR: file_root of every readers.file node (found in the graph written as JSON, so that
 * nodes the spec left unnamed count too). */
static int apply_root(sl_graph *g, const char *root)
{
    char *text = NULL;
    json_t *doc = NULL, *node;
    int found = 0, rc = CLI_OK;
    size_t i;
    if (sl_graph_to_json(g, &text) != SL_OK || !(doc = json_loads(text, 0, NULL))) {
        fprintf(stderr, "sluice: --root: %s\n", text ? "cannot read the graph" : sl_last_error());
        rc = CLI_FAIL;
    }
    json_array_foreach(json_object_get(doc, "nodes"), i, node)
    {
        const char *op = json_string_value(json_object_get(node, "op"));
        const char *name = json_string_value(json_object_get(node, "name"));
        if (rc != CLI_OK || !op || !name || strcmp(op, "readers.file") != 0)
            continue;
        found++;
        if (sl_graph_arg_str(g, name, "file_root", root) != SL_OK) {
            fprintf(stderr, "sluice: --root: %s\n", sl_last_error());
            rc = CLI_FAIL;
        }
    }
    if (rc == CLI_OK && !found) {
        fprintf(stderr, "sluice: --root: the spec has no readers.file node\n");
        rc = CLI_FAIL;
    }
    json_decref(doc);
    free(text);
    return rc;
}

/* Options and arguments after the command line's overrides. */
static int apply_overrides(const run_args *ra, sl_graph *g, sl_pipeline_options *o)
{
    if (ra->batch)
        o->batch_size = (int)ra->batch;
    if (ra->threads)
        o->num_threads = ra->threads < 0 ? SL_NUM_THREADS_AUTO : (int)ra->threads;
    if (ra->prefetch)
        o->prefetch_queue_depth = ra->prefetch < 0 ? SL_PREFETCH_AUTO : (int)ra->prefetch;
    if (ra->has_seed)
        o->seed = ra->seed;
    for (int i = 0; i < ra->nsets; i++) {
        if (apply_set(g, ra->sets[i]) != CLI_OK)
            return CLI_FAIL;
    }
    return ra->root ? apply_root(g, ra->root) : CLI_OK;
}

static int load_spec(const run_args *ra, sl_graph **g, sl_pipeline_options *o)
{
    int rc = cli_spec_load(ra->spec, g, o);
    return rc == CLI_OK ? apply_overrides(ra, *g, o) : rc;
}

/* ---- running -------------------------------------------------------------------------------- */

/* Images per second after the first batch (its latency is "time to first batch"). */
static double rate(const tally *t, double now)
{
    long good = t->done - t->failed; /* failed iterations delivered no images */
    if (t->done >= 2 && good >= 2 && now > t->t_first)
        return (double)(good - 1) * t->batch / (now - t->t_first);
    if (t->done == 1 && now > t->t_built)
        return (double)t->batch / (now - t->t_built);
    return 0.0;
}

/* Redraws the progress bar, at most every BAR_PERIOD unless `final`. */
static void draw(tally *t, bool final)
{
    double now = now_s();
    if (!t->bar || (!final && now - t->last_drawn < BAR_PERIOD))
        return;
    t->last_drawn = now;
    char bar[BAR_WIDTH + 1];
    int fill = t->total > 0 ? (int)((double)BAR_WIDTH * t->done / t->total) : BAR_WIDTH;
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(BAR_WIDTH - fill));
    bar[BAR_WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %ld/%ld iters  %.1f img/s\033[K%s", bar, t->done, t->total,
            rate(t, now), final ? "\n" : "");
    fflush(stderr);
}

/* Reports a failed iteration. Returns: true when the run may go on (the data was at fault). */
static bool report_failure(const sl_pipeline *p, sl_status st, tally *t)
{
    bool data = st == SL_ECORRUPT || st == SL_EIO || st == SL_EINVAL || st == SL_EUNSUPPORTED ||
                st == SL_ENOTFOUND;
    t->failed++;
    if (t->bar)
        fputs("\r\033[K", stderr);
    t->last_drawn = 0.0;
    if (!data)
        fprintf(stderr, "sluice: error: %s\n", sl_pipeline_error(p));
    else if (t->failed <= MAX_WARNINGS)
        fprintf(stderr, "sluice: warning: %s\n", sl_pipeline_error(p));
    else if (t->failed == MAX_WARNINGS + 1)
        fprintf(stderr, "sluice: warning: further failed iterations are counted, not shown\n");
    return data;
}

/* --checkpoint FILE: the pipeline's checkpoint, written to FILE.tmp and renamed over FILE, so
 * FILE is always a whole checkpoint even when the run is killed while writing. */
static int write_checkpoint(sl_pipeline *p, const char *path)
{
    char *text = NULL, tmp[4096];
    size_t len = 0;
    if (sl_pipeline_checkpoint(p, &text, &len) != SL_OK) {
        fprintf(stderr, "sluice: --checkpoint: %s\n", sl_pipeline_error(p));
        return CLI_FAIL;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    bool ok = f && fwrite(text, 1, len, f) == len;
    ok = f && fclose(f) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        fprintf(stderr, "sluice: --checkpoint: cannot write \"%s\": %s\n", path, strerror(errno));
    sl_checkpoint_free(text);
    return ok ? CLI_OK : CLI_FAIL;
}

static int run_loop(sl_pipeline *p, tally *t, const run_args *ra)
{
    int rc = CLI_OK;
    while (t->done < t->total) {
        sl_status st = sl_pipeline_run(p);
        if (++t->done == 1)
            t->t_first = now_s();
        if (ra->checkpoint_every && t->done % ra->checkpoint_every == 0 &&
            write_checkpoint(p, ra->checkpoint) != CLI_OK) {
            rc = CLI_FAIL;
            break;
        }
        if (st != SL_OK && !report_failure(p, st, t)) {
            rc = CLI_FAIL;
            break;
        }
        draw(t, false);
    }
    t->t_end = now_s();
    if (t->total > 0)
        draw(t, true);
    return rc;
}

static void print_summary(const tally *t)
{
    printf("iterations           %ld\n", t->done);
    if (t->failed)
        printf("failed iterations    %ld\n", t->failed);
    printf("images               %ld (batch size %d)\n", (t->done - t->failed) * t->batch,
           t->batch);
    printf("seconds              %.3f (build %.3f)\n", t->t_end - t->t0, t->t_built - t->t0);
    if (t->done > 0)
        printf("time to first batch  %.3f s\n", t->t_first - t->t0);
    printf("images/s             %.1f%s\n", rate(t, t->t_end),
           t->done >= 2 ? " (after the first batch)" : "");
    printf("seed                 %lld\n", (long long)t->seed); /* --seed it to reproduce */
}

static void print_stats(const sl_pipeline *p)
{
    int n = sl_pipeline_num_nodes(p), wn = 4, wo = 2;
    double busy = 0.0;
    sl_node_stats s;
    for (int i = 0; i < n; i++) {
        if (sl_pipeline_node_stats(p, i, &s) != SL_OK)
            continue;
        busy += s.busy_ms;
        wn = (int)strlen(s.name) > wn ? (int)strlen(s.name) : wn;
        wo = (int)strlen(s.op) > wo ? (int)strlen(s.op) : wo;
    }
    printf("\n%-*s  %-*s  %-6s  %10s  %12s  %12s  %6s  %10s  %s\n", wn, "NODE", wo, "OP", "DEVICE",
           "ITERATIONS", "TOTAL MS", "BUSY MS", "BUSY %", "GPU MS", "FUSED INTO");
    for (int i = 0; i < n; i++) {
        if (sl_pipeline_node_stats(p, i, &s) != SL_OK)
            continue;
        printf("%-*s  %-*s  %-6s  %10lld  %12.2f  %12.2f  %6.1f  %10.2f  %s\n", wn, s.name, wo,
               s.op, s.device ? s.device : "", (long long)s.iterations, s.total_ms, s.busy_ms,
               busy > 0.0 ? 100.0 * s.busy_ms / busy : 0.0, s.gpu_ms,
               s.fused_into ? s.fused_into : "-");
    }
    sl_prefetch_stats ps; /* what prefetch_queue_depth "auto" decided */
    if (sl_pipeline_prefetch_stats(p, &ps) != SL_OK)
        return;
    printf("\nprefetch             depth %d%s (limit %d), %d threads, %lld bytes per iteration, "
           "budget %lld\n",
           ps.depth, ps.autotune ? " auto" : " fixed", ps.depth_limit, ps.num_threads,
           (long long)ps.iteration_bytes, (long long)ps.budget_bytes);
    if (!ps.autotune)
        return;
    printf("autotune             %lld windows, %lld up, %lld down; last window: threads %.1f %% "
           "idle, consumer waited %.1f %%; %s\n",
           (long long)ps.windows, (long long)ps.increases, (long long)ps.decreases, 100.0 * ps.idle,
           100.0 * ps.consumer_wait, ps.reason);
    printf("autotune changes    ");
    for (int k = 0; k < ps.nchanges; k++)
        printf(" %lld:%d", (long long)ps.change_iteration[k], ps.change_depth[k]);
    printf("%s\n", ps.nchanges ? " (iteration:depth)" : " none");
    sl_cache_stats c;
    if (sl_pipeline_cache_stats(p, &c) == SL_OK && c.capacity > 0) /* the sample cache */
        printf("\ncache: %d nodes, %lld hits, %lld misses, %lld samples held, %lld of %lld "
               "bytes%s\n",
               c.nodes, (long long)c.hits, (long long)c.misses, (long long)c.entries,
               (long long)c.bytes, (long long)c.capacity, c.full ? " (full)" : "");
}

static int write_trace(const sl_pipeline *p, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "sluice: cannot write \"%s\": %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    sl_status st = sl_pipeline_write_trace(p, f);
    const char *why = st != SL_OK ? sl_pipeline_error(p) : NULL;
    if (fclose(f) != 0 && st == SL_OK) {
        st = SL_EIO;
        why = strerror(errno);
    }
    if (st != SL_OK) {
        fprintf(stderr, "sluice: --trace %s: %s\n", path, why && *why ? why : sl_last_error());
        return CLI_FAIL;
    }
    printf("trace                %s\n", path);
    return CLI_OK;
}

/* Iterations to run: --iters, or ceil(epoch size / batch size) x --epochs. -1: no reader. */
static long count_iterations(const sl_pipeline *p, const run_args *ra, int batch)
{
    if (ra->iters)
        return ra->iters;
    int64_t epoch = sl_pipeline_epoch_size(p, NULL);
    if (epoch < 0)
        return -1;
    return (long)((epoch + batch - 1) / batch) * (ra->epochs ? ra->epochs : 1);
}

static int build(const sl_graph *g, const sl_pipeline_options *o, sl_pipeline **p, tally *t)
{
    t->t0 = now_s();
    if (sl_pipeline_create(g, o, p) != SL_OK) {
        fprintf(stderr, "sluice: %s\n", sl_last_error());
        return CLI_FAIL;
    }
    if (sl_pipeline_build(*p) != SL_OK) {
        fprintf(stderr, "sluice: %s\n", sl_pipeline_error(*p));
        return CLI_FAIL;
    }
    t->t_built = now_s();
    t->seed = sl_pipeline_seed(*p);
    return CLI_OK;
}

static int execute(const run_args *ra, const sl_graph *g, const sl_pipeline_options *o)
{
    sl_pipeline *p = NULL;
    tally t = {.batch = o->batch_size, .bar = !ra->quiet && isatty(STDERR_FILENO)};
    int rc = build(g, o, &p, &t);
    if (rc == CLI_OK && (t.total = count_iterations(p, ra, o->batch_size)) < 0) {
        fprintf(stderr, "sluice: the pipeline has no reader to take an epoch from; "
                        "give --iters N\n");
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK) {
        rc = run_loop(p, &t, ra);
        if (rc == CLI_OK && ra->checkpoint && write_checkpoint(p, ra->checkpoint) != CLI_OK)
            rc = CLI_FAIL;
        print_summary(&t);
        if (ra->checkpoint)
            printf("checkpoint           %s (iteration %lld)\n", ra->checkpoint,
                   (long long)sl_pipeline_iteration(p) + 1);
        if (ra->stats)
            print_stats(p);
        if (ra->trace && write_trace(p, ra->trace) != CLI_OK)
            rc = CLI_FAIL;
        if (t.failed)
            rc = CLI_FAIL;
    }
    sl_pipeline_destroy(p);
    return rc;
}

int cli_run(int argc, char **argv)
{
    run_args ra = {.sets = malloc(sizeof(char *) * (size_t)(argc + 1))};
    sl_graph *g = NULL;
    sl_pipeline_options o;
    char *resume = NULL;
    int rc = ra.sets ? parse_args(argc, argv, &ra) : CLI_FAIL;
    if (rc == CLI_OK)
        rc = load_spec(&ra, &g, &o);
    if (rc == CLI_OK && ra.resume && !(resume = cli_read_file(ra.resume)))
        rc = CLI_FAIL;
    o.checkpoint = resume;
    if (ra.checkpoint)
        o.enable_checkpointing = 1;
    if (rc == CLI_OK)
        rc = execute(&ra, g, &o);
    sl_graph_destroy(g);
    free(resume);
    free(ra.sets);
    return rc;
}
