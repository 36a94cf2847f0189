"""tests/python/test_dataloader_compat.py: what running PyTorch's own test/test_dataloader.py
against sluice.plugin.pytorch.DataLoader (scripts/torch_dataloader_suite.py: copy B, only the
DataLoader import changed) found sluice doing differently from torch.utils.data.DataLoader,
each written as sluice's own check of the expectation PyTorch's test states (the A/B table is in
docs/python.md, "PyTorch's own DataLoader tests").
"""
import typing

import pytest
import torch
import torch.utils.data as tud

from sluice.plugin.pytorch import DataLoader


# ---- typing: DataLoader[T] (PyTorch's test_typing) ----------------------------------------------

def test_dataloader_is_generic_like_torchs():
    """torch's DataLoader is Generic[T_co]: annotations such as DataLoader[List[Tensor]] must
    work with sluice's too (a plain subclass of a generic class is not subscriptable)."""
    alias = DataLoader[typing.List[torch.Tensor]]
    assert typing.get_origin(alias) is DataLoader
    assert typing.get_args(alias) == (typing.List[torch.Tensor],)

    def make(train: bool) -> DataLoader[typing.List[torch.Tensor]]:
        return DataLoader([torch.tensor([i]) for i in range(3)], batch_size=2)

    assert typing.get_type_hints(make)["return"] == alias
    # still a torch DataLoader, and subscripting changes nothing at run time
    loader = make(True)
    assert isinstance(loader, tud.DataLoader)
    assert [b.tolist() for b in loader] == [[[0], [1]], [[2]]]


def test_generic_subclass_of_the_dataset_type_parameter():
    """A Dataset[List[Tensor]] subclass goes through the loader as any dataset."""
    class Pairs(tud.Dataset[typing.List[torch.Tensor]]):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return [torch.tensor(i), torch.tensor(-i)]

    batches = list(DataLoader(Pairs(), batch_size=2))
    assert [[t.tolist() for t in b] for b in batches] == [[[0, 1], [0, -1]], [[2, 3], [-2, -3]]]


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
