/* src/ops/math/ew_plan.c: what an element-wise operation means for given operand types: DALI's
 * type promotion and type errors, the operands of an iteration, constants and their types, the
 * init checks, and the schemas the thin math.* operators share (see elementwise.h).
 *
 * Exports sl__ew_op_from_name, sl__ew_op_name, sl__ew_op_symbol, sl__ew_describe,
 * sl__ew_plan_iteration, sl__ew_read_consts, sl__ew_init, sl__ew_fini and the shared schemas.
 * Invariant: the plan is a pure function of the operand types and the operation, so setup and
 * every run_sample of an iteration agree.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "core/half.h"
#include "ops/math/elementwise.h"

enum ew_class { C_ARITH, C_FLOATY, C_CMP, C_BITWISE, C_SAME, C_BITNOT, C_FUNC, C_CLAMP };

static enum ew_class op_class(ew_op op)
{
    if (op <= EW_MAX)
        return C_ARITH;
    if (op <= EW_ATAN2)
        return C_FLOATY;
    if (op <= EW_GEQ)
        return C_CMP;
    if (op <= EW_BITXOR)
        return C_BITWISE;
    if (op <= EW_ABS)
        return C_SAME;
    if (op == EW_BITNOT)
        return C_BITNOT;
    return op == EW_CLAMP ? C_CLAMP : C_FUNC;
}

/* Number of operands, counting the bounds of clamp as one constant operand. */
static int arity(ew_op op)
{
    enum ew_class c = op_class(op);
    return c == C_SAME || c == C_BITNOT || c == C_FUNC ? 1 : 2;
}

static const char *const names[EW_COUNT] = {
    "add",    "sub",   "mul",   "div",    "floordiv", "mod",  "pow",   "min",  "max",    "fdiv",
    "fpow",   "atan2", "eq",    "neq",    "lt",       "leq",  "gt",    "geq",  "bitand", "bitor",
    "bitxor", "minus", "abs",   "bitnot", "fabs",     "sqrt", "rsqrt", "cbrt", "exp",    "log",
    "log2",   "log10", "sin",   "cos",    "tan",      "asin", "acos",  "atan", "sinh",   "cosh",
    "tanh",   "asinh", "acosh", "atanh",  "floor",    "ceil", "clamp"};

/* The Python operator behind an operation, for messages ("`+` (add)"). */
const char *sl__ew_op_symbol(ew_op op)
{
    static const char *const sym[EW_COUNT] = {
        [EW_ADD] = "+",    [EW_SUB] = "-",   [EW_MUL] = "*",    [EW_DIV] = "//",   [EW_MOD] = "%",
        [EW_POW] = "**",   [EW_FDIV] = "/",  [EW_EQ] = "==",    [EW_NEQ] = "!=",   [EW_LT] = "<",
        [EW_LEQ] = "<=",   [EW_GT] = ">",    [EW_GEQ] = ">=",   [EW_BITAND] = "&", [EW_BITOR] = "|",
        [EW_BITXOR] = "^", [EW_MINUS] = "-", [EW_BITNOT] = "~",
    };
    return sym[op] ? sym[op] : names[op];
}

const char *sl__ew_op_name(ew_op op)
{
    return names[op];
}

int sl__ew_op_from_name(const char *name)
{
    for (int i = 0; name && i < EW_COUNT; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

/* ---- type promotion (DALI's "Type Promotion Rules") ----------------------------------- */

static bool is_float(sl_dtype t)
{
    return t == SL_DTYPE_FLOAT16 || t == SL_DTYPE_FLOAT32 || t == SL_DTYPE_FLOAT64;
}

static bool is_signed_int(sl_dtype t)
{
    return t >= SL_DTYPE_INT8 && t <= SL_DTYPE_INT64;
}

/* T op T = T; float op non-float = the float; floatX op floatY = the wider; intX op intY and
 * uintX op uintY = the wider; intX op uintY = intX if X > Y, else int(min(2Y, 64)); bool is the
 * narrowest unsigned type (uint1). Commutative. */
sl_dtype sl__ew_promote(sl_dtype a, sl_dtype b)
{
    if (a == b)
        return a;
    if (is_float(a) || is_float(b)) {
        if (is_float(a) && is_float(b))
            return sl_dtype_size(a) >= sl_dtype_size(b) ? a : b;
        return is_float(a) ? a : b;
    }
    if (a == SL_DTYPE_BOOL || b == SL_DTYPE_BOOL)
        return a == SL_DTYPE_BOOL ? b : a;
    if (is_signed_int(a) == is_signed_int(b))
        return sl_dtype_size(a) >= sl_dtype_size(b) ? a : b;
    sl_dtype s = is_signed_int(a) ? a : b, u = is_signed_int(a) ? b : a;
    if (sl_dtype_size(s) > sl_dtype_size(u))
        return s;
    switch (sl_dtype_size(u)) {
    case 1: return SL_DTYPE_INT16;
    case 2: return SL_DTYPE_INT32;
    default: return SL_DTYPE_INT64;
    }
}

/* ---- state, operands, plan -------------------------------------------------------------- */

static bool arg_set(const sl_ctx *ctx, int arg)
{
    return arg >= 0 && sl_ctx_arg_is_set(ctx, arg);
}

static sl_dtype const_type(const sl_ctx *ctx, const sl__ew_state *st, bool is_int)
{
    if (arg_set(ctx, st->map.scalar_dtype))
        return sl_ctx_arg_dtype(ctx, st->map.scalar_dtype);
    return is_int ? SL_DTYPE_INT32 : SL_DTYPE_FLOAT32;
}

/* Which inputs and constants this iteration has; fails on a wrong count. */
sl_status sl__ew_describe(sl_ctx *ctx, const sl__ew_state *st, sl__ew_operands *ops)
{
    const int nin = sl_ctx_num_inputs(ctx);
    const bool has_int = arg_set(ctx, st->map.scalar_int);
    const bool has_const = has_int || arg_set(ctx, st->map.scalar) || st->op == EW_CLAMP;
    const bool left = st->map.scalar_left >= 0 && sl_ctx_arg_bool(ctx, st->map.scalar_left, 0);

    memset(ops, 0, sizeof *ops);
    ops->n = arity(st->op);
    ops->const_int = has_int;
    if ((ops->n == 1 || st->op == EW_CLAMP) && nin != 1)
        return sl_fail(ctx, SL_EINVAL, "%s takes one input%s, got %d", sl__ew_op_name(st->op),
                       st->op == EW_CLAMP ? " (the bounds are lo and hi)" : "", nin);
    if (ops->n == 2 && nin + (has_const ? 1 : 0) != 2)
        return sl_fail(ctx, SL_EINVAL,
                       "%s takes two operands: two inputs, or one input and scalar / "
                       "scalar_int; got %d input%s%s",
                       sl__ew_op_name(st->op), nin, nin == 1 ? "" : "s",
                       has_const ? " and a constant" : "");
    for (int k = 0; k < ops->n; k++)
        ops->input[k] = k;
    if (ops->n == 2 && has_const) {
        ops->input[left ? 0 : 1] = -1;
        ops->input[left ? 1 : 0] = 0;
    }
    for (int k = 0; k < ops->n; k++)
        ops->type[k] = ops->input[k] >= 0 ? sl_batch_dtype(sl_ctx_input(ctx, ops->input[k]))
                                          : const_type(ctx, st, has_int);
    return SL_OK;
}

static sl_status type_error(sl_ctx *ctx, ew_op op, const sl__ew_operands *ops)
{
    const char *t1 = ops->n == 2 ? sl_dtype_name(ops->type[1]) : "";
    enum ew_class c = op_class(op);
    if (c == C_BITWISE || c == C_BITNOT)
        return sl_fail(ctx, SL_EINVAL,
                       "inputs to bitwise operator `%s` (%s) must be of integral type; got %s%s%s",
                       sl__ew_op_symbol(op), sl__ew_op_name(op), sl_dtype_name(ops->type[0]),
                       ops->n == 2 ? " and " : "", t1);
    return sl_fail(ctx, SL_EINVAL,
                   "input%s to arithmetic operator `%s` (%s) cannot be boolean%s; consider "
                   "using bitwise operators",
                   ops->n == 2 ? "s" : "", sl__ew_op_symbol(op), sl__ew_op_name(op),
                   ops->n == 2 ? "s" : "");
}

static sl_status no_kernel(sl_ctx *ctx, ew_op op, sl_dtype t)
{
    return sl_fail(ctx, SL_EINTERNAL, "no %s loop for %s", sl__ew_op_name(op), sl_dtype_name(t));
}

/* Comparisons of a signed integer with uint64 (promoted to int64) compare exactly instead:
 * int64 against uint64, the signed operand first (mirroring the comparison if needed). */
static bool mixed_compare(ew_op op, const sl__ew_operands *ops, sl_dtype p, sl__ew_plan *pl)
{
    if (op_class(op) != C_CMP || p != SL_DTYPE_INT64 ||
        (ops->type[0] != SL_DTYPE_UINT64 && ops->type[1] != SL_DTYPE_UINT64))
        return false;
    const bool swap = ops->type[0] == SL_DTYPE_UINT64;
    static const ew_op mirror[] = {EW_EQ, EW_NEQ, EW_GT, EW_GEQ, EW_LT, EW_LEQ};
    pl->order[0] = swap ? 1 : 0;
    pl->order[1] = swap ? 0 : 1;
    pl->in_ct[0] = SL_DTYPE_INT64;
    pl->in_ct[1] = SL_DTYPE_UINT64;
    pl->bin = sl__ew_cmp_mixed(swap ? mirror[op - EW_EQ] : op);
    return true;
}

/* The plan for these operand types, or a type error (DALI's messages). */
static sl_status make_plan(sl_ctx *ctx, ew_op op, const sl__ew_operands *ops, sl__ew_plan *pl)
{
    const enum ew_class c = op_class(op);
    const bool two = ops->n == 2;
    const bool all_bool = ops->type[0] == SL_DTYPE_BOOL && (!two || ops->type[1] == SL_DTYPE_BOOL);
    const bool any_bool = ops->type[0] == SL_DTYPE_BOOL || (two && ops->type[1] == SL_DTYPE_BOOL);
    const bool any_float = is_float(ops->type[0]) || (two && is_float(ops->type[1]));

    memset(pl, 0, sizeof *pl);
    if (((c == C_BITWISE || c == C_BITNOT) && any_float) ||
        (c != C_CMP && c != C_BITWISE && c != C_BITNOT && all_bool && op != EW_MUL) ||
        (op == EW_MOD && any_bool))
        return type_error(ctx, op, ops);

    sl_dtype p = two ? sl__ew_promote(ops->type[0], ops->type[1]) : ops->type[0];
    if ((c == C_FLOATY || c == C_FUNC) && !is_float(p))
        p = SL_DTYPE_FLOAT32;
    pl->out = c == C_CMP ? SL_DTYPE_BOOL : p;
    pl->ct = p == SL_DTYPE_FLOAT16 ? SL_DTYPE_FLOAT32 : p;
    pl->out_conv = pl->out == SL_DTYPE_FLOAT16 ? sl__ew_conv(SL_DTYPE_FLOAT32, pl->out) : NULL;
    for (int k = 0; k < ops->n; k++) {
        pl->order[k] = k;
        pl->in_ct[k] = pl->ct;
    }
    if (!mixed_compare(op, ops, p, pl)) {
        if (c == C_CLAMP)
            pl->clamp = sl__ew_clamp(pl->ct);
        else if (two)
            pl->bin = sl__ew_bin(op, pl->ct);
        else
            pl->un = sl__ew_un(op, pl->ct);
    }
    if (!pl->bin && !pl->un && !pl->clamp)
        return no_kernel(ctx, op, pl->ct);
    for (int k = 0; k < ops->n; k++) {
        sl_dtype t = ops->type[pl->order[k]];
        pl->conv[k] = sl__ew_conv(t, pl->in_ct[k]);
        pl->round16[k] = p == SL_DTYPE_FLOAT16 && t != SL_DTYPE_FLOAT16;
    }
    return SL_OK;
}

sl_status sl__ew_plan_iteration(sl_ctx *ctx, sl__ew_operands *ops, sl__ew_plan *pl)
{
    const sl__ew_state *st = sl_ctx_state(ctx);
    sl_status s = sl__ew_describe(ctx, st, ops);
    return s != SL_OK ? s : make_plan(ctx, st->op, ops, pl);
}

/* ---- constants -------------------------------------------------------------------------- */

/* Stores v (or iv when is_int) as type t. Returns false when the value does not fit: an
 * integer type needs an integral value in its range, bool 0 or 1, a float type a value within
 * its finite range (infinities and NaN pass). */
static bool store_const(double v, int64_t iv, bool is_int, sl_dtype t, sl__ew_scalar *out)
{
    static const double lim[][2] = {[SL_DTYPE_UINT8] = {0, 255},
                                    [SL_DTYPE_UINT16] = {0, 65535},
                                    [SL_DTYPE_UINT32] = {0, 4294967295.0},
                                    [SL_DTYPE_UINT64] = {0, 0x1p64},
                                    [SL_DTYPE_INT8] = {-128, 127},
                                    [SL_DTYPE_INT16] = {-32768, 32767},
                                    [SL_DTYPE_INT32] = {-0x1p31, 0x1p31 - 1},
                                    [SL_DTYPE_INT64] = {-0x1p63, 0x1p63},
                                    [SL_DTYPE_BOOL] = {0, 1}};
    memset(out, 0, sizeof *out);
    if (is_float(t)) {
        double x = is_int ? (double)iv : v;
        float f = isfinite(x) && fabs(x) > 3.4028234663852886e38 ? INFINITY : (float)x;
        if (isinf(f) && isfinite(x))
            return false;
        if (t == SL_DTYPE_FLOAT64)
            out->f64 = x;
        else if (t == SL_DTYPE_FLOAT32)
            out->f32 = f;
        else
            out->u16 = sl__half_from_float(f);
        return t != SL_DTYPE_FLOAT16 || !(isinf(sl__half_to_float(out->u16)) && isfinite(x));
    }
    if (is_int) { /* exact 64-bit checks for integer constants */
        if (t == SL_DTYPE_UINT64 ? iv < 0
                                 : t != SL_DTYPE_INT64 && (iv < lim[t][0] || iv > lim[t][1]))
            return false;
        v = (double)iv;
    } else if (!(v == trunc(v) && v >= lim[t][0] &&
                 (t == SL_DTYPE_UINT64 || t == SL_DTYPE_INT64 ? v < lim[t][1] : v <= lim[t][1]))) {
        return false;
    }
    switch (t) {
    case SL_DTYPE_UINT8: out->u8 = (uint8_t)v; break;
    case SL_DTYPE_UINT16: out->u16 = (uint16_t)v; break;
    case SL_DTYPE_UINT32: out->u32 = (uint32_t)v; break;
    case SL_DTYPE_UINT64: out->u64 = is_int ? (uint64_t)iv : (uint64_t)v; break;
    case SL_DTYPE_INT8: out->i8 = (int8_t)v; break;
    case SL_DTYPE_INT16: out->i16 = (int16_t)v; break;
    case SL_DTYPE_INT32: out->i32 = (int32_t)v; break;
    case SL_DTYPE_INT64: out->i64 = is_int ? iv : (int64_t)v; break;
    default: out->u8 = v != 0; break;
    }
    return true;
}

/* Reads constant argument `arg` of sample i into *out as type t; fails naming it. */
static sl_status read_const(sl_ctx *ctx, int arg, bool is_int, sl_dtype t, int i,
                            sl__ew_scalar *out)
{
    double v = is_int ? 0 : sl_ctx_arg_float(ctx, arg, i);
    int64_t iv = is_int ? sl_ctx_arg_int(ctx, arg, i) : 0;
    if (store_const(v, iv, is_int, t, out))
        return SL_OK;
    if (is_int)
        return sl_fail(ctx, SL_EINVAL, "scalar_int %lld does not fit scalar_dtype %s",
                       (long long)iv, sl_dtype_name(t));
    const sl__ew_state *st = sl_ctx_state(ctx);
    const char *name = arg == st->map.lo ? "lo" : arg == st->map.hi ? "hi" : "scalar";
    return sl_fail(ctx, SL_EINVAL, "%s %g does not fit %s (%s)", name, v, sl_dtype_name(t),
                   arg_set(ctx, st->map.scalar_dtype) ? "scalar_dtype" : "the default type");
}

/* The constants of sample i: [0] the constant operand or lo, [1] hi. */
sl_status sl__ew_read_consts(sl_ctx *ctx, const sl__ew_operands *ops, int i, sl__ew_scalar c[2])
{
    const sl__ew_state *st = sl_ctx_state(ctx);
    sl_dtype t = const_type(ctx, st, ops->const_int);
    sl_status s = SL_OK;
    if (st->op == EW_CLAMP) {
        if ((s = read_const(ctx, st->map.lo, false, t, i, &c[0])) == SL_OK)
            s = read_const(ctx, st->map.hi, false, t, i, &c[1]);
    } else if (ops->n == 2 && (ops->input[0] < 0 || ops->input[1] < 0)) {
        int arg = ops->const_int ? st->map.scalar_int : st->map.scalar;
        s = read_const(ctx, arg, ops->const_int, t, i, &c[0]);
    }
    return s;
}

/* ---- init ------------------------------------------------------------------------------- */

static bool init_set(const sl_op_init *ini, int arg)
{
    return arg >= 0 && sl_init_arg_is_set(ini, arg);
}

/* A constant given at build (not per sample) must fit its type. */
static sl_status init_check_const(sl_op_init *ini, const sl__ew_args *map, int arg, bool is_int,
                                  const char *name)
{
    if (!init_set(ini, arg) || sl_init_arg_is_input(ini, arg))
        return SL_OK;
    sl_dtype t = init_set(ini, map->scalar_dtype) ? sl_init_arg_dtype(ini, map->scalar_dtype)
                 : is_int                         ? SL_DTYPE_INT32
                                                  : SL_DTYPE_FLOAT32;
    double v = is_int ? 0 : sl_init_arg_float(ini, arg);
    int64_t iv = is_int ? sl_init_arg_int(ini, arg) : 0;
    sl__ew_scalar out;
    if (store_const(v, iv, is_int, t, &out))
        return SL_OK;
    if (is_int)
        return sl_init_fail(ini, SL_EINVAL, "%s %lld does not fit %s", name, (long long)iv,
                            sl_dtype_name(t));
    return sl_init_fail(ini, SL_EINVAL, "%s %g does not fit %s", name, v, sl_dtype_name(t));
}

static sl_status init_check_args(sl_op_init *ini, ew_op op, const sl__ew_args *map)
{
    const bool has_s = init_set(ini, map->scalar), has_i = init_set(ini, map->scalar_int);
    const bool lo = init_set(ini, map->lo), hi = init_set(ini, map->hi);
    const char *name = sl__ew_op_name(op);
    sl_status st;
    if (has_s && has_i)
        return sl_init_fail(ini, SL_EINVAL,
                            "scalar and scalar_int are exclusive: give one constant operand");
    if ((has_s || has_i) && arity(op) != 2)
        return sl_init_fail(ini, SL_EINVAL, "%s takes one operand; %s is for binary operations",
                            name, has_s ? "scalar" : "scalar_int");
    if (op == EW_CLAMP && !(lo && hi))
        return sl_init_fail(ini, SL_EINVAL, "clamp needs both lo and hi");
    if (op != EW_CLAMP && (lo || hi))
        return sl_init_fail(ini, SL_EINVAL, "%s is only for op clamp, not %s", lo ? "lo" : "hi",
                            name);
    if (init_set(ini, map->scalar_left) && sl_init_arg_bool(ini, map->scalar_left) && !has_s &&
        !has_i)
        return sl_init_fail(ini, SL_EINVAL, "scalar_left needs scalar or scalar_int");
    if ((st = init_check_const(ini, map, map->scalar, false, "scalar")) != SL_OK ||
        (st = init_check_const(ini, map, map->scalar_int, true, "scalar_int")) != SL_OK ||
        (st = init_check_const(ini, map, map->lo, false, "lo")) != SL_OK)
        return st;
    return init_check_const(ini, map, map->hi, false, "hi");
}

sl_status sl__ew_init(sl_op_init *ini, void **out, int op, const sl__ew_args *map)
{
    *out = NULL;
    if (op < 0)
        op = sl__ew_op_from_name(sl_init_arg_str(ini, map->op));
    if (op < 0)
        return sl_init_fail(ini, SL_EINVAL, "op \"%s\" is not one of %s",
                            sl_init_arg_str(ini, map->op), SL__EW_OP_CHOICES);
    sl_status st = init_check_args(ini, (ew_op)op, map);
    if (st != SL_OK)
        return st;
    sl__ew_state *s = sl__malloc(sizeof *s);
    if (!s)
        return sl_init_fail(ini, SL_ENOMEM, "out of memory");
    s->op = (ew_op)op;
    s->map = *map;
    *out = s;
    return SL_OK;
}

void sl__ew_fini(void *st)
{
    sl__free(st);
}

/* ---- schemas of the thin math.* operators ----------------------------------------------- */

const sl_arg_def sl__ew_binary_args[SL__EW_BINARY_NARGS] = {
    SL__EW_ARG_SCALAR, SL__EW_ARG_SCALAR_INT, SL__EW_ARG_SCALAR_LEFT, SL__EW_ARG_SCALAR_DTYPE};
const sl_arg_def sl__ew_clamp_args[SL__EW_CLAMP_NARGS] = {
    {.name = "lo",
     .type = SL_ARG_FLOAT,
     .doc = "Lower bound (a constant typed like scalar_dtype, float32 by default).",
     .flags = SL_ARG_TENSOR},
    {.name = "hi",
     .type = SL_ARG_FLOAT,
     .doc = "Upper bound (typed like lo); hi < lo gives hi everywhere, as NumPy's clip.",
     .flags = SL_ARG_TENSOR},
    SL__EW_ARG_SCALAR_DTYPE};

const sl__ew_args sl__ew_unary_map = {-1, -1, -1, -1, -1, -1, -1};
const sl__ew_args sl__ew_binary_map = {.op = -1,
                                       .scalar = 0,
                                       .scalar_int = 1,
                                       .scalar_left = 2,
                                       .scalar_dtype = 3,
                                       .lo = -1,
                                       .hi = -1};
const sl__ew_args sl__ew_clamp_map = {.op = -1,
                                      .scalar = -1,
                                      .scalar_int = -1,
                                      .scalar_left = -1,
                                      .scalar_dtype = 2,
                                      .lo = 0,
                                      .hi = 1};

const sl_io_def sl__ew_unary_inputs[1] = {{"input", "Tensors of any numeric type."}};
const sl_io_def sl__ew_binary_inputs[2] = {
    {"left", "First operand."},
    {"right", "Second operand; absent when scalar / scalar_int is the other one."}};
const sl_io_def sl__ew_outputs[1] = {
    {"output", "The result, of the promoted type, with the operands' shapes broadcast."}};
