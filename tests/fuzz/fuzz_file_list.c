/* tests/fuzz/fuzz_file_list.c: fuzz target "file_list": the list files of readers.file
 * (`file_list`, lines "path label"), parsed when the pipeline is built (docs/fuzzing.md).
 *
 * Input: the list file's bytes, written to LIST in a private temporary folder ROOT that also
 * holds the files FILES; the reader gets file_list = LIST and file_root = ROOT.
 * Checks, against the format written again here from the argument's documentation (the label is
 * the line's last whitespace-separated token, a decimal int32; the path is the rest, trimmed,
 * and must not be empty; blank lines are ignored; a line ends at its first NUL, as a C string):
 * - the build succeeds exactly when every line is valid and there is at least one, and then the
 *   reader's epoch has one sample per line; a failed build has a message;
 * - when the first path has no '/' (so it stays inside ROOT): one iteration reads it, with the
 *   first label, as source ROOT/path; a file of FILES reads back its contents, any other name
 *   may fail with SL_EIO only.
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"

#define LIST "list.txt"

static const char *const FILES[][2] = {
    {"a", "A"}, {"b c", "bytes of b c"}, {"d.jpg", "\xff\xd8 not a JPEG"}, {"0", ""}};
enum { NUM_FILES = sizeof FILES / sizeof FILES[0] };

static char root[64]; /* made once, removed at exit */
static bool made;
static char list_path[sizeof root + sizeof LIST];

static void remove_root(void)
{
    char path[sizeof root + 64];
    for (int i = 0; i < NUM_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", root, FILES[i][0]);
        unlink(path);
    }
    unlink(list_path);
    rmdir(root);
}

static void make_root(void)
{
    made = true;
    fz_mkdtemp(root, sizeof root, "sluice-fuzz-list-XXXXXX");
    snprintf(list_path, sizeof list_path, "%s/%s", root, LIST);
    atexit(remove_root);
    char path[sizeof root + 64];
    for (int i = 0; i < NUM_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", root, FILES[i][0]);
        FILE *f = fopen(path, "wb");
        if (!f || fputs(FILES[i][1], f) < 0 || fclose(f) != 0)
            fz_fail("cannot write %s", path);
    }
}

/* What the list should give: its sample count (-1: some line is invalid), the first sample. */
typedef struct expect {
    long samples;
    char *first_path; /* malloc'ed, NULL when no sample */
    long long first_label;
} expect;

/* One line (without its '\n'): 0 blank, 1 a sample (path, label), -1 invalid. */
static int parse_line(const char *line, size_t len, char **path, long long *label)
{
    size_t n = strnlen(line, len);
    while (n > 0 && isspace((unsigned char)line[n - 1]))
        n--;
    size_t s = 0;
    while (s < n && isspace((unsigned char)line[s]))
        s++;
    if (s == n)
        return 0;
    size_t tok = n;
    while (tok > s && !isspace((unsigned char)line[tok - 1]))
        tok--;
    size_t pend = tok;
    while (pend > s && isspace((unsigned char)line[pend - 1]))
        pend--;
    if (pend == s)
        return -1;
    char *num = strndup(line + tok, n - tok), *end;
    if (!num)
        fz_fail("out of memory");
    errno = 0;
    long long v = strtoll(num, &end, 10);
    bool ok = end != num && !*end && !errno && v >= INT32_MIN && v <= INT32_MAX;
    free(num);
    if (!ok)
        return -1;
    *label = v;
    *path = strndup(line + s, pend - s);
    return 1;
}

static expect reference(const uint8_t *data, size_t size)
{
    expect e = {0, NULL, 0};
    size_t start = 0;
    while (start < size) {
        const uint8_t *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) : size;
        char *path = NULL;
        long long label;
        int r = parse_line((const char *)data + start, end - start, &path, &label);
        if (r < 0) {
            e.samples = -1;
            break;
        }
        if (r > 0 && e.samples++ == 0) {
            e.first_path = path;
            e.first_label = label;
        } else {
            free(path);
        }
        start = end + 1;
    }
    if (e.samples <= 0) {
        free(e.first_path);
        e.first_path = NULL;
    }
    return e;
}

static void write_list(const uint8_t *data, size_t size)
{
    FILE *f = fopen(list_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fz_fail("cannot write %s", list_path);
}

/* One iteration: the first sample, read from ROOT. */
static void check_first(sl_pipeline *p, const expect *e)
{
    sl_status s = fz_run(p);
    const char *content = NULL;
    for (int i = 0; i < NUM_FILES; i++)
        if (strcmp(e->first_path, FILES[i][0]) == 0)
            content = FILES[i][1];
    if (s != SL_OK) {
        if (content || s != SL_EIO)
            fz_fail("reading \"%s\" failed with %s: %s", e->first_path, sl_status_name(s),
                    sl_pipeline_error(p));
        return;
    }
    const sl_batch *d = sl_pipeline_output(p, 0), *l = sl_pipeline_output(p, 1);
    char source[sizeof root + 4096];
    snprintf(source, sizeof source, "%s/%s", root, e->first_path);
    const char *got = sl_batch_source(d, 0);
    if (!got || strcmp(got, source) != 0)
        fz_fail("first sample's source \"%s\", want \"%s\"", got ? got : "(none)", source);
    int32_t label = *(const int32_t *)sl_batch_sample_data(l, 0);
    if (label != e->first_label)
        fz_fail("first label %d, want %lld", label, e->first_label);
    if (content && (sl_batch_sample_numel(d, 0) != (int64_t)strlen(content) ||
                    memcmp(sl_batch_sample_data(d, 0), content, strlen(content)) != 0))
        fz_fail("\"%s\" read back %lld bytes, not its contents", e->first_path,
                (long long)sl_batch_sample_numel(d, 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!made)
        make_root();
    write_list(data, size);
    expect e = reference(data, size);
    sl_graph *g;
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, "readers.file", "r", NULL), "add r");
    fz_check(sl_graph_arg_str(g, "r", "file_list", list_path), "file_list");
    fz_check(sl_graph_arg_str(g, "r", "file_root", root), "file_root");
    fz_check(sl_graph_output(g, "r:0"), "output r:0");
    fz_check(sl_graph_output(g, "r:1"), "output r:1");
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(g, &o, &p), "sl_pipeline_create");
    sl_status s = sl_pipeline_build(p);
    if ((s == SL_OK) != (e.samples > 0))
        fz_fail("build %s (%s), but the list has %ld samples (-1: an invalid line)",
                sl_status_name(s), sl_pipeline_error(p), e.samples);
    if (s != SL_OK && !*sl_pipeline_error(p))
        fz_fail("build failed with %s and no message", sl_status_name(s));
    if (s == SL_OK && sl_pipeline_epoch_size(p, "r") != e.samples)
        fz_fail("epoch of %lld samples, the list has %ld",
                (long long)sl_pipeline_epoch_size(p, "r"), e.samples);
    if (s == SL_OK && !strchr(e.first_path, '/'))
        check_first(p, &e);
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    free(e.first_path);
    return 0;
}
