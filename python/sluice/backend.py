"""sluice.backend: DALI's nvidia.dali.backend, the tensor types of sluice.backend_impl."""
from .backend_impl import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU  # noqa: F401
