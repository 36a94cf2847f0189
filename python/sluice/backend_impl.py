"""sluice.backend_impl: DALI's module name for its C++ binding (nvidia.dali.backend_impl), where
code and tests look up the tensor types: ``backend_impl.TensorCPU``, ``TensorGPU``,
``TensorListCPU``, ``TensorListGPU`` (sluice's are written in C, in sluice._sluice)."""
from ._sluice import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU  # noqa: F401
