/* python/sluice/_sluice/lower.c: the C half of the DataLoader's lowering of torchvision's
 * ImageFolder transforms (sluice/plugin/_lower.py): one image decoded, cropped, resized and
 * flipped as Pillow + torchvision do it, with the decoders' and the resampler's own code
 * (src/ops/decoders/codec.h, src/ops/image/resample.h: one contract, no second implementation).
 *
 * Exports slpy_lower_peek (_lower_peek) and slpy_lower_crop_resize (_lower_crop_resize).
 * Invariant: _lower_crop_resize writes only its sample's 3 x H x W bytes of `out` at
 * `offset` (checked against the buffer's length), and only when it succeeds; the decode and
 * the resampling run with the GIL released, in memory allocated and freed by the call.
 */
#include <stdint.h>
#include <string.h>

#include "sluice_py.h"

#include "core/core.h"
#include "ops/decoders/codec.h"
#include "ops/image/resample.h"

/* The codec's one scratch buffer, allocated on demand and freed by the caller. */
typedef struct scratch {
    void *p;
    size_t n;
} scratch;

static void *grab(void *ctx, size_t bytes)
{
    scratch *s = ctx;
    if (s->p && s->n >= bytes)
        return s->p;
    sl__free(s->p);
    s->p = sl__aligned_alloc(bytes ? bytes : 1);
    s->n = s->p ? bytes : 0;
    return s->p;
}

/* Whether the codec's RGB output for these bytes is Pillow's convert("RGB") bit for bit
 * (codec.h): every JPEG, and PNGs of 8 bits or fewer per sample (16-bit ones are rounded where
 * Pillow truncates). A PNG's IHDR is its first chunk: the bit depth is byte 24. */
static bool exact_rgb(const uint8_t *d, size_t n, const sl__image_info *info)
{
    if (info->format == SL__FMT_JPEG)
        return true;
    return info->format == SL__FMT_PNG && n > 24 && d[24] <= 8;
}

/* _lower_peek(data) -> (width, height), or None when the bytes are not an image whose RGB
 * decode is Pillow's exactly (not JPEG/PNG, a 16-bit PNG, a malformed or oversized header). */
PyObject *slpy_lower_peek(PyObject *module, PyObject *arg)
{
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    sl__image_info info;
    char err[256];
    sl_status s = sl__image_peek(b.buf, (size_t)b.len, &info, err, sizeof err);
    bool ok = s == SL_OK && exact_rgb(b.buf, (size_t)b.len, &info);
    PyBuffer_Release(&b);
    if (!ok)
        Py_RETURN_NONE;
    return Py_BuildValue("(ii)", info.width, info.height);
}

/* One sample: decode window (x, y, w, h) (the rest of the file read too: a damaged file fails
 * whatever the window, as Pillow's whole decode does), resample it to out_h x out_w (PIL
 * BILINEAR, antialiased: Image.resize of the cropped image; identity axes copied), keep the
 * output window [wy, wy + wh) x [wx, wx + ww) of that (torchvision's CenterCrop after Resize:
 * only those pixels are computed, each as the whole resampling computes it), then write it CHW
 * at dst, mirrored left-right when flip. */
typedef struct job {
    const uint8_t *data;
    size_t size;
    sl__roi roi;
    int out_h, out_w;
    int wy, wx, wh, ww; /* the output window */
    bool flip;
    uint8_t *dst;
    char err[512];
} job;

/* h x w RGB pixels from rows `stride` bytes apart into three planes at dst. */
static void to_chw(const uint8_t *hwc, size_t stride, int h, int w, bool flip, uint8_t *dst)
{
    size_t plane = (size_t)h * (size_t)w;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = hwc + (size_t)y * stride;
        uint8_t *r = dst + (size_t)y * (size_t)w, *g = r + plane, *bl = g + plane;
        for (int x = 0; x < w; x++) {
            const uint8_t *px = row + (size_t)(flip ? w - 1 - x : x) * 3;
            r[x] = px[0];
            g[x] = px[1];
            bl[x] = px[2];
        }
    }
}

static sl_status run_job(job *j)
{
    scratch sc = {NULL, 0};
    sl__decode_mem mem = {grab, &sc, SIZE_MAX};
    const sl__roi *r = &j->roi;
    sl__resample_plan rp = {
        .y = {r->h, j->out_h, 0.0, (double)r->h, SL__FILTER_LINEAR, true},
        .x = {r->w, j->out_w, 0.0, (double)r->w, SL__FILTER_LINEAR, true},
        .c = 3,
        .in_type = SL_DTYPE_UINT8,
        .out_type = SL_DTYPE_UINT8,
    };
    sl__resample_plan_init(&rp);
    if (j->wh != j->out_h || j->ww != j->out_w)
        sl__resample_plan_window(&rp, j->wy, j->wy + j->wh, j->wx, j->wx + j->ww);
    size_t win = ((size_t)r->w * (size_t)r->h * 3 + 63) & ~(size_t)63;
    size_t out = ((size_t)j->out_w * (size_t)j->out_h * 3 + 63) & ~(size_t)63;
    uint8_t *buf = sl__aligned_alloc(win + out + rp.scratch);
    if (!buf) {
        snprintf(j->err, sizeof j->err, "out of memory for a %d x %d window", r->w, r->h);
        return SL_ENOMEM;
    }
    sl_status s = sl__image_decode(j->data, j->size, SL__COLOR_RGB, SL__DECODE_TO_END, r, buf, &mem,
                                   j->err, sizeof j->err);
    if (s == SL_OK) {
        sl__resample_run(&rp, buf, buf + win, buf + win + out);
        size_t stride = (size_t)j->out_w * 3;
        to_chw(buf + win + (size_t)j->wy * stride + (size_t)j->wx * 3, stride, j->wh, j->ww,
               j->flip, j->dst);
    }
    sl__free(sc.p);
    sl__free(buf);
    return s;
}

/* _lower_crop_resize(data, top, left, height, width, out_h, out_w, flip, out, offset[, wtop,
 * wleft, wheight, wwidth]): the sample's CHW uint8 bytes (3 x wheight x wwidth; the output
 * window defaults to the whole out_h x out_w) written into the writable buffer `out` from
 * byte `offset`. Raises ValueError for arguments outside their ranges, sluice's error class of
 * the codec's status (CorruptDataError, ...) with its message when the image cannot be
 * decoded. */
PyObject *slpy_lower_crop_resize(PyObject *module, PyObject *args)
{
    Py_buffer data, out;
    int top, left, height, width, out_h, out_w, flip, wy = 0, wx = 0, wh = -1, ww = -1;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "y*iiiiiipw*n|iiii:_lower_crop_resize", &data, &top, &left, &height,
                          &width, &out_h, &out_w, &flip, &out, &offset, &wy, &wx, &wh, &ww))
        return NULL;
    PyObject *ret = NULL;
    wh = wh < 0 ? out_h : wh;
    ww = ww < 0 ? out_w : ww;
    if (height < 1 || width < 1 || out_h < 1 || out_w < 1 || top < 0 || left < 0 || offset < 0 ||
        wy < 0 || wx < 0 || wh < 1 || ww < 1 || wy > out_h - wh || wx > out_w - ww ||
        (long long)wh * ww * 3 > (long long)(out.len - offset)) {
        PyErr_Format(PyExc_ValueError,
                     "_lower_crop_resize: window %d x %d at (%d, %d), output %d x %d, its "
                     "window %d x %d at (%d, %d) or byte %zd out of range (buffer of %zd bytes)",
                     width, height, left, top, out_w, out_h, ww, wh, wx, wy, offset, out.len);
        goto done;
    }
    job j = {.data = data.buf,
             .size = (size_t)data.len,
             .roi = {left, top, width, height, 0},
             .out_h = out_h,
             .out_w = out_w,
             .wy = wy,
             .wx = wx,
             .wh = wh,
             .ww = ww,
             .flip = flip != 0,
             .dst = (uint8_t *)out.buf + offset,
             .err = ""};
    PyThreadState *ts = PyEval_SaveThread(); /* a decode: milliseconds */
    sl_status s = run_job(&j);
    PyEval_RestoreThread(ts);
    if (s != SL_OK) {
        slpy_raise(PyModule_GetState(module), s, j.err, NULL);
        goto done;
    }
    ret = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&out);
    return ret;
}
