"""tests/python/test_graph_picture.py: Pipeline.graph(), the picture of a pipeline's graph.

The text is the C library's (sl_pipeline_write_dot), so it must equal what `sluice graph`
prints for the pipeline's serialized spec, byte for byte; its content is checked by hand here
(nodes kept, pruned node absent, argument input dashed, fused chain grouped), the way the C test
test_dot checks the writer itself. Drawing to .svg needs Graphviz's dot command
(scripts/setup.sh installs graphviz); without it that test is skipped, saying why.
"""
import os
import re
import shutil
import subprocess

import pytest

import sluice
from sluice import fn, pipeline_def, types


@pipeline_def(batch_size=2, num_threads=1, seed=7)
def augment(root):
    jpegs, labels = fn.readers.file(file_root=root, name="reader")
    images = fn.decoders.image(jpegs, output_type=types.RGB, name="dec")
    images = fn.flip(images, name="flip")
    fn.random.uniform(range=[0, 1], name="unused")  # no output needs it: pruned
    images = fn.crop_mirror_normalize(images, crop=(8, 8), name="cmn",
                                      mirror=fn.random.coin_flip(name="coin"))
    return images, labels


def _nodes(text):
    """{name: (id, label as written)} of the node statements."""
    return {m.group(2).split("\\n")[0]: (m.group(1), m.group(2))
            for m in re.finditer(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)"', text, re.M)}


def _edges(text):
    return re.findall(r"^\s*(n\d+) -> ((?:n|out)\d+)(?: \[(.*)\])?;$", text, re.M)


def test_the_picture_shows_the_plan():
    pipe = augment("/nonexistent")  # drawing reads no file
    text = pipe.graph()
    nodes = _nodes(text)
    assert set(nodes) == {"reader", "dec", "flip", "coin", "cmn"}
    assert nodes["cmn"][1] == "cmn\\ncrop_mirror_normalize\\ncpu"
    assert '// pruned (no output needs them): "unused"' in text
    ids = {i: name for name, (i, _) in nodes.items()}
    named = sorted((ids[a], ids.get(b, b), attrs) for a, b, attrs in _edges(text))
    assert named == sorted([
        ("reader", "dec", 'label="0"'), ("dec", "flip", ""), ("flip", "cmn", ""),
        ("coin", "cmn", 'style=dashed, label="mirror"'), ("cmn", "out0", ""),
        ("reader", "out1", 'label="1"')])
    cluster = re.search(r"subgraph (cluster_fused_\d+) \{\n(.*?)\n    \}", text, re.S)
    assert cluster, text
    assert set(_nodes(cluster.group(2))) == {"dec", "flip", "cmn"}
    unfused = augment("/nonexistent", fuse_samples=False).graph()
    assert "subgraph" not in unfused and _edges(unfused) == _edges(text)


def test_drawing_does_not_build_and_matches_the_built_pipeline(tree):
    pipe = augment(str(tree))
    before = pipe.graph()
    assert pipe._pipe is None  # not built: no file listed, no thread started
    pipe.run()
    assert pipe.graph() == before


def test_the_text_is_the_clis_for_the_serialized_spec(tmp_path):
    cli = os.environ.get("SLUICE_CLI")
    if not cli:
        pytest.skip("SLUICE_CLI not set (run through ctest)")
    pipe = augment("/nonexistent")
    spec = tmp_path / "p.json"
    pipe.serialize(filename=str(spec))
    r = subprocess.run([cli, "graph", str(spec)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == pipe.graph()


def test_a_graph_the_build_rejects_raises_the_builds_error():
    spec = ('{"nodes": [{"name": "coin", "op": "random.coin_flip", '
            '"args": {"probability": 2.5}}], "outputs": ["coin"]}')  # read unchecked
    with pytest.raises(sluice.InvalidArgumentError, match=r'\(node "coin"\).*out of range'):
        sluice.Pipeline.deserialize(spec).graph()
    with pytest.raises(sluice.InvalidArgumentError, match=r'\(node "coin"\).*out of range'):
        sluice.Pipeline.deserialize(spec).build()


def test_writing_dot_and_bad_suffixes(tmp_path):
    pipe = augment("/nonexistent")
    text = pipe.graph(tmp_path / "p.dot")
    assert (tmp_path / "p.dot").read_text() == text
    assert pipe.graph(str(tmp_path / "p.gv")) == text and (tmp_path / "p.gv").read_text() == text
    with pytest.raises(ValueError, match="the suffix says the format"):
        pipe.graph(tmp_path / "p.jpg")
    assert not (tmp_path / "p.jpg").exists()


def test_drawing_without_graphviz_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot there
    with pytest.raises(RuntimeError, match="install Debian's graphviz package"):
        augment("/nonexistent").graph(tmp_path / "p.svg")
    assert not (tmp_path / "p.svg").exists()


def test_svg_is_drawn_by_graphviz(tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (scripts/setup.sh installs graphviz)")
    path = tmp_path / "p.svg"
    augment("/nonexistent").graph(path)
    svg = path.read_text()
    assert svg.startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    for shown in ("crop_mirror_normalize", "readers.file", "mirror", "output 1"):
        assert shown in svg
