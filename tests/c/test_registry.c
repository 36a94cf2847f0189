/* test_registry: the registry-wide test. Every built-in operator (src/ops/ops.def) is checked
 * against the rules its schema must follow (docs, argument types, defaults, choices, flags,
 * functions), and every operator is put in a graph with an unknown argument and with an
 * ill-typed value for each of its arguments: sl_pipeline_build must refuse each, naming the
 * operator, the node and the argument; each deprecated argument name (sl_op_def.aliases) is
 * checked as the argument it renames, or accepted and ignored. A new operator is covered
 * without editing this file.
 *
 * Expected values are the rules of include/sluice/op.h and STYLE.md ("Tests": "every op has
 * docs, documented args, rejects unknown/ill-typed args naming itself"); the few exact
 * messages are those plan.c documents (hand-written here).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "sluice/sluice.h"

static const char *g_tree; /* SLUICE_TEST_TREE: a class-folder JPEG tree (make_tree.py) */

/* ---- registry listing ------------------------------------------------------------------- */

static void test_listing(void **state)
{
    (void)state;
    int n = sl_registry_count();
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        const sl_op_def *op = sl_registry_get(i);
        assert_non_null(op);
        assert_non_null(op->name);
        /* Sorted by name, names unique (strictly increasing). */
        if (i > 0)
            assert_true(strcmp(sl_registry_get(i - 1)->name, op->name) < 0);
        assert_ptr_equal(sl_registry_find(op->name), op);
    }
    assert_null(sl_registry_get(-1));
    assert_null(sl_registry_get(n));
    assert_null(sl_registry_find("no.such_op"));
    assert_null(sl_registry_find(""));
    assert_null(sl_registry_find(NULL));
    /* Operators of the DESIGN.md examples exist under their dotted names. */
    assert_non_null(sl_registry_find("readers.file"));
    assert_non_null(sl_registry_find("decoders.image"));
    assert_non_null(sl_registry_find("crop_mirror_normalize"));
    assert_non_null(sl_registry_find("random.coin_flip"));
    /* A prefix or a different case is not a name. */
    assert_null(sl_registry_find("readers"));
    assert_null(sl_registry_find("Readers.File"));

    /* Type names: one per type, as the header lists them. */
    assert_string_equal(sl_arg_type_name(SL_ARG_BOOL), "bool");
    assert_string_equal(sl_arg_type_name(SL_ARG_INT), "int");
    assert_string_equal(sl_arg_type_name(SL_ARG_FLOAT), "float");
    assert_string_equal(sl_arg_type_name(SL_ARG_STRING), "string");
    assert_string_equal(sl_arg_type_name(SL_ARG_DTYPE), "dtype");
    assert_string_equal(sl_arg_type_name(SL_ARG_INTS), "list of int");
    assert_string_equal(sl_arg_type_name(SL_ARG_FLOATS), "list of float");
    assert_string_equal(sl_arg_type_name(SL_ARG_STRINGS), "list of string");
    assert_string_equal(sl_arg_type_name((sl_arg_type)99), "?");
}

/* ---- schema rules ----------------------------------------------------------------------- */

/* Reports a broken rule of operator op (and argument arg, if any) and counts it, so one run
 * lists every problem instead of stopping at the first. */
static int g_problems;
static bool g_quiet; /* test_checker_finds_problems: count, do not print */
static void problem(const sl_op_def *op, const char *arg, const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!g_quiet)
        print_error("%s%s%s%s: %s\n", op->name, arg ? " (argument \"" : "", arg ? arg : "",
                    arg ? "\")" : "", msg);
    g_problems++;
}

/* lower-case identifier: [a-z][a-z0-9_]* */
static bool is_ident(const char *s, size_t len)
{
    if (len == 0 || !islower((unsigned char)s[0]))
        return false;
    for (size_t k = 1; k < len; k++)
        if (!islower((unsigned char)s[k]) && !isdigit((unsigned char)s[k]) && s[k] != '_')
            return false;
    return true;
}

/* An argument's name: an identifier [A-Za-z][A-Za-z0-9_]*. Upper case is allowed because DALI
 * spells some arguments so (coord_transform's M, T and MT) and sluice keeps DALI's names. */
static bool is_arg_ident(const char *s, size_t len)
{
    if (len == 0 || !isalpha((unsigned char)s[0]))
        return false;
    for (size_t k = 1; k < len; k++)
        if (!isalnum((unsigned char)s[k]) && s[k] != '_')
            return false;
    return true;
}

/* Dotted name: identifiers separated by single dots ("decoders.image", "crop_mirror_normalize");
 * an internal operator's starts with an underscore, as DALI's do ("_conditional.split"). */
static bool is_op_name(const char *s)
{
    if (s[0] == '_')
        s++;
    for (;;) {
        const char *dot = strchr(s, '.');
        size_t len = dot ? (size_t)(dot - s) : strlen(s);
        if (!is_ident(s, len))
            return false;
        if (!dot)
            return true;
        s = dot + 1;
    }
}

/* A doc's first line is a sentence: starts with a capital letter (or a quote, a backtick, a
 * digit), ends with a full stop, and is not just a word. */
static bool first_line_is_sentence(const char *doc, char *line, size_t cap)
{
    size_t len = strcspn(doc, "\n");
    snprintf(line, cap, "%.*s", (int)len, doc);
    if (len < 8)
        return false;
    unsigned char c = (unsigned char)doc[0];
    if (!isupper(c) && !isdigit(c) && c != '`' && c != '"')
        return false;
    return doc[len - 1] == '.' && strchr(line, ' ') != NULL;
}

static bool in_choices(const char *choices, const char *s)
{
    size_t len = strlen(s);
    for (const char *c = choices; *c;) {
        const char *bar = strchr(c, '|');
        size_t clen = bar ? (size_t)(bar - c) : strlen(c);
        if (clen == len && strncmp(c, s, len) == 0)
            return true;
        if (!bar)
            break;
        c = bar + 1;
    }
    return false;
}

static bool is_list_type(sl_arg_type t)
{
    return t == SL_ARG_INTS || t == SL_ARG_FLOATS || t == SL_ARG_STRINGS;
}

static bool is_numeric_type(sl_arg_type t)
{
    return t == SL_ARG_INT || t == SL_ARG_FLOAT || t == SL_ARG_INTS || t == SL_ARG_FLOATS;
}

/* The default's own check: its text parses and coerces here, independently of the registry,
 * and the registry holds the same value. */
static void check_default(const sl_op_def *op, int a, const sl_arg_def *def)
{
    static const sl__value none;
    /* (Operators made up by test_checker_finds_problems are not in the registry.) */
    const sl__value *reg = sl_registry_find(op->name) == op ? sl__registry_default(op, a) : NULL;
    if (!reg && sl_registry_find(op->name) == op)
        fail_msg("%s: sl__registry_default returned NULL (out of memory)", op->name);
    bool registered = reg != NULL;
    if (!reg)
        reg = &none;
    if (!def->def) {
        if (reg->kind != SL__V_NONE)
            problem(op, def->name, "no default text, but the registry holds a value");
        return;
    }
    sl__value raw, mine;
    char err[512], want[512], got[512];
    if (sl__value_parse_json(def->def, &raw, err, sizeof err) != SL_OK) {
        problem(op, def->name, "default %s is not JSON: %s", def->def, err);
        return;
    }
    if (sl__value_coerce(&raw, def, &mine, err, sizeof err) != SL_OK) {
        problem(op, def->name, "default %s does not fit the argument: %s", def->def, err);
    } else if (!registered) {
        /* nothing to compare with */
    } else if (reg->kind == SL__V_NONE) {
        problem(op, def->name, "default %s: the registry holds no value", def->def);
    } else {
        sl__value_to_json(&mine, want, sizeof want);
        sl__value_to_json(reg, got, sizeof got);
        if (reg->kind != mine.kind || strcmp(want, got) != 0)
            problem(op, def->name, "default %s: registry holds %s, expected %s", def->def, got,
                    want);
    }
    /* A choices default is among the choices (coercion checks it too; this says so plainly). */
    if (def->choices && raw.kind == SL__V_STRING && !in_choices(def->choices, raw.s))
        problem(op, def->name, "default %s is not one of %s", def->def, def->choices);
    for (int k = 0; def->choices && raw.kind == SL__V_STRINGS && k < raw.n; k++)
        if (!in_choices(def->choices, raw.strs[k]))
            problem(op, def->name, "default element \"%s\" is not one of %s", raw.strs[k],
                    def->choices);
    sl__value_fini(&mine);
    sl__value_fini(&raw);
}

static void check_arg(const sl_op_def *op, int a)
{
    const sl_arg_def *def = sl_op_arg(op, a);
    assert_non_null(def);
    const char *name = def->name ? def->name : "(null)";
    if (!def->name || !is_arg_ident(def->name, strlen(def->name)))
        problem(op, name, "argument name is not an identifier");
    if ((unsigned)def->type > SL_ARG_STRINGS)
        problem(op, name, "invalid type %d", (int)def->type);
    if (!def->doc || !def->doc[0] || isspace((unsigned char)def->doc[0]))
        problem(op, name, "argument has no doc");
    if (sl_op_arg_index(op, name) != a)
        problem(op, name, "argument name is not unique (index %d, first found at %d)", a,
                sl_op_arg_index(op, name));
    if ((def->flags & SL_ARG_OPTIONAL) && def->def)
        problem(op, name, "SL_ARG_OPTIONAL (no default) but has default %s", def->def);
    if (def->choices) {
        if (def->type != SL_ARG_STRING && def->type != SL_ARG_STRINGS)
            problem(op, name, "choices on a %s argument", sl_arg_type_name(def->type));
        if (!def->choices[0] || strstr(def->choices, "||") || def->choices[0] == '|' ||
            def->choices[strlen(def->choices) - 1] == '|')
            problem(op, name, "choices \"%s\" has an empty choice", def->choices);
    }
    if (def->flags & SL_ARG_RANGE) {
        if (!is_numeric_type(def->type))
            problem(op, name, "SL_ARG_RANGE on a %s argument", sl_arg_type_name(def->type));
        if (!(def->min <= def->max))
            problem(op, name, "range [%g, %g] is empty", def->min, def->max);
    }
    if ((def->flags & SL_ARG_SCALAR_OK) && !is_list_type(def->type))
        problem(op, name, "SL_ARG_SCALAR_OK on a %s argument", sl_arg_type_name(def->type));
    if ((def->min_len || def->max_len) && !is_list_type(def->type))
        problem(op, name, "list lengths on a %s argument", sl_arg_type_name(def->type));
    if (def->min_len < 0 || def->max_len < 0 || (def->max_len && def->min_len > def->max_len))
        problem(op, name, "list lengths [%d, %d] are invalid", def->min_len, def->max_len);
    /* Argument inputs are numeric batches (sl__ctx_check_arg_inputs reads them as numbers). */
    if ((def->flags & SL_ARG_TENSOR) && !is_numeric_type(def->type) && def->type != SL_ARG_BOOL)
        problem(op, name, "SL_ARG_TENSOR on a %s argument", sl_arg_type_name(def->type));
    unsigned autos = def->flags & (SL_ARG_AUTO_RANK | SL_ARG_AUTO_WORLD_SIZE);
    if (autos && (def->type != SL_ARG_INT || autos == (SL_ARG_AUTO_RANK | SL_ARG_AUTO_WORLD_SIZE)))
        problem(op, name, "SL_ARG_AUTO_* on a %s argument, or both", sl_arg_type_name(def->type));
    if ((def->flags & SL_ARG_OWN_CHECK) && !(def->flags & SL_ARG_TENSOR))
        problem(op, name, "SL_ARG_OWN_CHECK without SL_ARG_TENSOR");
    if (def->flags & ~(unsigned)(SL_ARG_TENSOR | SL_ARG_OPTIONAL | SL_ARG_RANGE | SL_ARG_SCALAR_OK |
                                 SL_ARG_AUTO_RANK | SL_ARG_AUTO_WORLD_SIZE | SL_ARG_OWN_CHECK))
        problem(op, name, "unknown flags 0x%x", def->flags);
    check_default(op, a, def);
}

static void check_io(const sl_op_def *op, const sl_io_def *io, const char *what, int k)
{
    char label[32];
    snprintf(label, sizeof label, "%s %d", what, k);
    if (!io->name || !is_ident(io->name, strlen(io->name)))
        problem(op, label, "has no lower-case name");
    if (!io->doc || !io->doc[0])
        problem(op, label, "has no doc");
    /* op.h: an optional output's condition names a bool argument that is never per sample, and
     * a number of inputs the operator may or may not have */
    const sl_output_when *w =
        strcmp(what, "output") || !op->output_when ? NULL : &op->output_when[k];
    if (w && w->arg) {
        int a = sl_op_arg_index(op, w->arg);
        sl_arg_type want = w->in_range ? SL_ARG_INT : w->unless ? SL_ARG_STRING : SL_ARG_BOOL;
        if (a < 0 || sl_op_arg(op, a)->type != want || (sl_op_arg(op, a)->flags & SL_ARG_TENSOR))
            problem(op, label, "output_when arg \"%s\" is not a constant %s argument", w->arg,
                    w->in_range ? "int"
                    : w->unless ? "string"
                                : "bool");
        if (w->in_range && w->lo > w->hi)
            problem(op, label, "output_when range [%lld, %lld] is empty", (long long)w->lo,
                    (long long)w->hi);
    }
    if (w && w->inputs &&
        (w->inputs < 0 || (op->max_inputs != SL_INPUTS_ANY && w->inputs > op->max_inputs) ||
         w->inputs <= op->min_inputs))
        problem(op, label, "output_when inputs %d is not a number of inputs that may be absent",
                w->inputs);
}

static void check_op(const sl_op_def *op)
{
    char line[512];
    if (!is_op_name(op->name))
        problem(op, NULL, "name is not dotted lower-case identifiers");
    if (!op->doc || !op->doc[0])
        problem(op, NULL, "no doc");
    else if (!first_line_is_sentence(op->doc, line, sizeof line))
        problem(op, NULL, "the doc's first line is not a sentence: \"%s\"", line);

    /* Inputs and outputs. */
    bool any_inputs = op->max_inputs == SL_INPUTS_ANY;
    if (op->min_inputs < 0 || (!any_inputs && op->min_inputs > op->max_inputs))
        problem(op, NULL, "min_inputs %d > max_inputs %d", op->min_inputs, op->max_inputs);
    if ((op->max_inputs > 0 || any_inputs) && !op->inputs)
        problem(op, NULL, "takes inputs but describes none");
    /* op.h: `inputs` has max_inputs entries (variadic: max(min_inputs, 1)), `outputs`
     * num_outputs. */
    for (int k = 0; op->inputs && k < sl_op_num_input_defs(op); k++)
        check_io(op, &op->inputs[k], "input", k);
    if (op->num_outputs < 0 || (op->num_outputs > 0 && !op->outputs))
        problem(op, NULL, "num_outputs %d without descriptions", op->num_outputs);
    for (int k = 0; op->outputs && k < op->num_outputs; k++)
        check_io(op, &op->outputs[k], "output", k);

    /* Devices, flags, functions. */
    if (!op->devices || (op->devices & ~(unsigned)(SL_OP_CPU | SL_OP_MIXED | SL_OP_GPU)))
        problem(op, NULL, "devices 0x%x", op->devices);
    if (op->flags & ~(unsigned)(SL_OP_SOURCE | SL_OP_STATEFUL | SL_OP_RANDOM | SL_OP_SIDE_EFFECTS |
                                SL_OP_TRANSFER | SL_OP_SAMPLEWISE | SL_OP_METADATA |
                                SL_OP_CALLBACK | SL_OP_MIXED_GPU))
        problem(op, NULL, "unknown flags 0x%x", op->flags);
    /* op.h: an operator finishing its mixed work on the device runs there, with run_gpu */
    if ((op->flags & SL_OP_MIXED_GPU) && !(op->devices & SL_OP_MIXED))
        problem(op, NULL, "SL_OP_MIXED_GPU without device mixed");
#ifdef SLUICE_HAVE_CUDA
    if ((op->flags & SL_OP_MIXED_GPU) && !op->run_gpu)
        problem(op, NULL, "SL_OP_MIXED_GPU without run_gpu");
#endif
    /* the application's function runs once per iteration, in order, and is never pruned */
    if ((op->flags & SL_OP_CALLBACK) && (op->flags & (SL_OP_STATEFUL | SL_OP_SIDE_EFFECTS)) !=
                                            (SL_OP_STATEFUL | SL_OP_SIDE_EFFECTS))
        problem(op, NULL, "SL_OP_CALLBACK without SL_OP_STATEFUL and SL_OP_SIDE_EFFECTS");
    /* op.h: the argument that gives the number of outputs is an int from 0, with a default,
     * constant (the graph needs the count before any iteration), and one description serves
     * every output */
    if (op->num_outputs_arg) {
        int a = sl_op_arg_index(op, op->num_outputs_arg);
        const sl_arg_def *def = sl_op_arg(op, a);
        const bool count = def && def->type == SL_ARG_INT && (def->flags & SL_ARG_RANGE) &&
                           def->min >= 0 && def->def;
        const bool list = def && (def->type == SL_ARG_INTS || def->type == SL_ARG_STRINGS) &&
                          !def->def &&
                          !(def->flags & SL_ARG_OPTIONAL); /* required: its length counts */
        if (!(count || list) || (def->flags & SL_ARG_TENSOR) || op->num_outputs != 1)
            problem(op, op->num_outputs_arg,
                    "num_outputs_arg is not a constant int argument with a range from 0 and a "
                    "default, or a required constant list of int or string, with one output "
                    "description");
    }
    /* sample fusion runs it sample by sample after its producer: it must be per sample */
    if ((op->flags & SL_OP_SAMPLEWISE) &&
        (!op->run_sample || (op->flags & (SL_OP_SOURCE | SL_OP_STATEFUL)) || op->min_inputs < 1))
        problem(op, NULL, "SL_OP_SAMPLEWISE on an operator that is not per sample with inputs");
    if ((op->flags & SL_OP_METADATA) && (op->min_inputs < 1 || !(op->devices & SL_OP_CPU)))
        problem(op, NULL, "SL_OP_METADATA on an operator without inputs or a CPU implementation");
    if (op->roi_sample && !(op->flags & SL_OP_SAMPLEWISE))
        problem(op, NULL, "roi_sample without SL_OP_SAMPLEWISE (it is called in fused chains)");
    /* a transfer copies its one input unchanged: anything else would break DataNode.cpu() */
    if ((op->flags & SL_OP_TRANSFER) && (op->min_inputs != 1 || op->max_inputs != 1 ||
                                         op->num_outputs != 1 || strcmp(op->name, "copy") != 0))
        problem(op, NULL, "SL_OP_TRANSFER on an operator that is not copy-shaped");
    if (!op->setup)
        problem(op, NULL, "no setup");
    if (!op->run_sample == !op->run_batch)
        problem(op, NULL, "needs exactly one of run_sample and run_batch");
    if (op->fini && !op->init)
        problem(op, NULL, "fini without init (state only comes from init)");
    if (op->num_args < 0 || (op->num_args > 0 && !op->args))
        problem(op, NULL, "num_args %d without definitions", op->num_args);

    /* Arguments, the common ones included. */
    assert_int_equal(sl_op_num_args(op), op->num_args + 1);
    assert_null(sl_op_arg(op, -1));
    assert_null(sl_op_arg(op, sl_op_num_args(op)));
    assert_int_equal(sl_op_arg_index(op, "bogus_arg"), -1);
    assert_int_equal(sl_op_arg_index(op, NULL), -1);
    int preserve = sl_op_arg_index(op, "preserve");
    if (preserve < op->num_args)
        problem(op, "preserve", "the operator's own argument hides the common one");
    else if (sl_op_arg(op, preserve)->type != SL_ARG_BOOL)
        problem(op, "preserve", "is not a bool");
    for (int a = 0; a < sl_op_num_args(op); a++)
        check_arg(op, a);

    /* Deprecated names: not an argument's own name, renaming one of the operator's
     * arguments, and found by name. */
    if (op->num_aliases < 0 || (op->num_aliases > 0 && !op->aliases))
        problem(op, NULL, "num_aliases %d without definitions", op->num_aliases);
    for (int k = 0; op->aliases && k < op->num_aliases; k++) {
        const sl_arg_alias *al = &op->aliases[k];
        if (!al->name || sl_op_arg_index(op, al->name) >= 0)
            problem(op, al->name, "a deprecated name that is also an argument's name");
        else if (sl_op_find_alias(op, al->name) != al)
            problem(op, al->name, "a deprecated name given twice");
        if (al->renamed_to && sl_op_arg_index(op, al->renamed_to) < 0)
            problem(op, al->name, "renames \"%s\", which the operator does not have",
                    al->renamed_to);
    }

    /* A random operator has the common seed argument (SL_ARG_SEED_DEF). */
    int seed = sl_op_arg_index(op, "seed");
    if ((op->flags & SL_OP_RANDOM) &&
        (seed < 0 || sl_op_arg(op, seed)->type != SL_ARG_INT || !sl_op_arg(op, seed)->def ||
         strcmp(sl_op_arg(op, seed)->def, "-1") != 0))
        problem(op, NULL, "SL_OP_RANDOM without an int `seed` argument defaulting to -1");
}

static void test_schemas(void **state)
{
    (void)state;
    g_problems = 0;
    g_quiet = false;
    for (int i = 0; i < sl_registry_count(); i++)
        check_op(sl_registry_get(i));
    /* Out of range: the registry's default lookup gives "no value", never a crash. */
    const sl_op_def *op = sl_registry_get(0);
    assert_int_equal(sl__registry_default(op, -1)->kind, SL__V_NONE);
    assert_int_equal(sl__registry_default(op, sl_op_num_args(op))->kind, SL__V_NONE);
    assert_int_equal(g_problems, 0);
}

/* The checks above have teeth: made-up operators, each breaking one rule, are caught; a
 * well-formed one passes. */
static sl_status fake_setup(sl_ctx *ctx)
{
    (void)ctx;
    return SL_OK;
}

static sl_status fake_run_sample(sl_ctx *ctx, int sample)
{
    (void)ctx, (void)sample;
    return SL_OK;
}

static sl_status fake_run_batch(sl_ctx *ctx)
{
    (void)ctx;
    return SL_OK;
}

static int problems_of(const sl_op_def *op)
{
    g_problems = 0;
    g_quiet = true;
    check_op(op);
    g_quiet = false;
    return g_problems;
}

static void test_checker_finds_problems(void **state)
{
    (void)state;
    static const sl_io_def io[] = {{"data", "Some data."}};
    static const sl_io_def io_nodoc[] = {{"data", ""}};
    static const sl_arg_def good_args[] = {
        {.name = "size",
         .type = SL_ARG_INTS,
         .doc = "A size.",
         .flags = SL_ARG_OPTIONAL,
         .min_len = 2,
         .max_len = 2},
        {.name = "mode", .type = SL_ARG_STRING, .doc = "A mode.", .def = "\"a\"", .choices = "a|b"},
    };
    const sl_op_def good = {.name = "fake.good_op",
                            .doc = "Does nothing at all.\n\nA made-up operator.",
                            .inputs = io,
                            .min_inputs = 1,
                            .max_inputs = 1,
                            .outputs = io,
                            .num_outputs = 1,
                            .args = good_args,
                            .num_args = 2,
                            .devices = SL_OP_CPU,
                            .setup = fake_setup,
                            .run_sample = fake_run_sample};
    assert_int_equal(problems_of(&good), 0);

    sl_op_def bad;
#define EXPECT_CAUGHT(field_change)                                                                \
    do {                                                                                           \
        bad = good;                                                                                \
        field_change;                                                                              \
        if (problems_of(&bad) == 0)                                                                \
            fail_msg("not caught: %s", #field_change);                                             \
    } while (0)
    EXPECT_CAUGHT(bad.name = "Fake.Bad");
    EXPECT_CAUGHT(bad.name = "fake..bad");
    EXPECT_CAUGHT(bad.doc = "does nothing at all.");
    EXPECT_CAUGHT(bad.doc = "Does nothing at all\nsecond line.");
    EXPECT_CAUGHT(bad.doc = "");
    EXPECT_CAUGHT(bad.doc = NULL);
    EXPECT_CAUGHT(bad.min_inputs = 2);
    EXPECT_CAUGHT(bad.inputs = NULL);
    EXPECT_CAUGHT(bad.inputs = io_nodoc);
    EXPECT_CAUGHT(bad.outputs = io_nodoc);
    EXPECT_CAUGHT(bad.devices = 0);
    EXPECT_CAUGHT(bad.flags = SL_OP_RANDOM); /* no seed argument */
    EXPECT_CAUGHT(bad.setup = NULL);
    EXPECT_CAUGHT(bad.run_batch = fake_run_batch);
    EXPECT_CAUGHT(bad.run_sample = NULL);
    EXPECT_CAUGHT(bad.fini = free);
    EXPECT_CAUGHT(bad.max_inputs = SL_INPUTS_ANY; bad.inputs = NULL);
    static const sl_arg_alias clash[] = {{"mode", "size", NULL}};
    static const sl_arg_alias dangling[] = {{"old_size", "no_such_arg", NULL}};
    static const sl_arg_alias twice[] = {{"old_size", "size", NULL}, {"old_size", NULL, NULL}};
    EXPECT_CAUGHT(bad.aliases = clash; bad.num_aliases = 1);
    EXPECT_CAUGHT(bad.aliases = dangling; bad.num_aliases = 1);
    EXPECT_CAUGHT(bad.aliases = twice; bad.num_aliases = 2);
    EXPECT_CAUGHT(bad.num_aliases = 1);          /* no table */
    EXPECT_CAUGHT(bad.flags = SL_OP_CALLBACK);   /* neither stateful nor kept */
    EXPECT_CAUGHT(bad.num_outputs_arg = "mode"); /* a string */
    EXPECT_CAUGHT(bad.num_outputs_arg = "size"); /* a list, but optional */
    EXPECT_CAUGHT(bad.num_outputs_arg = "no_such_arg");
    static const sl_arg_def counted[] = {{.name = "n",
                                          .type = SL_ARG_INT,
                                          .def = "1",
                                          .doc = "How many outputs.",
                                          .flags = SL_ARG_RANGE,
                                          .min = 0,
                                          .max = 4}};
#define COUNTED bad.args = counted, bad.num_args = 1, bad.num_outputs_arg = "n"
    static const sl_io_def two[] = {{"a", "One."}, {"b", "Two."}};
    EXPECT_CAUGHT(COUNTED; bad.outputs = two; bad.num_outputs = 2); /* one describes them all */
    bad = good;
    COUNTED;
    assert_int_equal(problems_of(&bad), 0);
#undef COUNTED
    /* a required constant list counts by its length (element_extract's element_map) */
    static const sl_arg_def listed[] = {
        {.name = "map", .type = SL_ARG_INTS, .doc = "One output per value."}};
    bad = good;
    bad.args = listed, bad.num_args = 1, bad.num_outputs_arg = "map";
    assert_int_equal(problems_of(&bad), 0);
    static const sl_arg_alias fine[] = {{"old_size", "size", NULL}, {"gone", NULL, NULL}};
    bad = good;
    bad.aliases = fine;
    bad.num_aliases = 2;
    bad.max_inputs = SL_INPUTS_ANY;
    assert_int_equal(problems_of(&bad), 0);

    /* Argument rules, one broken argument each. */
    static const sl_arg_def bad_args[][1] = {
        {{.name = "2size", .type = SL_ARG_INT, .doc = "x.", .def = "1"}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "", .def = "1"}},
        {{.name = "size", .type = (sl_arg_type)42, .doc = "x.", .flags = SL_ARG_OPTIONAL}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "x.", .def = "1", .flags = SL_ARG_OPTIONAL}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "x.", .def = "1.5"}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "x.", .def = "[1"}},
        {{.name = "size",
          .type = SL_ARG_INT,
          .doc = "x.",
          .def = "20",
          .flags = SL_ARG_RANGE,
          .min = 0,
          .max = 10}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "x.", .def = "1", .choices = "1|2"}},
        {{.name = "mode", .type = SL_ARG_STRING, .doc = "x.", .def = "\"c\"", .choices = "a|b"}},
        {{.name = "mode", .type = SL_ARG_STRING, .doc = "x.", .def = "\"a\"", .choices = "a||b"}},
        {{.name = "mode",
          .type = SL_ARG_STRING,
          .doc = "x.",
          .def = "\"a\"",
          .flags = SL_ARG_RANGE}},
        {{.name = "mode",
          .type = SL_ARG_STRING,
          .doc = "x.",
          .def = "\"a\"",
          .flags = SL_ARG_TENSOR}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "x.", .def = "1", .flags = SL_ARG_SCALAR_OK}},
        {{.name = "size", .type = SL_ARG_INT, .doc = "x.", .def = "1", .min_len = 2}},
        {{.name = "size",
          .type = SL_ARG_INTS,
          .doc = "x.",
          .def = "[1, 2]",
          .min_len = 3,
          .max_len = 2}},
        {{.name = "size",
          .type = SL_ARG_FLOAT,
          .doc = "x.",
          .def = "0.5",
          .flags = SL_ARG_RANGE,
          .min = 1,
          .max = 0}},
        {{.name = "preserve", .type = SL_ARG_BOOL, .doc = "x.", .def = "true"}},
        {{.name = "seed", .type = SL_ARG_FLOAT, .doc = "x.", .def = "-1"}},
    };
    for (size_t k = 0; k < sizeof bad_args / sizeof bad_args[0]; k++) {
        bad = good;
        bad.args = bad_args[k];
        bad.num_args = 1;
        if (strcmp(bad_args[k][0].name, "seed") == 0)
            bad.flags = SL_OP_RANDOM; /* a seed that is not an int */
        if (problems_of(&bad) == 0)
            fail_msg("bad argument %d (\"%s\") not caught", (int)k, bad_args[k][0].name);
    }
#undef EXPECT_CAUGHT
    g_problems = 0;
}

/* ---- every operator refuses bad arguments at build, naming itself --------------------- */

/* A graph holding operator `op` as node "t": ops with inputs read them from a readers.file
 * node "reader" over the test tree (argument checks come before any data is read). */
static sl_graph *graph_for(const sl_op_def *op)
{
    sl_graph *g;
    assert_int_equal(sl_graph_create(&g), SL_OK);
    if (op->min_inputs > 0) {
        assert_int_equal(sl_graph_add(g, "readers.file", "reader", NULL), SL_OK);
        assert_int_equal(sl_graph_arg_str(g, "reader", "file_root", g_tree), SL_OK);
    }
    const char *device = (op->devices & SL_OP_CPU)     ? "cpu"
                         : (op->devices & SL_OP_MIXED) ? "mixed"
                                                       : "gpu";
    assert_int_equal(sl_graph_add(g, op->name, "t", device), SL_OK);
    for (int k = 0; k < op->min_inputs; k++)
        assert_int_equal(sl_graph_input(g, "t", "reader:0"), SL_OK);
    assert_int_equal(
        sl_graph_output(g, op->num_outputs > 0 || op->min_inputs == 0 ? "t" : "reader"), SL_OK);
    return g;
}

/* Builds g; expects SL_EINVAL with a message that names op, node "t" and `needle`. */
static void expect_build_error(sl_graph *g, const sl_op_def *op, const char *needle,
                               const char *what)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 2, o.num_threads = 1, o.prefetch_queue_depth = 1;
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    sl_status st = sl_pipeline_build(p);
    const char *msg = sl_pipeline_error(p);
    char node[16];
    snprintf(node, sizeof node, "node \"t\"");
    if (st != SL_EINVAL || !strstr(msg, op->name) || !strstr(msg, node) || !strstr(msg, needle)) {
        print_error("%s with %s: build gave %s: \"%s\"; expected SL_EINVAL naming the operator, "
                    "the node and %s\n",
                    op->name, what, sl_status_name(st), msg, needle);
        g_problems++;
    } else {
        sl_error_detail d;
        sl_pipeline_error_detail(p, &d);
        if (d.code != SL_EINVAL || !d.op || strcmp(d.op, op->name) != 0 || !d.node ||
            strcmp(d.node, "t") != 0 || d.iteration != -1 || d.sample != -1) {
            print_error("%s with %s: error detail does not name the operator and node\n", op->name,
                        what);
            g_problems++;
        }
    }
    /* Building again fails the same way (the schema check has no side effects). */
    if (st != SL_OK)
        assert_int_equal(sl_pipeline_build(p), st);
    sl_pipeline_destroy(p);
}

static void test_unknown_argument(void **state)
{
    (void)state;
    g_problems = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        sl_graph *g = graph_for(op);
        assert_int_equal(sl_graph_arg_int(g, "t", "bogus_arg", 1), SL_OK);
        expect_build_error(g, op, "\"bogus_arg\"", "unknown argument bogus_arg");
        sl_graph_destroy(g);
    }
    /* The exact wording for one operator (plan.c check_args). */
    sl_graph *g = graph_for(sl_registry_find("decoders.image"));
    assert_int_equal(sl_graph_arg_int(g, "t", "bogus_arg", 1), SL_OK);
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, NULL, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p),
                        "decoders.image (node \"t\"): unknown argument \"bogus_arg\"");
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    assert_int_equal(g_problems, 0);
}

/* Sets argument `name` of node "t" to a value of the wrong type for `type`: a string where a
 * bool or a number (or a list of numbers) is wanted, a number where a string, dtype or list
 * of strings is. */
static const char *set_ill_typed(sl_graph *g, const char *name, sl_arg_type type)
{
    switch (type) {
    case SL_ARG_STRING:
    case SL_ARG_DTYPE:
    case SL_ARG_STRINGS: assert_int_equal(sl_graph_arg_int(g, "t", name, 3), SL_OK); return "int 3";
    default:
        assert_int_equal(sl_graph_arg_str(g, "t", name, "oops"), SL_OK);
        return "string \"oops\"";
    }
}

static void test_ill_typed_arguments(void **state)
{
    (void)state;
    g_problems = 0;
    int checked = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        for (int a = 0; a < sl_op_num_args(op); a++) {
            const sl_arg_def *def = sl_op_arg(op, a);
            sl_graph *g = graph_for(op);
            char what[128], needle[96];
            snprintf(what, sizeof what, "argument %s = %s", def->name,
                     set_ill_typed(g, def->name, def->type));
            snprintf(needle, sizeof needle, "argument \"%s\"", def->name);
            expect_build_error(g, op, needle, what);
            sl_graph_destroy(g);
            checked++;
        }
    }
    print_message("%d arguments of %d operators checked\n", checked, sl_registry_count());
    /* The exact wording for one case (plan.c check_args + value.c type_error). */
    sl_graph *g = graph_for(sl_registry_find("crop_mirror_normalize"));
    assert_int_equal(sl_graph_arg_str(g, "t", "crop_pos_x", "left"), SL_OK);
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, NULL, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p), "crop_mirror_normalize (node \"t\"): argument "
                                              "\"crop_pos_x\": expected float, got string");
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    assert_int_equal(g_problems, 0);
}

/* Deprecated argument names (sl_op_def.aliases), for every operator that has some: a renamed
 * one is checked as the argument it renames and named in the message, one given with its
 * current name is refused, an ignored one builds. Then one case exactly: crop_mirror_normalize's
 * output_dtype is its dtype (plan.c check_args, sl__op_arg_resolve). */
static void test_deprecated_names(void **state)
{
    (void)state;
    g_problems = 0;
    int checked = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        for (int k = 0; k < op->num_aliases; k++) {
            const sl_arg_alias *al = &op->aliases[k];
            sl_graph *g = graph_for(op);
            char what[128], needle[96];
            checked++;
            if (!al->renamed_to) {
                assert_int_equal(sl__op_arg_resolve(op, al->name, NULL), SL__ARG_IGNORED);
                assert_int_equal(sl_graph_arg_int(g, "t", al->name, 7), SL_OK);
                sl_pipeline *p;
                assert_int_equal(sl_pipeline_create(g, NULL, &p), SL_OK);
                /* it builds, or fails for something else (resize without a size) */
                if (sl_pipeline_build(p) != SL_OK && strstr(sl_pipeline_error(p), al->name)) {
                    print_error("%s: ignored name %s: %s\n", op->name, al->name,
                                sl_pipeline_error(p));
                    g_problems++;
                }
                sl_pipeline_destroy(p);
                sl_graph_destroy(g);
                continue;
            }
            int a = sl_op_arg_index(op, al->renamed_to);
            assert_int_equal(sl__op_arg_resolve(op, al->name, NULL), a);
            snprintf(what, sizeof what, "alias %s = %s", al->name,
                     set_ill_typed(g, al->name, sl_op_arg(op, a)->type));
            snprintf(needle, sizeof needle, "argument \"%s\"", al->name);
            expect_build_error(g, op, needle, what);
            sl_graph_destroy(g);
            g = graph_for(op);
            set_ill_typed(g, al->name, sl_op_arg(op, a)->type);
            set_ill_typed(g, al->renamed_to, sl_op_arg(op, a)->type);
            expect_build_error(g, op, "is a deprecated alias for", "alias and its argument");
            sl_graph_destroy(g);
        }
    }
    assert_true(checked >= 10);
    assert_int_equal(g_problems, 0);

    const sl_op_def *cmn = sl_registry_find("crop_mirror_normalize");
    char msg[256];
    assert_string_equal(
        sl_arg_alias_message(sl_op_find_alias(cmn, "output_dtype"), msg, sizeof msg),
        "The argument ``output_dtype`` is a deprecated alias for ``dtype``. Use "
        "``dtype`` instead.");
    assert_string_equal(sl_arg_alias_message(sl_op_find_alias(cmn, "image_type"), msg, sizeof msg),
                        "The argument ``image_type`` is no longer used and will be removed in a "
                        "future release.");
    assert_null(sl_op_find_alias(cmn, "dtype"));
    assert_int_equal(sl__op_arg_resolve(cmn, "bogus", NULL), -1);
    sl_graph *g = graph_for(cmn);
    assert_int_equal(sl_graph_arg_str(g, "t", "output_dtype", "float16"), SL_OK);
    assert_int_equal(sl_graph_arg_str(g, "t", "dtype", "float32"), SL_OK);
    sl_pipeline *p;
    assert_int_equal(sl_pipeline_create(g, NULL, &p), SL_OK);
    assert_int_equal(sl_pipeline_build(p), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p),
                        "crop_mirror_normalize (node \"t\"): argument \"output_dtype\" is a "
                        "deprecated alias for \"dtype\", which is given too");
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

int main(void)
{
    g_tree = getenv("SLUICE_TEST_TREE");
    if (!g_tree || !*g_tree) {
        fprintf(stderr, "SLUICE_TEST_TREE is not set: run this test through ctest\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_checker_finds_problems),
        cmocka_unit_test(test_unknown_argument),
        cmocka_unit_test(test_ill_typed_arguments),
        cmocka_unit_test(test_deprecated_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
