"""tests/python/dist_rank.py OUT ROOT [torch]: one rank of a launcher test (test_distributed.py).

Started by a real launcher (torchrun, mpirun) once per rank. Reads ROOT — class folders of
files whose 4 bytes are the sample's id — with readers.file(shard_id="auto", num_shards="auto",
random_shuffle=True, pad_last_batch=True) through the PyTorch iterator (reader_name, PARTIAL),
for two epochs, and writes OUT/rank<r>.json: what sluice.distributed says, the reader's
metadata, and per epoch the ids read and the number of iterations. With "torch", the rank first
joins a gloo process group (torchrun's env://), which sluice.distributed then reports.
"""
import json
import os
import sys

out, root = sys.argv[1], sys.argv[2]
if sys.argv[3:] == ["torch"]:
    import torch.distributed as dist
    dist.init_process_group("gloo")

import sluice  # noqa: E402
from sluice import fn, pipeline_def  # noqa: E402
from sluice.plugin.pytorch import DALIGenericIterator, LastBatchPolicy  # noqa: E402

job = sluice.distributed.info()


# every rank a different pipeline seed: the shards must not depend on it
@pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=100 + job.rank)
def pipe():
    data, _ = fn.readers.file(file_root=root, file_filters=["*.txt"], random_shuffle=True,
                              shard_id="auto",
                              num_shards="auto", pad_last_batch=True, name="r")
    return data


p = pipe()
p.build()
it = DALIGenericIterator(p, ["data"], reader_name="r", last_batch_policy=LastBatchPolicy.PARTIAL,
                         auto_reset=True)
epochs = []
for _ in range(2):
    ids, iters = [], 0
    for batch in it:
        iters += 1
        ids += [int(bytes(row.tolist()).decode()) for row in batch[0]["data"]]
    epochs.append({"ids": ids, "iterations": iters})
result = {"job": list(job), "local_rank_env": sluice.distributed.local_rank(),
          "meta": p.reader_meta("r"), "epochs": epochs, "pid": os.getpid()}
with open(os.path.join(out, f"rank{job.rank}.json"), "w") as f:
    json.dump(result, f)
if sys.argv[3:] == ["torch"]:
    dist.barrier()
    dist.destroy_process_group()
