"""tests/python/test_ssd_example.py: examples/ssd_training.py's SSD pipeline (readers.coco ->
decoders.image -> random_bbox_crop -> slice -> resize -> flip / bb_flip ->
crop_mirror_normalize -> box_encoder) on a data set made by tests/data/make_coco.py, with every
box transformation checked against the NumPy models of test_ops_detect.py: the crop's kept and
mapped boxes and labels, the slice against the decoded image, the flip of the boxes, the
anchor encoding; and the script itself runs as a user runs it."""
import importlib.util
import pathlib
import subprocess

import numpy as np
import pytest

from test_examples import run_example
from test_ops_detect import bb_flip_ref, box_encoder_ref, np_kept, np_map

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("ssd")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_coco.py"), str(out),
                    "--n", "10", "--seed", "8"], check=True)
    return out


def load_example():
    spec = importlib.util.spec_from_file_location("ssd_training",
                                                  ROOT / "examples" / "ssd_training.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_box_transformation_matches_numpy(data):
    ex = load_example()
    anchors = np.array(ex.ssd300_anchors(), np.float32).reshape(-1, 4)
    pipe = ex.ssd_pipeline(data, 96, intermediates=True, batch_size=4, num_threads=2, seed=11)
    flips = set()
    for _ in range(4):
        outs = [[np.array(o.at(i)) for i in range(4)] for o in pipe.run()]
        (chw, enc_b, enc_l, boxes, labels, anchor, shape, crop_b, crop_l, flip, flip_b, images,
         cropped) = outs
        for i in range(4):
            # random_bbox_crop: the kept boxes (centres in the window), clipped and relative
            keep = np_kept(anchor[i], shape[i], boxes[i], None)
            assert len(keep) == len(crop_b[i]) > 0
            ref = np.array([np_map(boxes[i][k], anchor[i], shape[i]) for k in keep])
            np.testing.assert_allclose(crop_b[i], ref, atol=1e-6)
            np.testing.assert_array_equal(crop_l[i], labels[i][keep])
            # slice: the decoded image's window (to within the rounding of its ends)
            H, W = images[i].shape[:2]
            y0, x0 = anchor[i][1] * H, anchor[i][0] * W
            assert abs(cropped[i].shape[0] - shape[i][1] * H) <= 1
            assert abs(cropped[i].shape[1] - shape[i][0] * W) <= 1
            ys, xs = int(round(y0)), int(round(x0))
            win = images[i][ys:ys + cropped[i].shape[0], xs:xs + cropped[i].shape[1]]
            np.testing.assert_array_equal(cropped[i], win)
            # bb_flip with the coin the image flip used
            flips.add(int(flip[i]))
            np.testing.assert_allclose(flip_b[i], bb_flip_ref(crop_b[i], True, int(flip[i]), 0),
                                       atol=1e-6)
            # box_encoder: SSD's targets for the flipped boxes
            rb, rl = box_encoder_ref(flip_b[i], crop_l[i], anchors, 0.5, True, [0, 0, 0, 0],
                                     [0.1, 0.1, 0.2, 0.2], 96)
            np.testing.assert_array_equal(enc_l[i], rl)
            np.testing.assert_allclose(enc_b[i], rb, rtol=1e-4, atol=1e-4)
            assert chw[i].shape == (3, 96, 96) and chw[i].dtype == np.float32
    assert flips == {0, 1}


@pytest.mark.examples
def test_ssd_example_runs(data):
    out = run_example("ssd_training.py", data, "--batch-size", 3, "--steps", 2, "--size", 64)
    lines = [s for s in out.splitlines() if s.startswith("step ")]
    assert len(lines) == 2
    for s in lines:
        assert "images (3, 3, 64, 64) float32, boxes (3, 8732, 4), labels (3, 8732)" in s
        assert int(s.split(", ")[-1].split()[0]) > 0  # some anchors matched an object
