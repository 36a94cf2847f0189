/* tests/c/pipeutil.c: see pipeutil.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "pipeutil.h"

const tu_opts tu_default_opts = {.batch_size = 20, .num_threads = 2, .prefetch = 2, .seed = 42};

sl_pipeline *tu_make(sl_graph *g, const tu_opts *op, sl_status *status)
{
    sl_pipeline_options o;
    sl_pipeline *p = NULL;
    sl_pipeline_options_init(&o);
    o.batch_size = op->batch_size;
    o.num_threads = op->num_threads;
    o.prefetch_queue_depth = op->prefetch;
    o.seed = op->seed;
    if (sl_pipeline_create(g, &o, &p) != SL_OK)
        fail_msg("create: %s", sl_last_error());
    sl_graph_destroy(g);
    *status = sl_pipeline_build(p);
    return p;
}

sl_pipeline *tu_make_ok(sl_graph *g, const tu_opts *op)
{
    sl_status st;
    sl_pipeline *p = tu_make(g, op, &st);
    if (st != SL_OK)
        fail_msg("build: %s: %s", sl_status_name(st), sl_pipeline_error(p));
    return p;
}

void tu_run_ok(sl_pipeline *p)
{
    sl_status st = sl_pipeline_run(p);
    if (st != SL_OK)
        fail_msg("run: %s: %s", sl_status_name(st), sl_pipeline_error(p));
}

sl_graph *tu_one_node(const char *op)
{
    sl_graph *g = NULL;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    assert_int_equal(sl_graph_add(g, op, "r", NULL), SL_OK);
    assert_int_equal(sl_graph_output(g, "r"), SL_OK);
    return g;
}
