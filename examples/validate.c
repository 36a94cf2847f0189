/* examples/validate.c: the validation pipeline from C — file reader -> decode -> 224x224 CHW
 * float crop/normalize — iterating one epoch. Build against the installed library:
 *   cc validate.c $(pkg-config --cflags --libs sluice) -o validate && ./validate /data/val
 */
#include <stdio.h>
#include <sluice/sluice.h>

#define CHECK(call) if ((call) != SL_OK) { fprintf(stderr, "%s\n", sl_last_error()); return 1; }

int main(int argc, char **argv)
{
    double mean[] = {123.675, 116.28, 103.53}, std[] = {58.395, 57.12, 57.375}, crop[] = {224, 224};
    sl_graph *g;
    CHECK(sl_graph_create(&g));
    CHECK(sl_graph_add(g, "readers.file", "reader", "cpu"));
    CHECK(sl_graph_arg_str(g, "reader", "file_root", argc > 1 ? argv[1] : "."));
    CHECK(sl_graph_add(g, "decoders.image", "dec", "cpu"));
    CHECK(sl_graph_input(g, "dec", "reader:0"));
    CHECK(sl_graph_add(g, "crop_mirror_normalize", "cmn", "cpu"));
    CHECK(sl_graph_input(g, "cmn", "dec"));
    CHECK(sl_graph_arg_floats(g, "cmn", "crop", crop, 2));
    CHECK(sl_graph_arg_floats(g, "cmn", "mean", mean, 3));
    CHECK(sl_graph_arg_floats(g, "cmn", "std", std, 3));
    CHECK(sl_graph_arg_str(g, "cmn", "out_of_bounds_policy", "pad"));
    CHECK(sl_graph_output(g, "cmn"));
    CHECK(sl_graph_output(g, "reader:1"));

    sl_pipeline_options o;
    sl_pipeline_options_init(&o);
    o.batch_size = 64;
    sl_pipeline *p;
    CHECK(sl_pipeline_create(g, &o, &p));
    if (sl_pipeline_build(p) != SL_OK) { fprintf(stderr, "%s\n", sl_pipeline_error(p)); return 1; }
    int64_t iters = (sl_pipeline_epoch_size(p, "reader") + o.batch_size - 1) / o.batch_size;
    for (int64_t i = 0; i < iters; i++) {
        if (sl_pipeline_run(p) != SL_OK) { fprintf(stderr, "%s\n", sl_pipeline_error(p)); continue; }
        const sl_batch *x = sl_pipeline_output(p, 0); /* 64 x 3 x 224 x 224 float32, dense */
        const int64_t *s = sl_batch_shape(x, 0);
        printf("batch %lld: %d x %lldx%lldx%lld %s\n", (long long)i, sl_batch_size(x),
               (long long)s[0], (long long)s[1], (long long)s[2], sl_dtype_name(sl_batch_dtype(x)));
    }
    sl_pipeline_destroy(p);
    sl_graph_destroy(g);
    return 0;
}
