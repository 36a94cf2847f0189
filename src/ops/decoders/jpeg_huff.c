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

#define AC_ZERO SL__HUFF_AC_ZERO
#define AC_SLOW SL__HUFF_AC_SLOW
#define AC_BITS SL__HUFF_AC_BITS

#define DC_FAST SL__HUFF_DC_FAST
#define extend sl__huff_extend

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
    for (int ci = 0; ci < SL__HUFF_MAX_COMPS; ci++) /* all: a device job copies them */
        h->b.last_dc[ci] = 0;
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
        h->b.last_dc[ci] = 0;
    }
    h->b.blocks = c->blocks_in_MCU;
    for (int b = 0; b < c->blocks_in_MCU; b++) {
        int ci = c->MCU_membership[b];
        if (ci < 0 || ci >= c->comps_in_scan)
            return SL__HUFF_GIVE_UP;
        h->b.comp_of[b] = (uint8_t)ci;
        h->b.dc_of[b] = (uint8_t)c->cur_comp_info[ci]->dc_tbl_no;
        h->b.ac_of[b] = (uint8_t)c->cur_comp_info[ci]->ac_tbl_no;
    }
    h->b.acc = 0;
    h->b.n = 0;
    h->b.stop = 0;
    h->b.stuffed = 0;
    h->b.fill_ends = 0;
    h->b.p = c->src->next_input_byte;
    h->b.end = h->b.p + c->src->bytes_in_buffer;
    h->b.restart_interval = (int)c->restart_interval;
    h->b.restarts_to_go = h->b.restart_interval;
    h->b.next_restart = 0;
    return SL__HUFF_OK;
}

/* The decoding itself is jpeg_huff_core.h's, shared with the device (hybrid.cu). */
int sl__huff_mcu(sl__huff *h, JBLOCKROW *mcu)
{
    if (sl__huff_core_restart(&h->b) != SL__HUFF_OK)
        return SL__HUFF_GIVE_UP;
    if (mcu) {
        for (int b = 0; b < h->b.blocks; b++)
            if (sl__huff_core_block(&h->b, h->dc, h->ac, b, mcu[b][0], 1) != SL__HUFF_OK)
                return SL__HUFF_GIVE_UP;
    } else {
        for (int b = 0; b < h->b.blocks; b++)
            if (sl__huff_core_block(&h->b, h->dc, h->ac, b, NULL, 0) != SL__HUFF_OK)
                return SL__HUFF_GIVE_UP;
    }
    return SL__HUFF_OK;
}

int sl__huff_finish(const sl__huff *h)
{
    return sl__huff_core_finish(&h->b);
}
