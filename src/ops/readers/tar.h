/* tar.h: tar archives (POSIX ustar, with pax `path` records and GNU long names), walked entry by
 * entry with pread: only headers are read, file contents are located, never loaded. Used by
 * readers.webdataset and `sluice wds-index`.
 *
 * Every header is checked (its checksum, octal fields, sizes against the archive's length)
 * before anything it says is used; names are bounded (SL__TAR_NAME_MAX). Failures return false
 * with a message naming the entry's offset in err.
 */
#ifndef SLUICE_OPS_READERS_TAR_H
#define SLUICE_OPS_READERS_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL__TAR_NAME_MAX 4096

typedef struct sl__tar_entry {
    char name[SL__TAR_NAME_MAX + 1];
    bool regular;        /* a regular file (anything else is to be skipped) */
    int64_t data_offset; /* of its contents */
    int64_t size;        /* of its contents */
} sl__tar_entry;

typedef struct sl__tar {
    int fd;
    int64_t size; /* of the archive */
    int64_t pos;  /* offset of the next header */
} sl__tar;

/* The next entry: true with *e filled, or false with *done (the end of the archive: two zero
 * blocks or its end) or a message in err (corrupt or unreadable). */
bool sl__tar_next(sl__tar *t, sl__tar_entry *e, bool *done, char *err, size_t errlen);

/* Parses one 512-byte header block (no I/O): kind 0 a file entry (name, size set; the GNU/pax
 * name, if any, is the caller's), 'L' a GNU long name, 'x' / 'g' pax records, 'z' a zero block,
 * 'o' any other entry (directories, links). */
bool sl__tar_header(const uint8_t h[512], int64_t at, char *kind, char *name, int64_t *size,
                    char *err, size_t errlen);

/* The "path" value of pax extended-header records (n bytes); false when malformed, *found
 * false when it has none. */
bool sl__tar_pax_path(const uint8_t *p, size_t n, char *path, bool *found, char *err,
                      size_t errlen);

/* WebDataset's split of a member name: the key is the name up to the first '.' of its last
 * path component, the extension the rest. Returns the key's length, or -1 when the member has no
 * key (a hidden file, '.' right after the last '/') or no extension (no '.', or nothing after
 * it: "k1." — no `ext` selects it, and the index format cannot hold an empty one). */
int64_t sl__wds_split(const char *name);

#endif
