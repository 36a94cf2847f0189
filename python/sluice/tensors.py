"""sluice.tensors: DALI's module name for the output types (nvidia.dali.tensors)."""
from ._sluice import TensorListCPU  # noqa: F401
from ._sluice import TensorListGPU  # noqa: F401,E402


class TensorListHost:
    """A batch copied from the GPU to host memory: what TensorListGPU.as_cpu() returns.

    It owns its memory (a bytearray); at(i) / as_array() / as_tensor() return NumPy views of it,
    like TensorListCPU's.
    """

    def __init__(self, data, shapes, dtype, layout, sources, iteration):
        import numpy as np

        self._data, self._shapes = data, [tuple(s) for s in shapes]
        self.dtype, self._layout, self._sources, self.iteration = dtype, layout, sources, iteration
        self._np_dtype = dtype.to_numpy() if hasattr(dtype, "to_numpy") else np.dtype(dtype)
        self._offsets = [0]
        for s in self._shapes:
            self._offsets.append(self._offsets[-1] + int(np.prod(s, dtype=np.int64))
                                 * self._np_dtype.itemsize)

    def __len__(self):
        return len(self._shapes)

    def at(self, i):
        import numpy as np

        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sample index out of range (batch of {n})")
        a = np.frombuffer(self._data, self._np_dtype, count=int(np.prod(self._shapes[i])),
                          offset=self._offsets[i])
        return a.reshape(self._shapes[i])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.at(k) for k in range(*i.indices(len(self)))]
        return self.at(i)

    def is_dense_tensor(self):
        return len(set(self._shapes)) <= 1

    def as_array(self):
        import numpy as np

        if not self.is_dense_tensor():
            raise ValueError("as_array: the samples have different shapes, so the batch is not "
                             "one dense tensor; use at(i) per sample")
        shape = (len(self),) + (self._shapes[0] if self._shapes else ())
        return np.frombuffer(self._data, self._np_dtype).reshape(shape)

    as_tensor = as_array

    def layout(self):
        return self._layout

    def shape(self):
        return list(self._shapes)

    def source_info(self, i):
        return self._sources[i]

    def __repr__(self):
        return (f"TensorListHost(iteration={self.iteration}, dtype={self.dtype}, "
                f'layout="{self._layout}", shape={self._shapes})')

