"""sluice.tensors: DALI's module name for the output types (nvidia.dali.tensors)."""
from ._sluice import TensorListCPU  # noqa: F401
