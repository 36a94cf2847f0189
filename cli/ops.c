/* cli/ops.c: `sluice ops` (every operator with its summary), `sluice ops NAME` (one operator
 * described: doc, inputs, outputs, devices, flags, and a table of its arguments) and
 * `sluice ops --markdown [NAME]` (the same descriptions as Markdown: the operator reference,
 * docs/ops.md in the build tree, made by the `docs` target).
 *
 * Everything printed comes from the registry's introspection (sluice/registry.h), so it is
 * always what the library does. The facts both forms show (devices, flags, input count, an
 * argument's default, per-sample and constraints) are worded once, in the "facts" section
 * below; the text and Markdown writers only lay them out. An unknown name exits 2 and suggests
 * close names.
 */
#include <stdio.h>
#include <string.h>

#include "sluice/sluice.h"

#include "cli.h"

#define WIDTH 96      /* text is wrapped to this many columns */
#define DEF_COLUMN 20 /* defaults longer than this are shown below the row */

/* ---- facts, worded once for the text and the Markdown forms ----------------------------- */

/* Length of the first line of s. */
static int first_line_len(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl ? (int)(nl - s) : (int)strlen(s);
}

static const char *op_doc(const sl_op_def *op)
{
    return op->doc && op->doc[0] ? op->doc : "(no documentation)";
}

/* Appends word to buf (of cap bytes), separated by ", ". */
static void join(char *buf, size_t cap, const char *word)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", word);
}

typedef struct bit_name {
    unsigned bit;
    const char *name;
} bit_name;

/* The names of the bits set in `bits`, joined by ", "; "none" when none is. Returns: buf. */
static const char *bit_names(unsigned bits, const bit_name *names, size_t n, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (bits & names[i].bit)
            join(buf, cap, names[i].name);
    }
    if (!buf[0])
        snprintf(buf, cap, "none");
    return buf;
}

/* "cpu", "cpu, gpu", ... */
static const char *devices_text(const sl_op_def *op, char *buf, size_t cap)
{
    static const bit_name devices[] = {
        {SL_OP_CPU, "cpu"}, {SL_OP_MIXED, "mixed"}, {SL_OP_GPU, "gpu"}};
    return bit_names(op->devices, devices, sizeof devices / sizeof devices[0], buf, cap);
}

/* "source, stateful", "none", ... */
static const char *flags_text(const sl_op_def *op, char *buf, size_t cap)
{
    static const bit_name flags[] = {{SL_OP_SOURCE, "source"},
                                     {SL_OP_STATEFUL, "stateful"},
                                     {SL_OP_RANDOM, "random"},
                                     {SL_OP_SIDE_EFFECTS, "side effects"},
                                     {SL_OP_TRANSFER, "transfer"},
                                     {SL_OP_METADATA, "metadata only"},
                                     {SL_OP_CALLBACK, "runs the application's function"},
                                     {SL_OP_MIXED_GPU, "mixed: finished by kernels"}};
    return bit_names(op->flags, flags, sizeof flags / sizeof flags[0], buf, cap);
}

/* How many entries of op->inputs describe the inputs (a variadic tail has one). */
static int described_inputs(const sl_op_def *op)
{
    return sl_op_num_input_defs(op);
}

/* "(1 to 3 inputs)" or "(1 or more inputs)" when the operator takes a variable number of
 * inputs, else "". */
static const char *input_count_text(const sl_op_def *op, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (op->max_inputs == SL_INPUTS_ANY)
        snprintf(buf, cap, "(%d or more inputs)", op->min_inputs);
    else if (op->min_inputs != op->max_inputs)
        snprintf(buf, cap, "(%d to %d inputs)", op->min_inputs, op->max_inputs);
    return buf;
}

/* "(as many as the argument num_outputs says)" for an operator whose number of outputs is an
 * argument, else "". */
static const char *output_count_text(const sl_op_def *op, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (op->num_outputs_arg)
        snprintf(buf, cap, "(as many as the argument %s says)", op->num_outputs_arg);
    return buf;
}

/* The default as JSON text (*is_value true), or "required" / "optional" (false). */
static const char *default_text(const sl_arg_def *a, bool *is_value)
{
    *is_value = a->def != NULL;
    if (a->def)
        return a->def;
    return a->flags & SL_ARG_OPTIONAL ? "optional" : "required";
}

/* Whether the argument may be an argument input (one value per sample). */
static const char *per_sample_text(const sl_arg_def *a)
{
    return a->flags & SL_ARG_TENSOR ? "yes" : "no";
}

/* What an argument accepts beyond its type: range, list length, choices ("" when nothing).
 * Returns: buf. */
static const char *constraints(const sl_arg_def *a, char *buf, size_t cap)
{
    size_t n = 0;
#define ADD(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
    buf[0] = '\0';
    if (a->flags & SL_ARG_RANGE)
        ADD("%s[%.15g, %.15g]", n ? "; " : "", a->min, a->max);
    if (a->min_len && a->min_len == a->max_len)
        ADD("%slength %d", n ? "; " : "", a->min_len);
    else if (a->max_len)
        ADD("%slength %d..%d", n ? "; " : "", a->min_len, a->max_len);
    else if (a->min_len)
        ADD("%slength >= %d", n ? "; " : "", a->min_len);
    if (a->choices)
        ADD("%s%s", n ? "; " : "", a->choices);
    if (a->flags & SL_ARG_SCALAR_OK)
        ADD("%sor one value", n ? "; " : "");
    if (a->flags & (SL_ARG_AUTO_RANK | SL_ARG_AUTO_WORLD_SIZE))
        ADD("%sor \"auto\": the job's %s", n ? "; " : "",
            (a->flags & SL_ARG_AUTO_RANK) ? "rank" : "world size");
#undef ADD
    return buf;
}

/* ---- plain text --------------------------------------------------------------------------- */

/* Writes text word-wrapped to WIDTH columns, each line indented by `indent` spaces; the line
 * breaks of the text are kept (blank lines separate paragraphs). */
static void wrap(const char *text, int indent)
{
    const char *p = text;
    while (*p) {
        int line = first_line_len(p), col = indent;
        if (line > 0)
            printf("%*s", indent, "");
        for (int i = 0; i < line;) {
            int w = 0;
            while (i + w < line && p[i + w] != ' ')
                w++;
            if (col > indent && col + 1 + w > WIDTH) {
                printf("\n%*s", indent, "");
                col = indent;
            } else if (col > indent) {
                putchar(' ');
                col++;
            }
            printf("%.*s", w, p + i);
            col += w;
            for (i += w; i < line && p[i] == ' '; i++)
                ;
        }
        putchar('\n');
        p += line + (p[line] == '\n');
    }
}

static int list_ops(void)
{
    int width = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        int n = (int)strlen(sl_registry_get(i)->name);
        width = n > width ? n : width;
    }
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        const char *doc = op->doc ? op->doc : "";
        printf("%-*s  %.*s\n", width, op->name, first_line_len(doc), doc);
    }
    return CLI_OK;
}

/* " (only when ...)" for an optional output (sl_io_def.when_inputs / when_arg), else "". */
static const char *when_text(const sl_output_when *w, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (w && w->inputs > 0 && w->arg)
        snprintf(buf, cap, " (only with %d inputs or more and %s=true)", w->inputs, w->arg);
    else if (w && w->inputs > 0)
        snprintf(buf, cap, " (only with %d inputs or more)", w->inputs);
    else if (w && w->arg && w->in_range && w->hi == INT64_MAX)
        snprintf(buf, cap, " (only when %s >= %lld)", w->arg, (long long)w->lo);
    else if (w && w->arg && w->in_range)
        snprintf(buf, cap, " (only when %lld <= %s <= %lld)", (long long)w->lo, w->arg,
                 (long long)w->hi);
    else if (w && w->arg && w->unless)
        snprintf(buf, cap, " (unless %s=\"%s\")", w->arg, w->unless);
    else if (w && w->arg)
        snprintf(buf, cap, " (only when %s=true)", w->arg);
    return buf;
}

static void print_io(const char *title, const sl_io_def *io, const sl_output_when *ow, int n)
{
    char when[128];
    printf("\n%s:%s\n", title, n > 0 && io ? "" : " none");
    for (int i = 0; io && i < n; i++) {
        printf("  %d  %s%s\n", i, io[i].name ? io[i].name : "",
               when_text(ow ? &ow[i] : NULL, when, sizeof when));
        if (io[i].doc)
            wrap(io[i].doc, 7);
    }
}

static void print_args(const sl_op_def *op)
{
    int n = sl_op_num_args(op), w = 4;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(sl_op_arg(op, i)->name);
        w = len > w ? len : w;
    }
    printf("\narguments:\n  %-*s  %-14s  %-*s  %-10s  %s\n", w, "NAME", "TYPE", DEF_COLUMN,
           "DEFAULT", "PER-SAMPLE", "ACCEPTS");
    for (int i = 0; i < n; i++) {
        const sl_arg_def *a = sl_op_arg(op, i);
        bool is_value;
        const char *def = default_text(a, &is_value);
        bool long_def = (int)strlen(def) > DEF_COLUMN;
        char acc[256];
        constraints(a, acc, sizeof acc);
        printf("  %-*s  %-14s  %-*s  ", w, a->name, sl_arg_type_name(a->type), DEF_COLUMN,
               long_def ? "(below)" : def);
        if (acc[0])
            printf("%-10s  %s\n", per_sample_text(a), acc);
        else
            printf("%s\n", per_sample_text(a));
        if (long_def) {
            char line[1024];
            snprintf(line, sizeof line, "default: %s", def);
            wrap(line, w + 4);
        }
        if (a->doc)
            wrap(a->doc, w + 4);
    }
}

/* "output_dtype (deprecated name of dtype), image_type (deprecated, ignored)" into buf, or "". */
static const char *aliases_text(const sl_op_def *op, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < op->num_aliases && n < cap; i++) {
        const sl_arg_alias *al = &op->aliases[i];
        int k = al->renamed_to ? snprintf(buf + n, cap - n, "%s%s (deprecated name of %s)",
                                          i ? ", " : "", al->name, al->renamed_to)
                               : snprintf(buf + n, cap - n, "%s%s (deprecated, ignored)",
                                          i ? ", " : "", al->name);
        n += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

static void describe(const sl_op_def *op)
{
    char buf[128];
    printf("%s\n\n", op->name);
    wrap(op_doc(op), 2);
    print_io("inputs", op->inputs, NULL, described_inputs(op));
    if (input_count_text(op, buf, sizeof buf)[0])
        printf("  %s\n", buf);
    print_io("outputs", op->outputs, op->output_when, op->num_outputs);
    if (output_count_text(op, buf, sizeof buf)[0])
        printf("  %s\n", buf);
    printf("\ndevices: %s\n", devices_text(op, buf, sizeof buf));
    printf("flags:   %s\n", flags_text(op, buf, sizeof buf));
    print_args(op);
    char names[512];
    if (aliases_text(op, names, sizeof names)[0]) {
        printf("\n");
        char line[600];
        snprintf(line, sizeof line, "also accepted: %s", names);
        wrap(line, 2);
    }
}

/* ---- Markdown ----------------------------------------------------------------------------- */

/* Writes s as the content of a table cell or list item: on one line (line breaks become
 * spaces) with '|' escaped, which GitHub-flavoured Markdown honours inside code spans too. */
static void md_inline(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s == '\n' ? ' ' : *s);
    }
}

/* The anchor GitHub gives the heading "## name": lower case, only letters, digits, '-' and
 * '_' kept ("decoders.image" -> "decodersimage"). */
static void md_anchor(const char *name)
{
    for (; *name; name++) {
        char c = *name;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
            putchar(c);
        else if (c >= 'A' && c <= 'Z')
            putchar(c - 'A' + 'a');
    }
}

static void md_io(const char *title, const sl_io_def *io, const sl_output_when *ow, int n)
{
    char when[128];
    printf("**%s:**%s\n", title, n > 0 && io ? "" : " none");
    if (n > 0 && io)
        putchar('\n');
    for (int i = 0; io && i < n; i++) {
        printf("- %d `%s`%s", i, io[i].name ? io[i].name : "",
               when_text(ow ? &ow[i] : NULL, when, sizeof when));
        if (io[i].doc) {
            fputs(": ", stdout);
            md_inline(io[i].doc);
        }
        putchar('\n');
    }
    putchar('\n');
}

static void md_args(const sl_op_def *op)
{
    printf("**Arguments:**\n\n"
           "| Name | Type | Default | Per-sample | Accepts | Description |\n"
           "| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < sl_op_num_args(op); i++) {
        const sl_arg_def *a = sl_op_arg(op, i);
        bool is_value;
        const char *def = default_text(a, &is_value);
        char acc[256];
        printf("| `%s` | %s | %s", a->name, sl_arg_type_name(a->type), is_value ? "`" : "*");
        md_inline(def);
        printf("%s | %s | ", is_value ? "`" : "*", per_sample_text(a));
        md_inline(constraints(a, acc, sizeof acc));
        fputs(" | ", stdout);
        md_inline(a->doc ? a->doc : "");
        fputs(" |\n", stdout);
    }
}

static void md_describe(const sl_op_def *op)
{
    char buf[128];
    const char *doc = op_doc(op);
    size_t len = strlen(doc);
    printf("## %s\n\n%s%s\n", op->name, doc, len && doc[len - 1] == '\n' ? "" : "\n");
    md_io("Inputs", op->inputs, NULL, described_inputs(op));
    if (input_count_text(op, buf, sizeof buf)[0])
        printf("%s\n\n", buf);
    md_io("Outputs", op->outputs, op->output_when, op->num_outputs);
    if (output_count_text(op, buf, sizeof buf)[0])
        printf("%s\n\n", buf);
    printf("**Devices:** %s  \n", devices_text(op, buf, sizeof buf));
    printf("**Flags:** %s\n\n", flags_text(op, buf, sizeof buf));
    md_args(op);
    char names[512];
    if (aliases_text(op, names, sizeof names)[0])
        printf("\n**Also accepted (DALI's deprecated names):** %s\n", names);
}

/* The whole reference: a title, an index of the operators, then one section each. */
static int markdown_all(void)
{
    printf("# sluice operators\n\n"
           "<!-- Generated by `sluice ops --markdown` from the operator registry of sluice %s. "
           "Do not edit: change the operator's definition (src/ops/) and run `make docs`. -->\n\n"
           "The operators of sluice %s, as the library describes them (`sluice ops NAME` prints "
           "the same). An argument marked *per-sample* may also be given as an argument input: "
           "one value per sample from a CPU node (`sl_graph_arg_input`, `\"arg_inputs\"` in a "
           "JSON spec). Defaults are JSON, as written in a spec; *required* arguments have no "
           "default, *optional* ones may stay unset.\n\n"
           "| Operator | Summary |\n| --- | --- |\n",
           sl_version(), sl_version());
    for (int i = 0; i < sl_registry_count(); i++) {
        const sl_op_def *op = sl_registry_get(i);
        const char *doc = op->doc ? op->doc : "";
        char summary[512];
        snprintf(summary, sizeof summary, "%.*s", first_line_len(doc), doc);
        printf("| [`%s`](#", op->name);
        md_anchor(op->name);
        fputs(") | ", stdout);
        md_inline(summary);
        fputs(" |\n", stdout);
    }
    for (int i = 0; i < sl_registry_count(); i++) {
        putchar('\n');
        md_describe(sl_registry_get(i));
    }
    return CLI_OK;
}

/* ---- unknown names ------------------------------------------------------------------------ */

/* Edit distance of a and b (both shorter than 64 characters; longer ones count as far). */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b), row[64];
    if (la >= 64 || lb >= 64)
        return 99;
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* s without '.' and '_' ("crop_mirror_normalize" -> "cropmirrornormalize"), truncated to fit
 * buf[64]. Returns: buf. */
static char *squeeze(const char *s, char *buf)
{
    int n = 0;
    for (; *s && n < 63; s++) {
        if (*s != '.' && *s != '_')
            buf[n++] = *s;
    }
    buf[n] = '\0';
    return buf;
}

/* True when `name` is worth suggesting for `typed`: a few edits away, or the part after the
 * family ("image" for "decoders.image"), or containing it. */
static bool close_to(const char *name, const char *typed)
{
    const char *dot = strrchr(name, '.');
    size_t len = strlen(typed);
    if (distance(name, typed) <= (len > 9 ? 3 : 2))
        return true;
    if (dot && distance(dot + 1, typed) <= (len > 9 ? 2 : 1))
        return true;
    char a[64], b[64];
    return len >= 4 && strstr(squeeze(name, a), squeeze(typed, b)) != NULL;
}

static int unknown_op(const char *typed)
{
    fprintf(stderr, "sluice: unknown operator \"%s\"\n", typed);
    int shown = 0;
    for (int i = 0; i < sl_registry_count(); i++) {
        const char *name = sl_registry_get(i)->name;
        if (close_to(name, typed))
            fprintf(stderr, "%s \"%s\"", shown++ ? "," : "did you mean", name);
    }
    fprintf(stderr, "%s(`sluice ops` lists every operator)\n", shown ? "? " : "");
    return CLI_USAGE;
}

int cli_ops(int argc, char **argv)
{
    bool markdown = argc > 0 && strcmp(argv[0], "--markdown") == 0;
    if (markdown) {
        argc--;
        argv++;
    }
    if (argc > 1 || (argc == 1 && argv[0][0] == '-')) {
        fprintf(stderr, "sluice: usage: sluice ops [--markdown] [NAME]\n");
        return CLI_USAGE;
    }
    if (argc == 0)
        return markdown ? markdown_all() : list_ops();
    const sl_op_def *op = sl_registry_find(argv[0]);
    if (!op)
        return unknown_op(argv[0]);
    if (markdown)
        md_describe(op);
    else
        describe(op);
    return CLI_OK;
}
