"""tests/python/test_readers_webdataset.py: readers.webdataset on tar shards written by
tests/data/make_wds.py (Python's tarfile: ustar and pax headers, sub-directories, a directory
entry and a hidden file that belong to no sample) against the writer's model: every output's
bytes and dtype, ';' alternatives, case_sensitive_extensions, missing_component_behavior
(empty, skip, error), dtypes, every sample once per epoch per shard, `sluice wds-index`
(against a reference index written here from tarfile's offsets) and the reader over those index
files, and corrupt or truncated archives failing with errors that name the file."""
import io
import json
import os
import pathlib
import subprocess
import tarfile

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def, types

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARDS, N = 2, 16
CLI = os.environ.get("SLUICE_CLI", str(ROOT / "build/sluice"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("wds")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_wds.py"), str(out),
                    "--shards", str(SHARDS), "--samples", str(N), "--seed", "4"], check=True)
    model = json.loads((out / "model.json").read_text())
    paths = [str(out / f"shard{i}.tar") for i in range(SHARDS)]
    flat = [(paths[s], smp) for s in range(SHARDS) for smp in model[s]]
    return out, paths, flat


def member(smp, exts, cs=True):
    for e in exts.split(";"):
        for k, v in smp["members"].items():
            if k == e or (not cs and k.lower() == e.lower()):
                return v.encode("latin-1")
    return None


def read(paths, batch, iters, ext, **kw):
    @pipeline_def(batch_size=batch, num_threads=2, prefetch_queue_depth=1)
    def p():
        out = fn.readers.webdataset(paths=paths, ext=ext, name="r", **kw)
        return out if isinstance(out, tuple) else (out,)
    pipe = p()
    res = []
    for _ in range(iters):
        outs = pipe.run()
        for i in range(batch):
            res.append([np.array(o.at(i)) for o in outs])
    return res, pipe


def test_outputs_match_the_writer(data):
    _, paths, flat = data
    ext = ["jpg;JPG", "cls", "f32", "seg.png"]
    got, pipe = read(paths, 4, N // 4, ext)
    assert pipe.epoch_size("r") == N
    for g, (_, smp) in zip(got, flat):
        for o, e in enumerate(ext):
            want = member(smp, e) or b""
            assert g[o].dtype == np.uint8 and g[o].ndim == 1
            assert g[o].tobytes() == want, (smp["key"], e)


def test_case_insensitive_and_dtypes(data):
    _, paths, flat = data
    got, _ = read(paths, N, 1, ["jpg", "f32"], case_sensitive_extensions=False,
                  dtypes=[types.UINT8, types.FLOAT])
    for g, (_, smp) in zip(got, flat):
        assert g[0].tobytes() == member(smp, "jpg", cs=False)
        want = np.frombuffer(member(smp, "f32"), np.float32)
        assert g[1].dtype == np.float32
        np.testing.assert_array_equal(g[1], want)
    got, _ = read(paths, N, 1, "jpg")  # a single string: one output, case-sensitive
    for g, (_, smp) in zip(got, flat):
        assert g[0].tobytes() == (member(smp, "jpg") or b"")


def test_missing_component_behavior(data):
    _, paths, flat = data
    keep = [smp for _, smp in flat if member(smp, "cls") is not None]
    assert 0 < len(keep) < N
    got, pipe = read(paths, len(keep), 1, ["cls"], missing_component_behavior="skip")
    assert pipe.epoch_size("r") == len(keep)
    assert [g[0].tobytes() for g in got] == [member(s, "cls") for s in keep]
    with pytest.raises(sluice.SluiceError, match=r"shard\d\.tar.*has no member.*cls"):
        read(paths, 1, 1, ["cls"], missing_component_behavior="error")
    with pytest.raises(sluice.SluiceError):
        read(paths, 1, 1, ["cls"], missing_component_behavior="sometimes")


@pytest.mark.parametrize("shards", [1, 2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_each_sample_once_per_epoch_per_shard(data, shards, shuffle):
    _, paths, flat = data
    seen = []
    for s in range(shards):
        lo, hi = N * s // shards, N * (s + 1) // shards
        got, _ = read(paths, hi - lo, 1, ["jpg;JPG"], num_shards=shards, shard_id=s,
                      random_shuffle=shuffle, seed=3, stick_to_shard=True)
        seen += [g[0].tobytes() for g in got]
    want = [member(smp, "jpg;JPG") for _, smp in flat]
    assert sorted(seen) == sorted(want)
    if not shuffle:
        assert seen == want


def reference_index(path):
    """DALI's wds2idx v1.2 lines, written here from tarfile's member offsets."""
    lines, last = [], None
    with tarfile.open(path) as t:
        for m in t:
            if not m.isreg():
                continue
            base = m.name.rsplit("/", 1)[-1]
            dot = base.find(".")
            if dot <= 0 or dot == len(base) - 1:  # no key, or no extension
                continue
            key = m.name[:len(m.name) - len(base) + dot]
            comp = f"{base[dot + 1:]} {m.offset_data} {m.size} {m.name}"
            if key != last:
                lines.append([comp])
                last = key
            else:
                lines[-1].append(comp)
    return f"v1.2 {len(lines)}\n" + "".join(" ".join(c) + "\n" for c in lines)


def test_wds_index_and_reading_through_it(data, tmp_path):
    _, paths, flat = data
    idx = []
    for i, p in enumerate(paths):
        f = tmp_path / f"{i}.idx"
        subprocess.run([CLI, "wds-index", p, str(f)], check=True, capture_output=True)
        assert f.read_text() == reference_index(p)
        idx.append(str(f))
    ext = ["jpg;JPG", "cls", "f32"]
    got, _ = read(paths, N, 1, ext, index_paths=idx)
    for g, (_, smp) in zip(got, flat):
        for o, e in enumerate(ext):
            assert g[o].tobytes() == (member(smp, e) or b"")


def test_member_with_an_empty_extension(tmp_path):
    """A member named "k1." (nothing after its dot: fuzz finding, tests/fuzz/regressions/wds)
    belongs to no sample, read over the tar's headers as over its index: `sluice wds-index`
    writes no line for it (the format cannot hold an empty extension) and both ways give the
    same samples."""
    tar = tmp_path / "e.tar"
    members = [("d/k0.cls", b"0"), ("d/k1.", b"only"), ("d/k2.cls", b"2"), ("d/k2.", b"x"),
               ("d/k3.cls", b"3")]
    with tarfile.open(tar, "w", format=tarfile.USTAR_FORMAT) as t:
        for name, body in members:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            t.addfile(info, io.BytesIO(body))
    idx = tmp_path / "e.idx"
    subprocess.run([CLI, "wds-index", str(tar), str(idx)], check=True, capture_output=True)
    assert idx.read_text() == reference_index(str(tar))
    assert idx.read_text().splitlines()[0] == "v1.2 3"
    by_headers, _ = read([str(tar)], 3, 1, "cls")
    by_index, _ = read([str(tar)], 3, 1, "cls", index_paths=[str(idx)])
    assert [g[0].tobytes() for g in by_headers] == [b"0", b"2", b"3"]
    assert [g[0].tobytes() for g in by_index] == [b"0", b"2", b"3"]


def test_corrupt_archives_and_indexes(data, tmp_path):
    _, paths, _ = data
    blob = pathlib.Path(paths[0]).read_bytes()
    bad = tmp_path / "bad.tar"
    bad.write_bytes(blob[:1024 + 100])  # cut inside a member
    with pytest.raises(sluice.SluiceError, match=r"bad\.tar.*(truncated|past the end)"):
        read([str(bad)], 1, 1, ["jpg"])
    r = subprocess.run([CLI, "wds-index", str(bad), str(tmp_path / "o.idx")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "bad.tar" in r.stderr
    assert not (tmp_path / "o.idx").exists()
    b = bytearray(blob)
    b[512 + 124] ^= 0x7  # a size digit of the second header: its checksum no longer holds
    bad.write_bytes(bytes(b))
    with pytest.raises(sluice.SluiceError, match=r"bad\.tar.*offset 512.*checksum"):
        read([str(bad)], 1, 1, ["jpg"])
    huge = bytearray(blob[:512])
    huge[124:136] = b"77777777777\0"  # 8 GiB - 1 in a 1 KiB archive
    huge[148:156] = b"        "
    huge[148:156] = ("%06o\0 " % sum(huge)).encode()
    bad.write_bytes(bytes(huge) + bytes(512))
    with pytest.raises(sluice.SluiceError, match=r"bad\.tar.*offset 0.*past the end"):
        read([str(bad)], 1, 1, ["jpg"])
    idx = tmp_path / "i.idx"
    idx.write_text("v1.2 1\njpg 999999999 5 a.jpg\n")
    with pytest.raises(sluice.SluiceError, match=r"i\.idx.*line 2"):
        read([paths[0]], 1, 1, ["jpg"], index_paths=[str(idx)])
    idx.write_text("v9 1\n")
    with pytest.raises(sluice.SluiceError, match=r"i\.idx.*line 1"):
        read([paths[0]], 1, 1, ["jpg"], index_paths=[str(idx)])
    idx.write_text("v1.2 2\njpg 0 5 a.jpg\n")
    with pytest.raises(sluice.SluiceError, match=r"declares 2 samples"):
        read([paths[0]], 1, 1, ["jpg"], index_paths=[str(idx)])
    # a sample whose f32 member is not a multiple of 8 bytes fails its iteration
    with pytest.raises(sluice.SluiceError, match=r"not a whole number of int64"):
        read([paths[0]], N // SHARDS, 1, ["f32"], dtypes=types.INT64)
