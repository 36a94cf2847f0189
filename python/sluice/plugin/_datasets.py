"""sluice.plugin._datasets: ``StackDataset`` for torch versions that lack it (added in
PyTorch 2.1; Debian's torch is 1.13), with PyTorch's behaviour, so that
``from sluice.plugin.pytorch import StackDataset`` works everywhere. With a newer torch,
sluice.plugin.pytorch exports torch's own class instead."""
from torch.utils.data import Dataset


class StackDataset(Dataset):
    """Several datasets of equal length read side by side: ``StackDataset(a, b)[i]`` is
    ``(a[i], b[i])``, ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __len__(self):
        return self._length

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def _column(self, dataset, indices):
        """The items of one nested dataset, in bulk when it reads in bulk."""
        bulk = getattr(dataset, "__getitems__", None)
        if not callable(bulk):
            return [dataset[i] for i in indices]
        items = bulk(indices)
        if len(items) != len(indices):
            raise ValueError("Nested dataset's output size mismatch. Expected "
                             f"{len(indices)}, got {len(items)}")
        return items

    def __getitems__(self, indices):
        if isinstance(self.datasets, dict):
            cols = {k: self._column(d, indices) for k, d in self.datasets.items()}
            return [{k: c[n] for k, c in cols.items()} for n in range(len(indices))]
        cols = [self._column(d, indices) for d in self.datasets]
        return [tuple(c[n] for c in cols) for n in range(len(indices))]
