/* tests/c/mutate.h: hostile inputs made from good JPEG and PNG files (C test library,
 * mutate.c), for the sweep and the soak (issue 15, points 3-4).
 *
 * Exports a growing list of named inputs (tu_corpus) and the mutators that fill it: truncations
 * at many lengths, byte changes at many offsets (headers and data), extreme header fields (JPEG
 * SOF/DQT/DHT/DRI/SOS fields and marker lengths; PNG IHDR fields, chunk lengths and order, with
 * CRCs fixed wherever the parser should get past the change), decompression bombs (zTXt, iCCP,
 * iTXt and IDAT streams that inflate to 128 MiB) and a progressive JPEG flooded with scans.
 * Invariant: every input is a fresh malloc'ed copy with a name that says how it was made
 * ("jpeg_420_q90.jpg: cut at 1234 of 5401"), so a failing check can be reproduced alone; the
 * mutators are deterministic (no clock, no rand()).
 */
#ifndef SLUICE_TEST_MUTATE_H
#define SLUICE_TEST_MUTATE_H

#include <stddef.h>
#include <stdint.h>

typedef enum tu_kind {
    TU_CUT,    /* a prefix of a good file */
    TU_CHANGE, /* a good file with bytes changed in place */
    TU_HEADER, /* a header field, a segment or chunk length, or the chunk order made extreme */
    TU_BOMB,   /* small, but asking for a lot of memory or time to decode */
    TU_KINDS
} tu_kind;

typedef struct tu_input {
    char name[160];
    tu_kind kind;
    uint8_t *data; /* malloc'ed, size bytes (NULL when size is 0) */
    size_t size;
} tu_input;

typedef struct tu_corpus {
    tu_input *v; /* malloc'ed, n entries */
    int n, cap;
} tu_corpus;

void tu_corpus_free(tu_corpus *c);
/* Appends a copy of d[0, n) under a printf-style name. Returns its index. */
int tu_corpus_add(tu_corpus *c, tu_kind kind, const uint8_t *d, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Prefixes of d: every length up to 16, then 1/64 steps of the file, and 1 to 3 bytes short of
 * the end. Returns how many were added. */
int tu_add_cuts(tu_corpus *c, const char *name, const uint8_t *d, size_t n);
/* `count` single-byte changes (one bit flipped, all flipped, set to 0x00 or 0xff), half of them
 * in the headers (JPEG: up to the end of the first SOS segment; PNG: up to the first IDAT's
 * data), half in the entropy-coded or compressed data; then `count / 4` inputs with 8 random
 * bytes changed at once. Offsets come from an LCG seeded with `seed`. */
int tu_add_changes(tu_corpus *c, const char *name, const uint8_t *d, size_t n, int count,
                   uint32_t seed);
/* Two 0xFF fill bytes inserted before stuffed zeros (0xFF 0x00) of d's first scan (a JPEG):
 * at most `most` of them (of the first 64), spread over the scan. Data to libjpeg's slow
 * Huffman decoder, a marker to its fast one; jpeg_huff.c gives up there. Returns how many were
 * added. */
int tu_add_fill_bytes(tu_corpus *c, const char *name, const uint8_t *d, size_t n, int most);
/* Extreme values of the JPEG header fields of d (a JPEG with DQT, DHT, SOF and SOS segments):
 * SOF width and height (0, 1, 65500, 65535, sizes at and past the pixel limit), precision,
 * component count, sampling factors 0 and 5, quantisation table selectors, the SOF type
 * (lossless, arithmetic, progressive <-> baseline), a DRI of 0, 1 and 65535 inserted, segment
 * lengths of DQT, DHT, SOS and APP0 past the end, 0 or 1, table ids and classes out of range,
 * scan component counts and spectral selection out of range, and structural damage (no
 * frame, two frames, a scan before its frame). */
int tu_add_jpeg_headers(tu_corpus *c, const char *name, const uint8_t *d, size_t n);
/* Extreme values of the PNG header of d (a PNG with IHDR, IDAT, IEND; CRCs fixed): IHDR width
 * and height 0, 1, 65535, 65536, 2^31 - 1, 2^31, 2^32 - 1 and sizes at the pixel limit, bit
 * depth 0, 3, 5, 32 and 16 for a palette, color type 1, 5, 7, 8, compression, filter and
 * interlace methods 1, 2, 255; IHDR of 12 and 14 bytes; chunk lengths near 2^31 and 2^32 (CRC
 * left as is); a bad CRC in IHDR and in an ancillary chunk; no IDAT, no IEND, IDAT before IHDR,
 * two IHDRs, an unknown critical chunk, PLTE of 0, 257 and 769/3 entries, and tRNS longer than
 * the palette. */
int tu_add_png_headers(tu_corpus *c, const char *name, const uint8_t *d, size_t n);
/* Decompression bombs in a PNG (d, CRCs fixed): a zTXt, an iCCP and a compressed iTXt chunk
 * each inflating to 128 MiB, four zTXt chunks of 32 MiB each, ten thousand small tEXt chunks,
 * and an IDAT stream that inflates to 128 MiB (the image needs far less). The zlib streams are
 * made once per process and kept (about 160 KiB). */
int tu_add_png_bombs(tu_corpus *c, const char *name, const uint8_t *d, size_t n);
/* A valid progressive gray JPEG of side x side pixels (all mid-gray), written from scratch: a DC
 * scan, then `ac_scans` AC scans that each cover the whole image with a few end-of-band-run
 * codes (10 to 20 bytes a scan). libjpeg visits every block of the coefficient buffer in every
 * scan, so the work grows as side^2 * ac_scans while the file stays small. Returns its index. */
int tu_add_jpeg_scan_flood(tu_corpus *c, int side, int ac_scans);

#endif
