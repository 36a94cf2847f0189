/* cli/ops.c: `sluice ops` (every operator with its summary) and `sluice ops NAME` (one
 * operator described: doc, inputs, outputs, devices, flags, and a table of its arguments).
 *
 * Everything printed comes from the registry's introspection (sluice/registry.h), so it is
 * always what the library does. An unknown name exits 2 and suggests close names.
 */
#include <stdio.h>
#include <string.h>

#include "sluice/sluice.h"

#include "cli.h"

#define WIDTH 96      /* text is wrapped to this many columns */
#define DEF_COLUMN 20 /* defaults longer than this are shown below the row */

/* Length of the first line of s. */
static int first_line_len(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl ? (int)(nl - s) : (int)strlen(s);
}

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

/* ---- one operator ------------------------------------------------------------------------- */

static void print_io(const char *title, const sl_io_def *io, int n)
{
    printf("\n%s:%s\n", title, n > 0 && io ? "" : " none");
    for (int i = 0; io && i < n; i++) {
        printf("  %d  %s\n", i, io[i].name ? io[i].name : "");
        if (io[i].doc)
            wrap(io[i].doc, 7);
    }
}

/* Appends word to buf (of cap bytes), separated by ", ". */
static void join(char *buf, size_t cap, const char *word)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", word);
}

static void print_devices_flags(const sl_op_def *op)
{
    static const struct {
        unsigned bit;
        const char *name;
    } devices[] = {{SL_OP_CPU, "cpu"}, {SL_OP_MIXED, "mixed"}, {SL_OP_GPU, "gpu"}},
      flags[] = {{SL_OP_SOURCE, "source"},
                 {SL_OP_STATEFUL, "stateful"},
                 {SL_OP_RANDOM, "random"},
                 {SL_OP_SIDE_EFFECTS, "side effects"}};
    char dev[64] = "", fl[128] = "";
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        if (op->devices & devices[i].bit)
            join(dev, sizeof dev, devices[i].name);
    }
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (op->flags & flags[i].bit)
            join(fl, sizeof fl, flags[i].name);
    }
    printf("\ndevices: %s\nflags:   %s\n", dev, fl[0] ? fl : "none");
}

/* What an argument accepts beyond its type: range, list length, choices. */
static void constraints(const sl_arg_def *a, char *buf, size_t cap)
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
#undef ADD
}

static const char *default_text(const sl_arg_def *a)
{
    if (a->def)
        return a->def;
    return a->flags & SL_ARG_OPTIONAL ? "optional" : "required";
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
        const char *def = default_text(a);
        bool long_def = (int)strlen(def) > DEF_COLUMN;
        char acc[256];
        constraints(a, acc, sizeof acc);
        const char *per_sample = a->flags & SL_ARG_TENSOR ? "yes" : "no";
        printf("  %-*s  %-14s  %-*s  ", w, a->name, sl_arg_type_name(a->type), DEF_COLUMN,
               long_def ? "(below)" : def);
        if (acc[0])
            printf("%-10s  %s\n", per_sample, acc);
        else
            printf("%s\n", per_sample);
        if (long_def) {
            char line[1024];
            snprintf(line, sizeof line, "default: %s", def);
            wrap(line, w + 4);
        }
        if (a->doc)
            wrap(a->doc, w + 4);
    }
}

static void describe(const sl_op_def *op)
{
    printf("%s\n\n", op->name);
    wrap(op->doc ? op->doc : "(no documentation)", 2);
    int ninputs = op->max_inputs >= 0 && op->max_inputs <= 64 ? op->max_inputs : op->min_inputs;
    print_io("inputs", op->inputs, ninputs);
    if (op->min_inputs != op->max_inputs)
        printf("  (%d to %d inputs)\n", op->min_inputs, op->max_inputs);
    print_io("outputs", op->outputs, op->num_outputs);
    print_devices_flags(op);
    print_args(op);
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
    if (argc == 0)
        return list_ops();
    if (argc > 1 || argv[0][0] == '-') {
        fprintf(stderr, "sluice: usage: sluice ops [NAME]\n");
        return CLI_USAGE;
    }
    const sl_op_def *op = sl_registry_find(argv[0]);
    if (!op)
        return unknown_op(argv[0]);
    describe(op);
    return CLI_OK;
}
