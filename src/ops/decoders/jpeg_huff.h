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
 * within 24 bytes of where it stopped reading or a run of 0xFF fill bytes that starts within
 * them go on to the data's end (libjpeg's reader may have read that far: sl__huff_core_finish),
 * 0xFF fill bytes before a stuffed zero.
 * tests/c/test_codec_hybrid_huff.c checks it against libjpeg's decoder on good, cut and damaged
 * files.
 */
#ifndef SLUICE_OPS_DECODERS_JPEG_HUFF_H
#define SLUICE_OPS_DECODERS_JPEG_HUFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* jpeglib.h needs FILE */

#include <jpeglib.h>

#include "ops/decoders/jpeg_huff_core.h" /* the tables, the state and the decoding itself */

#if MAX_COMPS_IN_SCAN != SL__HUFF_MAX_COMPS || D_MAX_BLOCKS_IN_MCU != SL__HUFF_MAX_BLOCKS ||       \
    NUM_HUFF_TBLS != SL__HUFF_NTBL
#error "jpeg_huff_core.h's limits differ from libjpeg's"
#endif

/* The state of one scan's decoding and its tables; caller's memory (sl__huff_init fills it). */
typedef struct sl__huff {
    sl__huff_bits b;
    sl__huff_dc dc[NUM_HUFF_TBLS]; /* only the scan's are built (b.dc_of, b.ac_of index them) */
    sl__huff_ac ac[NUM_HUFF_TBLS];
} sl__huff;

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
