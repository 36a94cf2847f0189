#!/usr/bin/python3
"""examples/dataloader_imagefolder.py: an ImageNet-style training script written for
torch.utils.data.DataLoader — torchvision's ImageFolder, PIL transforms, ResNet-18 — that runs on
sluice's workers by changing one import (the line marked below).

    PYTHONPATH=build/python /usr/bin/python3 examples/dataloader_imagefolder.py DATA_DIR
        [--steps 20] [--batch-size 16] [--image-size 224] [--workers 2] [--epochs 1]
        [--val-steps 10] [--torch]

DATA_DIR is a class-per-folder tree of images (bench/make_dataset.py's output, an ImageNet
train folder). --torch runs the same script with torch.utils.data.DataLoader, for comparison.
Prints the loss of each step, images/s, and the top-1 accuracy on --val-steps batches.
"""
import argparse
import sys
import time

import torch
import torchvision
from torchvision import transforms

if "--torch" in sys.argv:
    from torch.utils.data import DataLoader
else:
    from sluice.plugin.pytorch import DataLoader  # the only change: was torch.utils.data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--steps", type=int, default=20, help="training steps (0: whole epochs)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--val-steps", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--torch", action="store_true", help="torch.utils.data.DataLoader instead")
    args = ap.parse_args()
    torch.manual_seed(0)
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_set = torchvision.datasets.ImageFolder(args.data, transforms.Compose([
        transforms.RandomResizedCrop(args.image_size), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), normalize]))
    val_set = torchvision.datasets.ImageFolder(args.data, transforms.Compose([
        transforms.Resize(args.image_size * 8 // 7), transforms.CenterCrop(args.image_size),
        transforms.ToTensor(), normalize]))
    train = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                       num_workers=args.workers, drop_last=True,
                       persistent_workers=args.workers > 0)
    val = DataLoader(val_set, batch_size=args.batch_size, num_workers=args.workers)
    print(f"{type(train).__module__}.DataLoader: {len(train_set)} images, "
          f"{len(train_set.classes)} classes, {len(train)} steps per epoch, batch "
          f"{args.batch_size}, {args.image_size}x{args.image_size}, {args.workers} workers")

    model = torchvision.models.resnet18(num_classes=len(train_set.classes))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    step, images, t0 = 0, 0, time.perf_counter()
    model.train()
    for epoch in range(args.epochs):
        for x, y in train:
            assert x.shape == (args.batch_size, 3, args.image_size, args.image_size)
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            images += x.shape[0]
            print(f"epoch {epoch} step {step:3d} loss {loss.item():.4f}", flush=True)
            if step == args.steps:
                break
        if step == args.steps:
            break
    dt = time.perf_counter() - t0
    print(f"train: {step} steps, {images} images in {dt:.2f} s: {images / dt:.1f} images/s")

    model.eval()
    correct = seen = 0
    with torch.no_grad():
        for k, (x, y) in enumerate(val):
            if k == args.val_steps:
                break
            correct += int((model(x).argmax(1) == y).sum())
            seen += len(y)
    print(f"val: top-1 {100.0 * correct / max(seen, 1):.1f}% on {seen} images")


if __name__ == "__main__":
    main()
