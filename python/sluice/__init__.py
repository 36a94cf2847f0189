"""sluice: data-loading pipelines for ML training, with NVIDIA DALI's Python API.

    from sluice import pipeline_def, fn, types

    @pipeline_def(batch_size=64, num_threads=4, device_id=None, seed=42)
    def train(root):
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        images = fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT,
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels

    pipe = train("/data/train")
    images, labels = pipe.run()          # TensorListCPU: at(i), as_array(), __dlpack__

The operators (sluice.fn, sluice.ops) and their documentation are generated from the C
library's registry; the pipeline runs in C on its own threads. Python sources may run in
worker processes (``fn.external_source(..., parallel=True)``; ``sluice.get_worker_info()``
inside them): see sluice.parallel.
"""
from . import _sluice
from . import backend_impl  # noqa: F401  (DALI's module of the tensor types)
from . import types
from .errors import (  # noqa: F401
    ArgumentTypeError, CallbackError, CanceledError, CorruptDataError, InternalError,
    InvalidArgumentError, MisuseError, NotFoundError, OutOfMemoryError, ReadError, SluiceError,
    UnsupportedError, WorkerError)
from . import distributed

# Loaded on first use (PEP 562), so that a program that only uses
# sluice.plugin.pytorch.DataLoader does not carry the operator modules (~6 MiB per process):
# name -> (submodule, attribute or None for the module itself).
_LAZY = {
    "fn": ("fn", None), "ops": ("ops", None), "tfrecord": ("tfrecord", None),
    "DataNode": ("data_node", "DataNode"),
    "BatchInfo": ("external_source", "BatchInfo"), "SampleInfo": ("external_source", "SampleInfo"),
    "Pipeline": ("pipeline", "Pipeline"), "pipeline_def": ("pipeline", "pipeline_def"),
    "WorkerInfo": ("worker", "WorkerInfo"), "get_worker_info": ("worker", "get_worker_info"),
    "WorkerTimeoutError": ("parallel", "WorkerTimeoutError"),
}


def __getattr__(name):
    spec = _LAZY.get(name)
    if spec is None:
        raise AttributeError(f"module 'sluice' has no attribute {name!r}")
    import importlib

    module = importlib.import_module("." + spec[0], __name__)
    value = module if spec[1] is None else getattr(module, spec[1])
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


TensorListCPU = _sluice.TensorListCPU
TensorListGPU = _sluice.TensorListGPU
TensorCPU = _sluice.TensorCPU
TensorGPU = _sluice.TensorGPU
__version__ = _sluice.version()

__all__ = ["Pipeline", "pipeline_def", "fn", "ops", "types", "DataNode", "TensorListCPU",
           "TensorListGPU", "TensorCPU", "TensorGPU",
           "BatchInfo", "SampleInfo", "SluiceError", "WorkerInfo", "get_worker_info",
           "WorkerTimeoutError", "__version__"]
