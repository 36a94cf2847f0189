/* cli/sluice.c: the `sluice` command: main() and the usage text.
 *
 *   sluice ops [NAME]            list the operators, or describe one (ops.c)
 *   sluice ops --markdown [NAME] the same descriptions as Markdown (docs/ops.md)
 *   sluice run SPEC.json [...]   build a pipeline from a JSON spec and run it (run.c)
 *   sluice graph SPEC.json [-o FILE]  draw the pipeline a spec describes (graph.c)
 *   sluice tfrecord-index FILE INDEX  write a TFRecord file's index (index.c)
 *   sluice wds-index TAR INDEX        write a WebDataset shard's index (index.c)
 *   sluice rec-index FILE.rec FILE.idx  write a RecordIO file's index (index.c)
 *   sluice help | --version
 *
 * Exit status: 0 success, 1 failure, 2 bad usage (the usage text then goes to stderr).
 */
#include <stdio.h>
#include <string.h>

#include "sluice/sluice.h"

#include "cli.h"

void cli_usage(FILE *f)
{
    fputs("usage: sluice <command> [arguments]\n"
          "\n"
          "commands:\n"
          "  ops                  list the operators\n"
          "  ops NAME             describe one operator: inputs, outputs, arguments\n"
          "  ops --markdown [NAME]\n"
          "                       the same as Markdown: the operator reference (docs/ops.md)\n"
          "  run SPEC.json [...]  build the pipeline a JSON spec describes and run it\n"
          "  graph SPEC.json [-o FILE]\n"
          "                       draw the built pipeline: its nodes, inputs and fused chains\n"
          "  tfrecord-index FILE INDEX\n"
          "                       write the index of a TFRecord file (DALI's tfrecord2idx\n"
          "                       format) for readers.tfrecord's index_path\n"
          "  wds-index TAR INDEX  write the index of a WebDataset tar shard (DALI's wds2idx\n"
          "                       format) for readers.webdataset's index_paths\n"
          "  rec-index FILE.rec FILE.idx\n"
          "                       write the index of an MXNet RecordIO file (DALI's rec2idx\n"
          "                       format) for readers.mxnet's index_path\n"
          "  help                 show this text\n"
          "  --version            print the version\n"
          "\n"
          "sluice run SPEC.json [options]   (SPEC.json may be - for standard input)\n"
          "  --iters N            run N iterations (default: one epoch of the first reader)\n"
          "  --epochs E           run E epochs (default 1)\n"
          "  --batch B            batch size (overrides the spec's pipeline.batch_size)\n"
          "  --threads T          worker threads (pipeline.num_threads; auto: the CPUs)\n"
          "  --prefetch D         iterations in flight (pipeline.prefetch_queue_depth; auto:\n"
          "                       tuned while it runs, --stats shows the decisions)\n"
          "  --seed S             pipeline seed (pipeline.seed; default: a fresh one each\n"
          "                       run, printed in the summary)\n"
          "  --set NODE.ARG=JSON  set an argument of a node, e.g. --set 'cmn.crop=[128, 128]';\n"
          "                       text that is not JSON is taken as a string:\n"
          "                       --set reader.file_root=/data\n"
          "  --root DIR           --set R.file_root=DIR for every readers.file node R\n"
          "  --stats              print the time spent in each node and the prefetch depth\n"
          "  --trace FILE         write a Chrome/Perfetto trace of the last iterations\n"
          "  --checkpoint FILE    write the pipeline's checkpoint to FILE after the run\n"
          "  --checkpoint-every N ... and after every N iterations (FILE replaced whole)\n"
          "  --resume FILE        continue from a checkpoint: the next --iters N iterations\n"
          "                       are those the checkpointed run would have delivered next\n"
          "  --quiet              no progress bar (there is none when stderr is not a "
          "terminal)\n"
          "\n"
          "sluice graph SPEC.json [-o FILE]   (SPEC.json may be - for standard input)\n"
          "  -o FILE.dot|.gv      write the Graphviz DOT text (default: to standard output)\n"
          "  -o FILE.svg|.png|.pdf\n"
          "                       draw it with Graphviz's dot command (Debian: graphviz)\n"
          "\n"
          "The spec format: {\"pipeline\": {...}, \"nodes\": [...], \"outputs\": [...]}, see "
          "sluice/graph.h.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("sluice %s\n", sl_version());
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        cli_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "ops") == 0)
        return cli_ops(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return cli_run(argc - 2, argv + 2);
    if (strcmp(cmd, "graph") == 0)
        return cli_graph(argc - 2, argv + 2);
    if (strcmp(cmd, "wds-index") == 0)
        return cli_wds_index(argc - 2, argv + 2);
    if (strcmp(cmd, "rec-index") == 0)
        return cli_rec_index(argc - 2, argv + 2);
    if (strcmp(cmd, "tfrecord-index") == 0)
        return cli_tfrecord_index(argc - 2, argv + 2);
    fprintf(stderr, "sluice: unknown command \"%s\"\n\n", cmd);
    cli_usage(stderr);
    return CLI_USAGE;
}
