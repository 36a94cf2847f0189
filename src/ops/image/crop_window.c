/* ops/image/crop_window.c: torchvision's RandomResizedCrop window (see crop_window.h).
 *
 * Invariant: the returned window always lies inside the image (0 <= x, x + w <= W, and the
 * same along y), with w, h >= 1 for a non-empty image, whatever the arguments.
 */
#include <math.h>

#include "ops/image/crop_window.h"

/* Central crop with the image's aspect ratio clamped into [ratio[0], ratio[1]]. */
static void fallback(int W, int H, const double ratio[2], sl__window *out)
{
    double in_ratio = (double)W / (double)H;
    int w = W, h = H;
    if (in_ratio < ratio[0]) {
        double v = rint((double)W / ratio[0]);
        h = v < 1.0 ? 1 : v > H ? H : (int)v;
    } else if (in_ratio > ratio[1]) {
        double v = rint((double)H * ratio[1]);
        w = v < 1.0 ? 1 : v > W ? W : (int)v;
    }
    out->w = w;
    out->h = h;
    out->x = (W - w) / 2;
    out->y = (H - h) / 2;
}

bool sl__random_window(sl_rng *r, int W, int H, const double area[2], const double ratio[2],
                       int attempts, sl__window *out)
{
    if (W <= 0 || H <= 0) {
        *out = (sl__window){0, 0, W > 0 ? W : 0, H > 0 ? H : 0};
        return false;
    }
    const double total = (double)W * (double)H;
    const double lr0 = log(ratio[0]), lr1 = log(ratio[1]);
    for (int k = 0; k < attempts; k++) {
        double a = total * (area[0] + (area[1] - area[0]) * sl_rng_uniform(r));
        double q = exp(lr0 + (lr1 - lr0) * sl_rng_uniform(r));
        double w = rint(sqrt(a * q)), h = rint(sqrt(a / q));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            out->w = (int)w;
            out->h = (int)h;
            out->y = (int)sl_rng_below(r, (uint64_t)(H - out->h + 1));
            out->x = (int)sl_rng_below(r, (uint64_t)(W - out->w + 1));
            return true;
        }
    }
    fallback(W, H, ratio, out);
    return false;
}
