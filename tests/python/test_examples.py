"""tests/python/test_examples.py: the scripts in examples/ run, as a user runs them (a separate
/usr/bin/python3 process with the build's package on PYTHONPATH), on the test tree with tiny
settings, and print what they promise. Marked `examples` (deselect with -m "not examples");
together they take a few seconds plus two interpreter starts with torch."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.examples


def run_example(name, *args, timeout=300):
    env = dict(os.environ)
    pkg = str(pathlib.Path(__import__("sluice").__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([pkg] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / name), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(ROOT))
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("fused", [True, False])
def test_train_resnet18(tree, fused):
    out = run_example("train_resnet18.py", tree, "--steps", 3, "--batch-size", 4,
                      "--image-size", 64, "--val-steps", 2, "--threads", 2,
                      *([] if fused else ["--no-fused-crop"]))
    assert "train: 100 images, 25 steps per epoch, batch 4, 64x64" in out
    losses = [float(x) for x in re.findall(r"^step +\d+ +loss ([\d.]+) ", out, re.M)]
    assert len(losses) == 3 and all(0 < x < 100 for x in losses)
    assert re.search(r"^train: 3 steps, 12 images in [\d.]+ s: [\d.]+ images/s$", out, re.M)
    assert re.search(r"^val: top-1 [\d.]+% on 8 images", out, re.M)


def test_train_resnet18_crosses_epochs(tree):
    # 100 images, batch 32: 4 steps per epoch (the last one partial); 6 steps cross into the
    # second epoch through auto_reset
    out = run_example("train_resnet18.py", tree, "--steps", 6, "--batch-size", 32,
                      "--image-size", 32, "--val-steps", 0, "--threads", 2)
    assert "4 steps per epoch" in out
    assert re.search(r"^train: 6 steps, 164 images in ", out, re.M)  # 32 * 3 + 4 + 32 * 2
    assert re.search(r"^val: top-1 [\d.]+% on 100 images", out, re.M)  # PARTIAL: all, once


@pytest.mark.parametrize("workers", [[], ["--workers", 2], ["--workers", 2, "--start-method",
                                                               "spawn"]])
def test_external_source(tree, workers):
    out = run_example("external_source.py", tree, "--batch-size", 16, "--size", 48,
                      "--epochs", 2, *workers)
    for epoch in (0, 1):
        assert f"epoch {epoch}: 7 batches, 100 of 100 files" in out  # the last has 4
    shapes = re.findall(r"resized \[\((\d+), (\d+), 3\)", out)
    assert len(shapes) == 14 and all(min(int(h), int(w)) == 48 for h, w in shapes)


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_imagefolder(tree, workers):
    # a torch.utils.data.DataLoader training script with the import changed: ImageFolder with
    # PIL transforms through sluice's DataLoader
    out = run_example("dataloader_imagefolder.py", tree, "--steps", 3, "--batch-size", 4,
                      "--image-size", 64, "--val-steps", 2, "--workers", workers)
    assert (f"sluice.plugin.pytorch.DataLoader: 100 images, 4 classes, 25 steps per epoch, "
            f"batch 4, 64x64, {workers} workers") in out
    losses = [float(x) for x in re.findall(r"^epoch 0 step +\d+ loss ([\d.]+)$", out, re.M)]
    assert len(losses) == 3 and all(0 < x < 100 for x in losses)
    assert re.search(r"^train: 3 steps, 12 images in [\d.]+ s: [\d.]+ images/s$", out, re.M)
    assert re.search(r"^val: top-1 [\d.]+% on 8 images$", out, re.M)


@pytest.mark.parametrize("workers", [0, 3])
def test_dataloader_shards(workers):
    # an IterableDataset of shards sharded by get_worker_info(): every sample once per epoch
    out = run_example("dataloader_shards.py", "--shards", 5, "--per-shard", 40, "--epochs", 2,
                      "--workers", workers)
    assert f"sluice.plugin.pytorch.DataLoader: 5 shards, {workers} workers, batch 32" in out
    for epoch in (0, 1):
        assert re.search(rf"^epoch {epoch}: 200 samples, 200 distinct, loss [\d.]+, "
                         r"accuracy [\d.]+%$", out, re.M), out
