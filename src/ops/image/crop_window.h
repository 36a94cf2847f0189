/* ops/image/crop_window.h: random crop windows for the image family (random_resized_crop,
 * decoders.image_random_crop).
 *
 * sl__random_window follows torchvision's RandomResizedCrop.get_params:
 *   repeat `attempts` times:
 *     A = U(area[0], area[1]) * W * H                    target area
 *     r = exp(U(log ratio[0], log ratio[1]))              aspect ratio w / h, log-uniform
 *     w = round(sqrt(A * r)), h = round(sqrt(A / r))      halves to even (Python's round)
 *     if 0 < w <= W and 0 < h <= H:
 *         y = U_int[0, H - h], x = U_int[0, W - w]        accept
 *   fallback (every attempt failed): the central crop of the image's aspect ratio clamped into
 *   [ratio[0], ratio[1]]: W / H < ratio[0] -> w = W, h = round(W / ratio[0]);
 *   W / H > ratio[1] -> h = H, w = round(H * ratio[1]); else the whole image;
 *   x = (W - w) / 2, y = (H - h) / 2 (floor).
 * Uniform draws are sl_rng_uniform (53 bits), positions sl_rng_below (unbiased), in the order
 * area, ratio, (y, x) per attempt. Differences from torchvision: any number of attempts (it
 * always tries 10), uniforms in double rather than float32, and a fallback extent is at least 1
 * (torchvision can return 0 for images thinner than 1 / ratio). DALI's own generator differs
 * in its fallback (whole image clamped in aspect ratio, then shrunk to area[1]).
 */
#ifndef SLUICE_OPS_IMAGE_CROP_WINDOW_H
#define SLUICE_OPS_IMAGE_CROP_WINDOW_H

#include <stdbool.h>

#include "sluice/op.h"

/* A window of whole pixels: columns [x, x + w), rows [y, y + h). */
typedef struct sl__window {
    int x, y, w, h;
} sl__window;

/* Draws a window inside a W x H image from r (see above). area: fractions of the image area,
 * 0 < area[0] <= area[1]; ratio: w / h, 0 < ratio[0] <= ratio[1]; attempts >= 0.
 * W or H <= 0 gives the empty window {0, 0, max(W, 0), max(H, 0)}.
 * Returns: true when an attempt was accepted, false for the fallback (or an empty image).
 * Threads: reentrant (all state is in r). */
bool sl__random_window(sl_rng *r, int W, int H, const double area[2], const double ratio[2],
                       int attempts, sl__window *out);

#endif
