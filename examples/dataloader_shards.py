#!/usr/bin/python3
"""examples/dataloader_shards.py: an IterableDataset of shards, written for
torch.utils.data.DataLoader, running on sluice's workers by changing one import.

    PYTHONPATH=build/python /usr/bin/python3 examples/dataloader_shards.py [SHARD_DIR]
        [--shards 8] [--per-shard 250] [--workers 2] [--batch-size 32] [--epochs 2] [--torch]

Without SHARD_DIR, --shards files of --per-shard samples each are written to a temporary
folder (NumPy .npz: a feature vector and a label per sample, the label a function of the
features). ShardStream reads the shards as PyTorch's documentation shows: each worker takes the
shards i with i % num_workers == worker id (get_worker_info()), shuffles them with its
worker seed, and streams their samples; so each epoch covers every sample exactly once. A
logistic-regression model is trained on the stream; the script prints, per epoch, the number of
samples seen, how many were distinct, the loss and the accuracy.
"""
import argparse
import os
import random
import sys
import tempfile

import numpy as np
import torch

if "--torch" in sys.argv:
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info
else:  # the only change: was torch.utils.data
    from sluice.plugin.pytorch import DataLoader, IterableDataset, get_worker_info

FEATURES = 16


def write_shards(folder, shards, per_shard, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(FEATURES)
    paths = []
    for s in range(shards):
        x = rng.standard_normal((per_shard, FEATURES)).astype(np.float32)
        y = (x @ w > 0).astype(np.int64)
        ids = np.arange(s * per_shard, (s + 1) * per_shard)
        path = os.path.join(folder, f"shard-{s:05d}.npz")
        np.savez(path, x=x, y=y, ids=ids)
        paths.append(path)
    return paths


class ShardStream(IterableDataset):
    def __init__(self, paths):
        self.paths = sorted(paths)

    def __iter__(self):
        info = get_worker_info()
        mine = self.paths if info is None else self.paths[info.id::info.num_workers]
        rng = random.Random(None if info is None else info.seed)
        mine = list(mine)
        rng.shuffle(mine)
        for path in mine:
            with np.load(path) as shard:
                x, y, ids = shard["x"], shard["y"], shard["ids"]
            for i in range(len(y)):
                yield {"x": x[i], "y": y[i], "id": int(ids[i])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shard_dir", nargs="?")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--per-shard", type=int, default=250)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--torch", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.shard_dir or tmp
        paths = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                       if f.endswith(".npz")) if args.shard_dir else \
            write_shards(tmp, args.shards, args.per_shard)
        loader = DataLoader(ShardStream(paths), batch_size=args.batch_size,
                            num_workers=args.workers, persistent_workers=args.workers > 0)
        model = torch.nn.Linear(FEATURES, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        print(f"{type(loader).__module__}.DataLoader: {len(paths)} shards, "
              f"{args.workers} workers, batch {args.batch_size}")
        for epoch in range(args.epochs):
            seen, ids, losses, correct = 0, set(), [], 0
            for batch in loader:
                logits = model(batch["x"])
                loss = torch.nn.functional.cross_entropy(logits, batch["y"])
                opt.zero_grad()
                loss.backward()
                opt.step()
                seen += len(batch["y"])
                ids.update(batch["id"].tolist())
                losses.append(loss.item())
                correct += int((logits.argmax(1) == batch["y"]).sum())
            print(f"epoch {epoch}: {seen} samples, {len(ids)} distinct, loss "
                  f"{np.mean(losses[-5:]):.3f}, accuracy {100.0 * correct / seen:.1f}%")


if __name__ == "__main__":
    main()
