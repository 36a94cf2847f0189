/* tests/c/pipeutil.h: building and running small pipelines in tests (C test library,
 * pipeutil.c). Failures end the current cmocka test with the library's message. */
#ifndef SLUICE_TEST_PIPEUTIL_H
#define SLUICE_TEST_PIPEUTIL_H

#include <stdint.h>

#include "sluice/sluice.h"

typedef struct tu_opts {
    int batch_size, num_threads, prefetch;
    int64_t seed;
} tu_opts;

/* batch 20, 2 threads, prefetch 2, seed 42 */
extern const tu_opts tu_default_opts;

/* Builds a pipeline from g (destroyed here); *status receives the build result, the pipeline
 * is returned even when the build failed (for sl_pipeline_error). */
sl_pipeline *tu_make(sl_graph *g, const tu_opts *op, sl_status *status);
/* Same, failing the test when the build fails. */
sl_pipeline *tu_make_ok(sl_graph *g, const tu_opts *op);
/* sl_pipeline_run, failing the test on error. */
void tu_run_ok(sl_pipeline *p);
/* A graph with one node "r" of operator op as its only output. */
sl_graph *tu_one_node(const char *op);

#endif
