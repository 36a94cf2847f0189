#!/usr/bin/python3
"""examples/train_resnet18.py: ImageNet-style training of torchvision's ResNet-18 on the CPU, fed
by a sluice pipeline through the PyTorch iterator — DALI's ResNet-50 example, on the CPU.

    PYTHONPATH=build/python /usr/bin/python3 examples/train_resnet18.py DATA_DIR
        [--val DIR] [--steps 20] [--batch-size 16] [--val-steps 10] [--image-size 224]
        [--threads N] [--lr LR] [--no-fused-crop]

DATA_DIR is a class-per-folder tree of JPEGs: bench/make_dataset.py's output (10 classes), an
ImageNet train folder, or any such tree. --val DIR is the validation tree (default DATA_DIR).

Training pipeline: readers.file (shuffled, padded last batch) -> decoders.image_random_crop
(a random window resampled to the image size in the decoder; --no-fused-crop: the window at
its own size, then resize) -> crop_mirror_normalize (random mirror, CHW float32, ImageNet
mean/std). Validation: decoders.image -> resize(resize_shorter=256) -> crop_mirror_normalize
(centre crop 224). The iterators are SluiceClassificationIterator (DALI's
DALIClassificationIterator) with reader_name, so epochs and the padded last batch are counted
from the reader: PARTIAL for validation (each image counted once).

Prints the loss and images/s of each step, then the validation accuracy. With --steps 5 and
--batch-size 16 it runs in about a minute on two CPU cores.
"""
import argparse
import os
import sys
import time

import torch
import torchvision

from sluice import fn, pipeline_def, types
from sluice.plugin.pytorch import LastBatchPolicy, SluiceClassificationIterator

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pipeline_def
def train_pipeline(root, size, fused_crop, shard_id=0, num_shards=1):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, pad_last_batch=True,
                                    shard_id=shard_id, num_shards=num_shards, name="Reader")
    if fused_crop:  # sluice extension: the window is resampled inside the decoder (DCT scaling)
        images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB, size=size,
                                               random_aspect_ratio=[0.8, 1.25],
                                               random_area=[0.1, 1.0], num_attempts=100)
    else:  # DALI's way
        images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB,
                                               random_aspect_ratio=[0.8, 1.25],
                                               random_area=[0.1, 1.0], num_attempts=100)
        images = fn.resize(images, resize_x=size, resize_y=size,
                           interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(size, size), mean=MEAN, std=STD,
                                      mirror=fn.random.coin_flip(probability=0.5))
    return images, labels


@pipeline_def
def val_pipeline(root, size):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=False, pad_last_batch=True,
                                    name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_shorter=size * 256 // 224,
                       interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      crop=(size, size), mean=MEAN, std=STD)
    return images, labels


def train(model, it, steps, lr):
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    model.train()
    step, seen, t_start = 0, 0, time.perf_counter()
    t_last = t_start
    while step < steps:
        for (batch,) in it:  # auto_reset: the next epoch starts by itself
            x = batch["data"]                      # [B, 3, H, W] float32, no copy
            y = batch["label"].squeeze(-1).long()  # [B, 1] int32 -> [B] int64
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            now = time.perf_counter()
            step, seen = step + 1, seen + x.shape[0]
            print(f"step {step:4d}  loss {loss.item():.4f}  "
                  f"{x.shape[0] / (now - t_last):7.1f} images/s", flush=True)
            t_last = now
            if step == steps:
                break
    # the first step includes the pipelines' start and the first batch
    total = time.perf_counter() - t_start
    print(f"train: {step} steps, {seen} images in {total:.1f} s: {seen / total:.1f} images/s")


def evaluate(model, it, max_steps):
    model.eval()
    correct = total = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        for k, (batch,) in enumerate(it):
            if max_steps and k == max_steps:
                break
            pred = model(batch["data"]).argmax(dim=1)
            correct += int((pred == batch["label"].squeeze(-1).long()).sum())
            total += batch["data"].shape[0]
    dt = time.perf_counter() - t0
    print(f"val: top-1 {100.0 * correct / max(total, 1):.2f}% on {total} images "
          f"({total / dt:.1f} images/s)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="class-per-folder JPEG tree for training")
    ap.add_argument("--val", help="class-per-folder JPEG tree for validation (default: data)")
    ap.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--val-steps", type=int, default=10,
                    help="validation batches; 0: the whole validation set (default 10)")
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--classes", type=int, default=10, help="model outputs (default 10)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="pipeline worker threads (default: one per CPU)")
    ap.add_argument("--no-fused-crop", action="store_true",
                    help="decode the random window at its size, then resize (DALI's way)")
    ap.add_argument("--lr", type=float, help="learning rate (default 0.1 * batch / 256)")
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    common = dict(batch_size=args.batch_size, num_threads=args.threads, device_id=None,
                  seed=args.seed)
    train_pipe = train_pipeline(args.data, args.image_size, not args.no_fused_crop, **common)
    val_pipe = val_pipeline(args.val or args.data, args.image_size, **common)
    train_it = SluiceClassificationIterator(train_pipe, reader_name="Reader", auto_reset=True,
                                            last_batch_policy=LastBatchPolicy.PARTIAL)
    print(f"train: {train_pipe.epoch_size('Reader')} images, {len(train_it)} steps per epoch, "
          f"batch {args.batch_size}, {args.image_size}x{args.image_size}")

    model = torchvision.models.resnet18(num_classes=args.classes)
    train(model, train_it, args.steps, args.lr or 0.1 * args.batch_size / 256)
    del train_it, train_pipe

    val_it = SluiceClassificationIterator(val_pipe, reader_name="Reader",
                                          last_batch_policy=LastBatchPolicy.PARTIAL)
    evaluate(model, val_it, args.val_steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
