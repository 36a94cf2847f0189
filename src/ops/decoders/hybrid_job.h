/* src/ops/decoders/hybrid_job.h: device entropy decoding's walk over a sl__hyb_huff_job
 * (hybrid.h), one source compiled as host C (tests, the fuzz target, the benchmark) and as
 * CUDA host/device code (hybrid.cu's kernels). Internal.
 *
 * Exports sl__hyb_job_decode: the MCUs of the job's scan decoded with jpeg_huff_core.h's
 * decoder, as jpeg.c's single_scan_rows drives jpeg_huff.c's (down to the job's rows; MCU rows
 * per iMCU row as jdcoefct.c's start_iMCU_row counts them), each block the window keeps
 * written where jpeg.c's point_mcu places it and the others decoded into nothing. One thread
 * does a whole scan, at a GPU thread's serial speed: on a lent H100, ~50 ms for a batch of 256
 * photos, slower than the CPU half it replaces; the device runs it only for a job neither of
 * the decodes below takes (a geometry the walk gives up on at once or decodes nothing of, or
 * a scan of 256 MB or more; 2 GiB with more than one restart interval).
 *
 * And the chunked decode of a scan without a restart interval (or with one it never reaches),
 * many threads per sample
 * (sl__hyb_job_chunks, sl__hyb_chunk_first, sl__hyb_chunk_round, sl__hyb_chunk_fixup,
 * sl__hyb_chunk_store; sl__hyb_job_decode_chunked runs them in order on one thread). Such a
 * scan can be entered only at its first bit, so its data is cut into chunks, each decoded by
 * its own thread from a guess, and the guesses are then corrected; Huffman codes
 * synchronise themselves (a decode started at a wrong bit soon falls onto the true code and
 * block boundaries), which makes the first correction almost always the last:
 *
 * - A chunk's origin is its first data byte. Its entry is the first block boundary of the
 *   scan's true decode at or past the origin: the data bits from the origin and the block's
 *   index in the MCU. Its exit is the next chunk's entry, found by decoding from its entry
 *   until a block boundary lies at or past the next origin. Chunk 0's entry is (0, 0).
 * - first: each chunk decodes from the guess (0, 0) to an exit. round: each decodes again from
 *   its predecessor's exit where that is not the entry it used. Chunk 0 is right from the
 *   start, so after r rounds chunks 0..r are; a chunk whose predecessor's guess fell onto the
 *   true boundaries within that chunk is right after one round.
 * - fixup (one thread per sample): walks the chunks in order and decodes again any whose
 *   entry is not its predecessor's exit, so the result is exact whatever the rounds reached;
 *   then sums the blocks and DC differences before each chunk: its first block's index in the
 *   job and the DC predictions at its entry.
 * - store: each chunk decodes once more from its entry with those predictions, writing the
 *   blocks the window keeps where sl__hyb_job_decode writes them.
 *
 * A chunk's reader starts a full refill (57+ bits) ahead of its entry, where the CPU's
 * reader had read ahead less: so where the one-thread walk gives up on merely meeting
 * something ahead of what it decodes (fill bytes before a stuffed zero: jpeg_huff_core.h),
 * the chunks' readers take it as the data's end (fill_ends); the file was decoded clean, so
 * what they decode lies before it (found by the hybrid fuzz target).
 *
 * The first and round passes sum each chunk's DC differences (the predictions set back to 0
 * after each block), so libjpeg's range check on the DC value applies in the store pass
 * only, to the true values. The chunk that holds the end of the scan's data (the first
 * marker, or the data's end) is the last: it needs no exit, and the store pass decodes it
 * until the job's blocks are done; the chunk whose store decodes the job's last block (the
 * last, or one before it), for a whole image, then checks the scan's end (sl__hyb_chunk_end;
 * a review found it skipped where that chunk was not the last). A decode that gives up before them,
 * anywhere, fails the sample (the bytes are not the file found clean); where it does not, the
 * coefficients are those the one-thread walk writes over the same bytes (also where only the walk's
 * end rule, which depends on its look-ahead, gives up: sl__hyb_chunk_end), whether they are the
 * clean file's or not.
 *
 * And the decode of a scan with more than one restart interval by its intervals
 * (sl__hyb_job_marker_chunks, sl__hyb_chunk_markers, sl__hyb_markers_sum,
 * sl__hyb_chunk_intervals; sl__hyb_job_decode_intervals runs them in order on one thread).
 * Such a scan can be entered exactly at each restart marker: the walk there drops its
 * reader's bits, checks the marker (RSTn, n the interval's number mod 8), sets the DC
 * predictions to 0, and decodes the interval's MCUs (a count the job's geometry gives) from
 * the byte after it. So the data is cut into chunks only to find the markers (one thread per
 * chunk counts its own; one per sample sums the counts: each chunk's first marker's index);
 * then each chunk's thread decodes the intervals whose marker starts in its bytes, each from
 * the state the walk has at that marker, and checks the next marker where the walk's next MCU
 * would. Interval k's marker is the data's k-th: the walk's reader never advances past a
 * marker (its refills stop at 0xFF followed by anything but 0) and its check passes only with
 * the reader at one, so after interval k - 1 it stands at the first marker past the previous
 * one, which that previous marker's checked second byte (0xD0..0xD7, not 0xFF) makes the next
 * one in the data. Hence every interval decodes from the walk's own state, the decode gives
 * the walk's verdict (it gives up on the same bytes, though maybe at another interval first)
 * and, where it does not give up, writes the walk's coefficients: also over bytes changed
 * since the file's verdict, with no rule of its own. An interval is one thread's serial work
 * (the walk's speed): a file with a marker every MCU row of a 4,000-pixel-wide photo has
 * intervals of tens of KB. A scan with one interval (its restart interval at least the job's
 * MCUs) never checks a marker and goes to the chunked decode above. */
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

/* ---- Chunked decoding (see the top) ---- */

#define SL__HYB_CHUNK 512 /* bytes of entropy-coded data per chunk on the device */
/* The largest chunk: a walk decodes at most 4 blocks a byte (a DC and an end-of-block code of a
 * bit each) plus one past its stop, each DC difference within +-32767, summed in int32. */
#define SL__HYB_CHUNK_MAX 8192

typedef struct sl__hyb_chunk {
    int32_t origin;   /* its first data byte: an offset into the job's data */
    int32_t bits;     /* data bits from its origin to the next chunk's */
    int32_t gpos, gb; /* the entry it was decoded from: bits past the origin, block of the MCU */
    int32_t xpos, xb; /* its exit: bits past the next origin, block; xb < 0: the decode gave up */
    int32_t n;        /* blocks decoded from entry to exit (or to where the decode gave up) */
    int32_t dc[SL__HUFF_MAX_COMPS];  /* the sums of their DC differences, per scan component */
    int32_t dcb[SL__HUFF_MAX_COMPS]; /* fixup: the DC predictions at its entry */
    int64_t base;                    /* fixup: the job's index of its entry's block */
} sl__hyb_chunk;

/* The blocks the job decodes: its rows' MCUs (start_iMCU_row's count) times blocks per MCU. */
SL__HYB_JOB_FN int64_t sl__hyb_job_blocks(const sl__hyb_huff_job *jb)
{
    int64_t mcu_rows = jb->rows;
    if (jb->comps_in_scan == 1) {
        const int last = jb->rows >= jb->total_imcu_rows;
        mcu_rows = (int64_t)(last ? jb->total_imcu_rows - 1 : jb->rows) * jb->v_samp[0] +
                   (last ? jb->last_row_height[0] : 0);
    }
    return mcu_rows * jb->mcus_per_row * jb->bits.blocks;
}

/* Whether the job's geometry is one the walk decodes: components and blocks per MCU within
 * libjpeg's limits, MCUs in a row and rows in an MCU. */
SL__HYB_JOB_FN int sl__hyb_job_geometry(const sl__hyb_huff_job *jb)
{
    return jb->comps_in_scan >= 1 && jb->comps_in_scan <= SL__HUFF_MAX_COMPS &&
           jb->bits.blocks >= 1 && jb->bits.blocks <= SL__HUFF_MAX_BLOCKS &&
           jb->mcus_per_row >= 1 && jb->v_samp[0] >= 1;
}

/* The job's restart intervals (a job of sl__hyb_job_geometry with a restart interval): its
 * MCUs over the interval, at least one (the first holds the scan's start and, for a job of no
 * MCUs, only the end check). With one, the walk checks no marker: its restart counter never
 * runs out before the job's last MCU. */
SL__HYB_JOB_FN int64_t sl__hyb_job_intervals(const sl__hyb_huff_job *jb)
{
    const int64_t mcus = sl__hyb_job_blocks(jb) / jb->bits.blocks;
    const int64_t ri = jb->bits.restart_interval;
    return mcus > ri ? (mcus + ri - 1) / ri : 1;
}

/* Chunks of `chunk` bytes (1 .. SL__HYB_CHUNK_MAX) in the job's data; 0 where the job is not
 * for the chunked decode: more than one restart interval (sl__hyb_job_marker_chunks takes
 * it), a chunk size out of range, a geometry the walk gives up on at once or decodes nothing
 * of, or data of 256 MB or more. */
SL__HYB_JOB_FN int sl__hyb_job_chunks(const sl__hyb_huff_job *jb, int chunk)
{
    if (chunk < 1 || chunk > SL__HYB_CHUNK_MAX || !sl__hyb_job_geometry(jb) ||
        (jb->bits.restart_interval > 0 && sl__hyb_job_intervals(jb) > 1) ||
        jb->data_len > (uint64_t)INT32_MAX / 8 - (uint64_t)chunk)
        return 0;
    const int64_t n = ((int64_t)jb->data_len + chunk - 1) / chunk;
    return n > 0 ? (int)n : 1;
}

/* Chunk t's origin: its first byte, or the one after when that is the zero stuffed after a
 * data 0xFF (which the previous chunk's reader skips). */
SL__HYB_JOB_FN int64_t sl__hyb_chunk_origin(const uint8_t *d, int64_t len, int64_t t, int chunk)
{
    int64_t o = t * chunk;
    if (o >= len)
        return len;
    return o > 0 && d[o - 1] == 0xFF && d[o] == 0 ? o + 1 : o;
}

/* What a walk found: the exit (xb < 0: it gave up before), blocks, DC difference sums, and
 * where it stopped (data bits from the chunk's origin; not where it gave up). */
typedef struct sl__hyb_walked {
    int32_t xpos, xb, n;
    int32_t dc[SL__HUFF_MAX_COMPS];
    int64_t end;
} sl__hyb_walked;

/* Decodes chunk c from the entry (gpos, gb) block by block until a block boundary lies at or
 * past `stop` data bits from its origin (the exit: past it, relative to the next origin).
 * Without coefs only the bits are walked, the DC differences summed. With coefs (the store
 * pass) the blocks are the job's from c->base with the predictions c->dcb, the walk ends also
 * where the job's `total` blocks are done, and the kept blocks are written as
 * sl__hyb_job_decode writes them. Returns SL__HUFF_OK, or SL__HUFF_GIVE_UP where a block's
 * decode gave up (w->xb = -1, w->n the blocks before it). */
SL__HYB_JOB_FN int sl__hyb_chunk_walk(const sl__hyb_head *h, const uint8_t *job,
                                      const sl__hyb_chunk *c, int32_t gpos, int32_t gb,
                                      int64_t stop, uint8_t *coefs, int64_t total,
                                      sl__hyb_walked *w)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const sl__huff_dc *dcs = (const sl__huff_dc *)(const void *)(job + jb->dc_off);
    const sl__huff_ac *acs = (const sl__huff_ac *)(const void *)(job + jb->ac_off);
    const uint8_t *d = job + jb->data_off, *start = d + c->origin;
    sl__huff_bits b = jb->bits;
    b.p = start;
    b.end = d + jb->data_len;
    b.acc = 0;
    b.n = 0;
    b.stop = 0;
    b.stuffed = 0;
    b.fill_ends = 1; /* see jpeg_huff_core.h */
    for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++) {
        b.last_dc[ci] = coefs ? c->dcb[ci] : 0;
        w->dc[ci] = 0;
    }
    for (int32_t skip = gpos; skip > 0;) { /* to the entry */
        sl__huff_refill(&b);
        const int k = skip < 32 ? skip : 32;
        b.acc <<= k;
        b.n -= k;
        skip -= k;
    }
    int k = gb, ret = SL__HUFF_OK, keep = 0;
    int64_t g = coefs ? c->base : 0;
    int16_t *blk[SL__HUFF_MAX_BLOCKS];
    w->n = 0;
    w->xb = -1;
    for (;;) {
        const int64_t pos = 8 * (int64_t)(b.p - start - b.stuffed) - b.n;
        if (pos >= stop) {
            w->xpos = (int32_t)(pos - stop);
            w->xb = k;
            break;
        }
        if (coefs && g >= total)
            break;
        if (coefs && (k == 0 || w->n == 0)) { /* an MCU starts: jpeg.c's point_mcu */
            const int64_t m = g / b.blocks, mr = m / jb->mcus_per_row;
            const int x = (int)(m % jb->mcus_per_row);
            const int row = (int)(jb->comps_in_scan > 1 ? mr : mr / jb->v_samp[0]);
            const int y = (int)(jb->comps_in_scan > 1 ? 0 : mr % jb->v_samp[0]);
            keep = row >= jb->first_imcu && row <= jb->last_imcu && x >= jb->x0 && x <= jb->x1;
            if (keep)
                sl__hyb_job_point(h, coefs, jb, row, y, x, blk);
        }
        const int r = keep && blk[k] ? sl__huff_core_block(&b, dcs, acs, k, blk[k], 1)
                                     : sl__huff_core_block(&b, dcs, acs, k, NULL, 0);
        if (r != SL__HUFF_OK) {
            ret = SL__HUFF_GIVE_UP;
            break;
        }
        if (!coefs) { /* the difference summed, the prediction back to 0 */
            const int ci = b.comp_of[k];
            w->dc[ci] += b.last_dc[ci];
            b.last_dc[ci] = 0;
        }
        w->n++;
        g++;
        k = k + 1 == b.blocks ? 0 : k + 1;
    }
    w->end = 8 * (int64_t)(b.p - start - b.stuffed) - b.n;
    return ret;
}

/* A whole-image job's end, after the last chunk's last block, data bit `end` from origin o:
 * sl__huff_core_finish's rule (sl__huff_tail) applied from the byte after the last one decoded
 * from, where the one-thread walk applies it from its reader, which has read ahead of that
 * byte without meeting a marker, the data's end or fill bytes: so this never
 * fails a file the walk accepts (what it looks at lies within what the walk read and looked
 * at), and catches what the walk rejects at the end of a changed file (its end-of-image marker
 * gone: a premature end, as libjpeg says), but where the walk's look-ahead alone reaches the
 * end or such a run: there the walk gives up and this does not (libjpeg, whose reader may
 * stand anywhere between the two, may or may not). */
SL__HYB_JOB_FN int sl__hyb_chunk_end(const uint8_t *d, int64_t len, int64_t o, int64_t end)
{
    int64_t i = o; /* the raw byte after the last one decoded from: end's data bytes counted */
    for (int64_t left = (end + 7) / 8; left > 0 && i < len; left--)
        i += d[i] == 0xFF && i + 1 < len && d[i + 1] == 0 ? 2 : 1;
    return sl__huff_tail(d + i, d + len);
}

/* A walk without storing from (gpos, gb) to chunk c's exit, recorded in c. */
SL__HYB_JOB_FN void sl__hyb_chunk_sync(const sl__hyb_head *h, const uint8_t *job, sl__hyb_chunk *c,
                                       int32_t gpos, int32_t gb)
{
    sl__hyb_walked w;
    sl__hyb_chunk_walk(h, job, c, gpos, gb, c->bits, NULL, 0, &w);
    c->gpos = gpos;
    c->gb = gb;
    c->xpos = w.xpos;
    c->xb = w.xb;
    c->n = w.n;
    for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++)
        c->dc[ci] = w.dc[ci];
}

/* *last = min(*last, t): from many threads on the device. */
SL__HYB_JOB_FN void sl__hyb_lower(int *last, int t)
{
#if defined(__CUDA_ARCH__)
    atomicMin(last, t);
#else
    if (t < *last)
        *last = t;
#endif
}

/* The first pass for chunk t (*last, set to the chunk count before, is lowered to the chunk
 * where the data ends): its origin, data bits and marker, then, unless the data ends in it, a
 * decode from the guess (0, 0) to its exit. */
SL__HYB_JOB_FN void sl__hyb_chunk_first(const sl__hyb_head *h, const uint8_t *job, int t, int chunk,
                                        sl__hyb_chunk *c, int *last)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const uint8_t *d = job + jb->data_off;
    const int64_t len = (int64_t)jb->data_len;
    const int64_t o = sl__hyb_chunk_origin(d, len, t, chunk);
    const int64_t next = sl__hyb_chunk_origin(d, len, (int64_t)t + 1, chunk);
    int64_t stuffed = 0;
    int marker = next >= len;
    for (int64_t i = o; i < next && !marker; i++) {
        if (d[i] == 0xFF)
            marker = i + 1 >= len || d[i + 1] != 0; /* what refill_slow stops at */
        else if (d[i] == 0 && i > 0 && d[i - 1] == 0xFF)
            stuffed++;
    }
    c->origin = (int32_t)o;
    c->bits = (int32_t)(8 * (next - o - stuffed));
    c->gpos = c->gb = 0;
    c->xpos = c->n = 0;
    c->xb = -1;
    for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++)
        c->dc[ci] = c->dcb[ci] = 0;
    c->base = 0;
    if (marker)
        sl__hyb_lower(last, t);
    else
        sl__hyb_chunk_sync(h, job, c, 0, 0);
}

/* A round for chunk t: out[t] is in[t], decoded again from in[t - 1]'s exit where that is not
 * its entry (the last chunk takes the entry without a decode; a predecessor that gave up
 * leaves it as it was). */
SL__HYB_JOB_FN void sl__hyb_chunk_round(const sl__hyb_head *h, const uint8_t *job, int t, int last,
                                        const sl__hyb_chunk *in, sl__hyb_chunk *out)
{
    out[t] = in[t];
    if (t == 0 || t > last || in[t - 1].xb < 0 ||
        (in[t].gpos == in[t - 1].xpos && in[t].gb == in[t - 1].xb))
        return;
    if (t == last) {
        out[t].gpos = in[t - 1].xpos;
        out[t].gb = in[t - 1].xb;
    } else {
        sl__hyb_chunk_sync(h, job, &out[t], in[t - 1].xpos, in[t - 1].xb);
    }
}

/* After the rounds, one thread per sample: chunks 0..last made consistent in order (each
 * entry its predecessor's exit, decoded again where not), then each one's base and DC
 * predictions (the chunks past the job's blocks get base >= total: the store skips them).
 * Returns SL__HUFF_OK, or SL__HUFF_GIVE_UP where a decode gave up before the job's blocks
 * were done. */
SL__HYB_JOB_FN int sl__hyb_chunk_fixup(const sl__hyb_head *h, const uint8_t *job, sl__hyb_chunk *c,
                                       int last)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const int64_t total = sl__hyb_job_blocks(jb);
    int64_t base = 0, dc[SL__HUFF_MAX_COMPS];
    for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++)
        dc[ci] = jb->bits.last_dc[ci];
    for (int t = 0; t <= last; t++) {
        if (t > 0 && base < total) {
            const sl__hyb_chunk *p = &c[t - 1];
            if (p->xb < 0)
                return SL__HUFF_GIVE_UP;
            if (c[t].gpos != p->xpos || c[t].gb != p->xb) {
                if (t < last) {
                    sl__hyb_chunk_sync(h, job, &c[t], p->xpos, p->xb);
                } else {
                    c[t].gpos = p->xpos;
                    c[t].gb = p->xb;
                }
            }
        }
        c[t].base = base;
        for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++) /* out of int16: the store gives up */
            c[t].dcb[ci] = (int32_t)(dc[ci] < -65536 ? -65536 : dc[ci] > 65536 ? 65536 : dc[ci]);
        if (base >= total || t == last)
            continue;
        base += c[t].n;
        for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++)
            dc[ci] += c[t].dc[ci];
    }
    return SL__HUFF_OK;
}

/* The store pass for chunk t: its blocks written from its entry (the last chunk's until the
 * job's blocks are done). Returns SL__HUFF_OK, or SL__HUFF_GIVE_UP where the decode gave up
 * before the chunk's blocks were done. */
SL__HYB_JOB_FN int sl__hyb_chunk_store(const sl__hyb_head *h, const uint8_t *job, int t, int last,
                                       const sl__hyb_chunk *c, uint8_t *coefs)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const int64_t total = sl__hyb_job_blocks(jb);
    if (t > last || c[t].base >= total)
        return SL__HUFF_OK;
    sl__hyb_walked w;
    const int64_t stop = t < last ? c[t].bits : INT64_MAX;
    if (sl__hyb_chunk_walk(h, job, &c[t], c[t].gpos, c[t].gb, stop, coefs, total, &w) !=
        SL__HUFF_OK)
        return SL__HUFF_GIVE_UP;
    /* the last chunk must reach the job's last block; the chunk that decodes it (the last, or
     * one before whose successors hold none of the job's blocks), for a whole image, checks
     * the scan's end after it */
    if (c[t].base + w.n < total)
        return t < last ? SL__HUFF_OK : SL__HUFF_GIVE_UP;
    return jb->to_end
               ? sl__hyb_chunk_end(job + jb->data_off, (int64_t)jb->data_len, c[t].origin, w.end)
               : SL__HUFF_OK;
}

/* ---- Restart intervals (see the top) ---- */

/* Chunks of `chunk` bytes (1 .. SL__HYB_CHUNK_MAX) in the job's data for the decode by
 * intervals, searched for markers by one thread each; 0 where the job is not for it: without
 * a restart interval or with one interval only (sl__hyb_job_chunks takes those), a chunk size
 * out of range, a geometry the walk gives up on at once or decodes nothing of
 * (mcus_per_row, v_samp[0] < 1), or data of 2 GiB or more. */
SL__HYB_JOB_FN int sl__hyb_job_marker_chunks(const sl__hyb_huff_job *jb, int chunk)
{
    if (chunk < 1 || chunk > SL__HYB_CHUNK_MAX || !sl__hyb_job_geometry(jb) ||
        jb->bits.restart_interval < 1 || sl__hyb_job_intervals(jb) < 2 ||
        jb->data_len > (uint64_t)INT32_MAX - (uint64_t)chunk)
        return 0;
    const int64_t n = ((int64_t)jb->data_len + chunk - 1) / chunk;
    return n > 0 ? (int)n : 1;
}

/* Whether data byte i is a place the walk's reader may stop at: 0xFF, then a byte that is
 * neither a stuffed zero nor past the data. That is every marker, and also a fill byte or a
 * 0xFF before fill bytes, which the reader may never reach; counting those too changes no
 * verdict: a marker position that is not the expected RSTn fails the interval that ends there
 * (sl__hyb_interval_decode), as it fails the walk. */
SL__HYB_JOB_FN int sl__hyb_marker_at(const uint8_t *d, int64_t len, int64_t i)
{
    return d[i] == 0xFF && i + 1 < len && d[i + 1] != 0;
}

/* The markers that start in chunk t's bytes. */
SL__HYB_JOB_FN int32_t sl__hyb_chunk_markers(const uint8_t *job, int t, int chunk)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const uint8_t *d = job + jb->data_off;
    const int64_t len = (int64_t)jb->data_len, lo = (int64_t)t * chunk;
    const int64_t hi = lo + chunk < len ? lo + chunk : len;
    int32_t m = 0;
    for (int64_t i = lo; i < hi; i++)
        m += sl__hyb_marker_at(d, len, i);
    return m;
}

/* One thread per sample: the n chunks' marker counts in cnt made the index (among the data's
 * markers) of each chunk's first. Returns SL__HUFF_GIVE_UP where the data holds fewer markers
 * than the job's intervals need, else SL__HUFF_OK. Only an early end for damaged data: with
 * too few markers an interval's end check fails anyway (there is no marker after it). */
SL__HYB_JOB_FN int sl__hyb_markers_sum(const sl__hyb_huff_job *jb, int32_t *cnt, int n)
{
    int64_t sum = 0;
    for (int t = 0; t < n; t++) {
        const int64_t m = cnt[t];
        cnt[t] = (int32_t)sum;
        sum += m;
    }
    return sum >= sl__hyb_job_intervals(jb) - 1 ? SL__HUFF_OK : SL__HUFF_GIVE_UP;
}

/* Interval k decoded from data byte `at` (interval 0: the data's start; interval k > 0: the
 * data's k-th marker) as sl__hyb_job_decode decodes it, from the state the walk has there: for
 * k > 0 a restart due (which checks the marker, then clears the reader and the DC
 * predictions), for interval 0 the job's initial state. After its MCUs, the next interval's
 * marker is checked as the walk's next MCU checks it, or after the last interval a whole
 * image's end as the walk checks it. Returns SL__HUFF_OK or SL__HUFF_GIVE_UP. */
SL__HYB_JOB_FN int sl__hyb_interval_decode(const sl__hyb_head *h, const uint8_t *job, int64_t k,
                                           int64_t at, uint8_t *coefs)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const sl__huff_dc *dcs = (const sl__huff_dc *)(const void *)(job + jb->dc_off);
    const sl__huff_ac *acs = (const sl__huff_ac *)(const void *)(job + jb->ac_off);
    const uint8_t *d = job + jb->data_off;
    sl__huff_bits b = jb->bits;
    b.p = d + at;
    b.end = d + jb->data_len;
    if (k > 0) {
        b.restarts_to_go = 0;
        b.next_restart = (int)((k - 1) & 7);
    }
    const int64_t mcus = sl__hyb_job_blocks(jb) / b.blocks, ri = b.restart_interval;
    const int64_t stop = (k + 1) * ri < mcus ? (k + 1) * ri : mcus;
    int16_t *blk[SL__HUFF_MAX_BLOCKS];
    for (int64_t g = k * ri; g < stop; g++) {
        /* the walk's iMCU row, MCU row in it and column for MCU g */
        const int64_t mr = g / jb->mcus_per_row;
        const int x = (int)(g % jb->mcus_per_row);
        const int row = (int)(jb->comps_in_scan > 1 ? mr : mr / jb->v_samp[0]);
        const int y = (int)(jb->comps_in_scan > 1 ? 0 : mr % jb->v_samp[0]);
        const int keep =
            row >= jb->first_imcu && row <= jb->last_imcu && x >= jb->x0 && x <= jb->x1;
        if (keep)
            sl__hyb_job_point(h, coefs, jb, row, y, x, blk);
        if (sl__huff_core_restart(&b) != SL__HUFF_OK)
            return SL__HUFF_GIVE_UP;
        for (int j = 0; j < b.blocks; j++) {
            int r = keep && blk[j] ? sl__huff_core_block(&b, dcs, acs, j, blk[j], 1)
                                   : sl__huff_core_block(&b, dcs, acs, j, NULL, 0);
            if (r != SL__HUFF_OK)
                return SL__HUFF_GIVE_UP;
        }
    }
    if (stop < mcus) /* the restart the walk's next MCU makes: its marker must be here */
        return sl__huff_core_restart(&b);
    return jb->to_end ? sl__huff_core_finish(&b) : SL__HUFF_OK;
}

/* Chunk t's intervals, `first` the index of its first marker (sl__hyb_markers_sum): those
 * whose marker starts in its bytes, and for chunk 0 interval 0. Returns SL__HUFF_OK, or
 * SL__HUFF_GIVE_UP where one of them gave up. */
SL__HYB_JOB_FN int sl__hyb_chunk_intervals(const sl__hyb_head *h, const uint8_t *job, int t,
                                           int chunk, int32_t first, uint8_t *coefs)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const uint8_t *d = job + jb->data_off;
    const int64_t len = (int64_t)jb->data_len, lo = (int64_t)t * chunk;
    const int64_t hi = lo + chunk < len ? lo + chunk : len;
    const int64_t markers = sl__hyb_job_intervals(jb) - 1; /* those the intervals start at */
    if (t == 0 && sl__hyb_interval_decode(h, job, 0, 0, coefs) != SL__HUFF_OK)
        return SL__HUFF_GIVE_UP;
    int64_t j = first;
    for (int64_t i = lo; i < hi && j < markers; i++) {
        if (!sl__hyb_marker_at(d, len, i))
            continue;
        if (sl__hyb_interval_decode(h, job, j + 1, i, coefs) != SL__HUFF_OK)
            return SL__HUFF_GIVE_UP;
        j++;
    }
    return SL__HUFF_OK;
}

#if !defined(__CUDACC__)
/* The passes on one thread, in the kernels' order (tests, the fuzz target, the benchmark).
 * sl__hyb_chunks_first: the first pass over n chunks of `chunk` bytes into rec; returns the
 * last chunk. sl__hyb_chunks_round: one round from *cur into *next, then the two swapped. */
SL__HYB_JOB_FN int sl__hyb_chunks_first(const sl__hyb_head *h, const uint8_t *job, int n, int chunk,
                                        sl__hyb_chunk *rec)
{
    int last = n - 1;
    for (int t = 0; t < n; t++)
        sl__hyb_chunk_first(h, job, t, chunk, &rec[t], &last);
    return last;
}

SL__HYB_JOB_FN void sl__hyb_chunks_round(const sl__hyb_head *h, const uint8_t *job, int n, int last,
                                         sl__hyb_chunk **cur, sl__hyb_chunk **next)
{
    for (int t = 0; t < n; t++)
        sl__hyb_chunk_round(h, job, t, last, *cur, *next);
    sl__hyb_chunk *x = *cur;
    *cur = *next;
    *next = x;
}

/* The chunked decode on one thread: chunks of `chunk` bytes, `rounds` rounds (0: the fixup
 * does all), rec room for twice sl__hyb_job_chunks(jb, chunk) records. Same result and
 * contract as sl__hyb_job_decode, for a job sl__hyb_job_chunks takes. */
SL__HYB_JOB_FN int sl__hyb_job_decode_chunked(const sl__hyb_head *h, const uint8_t *job,
                                              uint8_t *coefs, int chunk, int rounds,
                                              sl__hyb_chunk *rec)
{
    const int n = sl__hyb_job_chunks((const sl__hyb_huff_job *)(const void *)job, chunk);
    if (n < 1)
        return SL__HUFF_GIVE_UP;
    const int last = sl__hyb_chunks_first(h, job, n, chunk, rec);
    sl__hyb_chunk *cur = rec, *next = rec + n;
    for (int r = 0; r < rounds; r++)
        sl__hyb_chunks_round(h, job, n, last, &cur, &next);
    if (sl__hyb_chunk_fixup(h, job, cur, last) != SL__HUFF_OK)
        return SL__HUFF_GIVE_UP;
    for (int t = 0; t <= last; t++)
        if (sl__hyb_chunk_store(h, job, t, last, cur, coefs) != SL__HUFF_OK)
            return SL__HUFF_GIVE_UP;
    return SL__HUFF_OK;
}

/* The decode by intervals on one thread, in the kernels' order: markers searched in chunks of
 * `chunk` bytes, cnt room for sl__hyb_job_marker_chunks(jb, chunk) counts. Same result and
 * contract as sl__hyb_job_decode, for a job sl__hyb_job_marker_chunks takes. */
SL__HYB_JOB_FN int sl__hyb_job_decode_intervals(const sl__hyb_head *h, const uint8_t *job,
                                                uint8_t *coefs, int chunk, int32_t *cnt)
{
    const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job;
    const int n = sl__hyb_job_marker_chunks(jb, chunk);
    if (n < 1)
        return SL__HUFF_GIVE_UP;
    for (int t = 0; t < n; t++)
        cnt[t] = sl__hyb_chunk_markers(job, t, chunk);
    if (sl__hyb_markers_sum(jb, cnt, n) != SL__HUFF_OK)
        return SL__HUFF_GIVE_UP;
    for (int t = 0; t < n; t++)
        if (sl__hyb_chunk_intervals(h, job, t, chunk, cnt[t], coefs) != SL__HUFF_OK)
            return SL__HUFF_GIVE_UP;
    return SL__HUFF_OK;
}
#endif

#endif
