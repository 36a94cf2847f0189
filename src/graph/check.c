/* src/graph/check.c: the checks of one node that need no other node.
 *
 * Exports sl__node_check and sl__node_num_outputs (graph.h). The build (plan.c) runs it on every
 * node, and the Python extension on each node that fn.* or ops.* records, so an error found where
 * an operator is called reads exactly like the one the build, a JSON spec or the CLI reports: one
 * rule, in one place, for every front end. What needs the rest of the graph (references to other
 * nodes, placement, cycles, outputs) stays in plan.c. Argument names are resolved with
 * sl__op_arg_resolve: DALI's deprecated names (sl_op_def.aliases) count as the arguments they
 * rename, or are accepted and ignored.
 * Invariant: on success every argument of the schema is either set in pargs (the user's coerced
 * value, an argument input, or the default) or optional and unset; whatever pargs hold, success
 * or not, their owner frees with sl__value_fini.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

typedef struct check {
    const sl__gnode *n;
    sl__error *e;
    bool *type_error;
} check;

/* Records the error; `as_type`: what was given is of the wrong kind (Python's TypeError). */
static sl_status fail(const check *c, sl_status code, bool as_type, const char *fmt, ...)
    SL_PRINTF(4, 5);
static sl_status fail(const check *c, sl_status code, bool as_type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl__error_setv(c->e, code, c->n->op, c->n->name, -1, -1, NULL, fmt, ap);
    va_end(ap);
    if (c->type_error)
        *c->type_error = as_type;
    return code;
}

static sl_status check_ninputs(const check *c, const sl_op_def *op)
{
    int n = c->n->ninputs;
    bool any = op->max_inputs == SL_INPUTS_ANY; /* cat, stack: any number from min_inputs */
    if (n >= op->min_inputs && (any || n <= op->max_inputs))
        return SL_OK;
    if (any || op->min_inputs == op->max_inputs)
        return fail(c, SL_EINVAL, true, "expects %s%d input%s, got %d", any ? "at least " : "",
                    op->min_inputs, op->min_inputs == 1 ? "" : "s", n);
    return fail(c, SL_EINVAL, true, "expects %d to %d inputs, got %d", op->min_inputs,
                op->max_inputs, n);
}

/* One argument the user gave: known (its own name, or a deprecated alias: sl__op_arg_resolve),
 * an input where the schema accepts one, or a constant that coerces. Fills pa (when given). An
 * alias given with the argument it renames is refused; one sluice ignores is accepted as it is
 * (DALI ignores its value too). */
static sl_status check_arg(const check *c, const sl_op_def *op, const sl__garg *ga, sl__parg *pa)
{
    const sl_arg_alias *al;
    int a = sl__op_arg_resolve(op, ga->name, &al);
    if (a == -1)
        return fail(c, SL_EINVAL, true, "unknown argument \"%s\"", ga->name);
    for (int k = 0; al && al->renamed_to && k < c->n->nargs; k++) {
        if (strcmp(c->n->args[k].name, al->renamed_to) == 0)
            return fail(c, SL_EINVAL, true,
                        "argument \"%s\" is a deprecated alias for \"%s\", which is given too",
                        ga->name, al->renamed_to);
    }
    if (a == SL__ARG_IGNORED)
        return SL_OK;
    const sl_arg_def *def = sl_op_arg(op, a);
    if (ga->source) {
        if (!(def->flags & SL_ARG_TENSOR))
            return fail(c, SL_EINVAL, true,
                        "argument \"%s\" does not accept per-sample argument inputs", ga->name);
        if (pa)
            pa[a].set = pa[a].user_set = true; /* plan.c resolves pa[a].input */
        return SL_OK;
    }
    char err[512];
    sl__value out;
    sl_status st = sl__value_coerce(&ga->value, def, &out, err, sizeof err);
    if (st != SL_OK)
        return fail(c, st, !sl__value_kind_fits(def, &ga->value), "argument \"%s\": %s", ga->name,
                    err);
    if (!pa) {
        sl__value_fini(&out);
        return SL_OK;
    }
    sl__value_fini(&pa[a].value); /* an argument given twice: the last one counts */
    pa[a].value = out;
    pa[a].set = pa[a].user_set = true;
    return SL_OK;
}

/* Arguments not given: the default, or a missing required one. Each given name is resolved
 * once (by its name or a deprecated one), not once per schema argument: that nested scan was
 * most of building a pipeline of an operator with many arguments. */
static sl_status check_rest(const check *c, const sl_op_def *op, sl__parg *pa)
{
    int nargs = sl_op_num_args(op);
    bool given_buf[128], *given = nargs <= 128 ? given_buf : sl__calloc((size_t)nargs, 1);
    if (!given)
        return fail(c, SL_ENOMEM, false, "out of memory");
    memset(given, 0, (size_t)nargs);
    for (int k = 0; k < c->n->nargs; k++) {
        int a = sl__op_arg_resolve(op, c->n->args[k].name, NULL);
        if (a >= 0 && a < nargs)
            given[a] = true;
    }
    sl_status st = SL_OK;
    for (int a = 0; a < nargs && st == SL_OK; a++) {
        const sl_arg_def *def = sl_op_arg(op, a);
        if (given[a])
            continue;
        if (!def->def && !(def->flags & SL_ARG_OPTIONAL)) {
            st = fail(c, SL_EINVAL, true, "missing required argument \"%s\"", def->name);
            break;
        }
        if (!def->def || !pa)
            continue;
        const sl__value *dv = sl__registry_default(op, a); /* NULL: out of memory */
        st = dv ? sl__value_copy(&pa[a].value, dv) : SL_ENOMEM;
        if (st != SL_OK)
            st = fail(c, st, false, "out of memory");
        else
            pa[a].set = true;
    }
    if (given != given_buf)
        sl__free(given);
    return st;
}

sl_status sl__node_check(const sl__gnode *n, const sl_op_def *op, sl__parg *pargs, sl__error *e,
                         bool *type_error)
{
    check c = {.n = n, .e = e, .type_error = type_error};
    for (int a = 0; pargs && a < sl_op_num_args(op); a++)
        pargs[a].input.node = -1;
    sl__stage stage;
    if (n->device && !sl__stage_parse(n->device, &stage))
        return fail(&c, SL_EINVAL, false, "unknown device \"%s\" (expected cpu, mixed or gpu)",
                    n->device);
    sl_status st = check_ninputs(&c, op);
    for (int k = 0; st == SL_OK && k < n->nargs; k++)
        st = check_arg(&c, op, &n->args[k], pargs);
    return st == SL_OK ? check_rest(&c, op, pargs) : st;
}

int sl__node_num_outputs(const sl_op_def *op, const sl__parg *pargs, int ninputs)
{
    if (!op->num_outputs_arg) {
        int n = 0;
        for (int o = 0; o < op->num_outputs; o++) {
            const sl_output_when *w = op->output_when ? &op->output_when[o] : NULL;
            int a = w && w->arg ? sl_op_arg_index(op, w->arg) : -1;
            bool on = a < 0;
            if (a >= 0 && w->in_range) /* an int argument: on inside [lo, hi] */
                on =
                    pargs && pargs[a].set && pargs[a].value.i >= w->lo && pargs[a].value.i <= w->hi;
            else if (a >= 0 && w->unless) /* a string argument: on unless it has that value */
                on = !(pargs && pargs[a].set && pargs[a].value.s &&
                       strcmp(pargs[a].value.s, w->unless) == 0);
            else if (a >= 0)
                on = pargs && pargs[a].set && pargs[a].value.b;
            n += (!w || ninputs >= w->inputs) && on;
        }
        return n;
    }
    /* an int with a default, or a constant list whose length counts (registry test) */
    int a = sl_op_arg_index(op, op->num_outputs_arg);
    if (a < 0 || !pargs || !pargs[a].set)
        return 0;
    if (pargs[a].value.kind == SL__V_STRING) /* a scalar given for a list (SL_ARG_SCALAR_OK) */
        return 1;
    return pargs[a].value.kind == SL__V_INTS || pargs[a].value.kind == SL__V_STRINGS
               ? pargs[a].value.n
               : (int)pargs[a].value.i;
}
