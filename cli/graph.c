/* cli/graph.c: `sluice graph SPEC.json [-o FILE]`: a picture of the pipeline a spec describes.
 *
 * The DOT text is the library's (sl_pipeline_write_dot: the plan the build makes, without
 * initialising an operator, so no data needs to be there). Without -o it goes to stdout;
 * FILE.dot / FILE.gv receive it as is; FILE.svg / .png / .pdf are drawn by Graphviz's `dot`
 * command, fed the text on its standard input. The text is made whole before anything is
 * written, so a spec the build rejects leaves no file behind. Without Graphviz a drawn format
 * fails (exit 1) saying what to install.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/sluice.h"

#include "cli.h"

extern char **environ;

/* What -o asks for, from the file name's suffix. */
typedef enum form { FORM_STDOUT, FORM_DOT, FORM_DRAWN } form;

static int usage_error(const char *fmt, ...) SL_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sluice: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n\n", stderr);
    cli_usage(stderr);
    return CLI_USAGE;
}

/* The form of output file `path`; *fmt receives dot's -T format of a drawn one. Returns
 * false for a suffix the command does not know. */
static bool form_of(const char *path, form *out, const char **fmt)
{
    static const char *const drawn[] = {"svg", "png", "pdf"};
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && slash > dot))
        return false;
    if (strcmp(dot, ".dot") == 0 || strcmp(dot, ".gv") == 0) {
        *out = FORM_DOT;
        return true;
    }
    for (size_t k = 0; k < sizeof drawn / sizeof drawn[0]; k++) {
        if (strcmp(dot + 1, drawn[k]) == 0) {
            *out = FORM_DRAWN;
            *fmt = drawn[k];
            return true;
        }
    }
    return false;
}

/* The DOT text of the spec's pipeline. Returns: malloc'd text, NULL after a message. */
static char *dot_text(const char *spec)
{
    sl_graph *g = NULL;
    sl_pipeline_options o;
    sl_pipeline *p = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = NULL;
    if (cli_spec_load(spec, &g, &o) != CLI_OK)
        goto done;
    if (sl_pipeline_create(g, &o, &p) != SL_OK) {
        fprintf(stderr, "sluice: %s\n", sl_last_error());
        goto done;
    }
    mem = open_memstream(&text, &len);
    if (!mem) {
        fprintf(stderr, "sluice: out of memory\n");
        goto done;
    }
    sl_status st = sl_pipeline_write_dot(p, mem);
    if (fclose(mem) != 0 && st == SL_OK) {
        fprintf(stderr, "sluice: out of memory\n");
        st = SL_ENOMEM;
    } else if (st != SL_OK) {
        fprintf(stderr, "sluice: %s\n", sl_pipeline_error(p));
    }
    if (st != SL_OK) {
        free(text);
        text = NULL;
    }
done:
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    return text;
}

static int write_dot(const char *text, const char *path)
{
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text, f) != EOF;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "sluice: cannot write \"%s\": %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Runs `dot -T<fmt> -o path` with text on its standard input; dot's own messages go to our
 * stderr. SIGPIPE is ignored meanwhile so that a dot that dies early is reported by its exit
 * status rather than killing this process. */
static int draw(const char *text, const char *path, const char *fmt)
{
    char tflag[16];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    char *args[] = {"dot", tflag, "-o", (char *)path, NULL};
    int fds[2], status = 0, err;
    pid_t pid;
    if (pipe(fds) != 0) {
        fprintf(stderr, "sluice: cannot run dot: %s\n", strerror(errno));
        return CLI_FAIL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    err = posix_spawnp(&pid, "dot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (err != 0) {
        close(fds[1]);
        if (err == ENOENT)
            fprintf(stderr,
                    "sluice: writing \"%s\" needs Graphviz's dot command, which is not "
                    "installed: install Debian's graphviz package (apt-get install graphviz), or "
                    "write DOT text with -o FILE.dot\n",
                    path);
        else
            fprintf(stderr, "sluice: cannot run dot: %s\n", strerror(err));
        return CLI_FAIL;
    }
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    bool written = true;
    for (size_t n = strlen(text), done = 0; written && done < n;) {
        ssize_t w = write(fds[1], text + done, n - done);
        written = w > 0 || (w < 0 && errno == EINTR);
        done += w > 0 ? (size_t)w : 0;
    }
    close(fds[1]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    signal(SIGPIPE, old);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !written) {
        fprintf(stderr, "sluice: dot %s -o \"%s\" failed (%s %d)\n", tflag, path,
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_graph(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *fmt = NULL;
    form fm = FORM_STDOUT;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (++i == argc)
                return usage_error("graph: %s needs a file name", a);
            out = argv[i];
        } else if (strncmp(a, "--output=", 9) == 0) {
            out = a + 9;
        } else if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (spec)
                return usage_error("graph takes one spec file, got another: \"%s\"", a);
            spec = a;
        } else {
            return usage_error("graph: unknown option \"%s\"", a);
        }
    }
    if (!spec)
        return usage_error("graph needs a spec file: sluice graph SPEC.json [-o FILE]");
    if (out && !form_of(out, &fm, &fmt))
        return usage_error("graph: -o \"%s\": the suffix says the format: .dot or .gv (DOT "
                           "text), .svg, .png or .pdf (drawn by Graphviz)",
                           out);
    char *text = dot_text(spec);
    if (!text)
        return CLI_FAIL;
    int rc = CLI_OK;
    if (fm == FORM_STDOUT)
        rc = fputs(text, stdout) == EOF || fflush(stdout) != 0 ? CLI_FAIL : CLI_OK;
    else if (fm == FORM_DOT)
        rc = write_dot(text, out);
    else
        rc = draw(text, out, fmt);
    free(text);
    return rc;
}
