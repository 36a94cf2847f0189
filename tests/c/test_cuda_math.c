/* tests/c/test_cuda_math.c: the GPU run of the element-wise family (ops/math/elementwise.cu):
 * `arithmetic` (every operation) and every math.* operator, and of normalize
 * (ops/tensor/normalize.cu), against the CPU operators on the same inputs (gpuutil.h).
 *
 * Runs on the device, or emulated on the host (the .emulated ctest entry), never skipped
 * silently. Inputs are the JPEGs of the class tree (SLUICE_TEST_TREE) decoded on the CPU as RGB
 * (H x W x 3) and GRAY (H x W x 1, broadcast against RGB), turned into each element type by CPU
 * nodes and moved to the GPU with copy: unsigned types as decoded, signed ones centred (x - 128),
 * floats scaled to (-1, 1) or (-4, 4) without a zero (so logs stay finite: gpuutil compares
 * infinities as differences), bool as x > 127, "nz" divisors made odd (no integer division by
 * 0, which fails a CPU sample). Constants: scalar / scalar_int / scalar_left / scalar_dtype and
 * per-sample scalars and clamp bounds from random.uniform (CPU nodes, as in DALI); a per-channel
 * vector (random.uniform of shape [3]) broadcast over images; 1x1 images; batches with empty
 * samples (slice to 0..3 x 0..3 pixels).
 *
 * Tolerances: 0 for integer and bool results and for IEEE-exact float operations (+ - * /,
 * fmod, floordiv, min / max, comparisons, clamp, abs, sqrt, rsqrt, floor, ceil, conversions):
 * both sides compute the same float operations in the same order (nvcc --fmad=false).
 * libm functions (exp, log, pow, trigonometric, hyperbolic, cbrt, atan2) use CUDA's
 * implementations on the device, up to 4 ulp from glibc's (CUDA programming guide, "Mathematical
 * functions"), so: float32 results, all below 256 in magnitude here (tan near pi/2 is the
 * largest, 136): TOL_F32 = 1e-4 (5 ulp at 256 is 7.6e-5); float64: TOL_F64 = 1e-12 (5 ulp at 256
 * is 1.4e-13); float16 results rounded from float32 values below 16: TOL_F16 = 2^-6 (one float16
 * ulp at 16..32). When the GPU is
 * emulated the functions are glibc's on both sides and every difference is 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "gpuutil.h"
#include "testutil.h"

enum { BATCH = 3, ITERS = 2 };

#define TOL_F32 1e-4
#define TOL_F64 1e-12
#define TOL_F16 0.015625

static char spec[16384];
static size_t used;

static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(spec + used, sizeof spec - used, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof spec - used);
    used += (size_t)n;
}

/* A CPU arithmetic node `name` = `in` op (args) */
static void cpu_op(const char *name, const char *in, const char *op, const char *args)
{
    put("{\"name\": \"%s\", \"op\": \"arithmetic\", \"inputs\": [\"%s\"], \"args\": {\"op\": "
        "\"%s\", %s}},",
        name, in, op, args);
}

static void cpu_cast(const char *name, const char *in, const char *dtype)
{
    put("{\"name\": \"%s\", \"op\": \"cast\", \"inputs\": [\"%s\"], \"args\": {\"dtype\": "
        "\"%s\"}},",
        name, in, dtype);
}

/* GPU node `name`: decoded images ("RGB" / "GRAY"; "TINY": RGB resized to 1x1) made into
 * `kind`: u8 u16 u32 u64 (as decoded), i8 i16 i32 i64 (x - 128), f32 f64 f16 ((x - 127.5) /
 * 128), w32 ((x - 127.5) / 32), p16 (float16 (x + 0.5) / 64), b (x > 127), nz8 (x | 1), nzi16 ((x |
 * 1) - 128), big (int32 x * 37); vec3: not an image but 3 floats per sample (random.uniform). */
static void input(const char *name, const char *img, const char *kind)
{
    char d[64], t1[64], t2[64], t3[64];
    const char *last = d;
    snprintf(d, sizeof d, "%s_dec", name);
    snprintf(t1, sizeof t1, "%s_1", name);
    snprintf(t2, sizeof t2, "%s_2", name);
    snprintf(t3, sizeof t3, "%s_3", name);
    if (!strcmp(img, "PART")) { /* 0..3 x 0..3 pixels: some samples empty */
        put("{\"name\": \"%s_z\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, "
            "0.03], \"shape\": [2]}},",
            name);
        put("{\"name\": \"%s_0\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},", name);
        put("{\"name\": \"%s\", \"op\": \"slice\", \"inputs\": [\"%s_0\"], \"args\": "
            "{\"axis_names\": \"WH\"}, \"arg_inputs\": {\"rel_shape\": \"%s_z\"}},",
            d, name, name);
    } else if (!strcmp(img, "TINY")) {
        put("{\"name\": \"%s_0\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"]},", name);
        put("{\"name\": \"%s\", \"op\": \"resize\", \"inputs\": [\"%s_0\"], \"args\": "
            "{\"resize_x\": 1, \"resize_y\": 1}},",
            d, name);
    } else {
        put("{\"name\": \"%s\", \"op\": \"decoders.image\", \"inputs\": [\"reader:0\"], \"args\": "
            "{\"output_type\": \"%s\"}},",
            d, img);
    }
    if (kind[0] == 'u' && strcmp(kind, "u8")) {
        static const char *const names[][2] = {
            {"u16", "uint16"}, {"u32", "uint32"}, {"u64", "uint64"}};
        for (int k = 0; k < 3; k++)
            if (!strcmp(kind, names[k][0]))
                cpu_cast(t1, d, names[k][1]), last = t1;
    } else if (kind[0] == 'i') {
        cpu_op(t1, d, "sub", "\"scalar_int\": 128");
        last = t1;
        if (strcmp(kind, "i32"))
            cpu_cast(t2, t1,
                     !strcmp(kind, "i8")    ? "int8"
                     : !strcmp(kind, "i16") ? "int16"
                                            : "int64"),
                last = t2;
    } else if (!strcmp(kind, "p16")) {
        cpu_op(t1, d, "add", "\"scalar\": 0.5");
        cpu_op(t2, t1, "fdiv", "\"scalar\": 64.0");
        cpu_cast(t3, t2, "float16");
        last = t3;
    } else if (kind[0] == 'f' || kind[0] == 'w') {
        cpu_op(t1, d, "sub", "\"scalar\": 127.5");
        cpu_op(t2, t1, "fdiv", kind[0] == 'w' ? "\"scalar\": 32.0" : "\"scalar\": 128.0");
        last = t2;
        if (!strcmp(kind, "f64") || !strcmp(kind, "f16"))
            cpu_cast(t3, t2, !strcmp(kind, "f64") ? "float64" : "float16"), last = t3;
    } else if (!strcmp(kind, "big")) {
        cpu_op(t1, d, "mul", "\"scalar_int\": 37"); /* int32 up to 9435: inexact in float16 */
        last = t1;
    } else if (!strcmp(kind, "vec3")) { /* a per-sample vector of 3 floats: per channel */
        put("{\"name\": \"%s\", \"op\": \"random.uniform\", \"args\": {\"range\": [0, 2], "
            "\"shape\": [3]}},",
            t1);
        last = t1;
    } else if (!strcmp(kind, "b")) {
        cpu_op(t1, d, "gt", "\"scalar_int\": 127");
        last = t1;
    } else if (!strncmp(kind, "nz", 2)) {
        cpu_op(t1, d, "bitor", "\"scalar_int\": 1, \"scalar_dtype\": \"uint8\"");
        last = t1;
        if (!strcmp(kind, "nzi16")) {
            cpu_op(t2, t1, "sub", "\"scalar_int\": 128");
            cpu_cast(t3, t2, "int16");
            last = t3;
        }
    }
    put("{\"name\": \"%s\", \"op\": \"copy\", \"device\": \"$MIX\", \"inputs\": [\"%s\"]},", name,
        last);
}

/* One case: GPU node "op" running `op` on input a (and b, when not NULL) with `args` (JSON
 * members, may be empty); `extra`: more CPU nodes (each ending with a comma). */
typedef struct mcase {
    const char *op, *a, *b, *args;
    double tol;
} mcase;

static const char *build(const mcase *c, const char *img_a, const char *extra)
{
    used = 0;
    put("{\"pipeline\": {\"batch_size\": %d, \"num_threads\": 2, \"prefetch_queue_depth\": 2, "
        "\"seed\": 7}, \"nodes\": [{\"name\": \"reader\", \"op\": \"readers.file\", \"args\": "
        "{\"file_root\": \"%s\", \"random_shuffle\": true, \"seed\": 3}},",
        BATCH, tu_env_dir("SLUICE_TEST_TREE"));
    input("a", img_a, c->a);
    if (c->b)
        input("b", strcmp(img_a, "TINY") ? "GRAY" : "TINY", c->b);
    put("%s", extra ? extra : "");
    put("{\"name\": \"op\", \"op\": \"%s\", \"device\": \"$GPU\", \"inputs\": [\"a\"%s], %s}],"
        " \"outputs\": [\"op\"]}",
        c->op, c->b ? ", \"b\"" : "", c->args[0] ? c->args : "\"args\": {}");
    return spec;
}

static void run_cases(const mcase *cases, size_t n, const char *img_a, const char *extra)
{
    for (size_t k = 0; k < n; k++) {
        const mcase *c = &cases[k];
        print_message("%s(%s%s%s) %s, tol %g\n", c->op, c->a, c->b ? ", " : "", c->b ? c->b : "",
                      c->args, c->tol);
        tu_diff d = tu_gpu_compare(build(c, img_a, extra), ITERS, c->tol);
        assert_true(d.elements > 0);
    }
}

#define OP(name) "\"args\": {\"op\": \"" name "\"}"
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void integer_binary(void **state)
{
    static const char *const ops[] = {"add", "sub",    "mul",   "min",    "max",
                                      "pow", "bitand", "bitor", "bitxor", "eq",
                                      "neq", "lt",     "leq",   "gt",     "geq"};
    static const char *const divs[] = {"div", "floordiv", "mod"};
    /* (a, b): same type, mixed signedness / widths (promotion), with a nonzero divisor */
    static const char *const pairs[][3] = {
        {"u8", "u8", "nz8"},    {"i16", "i16", "nzi16"}, {"i8", "u16", "nz8"},
        {"u32", "i8", "nzi16"}, {"i64", "u8", "nzi16"},  {"u64", "u16", "nz8"},
    };
    char args[128];
    for (size_t p = 0; p < N(pairs); p++) {
        for (size_t k = 0; k < N(ops) + N(divs); k++) {
            const bool dv = k >= N(ops);
            snprintf(args, sizeof args, "\"args\": {\"op\": \"%s\"}",
                     dv ? divs[k - N(ops)] : ops[k]);
            mcase c = {"arithmetic", pairs[p][0], dv ? pairs[p][2] : pairs[p][1], args, 0};
            run_cases(&c, 1, "RGB", NULL);
        }
    }
}

static void mixed_compare_and_bool(void **state)
{
    static const mcase cases[] = {
        {"arithmetic", "i64", "u64", OP("eq"), 0},  {"arithmetic", "i64", "u64", OP("lt"), 0},
        {"arithmetic", "i64", "u64", OP("geq"), 0}, {"arithmetic", "u64", "i16", OP("gt"), 0},
        {"arithmetic", "u64", "i64", OP("leq"), 0}, {"arithmetic", "u64", "i8", OP("neq"), 0},
        {"arithmetic", "b", "b", OP("mul"), 0},     {"arithmetic", "b", "b", OP("bitand"), 0},
        {"arithmetic", "b", "b", OP("bitor"), 0},   {"arithmetic", "b", "b", OP("bitxor"), 0},
        {"arithmetic", "b", "b", OP("lt"), 0},      {"arithmetic", "b", "b", OP("eq"), 0},
        {"arithmetic", "b", "u8", OP("add"), 0},    {"arithmetic", "i8", "b", OP("mul"), 0},
        {"arithmetic", "b", NULL, OP("bitnot"), 0}, {"arithmetic", "b", "f32", OP("add"), 0},
    };
    run_cases(cases, N(cases), "RGB", NULL);
}

static void float_binary(void **state)
{
    static const mcase cases[] = {
        {"arithmetic", "f32", "w32", OP("add"), 0},
        {"arithmetic", "f32", "w32", OP("sub"), 0},
        {"arithmetic", "f32", "w32", OP("mul"), 0},
        {"arithmetic", "f32", "w32", OP("div"), 0},
        {"arithmetic", "f32", "w32", OP("fdiv"), 0},
        {"arithmetic", "w32", "f32", OP("floordiv"), 0},
        {"arithmetic", "w32", "f32", OP("mod"), 0},
        {"arithmetic", "f32", "w32", OP("min"), 0},
        {"arithmetic", "f32", "w32", OP("max"), 0},
        {"arithmetic", "f32", "w32", OP("lt"), 0},
        {"arithmetic", "f32", "w32", OP("geq"), 0},
        {"arithmetic", "w32", "f32", OP("pow"), TOL_F32}, /* |x|^y < 64 */
        {"arithmetic", "f32", "f32", OP("fpow"), TOL_F32},
        {"arithmetic", "f32", "w32", OP("atan2"), TOL_F32},
        {"arithmetic", "f64", "f32", OP("add"), 0},
        {"arithmetic", "f64", "w32", OP("fdiv"), 0},
        {"arithmetic", "w32", "f64", OP("floordiv"), 0},
        {"arithmetic", "f64", "f64", OP("atan2"), TOL_F64},
        {"arithmetic", "f16", "f16", OP("add"), 0},
        {"arithmetic", "f16", "f16", OP("mul"), 0},
        {"arithmetic", "f16", "f16", OP("fdiv"), 0},
        {"arithmetic", "f16", "f32", OP("sub"), 0},
        {"arithmetic", "u8", "f16", OP("add"), 0},
        {"arithmetic", "i16", "f16", OP("mul"), 0},
        {"arithmetic", "f16", "f16", OP("lt"), 0},
        {"arithmetic", "u8", "f32", OP("mul"), 0},
        {"arithmetic", "u8", "nz8", OP("fdiv"), 0},
        {"arithmetic", "i32", "w32", OP("max"), 0},
        {"arithmetic", "big", "f16", OP("add"), 0},
        {"arithmetic", "f16", NULL, "\"args\": {\"op\": \"add\", \"scalar_int\": 4097}", 0},
    };
    run_cases(cases, N(cases), "RGB", NULL);
}

static void unary_and_functions(void **state)
{
    static const char *const fn[] = {"fabs",  "sqrt",  "rsqrt", "cbrt", "exp",   "log",
                                     "log2",  "log10", "sin",   "cos",  "tan",   "asin",
                                     "acos",  "atan",  "sinh",  "cosh", "tanh",  "asinh",
                                     "acosh", "atanh", "floor", "ceil", "minus", "abs"};
    static const char *const exact[] = {"fabs", "sqrt", "rsqrt", "floor", "ceil", "minus", "abs"};
    /* float16 NaNs cannot be compared (gpuutil reads them as infinities): f16 is (-1, 1) for the
     * functions defined there, p16 (0, 4) for the others; acosh is left to float32 / float64 */
    static const char *const kinds[] = {"f32", "w32", "f64", "f16", "p16"};
    static const char *const positive[] = {"sqrt", "rsqrt", "log", "log2", "log10"};
    char args[128];
    for (size_t t = 0; t < N(kinds); t++) {
        for (size_t k = 0; k < N(fn); k++) {
            bool ex = false, pos = false;
            for (size_t e = 0; e < N(exact); e++)
                ex |= !strcmp(fn[k], exact[e]);
            for (size_t e = 0; e < N(positive); e++)
                pos |= !strcmp(fn[k], positive[e]);
            if (t >= 3 && (pos != (t == 4) || !strcmp(fn[k], "acosh")))
                continue;
            const double tol = ex ? 0 : t == 2 ? TOL_F64 : t >= 3 ? TOL_F16 : TOL_F32;
            snprintf(args, sizeof args, "\"args\": {\"op\": \"%s\"}", fn[k]);
            mcase c = {"arithmetic", kinds[t], NULL, args, tol};
            run_cases(&c, 1, "RGB", NULL);
        }
    }
    static const mcase cases[] = {
        {"arithmetic", "i8", NULL, OP("minus"), 0},
        {"arithmetic", "i8", NULL, OP("abs"), 0},
        {"arithmetic", "i16", NULL, OP("bitnot"), 0},
        {"arithmetic", "i64", NULL, OP("abs"), 0},
        {"arithmetic", "u8", NULL, OP("minus"), 0},
        {"arithmetic", "u64", NULL, OP("bitnot"), 0},
        {"arithmetic", "u8", NULL, OP("sqrt"), 0},
        {"arithmetic", "nz8", NULL, OP("log"), TOL_F32},
        {"arithmetic", "i16", NULL, OP("floor"), 0},
        {"arithmetic", "nz8", NULL, OP("rsqrt"), 0},
    };
    run_cases(cases, N(cases), "RGB", NULL);
}

static void constants_and_broadcasting(void **state)
{
    static const mcase cases[] = {
        {"arithmetic", "u8", NULL, "\"args\": {\"op\": \"add\", \"scalar_int\": 1}", 0},
        {"arithmetic", "u8", NULL, "\"args\": {\"op\": \"mul\", \"scalar\": 0.5}", 0},
        {"arithmetic", "u8", NULL,
         "\"args\": {\"op\": \"sub\", \"scalar_int\": 255, \"scalar_left\": true}", 0},
        {"arithmetic", "f32", NULL,
         "\"args\": {\"op\": \"fdiv\", \"scalar\": 1.0, \"scalar_left\": true}", 0},
        {"arithmetic", "u8", NULL,
         "\"args\": {\"op\": \"add\", \"scalar_int\": 200, \"scalar_dtype\": \"uint8\"}", 0},
        {"arithmetic", "i16", NULL,
         "\"args\": {\"op\": \"floordiv\", \"scalar_int\": -7, \"scalar_dtype\": \"int16\"}", 0},
        {"arithmetic", "i16", NULL, "\"args\": {\"op\": \"mod\", \"scalar_int\": 5}", 0},
        {"arithmetic", "nz8", NULL,
         "\"args\": {\"op\": \"div\", \"scalar_int\": -1000, \"scalar_left\": true, "
         "\"scalar_dtype\": \"int16\"}",
         0},
        {"arithmetic", "f16", NULL,
         "\"args\": {\"op\": \"mul\", \"scalar\": 0.3, \"scalar_dtype\": \"float16\"}", 0},
        {"arithmetic", "u8", NULL,
         "\"args\": {\"op\": \"mul\", \"scalar\": 0.3, \"scalar_dtype\": \"float16\"}", 0},
        {"arithmetic", "u64", NULL,
         "\"args\": {\"op\": \"sub\", \"scalar_int\": 5, \"scalar_dtype\": \"uint64\"}", 0},
        {"arithmetic", "i64", NULL, "\"args\": {\"op\": \"lt\", \"scalar_int\": 0}", 0},
        {"arithmetic", "i8", NULL,
         "\"args\": {\"op\": \"geq\", \"scalar_int\": 3, \"scalar_dtype\": \"uint64\"}", 0},
        {"arithmetic", "u8", NULL, "\"args\": {\"op\": \"pow\", \"scalar_int\": 3}", 0},
        {"arithmetic", "i16", NULL,
         "\"args\": {\"op\": \"bitxor\", \"scalar_int\": 85, \"scalar_dtype\": \"int16\"}", 0},
        {"arithmetic", "u8", NULL, "\"args\": {\"op\": \"clamp\", \"lo\": 30.0, \"hi\": 200.0}", 0},
        {"arithmetic", "i16", NULL,
         "\"args\": {\"op\": \"clamp\", \"lo\": -50, \"hi\": 60, \"scalar_dtype\": \"int16\"}", 0},
        {"arithmetic", "f16", NULL,
         "\"args\": {\"op\": \"clamp\", \"lo\": -0.3, \"hi\": 0.2, \"scalar_dtype\": "
         "\"float16\"}",
         0},
        {"arithmetic", "f32", NULL, "\"args\": {\"op\": \"clamp\", \"lo\": 0.5, \"hi\": -0.5}", 0},
    };
    run_cases(cases, N(cases), "RGB", NULL);
    /* per-sample constants (argument inputs) and a per-channel vector broadcast over images */
    const char *uni =
        "{\"name\": \"s\", \"op\": \"random.uniform\", \"args\": {\"range\": [-3, "
        "3]}},{\"name\": \"lo\", \"op\": \"random.uniform\", \"args\": {\"range\": "
        "[-1, 0]}},{\"name\": \"hi\", \"op\": \"random.uniform\", \"args\": "
        "{\"range\": [0, 1]}},{\"name\": \"n\", \"op\": \"random.uniform\", \"args\": "
        "{\"range\": [0, 3]}},";
    static const mcase per_sample[] = {
        {"arithmetic", "u8", NULL,
         "\"args\": {\"op\": \"mul\"}, \"arg_inputs\": {\"scalar\": \"s\"}", 0},
        {"arithmetic", "f32", NULL,
         "\"args\": {\"op\": \"sub\", \"scalar_left\": true}, \"arg_inputs\": {\"scalar\": \"s\"}",
         0},
        {"arithmetic", "w32", NULL,
         "\"args\": {\"op\": \"clamp\"}, \"arg_inputs\": {\"lo\": \"lo\", \"hi\": \"hi\"}", 0},
        {"math.clamp", "f64", NULL, "\"arg_inputs\": {\"lo\": \"lo\", \"hi\": \"hi\"}", 0},
        {"math.pow", "w32", NULL, "\"arg_inputs\": {\"scalar_int\": \"n\"}", TOL_F32},
    };
    run_cases(per_sample, N(per_sample), "RGB", uni);
    static const mcase vector[] = {
        {"arithmetic", "u8", "vec3", OP("mul"), 0},
        {"arithmetic", "f32", "vec3", OP("sub"), 0},
        {"math.max", "i16", "vec3", "\"args\": {}", 0},
    };
    run_cases(vector, N(vector), "RGB", NULL);
    static const mcase tiny[] = {
        {"arithmetic", "u8", "u8", OP("sub"), 0},
        {"arithmetic", "f32", "w32", OP("mul"), 0},
    };
    run_cases(tiny, N(tiny), "TINY", NULL);
    static const mcase part[] = {
        {"arithmetic", "f32", NULL, OP("sqrt"), 0},
        {"arithmetic", "i16", NULL, "\"args\": {\"op\": \"mul\", \"scalar_int\": -3}", 0},
        {"math.clamp", "u8", NULL,
         "\"args\": {\"lo\": 20, \"hi\": 90, \"scalar_dtype\": \"uint8\"}", 0},
    };
    run_cases(part, N(part), "PART", NULL);
}

static void math_operators(void **state)
{
    static const mcase cases[] = {
        {"math.abs", "i16", NULL, "\"args\": {}", 0},
        {"math.abs", "f32", NULL, "\"args\": {}", 0},
        {"math.sqrt", "u8", NULL, "\"args\": {}", 0},
        {"math.sqrt", "f64", NULL, "\"args\": {}", 0},
        {"math.exp", "w32", NULL, "\"args\": {}", TOL_F32},
        {"math.exp", "f16", NULL, "\"args\": {}", TOL_F16},
        {"math.log", "nz8", NULL, "\"args\": {}", TOL_F32},
        {"math.log", "f64", NULL, "\"args\": {}", TOL_F64},
        {"math.clamp", "u8", NULL,
         "\"args\": {\"lo\": 20, \"hi\": 90, \"scalar_dtype\": \"uint8\"}", 0},
        {"math.clamp", "w32", NULL, "\"args\": {\"lo\": -1.5, \"hi\": 2.25}", 0},
        {"math.min", "u8", "u8", "\"args\": {}", 0},
        {"math.min", "i16", NULL, "\"args\": {\"scalar_int\": 10}", 0},
        {"math.max", "f32", "w32", "\"args\": {}", 0},
        {"math.max", "u16", "i8", "\"args\": {}", 0},
        {"math.pow", "u8", NULL, "\"args\": {\"scalar_int\": 2}", 0},
        {"math.pow", "i16", "u8", "\"args\": {}", 0},
        {"math.pow", "w32", NULL, "\"args\": {\"scalar\": 2.0}", TOL_F32},
        {"math.pow", "f32", "f32", "\"args\": {}", TOL_F32},
    };
    run_cases(cases, N(cases), "RGB", NULL);
}

/* normalize (ops/tensor/normalize.cu). Given statistics: the CPU's float32 arithmetic, exact.
 * Computed ones: the device adds the reduced elements in another order (partial sums, in double
 * like the CPU), so a float32 mean or factor may differ in its last bit: TOL_NORM = 1e-5 on
 * float32 outputs (one ulp of a mean below 256, divided by a stddev above 1, plus one ulp of the
 * factor times outputs below 32: under 1e-5), 1 on integer outputs (a value on a rounding
 * boundary), TOL_F16 on float16 outputs (one float16 ulp at 16..32). */
#define TOL_NORM 1e-5
static void normalize_gpu(void **state)
{
    static const mcase cases[] = {
        {"normalize", "u8", NULL, "\"args\": {}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\"}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"axes\": [0]}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"axes\": [1, 2], \"ddof\": 1}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\", \"batch\": true}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"batch\": true, \"epsilon\": 0.5}", TOL_NORM},
        {"normalize", "f32", NULL, "\"args\": {\"axis_names\": \"C\"}", TOL_NORM},
        {"normalize", "i16", NULL,
         "\"args\": {\"axis_names\": \"HW\", \"dtype\": \"uint8\", \"scale\": 64.0, "
         "\"shift\": 128.0}",
         1},
        {"normalize", "u8", NULL,
         "\"args\": {\"dtype\": \"int16\", \"scale\": 1000.0, \"epsilon\": 1.0}", 1},
        {"normalize", "f16", NULL, "\"args\": {\"dtype\": \"float16\"}", TOL_F16},
        {"normalize", "u8", NULL, "\"args\": {\"dtype\": \"float64\", \"axis_names\": \"W\"}",
         TOL_NORM},
        /* given statistics: exact */
        {"normalize", "u8", NULL,
         "\"args\": {\"axis_names\": \"HW\", \"mean\": [120.0, 110.5, 100.25], \"stddev\": "
         "[60.0, 55.0, 70.0]}",
         0},
        {"normalize", "u8", NULL,
         "\"args\": {\"mean\": 128.0, \"stddev\": 64.0, \"dtype\": \"uint8\", \"scale\": "
         "50.0, \"shift\": 100.0}",
         0},
        {"normalize", "f32", NULL,
         "\"args\": {\"mean\": 0.1, \"stddev\": 0.0, \"shift\": 3.0, \"dtype\": \"float16\"}", 0},
        {"normalize", "i16", NULL,
         "\"args\": {\"batch\": true, \"mean\": -3.0, \"stddev\": 50.0, \"epsilon\": 2.0, "
         "\"dtype\": \"int8\", \"scale\": 30.0}",
         0},
        /* one given, one computed */
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\", \"mean\": 100.0}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\", \"stddev\": 40.0}", TOL_NORM},
    };
    run_cases(cases, N(cases), "RGB", NULL);
    static const mcase gray[] = {
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\"}", TOL_NORM},
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\", \"batch\": true}", TOL_NORM},
    };
    run_cases(gray, N(gray), "GRAY", NULL);
    static const mcase tiny[] = {
        /* N = 1: variance 0, factor 0, output = shift */
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"HW\", \"shift\": 5.0}", 0},
        {"normalize", "u8", NULL, "\"args\": {\"axis_names\": \"C\", \"epsilon\": 1.0}", TOL_NORM},
    };
    run_cases(tiny, N(tiny), "TINY", NULL);
    static const mcase part[] = {
        /* with empty samples */
        {"normalize", "u8", NULL, "\"args\": {}", TOL_NORM},
        {"normalize", "u8", NULL,
         "\"args\": {\"batch\": true, \"dtype\": \"int16\", \"scale\": 100.0}", 1},
        {"normalize", "f32", NULL,
         "\"args\": {\"axis_names\": \"HW\", \"batch\": true, \"ddof\": 1}", TOL_NORM},
    };
    run_cases(part, N(part), "PART", NULL);
    /* per-sample statistics as argument inputs (3 values per sample) */
    const char *uni = "{\"name\": \"m\", \"op\": \"random.uniform\", \"args\": {\"range\": [50, "
                      "150], \"shape\": [3]}},{\"name\": \"sd\", \"op\": \"random.uniform\", "
                      "\"args\": {\"range\": [20, 80], \"shape\": [3]}},";
    static const mcase per_sample[] = {
        {"normalize", "u8", NULL,
         "\"args\": {\"axis_names\": \"HW\"}, \"arg_inputs\": {\"mean\": \"m\", \"stddev\": "
         "\"sd\"}",
         0},
        {"normalize", "u8", NULL,
         "\"args\": {\"axis_names\": \"HW\"}, \"arg_inputs\": {\"mean\": \"m\"}", TOL_NORM},
    };
    run_cases(per_sample, N(per_sample), "RGB", uni);
}

/* A constant integer divisor of 0 fails the GPU run as it fails the CPU run. */
static void zero_divisor_fails(void **state)
{
    mcase c = {"arithmetic", "u8", NULL, "\"args\": {\"op\": \"div\", \"scalar_int\": 0}", 0};
    for (int gpu = 0; gpu < 2; gpu++)
        tu_gpu_expect_error(build(&c, "RGB", NULL), gpu, TU_ANY_FAILURE, "arithmetic",
                            "integer division by zero in `//` (div) on int32", NULL);
}

/* A zero inside a divisor tensor fails the iteration on the GPU as on the CPU, naming the
 * first failing sample and its file (the device error flag, sl_ctx_gpu_error_flag). */
static void zero_in_divisor_tensor_fails(void **state)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"pipeline\": {\"batch_size\": 3, \"num_threads\": 2, \"prefetch_queue_depth\": 2},"
             " \"nodes\": [{\"name\": \"reader\", \"op\": \"readers.file\", \"args\": "
             "{\"file_root\": \"%s\"}},"
             " {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"$MIX\", "
             "\"inputs\": [\"reader:0\"]},"
             " {\"name\": \"z\", \"op\": \"arithmetic\", \"device\": \"$GPU\", \"inputs\": "
             "[\"dec\"], \"args\": {\"op\": \"mul\", \"scalar_int\": 0}},"
             " {\"name\": \"q\", \"op\": \"arithmetic\", \"device\": \"$GPU\", \"inputs\": "
             "[\"dec\", \"z\"], \"args\": {\"op\": \"mod\"}}],"
             " \"outputs\": [\"q\"]}",
             tu_env_dir("SLUICE_TEST_TREE"));
    char first[1024] = "";
    for (int gpu = 0; gpu < 2; gpu++) {
        sl_pipeline *p = tu_gpu_build(json, gpu);
        assert_int_equal(sl_pipeline_run(p), SL_EINVAL);
        const char *msg = sl_pipeline_error(p);
        print_message("%s: %s\n", gpu ? "gpu" : "cpu", msg);
        assert_non_null(strstr(msg, "integer division by zero"));
        assert_non_null(strstr(msg, "iteration 0, sample 0, file"));
        if (!gpu)
            snprintf(first, sizeof first, "%s", msg);
        else
            assert_string_equal(msg, first);             /* the same words on both devices */
        assert_int_equal(sl_pipeline_run(p), SL_EINVAL); /* and the next iteration too */
        sl_pipeline_destroy(p);
    }
}

int main(void)
{
    tu_gpu_require();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integer_binary),
        cmocka_unit_test(mixed_compare_and_bool),
        cmocka_unit_test(float_binary),
        cmocka_unit_test(unary_and_functions),
        cmocka_unit_test(constants_and_broadcasting),
        cmocka_unit_test(math_operators),
        cmocka_unit_test(normalize_gpu),
        cmocka_unit_test(zero_divisor_fails),
        cmocka_unit_test(zero_in_divisor_tensor_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
