/* src/ops/decoders/jpeg_huff.c: the hybrid JPEG decoder's own Huffman decoder (jpeg_huff.h).
 *
 * Exports sl__huff_init, sl__huff_mcu and sl__huff_finish. Invariant: h->n counts the bits of
 * h->acc that came from the data (left-aligned); below them acc holds either the next data bits
 * (a refill loaded more bytes than it counted: the next refill ORs the same bits there again)
 * or zeros (after a marker or the data's end, as libjpeg pads). A decode that consumes more
 * than h->n bits drives n negative, which sl__huff_mcu and sl__huff_finish report as
 * SL__HUFF_GIVE_UP: those bits were libjpeg's padding, and libjpeg would have warned.
 */
#include "ops/decoders/jpeg_huff.h"

#include <string.h>

/* An entry of sl__huff_ac.ac: bits 0-7 the bits to consume, 8-11 the zero run, bits 16-31 the
 * coefficient (signed); or, with bit 12, a code with no extra bits (end of block, or sixteen
 * zeros when the run is 15); with bit 14, a code whose extra bits reach past the look-up
 * (bits 0-7 the code's length, 16-19 the extra bits' count); with bit 13, a code longer than
 * the look-up (decoded the slow way). */
#define AC_ZERO 0x1000
#define AC_SLOW 0x2000
#define AC_BITS 0x4000

#define DC_FAST SL__HUFF_DC_FAST

/* Natural order of the zigzag index, with sixteen extra entries as libjpeg's
 * jpeg_natural_order has, for a corrupt run that goes past 63 (jutils.c). */
static const uint8_t natural[64 + 16] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33,
    40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36,
    29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
    47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

/* s extra bits r to a coefficient (jdhuff.h's HUFF_EXTEND). */
static inline int extend(int r, int s)
{
    return r < (1 << (s - 1)) ? r - (1 << s) + 1 : r;
}

/* Builds the DC table dc or the AC table ac (the other NULL) from libjpeg's table as
 * jpeg_make_d_derived_tbl does; 0, or -1 for a table libjpeg would refuse (it refused it
 * already when the scan started; checked again for safety). */
static int build(sl__huff_dc *dc, sl__huff_ac *ac, const JHUFF_TBL *src)
{
    sl__huff_codes *t = dc ? &dc->codes : &ac->codes;
    if (src == NULL)
        return -1;
    uint8_t size[257];
    uint32_t code[257];
    int p = 0;
    for (int l = 1; l <= 16; l++) {
        int i = src->bits[l];
        if (i < 0 || p + i > 256)
            return -1;
        while (i--)
            size[p++] = (uint8_t)l;
    }
    int total = p;
    uint32_t c = 0;
    int si = total ? size[0] : 0;
    for (p = 0; p < total;) {
        while (p < total && size[p] == si)
            code[p++] = c++;
        if (c >= (1u << si)) /* libjpeg's check (JERR_BAD_HUFF_TABLE) */
            return -1;
        c <<= 1;
        si++;
    }
    p = 0;
    for (int l = 1; l <= 16; l++) {
        if (src->bits[l]) {
            t->valoff[l] = p - (int32_t)code[p];
            p += src->bits[l];
            t->maxcode[l] = (int32_t)code[p - 1];
        } else {
            t->maxcode[l] = -1;
        }
    }
    t->maxcode[17] = INT32_MAX; /* stops the slow search */
    for (int i = 0; i < total; i++) {
        t->val[i] = src->huffval[i];
        if (dc && src->huffval[i] > 15)
            return -1;
    }
    if (dc) { /* the DC look-up: codes of up to DC_FAST bits */
        memset(dc->look, 0, sizeof dc->look);
        for (int i = 0; i < total && size[i] <= DC_FAST; i++) {
            int shift = DC_FAST - size[i];
            for (uint32_t k = 0; k < (1u << shift); k++)
                dc->look[(code[i] << shift) | k] = (uint16_t)(size[i] << 8 | src->huffval[i]);
        }
        return 0;
    }
    for (int i = 0; i < (1 << SL__HUFF_FAST); i++)
        ac->ac[i] = AC_SLOW; /* a code longer than the look-up */
    for (int i = 0; i < total && size[i] <= SL__HUFF_FAST; i++) {
        int len = size[i], run = src->huffval[i] >> 4, s = src->huffval[i] & 15;
        int shift = SL__HUFF_FAST - len;
        int32_t *e = ac->ac + (code[i] << shift);
        if (s == 0 || len + s > SL__HUFF_FAST) {
            int32_t v = s == 0 ? AC_ZERO | run << 8 | len : AC_BITS | s << 16 | run << 8 | len;
            for (int k = 0; k < (1 << shift); k++)
                e[k] = v;
            continue;
        }
        int rest = shift - s; /* the entries of extra bits r: 1 << rest of them */
        for (int r = 0; r < (1 << s); r++) {
            int32_t v = (int32_t)((uint32_t)extend(r, s) << 16) | run << 8 | (len + s);
            for (int k = 0; k < (1 << rest); k++)
                e[(r << rest) + k] = v;
        }
    }
    return 0;
}

int sl__huff_init(sl__huff *h, const struct jpeg_decompress_struct *c)
{
    if (c->arith_code || c->progressive_mode || c->Ss != 0 || c->Se != DCTSIZE2 - 1 || c->Ah != 0 ||
        c->Al != 0 || c->comps_in_scan < 1 || c->comps_in_scan > MAX_COMPS_IN_SCAN ||
        c->blocks_in_MCU < 1 || c->blocks_in_MCU > D_MAX_BLOCKS_IN_MCU || c->src == NULL ||
        c->unread_marker != 0)
        return SL__HUFF_GIVE_UP;
    int built[2 * NUM_HUFF_TBLS] = {0};
    for (int ci = 0; ci < c->comps_in_scan; ci++) {
        const jpeg_component_info *cp = c->cur_comp_info[ci];
        int d = cp->dc_tbl_no, a = cp->ac_tbl_no;
        if (d < 0 || d >= NUM_HUFF_TBLS || a < 0 || a >= NUM_HUFF_TBLS)
            return SL__HUFF_GIVE_UP;
        if (!built[d] && build(&h->dc[d], NULL, c->dc_huff_tbl_ptrs[d]) != 0)
            return SL__HUFF_GIVE_UP;
        if (!built[NUM_HUFF_TBLS + a] && build(NULL, &h->ac[a], c->ac_huff_tbl_ptrs[a]) != 0)
            return SL__HUFF_GIVE_UP;
        built[d] = built[NUM_HUFF_TBLS + a] = 1;
        h->last_dc[ci] = 0;
    }
    h->blocks = c->blocks_in_MCU;
    for (int b = 0; b < c->blocks_in_MCU; b++) {
        int ci = c->MCU_membership[b];
        if (ci < 0 || ci >= c->comps_in_scan)
            return SL__HUFF_GIVE_UP;
        h->comp_of[b] = ci;
        h->dc_of[b] = &h->dc[c->cur_comp_info[ci]->dc_tbl_no];
        h->ac_of[b] = &h->ac[c->cur_comp_info[ci]->ac_tbl_no];
    }
    h->acc = 0;
    h->n = 0;
    h->stop = 0;
    h->p = c->src->next_input_byte;
    h->end = h->p + c->src->bytes_in_buffer;
    h->restart_interval = (int)c->restart_interval;
    h->restarts_to_go = h->restart_interval;
    h->next_restart = 0;
    return SL__HUFF_OK;
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
static void refill_slow(sl__huff *h)
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
                h->stop = 3;
                break;
            }
            h->p = q + 1;
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
static inline void refill(sl__huff *h)
{
    if (h->end - h->p >= 8 && !h->stop) {
        uint64_t w;
        memcpy(&w, h->p, 8);
        uint64_t x = ~w; /* a zero byte of x is a 0xFF of w */
        if (((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) == 0) {
            h->acc |= __builtin_bswap64(w) >> h->n;
            h->p += (63 - h->n) >> 3;
            h->n |= 56;
            return;
        }
    }
    refill_slow(h);
}

/* A symbol the look-up does not hold: a code of FAST+1 .. 16 bits (jdhuff.c's
 * jpeg_huff_decode). Returns the symbol, with *len its length; -1 for no code of 16 bits or
 * less (libjpeg: "corrupt JPEG data: bad Huffman code"). */
static int slow_symbol(const sl__huff_codes *t, uint64_t acc, int *len, int from)
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

static inline int dc_symbol(const sl__huff_dc *t, uint64_t acc, int *len)
{
    int e = t->look[acc >> (64 - DC_FAST)];
    if (e) {
        *len = e >> 8;
        return e & 255;
    }
    return slow_symbol(&t->codes, acc, len, DC_FAST + 1);
}

/* The bit reader's state in locals: acc, n, then p and stop through h (the refills). */
#define CONSUME(k)                                                                                 \
    do {                                                                                           \
        acc <<= (k);                                                                               \
        n -= (k);                                                                                  \
    } while (0)
#define ENSURE32()                                                                                 \
    do {                                                                                           \
        if (n < 32) {                                                                              \
            h->acc = acc;                                                                          \
            h->n = n;                                                                              \
            refill(h);                                                                             \
            acc = h->acc;                                                                          \
            n = h->n;                                                                              \
        }                                                                                          \
    } while (0)

/* A restart marker due before this MCU (jdhuff.c's process_restart): the bits left in the
 * buffer are dropped and the next bytes must be the expected RSTn. */
static int restart(sl__huff *h)
{
    if (h->end - h->p < 2 || h->p[0] != 0xFF || h->p[1] != 0xD0 + h->next_restart)
        return SL__HUFF_GIVE_UP; /* libjpeg resynchronises (and warns), or tolerates junk */
    h->p += 2;
    h->acc = 0;
    h->n = 0;
    h->stop = 0;
    for (int ci = 0; ci < MAX_COMPS_IN_SCAN; ci++)
        h->last_dc[ci] = 0;
    h->next_restart = (h->next_restart + 1) & 7;
    h->restarts_to_go = h->restart_interval;
    return SL__HUFF_OK;
}

/* One block: its coefficients into blk when `store` (a constant at each call: the compiler
 * makes a storing and a skipping copy), else only the bits consumed and the DC prediction
 * kept. Returns SL__HUFF_OK or SL__HUFF_GIVE_UP. */
static inline __attribute__((always_inline)) int block(sl__huff *h, int b, JCOEF *blk,
                                                       const int store)
{
    const sl__huff_dc *dc = h->dc_of[b];
    const sl__huff_ac *ac = h->ac_of[b];
    uint64_t acc = h->acc;
    int n = h->n;
    ENSURE32();
    int len, s = dc_symbol(dc, acc, &len);
    if (s < 0)
        return SL__HUFF_GIVE_UP;
    CONSUME(len);
    int diff = 0;
    if (s) { /* s <= 15 (build): len + s <= 31 bits, within the 32 ensured */
        diff = extend((int)(acc >> (64 - s)), s);
        CONSUME(s);
    }
    int dcv = h->last_dc[h->comp_of[b]] + diff;
    if (dcv < -32768 || dcv > 32767) /* libjpeg lets it grow; no real file does */
        return SL__HUFF_GIVE_UP;
    h->last_dc[h->comp_of[b]] = dcv;
    if (store)
        blk[0] = (JCOEF)dcv;
    const int32_t *fast = ac->ac;
    for (int k = 1; k < DCTSIZE2; k++) {
        ENSURE32();
        int32_t e = fast[acc >> (64 - SL__HUFF_FAST)];
        if (__builtin_expect(!(e & (AC_ZERO | AC_SLOW | AC_BITS)), 1)) {
            k += (e >> 8) & 15;
            CONSUME(e & 63);
            if (store)
                blk[natural[k]] = (JCOEF)(e >> 16);
            continue;
        }
        if (e & AC_ZERO) {
            CONSUME(e & 63);
            if (((e >> 8) & 15) != 15)
                break;
            k += 15;
            continue;
        }
        int r;
        if (e & AC_BITS) {
            CONSUME(e & 63);
            r = (e >> 8) & 15;
            s = e >> 16;
        } else {
            int sym = slow_symbol(&ac->codes, acc, &len, SL__HUFF_FAST + 1);
            if (sym < 0)
                return SL__HUFF_GIVE_UP;
            CONSUME(len);
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
        int v = extend((int)(acc >> (64 - s)), s);
        CONSUME(s);
        if (store)
            blk[natural[k]] = (JCOEF)v;
    }
    h->acc = acc;
    h->n = n;
    /* n < 0: bits past the data were read */
    return n < 0 || h->stop == 3 ? SL__HUFF_GIVE_UP : SL__HUFF_OK;
}

int sl__huff_mcu(sl__huff *h, JBLOCKROW *mcu)
{
    if (h->restart_interval) {
        if (h->restarts_to_go == 0 && restart(h) != SL__HUFF_OK)
            return SL__HUFF_GIVE_UP;
        h->restarts_to_go--;
    }
    if (mcu) {
        for (int b = 0; b < h->blocks; b++)
            if (block(h, b, mcu[b][0], 1) != SL__HUFF_OK)
                return SL__HUFF_GIVE_UP;
    } else {
        for (int b = 0; b < h->blocks; b++)
            if (block(h, b, NULL, 0) != SL__HUFF_OK)
                return SL__HUFF_GIVE_UP;
    }
    return SL__HUFF_OK;
}

int sl__huff_finish(const sl__huff *h)
{
    if (h->n < 0 || h->stop >= 2)
        return SL__HUFF_GIVE_UP;
    /* libjpeg fills its buffer ahead by up to 8 bytes: if the data ends (with no marker) that
     * close, it would ask its source for more and warn of a premature end */
    if (h->stop == 0 && h->end - h->p < 16)
        return SL__HUFF_GIVE_UP;
    return SL__HUFF_OK;
}
