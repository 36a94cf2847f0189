/* src/graph/options.c: the pipeline options as data.
 *
 * Exports sl__options / sl__num_options and sl__option_find / _get / _set (graph.h): one entry
 * per field of sl_pipeline_options, so the JSON spec reader and writer (spec.c) and the Python
 * extension's keywords and dicts all go through one list, and an option added to pipeline.h is
 * added here once. Invariant: entries are in the order a spec writes them; keys are the spec
 * keys and Python's keyword names.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

#define OPT(name, wide, sparse)                                                                    \
    {                                                                                              \
#name, offsetof(sl_pipeline_options, name), wide, sparse                                   \
    }

const sl__option sl__options[] = {
    OPT(batch_size, false, false),
    OPT(num_threads, false, false),
    OPT(prefetch_queue_depth, false, false),
    OPT(seed, true, false),
    OPT(device_id, false, false),
    OPT(fuse_samples, false, true),
    OPT(cpu_queue_depth, false, true),
    OPT(gpu_queue_depth, false, true),
    OPT(max_held_bytes, true, true),
    OPT(max_sample_bytes, true, true),
};
const int sl__num_options = (int)(sizeof sl__options / sizeof sl__options[0]);

const sl__option *sl__option_find(const char *key)
{
    for (int k = 0; k < sl__num_options; k++) {
        if (strcmp(sl__options[k].key, key) == 0)
            return &sl__options[k];
    }
    return NULL;
}

int64_t sl__option_get(const sl_pipeline_options *o, const sl__option *opt)
{
    const char *field = (const char *)o + opt->offset;
    return opt->wide ? *(const int64_t *)(const void *)field : *(const int *)(const void *)field;
}

sl_status sl__option_set(sl_pipeline_options *o, const sl__option *opt, int64_t v, char *err,
                         size_t errlen)
{
    char *field = (char *)o + opt->offset;
    if (opt->wide) {
        *(int64_t *)(void *)field = v;
        return SL_OK;
    }
    if (v < INT_MIN || v > INT_MAX) {
        snprintf(err, errlen, "\"%s\" is out of range: %lld", opt->key, (long long)v);
        return SL_EINVAL;
    }
    *(int *)(void *)field = (int)v;
    return SL_OK;
}
