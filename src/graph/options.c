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
#name, offsetof(sl_pipeline_options, name), wide, sparse, NULL, false, false, 0            \
    }
/* A number that may also be "auto" (the value auto_v). */
#define OPT_AUTO(name, wide, sparse, auto_v)                                                       \
    {                                                                                              \
#name, offsetof(sl_pipeline_options, name), wide, sparse, NULL, false, true, auto_v        \
    }
#define OPT_NAMED(name, sparse, names)                                                             \
    {                                                                                              \
#name, offsetof(sl_pipeline_options, name), false, sparse, names, false, false, 0          \
    }

#define OPT_STR(name)                                                                              \
    {                                                                                              \
#name, offsetof(sl_pipeline_options, name), false, true, NULL, true, false, 0              \
    }

/* sl_bad_sample's values by name, in enum order. */
static const char *const bad_sample_names[] = {"raise", "skip", "replace", NULL};

const sl__option sl__options[] = {
    OPT(batch_size, false, false),
    OPT_AUTO(num_threads, false, false, SL_NUM_THREADS_AUTO),
    OPT_AUTO(prefetch_queue_depth, false, false, SL_PREFETCH_AUTO),
    OPT(seed, true, false),
    OPT_AUTO(device_id, false, false, SL_DEVICE_ID_AUTO),
    OPT(fuse_samples, false, true),
    OPT(cpu_queue_depth, false, true),
    OPT(gpu_queue_depth, false, true),
    OPT(max_held_bytes, true, true),
    OPT(max_sample_bytes, true, true),
    OPT_NAMED(on_bad_sample, true, bad_sample_names),
    OPT(max_bad_samples, true, true),
    OPT(prefetch_max_bytes, true, true),
    OPT(cache_bytes, true, true),
    OPT_STR(cache_file),
    OPT(enable_checkpointing, false, true),
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

const char *sl__option_str(const sl_pipeline_options *o, const sl__option *opt)
{
    return opt->str ? (const char *)o + opt->offset : NULL;
}

sl_status sl__option_set_str(sl_pipeline_options *o, const sl__option *opt, const char *v,
                             char *err, size_t errlen)
{
    size_t n = strlen(v);
    if (!opt->str || n >= SL_CACHE_FILE_MAX) {
        snprintf(err, errlen, "\"%s\" is %s", opt->key,
                 opt->str ? "too long (at most 1023 bytes)" : "not a string option");
        return SL_EINVAL;
    }
    memcpy((char *)o + opt->offset, v, n + 1);
    return SL_OK;
}

int64_t sl__option_get(const sl_pipeline_options *o, const sl__option *opt)
{
    if (opt->str) /* a string: "set or not", for the writers' default check */
        return *((const char *)o + opt->offset) != '\0';
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

sl_status sl__option_parse(const sl__option *opt, const char *name, int64_t *v, char *err,
                           size_t errlen)
{
    for (int k = 0; opt->names && opt->names[k]; k++) {
        if (strcmp(opt->names[k], name) == 0) {
            *v = k;
            return SL_OK;
        }
    }
    int n = snprintf(err, errlen, "\"%s\" must be one of", opt->key);
    for (int k = 0; opt->names && opt->names[k] && n >= 0 && (size_t)n < errlen; k++)
        n += snprintf(err + n, errlen - (size_t)n, "%s \"%s\"", k ? "," : "", opt->names[k]);
    if (n >= 0 && (size_t)n < errlen)
        snprintf(err + n, errlen - (size_t)n, ", got \"%s\"", name);
    return SL_EINVAL;
}

const char *sl__option_name(const sl__option *opt, int64_t v)
{
    for (int k = 0; opt->names && opt->names[k]; k++) {
        if (k == v)
            return opt->names[k];
    }
    return NULL;
}
