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
- ``transform``: a ``Compose`` of a geometry — ``RandomResizedCrop`` (BILINEAR; any size,
  scale and ratio; antialias does not matter on PIL images), or ``Resize`` (BILINEAR; an
  (h, w), or the shorter side with ``CenterCrop`` after it, max_size too) and/or
  ``CenterCrop`` — then any number of ``RandomHorizontalFlip(p)``, then ``PILToTensor``, or
  ``ToTensor`` and optionally ``Normalize`` — each without hooks or overridden methods.
  ``target_transform`` runs in Python as usual.

Why the bytes are the same: per batch, sample by sample in order, the image's size is read
from its header (what PIL reports) and the transform's random parameters are drawn by
torchvision's own code on the same torch generator (``RandomResizedCrop.get_params`` on an
image-like of that size, ``torch.rand(1) < p`` per flip), so the generator goes through
exactly the draws the Python path makes; a sample the codec does not decode exactly as
Pillow's ``convert("RGB")`` (not a JPEG/PNG, a 16-bit PNG, over PIL's MAX_IMAGE_PIXELS), or
whose geometry torchvision would pad (a CenterCrop larger than the image), runs
``dataset[i]`` in Python right there, drawing its own parameters. Then (``Images.write``, when
the batch's memory exists: the worker's shared-memory chunk, or a tensor without workers) the
lowered samples are decoded and resampled by C into their rows, CHW (ToTensor: C's uint8 row
converted by ToTensor's own operations, then the dataset's Normalize module called on it: the
same float operations on the same values). A sample C cannot decode
(a corrupt or truncated file, data libjpeg only warns about) is given to Python as it is: the
generator is set back to its state before that sample's draws and ``dataset[i]`` runs —
raising PIL's own exception when the file is bad (the generator then where the Python path
leaves it), or giving PIL's pixels — and the generator is put back where the batch left it.

Exports ``enabled``, ``plan_of``, ``fetch`` (used by ``_dl_worker._Fetcher``), ``Images``
(placed in a worker's chunk by ``_dl_worker.ShmPickler``) and ``STATS`` (samples of this process by path:
"lowered", "python" — not lowerable, run in Python; "fallback" — lowered, C refused, Python
ran it).
"""
import collections
import os
import sys

import torch

STATS = collections.Counter()

ENV = "SLUICE_DATALOADER_LOWER"


def enabled(flag):
    """Whether a loader built with ``lower_transforms=flag`` lowers (the environment variable
    SLUICE_DATALOADER_LOWER=0 turns it off everywhere)."""
    return bool(flag) and os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no",
                                                                            "off")


class Plan:
    """What a recognised transform does to an image: a geometry — RandomResizedCrop `crop`,
    or Resize `resize` ((size list, max_size)) and/or CenterCrop `center` ((h, w)) — then flips
    with probabilities `flips`, then PILToTensor (`to_float` False) or ToTensor and the
    optional Normalize module `normalize`. `size`: the output's (h, w), the same for every
    sample."""

    __slots__ = ("crop", "resize", "center", "flips", "to_float", "normalize", "size")

    def __init__(self, crop=None, resize=None, center=None, flips=(), to_float=False,
                 normalize=None, size=None):
        self.crop, self.resize, self.center, self.flips = crop, resize, center, list(flips)
        self.to_float, self.normalize, self.size = to_float, normalize, size

    @property
    def dtype(self):
        return torch.get_default_dtype() if self.to_float else torch.uint8

    def geometry(self, width, height):
        """(top, left, h, w, out_h, out_w, window) of an image of that size: the window of the
        image resized to out_h x out_w, and the output window of that ((top, left, h, w), or
        None for all of it); None when the Python path must run the sample (a CenterCrop that
        would pad, a size torchvision refuses). RandomResizedCrop draws its parameters here,
        with torchvision's get_params on torch's generator."""
        if self.crop is not None:
            top, left, h, w = type(self.crop).get_params(_Size.of(width, height),
                                                         self.crop.scale, self.crop.ratio)
            return top, left, h, w, self.size[0], self.size[1], None
        out_h, out_w = height, width
        if self.resize is not None:
            from torchvision.transforms import functional as F

            try:
                out_h, out_w = F._compute_resized_output_size((height, width), *self.resize)
            except Exception:  # noqa: BLE001 - the Python path raises it
                return None
        window = None
        if self.center is not None:
            ch, cw = self.center
            if ch > out_h or cw > out_w:
                return None  # F.center_crop pads
            if (ch, cw) != (out_h, out_w):  # F.center_crop's own rounding
                window = (int(round((out_h - ch) / 2.0)), int(round((out_w - cw) / 2.0)), ch,
                          cw)
        elif (out_h, out_w) != self.size:
            return None
        return 0, 0, height, width, out_h, out_w, window


def _plain_module(t):
    """An nn.Module transform that runs its class's forward and nothing else."""
    return not (t._forward_hooks or t._forward_pre_hooks or getattr(t, "_backward_hooks", None)
                or "forward" in vars(t) or "__call__" in vars(t))


def _global_hooks():
    from torch.nn.modules import module as m

    return any(getattr(m, n, None) for n in ("_global_forward_hooks",
                                             "_global_forward_pre_hooks",
                                             "_global_backward_hooks"))


def _size_list(size):
    return list(size) if isinstance(size, (list, tuple)) else [size]


def plan_of(dataset):
    """The Plan of a dataset whose samples can be lowered, else None (checked at every batch:
    a dataset whose transform changes is seen as it is)."""
    folder = sys.modules.get("torchvision.datasets.folder")  # never imported here: a dataset
    if folder is None or type(dataset) not in (folder.ImageFolder, folder.DatasetFolder):
        return None  # of another kind costs this process nothing
    import torchvision
    from torchvision import transforms as T
    from torchvision.transforms import InterpolationMode

    loader = getattr(dataset, "loader", None)
    if not (loader is folder.pil_loader or (loader is folder.default_loader
                                            and torchvision.get_image_backend() == "PIL")):
        return None
    tf = dataset.transform
    steps = list(tf.transforms) if type(tf) is T.Compose and "__call__" not in vars(tf) \
        else [tf]
    plan, k = Plan(), 0

    def at(cls):
        return k < len(steps) and type(steps[k]) is cls and _plain_module(steps[k])

    if at(T.RandomResizedCrop):
        crop = steps[k]
        if crop.interpolation is not InterpolationMode.BILINEAR or "get_params" in vars(crop) \
                or len(crop.size) != 2:
            return None
        plan.crop, plan.size, k = crop, tuple(int(v) for v in crop.size), k + 1
    else:
        if at(T.Resize):
            r = steps[k]
            size = _size_list(r.size)
            if r.interpolation is not InterpolationMode.BILINEAR or len(size) not in (1, 2) \
                    or not all(type(v) is int for v in size) \
                    or (r.max_size is not None and len(size) != 1):
                return None
            plan.resize, k = (size, r.max_size), k + 1
            if len(size) == 2:
                plan.size = tuple(size)
        if at(T.CenterCrop):
            c = tuple(int(v) for v in steps[k].size)
            plan.center = plan.size = c
            k += 1
        if plan.size is None:  # no geometry, or a Resize of the shorter side only: ragged
            return None
    while at(T.RandomHorizontalFlip):
        plan.flips.append(steps[k].p)
        k += 1
    rest = [type(t) for t in steps[k:]]
    if rest == [T.PILToTensor] and "__call__" not in vars(steps[k]):
        pass
    elif rest[:1] == [T.ToTensor] and "__call__" not in vars(steps[k]) \
            and (len(rest) == 1 or (rest[1:] == [T.Normalize] and _plain_module(steps[k + 1]))):
        plan.to_float = True
        plan.normalize = steps[k + 1] if len(rest) == 2 else None
    else:
        return None
    if _global_hooks():
        return None
    return plan


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
    """A batch's images, [B, 3, H, W] uint8 (or float), to be written straight into the
    batch's memory: rows of lowered samples (file path and drawn parameters) and rows Python
    computed (tensors). The pickler of a worker places it in the chunk like a stacked tensor
    (``_dl_worker.ShmPickler``); without workers ``tensor()`` makes the batch."""

    __slots__ = ("dataset", "plan", "rows", "shape", "end_state")

    def __init__(self, dataset, plan, rows, shape, end_state):
        self.dataset, self.plan, self.rows, self.shape = dataset, plan, rows, shape
        self.end_state = end_state

    @property
    def dtype(self):
        return self.plan.dtype

    @property
    def nbytes(self):
        n = torch.empty((), dtype=self.dtype).element_size()
        for d in self.shape:
            n *= d
        return n

    def tensor(self):
        t = torch.empty(self.shape, dtype=self.dtype)
        self.write(t.numpy(), 0)
        return t

    def write(self, buf, off):
        """Fills the batch into the writable buffer `buf` from byte `off`. uint8 rows are
        written there by C; float ones (ToTensor) are made from a uint8 row by ToTensor's own
        conversion, then the dataset's Normalize, as the Python path makes them."""
        import numpy as np

        from .. import _sluice

        _, c, h, w = self.shape
        dest = torch.frombuffer(buf, dtype=self.dtype, count=self.nbytes
                                // torch.empty((), dtype=self.dtype).element_size(), offset=off)
        rb = c * h * w
        u8 = np.empty(rb, np.uint8) if self.plan.to_float else None
        for k, row in enumerate(self.rows):
            out = dest[k * rb:(k + 1) * rb].view(c, h, w)
            if row[0] == "t":
                out.copy_(row[1])
                continue
            _, idx, path, (top, left, ch, cw, oh, ow, win), flip, snap = row
            win = win or (0, 0, oh, ow)
            try:
                data = _read(path)
                if u8 is None:
                    _sluice._lower_crop_resize(data, top, left, ch, cw, oh, ow, flip, buf,
                                               off + k * rb, *win)
                else:
                    _sluice._lower_crop_resize(data, top, left, ch, cw, oh, ow, flip, u8, 0,
                                               *win)
                STATS["lowered"] += 1
            except Exception:  # noqa: BLE001 - C refused the file: PIL decides (see above)
                out.copy_(_checked(self.redo(idx, snap), (c, h, w), self.dtype))
                continue
            if u8 is not None:
                out.copy_(self.post(torch.from_numpy(u8).view(c, h, w)))
        self.rows = None

    def post(self, img):
        """ToTensor's conversion of a uint8 CHW image (functional.to_tensor), then the
        dataset's Normalize itself."""
        img = img.to(dtype=torch.get_default_dtype()).div(255)
        return self.plan.normalize(img) if self.plan.normalize is not None else img

    def redo(self, idx, snap):
        """Sample `idx` through the Python path from the generator state before its draws;
        the generator is then put back where the batch left it (if it returns)."""
        STATS["fallback"] += 1
        torch.set_rng_state(snap)
        img = self.dataset[idx][0]
        torch.set_rng_state(self.end_state)
        return img


def _checked(img, chw, dtype):
    if not isinstance(img, torch.Tensor) or img.dtype != dtype or tuple(img.shape) != chw:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(chw)} "
                           f"and {list(getattr(img, 'shape', ()))}")
    return img


HEAD = 64 << 10  # bytes read for a header first (a JPEG's may lie after big APP segments)


def _peek(_sluice, path):
    """(width, height) of a file C decodes exactly as Pillow, else None. The file is read
    again when its pixels are made, so that a batch holds one file's bytes at a time."""
    with open(path, "rb") as f:
        head = f.read(HEAD)
        size = _sluice._lower_peek(head)
        if size is None and len(head) == HEAD:
            size = _sluice._lower_peek(head + f.read())
    return size


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def fetch(plan, dataset, indices, collate_fn):
    """A batch of `indices` of `dataset` (a recognised one, `plan`): [Images, collated
    targets], as default_collate makes [images, targets] of the (image, target) samples.
    Parameters are drawn now, sample by sample; pixels are made by Images.write."""
    from .. import _sluice

    samples, tt = dataset.samples, dataset.target_transform
    h, w = plan.size
    limit = _max_pixels()
    rows, targets = [], []
    for k, idx in enumerate(indices):
        path, target = samples[idx]
        size = None
        try:
            size = _peek(_sluice, path)
        except (OSError, TypeError):
            pass  # the Python path raises the loader's own error
        snap = geom = None
        if size is not None and (limit is None or size[0] * size[1] <= limit):
            snap = torch.get_rng_state()
            geom = plan.geometry(*size)
        if geom is None:
            STATS["python"] += 1
            try:
                img, target = dataset[idx]
            except Exception:
                _first_error(dataset, plan, rows, k)
                raise
            rows.append(("t", _checked(img, (3, h, w), plan.dtype)))
            targets.append(target)
            continue
        flip = False
        for p in plan.flips:
            if torch.rand(1) < p:
                flip = not flip
        if tt is not None:
            try:
                target = tt(target)
            except Exception:
                _first_error(dataset, plan, rows, k)
                raise
        rows.append(("c", idx, path, geom, flip, snap))
        targets.append(target)
    images = Images(dataset, plan, rows, (len(rows), 3, h, w), torch.get_rng_state())
    return [images, collate_fn(targets)]


def _first_error(dataset, plan, rows, k):
    """Sample k raised in Python: a lowered sample before it that fails in C and in PIL too
    raised first on the Python path, so that one is raised (the generator left as the Python
    path leaves it); otherwise the generator is put back as it was when sample k raised."""
    import numpy as np

    from .. import _sluice

    state = torch.get_rng_state()
    images = Images(dataset, plan, None, None, state)
    scratch = np.empty(3 * 8 * 8, np.uint8)
    for row in rows:
        if row[0] != "c":
            continue
        _, idx, path, (top, left, ch, cw, _, _, _), flip, snap = row
        try:  # the decode decides; a small resampling
            _sluice._lower_crop_resize(_read(path), top, left, ch, cw, 8, 8, flip, scratch, 0)
        except Exception:  # noqa: BLE001 - raises PIL's error, or PIL reads it: go on
            images.redo(idx, snap)
    torch.set_rng_state(state)
