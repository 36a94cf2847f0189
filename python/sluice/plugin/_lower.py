"""sluice.plugin._lower: the DataLoader runs torchvision's ImageFolder transforms in C.

When a batch of a plain ``torchvision.datasets.ImageFolder`` / ``DatasetFolder`` is fetched
with the default collation, and its loader is torchvision's PIL loader and its transform one
sluice knows exactly (``plan_of``), the DataLoader does the samples' per-sample work in C —
the JPEG/PNG decode of the crop window only, the resize and the flip, by the same code as the
operators (``sluice._sluice._lower_crop_resize``: src/ops/decoders, src/ops/image/resample.c)
— straight into the batch, with the bytes PIL and torchvision would have made. Recognised
(exact types; anything else, or any doubt, is the ordinary Python path):

- the dataset: ``ImageFolder`` or ``DatasetFolder`` themselves (not subclasses), ``loader``
  ``default_loader`` with torchvision's "PIL" backend or ``pil_loader``;
- ``transform``: a ``Compose`` of, or one of: ``RandomResizedCrop`` (BILINEAR; any size,
  scale and ratio; antialias does not matter on PIL images), then any number of
  ``RandomHorizontalFlip(p)``, then ``PILToTensor`` — each without hooks or overridden
  methods. ``target_transform`` runs in Python as usual.

Why the bytes are the same: per batch, sample by sample in order, the image's size is read
from its header (what PIL reports) and the transform's random parameters are drawn by
torchvision's own code on the same torch generator (``RandomResizedCrop.get_params`` on an
image-like of that size, ``torch.rand(1) < p`` per flip), so the generator goes through
exactly the draws the Python path makes; a sample the codec does not decode exactly as
Pillow's ``convert("RGB")`` (not a JPEG/PNG, a 16-bit PNG, over PIL's MAX_IMAGE_PIXELS) runs
``dataset[i]`` in Python right there, drawing its own parameters. Then (``Images.write``, when
the batch's memory exists: the worker's shared-memory chunk, or a tensor without workers) the
lowered samples are decoded and resampled by C into their rows, CHW. A sample C cannot decode
(a corrupt or truncated file, data libjpeg only warns about) is given to Python as it is: the
generator is set back to its state before that sample's draws and ``dataset[i]`` runs —
raising PIL's own exception when the file is bad (the generator then where the Python path
leaves it), or giving PIL's pixels — and the generator is put back where the batch left it.

Exports ``enabled``, ``plan_of``, ``Images`` and ``STATS`` (samples of this process by path:
"lowered", "python" — not lowerable, run in Python; "fallback" — lowered, C refused, Python
ran it).
"""
import collections
import os

import torch

STATS = collections.Counter()

ENV = "SLUICE_DATALOADER_LOWER"


def enabled(flag):
    """Whether a loader built with ``lower_transforms=flag`` lowers (the environment variable
    SLUICE_DATALOADER_LOWER=0 turns it off everywhere)."""
    return bool(flag) and os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no",
                                                                            "off")


class Plan:
    """What a recognised transform does: RandomResizedCrop(size, scale, ratio) then flips
    with probabilities `flips`, then PILToTensor."""

    __slots__ = ("crop", "size", "flips")

    def __init__(self, crop, flips):
        self.crop, self.size, self.flips = crop, tuple(int(s) for s in crop.size), flips


def _plain_module(t):
    """An nn.Module transform that runs its class's forward and nothing else."""
    return not (t._forward_hooks or t._forward_pre_hooks or getattr(t, "_backward_hooks", None)
                or "forward" in vars(t) or "__call__" in vars(t))


def _global_hooks():
    from torch.nn.modules import module as m

    return any(getattr(m, n, None) for n in ("_global_forward_hooks",
                                             "_global_forward_pre_hooks",
                                             "_global_backward_hooks"))


def plan_of(dataset):
    """The Plan of a dataset whose samples can be lowered, else None (checked at every batch:
    a dataset whose transform changes is seen as it is)."""
    try:
        import torchvision
        from torchvision import datasets as tvd
        from torchvision import transforms as T
        from torchvision.datasets import folder
        from torchvision.transforms import InterpolationMode
    except ImportError:
        return None
    if type(dataset) not in (tvd.ImageFolder, tvd.DatasetFolder):
        return None
    loader = getattr(dataset, "loader", None)
    if not (loader is folder.pil_loader or (loader is folder.default_loader
                                            and torchvision.get_image_backend() == "PIL")):
        return None
    tf = dataset.transform
    steps = list(tf.transforms) if type(tf) is T.Compose and "__call__" not in vars(tf) \
        else [tf]
    if len(steps) < 2 or type(steps[0]) is not T.RandomResizedCrop \
            or type(steps[-1]) is not T.PILToTensor or "__call__" in vars(steps[-1]):
        return None
    crop = steps[0]
    if crop.interpolation is not InterpolationMode.BILINEAR or not _plain_module(crop) \
            or "get_params" in vars(crop) or len(crop.size) != 2:
        return None
    flips = []
    for t in steps[1:-1]:
        if type(t) is not T.RandomHorizontalFlip or not _plain_module(t):
            return None
        flips.append(t.p)
    if _global_hooks():
        return None
    return Plan(crop, flips)


class _Size:
    """An image-like of a size for torchvision's get_params (F.get_dimensions reads the shape
    of a tensor: an expanded scalar, no memory)."""

    @staticmethod
    def of(width, height):
        return torch.zeros(()).expand(3, height, width)


def _max_pixels():
    from PIL import Image

    return Image.MAX_IMAGE_PIXELS


class Images:
    """A batch's images, [B, 3, H, W] uint8, to be written straight into the batch's memory:
    rows of lowered samples (file bytes and drawn parameters) and rows Python computed
    (tensors). The pickler of a worker places it in the chunk like a stacked tensor
    (``_dl_worker.ShmPickler``); without workers ``tensor()`` makes the batch."""

    __slots__ = ("dataset", "rows", "shape", "end_state")

    def __init__(self, dataset, rows, shape, end_state):
        self.dataset, self.rows, self.shape, self.end_state = dataset, rows, shape, end_state

    @property
    def nbytes(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def tensor(self):
        t = torch.empty(self.shape, dtype=torch.uint8)
        self.write(t.numpy(), 0)
        return t

    def write(self, buf, off):
        """Fills the batch into the writable buffer `buf` from byte `off`."""
        from .. import _sluice

        _, c, h, w = self.shape
        rb = c * h * w
        dest = torch.frombuffer(buf, dtype=torch.uint8, count=self.nbytes, offset=off)
        for k, row in enumerate(self.rows):
            if row[0] == "t":
                dest[k * rb:(k + 1) * rb].view(c, h, w).copy_(row[1])
                continue
            _, idx, data, (top, left, ch, cw), flip, snap = row
            try:
                _sluice._lower_crop_resize(data, top, left, ch, cw, h, w, flip, buf,
                                           off + k * rb)
                STATS["lowered"] += 1
            except Exception:  # noqa: BLE001 - C refused the file: PIL decides (see above)
                img = self.redo(idx, snap)
                dest[k * rb:(k + 1) * rb].view(c, h, w).copy_(_checked(img, (c, h, w)))
        self.rows = None

    def redo(self, idx, snap):
        """Sample `idx` through the Python path from the generator state before its draws;
        the generator is then put back where the batch left it (if it returns)."""
        STATS["fallback"] += 1
        torch.set_rng_state(snap)
        img = self.dataset[idx][0]
        torch.set_rng_state(self.end_state)
        return img


def _checked(img, chw):
    if not isinstance(img, torch.Tensor) or img.dtype != torch.uint8 or tuple(img.shape) != chw:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(chw)} "
                           f"and {list(getattr(img, 'shape', ()))}")
    return img


def fetch(plan, dataset, indices, collate_fn):
    """A batch of `indices` of `dataset` (a recognised one, `plan`): [Images, collated
    targets], as default_collate makes [images, targets] of the (image, target) samples.
    Parameters are drawn now, sample by sample; pixels are made by Images.write."""
    from .. import _sluice

    samples, tt = dataset.samples, dataset.target_transform
    crop = plan.crop
    h, w = plan.size
    limit = _max_pixels()
    rows, targets = [], []
    for k, idx in enumerate(indices):
        path, target = samples[idx]
        size = None
        try:
            with open(path, "rb") as f:
                data = f.read()
            size = _sluice._lower_peek(data)
        except (OSError, TypeError):
            pass  # the Python path raises the loader's own error
        if size is None or (limit is not None and size[0] * size[1] > limit):
            STATS["python"] += 1
            try:
                img, target = dataset[idx]
            except Exception:
                _first_error(dataset, rows, k)
                raise
            rows.append(("t", _checked(img, (3, h, w))))
            targets.append(target)
            continue
        snap = torch.get_rng_state()
        params = type(crop).get_params(_Size.of(*size), crop.scale, crop.ratio)
        flip = False
        for p in plan.flips:
            if torch.rand(1) < p:
                flip = not flip
        if tt is not None:
            target = tt(target)
        rows.append(("c", idx, data, params, flip, snap))
        targets.append(target)
    images = Images(dataset, rows, (len(rows), 3, h, w), torch.get_rng_state())
    return [images, collate_fn(targets)]


def _first_error(dataset, rows, k):
    """Sample k raised in Python: a lowered sample before it that fails in C and in PIL too
    raised first on the Python path, so that one is raised (the generator left as the Python
    path leaves it); otherwise the generator is put back as it was when sample k raised."""
    import numpy as np

    from .. import _sluice

    state = torch.get_rng_state()
    images = Images(dataset, None, None, state)
    for row in rows:
        if row[0] != "c":
            continue
        _, idx, data, (top, left, ch, cw), flip, snap = row
        scratch = np.empty(3 * 8 * 8, np.uint8)
        try:
            _sluice._lower_crop_resize(data, top, left, ch, cw, 8, 8, flip, scratch, 0)
        except Exception:  # noqa: BLE001 - raises PIL's error, or PIL reads it: go on
            images.redo(idx, snap)
    torch.set_rng_state(state)
