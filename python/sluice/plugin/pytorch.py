"""sluice.plugin.pytorch: pipelines' outputs as torch tensors, following
nvidia.dali.plugin.pytorch.

    SluiceGenericIterator(pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                          fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                          last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True)
    SluiceClassificationIterator(pipelines, ...)    output_map ["data", "label"]
    DALIGenericIterator, DALIClassificationIterator  the same classes, by DALI's names
    LastBatchPolicy, feed_ndarray, to_torch_type
    dataset_source(dataset, shuffle=True, seed=0, drop_last=False, shard_id=0, num_shards=1)
                                                     a map-style Dataset as a per-sample source
                                                     for fn.external_source(parallel=True)
    DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
               num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
               worker_init_fn=None, multiprocessing_context=None, generator=None, *,
               prefetch_factor=None, persistent_workers=False, pin_memory_device="",
               in_order=True)                        torch.utils.data.DataLoader on sluice's
                                                     workers (sluice.plugin._dataloader)
    get_worker_info()                                in a DataLoader worker: WorkerInfo(id,
                                                     num_workers, seed, dataset); in a pipeline's
                                                     parallel source worker: sluice's WorkerInfo
    Dataset, IterableDataset, TensorDataset, ConcatDataset, ChainDataset, Subset, random_split,
    Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
    BatchSampler, DistributedSampler, default_collate, default_convert, _utils
                                                     torch.utils.data's own, re-exported so that
                                                     `from torch.utils.data import ...` becomes
                                                     `from sluice.plugin.pytorch import ...`

Each step returns a list with one dict per pipeline, {name: torch.Tensor}. The tensors are the
pipeline's own output buffers (torch.from_dlpack on the TensorListCPU, or on the TensorListGPU:
a CUDA tensor on the pipeline's device_id; no copy either way); a tensor keeps
its iteration's buffers alive, whatever the iterator does next. The last batch of a PARTIAL
epoch is a narrow() view of the full batch. Epoch accounting: sluice.plugin.base_iterator.

Errors: a batch's error is raised by the next() that would return it, and the next() after it
goes on (a sluice pipeline survives errors). Unlike DALI, whose constructor raises the first
batch's error (it calls __next__ for prepare_first_batch), the constructor keeps it for the
first next(); and reset() keeps a source's error for the new epoch's first batch for that
epoch's first next(), so the epoch that ended still ends with StopIteration.
"""
import os

import numpy as np
import torch

from .. import _sluice
from .. import distributed
from .. import types
from .base_iterator import IteratorArgumentError, LastBatchPolicy, _SluiceBaseIterator
from ._dataloader import DataLoader

DataLoader.__module__ = __name__  # where users import it from
from torch.utils.data import (  # noqa: F401 - re-exported for `from torch.utils.data` users
    BatchSampler, ChainDataset, ConcatDataset, Dataset, DistributedSampler, IterableDataset,
    RandomSampler, Sampler, SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
    WeightedRandomSampler, _utils, default_collate, default_convert, random_split)

try:  # DataPipes: in torch 1.13 to 2.x; deprecated upstream (torchdata 0.10 dropped its own)
    from torch.utils.data import IterDataPipe, MapDataPipe  # noqa: F401
    _DATAPIPES = True
except ImportError:
    _DATAPIPES = False

try:  # torch >= 2.1
    from torch.utils.data import StackDataset  # noqa: F401
except ImportError:  # torch 1.13 (Debian's): sluice's own, with PyTorch 2.1's behaviour
    from ._datasets import StackDataset  # noqa: F401


def get_worker_info():
    """In a DataLoader worker: its ``WorkerInfo`` (``id``, ``num_workers``, ``seed``,
    ``dataset``: this worker's copy), the same object ``torch.utils.data.get_worker_info()``
    returns there. In a worker of a pipeline's parallel external source: sluice's WorkerInfo.
    In the main process: None."""
    from torch.utils.data import get_worker_info as torch_info  # (newer torch: thread workers')

    from .. import worker as sw

    info = torch_info()
    return info if info is not None else sw.get_worker_info()

__all__ = ["SluiceGenericIterator", "SluiceClassificationIterator", "DALIGenericIterator",
           "DALIClassificationIterator", "LastBatchPolicy", "feed_ndarray", "to_torch_type",
           "dataset_source", "DatasetSource", "DataLoader", "get_worker_info", "Dataset",
           "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "default_collate",
           "default_convert", "StackDataset", "IterDataPipe", "MapDataPipe"]
if not _DATAPIPES:  # a torch without DataPipes
    __all__ = [n for n in __all__ if n not in ("IterDataPipe", "MapDataPipe")]

to_torch_type = {
    types.DALIDataType.FLOAT: torch.float32,
    types.DALIDataType.FLOAT64: torch.float64,
    types.DALIDataType.FLOAT16: torch.float16,
    types.DALIDataType.UINT8: torch.uint8,
    types.DALIDataType.INT8: torch.int8,
    types.DALIDataType.BOOL: torch.bool,
    types.DALIDataType.INT16: torch.int16,
    types.DALIDataType.INT32: torch.int32,
    types.DALIDataType.INT64: torch.int64,
}



def _dlpack_takes_bool():
    """Whether this torch reads DLPack's kDLBool (torch 2.x does, 1.13 refuses it): tried on a
    one-element bool tensor, not read from the version."""
    from torch.utils import dlpack

    try:
        t = dlpack.from_dlpack(dlpack.to_dlpack(torch.zeros(1, dtype=torch.bool)))
    except (RuntimeError, TypeError, BufferError):
        return False
    return t.dtype == torch.bool


# a bool batch goes through NumPy (no copy) where torch cannot take DLPack's bool
_DLPACK_BOOL = _dlpack_takes_bool()


def _dense_shape(tl):
    shapes = tl.shape()
    return [len(tl)] + list(shapes[0] if shapes else ())


# SLUICE_GPU_EMULATE=1 (tests on machines without a GPU) emulates the GPU stage on the host:
# its "device" pointers are host memory that torch cannot take as CUDA tensors, so GPU outputs
# come back as CPU tensors (a copy) there.
_EMULATED = os.environ.get("SLUICE_GPU_EMULATE") == "1"


def _as_torch(tl):
    """The dense batch of a TensorListCPU / TensorListGPU as a torch tensor over the same
    memory (a CUDA tensor on the pipeline's device for TensorListGPU: torch.from_dlpack passes
    its current stream, which sluice waits for before reusing the buffers)."""
    if isinstance(tl, _sluice.TensorListGPU):
        if _EMULATED:
            return torch.from_numpy(tl.as_cpu().as_array())
        return torch.from_dlpack(tl)
    if tl.dtype == types.DALIDataType.BOOL and not _DLPACK_BOOL:
        return torch.from_numpy(tl.as_array())
    return torch.from_dlpack(tl)


def feed_ndarray(tensor_list, arr, cuda_stream=None):
    """Copies a TensorListCPU (its dense batch [batch, ...]), a TensorCPU / TensorGPU or a
    NumPy array into the preallocated torch tensor `arr` and returns `arr`. The element types
    and shapes must match. GPU outputs are copied on the device; `cuda_stream` (DALI's argument) makes the copy
    non-blocking when the target is a CUDA tensor."""
    if isinstance(tensor_list, (_sluice.TensorListCPU, _sluice.TensorListGPU)):
        src_type = to_torch_type.get(tensor_list.dtype)
        shape = _dense_shape(tensor_list)
        if not tensor_list.is_dense_tensor():
            raise ValueError("feed_ndarray: the samples of the TensorList have different shapes "
                             f"({tensor_list.shape()[:3]}...); only a dense batch can be copied")
        src = _as_torch(tensor_list)
    elif isinstance(tensor_list, (_sluice.TensorCPU, _sluice.TensorGPU)):  # tl[i], as_tensor()
        src_type, shape = to_torch_type.get(tensor_list.dtype), tensor_list.shape()
        host = tensor_list.as_cpu() if _EMULATED else tensor_list
        src = torch.from_numpy(np.asarray(host)) if isinstance(host, _sluice.TensorCPU) \
            else torch.from_dlpack(host)
    else:
        src = torch.from_numpy(tensor_list) if not torch.is_tensor(tensor_list) else tensor_list
        src_type, shape = src.dtype, list(src.shape)
    assert src_type == arr.dtype, (
        "The element type of DALI Tensor/TensorList doesn't match the element type of the "
        f"target PyTorch Tensor: {src_type} vs {arr.dtype}")
    assert shape == list(arr.size()), (
        f"Shapes do not match: DALI tensor has size {shape}, but PyTorch Tensor has size "
        f"{list(arr.size())}")
    non_blocking = cuda_stream is not None and arr.is_cuda
    arr.copy_(src, non_blocking=non_blocking)
    return arr


class SluiceGenericIterator(_SluiceBaseIterator):
    """Iterator over one or more pipelines (one per shard or device) giving torch tensors.

    pipelines: a Pipeline or a list of them (same batch size); built here.
    output_map: names of the pipelines' outputs, in order; each step returns a list with one
        dict {name: torch.Tensor} per pipeline. The names must be distinct.
    size: samples per epoch, summed over the pipelines; -1 (default): run until the pipeline
        raises StopIteration (an external_source ending its epoch; one pipeline only).
        Exclusive with reader_name.
    reader_name: the name of the reader (fn.readers.file(name=...)) whose metadata gives the
        epoch size, shards and padding: the recommended way. Exclusive with size and
        last_batch_padded.
    auto_reset: "no" / False / None: at the end of an epoch StopIteration is raised and the
        next epoch starts with reset() (or iter(it), as a for loop does); "yes" / True: reset()
        is called before StopIteration is raised.
    fill_last_batch: deprecated; True is LastBatchPolicy.FILL, False PARTIAL.
    dynamic_shape: accepted for DALI's signature; no effect (batches are dense tensors).
    last_batch_padded: with size: whether the reader pads its last batch (pad_last_batch), so
        the next epoch starts afresh instead of with what the last batch read ahead.
    last_batch_policy: LastBatchPolicy.FILL, DROP or PARTIAL (a member, not a string).
    prepare_first_batch: run the pipelines and take the first batch already here.

    With the data set [1, 2, 3, 4, 5, 6, 7] and batch size 2 (one shard):

    ========  ================================  ==========  ======================
    policy    last_batch_padded/pad_last_batch  last batch  next epoch starts with
    ========  ================================  ==========  ======================
    PARTIAL   True                              [7]         [1, 2]
    PARTIAL   False                             [7]         [2, 3]
    FILL      True                              [7, 7]      [1, 2]
    FILL      False                             [7, 1]      [2, 3]
    DROP      True                              [5, 6]      [1, 2]
    DROP      False                             [5, 6]      [2, 3]
    ========  ================================  ==========  ======================

    With reader_name, FILL and no padding, the next epoch after [7, 1] is [2, 3], [4, 5],
    [6, 7] (3 steps): each epoch covers the data set; with pad_last_batch every epoch starts
    at the beginning of a shard. Unpadded PARTIAL and DROP lose what the last batch read ahead.

    Memory: a tensor of a step holds that iteration's buffers; the pipeline has
    prefetch_queue_depth of them. A program may hold the tensors of the last
    prefetch_queue_depth - 1 steps while asking for the next one (with the default depth 2:
    the previous batch, as a for loop does; with prefetch_queue_depth=dict(cpu_size, gpu_size),
    gpu_size - 1 steps of GPU outputs); holding more makes next() fail (about 2 s later for
    views still alive) with MisuseError. Copy what must be kept longer (tensor.clone()).
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        if isinstance(output_map, str):
            raise TypeError("output_map must be a list of output names, not a string")
        output_map = list(output_map)
        if len(set(output_map)) != len(output_map):
            raise IteratorArgumentError("output_map names should be distinct")
        self.output_map = output_map
        self._output_categories = set(output_map)
        super().__init__(pipelines, size, reader_name, auto_reset, fill_last_batch,
                         last_batch_padded, last_batch_policy, prepare_first_batch)
        for k, p in enumerate(self._pipes):  # built by now: a mistake of the caller, raised here
            n = p._built().num_outputs
            if n != len(self.output_map):
                raise ValueError(f"pipeline {k} has {n} outputs but output_map names "
                                 f"{len(self.output_map)}: {self.output_map}")
        self._first_batch = None
        # restored from a checkpoint taken at the end of an epoch: the first next() raises
        # StopIteration, as the checkpointed iterator's would; nothing to prepare
        at_end = self._size > 0 and self._counter >= self._size
        if self._prepare_first_batch and not at_end:
            self._save_initial_checkpoints()
            try:
                self._first_batch = self._next_batches()
            except StopIteration:
                raise RuntimeError(
                    "It seems that there is no data in the pipeline. This may happen if "
                    "`last_batch_policy` is set to PARTIAL and the requested batch size is "
                    "greater than the shard size.") from None
            except Exception as e:  # noqa: BLE001 - raised by the first next()
                # the first batch's error belongs to the next() that would return that batch,
                # as every batch's does: the iterator exists and the next() after goes on
                self._deferred = e
            self._ever_consumed = False  # buffered, not yet taken by the user

    def __next__(self):
        self._ever_consumed = True
        if self._first_batch is not None:
            batch, self._first_batch = self._first_batch, None
            return batch
        return self._next_batches()

    def _convert(self, index, outputs):
        if len(outputs) != len(self.output_map):
            raise ValueError(f"pipeline {index} has {len(outputs)} outputs but output_map names "
                             f"{len(self.output_map)}: {self.output_map}")
        batch = {}
        for name, tl in zip(self.output_map, outputs):
            if not tl.is_dense_tensor():
                shapes = tl.shape()
                raise _sluice.InvalidArgumentError(
                    f'output "{name}" of pipeline {index} is not a dense batch: its samples '
                    f"have different shapes ({shapes[0]}, ... {shapes[-1]}); the PyTorch "
                    "iterator returns one tensor per output, so resize or crop the samples to "
                    "one shape (or pad them)")
            batch[name] = _as_torch(tl)
        return batch

    def _narrow(self, batch, n):
        out = dict(batch)
        for name in self._output_categories:
            # a batch without its skipped samples (on_bad_sample="skip") may be shorter than n
            out[name] = batch[name].narrow(0, 0, min(n, batch[name].shape[0]))
        return out


class SluiceClassificationIterator(SluiceGenericIterator):
    """SluiceGenericIterator with output_map ["data", "label"]: for pipelines returning
    (images, labels). Labels keep the reader's shape: int32 [batch, 1]."""

    def __init__(self, pipelines, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        super().__init__(pipelines, ["data", "label"], size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         dynamic_shape=dynamic_shape, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)


# DALI's names
DALIGenericIterator = SluiceGenericIterator
DALIClassificationIterator = SluiceClassificationIterator


class DatasetSource:
    """A map-style PyTorch ``Dataset`` as a per-sample source of ``fn.external_source(...,
    batch=False, parallel=True)`` (see dataset_source). Picklable when the dataset is, so it
    also works with ``py_start_method="spawn"``."""

    def __init__(self, dataset, shuffle=True, seed=0, drop_last=False, shard_id=0,
                 num_shards=1):
        if shard_id == "auto":  # sluice's addition: the launcher's (sluice.distributed)
            shard_id = distributed.rank()
        if num_shards == "auto":
            num_shards = distributed.world_size()
        if num_shards < 1:
            raise ValueError(f"dataset_source: num_shards must be at least 1, got {num_shards}")
        if not 0 <= shard_id < num_shards:
            raise ValueError(f"dataset_source: invalid shard_id {shard_id}, shard_id should be "
                             f"in the interval [0, {num_shards - 1}]")
        self.dataset = dataset
        self.sampler = torch.utils.data.DistributedSampler(
            dataset, num_replicas=num_shards, rank=shard_id, shuffle=bool(shuffle),
            seed=int(seed), drop_last=bool(drop_last))
        self.num_samples = len(self.sampler)
        self._epoch, self._indices = None, None

    def __len__(self):
        """Samples of this shard per epoch."""
        return self.num_samples

    def indices(self, epoch):
        """The dataset indices of this shard in epoch `epoch`: the sampler's, after
        set_epoch(epoch)."""
        self.sampler.set_epoch(epoch)
        return list(self.sampler)

    def __call__(self, sample_info):
        if sample_info.idx_in_epoch >= self.num_samples:
            raise StopIteration
        if self._epoch != sample_info.epoch_idx:
            self._epoch, self._indices = sample_info.epoch_idx, self.indices(sample_info.epoch_idx)
        item = self.dataset[self._indices[sample_info.idx_in_epoch]]
        return tuple(item) if isinstance(item, list) else item

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("_epoch", "_indices")}

    def __setstate__(self, state):
        self.__dict__.update(state, _epoch=None, _indices=None)


def dataset_source(dataset, shuffle=True, seed=0, drop_last=False, shard_id=0, num_shards=1):
    """A source for ``fn.external_source(source, num_outputs=..., batch=False, parallel=True)``
    that reads a map-style PyTorch ``Dataset`` (``__getitem__`` + ``__len__``) in the order of
    ``torch.utils.data.DistributedSampler(dataset, num_shards, shard_id, shuffle, seed,
    drop_last)`` with ``set_epoch(e)`` for the pipeline's epoch e: a permutation drawn from
    ``seed + epoch`` (shuffle) or the dataset order, padded by repeating its head so that it
    divides among the shards (or, with drop_last, cut), shard r taking every num_shards-th
    index from r. Sample k of the epoch is ``dataset[index k of this shard]``; past the shard's
    ``len()`` samples it raises StopIteration, so the epoch ends with a smaller last batch.
    A dataset item that is a tuple or list gives one output per element (num_outputs); each
    element must be an array (NumPy, torch CPU tensor, a number; a PIL image converts).
    The dataset is copied into each worker (fork: copy-on-write; spawn: pickled).
    shard_id="auto" and num_shards="auto" (sluice's addition) take the job's rank and world size
    from its launcher, as the readers do (sluice.distributed)."""
    return DatasetSource(dataset, shuffle, seed, drop_last, shard_id, num_shards)
