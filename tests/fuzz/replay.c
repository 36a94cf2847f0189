/* tests/fuzz/replay.c: a main for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput once over every file named on the command line, and over every file of
 * every folder named (sorted by name, hidden files left out), so that regression inputs and seed
 * corpora are checked by ctest in every build (cmake/SluiceFuzz.cmake: fuzz_replay.<target>).
 *
 * Exports main. A finding aborts inside the target (fz_fail, or a sanitizer's report), naming
 * the input first: the input's path is printed before it runs when FUZZ_REPLAY_VERBOSE is set,
 * and always to stderr when the target aborts (SIGABRT handler). A folder that does not exist is
 * skipped with a note (a target may have no regressions yet); no input at all is an error.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current; /* the input running now, for the abort handler */

static void on_abort(int sig)
{
    if (current) {
        static const char msg[] = "fuzz_replay: the input that failed: ";
        (void)!write(2, msg, sizeof msg - 1);
        (void)!write(2, current, strlen(current));
        (void)!write(2, "\n", 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Reads the whole file; returns its bytes (malloc'ed, non-NULL even when empty) or NULL. */
static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *more = realloc(buf, cap *= 2);
        if (!more)
            free(buf);
        buf = more;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = n;
    return buf;
}

static int run_file(const char *path)
{
    size_t size;
    uint8_t *data = read_all(path, &size);
    if (!data) {
        fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
        return -1;
    }
    if (getenv("FUZZ_REPLAY_VERBOSE"))
        fprintf(stderr, "fuzz_replay: %s (%zu bytes)\n", path, size);
    current = path;
    /* A copy of exactly `size` bytes, so that ASan sees a read past the input's end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        free(data);
        return -1;
    }
    memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    current = NULL;
    free(copy);
    free(data);
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every file of folder `dir`; returns the number run, or -1 on an error. */
static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz_replay: %s: no such folder, skipped\n", dir);
        return 0;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **more = realloc(names, (n + 1) * sizeof *names);
        if (!more)
            break;
        names = more;
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (!names[n])
            break;
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (count >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            count = run_file(names[i]) < 0 ? -1 : count + 1;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
        return 2;
    }
    signal(SIGABRT, on_abort);
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int n =
            stat(argv[i], &st) == 0 && S_ISREG(st.st_mode) ? run_file(argv[i]) : run_dir(argv[i]);
        if (n < 0)
            return 1;
        printf("fuzz_replay: %s: %d inputs\n", argv[i], n);
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "fuzz_replay: no input was run\n");
        return 1;
    }
    printf("fuzz_replay: %d inputs, no finding\n", total);
    return 0;
}
