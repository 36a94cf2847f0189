/* cli/index.c: the indexer commands (sluice/index.h).
 *
 *   sluice tfrecord-index FILE INDEX   DALI's tfrecord2idx: write FILE's record index to INDEX
 *   sluice wds-index TAR INDEX         DALI's wds2idx: write a WebDataset shard's index
 *   sluice rec-index FILE.rec FILE.idx DALI's rec2idx: write a RecordIO file's index
 */
#include <stdio.h>

#include "sluice/sluice.h"

#include "cli.h"

int cli_tfrecord_index(int argc, char **argv)
{
    if (argc != 2) {
        fputs("sluice tfrecord-index: expected FILE INDEX\n\n", stderr);
        cli_usage(stderr);
        return CLI_USAGE;
    }
    int64_t n = 0;
    if (sl_tfrecord_index(argv[0], argv[1], &n) != SL_OK) {
        fprintf(stderr, "sluice tfrecord-index: %s\n", sl_last_error());
        return CLI_FAIL;
    }
    fprintf(stderr, "%s: %lld records indexed in %s\n", argv[0], (long long)n, argv[1]);
    return CLI_OK;
}

int cli_wds_index(int argc, char **argv)
{
    if (argc != 2) {
        fputs("sluice wds-index: expected TAR INDEX\n\n", stderr);
        cli_usage(stderr);
        return CLI_USAGE;
    }
    int64_t n = 0;
    if (sl_wds_index(argv[0], argv[1], &n) != SL_OK) {
        fprintf(stderr, "sluice wds-index: %s\n", sl_last_error());
        return CLI_FAIL;
    }
    fprintf(stderr, "%s: %lld samples indexed in %s\n", argv[0], (long long)n, argv[1]);
    return CLI_OK;
}

int cli_rec_index(int argc, char **argv)
{
    if (argc != 2) {
        fputs("sluice rec-index: expected FILE.rec FILE.idx\n\n", stderr);
        cli_usage(stderr);
        return CLI_USAGE;
    }
    int64_t n = 0;
    if (sl_rec_index(argv[0], argv[1], &n) != SL_OK) {
        fprintf(stderr, "sluice rec-index: %s\n", sl_last_error());
        return CLI_FAIL;
    }
    fprintf(stderr, "%s: %lld records indexed in %s\n", argv[0], (long long)n, argv[1]);
    return CLI_OK;
}
