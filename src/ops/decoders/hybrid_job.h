/* src/ops/decoders/hybrid_job.h: device entropy decoding's walk over a sl__hyb_huff_job
 * (hybrid.h), one source compiled as host C (tests, the fuzz target) and as CUDA host/device
 * code (hybrid.cu's kernel, one thread per sample). Internal.
 *
 * Exports sl__hyb_job_decode: the MCUs of the job's scan decoded with jpeg_huff_core.h's
 * decoder, as jpeg.c's single_scan_rows drives jpeg_huff.c's (down to the job's rows; MCU rows
 * per iMCU row as jdcoefct.c's start_iMCU_row counts them), each block the window keeps
 * written where jpeg.c's point_mcu places it and the others decoded into nothing.
 */
#ifndef SLUICE_OPS_DECODERS_HYBRID_JOB_H
#define SLUICE_OPS_DECODERS_HYBRID_JOB_H

#include "ops/decoders/hybrid.h"
#include "ops/decoders/jpeg_huff_core.h"

#if defined(__CUDACC__)
#define SL__HYB_JOB_FN static __host__ __device__
#else
#define SL__HYB_JOB_FN static inline
#endif

/* jpeg.c's point_mcu: the block for each block of the MCU at column x, MCU row y of iMCU row
 * `row` that the window keeps (coefs + coef_off counts from the head's start), NULL for the
 * others. */
SL__HYB_JOB_FN void sl__hyb_job_point(const sl__hyb_head *h, uint8_t *coefs,
                                      const sl__hyb_huff_job *jb, int row, int y, int x,
                                      int16_t **blk)
{
    int n = 0;
    for (int ci = 0; ci < jb->comps_in_scan; ci++) {
        const sl__hyb_comp *q = &h->comp[jb->comp[ci]];
        int16_t *base = (int16_t *)(void *)(coefs + q->coef_off);
        for (int yi = 0; yi < jb->mcu_height[ci]; yi++) {
            int64_t by =
                (int64_t)row * jb->v_samp[ci] + (int64_t)y * jb->mcu_height[ci] + yi - q->by0;
            for (int xi = 0; xi < jb->mcu_width[ci]; xi++, n++) {
                int64_t bx = (int64_t)x * jb->mcu_width[ci] + xi - q->bx0;
                blk[n] = bx >= 0 && bx < q->bw && by >= 0 && by < q->bh
                             ? base + (by * q->bw + bx) * 64
                             : NULL;
            }
        }
    }
}

/* Decodes the job at `job` (the head's huff_off in the sample's staging) into the coefficient
 * area at coefs (coef_off from it; zeroed by the caller: only the nonzero coefficients are
 * written). Returns SL__HUFF_OK, or SL__HUFF_GIVE_UP where jpeg_huff.c would have given up
 * (never for a file it decoded cleanly: the same code on the same bytes from the same state). */
SL__HYB_JOB_FN int sl__hyb_job_decode(const sl__hyb_head *h, const uint8_t *job, uint8_t *coefs)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const sl__huff_dc *dcs = (const sl__huff_dc *)(const void *)(job + jb->dc_off);
    const sl__huff_ac *acs = (const sl__huff_ac *)(const void *)(job + jb->ac_off);
    sl__huff_bits b = jb->bits;
    b.p = job + jb->data_off;
    b.end = b.p + jb->data_len;
    if (jb->comps_in_scan < 1 || jb->comps_in_scan > SL__HUFF_MAX_COMPS || b.blocks < 1 ||
        b.blocks > SL__HUFF_MAX_BLOCKS)
        return SL__HUFF_GIVE_UP;
    int16_t *blk[SL__HUFF_MAX_BLOCKS];
    for (int row = 0; row < jb->rows; row++) {
        const int inside = row >= jb->first_imcu && row <= jb->last_imcu;
        /* jdcoefct.c's start_iMCU_row: MCU rows in this iMCU row */
        const int mcu_rows = jb->comps_in_scan > 1           ? 1
                             : row < jb->total_imcu_rows - 1 ? jb->v_samp[0]
                                                             : jb->last_row_height[0];
        for (int y = 0; y < mcu_rows; y++) {
            for (int x = 0; x < jb->mcus_per_row; x++) {
                const int keep = inside && x >= jb->x0 && x <= jb->x1;
                if (keep)
                    sl__hyb_job_point(h, coefs, jb, row, y, x, blk);
                if (sl__huff_core_restart(&b) != SL__HUFF_OK)
                    return SL__HUFF_GIVE_UP;
                for (int k = 0; k < b.blocks; k++) {
                    int r = keep && blk[k] ? sl__huff_core_block(&b, dcs, acs, k, blk[k], 1)
                                           : sl__huff_core_block(&b, dcs, acs, k, NULL, 0);
                    if (r != SL__HUFF_OK)
                        return SL__HUFF_GIVE_UP;
                }
            }
        }
    }
    return jb->to_end ? sl__huff_core_finish(&b) : SL__HUFF_OK;
}

#endif
