"""tests/python/test_readers_coco.py: readers.coco on a data set made by tests/data/make_coco.py
(photos with drawn polygons, so boxes, labels and masks are known), against a model of DALI's
rules written here over Python's json: order by image id, category remapping, ltrb, ratio,
size_threshold, include_iscrowd, skip_empty, images, polygon_masks, image_ids, sharding and
shuffling; the drawn colours are checked in the decoded pixels; corrupt annotation files fail
the build naming the file."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

import sluice
from sluice import fn, pipeline_def

ROOT = pathlib.Path(__file__).resolve().parents[2]
N = 9


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    out = tmp_path_factory.mktemp("coco")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests/data/make_coco.py"), str(out),
                    "--n", str(N), "--seed", "3"], check=True)
    with open(out / "instances.json") as f:
        doc = json.load(f)
    return out, doc


def model(doc, ltrb=False, ratio=False, size_threshold=0.1, skip_empty=False,
          include_iscrowd=True, avoid_class_remapping=False, images=None):
    """Expected samples: [(file_name, id, boxes (N, 4), labels (N,), polygons, vertices)]."""
    remap = {}
    for k, c in enumerate(doc["categories"]):
        remap.setdefault(c["id"], k + 1)
    infos = sorted(doc["images"], key=lambda e: e["id"])
    if images is not None:
        by_name = {e["file_name"]: e for e in doc["images"]}
        infos = [by_name[n] for n in images if n in by_name]
    out = []
    for info in infos:
        boxes, labels, polys, verts = [], [], [], []
        for a in doc["annotations"]:
            if a["image_id"] != info["id"]:
                continue
            x, y, w, h = a["bbox"]
            if a.get("iscrowd", 0) and not include_iscrowd:
                continue
            if not (w >= size_threshold and h >= size_threshold):
                continue
            b = [x, y, x + w, y + h] if ltrb else [x, y, w, h]
            sx, sy = (info["width"], info["height"]) if ratio else (1, 1)
            boxes.append([b[0] / sx, b[1] / sy, b[2] / sx, b[3] / sy])
            labels.append(a["category_id"] if avoid_class_remapping
                          else remap.get(a["category_id"], 0))
            seg = a.get("segmentation")
            if isinstance(seg, list):
                for p in seg:
                    start = len(verts)
                    verts += [[p[i] / sx, p[i + 1] / sy] for i in range(0, len(p), 2)]
                    polys.append([len(boxes) - 1, start, len(verts)])
        if skip_empty and not boxes:
            continue
        out.append((info["file_name"], info["id"], np.array(boxes, np.float32).reshape(-1, 4),
                    np.array(labels, np.int32), np.array(polys, np.int32).reshape(-1, 3),
                    np.array(verts, np.float32).reshape(-1, 2)))
    return out


def read(root, batch, iters, **kw):
    @pipeline_def(batch_size=batch, num_threads=2, prefetch_queue_depth=1)
    def p():
        return fn.readers.coco(file_root=str(root / "images"),
                               annotations_file=str(root / "instances.json"), **kw)
    pipe = p()
    res = []
    for _ in range(iters):
        outs = pipe.run()
        for i in range(batch):
            res.append(tuple(np.array(o.at(i)) for o in outs) +
                       (outs[0].source_info(i) if hasattr(outs[0], "source_info") else None,))
    return res


def check(root, got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        name, _, boxes, labels = w[:4]
        with open(root / "images" / name, "rb") as f:
            assert g[0].tobytes() == f.read()
        assert g[1].dtype == np.float32 and g[1].shape == boxes.shape
        np.testing.assert_allclose(g[1], boxes, rtol=1e-6)
        assert g[2].dtype == np.int32 and g[2].shape == (len(labels), 1)
        np.testing.assert_array_equal(g[2][:, 0], labels)


@pytest.mark.parametrize("kw", [
    {}, {"ltrb": True}, {"ratio": True}, {"ltrb": True, "ratio": True},
    {"size_threshold": 2.0}, {"include_iscrowd": False}, {"skip_empty": True},
    {"avoid_class_remapping": True}])
def test_coco_boxes_and_labels(coco, kw):
    root, doc = coco
    want = model(doc, **kw)
    got = read(root, 1, len(want), **kw)
    check(root, got, want)


def test_coco_order_filters_and_remapping_are_real(coco):
    root, doc = coco
    want = model(doc)
    assert [w[1] for w in want] == sorted(w[1] for w in want)  # sorted by id
    assert [e["id"] for e in doc["images"]] != sorted(e["id"] for e in doc["images"])
    assert len(model(doc, skip_empty=True)) == N - 1
    assert sum(len(w[3]) for w in model(doc, size_threshold=2.0)) == \
        sum(len(w[3]) for w in want) - 1
    assert sum(len(w[3]) for w in model(doc, include_iscrowd=False)) == \
        sum(len(w[3]) for w in want) - 1
    assert set(np.concatenate([w[3] for w in want])) <= {1, 2, 3, 4}


def test_coco_polygons_vertices_and_ids(coco):
    root, doc = coco
    want = model(doc, ratio=True)
    got = read(root, 1, len(want), polygon_masks=True, image_ids=True, ratio=True)
    for g, w in zip(got, want):
        assert len(g) == 7  # images, bboxes, labels, polygons, vertices, image_ids (+source)
        np.testing.assert_array_equal(g[3], w[4])
        np.testing.assert_allclose(g[4], w[5], rtol=1e-6)
        np.testing.assert_array_equal(g[5], [w[1]])
        # every polygon's vertices lie in its box (ltrb from xywh)
        for obj, a, b in g[3]:
            x, y, bw, bh = g[1][obj]
            v = g[4][a:b]
            assert np.all(v >= [x - 1e-6, y - 1e-6]) and np.all(v <= [x + bw + 1e-6, y + bh + 1e-6])


def test_coco_images_argument(coco):
    root, doc = coco
    names = ["img_0004.jpg", "img_0001.jpg", "missing.jpg", "img_0007.jpg"]
    want = model(doc, images=names)
    assert len(want) == 3
    check(root, read(root, 1, 3, images=names), want)


def test_coco_drawn_colours_are_where_the_boxes_say(coco):
    root, doc = coco
    colours = {1: (230, 20, 20), 2: (20, 210, 30), 3: (25, 30, 235), 4: (240, 230, 20)}
    n = len(model(doc))

    @pipeline_def(batch_size=1, num_threads=2, prefetch_queue_depth=1)
    def p():
        jpg, boxes, labels, polys, verts = fn.readers.coco(
            file_root=str(root / "images"), annotations_file=str(root / "instances.json"),
            polygon_masks=True, include_iscrowd=False, size_threshold=2.0)
        return fn.decoders.image(jpg), labels, polys, verts
    pipe = p()
    checked = 0
    for _ in range(n):
        img, labels, polys, verts = (np.array(o.at(0)) for o in pipe.run())
        if len(polys) == 0:
            continue
        obj, a, b = polys[-1]  # drawn last: on top
        c = verts[a:b].mean(0)
        px = img[int(c[1]), int(c[0])].astype(int)
        assert np.abs(px - colours[int(labels[obj, 0])]).max() < 40
        checked += 1
    assert checked >= N - 2


def test_coco_sharding_covers_the_epoch_once(coco):
    root, doc = coco
    names = [w[0] for w in model(doc)]
    seen = []
    for shard in range(3):
        got = read(root, 1, len(names) // 3, shard_id=shard, num_shards=3, stick_to_shard=True)
        for g in got:
            seen.append(bytes(g[0][:64]))
    files = [open(root / "images" / n, "rb").read()[:64] for n in names]
    assert sorted(seen) == sorted(files)


def test_coco_shuffle_is_a_permutation(coco):
    root, doc = coco
    want = model(doc)
    got = read(root, 1, len(want), random_shuffle=True, seed=5)
    ids = [int(np.array(g[-2])[0]) for g in read(root, 1, len(want), random_shuffle=True, seed=5,
                                                  image_ids=True)]
    assert sorted(ids) == sorted(w[1] for w in want) and ids != [w[1] for w in want]
    assert len(got) == len(want)


def test_coco_bad_annotations(tmp_path, coco):
    root, doc = coco
    cases = {
        "truncated": json.dumps(doc)[:200],
        "not_object": "[1, 2]",
        "bbox3": json.dumps({**doc, "annotations": [{**doc["annotations"][0],
                                                     "bbox": [1, 2, 3]}]}),
        "images_str": json.dumps({**doc, "images": "x"}),
        "no_file_name": json.dumps({**doc, "images": [{"id": 1}]}),
    }
    for name, text in cases.items():
        f = tmp_path / f"{name}.json"
        f.write_text(text)

        @pipeline_def(batch_size=1, num_threads=1)
        def p():
            return fn.readers.coco(file_root=str(root / "images"), annotations_file=str(f))
        with pytest.raises(sluice.SluiceError, match=rf'readers\.coco.*{name}\.json'):
            p().build()
    with pytest.raises(sluice.SluiceError, match="pixelwise_masks is not supported"):
        @pipeline_def(batch_size=1, num_threads=1)
        def q():
            return fn.readers.coco(file_root=str(root / "images"),
                                   annotations_file=str(root / "instances.json"),
                                   pixelwise_masks=True)
        q().build()
