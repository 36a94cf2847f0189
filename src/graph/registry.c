/* src/graph/registry.c: the built-in operators (from src/ops/ops.def) and their schemas.
 *
 * Exports sl_registry_*, sl_op_*, sl_arg_alias_message, sl__registry_default and
 * sl__op_arg_resolve (what an argument name stands for, deprecated aliases included: the rule
 * sl__node_check applies for every front end). The table is static; the sorted index
 * (pthread_once) and the parsed defaults (on first use, again after running out of memory) are
 * made once and never change afterwards, so reading the registry from any thread is safe. A
 * default that does not parse or coerce is a bug in an operator file; the registry-wide test
 * catches it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

#define SL_OP(c_name) extern const sl_op_def sl_op_##c_name;
#include "ops/ops.def"
#undef SL_OP

static const sl_op_def *const table[] = {
#define SL_OP(c_name) &sl_op_##c_name,
#include "ops/ops.def"
#undef SL_OP
};
#define NOPS ((int)(sizeof(table) / sizeof(table[0])))

/* Arguments every operator has, after its own. */
static const sl_arg_def common_args[] = {
    {.name = "preserve",
     .type = SL_ARG_BOOL,
     .def = "false",
     .doc = "Keep the node even when none of its outputs is used."},
};
#define NCOMMON ((int)(sizeof(common_args) / sizeof(common_args[0])))

static const sl_op_def *sorted[NOPS];
static pthread_once_t once = PTHREAD_ONCE_INIT; /* sorts `sorted` (allocates nothing) */

/* The parsed defaults, made on first use. Parsing allocates, and an allocation may fail: then
 * nothing is kept and the next call tries again, so a transient out-of-memory never leaves an
 * argument without its default for the rest of the process. `defaults_ready` is set (release)
 * once `defaults` is complete and never changes afterwards; readers check it (acquire). */
static sl__value *defaults[NOPS]; /* per op, sl_op_num_args values; by table index */
static atomic_bool defaults_ready;
static pthread_mutex_t defaults_mu = PTHREAD_MUTEX_INITIALIZER;

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(const sl_op_def *const *)a)->name, (*(const sl_op_def *const *)b)->name);
}

static int table_index(const sl_op_def *op)
{
    for (int i = 0; i < NOPS; i++) {
        if (table[i] == op)
            return i;
    }
    return -1;
}

static void init_once(void)
{
    memcpy(sorted, table, sizeof(table));
    qsort(sorted, NOPS, sizeof(sorted[0]), cmp_name);
}

static void free_defaults(void)
{
    for (int t = 0; t < NOPS; t++) {
        for (int a = 0; defaults[t] && a < sl_op_num_args(table[t]); a++)
            sl__value_fini(&defaults[t][a]);
        sl__free(defaults[t]);
        defaults[t] = NULL;
    }
}

/* Parses and coerces every default. A default text that does not parse or fit is a bug in an
 * operator file: that argument stays SL__V_NONE (the registry-wide test catches it). Returns
 * SL_ENOMEM, with nothing kept, when memory runs out. Needs defaults_mu. */
static sl_status parse_defaults(void)
{
    for (int t = 0; t < NOPS; t++) {
        int n = sl_op_num_args(table[t]);
        if (!(defaults[t] = sl__calloc((size_t)n, sizeof(sl__value))))
            goto nomem;
        for (int a = 0; a < n; a++) {
            const sl_arg_def *def = sl_op_arg(table[t], a);
            sl__value raw;
            char err[256];
            if (!def->def)
                continue;
            sl_status st = sl__value_parse_json(def->def, &raw, err, sizeof err);
            if (st == SL_OK) {
                st = sl__value_coerce(&raw, def, &defaults[t][a], err, sizeof err);
                sl__value_fini(&raw);
            }
            if (st == SL_ENOMEM)
                goto nomem;
        }
    }
    return SL_OK;
nomem:
    free_defaults();
    return SL_ENOMEM;
}

/* True once the defaults are parsed; false only when memory ran out (try again later). The
 * memory lives until exit (the registry is static). */
static bool need_defaults(void)
{
    if (atomic_load_explicit(&defaults_ready, memory_order_acquire))
        return true;
    pthread_mutex_lock(&defaults_mu);
    if (!atomic_load_explicit(&defaults_ready, memory_order_relaxed) && parse_defaults() == SL_OK)
        atomic_store_explicit(&defaults_ready, true, memory_order_release);
    pthread_mutex_unlock(&defaults_mu);
    return atomic_load_explicit(&defaults_ready, memory_order_acquire);
}

int sl_registry_count(void)
{
    return NOPS;
}

const sl_op_def *sl_registry_get(int i)
{
    pthread_once(&once, init_once);
    return i >= 0 && i < NOPS ? sorted[i] : NULL;
}

/* Binary search of the sorted index: every graph edit and build looks operators up by name,
 * and a linear scan of the table was a measurable part of building a small pipeline. */
const sl_op_def *sl_registry_find(const char *name)
{
    if (!name)
        return NULL;
    pthread_once(&once, init_once);
    int lo = 0, hi = NOPS - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(sorted[mid]->name, name);
        if (c == 0)
            return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int sl_op_num_args(const sl_op_def *op)
{
    return op ? op->num_args + NCOMMON : 0;
}

const sl_arg_def *sl_op_arg(const sl_op_def *op, int i)
{
    if (!op || i < 0 || i >= sl_op_num_args(op))
        return NULL;
    return i < op->num_args ? &op->args[i] : &common_args[i - op->num_args];
}

int sl_op_arg_index(const sl_op_def *op, const char *name)
{
    for (int i = 0; name && i < sl_op_num_args(op); i++) {
        if (strcmp(sl_op_arg(op, i)->name, name) == 0)
            return i;
    }
    return -1;
}

int sl_op_num_input_defs(const sl_op_def *op)
{
    if (!op || !op->inputs)
        return 0;
    if (op->max_inputs == SL_INPUTS_ANY)
        return op->min_inputs > 1 ? op->min_inputs : 1;
    return op->max_inputs;
}

const sl_arg_alias *sl_op_find_alias(const sl_op_def *op, const char *name)
{
    for (int i = 0; op && name && i < op->num_aliases; i++) {
        if (strcmp(op->aliases[i].name, name) == 0)
            return &op->aliases[i];
    }
    return NULL;
}

const char *sl_arg_alias_message(const sl_arg_alias *a, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return buf;
    if (!a)
        buf[0] = '\0';
    else if (a->msg)
        snprintf(buf, cap, "%s", a->msg);
    else if (a->renamed_to)
        snprintf(buf, cap,
                 "The argument ``%s`` is a deprecated alias for ``%s``. Use ``%s`` instead.",
                 a->name, a->renamed_to, a->renamed_to);
    else
        snprintf(buf, cap,
                 "The argument ``%s`` is no longer used and will be removed in a future release.",
                 a->name);
    return buf;
}

int sl__op_arg_resolve(const sl_op_def *op, const char *name, const sl_arg_alias **alias)
{
    int a = sl_op_arg_index(op, name);
    const sl_arg_alias *al = a < 0 ? sl_op_find_alias(op, name) : NULL;
    if (alias)
        *alias = al;
    if (!al)
        return a;
    return al->renamed_to ? sl_op_arg_index(op, al->renamed_to) : SL__ARG_IGNORED;
}

const char *sl_arg_type_name(sl_arg_type t)
{
    static const char *const names[] = {"bool",  "int",         "float",         "string",
                                        "dtype", "list of int", "list of float", "list of string"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

const sl__value *sl__registry_default(const sl_op_def *op, int i)
{
    static const sl__value none;
    int t = table_index(op);
    if (t < 0 || i < 0 || i >= sl_op_num_args(op))
        return &none;
    if (!need_defaults())
        return NULL;
    return &defaults[t][i];
}
