/* src/ops/decoders/jpeg_huff.h: the hybrid JPEG decoder's own Huffman decoder (internal; used
 * by jpeg.c's hybrid_single_scan only).
 *
 * The CPU half of the hybrid decoder (hybrid.h) is almost all entropy decoding. libjpeg-turbo's
 * decoder (jdhuff.c) reads a code with an 8-bit look-up and its extra bits in a second step,
 * checks every input byte for 0xFF as it fills its bit buffer, and keeps no part of the rows
 * above a window it does not need. This one decodes a baseline (sequential, Huffman) scan with
 * a 9-bit look-up that gives, for most AC codes, the run, the extra bits and the coefficient at
 * once, and fills its buffer eight bytes at a time where they hold no 0xFF.
 *
 * Exactness: on the data it accepts it produces the coefficients libjpeg-turbo's decode_mcu
 * writes (same positions, values, DC prediction and restart handling), and for everything else
 * it gives up (SL__HUFF_GIVE_UP) before the caller has used any of its output, so that the
 * caller decodes the scan again with libjpeg's own decoder, which then gives its own verdict
 * (an error message for a corrupt file, its tolerance of odd ones): any code longer than 16
 * bits, a bit read past a marker or past the end of the data, a restart marker missing or
 * unexpected at a restart boundary, a DC value outside int16, the data ending (with no marker)
 * within 16 bytes of where it stopped reading, 0xFF fill bytes before a stuffed zero.
 * tests/c/test_codec_hybrid_huff.c checks it against libjpeg's decoder on good, cut and damaged
 * files.
 */
#ifndef SLUICE_OPS_DECODERS_JPEG_HUFF_H
#define SLUICE_OPS_DECODERS_JPEG_HUFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* jpeglib.h needs FILE */

#include <jpeglib.h>

#define SL__HUFF_FAST 11   /* look-up bits of an AC table */
#define SL__HUFF_DC_FAST 9 /* of a DC table (its codes are short: 12 symbols) */

/* One Huffman table's codes, derived as jdhuff.c's jpeg_make_d_derived_tbl does. */
typedef struct sl__huff_codes {
    int32_t maxcode[18]; /* the largest code of each length (-1: none) */
    int32_t valoff[18];  /* symbol index of a code of that length, minus it */
    uint8_t val[256];
} sl__huff_codes;

/* A DC table: its codes and a look-up of the short ones. */
typedef struct sl__huff_dc {
    sl__huff_codes codes;
    uint16_t look[1 << SL__HUFF_DC_FAST]; /* (length << 8) | symbol of codes <= DC_FAST bits */
} sl__huff_dc;

/* An AC table: its codes and a look-up of code and extra bits at once (jpeg_huff.c). */
typedef struct sl__huff_ac {
    sl__huff_codes codes;
    int32_t ac[1 << SL__HUFF_FAST];
} sl__huff_ac;

/* The state of one scan's decoding; caller's memory (sl__huff_init fills it). */
typedef struct sl__huff {
    uint64_t acc; /* bits, left-aligned */
    int n;        /* valid bits in acc (negative: bits past a marker were read) */
    int stop;     /* 1: a marker was met, 2: the data ended (no more bytes read), 3: fill bytes
                     before a stuffed zero (jpeg_huff.c's refill_slow: give up) */
    const uint8_t *p, *end; /* the next byte to put in acc; the data's end */
    int last_dc[MAX_COMPS_IN_SCAN];
    int restart_interval, restarts_to_go, next_restart;
    int blocks;                       /* blocks in an MCU */
    int comp_of[D_MAX_BLOCKS_IN_MCU]; /* the block's component in the scan */
    const sl__huff_dc *dc_of[D_MAX_BLOCKS_IN_MCU];
    const sl__huff_ac *ac_of[D_MAX_BLOCKS_IN_MCU];
    sl__huff_dc dc[NUM_HUFF_TBLS]; /* only the scan's are built */
    sl__huff_ac ac[NUM_HUFF_TBLS];
} sl__huff;

enum { SL__HUFF_OK = 0, SL__HUFF_GIVE_UP = -1 };

/* After jpeg_start_decompress of a single-scan file (before any decode_mcu call: the source
 * still at the scan's first byte): sets h up for the scan. Returns SL__HUFF_OK, or
 * SL__HUFF_GIVE_UP when the scan is not one it decodes (arithmetic coding, not sequential,
 * a table it would not accept). */
int sl__huff_init(sl__huff *h, const struct jpeg_decompress_struct *c);
/* Decodes the next MCU: its blocks into mcu[0..blocks) (only the nonzero coefficients are
 * written, as libjpeg does), or into nothing when mcu is NULL (the MCU is skipped). Returns
 * SL__HUFF_OK or SL__HUFF_GIVE_UP (h is then spent). */
int sl__huff_mcu(sl__huff *h, JBLOCKROW *mcu);
/* After the last MCU wanted: SL__HUFF_OK when everything read so far is what libjpeg would
 * have accepted, else SL__HUFF_GIVE_UP. */
int sl__huff_finish(const sl__huff *h);

#endif
