"""tests/python/test_dataloader_lower.py: sluice's DataLoader runs a plain torchvision
ImageFolder's RandomResizedCrop + RandomHorizontalFlip + PILToTensor (and Resize / CenterCrop /
ToTensor / Normalize) in C (plugin/_lower.py, _sluice/lower.c), and its batches are
byte-identical to torch.utils.data.DataLoader's (the independent reference: PIL decoding,
torchvision transforming) with the same generator —
without workers and with 2, shuffled, over several epochs, on real photos of mixed sizes
encoded as baseline / progressive / grayscale / CMYK JPEGs and RGB / RGBA / palette / gray /
16-bit PNGs and a BMP, and with corrupt files (the same exception type at the same batch).
Also: which samples took which path (counted), the off switches, and datasets that are not
plain going the Python path.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.utils.data as tud
from PIL import Image

tv = pytest.importorskip("torchvision")
from torchvision import datasets as tvd  # noqa: E402
from torchvision import transforms as T  # noqa: E402
from torchvision.transforms import functional as tvf  # noqa: E402

from sluice.plugin import _lower  # noqa: E402
from sluice.plugin.pytorch import DataLoader  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "data"))
import photos  # noqa: E402


def _save_all(root, corrupt):
    rng = np.random.default_rng(18)
    imgs = photos.load(16, 180, rng)
    a, b = root / "a", root / "b"
    a.mkdir(parents=True)
    b.mkdir()
    for k in range(5):  # baseline JPEGs, mixed chroma subsampling and quality
        Image.fromarray(imgs[k]).save(a / f"base{k}.jpg", quality=70 + 5 * k,
                                      subsampling=k % 3)
    Image.fromarray(imgs[5]).save(a / "prog.jpg", quality=88, progressive=True)
    Image.fromarray(imgs[6]).convert("L").save(a / "gray.jpg", quality=90)
    Image.fromarray(imgs[7]).convert("CMYK").save(a / "cmyk.jpg", quality=90)
    Image.fromarray(imgs[8]).resize((23, 17)).save(a / "tiny.jpg", quality=90)  # < the output
    Image.fromarray(imgs[9]).save(b / "rgb.png")
    Image.fromarray(imgs[10]).convert("RGBA").save(b / "rgba.png")
    Image.fromarray(imgs[11]).convert("P").save(b / "pal.png")
    Image.fromarray(imgs[12]).convert("L").save(b / "gray.png")
    g16 = (np.asarray(Image.fromarray(imgs[13]).convert("L")).astype(np.uint16) * 257)
    Image.fromarray(g16.astype(np.int32), "I").convert("I;16").save(b / "deep16.png")
    Image.fromarray(imgs[14]).save(b / "bitmap.bmp")
    Image.fromarray(imgs[15]).save(b / "rgb2.png", compress_level=1)
    if corrupt:
        good = (a / "base4.jpg").read_bytes()  # its header whole, its data cut
        (a / "trunc.jpg").write_bytes(good[:len(good) * 2 // 5])
        (b / "junk.png").write_bytes(b"this is not an image at all" * 10)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("lower") / "clean"
    _save_all(root, corrupt=False)
    return str(root)


@pytest.fixture(scope="module")
def bad_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("lower") / "bad"
    _save_all(root, corrupt=True)
    return str(root)


def _train_tf(size=(40, 56)):
    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.PILToTensor()])


def _outcomes(loader, epochs):
    """Per epoch, per batch: (images, labels) as NumPy, or the exception's type name."""
    out = []
    for _ in range(epochs):
        it = iter(loader)
        for _ in range(len(loader)):
            try:
                x, y = next(it)
                out.append((x.numpy().copy(), y.numpy().copy()))
            except StopIteration:
                break
            except Exception as e:  # noqa: BLE001 - compared by type
                out.append(type(e).__name__)
        del it
    return out


def _both(ds, epochs=2, **kw):
    """The same loader arguments and generator seed through torch's DataLoader and sluice's."""
    res = []
    for cls in (tud.DataLoader, DataLoader):
        torch.manual_seed(0)
        g = torch.Generator()
        g.manual_seed(1234)
        res.append(_outcomes(cls(ds, generator=g, **kw), epochs))
    return res


def _assert_same(ref, got):
    assert len(ref) == len(got)
    for k, (r, s) in enumerate(zip(ref, got)):
        if isinstance(r, str):
            gave = s if isinstance(s, str) else "a batch"
            assert s == r, f"batch {k}: torch raised {r}, sluice gave {gave}"
            continue
        assert not isinstance(s, str), f"batch {k}: sluice raised {s}"
        assert r[0].dtype == s[0].dtype and r[0].shape == s[0].shape
        np.testing.assert_array_equal(s[0], r[0], err_msg=f"batch {k} images")
        np.testing.assert_array_equal(s[1], r[1], err_msg=f"batch {k} labels")


@pytest.fixture(autouse=True)
def _lowering_on(monkeypatch):
    monkeypatch.delenv(_lower.ENV, raising=False)
    _lower.STATS.clear()


def test_recognised():
    ds = tvd.ImageFolder.__new__(tvd.ImageFolder)
    ds.loader, ds.transform = tvd.folder.default_loader, _train_tf()
    plan = _lower.plan_of(ds)
    assert plan is not None and plan.size == (40, 56) and plan.flips == [0.5]
    ds.transform = T.Compose([T.RandomResizedCrop(32, scale=(0.5, 1)),
                              T.RandomHorizontalFlip(0.2), T.RandomHorizontalFlip(0.9),
                              T.PILToTensor()])
    assert _lower.plan_of(ds).flips == [0.2, 0.9]
    ds.transform = T.Compose([T.Resize(40), T.CenterCrop((30, 36)), T.ToTensor(),
                              T.Normalize((0.4, 0.5, 0.6), (0.2, 0.25, 0.3))])
    plan = _lower.plan_of(ds)
    assert plan.resize == ([40], None) and plan.center == plan.size == (30, 36)
    assert plan.to_float and plan.normalize is ds.transform.transforms[-1]
    ds.transform = T.Compose([T.Resize((20, 30)), T.RandomHorizontalFlip(), T.ToTensor()])
    assert _lower.plan_of(ds).size == (20, 30)
    ds.transform = T.Compose([T.CenterCrop(50), T.PILToTensor()])
    assert _lower.plan_of(ds).size == (50, 50)
    for tf in (T.Compose([T.RandomResizedCrop(32, interpolation=T.InterpolationMode.BICUBIC),
                          T.PILToTensor()]),
               T.Compose([T.RandomResizedCrop(32), T.ColorJitter(0.1), T.PILToTensor()]),
               T.Compose([T.RandomHorizontalFlip(), T.RandomResizedCrop(32), T.ToTensor()]),
               T.Compose([T.Resize(32), T.PILToTensor()]),  # ragged: the shorter side only
               T.Compose([T.Resize(32, interpolation=T.InterpolationMode.NEAREST),
                          T.CenterCrop(32), T.PILToTensor()]),
               T.Compose([T.CenterCrop(32), T.Normalize((0.5,), (0.5,)), T.ToTensor()]),
               T.Compose([T.RandomResizedCrop(32)]), T.PILToTensor(), None):
        ds.transform = tf
        assert _lower.plan_of(ds) is None, tf


@pytest.mark.parametrize("workers", [0, 2])
def test_identical_to_torch(folder, workers):
    ds = tvd.ImageFolder(folder, _train_tf())
    ref, got = _both(ds, epochs=3, batch_size=5, shuffle=True, num_workers=workers)
    _assert_same(ref, got)
    if workers == 0:  # every sample of every epoch went one way or the other, as expected
        n = len(ds)
        python = sum(p.endswith((".bmp", "deep16.png")) for p, _ in ds.samples)
        assert _lower.STATS["python"] == 3 * python
        assert _lower.STATS["lowered"] == 3 * (n - python)
        assert _lower.STATS["fallback"] == 0


def test_identical_square_size_and_flip_probabilities(folder):
    tf = T.Compose([T.RandomResizedCrop(64, scale=(0.3, 0.9), ratio=(0.5, 2.0)),
                    T.RandomHorizontalFlip(0.7), T.RandomHorizontalFlip(0.3), T.PILToTensor()])
    ds = tvd.ImageFolder(folder, tf, target_transform=lambda t: t * 10 + 1)
    ref, got = _both(ds, epochs=2, batch_size=4, shuffle=True, drop_last=True)
    _assert_same(ref, got)
    assert _lower.STATS["lowered"] > 0


@pytest.mark.parametrize("tf", [
    T.Compose([T.Resize(48), T.CenterCrop(40), T.ToTensor(),
               T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]),
    T.Compose([T.Resize(300), T.CenterCrop((120, 90)), T.PILToTensor()]),  # upscaling
    T.Compose([T.Resize(50, max_size=60), T.CenterCrop(44), T.RandomHorizontalFlip(),
               T.PILToTensor()]),
    T.Compose([T.Resize((33, 47)), T.ToTensor()]),
    T.Compose([T.CenterCrop((60, 70)), T.PILToTensor()]),  # pads the tiny image: Python
    T.Compose([T.RandomResizedCrop(36), T.RandomHorizontalFlip(), T.ToTensor(),
               T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))]),
], ids=["val-normalize", "upscale", "max-size-flip", "resize-hw", "center-only",
        "train-normalize"])
def test_identical_other_transforms(folder, tf):
    ds = tvd.ImageFolder(folder, tf)
    ref, got = _both(ds, epochs=2, batch_size=4, shuffle=True)
    _assert_same(ref, got)
    n = len(ds)
    python = 2 * sum(p.endswith((".bmp", "deep16.png")) for p, _ in ds.samples)
    assert _lower.STATS["lowered"] + _lower.STATS["python"] == 2 * n
    # a CenterCrop larger than the (resized) image pads: those samples run in Python
    pads = 0
    for p, _ in ds.samples:
        with Image.open(p) as im:
            w, h = im.size
        for t in tf.transforms:
            if type(t) is T.Resize:
                size = list(t.size) if isinstance(t.size, (list, tuple)) else [t.size]
                h, w = tvf._compute_resized_output_size((h, w), size, t.max_size)
            if type(t) is T.CenterCrop and (t.size[0] > h or t.size[1] > w):
                pads += not p.endswith((".bmp", "deep16.png"))
    assert _lower.STATS["python"] == python + 2 * pads
    if "center-only" in os.environ.get("PYTEST_CURRENT_TEST", ""):
        assert pads > 0


def test_identical_float_batches_with_workers(folder):
    tf = T.Compose([T.Resize(48), T.CenterCrop(40), T.ToTensor(),
                    T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    ref, got = _both(tvd.ImageFolder(folder, tf), epochs=2, batch_size=5, shuffle=True,
                     num_workers=2, persistent_workers=True)
    assert ref[0][0].dtype == np.float32
    _assert_same(ref, got)


@pytest.mark.parametrize("workers", [0, 2])
def test_corrupt_files(bad_folder, workers):
    ds = tvd.ImageFolder(bad_folder, _train_tf())
    ref, got = _both(ds, epochs=2, batch_size=3, shuffle=True, num_workers=workers)
    assert sum(isinstance(r, str) for r in ref) == 4  # two bad files, two epochs
    _assert_same(ref, got)
    if workers == 0:
        assert _lower.STATS["fallback"] == 2  # the truncated JPEG: C refused it, PIL raised
        assert _lower.STATS["python"] == 2 * 3  # bmp, 16-bit PNG and the junk file


def test_first_bad_sample_of_a_batch_is_raised(bad_folder):
    """A batch holding a truncated JPEG (lowered: C refuses it, then PIL raises OSError) before
    a junk file (Python path: UnidentifiedImageError) raises the first one, as the Python path
    does, and the batches after it stay identical (the generator in step)."""
    ds = tvd.ImageFolder(bad_folder, _train_tf())
    names = [os.path.basename(p) for p, _ in ds.samples]
    trunc, junk = names.index("trunc.jpg"), names.index("junk.png")
    batches = [[0, 1], [trunc, 2, junk], [3, 4, 5], [junk, trunc], [6, 7]]
    ref, got = _both(ds, epochs=1, batch_sampler=batches)
    assert ref[1] == "OSError" and ref[3] == "UnidentifiedImageError"
    _assert_same(ref, got)


def _picky_target(t):
    if t == 1:
        raise KeyError(f"no label {t}")
    return t


def test_target_transform_error(bad_folder):
    """target_transform raising (after the transform's draws, as in ImageFolder.__getitem__):
    the same exception at the same batches, unless a bad file before it raised first."""
    ds = tvd.ImageFolder(bad_folder, _train_tf(), target_transform=_picky_target)
    ref, got = _both(ds, epochs=2, batch_size=3, shuffle=True)
    assert "KeyError" in ref
    _assert_same(ref, got)


def test_pil_tolerant_file_is_pils(bad_folder, monkeypatch):
    """A file C refuses but PIL reads (truncated, with LOAD_TRUNCATED_IMAGES) gets PIL's pixels
    and the generator stays in step."""
    from PIL import ImageFile

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    ds = tvd.ImageFolder(bad_folder, _train_tf(),
                         is_valid_file=lambda p: not p.endswith("junk.png"))
    ref, got = _both(ds, epochs=2, batch_size=4, shuffle=True)
    _assert_same(ref, got)
    assert _lower.STATS["fallback"] == 2


def test_off_switches(folder, monkeypatch):
    ds = tvd.ImageFolder(folder, _train_tf())
    g = torch.Generator()

    def run(cls, **kw):
        torch.manual_seed(0)  # the transforms draw from torch's global generator
        g.manual_seed(5)
        return _outcomes(cls(ds, batch_size=6, shuffle=True, generator=g, **kw), 1)

    ref = run(tud.DataLoader)
    _assert_same(ref, run(DataLoader, lower_transforms=False))
    assert not _lower.STATS
    monkeypatch.setenv(_lower.ENV, "0")
    _assert_same(ref, run(DataLoader))
    assert not _lower.STATS
    monkeypatch.setenv(_lower.ENV, "1")
    _assert_same(ref, run(DataLoader))
    assert _lower.STATS["lowered"] > 0


class _Sub(tvd.ImageFolder):
    def __getitem__(self, i):
        img, t = super().__getitem__(i)
        return img, t + 100


def _my_loader(path):
    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")


def _hooked_crop():
    c = T.RandomResizedCrop(40)
    c.register_forward_hook(lambda m, i, o: o.transpose(Image.FLIP_TOP_BOTTOM))
    return c


@pytest.mark.parametrize("make", [
    lambda f: _Sub(f, _train_tf()),
    lambda f: tvd.ImageFolder(f, _train_tf(), loader=_my_loader),
    lambda f: tvd.ImageFolder(f, T.Compose([T.RandomResizedCrop(40), T.RandomVerticalFlip(),
                                            T.PILToTensor()])),
    lambda f: tvd.ImageFolder(f, T.Compose([_hooked_crop(), T.PILToTensor()])),
], ids=["subclass", "custom-loader", "unknown-transform", "hooked-transform"])
def test_not_plain_goes_python(folder, make):
    ds = make(folder)
    ref, got = _both(ds, epochs=1, batch_size=5, shuffle=True, num_workers=0)
    _assert_same(ref, got)
    assert not _lower.STATS


def test_peek_and_entry_point(folder):
    """The C entry point against PIL + torchvision's functional API directly."""
    import torchvision.transforms.functional as F

    from sluice import _sluice

    path = os.path.join(folder, "a", "base2.jpg")
    data = open(path, "rb").read()
    with Image.open(path) as im:
        assert _sluice._lower_peek(data) == im.size
        pil = im.convert("RGB")
    assert _sluice._lower_peek(b"GIF89a" + bytes(40)) is None
    assert _sluice._lower_peek(open(os.path.join(folder, "b", "deep16.png"), "rb").read()) \
        is None
    w, h = pil.size
    out = np.zeros(7 + 3 * 30 * 20, np.uint8)
    for flip in (False, True):
        _sluice._lower_crop_resize(data, 3, 5, h - 9, w - 7, 30, 20, flip, out, 7)
        ref = F.resized_crop(pil, 3, 5, h - 9, w - 7, [30, 20])
        ref = F.pil_to_tensor(F.hflip(ref) if flip else ref).numpy()
        np.testing.assert_array_equal(out[7:].reshape(3, 30, 20), ref)
    with pytest.raises(ValueError):
        _sluice._lower_crop_resize(data, 0, 0, h, w, 30, 20, False, out, 8)
    from sluice.errors import SluiceError
    with pytest.raises(SluiceError, match="JPEG"):
        _sluice._lower_crop_resize(data[:len(data) // 2], 0, 0, h, w, 30, 20, False, out, 0)
    with pytest.raises(SluiceError):
        _sluice._lower_crop_resize(data, 0, 0, h + 1, w, 30, 20, False, out, 0)
