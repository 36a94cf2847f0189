#!/usr/bin/python3
"""examples/ddp_train.py: data-parallel training on CPUs (torch DistributedDataParallel, gloo),
each process fed by its own sluice pipeline reading its own shard of the data set.

    torchrun --nproc_per_node=4 examples/ddp_train.py DATA_DIR [--steps 5] [--batch-size 8]
    mpirun -np 4 /usr/bin/python3 examples/ddp_train.py DATA_DIR
    srun -n 4 /usr/bin/python3 examples/ddp_train.py DATA_DIR

(Debian's torch 1.13 on Python 3.11: `python3 -m torch.distributed.run --redirects 1 --tee 1
--nproc_per_node=4 ...`, which shows the ranks' stdout; its default log handling fails, and so
do some other --redirects/--tee pairs.) With PYTHONPATH=build/python in a
build tree. DATA_DIR is a class-per-folder tree of JPEGs (bench/make_dataset.py's output, an
ImageNet train folder).

Nothing here names a rank: the reader takes shard_id="auto" and num_shards="auto", which the
pipeline resolves from the launcher (sluice.distributed: torchrun's RANK/WORLD_SIZE, Open MPI's
OMPI_COMM_WORLD_*, MPICH's PMI_*, SLURM's SLURM_*; or the initialised process group), so the
ranks read disjoint shards covering each epoch; pad_last_batch and the iterator's reader_name
give every rank the same number of steps, which DDP's collective calls need. The process group
is set up from the same answer (MASTER_ADDR/MASTER_PORT default to this machine, for mpirun and
srun, which do not set them). On GPUs, Pipeline(device_id="auto") picks the local rank's device.

Prints, on rank 0, each step's loss averaged over the ranks, then whether the model's
parameters are identical on every rank (DDP keeps them so) and how many images each rank read.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

import sluice
from sluice import fn, pipeline_def, types
from sluice.plugin.pytorch import LastBatchPolicy, SluiceClassificationIterator


@pipeline_def
def train_pipeline(root, size):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, pad_last_batch=True,
                                    shard_id="auto", num_shards="auto", name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.resize(images, resize_x=size, resize_y=size)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                      mean=[127.5] * 3, std=[64.0] * 3,
                                      mirror=fn.random.coin_flip(probability=0.5))
    return images, labels


def model(classes):
    return nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                         nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, classes))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    job = sluice.distributed.info()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("gloo", rank=job.rank, world_size=job.world_size)
    torch.manual_seed(0)  # the same initial model everywhere (DDP also broadcasts rank 0's)
    classes = len([d for d in os.scandir(args.data) if d.is_dir()])

    pipe = train_pipeline(args.data, args.image_size, batch_size=args.batch_size,
                          num_threads=args.threads, device_id=None, seed=1234 + job.rank)
    pipe.build()
    loader = SluiceClassificationIterator(pipe, reader_name="Reader", auto_reset=True,
                                          last_batch_policy=LastBatchPolicy.DROP)
    net = nn.parallel.DistributedDataParallel(model(classes))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    if job.rank == 0:
        meta = pipe.reader_meta("Reader")
        print(f"ddp: {job.world_size} ranks ({job.source}), {meta['epoch_size']} images, "
              f"{len(loader)} steps per epoch, batch {args.batch_size} per rank", flush=True)

    step, seen = 0, 0
    while step < args.steps:
        for batch in loader:
            x, y = batch[0]["data"], batch[0]["label"].squeeze(-1).long()
            loss = nn.functional.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += x.shape[0]
            mean_loss = loss.detach().clone()
            dist.all_reduce(mean_loss)
            if job.rank == 0:
                print(f"step {step:3d} loss {mean_loss.item() / job.world_size:.4f}", flush=True)
            step += 1
            if step == args.steps:
                break

    flat = torch.cat([p.detach().flatten() for p in net.parameters()])
    low, high = flat.clone(), flat.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    counts = [torch.zeros(1, dtype=torch.int64) for _ in range(job.world_size)]
    dist.all_gather(counts, torch.tensor([seen]))
    if job.rank == 0:
        print(f"parameters identical on all ranks: {bool(torch.equal(low, high))}")
        print(f"images read per rank: {[int(c) for c in counts]}", flush=True)
    # The DDP model goes before its process group: torch 1.13 may deadlock destroying a gloo
    # group from the model's reducer (its work thread waits for the GIL the destructor holds).
    dist.barrier()
    del opt, net
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
