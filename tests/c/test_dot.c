/* test_dot: the picture of a pipeline's graph, sl_pipeline_write_dot (src/graph/dot.c).
 *
 * The DOT text is parsed back (node statements, edges, clusters, comments) and compared with
 * what the graph says by hand: exactly the nodes the build keeps, with name, operator and
 * device; exactly the edges, data solid and argument inputs dashed with their labels; a fused
 * chain as one cluster; the pruned nodes only in the comment; names that would break DOT
 * escaped. Where Graphviz's dot command is installed (scripts/setup.sh installs graphviz), the
 * text is drawn by it — dot parses our quoting — and so is `sluice graph -o FILE.svg`; where it
 * is not, the other tests still run and the executable exits 77 (SKIP), saying why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/core.h"
#include "testutil.h"

#define CHECK(call) assert_int_equal((call), SL_OK)

/* ---- DOT text, parsed back ------------------------------------------------------------------ */

typedef struct dnode {
    char id[16];
    char label[512]; /* the label as written, escapes and all */
    char name[256];  /* its first line, unescaped */
    int cluster;     /* index of the cluster it is declared in, -1 for none */
} dnode;

typedef struct dedge {
    char from[16], to[16];
    char attrs[256]; /* what stands between [ and ], "" for none */
} dedge;

typedef struct dot {
    dnode nodes[32];
    int nn;
    dedge edges[32];
    int ne;
    char cluster_names[16][64];
    int cluster_parent[16]; /* the cluster a cluster is declared in, -1 for none */
    int nclusters;
    char comments[2048]; /* the // lines, joined */
} dot;

/* The first line of a label written as DOT text, unescaped (\" \\ and the \n that ends it). */
static void first_line(const char *label, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *c = label; *c && n + 1 < cap; c++) {
        if (c[0] == '\\' && c[1] == 'n')
            break;
        if (c[0] == '\\' && (c[1] == '"' || c[1] == '\\'))
            c++;
        out[n++] = *c;
    }
    out[n] = '\0';
}

/* The statements of the DOT text, one per line as sl_pipeline_write_dot writes them. */
static void parse(const char *text, dot *d)
{
    memset(d, 0, sizeof *d);
    int cluster = -1;
    int stack[16], depth = 0; /* open clusters, innermost last */
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        assert_true(len < sizeof buf);
        memcpy(buf, line, len);
        buf[len] = '\0';
        char *s = buf + strspn(buf, " ");
        char id[16], to[16];
        if (strncmp(s, "//", 2) == 0) {
            strncat(d->comments, s, sizeof d->comments - strlen(d->comments) - 2);
            strcat(d->comments, "\n");
        } else if (sscanf(s, "subgraph %63s {", d->cluster_names[d->nclusters]) == 1) {
            assert_true(depth < 16 && d->nclusters < 15);
            d->cluster_parent[d->nclusters] = cluster;
            stack[depth++] = cluster = d->nclusters++;
        } else if (strcmp(s, "}") == 0 && cluster >= 0) {
            depth--;
            cluster = depth > 0 ? stack[depth - 1] : -1;
        } else if (sscanf(s, "%15s -> %15[^ ;]", id, to) == 2) {
            dedge *e = &d->edges[d->ne++];
            snprintf(e->from, sizeof e->from, "%s", id);
            snprintf(e->to, sizeof e->to, "%s", to);
            const char *lb = strchr(s, '['), *rb = strrchr(s, ']');
            if (lb && rb)
                snprintf(e->attrs, sizeof e->attrs, "%.*s", (int)(rb - lb - 1), lb + 1);
        } else if (s[0] == 'n' && strstr(s, " [label=\"")) {
            dnode *n = &d->nodes[d->nn++];
            sscanf(s, "%15s", n->id);
            const char *l = strstr(s, "[label=\"") + 8, *q = l;
            while (*q && !(q[0] == '"' && q[-1] != '\\'))
                q += q[0] == '\\' ? 2 : 1;
            snprintf(n->label, sizeof n->label, "%.*s", (int)(q - l), l);
            first_line(n->label, n->name, sizeof n->name);
            n->cluster = cluster;
        }
        line = end ? end + 1 : line + len;
    }
}

static const dnode *find_node(const dot *d, const char *name)
{
    for (int i = 0; i < d->nn; i++)
        if (strcmp(d->nodes[i].name, name) == 0)
            return &d->nodes[i];
    return NULL;
}

/* The id of node `name`, or `name` itself for an "outK" pseudo-node. */
static const char *id_of(const dot *d, const char *name)
{
    const dnode *n = find_node(d, name);
    if (strncmp(name, "out", 3) == 0 && !n)
        return name;
    if (!n)
        fail_msg("no node \"%s\" in the picture", name);
    return n->id;
}

/* Asserts that the edges are exactly these ("from", "to", "attrs" triples; names, not ids). */
static void expect_edges(const dot *d, const char *const (*want)[3], int n)
{
    bool used[32] = {false};
    for (int k = 0; k < n; k++) {
        const char *from = id_of(d, want[k][0]), *to = id_of(d, want[k][1]);
        int found = -1;
        for (int e = 0; e < d->ne && found < 0; e++)
            if (!used[e] && strcmp(d->edges[e].from, from) == 0 &&
                strcmp(d->edges[e].to, to) == 0 && strcmp(d->edges[e].attrs, want[k][2]) == 0)
                found = e;
        if (found < 0)
            fail_msg("no edge %s -> %s [%s]", want[k][0], want[k][1], want[k][2]);
        used[found] = true;
    }
    assert_int_equal(d->ne, n);
}

/* ---- pipelines ----------------------------------------------------------------------------- */

/* The DOT text of p (malloc'd), or NULL with *st set. */
static char *dot_of(const sl_pipeline *p, sl_status *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    *st = sl_pipeline_write_dot(p, mem);
    assert_int_equal(fclose(mem), 0);
    if (*st != SL_OK) {
        free(text);
        return NULL;
    }
    return text;
}

static sl_pipeline *create(const sl_graph *g, int fuse, int device_id)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 2;
    o.num_threads = 1;
    o.seed = 1;
    o.fuse_samples = fuse;
    o.device_id = device_id;
    sl_pipeline *p = NULL;
    CHECK(sl_pipeline_create(g, &o, &p));
    return p;
}

/* reader -> dec -> flip -> cmn (mirror from coin), and a node no output needs. */
static sl_graph *training_graph(void)
{
    double crop[] = {32, 32};
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "readers.file", "reader", "cpu"));
    CHECK(sl_graph_arg_str(g, "reader", "file_root", "/nonexistent")); /* nothing is read */
    CHECK(sl_graph_add(g, "decoders.image", "dec", NULL));
    CHECK(sl_graph_input(g, "dec", "reader:0"));
    CHECK(sl_graph_add(g, "flip", "flip", NULL));
    CHECK(sl_graph_input(g, "flip", "dec"));
    CHECK(sl_graph_add(g, "random.coin_flip", "coin", NULL));
    CHECK(sl_graph_add(g, "random.coin_flip", "unused", NULL));
    CHECK(sl_graph_add(g, "crop_mirror_normalize", "cmn", NULL));
    CHECK(sl_graph_input(g, "cmn", "flip"));
    CHECK(sl_graph_arg_floats(g, "cmn", "crop", crop, 2));
    CHECK(sl_graph_arg_input(g, "cmn", "mirror", "coin"));
    CHECK(sl_graph_output(g, "cmn"));
    CHECK(sl_graph_output(g, "reader:1"));
    return g;
}

static const char *const training_edges[][3] = {
    {"reader", "dec", "label=\"0\""},
    {"dec", "flip", ""},
    {"flip", "cmn", ""},
    {"coin", "cmn", "style=dashed, label=\"mirror\""},
    {"cmn", "out0", ""},
    {"reader", "out1", "label=\"1\""},
};

/* Exactly the kept nodes, each with name, operator and device; the pruned one only in the
 * comment; the edges by hand; dec, flip and cmn run fused: one cluster, the others outside. */
static void test_nodes_edges_fused(void **state)
{
    (void)state;
    sl_graph *g = training_graph();
    sl_pipeline *p = create(g, 1, -1);
    sl_status st;
    char *text = dot_of(p, &st);
    assert_non_null(text);
    static dot d;
    parse(text, &d);
    assert_true(strncmp(text, "// sluice pipeline: 5 nodes in execution order, 2 outputs\n", 58) ==
                0);
    assert_non_null(strstr(text, "\ndigraph sluice {\n"));
    assert_int_equal(d.nn, 5);
    const char *labels[][2] = {{"reader", "reader\\nreaders.file\\ncpu"},
                               {"dec", "dec\\ndecoders.image\\ncpu"},
                               {"flip", "flip\\nflip\\ncpu"},
                               {"coin", "coin\\nrandom.coin_flip\\ncpu"},
                               {"cmn", "cmn\\ncrop_mirror_normalize\\ncpu"}};
    for (int k = 0; k < 5; k++) {
        const dnode *n = find_node(&d, labels[k][0]);
        assert_non_null(n);
        assert_string_equal(n->label, labels[k][1]);
    }
    assert_null(find_node(&d, "unused"));
    assert_string_equal(d.comments, "// sluice pipeline: 5 nodes in execution order, 2 outputs\n"
                                    "// pruned (no output needs them): \"unused\"\n");
    expect_edges(&d, training_edges, 6);
    assert_non_null(strstr(text, "out0 [shape=oval, style=solid, label=\"output 0\"];"));
    assert_non_null(strstr(text, "out1 [shape=oval, style=solid, label=\"output 1\"];"));

    assert_int_equal(d.nclusters, 1);
    assert_true(strncmp(d.cluster_names[0], "cluster_fused_", 14) == 0);
    assert_int_equal(find_node(&d, "dec")->cluster, 0);
    assert_int_equal(find_node(&d, "flip")->cluster, 0);
    assert_int_equal(find_node(&d, "cmn")->cluster, 0);
    assert_int_equal(find_node(&d, "reader")->cluster, -1);
    assert_int_equal(find_node(&d, "coin")->cluster, -1);
    assert_non_null(strstr(text, "label=\"fused: runs sample by sample\";"));
    free(text);
    sl_pipeline_destroy(p);

    /* fuse_samples off: the same nodes and edges, no cluster */
    p = create(g, 0, -1);
    text = dot_of(p, &st);
    assert_non_null(text);
    parse(text, &d);
    assert_int_equal(d.nn, 5);
    assert_int_equal(d.nclusters, 0);
    expect_edges(&d, training_edges, 6);
    free(text);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* An argument input from a producer with several outputs names the output too; a producer
 * that feeds two arguments and a data input gets three edges. */
static void test_argument_inputs(void **state)
{
    (void)state;
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "readers.file", "reader", NULL));
    CHECK(sl_graph_arg_str(g, "reader", "file_root", "/nonexistent"));
    CHECK(sl_graph_add(g, "decoders.image", "dec", NULL));
    CHECK(sl_graph_input(g, "dec", "reader"));
    CHECK(sl_graph_add(g, "random.uniform", "u", NULL));
    CHECK(sl_graph_add(g, "brightness_contrast", "bc", NULL));
    CHECK(sl_graph_input(g, "bc", "dec"));
    CHECK(sl_graph_arg_input(g, "bc", "brightness", "u"));
    CHECK(sl_graph_arg_input(g, "bc", "contrast", "u"));
    CHECK(sl_graph_add(g, "flip", "fl", NULL));
    CHECK(sl_graph_input(g, "fl", "bc"));
    CHECK(sl_graph_arg_input(g, "fl", "horizontal", "reader:1"));
    CHECK(sl_graph_output(g, "fl"));
    sl_pipeline *p = create(g, 0, -1);
    sl_status st;
    char *text = dot_of(p, &st);
    assert_non_null(text);
    static dot d;
    parse(text, &d);
    static const char *const want[][3] = {
        {"reader", "dec", "label=\"0\""},
        {"dec", "bc", ""},
        {"u", "bc", "style=dashed, label=\"brightness\""},
        {"u", "bc", "style=dashed, label=\"contrast\""},
        {"bc", "fl", ""},
        {"reader", "fl", "style=dashed, label=\"1: horizontal\""},
        {"fl", "out0", ""},
    };
    expect_edges(&d, want, 7);
    assert_null(strstr(text, "// pruned"));
    free(text);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* Names that would break DOT: quotes, backslashes (\N is a Graphviz label escape), a newline,
 * a control byte, a byte that is not UTF-8; also in the pruned-nodes comment, which stays one
 * line. */
static const char weird[] = "q\"b\\N\nx\ty\xff\xc3\xa9";
static const char weird_label[] = "q\\\"b\\\\N\\nx\\\\x09y?\xc3\xa9\\nrandom.coin_flip\\ncpu";

static sl_graph *weird_graph(void)
{
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "random.coin_flip", weird, NULL));
    CHECK(sl_graph_add(g, "random.coin_flip", "gone\n\"x\"", NULL));
    CHECK(sl_graph_output(g, weird));
    return g;
}

static void test_escaping(void **state)
{
    (void)state;
    sl_graph *g = weird_graph();
    sl_pipeline *p = create(g, 1, -1);
    sl_status st;
    char *text = dot_of(p, &st);
    assert_non_null(text);
    static dot d;
    parse(text, &d);
    assert_int_equal(d.nn, 1);
    assert_string_equal(d.nodes[0].label, weird_label);
    assert_string_equal(d.comments, "// sluice pipeline: 1 node in execution order, 1 output\n"
                                    "// pruned (no output needs them): \"gone\\n\\\"x\\\"\"\n");
    free(text);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* Drawing does not build: the text before the build equals the text after, and the build
 * still works. */
static void test_unbuilt_equals_built(void **state)
{
    (void)state;
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "random.uniform", "u", NULL));
    CHECK(sl_graph_add(g, "random.coin_flip", "c", NULL));
    CHECK(sl_graph_add(g, "arithmetic", "sum", NULL));
    CHECK(sl_graph_arg_str(g, "sum", "op", "add"));
    CHECK(sl_graph_input(g, "sum", "u"));
    CHECK(sl_graph_input(g, "sum", "c"));
    CHECK(sl_graph_output(g, "sum"));
    sl_pipeline *p = create(g, 1, -1);
    sl_status st;
    char *before = dot_of(p, &st);
    assert_non_null(before);
    assert_int_equal(sl_pipeline_num_nodes(p), 0); /* still not built */
    CHECK(sl_pipeline_build(p));
    CHECK(sl_pipeline_run(p));
    char *after = dot_of(p, &st);
    assert_non_null(after);
    assert_string_equal(before, after);
    free(before);
    free(after);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* NULL is misuse; a graph the build rejects fails with the build's error, word for word. */
static void test_errors(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_int_equal(sl_pipeline_write_dot(NULL, f), SL_EMISUSE);
    assert_non_null(strstr(sl_last_error(), "sl_pipeline_write_dot"));
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "random.coin_flip", "coin", NULL));
    CHECK(sl_graph_arg_json(g, "coin", "probability", "2.5"));
    CHECK(sl_graph_output(g, "coin"));
    sl_pipeline *p = create(g, 1, -1), *q = create(g, 1, -1);
    assert_int_equal(sl_pipeline_write_dot(p, NULL), SL_EMISUSE);
    sl_status st;
    assert_null(dot_of(p, &st));
    assert_int_equal(st, SL_EINVAL);
    assert_non_null(strstr(sl_pipeline_error(p), "(node \"coin\")"));
    assert_int_equal(sl_pipeline_build(q), SL_EINVAL);
    assert_string_equal(sl_pipeline_error(p), sl_pipeline_error(q));
    sl_pipeline_destroy(p);
    sl_pipeline_destroy(q);
    sl_graph_destroy(g);
    fclose(f);
}

/* Where the build puts a node: a mixed decoder, a node placed on gpu by its input (it says
 * so), its argument input from the CPU. Needs a build with CUDA (no GPU: nothing runs). */
static void test_devices(void **state)
{
    (void)state;
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "readers.file", "reader", NULL));
    CHECK(sl_graph_arg_str(g, "reader", "file_root", "/nonexistent"));
    CHECK(sl_graph_add(g, "decoders.image", "dec", "mixed"));
    CHECK(sl_graph_input(g, "dec", "reader"));
    CHECK(sl_graph_add(g, "flip", "fl", NULL));
    CHECK(sl_graph_input(g, "fl", "dec"));
    CHECK(sl_graph_output(g, "fl"));
    sl_pipeline *p = create(g, 1, 0);
    sl_status st;
    char *text = dot_of(p, &st);
#ifdef SLUICE_HAVE_CUDA
    assert_non_null(text);
    static dot d;
    parse(text, &d);
    assert_string_equal(find_node(&d, "reader")->label, "reader\\nreaders.file\\ncpu");
    assert_string_equal(find_node(&d, "dec")->label, "dec\\ndecoders.image\\nmixed");
    assert_string_equal(find_node(&d, "fl")->label, "fl\\nflip\\ngpu (from inputs)");
    assert_int_equal(d.nclusters, 0); /* the GPU stage is never fused */
    free(text);
#else
    assert_null(text);
    assert_int_equal(st, SL_EUNSUPPORTED);
    assert_non_null(strstr(sl_pipeline_error(p), "needs CUDA"));
#endif
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* Every allocation of a drawing before the build may fail: SL_ENOMEM with a message, never a
 * crash or a leak, and the drawing that finally succeeds is the clean one. */
static void test_alloc_failures(void **state)
{
    (void)state;
    sl_graph *g = training_graph();
    sl_pipeline *p = create(g, 1, -1);
    sl_status st;
    char *clean = dot_of(p, &st);
    assert_non_null(clean);
    uint64_t n = 1;
    for (; n < 10000; n++) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len); /* before the injection: libc's, not ours */
        assert_non_null(mem);
        sl__alloc_fail_after(n);
        st = sl_pipeline_write_dot(p, mem);
        bool fired = sl__alloc_fail_fired();
        sl__alloc_fail_after(0);
        assert_int_equal(fclose(mem), 0);
        if (st != SL_OK) {
            assert_int_equal(st, SL_ENOMEM);
            assert_true(fired);
            assert_true(sl_pipeline_error(p)[0] != '\0');
        }
        if (!fired) {
            assert_int_equal(st, SL_OK);
            assert_string_equal(text, clean);
            free(text);
            break;
        }
        free(text);
    }
    assert_true(n > 1 && n < 10000); /* the plan allocates: failures were injected, and ended */
    free(clean);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* ---- Graphviz -------------------------------------------------------------------------------- */

static bool have_dot(void)
{
    return system("command -v dot >/dev/null 2>&1") == 0;
}

/* Runs the shell command; returns its exit status (-1 when it did not exit). */
static int sh(const char *fmt, ...) SL_PRINTF(1, 2);
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The SVG at path, read whole (NUL-terminated); fails the test unless it is one. */
static char *read_svg(const char *path)
{
    size_t n = 0;
    char *svg = (char *)tu_read_file(path, &n);
    assert_non_null(svg);
    svg = realloc(svg, n + 1);
    svg[n] = '\0';
    assert_non_null(strstr(svg, "<?xml"));
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    return svg;
}

/* x and c -> if c: t = x * 2, then if d: t * 3 (nested); else: f = x + 1; merged. */
static sl_graph *cond_graph(void)
{
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    const char *srcs[] = {"x", "c", "d"};
    for (int k = 0; k < 3; k++)
        CHECK(sl_graph_add(g, "external_source", srcs[k], NULL));
    const char *splits[][3] = {{"sx", "x", "c"}, {"sd", "d", "c"}, {"st", "t", "sd:0"}};
    const char *ariths[][2] = {{"t", "sx:0"}, {"t3", "st:0"}, {"f", "sx:1"}};
    for (int k = 0; k < 3; k++) {
        CHECK(sl_graph_add(g, "arithmetic", ariths[k][0], NULL));
        CHECK(sl_graph_input(g, ariths[k][0], ariths[k][1]));
        CHECK(sl_graph_arg_str(g, ariths[k][0], "op", "mul"));
        CHECK(sl_graph_arg_float(g, ariths[k][0], "scalar", 2));
    }
    for (int k = 0; k < 3; k++) {
        CHECK(sl_graph_add(g, "_conditional.split", splits[k][0], NULL));
        CHECK(sl_graph_input(g, splits[k][0], splits[k][1]));
        CHECK(sl_graph_arg_input(g, splits[k][0], "predicate", splits[k][2]));
    }
    const char *merges[][4] = {{"nt", "t3", "st:1", "sd:0"}, {"m", "nt", "f", "c"}};
    for (int k = 0; k < 2; k++) {
        CHECK(sl_graph_add(g, "_conditional.merge", merges[k][0], NULL));
        CHECK(sl_graph_input(g, merges[k][0], merges[k][1]));
        CHECK(sl_graph_input(g, merges[k][0], merges[k][2]));
        CHECK(sl_graph_arg_input(g, merges[k][0], "predicate", merges[k][3]));
    }
    CHECK(sl_graph_add(g, "random.uniform", "u", NULL)); /* drawn only for the false branch */
    CHECK(sl_graph_batch_like(g, "u", "sx:1"));
    CHECK(sl_graph_add(g, "_conditional.split", "su", NULL));
    CHECK(sl_graph_input(g, "su", "c"));
    CHECK(sl_graph_arg_input(g, "su", "predicate", "c"));
    CHECK(sl_graph_add(g, "_conditional.merge", "mu", NULL));
    CHECK(sl_graph_input(g, "mu", "su:0"));
    CHECK(sl_graph_input(g, "mu", "u"));
    CHECK(sl_graph_arg_input(g, "mu", "predicate", "c"));
    CHECK(sl_graph_output(g, "m"));
    CHECK(sl_graph_output(g, "mu"));
    return g;
}

/* The name of the cluster node `name` is declared in ("" outside any), and of its parent. */
static const char *cluster_of(const dot *d, const char *name, int up)
{
    const dnode *n = find_node(d, name);
    assert_non_null(n);
    int c = n->cluster;
    for (int k = 0; k < up && c >= 0; k++)
        c = d->cluster_parent[c];
    return c >= 0 ? d->cluster_names[c] : "";
}

/* A conditional is a cluster holding its splits and merges and one cluster per branch around
 * the nodes running on the branch's samples; a nested conditional sits inside its branch. */
static void test_conditional_clusters(void **state)
{
    (void)state;
    sl_graph *g = cond_graph();
    sl_pipeline *p = create(g, 1, -1);
    sl_status st;
    char *text = dot_of(p, &st);
    assert_non_null(text);
    static dot d;
    parse(text, &d);
    assert_int_equal(d.nn, 14);
    assert_string_equal(cluster_of(&d, "x", 0), "");
    assert_string_equal(cluster_of(&d, "c", 0), "");
    const char *outer = cluster_of(&d, "sx", 0);
    assert_true(strncmp(outer, "cluster_cond_", 13) == 0);
    assert_string_equal(cluster_of(&d, "sd", 0), outer);
    assert_string_equal(cluster_of(&d, "m", 0), outer);
    assert_string_equal(cluster_of(&d, "su", 0), outer);
    assert_string_equal(cluster_of(&d, "mu", 0), outer);
    assert_true(strncmp(cluster_of(&d, "t", 0), "cluster_branch_", 15) == 0);
    assert_string_equal(cluster_of(&d, "t", 1), outer);
    assert_true(strncmp(cluster_of(&d, "f", 0), "cluster_branch_", 15) == 0);
    assert_string_equal(cluster_of(&d, "f", 1), outer);
    assert_string_not_equal(cluster_of(&d, "f", 0), cluster_of(&d, "t", 0));
    assert_string_equal(cluster_of(&d, "u", 0), cluster_of(&d, "f", 0)); /* batch_like sx:1 */
    /* nested: st and nt in a conditional inside t's branch, t3 in its true branch */
    const char *inner = cluster_of(&d, "st", 0);
    assert_true(strncmp(inner, "cluster_cond_", 13) == 0);
    assert_string_not_equal(inner, outer);
    assert_string_equal(cluster_of(&d, "st", 1), cluster_of(&d, "t", 0));
    assert_string_equal(cluster_of(&d, "nt", 0), inner);
    assert_string_equal(cluster_of(&d, "t3", 1), inner);
    assert_string_equal(cluster_of(&d, "t3", 3), outer);
    assert_non_null(strstr(text, "label=\"if c\";"));
    assert_non_null(strstr(text, "label=\"if sd\";"));
    assert_non_null(strstr(text, "label=\"true\";"));
    assert_non_null(strstr(text, "label=\"false\";"));
    const char *const edges[][3] = {
        {"x", "sx", ""},
        {"c", "sx", "style=dashed, label=\"predicate\""},
        {"d", "sd", ""},
        {"c", "sd", "style=dashed, label=\"predicate\""},
        {"sx", "t", "label=\"0\""},
        {"sx", "f", "label=\"1\""},
        {"t", "st", ""},
        {"sd", "st", "style=dashed, label=\"0: predicate\""},
        {"st", "t3", "label=\"0\""},
        {"t3", "nt", ""},
        {"st", "nt", "label=\"1\""},
        {"sd", "nt", "style=dashed, label=\"0: predicate\""},
        {"nt", "m", ""},
        {"f", "m", ""},
        {"c", "m", "style=dashed, label=\"predicate\""},
        {"m", "out0", ""},
        {"sx", "u", "style=dotted, label=\"batch_like\""},
        {"c", "su", ""},
        {"c", "su", "style=dashed, label=\"predicate\""},
        {"su", "mu", "label=\"0\""},
        {"u", "mu", ""},
        {"c", "mu", "style=dashed, label=\"predicate\""},
        {"mu", "out1", ""},
    };
    expect_edges(&d, edges, 23);
    free(text);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
}

/* dot reads the text of the pipelines above, weird names included, and shows them as given. */
static void test_graphviz_reads_it(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp(), path[4096];
    assert_non_null(dir);
    sl_graph *graphs[] = {training_graph(), weird_graph(), cond_graph()};
    const char *shown[][2] = {{"crop_mirror_normalize", "output 1"},
                              {"q&quot;b\\N", "x\\x09y?\xc3\xa9"},
                              {"_conditional.split", "if sd"}};
    for (int k = 0; k < 3; k++) {
        sl_pipeline *p = create(graphs[k], 1, -1);
        snprintf(path, sizeof path, "%s/g%d.dot", dir, k);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        CHECK(sl_pipeline_write_dot(p, f));
        fclose(f);
        if (sh("dot -Tsvg '%s' -o '%s.svg'", path, path) != 0)
            fail_msg("dot rejected %s", path);
        snprintf(path + strlen(path), sizeof path - strlen(path), ".svg");
        char *svg = read_svg(path);
        for (int s = 0; s < 2; s++)
            if (!strstr(svg, shown[k][s]))
                fail_msg("the SVG of pipeline %d does not show \"%s\"", k, shown[k][s]);
        free(svg);
        sl_pipeline_destroy(p);
        sl_graph_destroy(graphs[k]);
    }
    tu_rmtree(dir);
    free(dir);
}

/* `sluice graph SPEC -o FILE.svg` draws through dot: an SVG with the spec's nodes. */
static void test_cli_draws_svg(void **state)
{
    (void)state;
    const char *cli = getenv("SLUICE_CLI");
    if (!cli)
        skip();
    char *dir = tu_mkdtemp(), spec[4096], svg_path[4096];
    assert_non_null(dir);
    snprintf(spec, sizeof spec, "%s/spec.json", dir);
    snprintf(svg_path, sizeof svg_path, "%s/pic.svg", dir);
    FILE *f = fopen(spec, "w");
    assert_non_null(f);
    fputs("{\"nodes\": [{\"name\": \"u\", \"op\": \"random.uniform\"},\n"
          "            {\"name\": \"twice\", \"op\": \"arithmetic\", \"inputs\": [\"u\", \"u\"],\n"
          "             \"args\": {\"op\": \"add\"}}],\n"
          " \"outputs\": [\"twice\"]}\n",
          f);
    fclose(f);
    assert_int_equal(sh("'%s' graph '%s' -o '%s'", cli, spec, svg_path), 0);
    char *svg = read_svg(svg_path);
    assert_non_null(strstr(svg, "random.uniform"));
    assert_non_null(strstr(svg, "twice"));
    assert_non_null(strstr(svg, "output 0"));
    free(svg);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_edges_fused),
        cmocka_unit_test(test_argument_inputs),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_unbuilt_equals_built),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_conditional_clusters),
    };
    const struct CMUnitTest drawn[] = {
        cmocka_unit_test(test_graphviz_reads_it),
        cmocka_unit_test(test_cli_draws_svg),
    };
    int failed = cmocka_run_group_tests_name("dot", tests, NULL, NULL);
    if (!have_dot()) {
        printf("SKIP: Graphviz's dot is not installed (scripts/setup.sh installs graphviz): the "
               "DOT text was checked, not drawn\n");
        return failed ? failed : 77;
    }
    return failed + cmocka_run_group_tests_name("drawn", drawn, NULL, NULL);
}
