#!/usr/bin/python3
"""examples/ssd_training.py: the SSD (MLPerf single-stage detector) training input pipeline.

    PYTHONPATH=build/python /usr/bin/python3 examples/ssd_training.py DATA
        [--batch-size 8] [--size 300] [--steps 4] [--threads 2] [--seed 0]

DATA is a COCO-format data set (DATA/images/*.jpg and DATA/instances.json; make a small one
with tests/data/make_coco.py DATA). Per sample:

    readers.coco (ltrb, ratio boxes)  -> decoders.image (RGB)
    random_bbox_crop (SSD's IoU thresholds) -> slice (the image to the window)
    resize (size x size) -> flip + bb_flip (the same coin) -> crop_mirror_normalize (CHW float)
    box_encoder (SSD300's 8732 anchors, offsets with stds 0.1 / 0.2)

and prints, per step, the batch's shapes and how many anchors were matched to an object.
ssd_pipeline(..., intermediates=True) also returns every stage's boxes (the test
tests/python/test_ssd_example.py checks each transformation against NumPy).
"""
import argparse
import itertools
import math
import pathlib

import numpy as np

from sluice import fn, pipeline_def, types

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def ssd300_anchors():
    """SSD300's default boxes for COCO, [l, t, r, b] in [0, 1], as a flat list (8732 x 4)."""
    fig, feat, steps = 300, [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300]
    scales = [21, 45, 99, 153, 207, 261, 315]
    ratios = [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    boxes = []
    for idx, sfeat in enumerate(feat):
        sk1, sk2 = scales[idx] / fig, scales[idx + 1] / fig
        sizes = [(sk1, sk1), (math.sqrt(sk1 * sk2),) * 2]
        for r in ratios[idx]:
            w, h = sk1 * math.sqrt(r), sk1 / math.sqrt(r)
            sizes += [(w, h), (h, w)]
        fk = fig / steps[idx]
        for w, h in sizes:
            for i, j in itertools.product(range(sfeat), repeat=2):
                boxes.append(((j + 0.5) / fk, (i + 0.5) / fk, w, h))
    c = np.clip(np.array(boxes), 0, 1)
    ltrb = np.stack([c[:, 0] - c[:, 2] / 2, c[:, 1] - c[:, 3] / 2,
                     c[:, 0] + c[:, 2] / 2, c[:, 1] + c[:, 3] / 2], 1)
    return ltrb.astype(np.float32).ravel().tolist()


@pipeline_def
def ssd_pipeline(data, size=300, intermediates=False):
    data = pathlib.Path(data)
    jpegs, boxes, labels = fn.readers.coco(
        file_root=str(data / "images"), annotations_file=str(data / "instances.json"),
        ltrb=True, ratio=True, skip_empty=True, random_shuffle=True, name="reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    anchor, shape, crop_boxes, crop_labels = fn.random_bbox_crop(
        boxes, labels, aspect_ratio=[0.5, 2.0], thresholds=[0, 0.1, 0.3, 0.5, 0.7, 0.9],
        scaling=[0.3, 1.0], bbox_layout="xyXY", allow_no_crop=True, num_attempts=50)
    cropped = fn.slice(images, anchor, shape, out_of_bounds_policy="trim_to_shape")
    resized = fn.resize(cropped, resize_x=size, resize_y=size)
    flip = fn.random.coin_flip(probability=0.5)
    flipped = fn.flip(resized, horizontal=flip)
    flip_boxes = fn.bb_flip(crop_boxes, ltrb=True, horizontal=flip)
    chw = fn.crop_mirror_normalize(flipped, mean=MEAN, std=STD, dtype=types.FLOAT,
                                   output_layout="CHW")
    enc_boxes, enc_labels = fn.box_encoder(flip_boxes, crop_labels, anchors=ssd300_anchors(),
                                           offset=True, scale=size, stds=[0.1, 0.1, 0.2, 0.2])
    if intermediates:
        return (chw, enc_boxes, enc_labels, boxes, labels, anchor, shape, crop_boxes,
                crop_labels, flip, flip_boxes, images, cropped)
    return chw, enc_boxes, enc_labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--size", type=int, default=300)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    o = ap.parse_args()
    pipe = ssd_pipeline(o.data, o.size, batch_size=o.batch_size, num_threads=o.threads,
                        seed=o.seed)
    for step in range(o.steps):
        images, boxes, labels = pipe.run()
        x = images.as_array()
        lab = labels.as_array()
        print(f"step {step}: images {tuple(x.shape)} {x.dtype}, boxes "
              f"{tuple(boxes.as_array().shape)}, labels {tuple(lab.shape)}, "
              f"{int((lab > 0).sum())} anchors matched")


if __name__ == "__main__":
    main()
