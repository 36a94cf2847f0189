/* src/ops/decoders/jpeg_huff_core.h: the decoding core of jpeg_huff.c's Huffman decoder, one
 * source compiled as host C (jpeg_huff.c) and as CUDA host/device code (hybrid.cu's device
 * entropy decoding, hybrid.h). Internal; no libjpeg here (jpeg_huff.h builds the tables from
 * libjpeg's with sl__huff_init, on the host only).
 *
 * Exports the table and state types (sl__huff_dc, sl__huff_ac, sl__huff_bits), the bit
 * reader's refill, sl__huff_core_restart (a restart marker due before an MCU),
 * sl__huff_core_block (one block's DC and AC coefficients) and sl__huff_core_finish (whether
 * what was read is what libjpeg would have accepted). The exactness argument is jpeg_huff.h's:
 * the same code on the same bytes from the same state gives the same coefficients on both.
 *
 * Invariant (jpeg_huff.c's): b->n counts the bits of b->acc that came from the data
 * (left-aligned); below them acc holds either the next data bits (a refill loaded more bytes
 * than it counted: the next refill ORs the same bits there again) or zeros (after a marker or
 * the data's end, as libjpeg pads). A decode that consumes more than b->n bits drives n
 * negative, which sl__huff_core_block and sl__huff_core_finish report as SL__HUFF_GIVE_UP.
 */
#ifndef SLUICE_OPS_DECODERS_JPEG_HUFF_CORE_H
#define SLUICE_OPS_DECODERS_JPEG_HUFF_CORE_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define SL__HUFF_FN static __host__ __device__ __forceinline__
#define SL__HUFF_LIKELY(x) (x)
#define SL__HUFF_OUTLINE static __host__ __device__
#define SL__HUFF_UNUSED
#else
#define SL__HUFF_FN static inline __attribute__((always_inline))
#define SL__HUFF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SL__HUFF_OUTLINE __attribute__((unused)) static /* left to the compiler, as before */
#define SL__HUFF_UNUSED __attribute__((unused))
#endif

#define SL__HUFF_FAST 11   /* look-up bits of an AC table */
#define SL__HUFF_DC_FAST 9 /* of a DC table (its codes are short: 12 symbols) */
/* libjpeg's MAX_COMPS_IN_SCAN, D_MAX_BLOCKS_IN_MCU and NUM_HUFF_TBLS (jpeg_huff.h checks) */
#define SL__HUFF_MAX_COMPS 4
#define SL__HUFF_MAX_BLOCKS 10
#define SL__HUFF_NTBL 4

enum { SL__HUFF_OK = 0, SL__HUFF_GIVE_UP = -1 };

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

/* An AC table: its codes and a look-up of code and extra bits at once (see AC_* below). */
typedef struct sl__huff_ac {
    sl__huff_codes codes;
    int32_t ac[1 << SL__HUFF_FAST];
} sl__huff_ac;

/* The state of one scan's decoding, without its tables (position-independent but for p, end):
 * the part a device thread keeps in its registers. */
typedef struct sl__huff_bits {
    uint64_t acc; /* bits, left-aligned */
    int n;        /* valid bits in acc (negative: bits past a marker were read) */
    int stop;     /* 1: a marker was met, 2: the data ended (no more bytes read), 3: fill bytes
                     before a stuffed zero (refill_slow: give up) */
    const uint8_t *p, *end; /* the next byte to put in acc; the data's end */
    int64_t stuffed;        /* stuffed zeros (0xFF 0x00) skipped since p was set: the data bit
                               at p is 8 * (p - start - stuffed) from the start (hybrid_job.h) */
    int fill_ends;          /* 1: fill bytes before a stuffed zero end the data as a marker does
                               (stop 1, not 3). For the chunked device decode of a file known
                               clean (hybrid_job.h): whether a reader meets them depends on how
                               far ahead it has read, and a chunk's reader starts 57 bits ahead
                               of a point the CPU's reached with fewer; the CPU's never met them,
                               so the bits decoded all lie before them */
    int last_dc[SL__HUFF_MAX_COMPS];
    int restart_interval, restarts_to_go, next_restart;
    int blocks;                           /* blocks in an MCU */
    uint8_t comp_of[SL__HUFF_MAX_BLOCKS]; /* the block's component in the scan */
    uint8_t dc_of[SL__HUFF_MAX_BLOCKS];   /* its DC table: an index into the tables */
    uint8_t ac_of[SL__HUFF_MAX_BLOCKS];   /* its AC table */
} sl__huff_bits;

/* An entry of sl__huff_ac.ac: bits 0-7 the bits to consume, 8-11 the zero run, bits 16-31 the
 * coefficient (signed); or, with bit 12, a code with no extra bits (end of block, or sixteen
 * zeros when the run is 15); with bit 14, a code whose extra bits reach past the look-up
 * (bits 0-7 the code's length, 16-19 the extra bits' count); with bit 13, a code longer than
 * the look-up (decoded the slow way). */
#define SL__HUFF_AC_ZERO 0x1000
#define SL__HUFF_AC_SLOW 0x2000
#define SL__HUFF_AC_BITS 0x4000

/* Natural order of the zigzag index, with sixteen extra entries as libjpeg's
 * jpeg_natural_order has, for a corrupt run that goes past 63 (jutils.c). */
#define SL__HUFF_NATURAL                                                                           \
    {                                                                                              \
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,    \
            27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37,  \
            44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63, 63, 63, 63,    \
            63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63                                     \
    }
SL__HUFF_UNUSED static const uint8_t sl__huff_natural[64 + 16] = SL__HUFF_NATURAL;
#if defined(__CUDACC__)
static __device__ const uint8_t sl__huff_natural_dev[64 + 16] = SL__HUFF_NATURAL;
#endif

/* s extra bits r to a coefficient (jdhuff.h's HUFF_EXTEND). */
SL__HUFF_FN int sl__huff_extend(int r, int s)
{
    return r < (1 << (s - 1)) ? r - (1 << s) + 1 : r;
}

SL__HUFF_FN uint64_t sl__huff_bswap64(uint64_t w)
{
#if defined(__CUDA_ARCH__)
    uint32_t lo = (uint32_t)w, hi = (uint32_t)(w >> 32);
    return (uint64_t)__byte_perm(lo, 0, 0x0123) << 32 | __byte_perm(hi, 0, 0x0123);
#else
    return __builtin_bswap64(w);
#endif
}

/* Byte by byte, as libjpeg's jpeg_fill_bit_buffer: 0xFF then 0x00 is a data 0xFF; 0xFF, any
 * number of 0xFF fill bytes, then anything else is a marker, where the data stops; so does the
 * buffer's end, also inside the fill bytes (where libjpeg, asking for more, warns of a
 * premature end). Past either, acc is zero.
 * Fill bytes before a stuffed zero (0xFF 0xFF .. 0x00) are data to jpeg_fill_bit_buffer but a
 * marker to libjpeg-turbo's decode_mcu_fast, which then pads with zeros to the end of the MCU
 * and hands the MCU to decode_mcu_slow without clearing the coefficients it wrote: the slow
 * decode writes only its nonzero ones over them, so libjpeg's MCU mixes both decodes. No
 * encoder writes fill bytes inside a scan; this decoder gives up there (stop 3), and libjpeg's
 * result stands. */
SL__HUFF_OUTLINE void sl__huff_refill_slow(sl__huff_bits *h)
{
    while (h->n <= 56 && !h->stop) {
        if (h->p >= h->end) {
            h->stop = 2;
            break;
        }
        unsigned b = h->p[0];
        if (b == 0xFF) {
            const uint8_t *q = h->p + 1;
            while (q < h->end && *q == 0xFF)
                q++;
            if (q >= h->end) {
                h->stop = 2;
                break;
            }
            if (*q != 0) {
                h->stop = 1; /* p stays at the marker */
                break;
            }
            if (q != h->p + 1) {
                h->stop = h->fill_ends ? 1 : 3;
                break;
            }
            h->p = q + 1;
            h->stuffed++;
        } else {
            h->p++;
        }
        h->acc |= (uint64_t)b << (56 - h->n);
        h->n += 8;
    }
    if (h->stop)
        h->acc &= h->n <= 0 ? 0 : ~(uint64_t)0 << (64 - h->n);
}

/* At least 57 bits in acc (data, or padding past a marker or the end). Eight bytes at once
 * where none of them is 0xFF (the branchless refill: the bytes of a partly counted one are
 * ORed again, to the same place, by the next refill). */
SL__HUFF_FN void sl__huff_refill(sl__huff_bits *h)
{
    if (h->end - h->p >= 8 && !h->stop) {
        uint64_t w;
        memcpy(&w, h->p, 8);
        uint64_t x = ~w; /* a zero byte of x is a 0xFF of w */
        if (((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) == 0) {
            h->acc |= sl__huff_bswap64(w) >> h->n;
            h->p += (63 - h->n) >> 3;
            h->n |= 56;
            return;
        }
    }
    sl__huff_refill_slow(h);
}

/* A symbol the look-up does not hold: a code of FAST+1 .. 16 bits (jdhuff.c's
 * jpeg_huff_decode). Returns the symbol, with *len its length; -1 for no code of 16 bits or
 * less (libjpeg: "corrupt JPEG data: bad Huffman code"). */
SL__HUFF_FN int sl__huff_slow_symbol(const sl__huff_codes *t, uint64_t acc, int *len, int from)
{
    for (int l = from; l <= 16; l++) {
        int32_t code = (int32_t)(acc >> (64 - l));
        if (code <= t->maxcode[l]) {
            *len = l;
            return t->val[(t->valoff[l] + code) & 255];
        }
    }
    return -1;
}

SL__HUFF_FN int sl__huff_dc_symbol(const sl__huff_dc *t, uint64_t acc, int *len)
{
    int e = t->look[acc >> (64 - SL__HUFF_DC_FAST)];
    if (e) {
        *len = e >> 8;
        return e & 255;
    }
    return sl__huff_slow_symbol(&t->codes, acc, len, SL__HUFF_DC_FAST + 1);
}

/* A restart marker due before this MCU (jdhuff.c's process_restart): the bits left in the
 * buffer are dropped and the next bytes must be the expected RSTn. Call before each MCU;
 * returns SL__HUFF_OK or SL__HUFF_GIVE_UP. */
SL__HUFF_FN int sl__huff_core_restart(sl__huff_bits *h)
{
    if (!h->restart_interval)
        return SL__HUFF_OK;
    if (h->restarts_to_go == 0) {
        if (h->end - h->p < 2 || h->p[0] != 0xFF || h->p[1] != 0xD0 + h->next_restart)
            return SL__HUFF_GIVE_UP; /* libjpeg resynchronises (and warns), or tolerates junk */
        h->p += 2;
        h->acc = 0;
        h->n = 0;
        h->stop = 0;
        for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++)
            h->last_dc[ci] = 0;
        h->next_restart = (h->next_restart + 1) & 7;
        h->restarts_to_go = h->restart_interval;
    }
    h->restarts_to_go--;
    return SL__HUFF_OK;
}

/* The bit reader's state in locals: acc, n, then p and stop through h (the refills). */
#define SL__HUFF_CONSUME(k)                                                                        \
    do {                                                                                           \
        acc <<= (k);                                                                               \
        n -= (k);                                                                                  \
    } while (0)
#define SL__HUFF_ENSURE32()                                                                        \
    do {                                                                                           \
        if (n < 32) {                                                                              \
            h->acc = acc;                                                                          \
            h->n = n;                                                                              \
            sl__huff_refill(h);                                                                    \
            acc = h->acc;                                                                          \
            n = h->n;                                                                              \
        }                                                                                          \
    } while (0)

/* Block b of the MCU, with the tables dcs / acs (indexed by h->dc_of / ac_of): its
 * coefficients into blk (natural order; only the nonzero ones written) when `store` (a constant
 * at each call: the compiler makes a storing and a skipping copy), else only the bits consumed
 * and the DC prediction kept. Returns SL__HUFF_OK or SL__HUFF_GIVE_UP. */
SL__HUFF_FN int sl__huff_core_block(sl__huff_bits *h, const sl__huff_dc *dcs,
                                    const sl__huff_ac *acs, int b, int16_t *blk, const int store)
{
#if defined(__CUDA_ARCH__)
    const uint8_t *natural = sl__huff_natural_dev;
#else
    const uint8_t *natural = sl__huff_natural;
#endif
    const sl__huff_dc *dc = dcs + h->dc_of[b];
    const sl__huff_ac *ac = acs + h->ac_of[b];
    uint64_t acc = h->acc;
    int n = h->n;
    SL__HUFF_ENSURE32();
    int len, s = sl__huff_dc_symbol(dc, acc, &len);
    if (s < 0)
        return SL__HUFF_GIVE_UP;
    SL__HUFF_CONSUME(len);
    int diff = 0;
    if (s) { /* s <= 15 (build): len + s <= 31 bits, within the 32 ensured */
        diff = sl__huff_extend((int)(acc >> (64 - s)), s);
        SL__HUFF_CONSUME(s);
    }
    int dcv = h->last_dc[h->comp_of[b]] + diff;
    if (dcv < -32768 || dcv > 32767) /* libjpeg lets it grow; no real file does */
        return SL__HUFF_GIVE_UP;
    h->last_dc[h->comp_of[b]] = dcv;
    if (store)
        blk[0] = (int16_t)dcv;
    const int32_t *fast = ac->ac;
    for (int k = 1; k < 64; k++) {
        SL__HUFF_ENSURE32();
        int32_t e = fast[acc >> (64 - SL__HUFF_FAST)];
        if (SL__HUFF_LIKELY(!(e & (SL__HUFF_AC_ZERO | SL__HUFF_AC_SLOW | SL__HUFF_AC_BITS)))) {
            k += (e >> 8) & 15;
            SL__HUFF_CONSUME(e & 63);
            if (store)
                blk[natural[k]] = (int16_t)(e >> 16);
            continue;
        }
        if (e & SL__HUFF_AC_ZERO) {
            SL__HUFF_CONSUME(e & 63);
            if (((e >> 8) & 15) != 15)
                break;
            k += 15;
            continue;
        }
        int r;
        if (e & SL__HUFF_AC_BITS) {
            SL__HUFF_CONSUME(e & 63);
            r = (e >> 8) & 15;
            s = e >> 16;
        } else {
            int sym = sl__huff_slow_symbol(&ac->codes, acc, &len, SL__HUFF_FAST + 1);
            if (sym < 0)
                return SL__HUFF_GIVE_UP;
            SL__HUFF_CONSUME(len);
            r = sym >> 4;
            s = sym & 15;
            if (s == 0) {
                if (r != 15)
                    break;
                k += 15;
                continue;
            }
        }
        k += r; /* len + s <= 31 */
        int v = sl__huff_extend((int)(acc >> (64 - s)), s);
        SL__HUFF_CONSUME(s);
        if (store)
            blk[natural[k]] = (int16_t)v;
    }
    h->acc = acc;
    h->n = n;
    /* n < 0: bits past the data were read */
    return n < 0 || h->stop == 3 ? SL__HUFF_GIVE_UP : SL__HUFF_OK;
}

#undef SL__HUFF_CONSUME
#undef SL__HUFF_ENSURE32

/* Whether libjpeg's reader, which may read on from q (see sl__huff_core_finish), cannot reach
 * the data's end (at end): SL__HUFF_OK where, within 24 bytes of q, a marker comes first or
 * none of the following does, else SL__HUFF_GIVE_UP: the data ends; a run of 0xFF fill bytes
 * goes on to the end; or fill bytes come before a stuffed zero (0xFF 0xFF .. 0x00, which
 * libjpeg reads as one data byte however long it is, so that its reader may go on far past
 * the 24 bytes; jpeg_huff.c gives up on meeting them as well). Nothing past that marker is
 * looked at. */
SL__HUFF_FN int sl__huff_tail(const uint8_t *q, const uint8_t *end)
{
    for (int left = 24; left > 0 && q < end; left--) {
        if (*q++ != 0xFF)
            continue;
        const uint8_t *after = q; /* the byte after the first 0xFF */
        while (q < end && *q == 0xFF)
            q++;
        if (q >= end)
            return SL__HUFF_GIVE_UP; /* fill bytes to the end */
        if (*q != 0)
            return SL__HUFF_OK; /* a marker: libjpeg reads no further */
        if (q != after)
            return SL__HUFF_GIVE_UP; /* fill bytes before a stuffed zero */
        q++;                         /* a stuffed zero: 0xFF 0x00, a data byte */
        left--;
    }
    return q < end ? SL__HUFF_OK : SL__HUFF_GIVE_UP; /* the data ends, no marker */
}

/* After the last MCU wanted: SL__HUFF_OK when everything read so far is what libjpeg would
 * have accepted, else SL__HUFF_GIVE_UP.
 * Where this reader stopped short of a marker (stop 0), libjpeg's may have read further: it
 * fills its buffer when it runs short, up to 8 data bytes past the bits decoded (16 bytes with
 * stuffed zeros) where this one refills at 4, and on a 0xFF it reads every fill byte after it
 * looking for the marker's code; it stops at a marker. So it may reach the data's end (asking
 * its source for more, which warns of a premature end) when, within 24 bytes of this reader
 * and before any marker, the data ends or a run of 0xFF begins that goes on to the end or to
 * a stuffed zero (sl__huff_tail; found by the hybrid fuzz target: junk, then fill bytes to the
 * end of the file; then by a review: fill bytes, then a stuffed zero at the end). Without such
 * runs the 8 data bytes are at most 16 raw bytes, within the 24 looked at. Nothing past the
 * first marker is looked at, so the data may end right after it (jpeg.c's job data). */
SL__HUFF_FN int sl__huff_core_finish(const sl__huff_bits *h)
{
    if (h->n < 0 || h->stop >= 2)
        return SL__HUFF_GIVE_UP;
    return h->stop != 0 ? SL__HUFF_OK : sl__huff_tail(h->p, h->end);
}

#endif
