"""sluice.plugin: connections to training frameworks, following ``nvidia.dali.plugin``.

    sluice.plugin.base_iterator   LastBatchPolicy and the framework-independent epoch
                                  accounting of the iterators (no framework import)
    sluice.plugin.pytorch         SluiceGenericIterator / SluiceClassificationIterator (and
                                  DALI's names for them), feed_ndarray: batches as torch
                                  tensors, without copies

Importing ``sluice.plugin`` imports no framework; ``sluice.plugin.pytorch`` needs torch.
"""
