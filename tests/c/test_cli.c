/* test_cli: the `sluice` command (cli/), run as a separate process.
 *
 * The executable comes from SLUICE_CLI, the image tree (class folders of small JPEGs, 4 x 25)
 * from SLUICE_TEST_TREE; both are set by ctest. Each test runs the command through /bin/sh
 * with stdout and stderr captured together and checks the exit status (0 ok, 1 failure,
 * 2 usage) and the words the user must see. Specs are written into a fresh temporary
 * directory per test. `sluice graph` drawing through Graphviz is test_dot's.
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

#include "testutil.h"

static const char *cli;

typedef struct result {
    int status; /* exit status; -1 when the command did not exit normally */
    char out[1 << 16];
} result;

/* Runs `sluice <args>` (args is shell text) and captures its output. */
static void run(result *r, const char *fmt, ...) SL_PRINTF(2, 3);
static void run(result *r, const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", cli, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(r->out, 1, sizeof r->out - 1, p);
    r->out[n] = '\0';
    int st = pclose(p);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect(const result *r, int status, const char *word)
{
    if (r->status != status)
        fail_msg("exit status %d, expected %d; output:\n%s", r->status, status, r->out);
    if (word && !strstr(r->out, word))
        fail_msg("output lacks \"%s\":\n%s", word, r->out);
}

/* ---- ops, help, usage --------------------------------------------------------------------- */

static void test_ops_lists(void **state)
{
    (void)state;
    static result r;
    run(&r, "ops");
    expect(&r, 0, "decoders.image");
    expect(&r, 0, "readers.file");
    expect(&r, 0, "crop_mirror_normalize");
    /* each line: the name, then the first line of its doc */
    const char *line = strstr(r.out, "readers.file");
    assert_true(strcspn(line, "\n") > strlen("readers.file") + 8);
}

static void test_ops_describe(void **state)
{
    (void)state;
    static result r;
    run(&r, "ops crop_mirror_normalize");
    expect(&r, 0, "mean");
    char *line = strstr(r.out, "\n  mean ");
    assert_non_null(line);
    char *eol = strchr(line + 1, '\n');
    *eol = '\0';
    if (!strstr(line, "[0.0]") || !strstr(line, "list of float"))
        fail_msg("the row of mean lacks its type or default: %s", line);
    *eol = '\n';
    expect(&r, 0, "out_of_bounds_policy");
    expect(&r, 0, "error|pad|trim_to_shape");
    expect(&r, 0, "inputs:");
    expect(&r, 0,
           "also accepted: output_dtype (deprecated name of dtype), image_type "
           "(deprecated, ignored)");
    run(&r, "ops cat");
    expect(&r, 0, "(1 or more inputs)");
    run(&r, "ops shapes");
    expect(&r, 0, "metadata only");
    run(&r, "ops readers.file");
    expect(&r, 0, "optional");
    expect(&r, 0, "source, stateful");
}

static void test_ops_unknown(void **state)
{
    (void)state;
    static result r;
    run(&r, "ops nope");
    expect(&r, 2, "unknown operator \"nope\"");
    run(&r, "ops image");
    expect(&r, 2, "did you mean \"decoders.image\"");
}

static void test_help_version_usage(void **state)
{
    (void)state;
    static result r;
    run(&r, "--version");
    expect(&r, 0, "sluice ");
    assert_non_null(strstr(r.out, sl_version()));
    run(&r, "help");
    expect(&r, 0, "usage: sluice");
    run(&r, "%s", "");
    expect(&r, 2, "usage: sluice");
    run(&r, "frobnicate");
    expect(&r, 2, "unknown command \"frobnicate\"");
    run(&r, "run");
    expect(&r, 2, "usage: sluice");
    run(&r, "run x.json --iters zero");
    expect(&r, 2, "--iters");
    run(&r, "run x.json --bogus");
    expect(&r, 2, "unknown option \"--bogus\"");
    run(&r, "run x.json --set nodot=1");
    expect(&r, 2, "NODE.ARG=VALUE");
}

/* ---- run ---------------------------------------------------------------------------------- */

typedef struct fixture {
    char *dir;
    const char *tree;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    f->tree = getenv("SLUICE_TEST_TREE");
    *state = f;
    return f->dir ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tu_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* The image tree, or skips the test when there is none. */
static const char *tree(const fixture *f)
{
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/class_00", f->tree ? f->tree : "");
    if (!f->tree || access(probe, R_OK) != 0)
        skip();
    return f->tree;
}

/* Writes a reader -> decoder -> crop_mirror_normalize spec to <dir>/<name>; dec_args goes into
 * the decoder's "args" object. Returns: the path (static buffer). */
static const char *write_spec(const fixture *f, const char *name, const char *root,
                              const char *dec_args)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    fprintf(o,
            "{\n"
            "  \"pipeline\": {\"batch_size\": 8, \"num_threads\": 2, \"seed\": 1},\n"
            "  \"nodes\": [\n"
            "    {\"name\": \"reader\", \"op\": \"readers.file\",\n"
            "     \"args\": {\"file_root\": \"%s\", \"random_shuffle\": true}},\n"
            "    {\"name\": \"dec\", \"op\": \"decoders.image\", \"inputs\": [\"reader\"],\n"
            "     \"args\": {%s}},\n"
            "    {\"name\": \"coin\", \"op\": \"random.coin_flip\"},\n"
            "    {\"name\": \"cmn\", \"op\": \"crop_mirror_normalize\", \"inputs\": [\"dec\"],\n"
            "     \"args\": {\"crop\": [32, 32], \"mean\": [128.0], \"std\": [64.0]},\n"
            "     \"arg_inputs\": {\"mirror\": \"coin\"}}\n"
            "  ],\n"
            "  \"outputs\": [\"cmn\", \"reader:1\"]\n"
            "}\n",
            root, dec_args);
    fclose(o);
    return path;
}

static void test_run_iters(void **state)
{
    fixture *f = *state;
    static result r;
    const char *spec = write_spec(f, "ok.json", tree(f), "\"output_type\": \"RGB\"");
    run(&r, "run '%s' --iters 3 --threads 2 --quiet", spec);
    expect(&r, 0, "images/s");
    expect(&r, 0, "iterations           3\n");
    expect(&r, 0, "images               24 ");
    expect(&r, 0, "time to first batch");
    expect(&r, 0, "seed                 1\n"); /* the spec's */
    assert_null(strstr(r.out, "iters  "));     /* no progress bar off a terminal */
}

/* By default one epoch of the reader: 100 images in batches of 32 (--batch) = 4 iterations;
 * --epochs multiplies it. --set replaces a wrong file_root; --stats and --trace report. */
static void test_run_epoch_set_stats_trace(void **state)
{
    fixture *f = *state;
    static result r;
    char trace[4096];
    const char *t = tree(f);
    const char *spec = write_spec(f, "set.json", "/nonexistent", "");
    snprintf(trace, sizeof trace, "%s/trace.json", f->dir);
    run(&r,
        "run '%s' --batch 32 --set 'reader.file_root=%s' --set 'dec.output_type=\"RGB\"' "
        "--stats --trace '%s'",
        spec, t, trace);
    expect(&r, 0, "iterations           4\n");
    expect(&r, 0, "BUSY %");
    expect(&r, 0, "crop_mirror_normalize");
    size_t n = 0;
    unsigned char *text = tu_read_file(trace, &n);
    assert_non_null(text);
    assert_true(n > 2 && (text[0] == '{' || text[0] == '['));
    free(text);
    run(&r, "run '%s' --batch 32 --epochs 2 --root '%s' --quiet --seed 77", spec, t);
    expect(&r, 0, "iterations           8\n");
    expect(&r, 0, "seed                 77\n");
}

/* The sample cache from a spec: --stats ends with its line (the coin feeding cmn's mirror
 * leaves reader and decoder cached: 2 nodes; two epochs of 100 images, all held). */
static void test_run_sample_cache(void **state)
{
    fixture *f = *state;
    static result r;
    const char *spec = write_spec(f, "cached.json", tree(f), "\"output_type\": \"RGB\"");
    size_t n = 0;
    char *text = (char *)tu_read_file(spec, &n);
    assert_non_null(text);
    const char *key = "\"seed\": 1}";
    text = realloc(text, n + 1); /* the file's bytes, as a string */
    assert_non_null(text);
    text[n] = '\0';
    char *at = strstr(text, key);
    assert_non_null(at);
    FILE *o = fopen(spec, "w");
    assert_non_null(o);
    fprintf(o, "%.*s\"seed\": 1, \"cache_bytes\": 67108864}%s", (int)(at - text), text,
            at + strlen(key));
    fclose(o);
    free(text);
    run(&r, "run '%s' --batch 20 --epochs 2 --stats", spec);
    expect(&r, 0, "iterations           10\n");
    expect(&r, 0, "cache: 2 nodes, ");
    expect(&r, 0, " 100 samples held, ");
    expect(&r, 0, " of 67108864 bytes\n");
}

static void test_run_bad_argument(void **state)
{
    fixture *f = *state;
    static result r;
    const char *spec = write_spec(f, "typo.json", tree(f), "\"output_typ\": \"RGB\"");
    run(&r, "run '%s' --iters 1", spec);
    expect(&r, 1, "\"dec\"");
    expect(&r, 1, "output_typ");
    spec = write_spec(f, "ok.json", tree(f), "");
    run(&r, "run '%s' --iters 1 --set 'cmn.crop=[32, 32, 32]'", spec);
    expect(&r, 1, "\"cmn\"");
    expect(&r, 1, "crop");
}

static void test_run_bad_spec(void **state)
{
    fixture *f = *state;
    static result r;
    char path[4096];
    snprintf(path, sizeof path, "%s/syntax.json", f->dir);
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    fputs("{\n  \"nodes\": [\n    {\"name\": \"a\",, \"op\": \"x\"}\n  ]\n}\n", o);
    fclose(o);
    run(&r, "run '%s'", path);
    expect(&r, 1, "line 3, column");
    expect(&r, 1, "syntax.json");

    o = fopen(path, "w");
    fputs("{\"nodes\": [{\"name\": \"a\", \"op\": \"readers.file\", \"arg\": {}}]}", o);
    fclose(o);
    run(&r, "run '%s'", path);
    expect(&r, 1, "nodes[0] (\"a\"): unknown key \"arg\"");
    run(&r, "run '%s/missing.json'", f->dir);
    expect(&r, 1, "cannot read");
}

/* ---- graph -------------------------------------------------------------------------------- */

/* The library's DOT text of the spec at path (what `sluice graph` must print). */
static char *library_dot(const char *path)
{
    size_t n = 0;
    char *json = (char *)tu_read_file(path, &n), *text = NULL;
    assert_non_null(json);
    json = realloc(json, n + 1);
    json[n] = '\0';
    sl_graph *g;
    sl_pipeline_options o;
    sl_pipeline *p;
    sl_pipeline_options_init(&o);
    assert_int_equal(sl_graph_from_json(json, &g), SL_OK);
    assert_int_equal(sl_pipeline_options_from_json(json, &o), SL_OK);
    assert_int_equal(sl_pipeline_create(g, &o, &p), SL_OK);
    FILE *mem = open_memstream(&text, &n);
    assert_int_equal(sl_pipeline_write_dot(p, mem), SL_OK);
    fclose(mem);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    free(json);
    return text;
}

/* The spec's picture on stdout, in FILE.dot and in FILE.gv is the library's text, byte for
 * byte; no data is read (the file_root does not exist), standard input works too. */
static void test_graph_text(void **state)
{
    fixture *f = *state;
    static result r;
    char out[4096];
    const char *spec = write_spec(f, "g.json", "/nonexistent", "");
    char *want = library_dot(spec);
    run(&r, "graph '%s'", spec);
    expect(&r, 0, "digraph sluice {");
    assert_string_equal(r.out, want);
    run(&r, "graph - < '%s'", spec);
    expect(&r, 0, NULL);
    assert_string_equal(r.out, want);
    for (int k = 0; k < 2; k++) {
        snprintf(out, sizeof out, "%s/pic.%s", f->dir, k ? "gv" : "dot");
        run(&r, "graph '%s' -o '%s'", spec, out);
        expect(&r, 0, NULL);
        assert_string_equal(r.out, ""); /* nothing on stdout or stderr */
        size_t n = 0;
        char *text = (char *)tu_read_file(out, &n);
        assert_non_null(text);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(text, want, n);
        free(text);
    }
    free(want);
}

static void test_graph_usage_and_errors(void **state)
{
    fixture *f = *state;
    static result r;
    char out[4096];
    const char *spec = write_spec(f, "g.json", "/nonexistent", "");
    run(&r, "graph");
    expect(&r, 2, "graph needs a spec file");
    run(&r, "graph '%s' other.json", spec);
    expect(&r, 2, "graph takes one spec file");
    run(&r, "graph '%s' --bogus", spec);
    expect(&r, 2, "unknown option \"--bogus\"");
    run(&r, "graph '%s' -o", spec);
    expect(&r, 2, "-o needs a file name");
    run(&r, "graph '%s' -o pic.jpg", spec);
    expect(&r, 2, "the suffix says the format: .dot or .gv (DOT text), .svg, .png or .pdf");
    run(&r, "graph '%s/missing.json'", f->dir);
    expect(&r, 1, "cannot read");

    /* a graph the build rejects: its error, naming the node; no file is left */
    spec = write_spec(f, "bad.json", "/nonexistent", "\"output_typ\": \"RGB\"");
    snprintf(out, sizeof out, "%s/bad.dot", f->dir);
    run(&r, "graph '%s' -o '%s'", spec, out);
    expect(&r, 1, "decoders.image (node \"dec\")");
    expect(&r, 1, "output_typ");
    assert_int_equal(access(out, F_OK), -1);

    /* drawing without Graphviz: what to install, exit 1, no file */
    spec = write_spec(f, "g.json", "/nonexistent", "");
    snprintf(out, sizeof out, "%s/pic.svg", f->dir);
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", f->dir, 1); /* no dot there; the command is run by absolute path */
    run(&r, "graph '%s' -o '%s'", spec, out);
    setenv("PATH", path, 1);
    free(path);
    expect(&r, 1,
           "needs Graphviz's dot command, which is not installed: install Debian's "
           "graphviz package");
    assert_int_equal(access(out, F_OK), -1);
}

/* ---- ops --markdown ------------------------------------------------------------------------ */

/* The section "## name" of the Markdown reference, up to the next section (copied into buf).
 * Returns: buf, or NULL when there is no such section. */
static char *md_section(const char *md, const char *name, char *buf, size_t cap)
{
    char heading[256];
    snprintf(heading, sizeof heading, "\n## %s\n", name);
    const char *start = strstr(md, heading);
    if (!start)
        return NULL;
    const char *end = strstr(start + 1, "\n## ");
    size_t n = end ? (size_t)(end - start) : strlen(start);
    snprintf(buf, cap, "%.*s", (int)n, start);
    return buf;
}

#ifdef SLUICE_HAVE_CUDA /* only test_run_infers_device reads stats lines, with CUDA */
/* The line of node `name` in the --stats table of r (copied into line), or false. */
static bool stats_line(const result *r, const char *name, char *line, size_t cap)
{
    size_t n = strlen(name);
    for (const char *l = r->out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, name, n) == 0 && l[n] == ' ') {
            const char *end = strchr(l, '\n');
            snprintf(line, cap, "%.*s", (int)(end ? end - l : (long)strlen(l)), l);
            return true;
        }
    }
    return false;
}
#endif

/* Writes <dir>/<name>: reader -> decoders.image on "mixed" -> crop_mirror_normalize without a
 * device (mirror from a coin), in a pipeline on CUDA device `device_id`. Returns the path
 * (static buffer). */
static const char *write_mixed_spec(const fixture *f, const char *name, int device_id)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    fprintf(
        o,
        "{\"pipeline\": {\"batch_size\": 4, \"num_threads\": 2, \"device_id\": %d},\n"
        " \"nodes\": [\n"
        "  {\"name\": \"reader\", \"op\": \"readers.file\", \"args\": {\"file_root\": \"%s\"}},\n"
        "  {\"name\": \"dec\", \"op\": \"decoders.image\", \"device\": \"mixed\",\n"
        "   \"inputs\": [\"reader\"]},\n"
        "  {\"name\": \"coin\", \"op\": \"random.coin_flip\"},\n"
        "  {\"name\": \"cmn\", \"op\": \"crop_mirror_normalize\", \"inputs\": [\"dec\"],\n"
        "   \"args\": {\"crop\": [32, 32]}, \"arg_inputs\": {\"mirror\": \"coin\"}}],\n"
        " \"outputs\": [\"cmn\", \"reader:1\"]}\n",
        device_id, tree(f));
    fclose(o);
    return path;
}

/* A spec's node without "device" runs where its inputs are (DALI's rule, decided by the
 * library's build): crop_mirror_normalize below a mixed decoder on gpu (the GPU stage
 * emulated on the host), its mirror argument input from the CPU; the stats say so. */
static void test_run_infers_device(void **state)
{
    fixture *f = *state;
    static result r;
    char line[512];
    setenv("SLUICE_GPU_EMULATE", "1", 1);
    run(&r, "run '%s' --iters 2 --stats", write_mixed_spec(f, "gpu.json", 0));
#ifdef SLUICE_HAVE_CUDA
    expect(&r, 0, "iterations           2\n");
    if (!stats_line(&r, "cmn", line, sizeof line) || !strstr(line, "  gpu "))
        fail_msg("cmn is not on gpu in the stats:\n%s", r.out);
    if (!stats_line(&r, "coin", line, sizeof line) || !strstr(line, "  cpu "))
        fail_msg("coin is not on cpu in the stats:\n%s", r.out);
    /* a CPU-only pipeline: the mixed decoder is the error, named; not the nodes below it */
    run(&r, "run '%s' --iters 1", write_mixed_spec(f, "cpu_only.json", -1));
    expect(&r, 1, "decoders.image (node \"dec\")");
    expect(&r, 1, "CPU-only pipeline");
#else
    (void)line;
    expect(&r, 1, "decoders.image (node \"dec\")");
    expect(&r, 1, "needs CUDA");
#endif
    unsetenv("SLUICE_GPU_EMULATE");
}

/* Every operator `sluice ops` lists has a section, and every argument of it a table row with
 * its type; random_shuffle's row shows its default. */
static void test_ops_markdown(void **state)
{
    fixture *f = *state;
    static result r;
    static char list[sizeof r.out], section[1 << 16];
    char path[4096];
    run(&r, "ops");
    expect(&r, 0, NULL);
    memcpy(list, r.out, sizeof list);
    snprintf(path, sizeof path, "%s/ops.md", f->dir);
    run(&r, "ops --markdown > '%s'", path);
    expect(&r, 0, NULL);
    size_t n = 0;
    char *md = (char *)tu_read_file(path, &n);
    assert_non_null(md);
    md = realloc(md, n + 1);
    md[n] = '\0';

    int listed = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char name[128];
        assert_int_equal(sscanf(line, "%127s", name), 1);
        const sl_op_def *op = sl_registry_find(name);
        assert_non_null(op);
        if (!md_section(md, name, section, sizeof section))
            fail_msg("ops.md has no section \"## %s\"", name);
        for (int a = 0; a < sl_op_num_args(op); a++) {
            char row[256];
            const sl_arg_def *def = sl_op_arg(op, a);
            snprintf(row, sizeof row, "\n| `%s` | %s | ", def->name, sl_arg_type_name(def->type));
            if (!strstr(section, row))
                fail_msg("section %s lacks the row \"%s\"", name, row + 1);
        }
        listed++;
    }
    assert_int_equal(listed, sl_registry_count());

    assert_non_null(md_section(md, "readers.file", section, sizeof section));
    const char *row = strstr(section, "| `random_shuffle` | bool | `false` | no |");
    if (!row)
        fail_msg("readers.file lacks random_shuffle with its default false:\n%s", section);
    free(md);

    run(&r, "ops --markdown readers.file");
    expect(&r, 0, "## readers.file\n");
    assert_null(strstr(r.out, "## decoders.image"));
    run(&r, "ops --markdown nope");
    expect(&r, 2, "unknown operator \"nope\"");
    run(&r, "ops --markdown readers.file decoders.image");
    expect(&r, 2, "usage: sluice ops");
}

int main(void)
{
    cli = getenv("SLUICE_CLI");
    if (!cli || !*cli) {
        fprintf(stderr, "SKIP: SLUICE_CLI is not set (run this test through ctest)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_lists),
        cmocka_unit_test(test_ops_describe),
        cmocka_unit_test(test_ops_unknown),
        cmocka_unit_test(test_help_version_usage),
        cmocka_unit_test_setup_teardown(test_run_iters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_epoch_set_stats_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_sample_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_bad_argument, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_bad_spec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_markdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_infers_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_usage_and_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
