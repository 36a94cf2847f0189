"""tests/python/test_readers_coco.py: readers.coco on a data set made by tests/data/make_coco.py
(photos with drawn polygons, so boxes, labels and masks are known), against a model of DALI's
rules written here over Python's json: order by image id, category remapping, ltrb, ratio,
size_threshold, include_iscrowd, skip_empty, images, polygon_masks, image_ids, sharding and
shuffling; the drawn colours are checked in the decoded pixels; corrupt annotation files fail
the build naming the file. pixelwise_masks are checked against references written here: a
NumPy even-odd fill sampled at pixel centres, PIL's ImageDraw.polygon (which also fills the
pixels its outline touches, so it differs on the right/bottom edge), hand-computed rectangles
and an RLE decoder/encoder written from the COCO format's definition."""
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


# ---- pixelwise_masks -----------------------------------------------------------------------

def rle_decode(counts, h, w):
    """COCO's RLE: run lengths over the column-major pixels, alternating 0 and 1, from 0."""
    flat = np.zeros(h * w, np.uint8)
    at = 0
    for k, n in enumerate(counts):
        if k % 2:
            flat[at:at + n] = 1
        at += n
    return flat.reshape((w, h)).T


def rle_string_decode(s):
    """COCO's compressed counts: 5-bit groups as chr(48 + g), 0x20 = more, 0x10 of the last
    group = sign; counts from the fourth on are differences to the one two before."""
    counts, p = [], 0
    while p < len(s):
        x, k, more = 0, 0, True
        while more:
            g = ord(s[p]) - 48
            x |= (g & 0x1F) << (5 * k)
            more = bool(g & 0x20)
            p += 1
            k += 1
            if not more and g & 0x10:
                x -= 1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


def rle_string_encode(counts):
    out = []
    for i, c in enumerate(counts):
        x = c - counts[i - 2] if i > 2 else c
        while True:
            g = x & 0x1F
            x >>= 5
            more = not ((x == 0 and not g & 0x10) or (x == -1 and g & 0x10))
            out.append(chr(48 + (g | (0x20 if more else 0))))
            if not more:
                break
    return "".join(out)


def rle_encode(mask):
    flat = np.asarray(mask, np.uint8).flatten(order="F")
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(flat)) + 1, [flat.size]])
    runs = np.diff(bounds).tolist()
    return [0] + runs if flat[0] else runs


def centre_fill(poly, h, w):
    """Even-odd fill sampled at pixel centres (x + 0.5, y + 0.5), and each centre's distance to
    the outline."""
    xy = np.asarray(poly, np.float64).reshape(-1, 2)
    px, py = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    inside = np.zeros((h, w), bool)
    dist = np.full((h, w), np.inf)
    for (x0, y0), (x1, y1) in zip(xy, np.roll(xy, -1, axis=0)):
        crosses = (y0 > py) != (y1 > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
        inside ^= crosses & (px < xc)
        d = np.array([x1 - x0, y1 - y0])
        t = np.clip(((px - x0) * d[0] + (py - y0) * d[1]) / max(d @ d, 1e-12), 0, 1)
        dist = np.minimum(dist, np.hypot(px - x0 - t * d[0], py - y0 - t * d[1]))
    return inside, dist


def pil_fill(poly, h, w):
    from PIL import Image, ImageDraw
    m = Image.new("L", (w, h), 0)
    ImageDraw.Draw(m).polygon([tuple(p) for p in np.asarray(poly).reshape(-1, 2)], fill=1)
    return np.array(m).astype(bool), centre_fill(poly, h, w)[1]


def expected_objects(doc, info, size_threshold=0.1, include_iscrowd=True):
    """[(label, segmentation)] of the image's kept objects, DALI's filters and remapping."""
    remap = {}
    for k, c in enumerate(doc["categories"]):
        remap.setdefault(c["id"], k + 1)
    out = []
    for a in doc["annotations"]:
        if a["image_id"] != info["id"] or (a.get("iscrowd", 0) and not include_iscrowd):
            continue
        if not (a["bbox"][2] >= size_threshold and a["bbox"][3] >= size_threshold):
            continue
        out.append((remap.get(a["category_id"], 0), a.get("segmentation")))
    return out


def reference_masks(objs, h, w, fill):
    """The mask from references: labels drawn in ascending order, a larger one over a smaller;
    also each pixel centre's distance to the nearest polygon outline."""
    mask = np.zeros((h, w), np.int32)
    near = np.full((h, w), np.inf)
    for label, seg in sorted(objs, key=lambda o: o[0]):
        if isinstance(seg, dict):
            counts = seg["counts"]
            if isinstance(counts, str):
                counts = rle_string_decode(counts)
            mask[rle_decode(counts, h, w).astype(bool)] = label
        elif seg:
            for poly in seg:
                inside, dist = fill(poly, h, w)
                mask[inside] = label
                near = np.minimum(near, dist)
    return mask, near


def read_masks(root, annotations, iters, **kw):
    @pipeline_def(batch_size=1, num_threads=2, prefetch_queue_depth=1)
    def p():
        _, boxes, labels, masks, ids = fn.readers.coco(
            file_root=str(root / "images"), annotations_file=str(annotations),
            pixelwise_masks=True, image_ids=True, **kw)
        return masks, ids, labels
    pipe = p()
    out = []
    for _ in range(iters):
        masks, ids, labels = pipe.run()
        assert masks.layout() == "HWC"
        out.append((np.array(masks.at(0)), int(np.array(ids.at(0))[0]),
                    np.array(labels.at(0)).reshape(-1)))
    return out


def test_coco_pixelwise_masks_match_references(coco):
    root, doc = coco
    infos = sorted(doc["images"], key=lambda e: e["id"])
    got = read_masks(root, root / "instances.json", len(infos))
    by_id = {e["id"]: e for e in infos}
    drawn = pil_differs = 0
    for mask, image_id, labels in got:
        info = by_id[image_id]
        h, w = info["height"], info["width"]
        assert mask.dtype == np.int32 and mask.shape == (h, w, 1)
        mask = mask[:, :, 0]
        objs = expected_objects(doc, info)
        assert set(np.unique(mask)) - {0} <= set(l for l, s in objs if s)
        # pixel-centre reference: equal except where an outline passes within 0.5 px of a
        # centre (COCO's rasteriser works on a 1/5 pixel grid)
        ref, dist = reference_masks(objs, h, w, centre_fill)
        diff = mask != ref
        assert not np.any(diff & (dist >= 0.5)), np.argwhere(diff & (dist >= 0.5))[:5]
        assert diff.sum() <= 0.1 * max(1, (dist < 0.5).sum())
        # PIL samples pixel corners and also fills the pixels its outline touches (so the
        # right and bottom edges): equal away from the outlines
        pil, _ = reference_masks(objs, h, w, pil_fill)
        assert not np.any((mask != pil) & (dist >= 1.5))
        pil_differs += int((mask != pil).sum())
        drawn += int((mask > 0).sum())
    assert drawn > 1000 and pil_differs > 0  # the two conventions differ, on the outlines
    # the crowd object (an uncompressed RLE) is in image 0's mask
    crowd = [a for a in doc["annotations"] if a["iscrowd"]][0]
    m0 = next(m for m, i, _ in got if i == crowd["image_id"])[:, :, 0]
    info = by_id[crowd["image_id"]]
    rle = rle_decode(crowd["segmentation"]["counts"], info["height"], info["width"]).astype(bool)
    assert rle.sum() > 20 and np.all(m0[rle] >= 3)  # blue (label 3) or yellow (4) over it


def write_doc(tmp_path, images, annotations, categories=((1, "a"), (2, "b"), (5, "c"))):
    doc = {"images": images, "annotations": annotations,
           "categories": [{"id": i, "name": n} for i, n in categories]}
    f = tmp_path / "masks.json"
    f.write_text(json.dumps(doc))
    return f


def rect(x0, y0, x1, y1):
    return [x0, y0, x1, y0, x1, y1, x0, y1]


def ann(image_id, cat, seg, bbox=(0, 0, 5, 5), iscrowd=0):
    return {"image_id": image_id, "category_id": cat, "bbox": list(bbox), "iscrowd": iscrowd,
            "segmentation": seg}


def test_coco_pixelwise_masks_hand_computed(tmp_path, coco):
    root, _ = coco
    h, w = 12, 10
    crowd = np.zeros((h, w), bool)
    crowd[0:3, 0] = True  # first pixel set: the counts start with a 0-long background run
    crowd[5:9, 6:8] = True
    anns = [
        ann(1, 1, [rect(1, 2, 5, 6), rect(7, 1, 9, 3)]),  # one object, two polygons (union)
        ann(1, 5, [rect(3, 4, 8, 9)]),                   # category 5 = label 3: over label 1
        ann(1, 2, {"size": [h, w], "counts": rle_encode(crowd)}, iscrowd=1),
        ann(1, 1, [rect(0, 10, 10, 12)], bbox=(0, 10, 10, 0.05)),  # below size_threshold
        ann(2, 2, {"size": [h, w], "counts": rle_string_encode(rle_encode(crowd))}),
    ]
    images = [{"id": 1, "file_name": "img_0000.jpg", "width": w, "height": h},
              {"id": 2, "file_name": "img_0001.jpg", "width": w, "height": h},
              {"id": 3, "file_name": "img_0002.jpg", "width": w, "height": h}]
    f = write_doc(tmp_path, images, anns)
    want = np.zeros((h, w), np.int32)
    want[2:6, 1:5] = 1  # [x0, x1) x [y0, y1): the pixels whose centres are inside
    want[1:3, 7:9] = 1
    want[crowd] = 2
    want[4:9, 3:8] = 3
    for kw in ({}, {"ratio": True}):  # masks are in pixels whatever ratio says (as DALI)
        got = read_masks(root, f, 3, **kw)
        np.testing.assert_array_equal(got[0][0][:, :, 0], want)
        np.testing.assert_array_equal(got[0][2], [1, 3, 2])
        np.testing.assert_array_equal(got[1][0][:, :, 0], np.where(crowd, 2, 0))
        assert got[2][0].shape == (h, w, 1) and not got[2][0].any()  # no objects: background
    got = read_masks(root, f, 1, include_iscrowd=False)
    np.testing.assert_array_equal(got[0][0][:, :, 0], np.where(crowd & (want == 2), 0, want))


def test_coco_rle_string_codec_by_hand():
    # '3' = 3, '5' = 5, '2' = 2; 'T3' = 4 | 3 << 5 = 100 (0x20 in 'T' says more); 'N' = -2,
    # added to the count two places before
    assert rle_string_decode("352") == [3, 5, 2]
    assert rle_string_decode("3T32N") == [3, 100, 2, 98]
    assert rle_string_encode([3, 100, 2, 98]) == "3T32N"
    assert rle_encode(rle_decode([0, 2, 3, 1], 3, 2)) == [0, 2, 3, 1]


def test_coco_pixelwise_masks_compressed_rle_by_hand(tmp_path, coco):
    root, _ = coco
    # 3 x 2 image, column-major runs: 1 background, 2 set, 2 background, 1 set: "1", "2",
    # "2", then 1 - 2 = -1 (a difference to the second count): 31 = 0x1f, sign set, "O"
    f = write_doc(tmp_path, [{"id": 1, "file_name": "img_0000.jpg", "width": 2, "height": 3}],
                  [ann(1, 5, {"size": [3, 2], "counts": "122O"})])
    got = read_masks(root, f, 1)
    np.testing.assert_array_equal(got[0][0][:, :, 0], [[0, 0], [3, 0], [3, 3]])


@pytest.mark.parametrize("case,match", [
    ("size", "size"), ("counts_long", "runs"), ("bad_char", "character"),
    ("truncated", "ends inside"), ("no_counts", "counts"), ("no_width", "width"),
    ("far_vertex", "coordinates")])
def test_coco_pixelwise_masks_bad_input(tmp_path, coco, case, match):
    root, _ = coco
    img = {"id": 1, "file_name": "img_0000.jpg", "width": 4, "height": 3}
    seg = {"size": [3, 4], "counts": [2, 3, 7]}
    if case == "size":
        seg = {"size": [4, 3], "counts": [12]}
    elif case == "counts_long":
        seg = {"size": [3, 4], "counts": [2, 3, 8]}
    elif case == "bad_char":
        seg = {"size": [3, 4], "counts": "12 "}
    elif case == "truncated":
        seg = {"size": [3, 4], "counts": "1T"}
    elif case == "no_counts":
        seg = {"size": [3, 4]}
    elif case == "no_width":
        img = {"id": 1, "file_name": "img_0000.jpg", "height": 3}
    elif case == "far_vertex":
        seg = [[0, 0, 1e9, 0, 1, 1]]
    f = write_doc(tmp_path, [img], [ann(1, 1, seg)])

    @pipeline_def(batch_size=1, num_threads=1)
    def p():
        return fn.readers.coco(file_root=str(root / "images"), annotations_file=str(f),
                               pixelwise_masks=True)
    with pytest.raises(sluice.SluiceError, match=rf"readers\.coco.*masks\.json.*{match}"):
        p().build()


def test_coco_pixelwise_and_polygon_masks_are_exclusive(coco):
    root, _ = coco

    @pipeline_def(batch_size=1, num_threads=1)
    def p():
        return fn.readers.coco(file_root=str(root / "images"),
                               annotations_file=str(root / "instances.json"),
                               pixelwise_masks=True, polygon_masks=True)
    with pytest.raises(sluice.SluiceError, match="mutually exclusive"):
        p().build()
