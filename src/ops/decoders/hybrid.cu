/* src/ops/decoders/hybrid.cu: the hybrid JPEG decoder's GPU half (hybrid.h).
 *
 * Exports sl__hybrid_run_gpu, decoders.image's run_gpu on device "mixed". Two kernels per
 * batch, `idct` (one thread per 8x8 block: dequantisation and libjpeg-turbo's jpeg_idct_islow
 * into the component's 8-bit plane) and `pixels` (one thread per output pixel: each needed
 * component upsampled as jdsample.c does at that pixel, then jdcolor.c's conversion; a sample
 * decoded on the CPU is copied), after, when the batch has samples for device entropy decoding
 * (hybrid.h), `zero` (their coefficient areas, in device scratch, zeroed) and the entropy
 * decoding: hybrid_job.h's chunked decode, one thread per SL__HYB_CHUNK bytes of a sample's
 * scan (`entropy first`, three `entropy round`s, `entropy fixup` with one thread per sample,
 * `entropy store`; also for a scan whose restart interval is never reached); for a scan with
 * more than one restart interval, its decode by intervals (`entropy markers`, one thread per
 * SL__HYB_CHUNK bytes counting the restart markers, `entropy marker sum`, one per sample, and
 * `entropy intervals`, each chunk's thread decoding the intervals whose marker is in its
 * bytes); and `entropy` (one thread per sample: sl__hyb_job_decode) for
 * a job neither takes. A sample whose decode gives up fails the batch naming it, through the
 * node's error flag. The arithmetic is libjpeg's, integer for integer:
 *
 * - IDCT (jidctint.c): CONST_BITS 13, PASS1_BITS 2, 64-bit intermediates (JLONG), the
 *   dequantised coefficient as ISLOW_MULT_TYPE (16 bits in SIMD builds: the table's values
 *   are cast to short, as jddctmgr.c stores them), DESCALE with rounding, and the range limit
 *   table indexed with RANGE_MASK (1023): the descaled value wraps modulo 1024 as a signed
 *   10-bit number, then is clamped to [-128, 127] and offset by 128 (jdmaster.c's table).
 *   The zero-AC shortcuts of both passes give the same values as the full path (checked by
 *   hand: (dc << 13 + 2^10) >> 11 = dc << 2, and (w << 13 + 2^17) >> 18 = (w + 16) >> 5).
 * - Upsampling (jdsample.c, fancy on): h2v1 and h2v2 triangle filters with their alternating
 *   biases (1, 2 and 8, 7), h1v2 (biases 1, 2), integral replication otherwise and when a
 *   subsampled row is at most 2 samples wide; the row above the first and below the last
 *   real row is that row itself (jdmainct.c's context pointers), the column left of the first
 *   and right of the last (downsampled_width - 1) the edge sample itself.
 * - Color (jdcolor.c): YCbCr to RGB with the tables' values computed inline (FIX(x) =
 *   x * 2^16 rounded, ONE_HALF in the Cb->G term, arithmetic right shifts), clamped; gray
 *   output of a YCbCr JPEG is Y; of an RGB JPEG rgb_gray_convert's luma; gray to RGB copies.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cuda/kernel.cuh"
#include "ops/decoders/hybrid.h"
#include "ops/decoders/hybrid_job.h"

namespace {

/* A sample's parameters (one array per batch, uploaded). */
struct hyb_sample {
    const uint8_t *src;    /* device staging: head, then blocks, pixels or a huff job (hybrid.h) */
    uint8_t *coefs;        /* where coef_off counts from: src (read only), or with a huff job
                              device scratch */
    uint8_t *planes;       /* device scratch of its planes */
    uint8_t *out;          /* output HWC */
    sl__hyb_chunk *chunks; /* with a chunked job (nchunks > 0): two sets of nchunks records,
                              device scratch (hybrid_job.h's passes alternate between them) */
    int *last;             /* its last chunk (device scratch) */
    int32_t *markers;      /* with a job by intervals (nmchunks > 0): each marker chunk's marker
                              count, then its first marker's index (device scratch) */
    int32_t nchunks, nmchunks;
    sl__hyb_head head;
};

/* The chunked decode's chunk size and rounds before the fixup (hybrid_job.h). A guess falls
 * onto the true block boundaries slowly: on 487 photos of the benchmark set (bench_hybrid_cpu's
 * "chunks" line and its sweep in performance.md), after the first pass and one round 12 % of
 * 512-byte chunks still had a wrong entry, after 2 rounds 1.9 %, after 3 0.36 %, and each
 * round costs about one chunk's decode on the device (its slowest thread) while the fixup
 * decodes what is left of a sample on one thread. SLUICE_HYBRID_CHUNK="BYTES:ROUNDS" (read
 * once) sets others, to measure them on a lent GPU. */
struct chunking {
    int bytes, rounds;
};

static chunking chunking_read()
{
    chunking c = {SL__HYB_CHUNK, 3};
    const char *e = getenv("SLUICE_HYBRID_CHUNK");
    int b, r;
    if (e && sscanf(e, "%d:%d", &b, &r) == 2 && b >= 16 && b <= SL__HYB_CHUNK_MAX && r >= 0 &&
        r <= 64)
        c = chunking{b, r};
    return c;
}

static const chunking &chunking_now()
{
    static const chunking c = chunking_read(); /* C++: initialised once, thread-safe */
    return c;
}

#define CONST_BITS 13
#define PASS1_BITS 2
#define FIX_0_298631336 ((int64_t)2446)
#define FIX_0_390180644 ((int64_t)3196)
#define FIX_0_541196100 ((int64_t)4433)
#define FIX_0_765366865 ((int64_t)6270)
#define FIX_0_899976223 ((int64_t)7373)
#define FIX_1_175875602 ((int64_t)9633)
#define FIX_1_501321110 ((int64_t)12299)
#define FIX_1_847759065 ((int64_t)15137)
#define FIX_1_961570560 ((int64_t)16069)
#define FIX_2_053119869 ((int64_t)16819)
#define FIX_2_562915447 ((int64_t)20995)
#define FIX_3_072711026 ((int64_t)25172)

static SL_HD int64_t descale(int64_t x, int n)
{
    return (x + ((int64_t)1 << (n - 1))) >> n;
}

/* range_limit[x & RANGE_MASK] of jdmaster.c's table (IDCT_range_limit). */
static SL_HD uint8_t range_limit(int64_t x)
{
    int v = (int)(x & 1023);
    v = (v ^ 512) - 512; /* the table's two halves: [0, 512) above zero, [512, 1024) below */
    v += 128;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* The odd part of both passes: tmp0..tmp3 from the inputs at 7, 5, 3, 1. */
static SL_HD void odd_part(int64_t i7, int64_t i5, int64_t i3, int64_t i1, int64_t t[4])
{
    int64_t tmp0 = i7, tmp1 = i5, tmp2 = i3, tmp3 = i1;
    int64_t z1 = tmp0 + tmp3, z2 = tmp1 + tmp2, z3 = tmp0 + tmp2, z4 = tmp1 + tmp3;
    int64_t z5 = (z3 + z4) * FIX_1_175875602;
    tmp0 = tmp0 * FIX_0_298631336;
    tmp1 = tmp1 * FIX_2_053119869;
    tmp2 = tmp2 * FIX_3_072711026;
    tmp3 = tmp3 * FIX_1_501321110;
    z1 = z1 * -FIX_0_899976223;
    z2 = z2 * -FIX_2_562915447;
    z3 = z3 * -FIX_1_961570560;
    z4 = z4 * -FIX_0_390180644;
    z3 += z5;
    z4 += z5;
    t[0] = tmp0 + z1 + z3;
    t[1] = tmp1 + z2 + z4;
    t[2] = tmp2 + z2 + z3;
    t[3] = tmp3 + z1 + z4;
}

/* jpeg_idct_islow of one block: coef (natural order) times quant into out (stride bytes). */
static SL_HD void idct_islow(const int16_t *coef, const uint16_t *quant, uint8_t *out,
                             int64_t stride)
{
    int ws[64];
    for (int c = 0; c < 8; c++) {
        int64_t d[8];
        for (int r = 0; r < 8; r++) /* DEQUANTIZE: (ISLOW_MULT_TYPE)coef * (short)quantval */
            d[r] = (int64_t)((int)coef[r * 8 + c] * (int)(int16_t)quant[r * 8 + c]);
        int64_t z2 = d[2], z3 = d[6];
        int64_t z1 = (z2 + z3) * FIX_0_541196100;
        int64_t tmp2 = z1 + z3 * -FIX_1_847759065;
        int64_t tmp3 = z1 + z2 * FIX_0_765366865;
        int64_t tmp0 = (d[0] + d[4]) * ((int64_t)1 << CONST_BITS);
        int64_t tmp1 = (d[0] - d[4]) * ((int64_t)1 << CONST_BITS);
        int64_t tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3, tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
        int64_t t[4];
        odd_part(d[7], d[5], d[3], d[1], t);
        const int sh = CONST_BITS - PASS1_BITS;
        ws[0 * 8 + c] = (int)descale(tmp10 + t[3], sh);
        ws[7 * 8 + c] = (int)descale(tmp10 - t[3], sh);
        ws[1 * 8 + c] = (int)descale(tmp11 + t[2], sh);
        ws[6 * 8 + c] = (int)descale(tmp11 - t[2], sh);
        ws[2 * 8 + c] = (int)descale(tmp12 + t[1], sh);
        ws[5 * 8 + c] = (int)descale(tmp12 - t[1], sh);
        ws[3 * 8 + c] = (int)descale(tmp13 + t[0], sh);
        ws[4 * 8 + c] = (int)descale(tmp13 - t[0], sh);
    }
    for (int r = 0; r < 8; r++) {
        const int *w = ws + r * 8;
        uint8_t *o = out + r * stride;
        int64_t z2 = w[2], z3 = w[6];
        int64_t z1 = (z2 + z3) * FIX_0_541196100;
        int64_t tmp2 = z1 + z3 * -FIX_1_847759065;
        int64_t tmp3 = z1 + z2 * FIX_0_765366865;
        int64_t tmp0 = ((int64_t)w[0] + w[4]) * ((int64_t)1 << CONST_BITS);
        int64_t tmp1 = ((int64_t)w[0] - w[4]) * ((int64_t)1 << CONST_BITS);
        int64_t tmp10 = tmp0 + tmp3, tmp13 = tmp0 - tmp3, tmp11 = tmp1 + tmp2, tmp12 = tmp1 - tmp2;
        int64_t t[4];
        odd_part(w[7], w[5], w[3], w[1], t);
        const int sh = CONST_BITS + PASS1_BITS + 3;
        o[0] = range_limit(descale(tmp10 + t[3], sh));
        o[7] = range_limit(descale(tmp10 - t[3], sh));
        o[1] = range_limit(descale(tmp11 + t[2], sh));
        o[6] = range_limit(descale(tmp11 - t[2], sh));
        o[2] = range_limit(descale(tmp12 + t[1], sh));
        o[5] = range_limit(descale(tmp12 - t[1], sh));
        o[3] = range_limit(descale(tmp13 + t[0], sh));
        o[4] = range_limit(descale(tmp13 - t[0], sh));
    }
}

struct idct_kernel {
    const hyb_sample *s;
    SL_HD int64_t count(int i) const
    {
        return s[i].head.kind == SL__HYB_COEFS ? (int64_t)s[i].head.nblocks : 0;
    }
    SL_HD void operator()(int i, int64_t b) const
    {
        const sl__hyb_head &h = s[i].head;
        int k = 0;
        for (; k + 1 < h.ncomp; k++) {
            int64_t n = (int64_t)h.comp[k].bw * h.comp[k].bh;
            if (b < n)
                break;
            b -= n;
        }
        const sl__hyb_comp &q = h.comp[k];
        if (!q.needed)
            return;
        int64_t by;
        int64_t bx = sl__gdivmod(b, q.bw, &by);
        const int16_t *coef = (const int16_t *)(s[i].coefs + q.coef_off) + b * 64;
        const int64_t stride = (int64_t)q.bw * 8;
        idct_islow(coef, q.quant, s[i].planes + q.plane_off + by * 8 * stride + bx * 8, stride);
    }
};

static SL_HD int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Component q's sample (sx, sy), in the component's own coordinates, from its plane p, which
 * starts at its sample (bx0 * 8, by0 * 8) and holds every sample a pixel of the window reads
 * (jpeg.c's window_axis). */
static SL_HD int at(const sl__hyb_comp &q, const uint8_t *p, int sx, int sy)
{
    return p[((int64_t)sy - (int64_t)q.by0 * 8) * ((int64_t)q.bw * 8) + sx - q.bx0 * 8];
}

/* Component q's sample at output pixel (x, y), as jdsample.c's method for it makes it. */
static SL_HD int upsampled(const sl__hyb_comp &q, const uint8_t *p, int x, int y)
{
    switch (q.method) {
    case SL__UP_FULL: return at(q, p, x, y);
    case SL__UP_INT: return at(q, p, x / q.hexp, y / q.vexp);
    case SL__UP_H2V1: {
        int k = x >> 1, a = at(q, p, k, y) * 3;
        return (x & 1) ? (a + at(q, p, clampi(k + 1, 0, q.dw - 1), y) + 2) >> 2
                       : (a + at(q, p, clampi(k - 1, 0, q.dw - 1), y) + 1) >> 2;
    }
    case SL__UP_H1V2: {
        int r = y >> 1, v = y & 1;
        int r1 = clampi(v ? r + 1 : r - 1, 0, q.dh - 1);
        return (at(q, p, x, r) * 3 + at(q, p, x, r1) + (v ? 2 : 1)) >> 2;
    }
    default: { /* SL__UP_H2V2 */
        int r = y >> 1, v = y & 1;
        int r1 = clampi(v ? r + 1 : r - 1, 0, q.dh - 1);
        int k = x >> 1;
        int kn = clampi((x & 1) ? k + 1 : k - 1, 0, q.dw - 1);
        int cs = at(q, p, k, r) * 3 + at(q, p, k, r1), cn = at(q, p, kn, r) * 3 + at(q, p, kn, r1);
        return (x & 1) ? (cs * 3 + cn + 7) >> 4 : (cs * 3 + cn + 8) >> 4;
    }
    }
}

static SL_HD uint8_t clamp255(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

#define SCALEBITS 16
#define ONE_HALF ((int64_t)1 << (SCALEBITS - 1))
#define FIX(x) ((int64_t)((x) * (1L << SCALEBITS) + 0.5))

struct pixel_kernel {
    const hyb_sample *s;
    SL_HD int64_t count(int i) const
    {
        return (int64_t)s[i].head.width * s[i].head.height;
    }
    SL_HD void operator()(int i, int64_t pix) const
    {
        const sl__hyb_head &h = s[i].head;
        uint8_t *o = s[i].out + pix * h.out_c;
        if (h.kind != SL__HYB_COEFS) { /* decoded on the CPU */
            const uint8_t *src = s[i].src + SL__HYB_HEAD_BYTES + pix * h.out_c;
            for (int c = 0; c < h.out_c; c++)
                o[c] = src[c];
            return;
        }
        int64_t y64;
        const int x = (int)sl__gdivmod(pix, h.width, &y64) + h.x0, y = (int)y64 + h.y0;
        const uint8_t *planes = s[i].planes;
        int c0 = upsampled(h.comp[0], planes + h.comp[0].plane_off, x, y);
        if (h.space == SL__HYB_GRAY || (h.space == SL__HYB_YCC && h.out_c == 1)) {
            for (int c = 0; c < h.out_c; c++) /* grayscale_convert, gray_rgb_convert */
                o[c] = (uint8_t)c0;
            return;
        }
        int c1 = upsampled(h.comp[1], planes + h.comp[1].plane_off, x, y);
        int c2 = upsampled(h.comp[2], planes + h.comp[2].plane_off, x, y);
        int r, g, b;
        if (h.space == SL__HYB_RGB) {
            r = c0;
            g = c1;
            b = c2;
            if (h.out_c == 1) { /* rgb_gray_convert */
                o[0] =
                    (uint8_t)((r * FIX(0.29900) + g * FIX(0.58700) + b * FIX(0.11400) + ONE_HALF) >>
                              SCALEBITS);
                return;
            }
        } else { /* ycc_rgb_convert */
            const int64_t cb = c1 - 128, cr = c2 - 128;
            r = clamp255(c0 + (int)((FIX(1.40200) * cr + ONE_HALF) >> SCALEBITS));
            g = clamp255(c0 +
                         (int)((-FIX(0.34414) * cb + ONE_HALF + -FIX(0.71414) * cr) >> SCALEBITS));
            b = clamp255(c0 + (int)((FIX(1.77200) * cb + ONE_HALF) >> SCALEBITS));
        }
        o[0] = (uint8_t)(h.bgr ? b : r);
        o[1] = (uint8_t)g;
        o[2] = (uint8_t)(h.bgr ? r : b);
    }
};

/* Device entropy decoding (hybrid.h), first part: the coefficient area of each sample with a
 * job (device scratch) zeroed (the decoder writes only the nonzero coefficients), 16 bytes per
 * element. */
struct zero_kernel {
    const hyb_sample *s;
    SL_HD int64_t count(int i) const
    {
        return s[i].head.kind == SL__HYB_COEFS && s[i].head.huff_off
                   ? (int64_t)s[i].head.nblocks * 8 /* 128 bytes a block */
                   : 0;
    }
    SL_HD void operator()(int i, int64_t k) const
    {
        uint4 *p = (uint4 *)(s[i].coefs + SL__HYB_HEAD_BYTES) + k;
        *p = make_uint4(0, 0, 0, 0);
    }
};

/* The chunked decode's passes (hybrid_job.h), one thread per chunk of a sample's job but for
 * the fixup (one per sample; it flags a sample whose decode gave up, as the store does). */
static SL_HD const uint8_t *job_of(const hyb_sample &s)
{
    return s.src + s.head.huff_off;
}

struct chunk_init_kernel {
    const hyb_sample *s;
    SL_HD int64_t count(int i) const
    {
        return s[i].nchunks > 0 ? 1 : 0;
    }
    SL_HD void operator()(int i, int64_t) const
    {
        *s[i].last = s[i].nchunks - 1;
    }
};

struct chunk_first_kernel {
    const hyb_sample *s;
    int bytes; /* per chunk */
    SL_HD int64_t count(int i) const
    {
        return s[i].nchunks;
    }
    SL_HD void operator()(int i, int64_t t) const
    {
        sl__hyb_chunk_first(&s[i].head, job_of(s[i]), (int)t, bytes, &s[i].chunks[t], s[i].last);
    }
};

struct chunk_round_kernel {
    const hyb_sample *s;
    int from; /* the set of records read: 0 or 1 */
    SL_HD int64_t count(int i) const
    {
        return s[i].nchunks;
    }
    SL_HD void operator()(int i, int64_t t) const
    {
        const sl__hyb_chunk *in = s[i].chunks + (int64_t)from * s[i].nchunks;
        sl__hyb_chunk *out = s[i].chunks + (int64_t)(1 - from) * s[i].nchunks;
        sl__hyb_chunk_round(&s[i].head, job_of(s[i]), (int)t, *s[i].last, in, out);
    }
};

struct chunk_fixup_kernel {
    const hyb_sample *s;
    int *flag;
    int set; /* the records of the last round: rounds % 2 */
    SL_HD int64_t count(int i) const
    {
        return s[i].nchunks > 0 ? 1 : 0;
    }
    SL_HD void operator()(int i, int64_t) const
    {
        sl__hyb_chunk *c = s[i].chunks + (int64_t)set * s[i].nchunks;
        if (sl__hyb_chunk_fixup(&s[i].head, job_of(s[i]), c, *s[i].last) != SL__HUFF_OK)
            sl_gpu_flag_sample(flag, i);
    }
};

struct chunk_store_kernel {
    const hyb_sample *s;
    int *flag;
    int set;
    SL_HD int64_t count(int i) const
    {
        return s[i].nchunks;
    }
    SL_HD void operator()(int i, int64_t t) const
    {
        const sl__hyb_chunk *c = s[i].chunks + (int64_t)set * s[i].nchunks;
        if (sl__hyb_chunk_store(&s[i].head, job_of(s[i]), (int)t, *s[i].last, c, s[i].coefs) !=
            SL__HUFF_OK)
            sl_gpu_flag_sample(flag, i);
    }
};

/* The decode by intervals (hybrid_job.h): one thread per chunk counts its markers, one per
 * sample sums them (and flags a sample whose data holds too few), one per chunk decodes the
 * intervals whose marker starts in it. */
struct marker_count_kernel {
    const hyb_sample *s;
    int bytes; /* per chunk */
    SL_HD int64_t count(int i) const
    {
        return s[i].nmchunks;
    }
    SL_HD void operator()(int i, int64_t t) const
    {
        s[i].markers[t] = sl__hyb_chunk_markers(job_of(s[i]), (int)t, bytes);
    }
};

struct marker_sum_kernel {
    const hyb_sample *s;
    int *flag;
    SL_HD int64_t count(int i) const
    {
        return s[i].nmchunks > 0 ? 1 : 0;
    }
    SL_HD void operator()(int i, int64_t) const
    {
        const sl__hyb_huff_job *jb = (const sl__hyb_huff_job *)(const void *)job_of(s[i]);
        if (sl__hyb_markers_sum(jb, s[i].markers, s[i].nmchunks) != SL__HUFF_OK)
            sl_gpu_flag_sample(flag, i);
    }
};

struct interval_kernel {
    const hyb_sample *s;
    int *flag;
    int bytes;
    SL_HD int64_t count(int i) const
    {
        return s[i].nmchunks;
    }
    SL_HD void operator()(int i, int64_t t) const
    {
        if (sl__hyb_chunk_intervals(&s[i].head, job_of(s[i]), (int)t, bytes, s[i].markers[t],
                                    s[i].coefs) != SL__HUFF_OK)
            sl_gpu_flag_sample(flag, i);
    }
};

/* Second part: one thread per sample with a job runs jpeg_huff_core.h's decoder over the
 * job's bytes (hybrid_job.h: MCU by MCU as jpeg.c's single_scan_rows does, each block the
 * window keeps written in place as point_mcu places it, the others decoded into nothing). The file
 * was decoded cleanly by the same code on the CPU, so this never gives up; if it does, the sample
 * is flagged and the batch fails naming it. */
struct huff_kernel {
    const hyb_sample *s;
    int *flag;
    SL_HD int64_t count(int i) const
    {
        return s[i].head.kind == SL__HYB_COEFS && s[i].head.huff_off && !s[i].nchunks &&
                       !s[i].nmchunks
                   ? 1
                   : 0;
    }
    SL_HD void operator()(int i, int64_t) const
    {
        const sl__hyb_head *h = &s[i].head;
        if (sl__hyb_job_decode(h, s[i].src + h->huff_off, s[i].coefs) != SL__HUFF_OK)
            sl_gpu_flag_sample(flag, i);
    }
};

} // namespace

extern "C" sl_status sl__hybrid_run_gpu(sl_ctx *ctx)
{
    const int n = sl_ctx_batch_size(ctx);
    hyb_sample *ps = (hyb_sample *)sl_ctx_scratch(ctx, sizeof(hyb_sample) * (size_t)(n ? n : 1));
    if (!ps)
        return sl_fail(ctx, SL_ENOMEM, "out of memory for %d samples' parameters", n);
    size_t planes = 0, coefs = 0;
    int64_t max_blocks = 0, max_pixels = 0, max_zero = 0, max_chunks = 0;
    size_t records = 0;
    int chunked = 0, by_intervals = 0, max_mchunks = 0;
    for (int i = 0; i < n; i++) {
        const sl__hyb_head *h = (const sl__hyb_head *)sl_ctx_staging(ctx, i);
        const int64_t *shape = sl_ctx_output_shape(ctx, 0, i);
        if (!h || h->magic != SL__HYB_MAGIC || h->height != shape[0] || h->width != shape[1] ||
            h->out_c != shape[2]) {
            sl_ctx_focus_sample(ctx, i);
            return sl_fail(ctx, SL_EINTERNAL, "the staging does not hold a decoded sample");
        }
        ps[i].head = *h;
        ps[i].src = (const uint8_t *)sl_ctx_staging_device(ctx, i);
        ps[i].out = (uint8_t *)sl_ctx_output_data(ctx, 0, i);
        ps[i].planes = (uint8_t *)(uintptr_t)planes; /* an offset until the scratch exists */
        ps[i].coefs = NULL;
        ps[i].chunks = NULL;
        ps[i].last = NULL;
        ps[i].markers = NULL;
        ps[i].nchunks = ps[i].nmchunks = 0;
        if (h->kind == SL__HYB_COEFS) {
            planes += (size_t)h->plane_bytes;
            max_blocks = (int64_t)h->nblocks > max_blocks ? (int64_t)h->nblocks : max_blocks;
            if (h->huff_off) { /* its coefficients in device scratch, coef_off from here */
                ps[i].coefs = (uint8_t *)(uintptr_t)coefs;
                coefs += (size_t)h->nblocks * 128;
                max_zero = (int64_t)h->nblocks * 8 > max_zero ? (int64_t)h->nblocks * 8 : max_zero;
                /* the job is in the pinned staging, readable here */
                const sl__hyb_huff_job *jb =
                    (const sl__hyb_huff_job *)(const void *)((const uint8_t *)h + h->huff_off);
                const int nc = sl__hyb_job_chunks(jb, chunking_now().bytes);
                const int nm = sl__hyb_job_marker_chunks(jb, SL__HYB_CHUNK);
                ps[i].nchunks = nc;
                ps[i].nmchunks = nm;
                /* offsets, as planes: two sets of chunk records, or the marker counts */
                ps[i].chunks = (sl__hyb_chunk *)(uintptr_t)records;
                ps[i].markers = (int32_t *)(uintptr_t)records;
                records += 2 * (size_t)nc * sizeof(sl__hyb_chunk);
                records += ((size_t)nm * sizeof(int32_t) + 15) & ~(size_t)15;
                max_chunks = nc > max_chunks ? nc : max_chunks;
                max_mchunks = nm > max_mchunks ? nm : max_mchunks;
                chunked += nc > 0;
                by_intervals += nm > 0;
            }
        }
        int64_t px = (int64_t)h->width * h->height;
        max_pixels = px > max_pixels ? px : max_pixels;
    }
    uint8_t *base = NULL;
    if (planes > 0 && !(base = (uint8_t *)sl_ctx_gpu_scratch(ctx, 0, planes)))
        return SL_ENOMEM;
    uint8_t *cbase = NULL;
    if (coefs > 0 && !(cbase = (uint8_t *)sl_ctx_gpu_scratch(ctx, 1, coefs)))
        return SL_ENOMEM;
    /* the chunk records (2 x 72 bytes per 512 bytes of a job's data; 4 bytes for a job by
     * intervals), sized by what the batch holds as the planes are (room for the largest job in
     * every sample would take 1.2 GB of a batch of 256 with one 15 MB file), then each sample's
     * last chunk */
    const size_t lasts = (records + 15) & ~(size_t)15;
    uint8_t *hbase = NULL;
    if ((chunked || by_intervals) &&
        !(hbase = (uint8_t *)sl_ctx_gpu_scratch(ctx, 2, lasts + sizeof(int) * n)))
        return SL_ENOMEM;
    for (int i = 0; i < n; i++) {
        ps[i].planes = base ? base + (uintptr_t)ps[i].planes : NULL;
        if (ps[i].nchunks) {
            ps[i].chunks = (sl__hyb_chunk *)(void *)(hbase + (uintptr_t)ps[i].chunks);
            ps[i].last = (int *)(void *)(hbase + lasts) + i;
        }
        if (ps[i].nmchunks)
            ps[i].markers = (int32_t *)(void *)(hbase + (uintptr_t)ps[i].markers);
        const bool job = ps[i].head.kind == SL__HYB_COEFS && ps[i].head.huff_off;
        /* coef_off counts from the head's start: the scratch stands where the blocks follow */
        ps[i].coefs =
            job ? (uint8_t *)((uintptr_t)cbase + (uintptr_t)ps[i].coefs - SL__HYB_HEAD_BYTES)
                : (uint8_t *)(uintptr_t)ps[i].src; /* the kernels only read it there */
    }
    const hyb_sample *dev = sl_gpu_params(ctx, 0, ps, n);
    if (!dev)
        return SL_ENOMEM;
    sl_status st = SL_OK;
    if (max_zero > 0) { /* device entropy decoding (hybrid.h) */
        int *flag = sl_ctx_gpu_error_flag(ctx, "internal error: the device entropy decoding "
                                               "gave up on a file that jpeg_huff.c decoded "
                                               "cleanly on the CPU (SLUICE_HYBRID_DEVICE_HUFF=0 "
                                               "turns it off)");
        if (!flag)
            return SL_ENOMEM;
        st = sl_gpu_each(ctx, n, max_zero, zero_kernel{dev}, "decoders.image entropy zero");
        if (st == SL_OK)
            st = sl_gpu_each(ctx, n, 1, huff_kernel{dev, flag}, "decoders.image entropy");
        if (st == SL_OK && chunked) {
            st = sl_gpu_each(ctx, n, 1, chunk_init_kernel{dev}, "decoders.image entropy init");
            const chunking &ck = chunking_now();
            if (st == SL_OK)
                st = sl_gpu_each(ctx, n, max_chunks, chunk_first_kernel{dev, ck.bytes},
                                 "decoders.image entropy first");
            for (int r = 0; r < ck.rounds && st == SL_OK; r++)
                st = sl_gpu_each(ctx, n, max_chunks, chunk_round_kernel{dev, r % 2},
                                 "decoders.image entropy round");
            if (st == SL_OK)
                st = sl_gpu_each(ctx, n, 1, chunk_fixup_kernel{dev, flag, ck.rounds % 2},
                                 "decoders.image entropy fixup");
            if (st == SL_OK)
                st = sl_gpu_each(ctx, n, max_chunks, chunk_store_kernel{dev, flag, ck.rounds % 2},
                                 "decoders.image entropy store");
        }
        if (st == SL_OK && by_intervals)
            st = sl_gpu_each(ctx, n, max_mchunks, marker_count_kernel{dev, SL__HYB_CHUNK},
                             "decoders.image entropy markers");
        if (st == SL_OK && by_intervals)
            st = sl_gpu_each(ctx, n, 1, marker_sum_kernel{dev, flag},
                             "decoders.image entropy marker sum");
        if (st == SL_OK && by_intervals)
            st = sl_gpu_each(ctx, n, max_mchunks, interval_kernel{dev, flag, SL__HYB_CHUNK},
                             "decoders.image entropy intervals");
    }
    if (st == SL_OK)
        st = sl_gpu_each(ctx, n, max_blocks, idct_kernel{dev}, "decoders.image IDCT");
    if (st == SL_OK)
        st = sl_gpu_each(ctx, n, max_pixels, pixel_kernel{dev}, "decoders.image color");
    return st;
}
