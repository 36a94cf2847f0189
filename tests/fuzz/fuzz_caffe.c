/* tests/fuzz/fuzz_caffe.c: fuzz target "caffe": one LMDB value as readers.caffe (a Caffe Datum)
 * or readers.caffe2 (Caffe2 TensorProtos) parse it (src/ops/readers/caffe_parse.c, the protobuf
 * wire helper of tfrecord_parse.c, and lmdb.c's checks behind them; docs/fuzzing.md).
 *
 * Input: a mode byte, then the value. The harness writes the value under the key "k" into an
 * LMDB database (liblmdb, in a private temporary folder), replacing the last input's, through a
 * writer's environment kept open for the whole run (MDB_NOLOCK, as the reader; the write is
 * committed before the reader opens the database). Mode bits: 0 caffe2 (else caffe); 1
 * image_available false; 2-4 label_type (their value mod 5, caffe2) or, bit 2, label_available
 * false (caffe); 5 additional_inputs 2; 6 bbox; 7 num_labels 3 (else 1000). Checks:
 * - the build succeeds, or fails with SL_ECORRUPT naming the database (the first entry fixes the
 *   outputs' layout, so a value that does not parse fails the build);
 * - each of 2 runs keeps fz_run's contract, and a successful one the output contract: images
 *   uint8 holding no more bytes than the value; every other output 1-D, int32 / int64 / float32,
 *   at most num_labels values for the sparse label types, the bbox 0 or 4 values;
 * - the two runs give the same samples (the parse is a function of the bytes).
 *
 * Exports LLVMFuzzerTestOneInput.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"

static char root[64]; /* made once, removed at exit */
static char data_path[sizeof root + 16];
static MDB_env *env; /* the writer's environment: opened once, kept for the whole run */
static MDB_dbi dbi;

static sl_graph *graphs[256]; /* the reader's graph per mode byte (the_graph), made once */

static void close_db(void)
{
    for (int i = 0; i < 256; i++)
        sl_graph_destroy(graphs[i]);
    mdb_env_close(env);
    unlink(data_path);
    rmdir(root);
}

static void lmdb_check(int rc, const char *what)
{
    if (rc != 0)
        fz_fail("cannot write the LMDB database %s: %s: %s", root, what, mdb_strerror(rc));
}

/* Makes the database folder and opens the writer's environment on it, once. Opening one per
 * input cost most of the target's time: mdb_env_open allocates a writer's page lists (over
 * 2 MiB), which ASan maps, shadow-poisons and unmaps on every open and close. MDB_NOLOCK: no
 * lock file, as the reader opens it (lmdb.c); MDB_NOSYNC: nothing is flushed to the (tmpfs)
 * file system, whose page cache the reader's map shares. */
static void open_db(void)
{
    fz_mkdtemp(root, sizeof root, "sluice-fuzz-caffe-XXXXXX");
    snprintf(data_path, sizeof data_path, "%s/data.mdb", root);
    lmdb_check(mdb_env_create(&env), "mdb_env_create");
    lmdb_check(mdb_env_set_mapsize(env, (size_t)64 << 20), "mdb_env_set_mapsize");
    lmdb_check(mdb_env_open(env, root, MDB_NOSYNC | MDB_NOLOCK, 0600), "mdb_env_open");
    MDB_txn *txn;
    lmdb_check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
    lmdb_check(mdb_dbi_open(txn, NULL, 0, &dbi), "mdb_dbi_open");
    lmdb_check(mdb_txn_commit(txn), "mdb_txn_commit");
    atexit(close_db);
}

/* The database then holds one entry, "k" -> value: each input replaces the last one's in a
 * committed write transaction (LMDB's copy-on-write keeps the previous version's pages until
 * the next commit, so the layout of the file's pages depends on earlier inputs; what the
 * reader sees through liblmdb, the one key and its value, does not). The reader's pipelines
 * are destroyed before the next write. */
static void write_db(const uint8_t *value, size_t size)
{
    if (!env)
        open_db();
    MDB_txn *txn;
    MDB_val k = {.mv_size = 1, .mv_data = "k"}, v = {.mv_size = size, .mv_data = (void *)value};
    lmdb_check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
    int rc = mdb_put(txn, dbi, &k, &v, 0);
    if (rc != 0) {
        mdb_txn_abort(txn);
        lmdb_check(rc, "mdb_put");
    }
    lmdb_check(mdb_txn_commit(txn), "mdb_txn_commit");
}

typedef struct mode {
    bool caffe2, image, label, bbox;
    int label_type, additional, num_labels, nout;
} mode;

static mode parse_mode(uint8_t m)
{
    mode o = {.caffe2 = m & 1, .image = !(m & 2), .bbox = (m & 64) && (m & 1)};
    o.label_type = o.caffe2 ? ((m >> 2) & 7) % 5 : 0;
    o.label = o.caffe2 ? o.label_type != 4 : !(m & 4);
    o.additional = o.caffe2 && (m & 32) ? 2 : 0;
    o.num_labels = m & 128 ? 3 : 1000;
    o.nout = o.image + o.label + o.additional + o.bbox;
    return o;
}

/* The reader's graph for mode byte `byte` (m its meaning): made on first use and kept (the
 * database's path does not change); each pipeline copies it. */
static sl_graph *the_graph(uint8_t byte, const mode *m)
{
    sl_graph *g = graphs[byte];
    if (g)
        return g;
    const char *op = m->caffe2 ? "readers.caffe2" : "readers.caffe";
    fz_check(sl_graph_create(&g), "sl_graph_create");
    fz_check(sl_graph_add(g, op, "r", NULL), "add r");
    fz_check(sl_graph_arg_str(g, "r", "path", root), "path");
    fz_check(sl_graph_arg_bool(g, "r", "image_available", m->image), "image_available");
    if (m->caffe2) {
        fz_check(sl_graph_arg_int(g, "r", "label_type", m->label_type), "label_type");
        fz_check(sl_graph_arg_int(g, "r", "num_labels", m->num_labels), "num_labels");
        fz_check(sl_graph_arg_int(g, "r", "additional_inputs", m->additional), "additional");
        fz_check(sl_graph_arg_bool(g, "r", "bbox", m->bbox), "bbox");
    } else {
        fz_check(sl_graph_arg_bool(g, "r", "label_available", m->label), "label_available");
    }
    for (int o = 0; o < m->nout; o++) {
        char name[16];
        snprintf(name, sizeof name, "r:%d", o);
        fz_check(sl_graph_output(g, name), "output");
    }
    return graphs[byte] = g;
}

static sl_pipeline *make(uint8_t byte, const mode *m, bool *built)
{
    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 1;
    o.num_threads = 0; /* the calling thread runs the tasks: no thread start, join or hand-off */
    o.prefetch_queue_depth = 1;
    o.max_sample_bytes = 16 << 20;
    sl_pipeline *p = NULL;
    fz_check(sl_pipeline_create(the_graph(byte, m), &o, &p), "sl_pipeline_create");
    sl_status st = sl_pipeline_build(p);
    *built = st == SL_OK;
    if (st != SL_OK && (st != SL_ECORRUPT || !strstr(sl_pipeline_error(p), root)))
        fz_fail("build failed with %s (not a corrupt value naming the database): %s",
                sl_status_name(st), sl_pipeline_error(p));
    return p;
}

static void check(sl_pipeline *p, const mode *m, size_t size)
{
    for (int o = 0; o < m->nout; o++) {
        const sl_batch *b = sl_pipeline_output(p, o);
        sl_dtype t = sl_batch_dtype(b);
        int64_t n = sl_batch_sample_numel(b, 0);
        if (o == 0 && m->image) {
            if (t != SL_DTYPE_UINT8 || n > (int64_t)size)
                fz_fail("images: dtype %s, %lld bytes from a %zu-byte value", sl_dtype_name(t),
                        (long long)n, size);
            continue;
        }
        if (t != SL_DTYPE_INT32 && t != SL_DTYPE_INT64 && t != SL_DTYPE_FLOAT32)
            fz_fail("output %d: dtype %s", o, sl_dtype_name(t));
        bool sparse = m->label_type == 1 || m->label_type == 3;
        if (o == (int)m->image && m->label && sparse && n != m->num_labels)
            fz_fail("sparse labels: %lld values, num_labels %d", (long long)n, m->num_labels);
        if (o == m->nout - 1 && m->bbox && n != 0 && n != 4)
            fz_fail("bbox: %lld values", (long long)n);
        if (n * (int64_t)sl_dtype_size(t) > (int64_t)size + 4 * m->num_labels)
            fz_fail("output %d: %lld values from a %zu-byte value", o, (long long)n, size);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    mode m = parse_mode(data[0]);
    if (m.nout == 0)
        return 0; /* nothing read (image and label both off): the build refuses a pipeline without
                     outputs, rightly; not the parser's concern */
    write_db(data + 1, size - 1);
    bool built;
    sl_pipeline *p = make(data[0], &m, &built);
    if (built && fz_run(p) == SL_OK) {
        check(p, &m, size - 1);
        bool built2;
        sl_pipeline *q = make(data[0], &m, &built2);
        if (!built2 || fz_run(q) != SL_OK)
            fz_fail("a second pipeline over the same value fails: %s", sl_pipeline_error(q));
        for (int o = 0; o < m.nout; o++) {
            const char *why = NULL;
            if (!fz_sample_equal(sl_pipeline_output(p, o), 0, sl_pipeline_output(q, o), 0, &why))
                fz_fail("two pipelines over the same value differ in output %d: %s", o, why);
        }
        sl_pipeline_destroy(q);
        if (fz_run(p) == SL_OK)
            check(p, &m, size - 1);
    }
    sl_pipeline_destroy(p);
    return 0;
}
