/* src/ops/decoders/hybrid.h: the hybrid JPEG decoder's staging layout (internal; C and CUDA).
 *
 * decoders.image on device "mixed" (SL_OP_MIXED_GPU): per sample, the CPU entropy-decodes the
 * JPEG (jpeg.c: a single-scan file set up by libjpeg in raw-data mode and decoded by
 * jpeg_huff.c's Huffman decoder, or libjpeg's where that one gives up; a multi-scan one with
 * jpeg_read_coefficients) into the sample's pinned staging — a
 * sl__hyb_head, then each component's quantised DCT blocks (int16, natural order, rows of
 * blocks) — and the executor copies the batch's staging to the device in one copy. With a
 * window (decoders.image_random_crop) only the blocks its pixels read are kept, packed — the
 * samples under it and one on each side for the fancy upsampling's neighbours — and a
 * single-scan file is entropy-decoded only down to the iMCU row of its last block (the rows
 * above it decoded without keeping anything); a progressive file needs all its scans, so the
 * whole image is entropy-decoded and the window's blocks copied out. There the
 * kernels (hybrid.cu) dequantise, run libjpeg's accurate integer IDCT (jidctint.c,
 * jpeg_idct_islow) into one 8-bit plane per component, upsample the chroma as libjpeg's fancy
 * upsampler does (jdsample.c: h2v1, h1v2, h2v2; integral replication otherwise) and convert
 * the color (jdcolor.c), so every pixel equals the CPU decoder's (jpeg.c: ISLOW, fancy
 * upsampling, hence no merged upsampling).
 *
 * A sample the kernels cannot decode exactly is decoded whole on the CPU instead (its staging
 * then holds the head and the pixels, which a kernel copies; counted as a fallback): the rule
 * is sl__jpeg_hybrid_plan's (jpeg.c): PNG, CMYK/YCCK, a color space other than gray, YCbCr
 * and RGB, an IDCT scaling or the fast IDCT, more working memory than max_sample_bytes, a
 * progressive file whose coefficients are not complete (libjpeg smooths its blocks), and any
 * file the coefficient reading fails on (the CPU decode then gives the verdict); and, for
 * decoders.image_random_crop, a window resampled to `size`.
 *
 * Device entropy decoding: a single-scan Huffman file that jpeg_huff.c has already decoded
 * to its end without giving up (in an earlier epoch: decoder.c's verdicts, property "clean")
 * is not entropy-decoded on the CPU again. The CPU half parses its header and writes the head
 * (kind SL__HYB_COEFS, the same blocks layout) with huff_off pointing at a sl__hyb_huff_job
 * right after it: jpeg_huff.c's initialised state and the scan's tables, the MCU geometry and
 * the entropy-coded bytes from the scan's first byte to the marker after them (the rest of
 * the file, such as an appended preview or video, is left out: jpeg.c). The staging (copied to
 * the device) holds only the head and the job, no coefficients and no room for pixels (such a
 * sample never falls back to the CPU decoder); the coefficient area, at the same coef_off, is
 * in device memory of its own. hybrid.cu zeroes that area and runs the same decoder
 * (jpeg_huff_core.h, one source for host and device) over the scan cut into chunks, many
 * device threads per sample (hybrid_job.h's chunked decode; a scan with a restart interval by
 * its intervals, also many threads per sample), writing the kept blocks as jpeg.c's
 * single_scan_rows and point_mcu do: the same code on the same bytes from the same state gives the
 * same coefficients, so no device-side fallback is needed. A file changed under the same name and
 * size since its verdict gets the coefficients jpeg_huff.c would give its new bytes, or, where the
 * device decode gives up (a bad code, a premature end), fails the batch naming the sample (an
 * internal error). Not a fallback (sl_ctx_count_fallback counts CPU decodes only).
 * SLUICE_HYBRID_CHUNK=BYTES:ROUNDS sets the chunks' size and rounds (hybrid.cu; read once).
 * SLUICE_HYBRID_DEVICE_HUFF=0 in the environment (read once) turns it off: every sample is
 * then entropy-decoded on the CPU, for comparisons. Staging cost: the job's bytes (its header,
 * 1.4 KiB per DC and 8.4 KiB per AC table the scan uses — 20 KiB for the usual two of each —
 * and the compressed scan) instead of the larger of the coefficient area (128 bytes a kept
 * block; the device then holds it in scratch memory) and the output's pixels.
 */
#ifndef SLUICE_OPS_DECODERS_HYBRID_H
#define SLUICE_OPS_DECODERS_HYBRID_H

#include <stdint.h>

#include "ops/decoders/jpeg_huff_core.h"

#define SL__HYB_MAGIC 0x4a48594cu /* "JHYL" */

/* sl__hyb_head.kind */
enum { SL__HYB_COEFS = 1, SL__HYB_PIXELS = 2 };

/* sl__hyb_head.space: the JPEG's color space */
enum { SL__HYB_GRAY = 0, SL__HYB_YCC = 1, SL__HYB_RGB = 2 };

/* sl__hyb_comp.method: how the component reaches the output's size (jdsample.c) */
enum {
    SL__UP_FULL = 0, /* fullsize_upsample */
    SL__UP_H2V1 = 1, /* h2v1_fancy_upsample */
    SL__UP_H1V2 = 2, /* h1v2_fancy_upsample */
    SL__UP_H2V2 = 3, /* h2v2_fancy_upsample */
    SL__UP_INT = 4   /* int_upsample (h2v1_upsample, h2v2_upsample): replication by hexp x vexp */
};

#define SL__HYB_MAX_COMPS 3

typedef struct sl__hyb_comp {
    int32_t bx0, by0;   /* the first block kept: column and row in the component's blocks */
    int32_t bw, bh;     /* blocks kept per row and rows of them (the window's, packed) */
    int32_t dw, dh;     /* downsampled_width / height: its real samples */
    int32_t method;     /* SL__UP_* */
    int32_t hexp, vexp; /* SL__UP_INT: the replication factors */
    int32_t needed;     /* 0: not read (chroma of a YCbCr JPEG decoded to GRAY) */
    uint64_t coef_off;  /* bytes from the head's start to its first block */
    uint64_t plane_off; /* bytes from the sample's plane memory to its plane (bw*8 x bh*8, whose
                           first sample is the component's (bx0*8, by0*8)) */
    uint16_t quant[64]; /* its quantisation table, natural order (as libjpeg latched it) */
} sl__hyb_comp;

typedef struct sl__hyb_head {
    uint32_t magic;
    int32_t kind;          /* SL__HYB_* */
    int32_t width, height; /* the output's: the whole image, or the window at (x0, y0) */
    int32_t x0, y0;
    int32_t out_c; /* 3 (RGB, BGR) or 1 (GRAY) */
    int32_t bgr;   /* RGB output reversed */
    int32_t space; /* SL__HYB_GRAY / YCC / RGB */
    int32_t ncomp;
    uint64_t nblocks;     /* all components' blocks */
    uint64_t plane_bytes; /* device memory of its planes */
    uint64_t huff_off;    /* 0, or bytes from the head's start to its sl__hyb_huff_job: the
                             coefficient area (coef_off from the start of a device buffer of
                             its own) is then entropy-decoded on the device */
    sl__hyb_comp comp[SL__HYB_MAX_COMPS];
} sl__hyb_head;

/* The head is followed by the blocks (or, for SL__HYB_PIXELS, by height * width * out_c
 * bytes); 64-byte aligned. */
#define SL__HYB_HEAD_BYTES ((sizeof(sl__hyb_head) + 63) & ~(size_t)63)

/* Device entropy decoding's job (at SL__HYB_HEAD_BYTES, in place of the coefficients): what
 * jpeg.c's single_scan_rows and point_mcu need, from the file's jpeg_decompress_struct. */
typedef struct sl__hyb_huff_job {
    sl__huff_bits bits;      /* sl__huff_init's state, dc_of/ac_of renumbered to the job's tables;
                                p and end unused (data_off, data_len) */
    uint64_t dc_off, ac_off; /* bytes from the job's start to its DC tables, its AC tables */
    uint64_t data_off, data_len;   /* its entropy-coded bytes: the scan's first to the code of
                                      the first marker after them that is not RSTn */
    int32_t rows;                  /* iMCU rows to decode, from the first */
    int32_t to_end;                /* rows are all of them: the scan's end checked (finish) */
    int32_t first_imcu, last_imcu; /* the iMCU rows holding kept blocks */
    int32_t x0, x1;                /* the MCU columns holding kept blocks (x1 < x0: none) */
    int32_t mcus_per_row, comps_in_scan, total_imcu_rows;
    /* per component of the scan (cur_comp_info) */
    int32_t comp[SL__HUFF_MAX_COMPS]; /* its index in the head's comp[] */
    int32_t mcu_width[SL__HUFF_MAX_COMPS], mcu_height[SL__HUFF_MAX_COMPS];
    int32_t v_samp[SL__HUFF_MAX_COMPS], last_row_height[SL__HUFF_MAX_COMPS];
} sl__hyb_huff_job;

#define SL__HYB_JOB_BYTES ((sizeof(sl__hyb_huff_job) + 63) & ~(size_t)63)

#ifdef SLUICE_HAVE_CUDA
#include "sluice/op.h"
#ifdef __cplusplus
extern "C" {
#endif
/* decoders.image's run_gpu on "mixed" (hybrid.cu): the staging's samples to images. */
sl_status sl__hybrid_run_gpu(sl_ctx *ctx);
#ifdef __cplusplus
}
#endif
/* The field of an op definition that names it (nothing in a build without CUDA). */
#define SL__HYBRID_RUN_GPU .run_gpu = sl__hybrid_run_gpu,
#else
#define SL__HYBRID_RUN_GPU
#endif

#endif
