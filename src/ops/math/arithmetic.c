/* arithmetic: element-wise arithmetic, comparisons, bitwise operations and math functions on
 * one or two tensors or a tensor and a constant: the operator the Python DataNode operators
 * (a + b, a * 2, -a, abs(a), a < b, ...) map onto, as DALI maps them onto its internal
 * ArithmeticGenericOp.
 *
 * Exports: const sl_op_def sl_op_arithmetic.
 *
 * Everything is in the family helper (elementwise.h / elementwise.c / ew_kernels.c); this file
 * declares the schema and reads `op` at init. Invariant: the operation is fixed at build.
 */
#include "ops/math/elementwise.h"
#include "sluice/op.h"

enum { A_OP, A_SCALAR, A_SCALAR_INT, A_SCALAR_LEFT, A_SCALAR_DTYPE, A_LO, A_HI, NUM_ARGS };

static const sl_arg_def args[NUM_ARGS] = {
    [A_OP] = {.name = "op",
              .type = SL_ARG_STRING,
              .doc = "The operation (DALI's expression names): binary add, sub, mul, div (`//`), "
                     "floordiv, mod, pow, min, max, fdiv (`/`), fpow, atan2; comparisons eq, "
                     "neq, lt, leq, gt, geq; bitwise bitand, bitor, bitxor, bitnot; unary "
                     "minus, abs, fabs, sqrt, rsqrt, cbrt, exp, log, log2, log10, sin, cos, "
                     "tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, floor, "
                     "ceil; clamp (with lo and hi).",
              .choices = SL__EW_OP_CHOICES},
    [A_SCALAR] = SL__EW_ARG_SCALAR,
    [A_SCALAR_INT] = SL__EW_ARG_SCALAR_INT,
    [A_SCALAR_LEFT] = SL__EW_ARG_SCALAR_LEFT,
    [A_SCALAR_DTYPE] = SL__EW_ARG_SCALAR_DTYPE,
    [A_LO] = SL__EW_ARG_LO,
    [A_HI] = SL__EW_ARG_HI,
};

static const sl__ew_args map = {.op = A_OP,
                                .scalar = A_SCALAR,
                                .scalar_int = A_SCALAR_INT,
                                .scalar_left = A_SCALAR_LEFT,
                                .scalar_dtype = A_SCALAR_DTYPE,
                                .lo = A_LO,
                                .hi = A_HI};

static const sl_io_def inputs[] = {
    {"left", "First operand (the only one of a unary operation), any element type."},
    {"right", "Second operand; absent when a constant (scalar / scalar_int) is the other one."},
};
static const sl_io_def outputs[] = {
    {"output", "The result, of the promoted type; shape: the operands' shapes broadcast."},
};

static sl_status arith_init(sl_op_init *ini, void **state)
{
    return sl__ew_init(ini, state, -1, &map);
}

const sl_op_def sl_op_arithmetic = {
    .name = "arithmetic",
    .doc = "Element-wise arithmetic, comparison, bitwise and math operations with DALI's type "
           "promotion and broadcasting.\n\n"
           "`op` picks the operation; operands are two inputs, or one input and a constant "
           "(`scalar` or `scalar_int`, on the right unless `scalar_left`), or one input for unary "
           "operations and `clamp` (bounds `lo`, `hi`). Python's operators map as DALI maps them: "
           "`+` add, `-` sub, `*` mul, `/` fdiv, `//` div, `%` mod, `**` pow, unary `-` minus, "
           "`~` bitnot, `abs()` abs, `==` eq, `!=` neq, `<` lt, `<=` leq, `>` gt, `>=` geq, "
           "`&` bitand, `|` bitor, `^` bitxor.\n\n"
           "**Type promotion** (DALI's table; commutative): T op T = T; floatX op T = floatX when "
           "T is not a float; floatX op floatY = float(max(X, Y)); intX op intY = int(max(X, Y)); "
           "uintX op uintY = uint(max(X, Y)); intX op uintY = intX when X > Y, else int(2Y) "
           "capped at int64 (int64 op uint64 = int64). bool is the narrowest unsigned type "
           "(bool op int8 = int8, bool op uint16 = uint16). float16 takes part like the other "
           "floats (int op float16 = float16; the integer is rounded to float16 first). Constants "
           "are typed, not \"weak\": `scalar` is float32 and `scalar_int` int32 (what DALI gives a "
           "Python float / int) unless `scalar_dtype` says otherwise, so uint8 + scalar_int 1 is "
           "int32 and uint8 * scalar 0.5 is float32.\n\n"
           "**Per operation**: comparisons give bool (int64 against uint64 compares exactly); "
           "fdiv, fpow, atan2 and the functions (fabs ... ceil) give float32 for integer "
           "operands and keep float types; minus, abs and bitnot keep the type; div is C "
           "division for integers (truncates toward zero) and plain division for floats; "
           "floordiv (a sluice extra) rounds down like NumPy's floor_divide; mod is C's `%` for "
           "integers (sign of the dividend) and fmod for floats; integer pow with a negative "
           "exponent gives 0. Integer arithmetic wraps modulo 2^bits (as unsigned arithmetic; "
           "MIN // -1 = MIN, MIN % -1 = 0). An integer divisor of 0 in div, floordiv or mod fails "
           "the sample with an error instead of trapping; float division follows IEEE (inf, "
           "NaN). min / max are `a < b ? a : b` / `a > b ? a : b` as in DALI; clamp keeps NaN.\n\n"
           "**Errors** as DALI's: arithmetic on booleans only (except mul, which is logical and, "
           "and comparisons / bitwise) fails (\"cannot be boolean; consider using bitwise "
           "operators\"), mod rejects bool operands, bitwise operations reject floats.\n\n"
           "**Broadcasting** per sample, NumPy's rules (as DALI's): shapes right-aligned, missing "
           "leading extents are 1, each pair of extents equal or one of them 1; a per-sample "
           "scalar broadcasts to everything. The output layout is that of the operand with the "
           "most dimensions; two layouts must be equal or one a suffix of the other.\n\n"
           "**GPU** (`device=\"gpu\"`): the same plan, broadcasting and constants, computed on "
           "the host, and one kernel over the batch; integer and bool results and the IEEE-exact "
           "float operations (+ - * /, fmod, floordiv, min, max, comparisons, clamp, abs, sqrt, "
           "rsqrt, floor, ceil) are identical to the CPU's, the other functions (exp, log, pow, "
           "atan2, trigonometric, hyperbolic, cbrt) use CUDA's and may differ by a few ulp; a "
           "float16 NaN result is CUDA's canonical NaN. An integer divisor of 0 fails the sample "
           "on the GPU as on the CPU (inside a tensor it is found by the kernel and reported "
           "when the iteration completes).\n\n"
           "Differs from DALI: one operator with an `op` argument instead of an expression string "
           "(one operation per node, no fused expressions); constants are arguments, not "
           "`types.Constant` nodes, and only scalars (use a second input for a tensor constant); "
           "clamp bounds are constants (per-sample via argument inputs), not tensors; no bit "
           "shifts; broadcasting has no 6-group limit; rsqrt is exact (1 / sqrt) where DALI's CPU "
           "uses an approximation; integer division by zero is an error rather than undefined; "
           "float mod is fmod as DALI documents (its CPU code calls std::remainder); abs(-0.0) is "
           "+0.0.",
    .inputs = inputs,
    .min_inputs = 1,
    .max_inputs = 2,
    .outputs = outputs,
    .num_outputs = 1,
    .args = args,
    .num_args = NUM_ARGS,
    SL__EW_OP_FUNCS(arith_init),
};
