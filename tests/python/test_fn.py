"""tests/python/test_fn.py: sluice.fn / sluice.ops generated from the C registry, their docs,
and argument checking where an operator is called (errors naming operator, node, argument in
the build's words)."""
import inspect
import json
import subprocess
import os

import pytest

import sluice
from sluice import _sluice, fn, ops, types


def registry():
    return {op["name"]: op for op in _sluice.registry()}


def resolve(root, dotted):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_registered_operator_is_a_function_with_nested_names():
    reg = registry()
    assert {"readers.file", "decoders.image", "random.coin_flip", "crop_mirror_normalize"} <= set(reg)
    for name in reg:
        f = resolve(fn, name)
        assert callable(f), name
    assert fn.readers.file is resolve(fn, "readers.file")
    import sluice.fn.readers  # the namespaces are importable modules

    assert sluice.fn.readers.file is fn.readers.file


def test_doc_lists_every_argument_with_type_and_default():
    for name, op in registry().items():
        doc = resolve(fn, name).__doc__
        assert op["doc"].splitlines()[0] in doc
        for a in op["args"]:
            assert f"\n    {a['name']} ({a['type']}" in doc, (name, a["name"])
            if a["default_json"] is not None:
                assert f"default {a['default_json']}" in doc
            first_doc_line = a["doc"].splitlines()[0] if a["doc"] else ""
            assert first_doc_line in doc


def test_signature_and_help_match_the_registry():
    sig = inspect.signature(fn.random.coin_flip)
    assert sig.parameters["probability"].default == 0.5
    assert sig.parameters["probability"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["dtype"].default == "int32"
    dec = inspect.signature(fn.decoders.image)
    first = next(iter(dec.parameters.values()))
    assert first.kind is inspect.Parameter.POSITIONAL_ONLY
    assert dec.parameters["output_type"].default == "RGB"
    text = fn.decoders.image.__doc__
    assert "one of 'RGB', 'BGR', 'GRAY'" in text
    assert "per-sample" in fn.random.coin_flip.__doc__
    assert "range [0, 1]" in fn.random.coin_flip.__doc__


def test_registry_data_is_the_c_schema():
    op = registry()["random.coin_flip"]
    prob = next(a for a in op["args"] if a["name"] == "probability")
    assert prob == {**prob, "type": "float", "default": 0.5, "per_sample": True,
                    "range": (0.0, 1.0), "required": False}
    assert op["flags"] == ["random"] and op["devices"] == ["cpu"]
    assert len(registry()["readers.file"]["outputs"]) == 2


def cli_message(tmp_path, node):
    """The message `sluice run` prints for a spec with this node (the C build's words)."""
    cli = os.environ.get("SLUICE_CLI")
    if not cli:
        pytest.skip("SLUICE_CLI not set")
    spec = {"nodes": [node], "outputs": [node["name"]]}
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(spec))
    r = subprocess.run([cli, "run", str(p), "--iters", "1", "--quiet"], capture_output=True,
                       text=True)
    assert r.returncode != 0
    return r.stderr


def test_unknown_argument_is_a_type_error_naming_operator_node_and_argument(tmp_path):
    pipe = sluice.Pipeline(batch_size=2)
    with pipe:
        with pytest.raises(TypeError) as e:
            fn.random.coin_flip(probabilty=0.5, name="coin")
    err = e.value
    assert isinstance(err, sluice.ArgumentTypeError) and isinstance(err, sluice.SluiceError)
    assert str(err) == 'random.coin_flip (node "coin"): unknown argument "probabilty"'
    assert (err.operator, err.node, err.code) == ("random.coin_flip", "coin", "SL_EINVAL")
    # the same words as the C build (through the CLI)
    msg = cli_message(tmp_path, {"name": "coin", "op": "random.coin_flip",
                                 "args": {"probabilty": 0.5}})
    assert 'random.coin_flip (node "coin"): unknown argument "probabilty"' in msg


def test_ill_typed_argument_is_a_type_error(tmp_path):
    with sluice.Pipeline(batch_size=2):
        with pytest.raises(TypeError, match=r'decoders\.image \(node "dec"\): argument '
                                            r'"output_type": expected string, got int'):
            fn.decoders.image(fn.readers.file(files=["x"])[0], output_type=3, name="dec")
        with pytest.raises(TypeError, match='argument "probability": expected float, got string'):
            fn.random.coin_flip(probability="half")


def test_bad_value_is_a_value_error_with_the_build_words(tmp_path):
    with sluice.Pipeline(batch_size=2):
        with pytest.raises(ValueError) as e:
            fn.random.coin_flip(probability=1.5, name="coin")
    assert isinstance(e.value, sluice.InvalidArgumentError)
    assert str(e.value) == ('random.coin_flip (node "coin"): argument "probability": value 1.5 '
                            'is out of range [0, 1]')
    msg = cli_message(tmp_path, {"name": "coin", "op": "random.coin_flip",
                                 "args": {"probability": 1.5}})
    assert str(e.value) in msg
    with sluice.Pipeline(batch_size=2):
        with pytest.raises(ValueError, match=r'"XYZ" is not one of RGB\|BGR\|GRAY'):
            fn.decoders.image(fn.readers.file(files=["x"])[0], output_type="XYZ")
        with pytest.raises(ValueError, match="unknown data type"):
            fn.random.coin_flip(dtype="complex64")


def test_inputs_argument_inputs_and_required_arguments_are_checked():
    with sluice.Pipeline(batch_size=2):
        with pytest.raises(TypeError, match=r"expects 1 input, got 0"):
            fn.decoders.image()
        coin = fn.random.coin_flip()
        with pytest.raises(TypeError, match='argument "dtype" does not accept per-sample'):
            fn.random.coin_flip(dtype=coin)
        with pytest.raises(TypeError, match='missing required argument "op"'):
            fn.arithmetic(coin)
        with pytest.raises(TypeError, match="input 0 must be a DataNode"):
            fn.decoders.image("three")


def test_a_failed_call_records_nothing():
    pipe = sluice.Pipeline(batch_size=2)
    with pipe:
        with pytest.raises(TypeError):
            fn.random.coin_flip(nope=1, name="c")
        c = fn.random.coin_flip(name="c")  # the name is still free
    assert [n[0] for n in pipe._graph.nodes] == ["c"]
    assert c.name == "c"


def test_types_enums_convert_to_the_c_values():
    assert types.FLOAT == types.DALIDataType.FLOAT and types.FLOAT.sl_name == "float32"
    assert types.to_arg(types.UINT8) == "uint8" and types.to_arg(types.RGB) == "RGB"
    assert types.to_arg(types.INTERP_LINEAR) == "INTERP_LINEAR"
    assert types.to_arg([types.FLOAT, 1]) == ["float32", 1]
    import numpy as np

    assert types.to_arg(np.float32) == "float32" and types.to_arg(np.array([1, 2])) == [1, 2]
    assert types.to_arg(np.int64(3)) == 3
    pipe = sluice.Pipeline(batch_size=2)
    with pipe:
        pipe.set_outputs(fn.random.coin_flip(dtype=types.UINT8, name="c"))
    assert json.loads(pipe.serialize())["nodes"][0]["args"]["dtype"] == "uint8"
    assert str(types.FLOAT) == "DALIDataType.FLOAT"


def test_device_argument_and_gpu():
    with sluice.Pipeline(batch_size=2):
        with pytest.raises(NotImplementedError, match="operator has no gpu implementation"):
            fn.random.coin_flip(device="gpu")
        with pytest.raises(ValueError, match='unknown device "tpu"'):
            fn.random.coin_flip(device="tpu")
        c = fn.random.coin_flip(device="cpu")
        assert c.device == "cpu" and c.cpu() is c
        with pytest.raises(NotImplementedError, match="CPU-only pipeline"):
            c.gpu()


def test_device_not_given_is_left_to_the_build():
    """Without ``device`` a node runs where its inputs are (the C build's rule); on CPU data that
    is "cpu", sources included, and the spec leaves the device out so that a reader of it
    places the node the same way. A given device is kept."""
    assert inspect.signature(fn.flip).parameters["device"].default is None
    assert "When not given" in fn.flip.__doc__
    assert ops.Flip().device is None and ops.Flip(device="cpu").device == "cpu"
    pipe = sluice.Pipeline(batch_size=2, seed=1)
    with pipe:
        u = fn.random.uniform(shape=[3], name="u")
        f = ops.Flip(horizontal=1)(fn.reshape(u, shape=[1, 3, 1], name="r"), name="f")
        h = f * 0.5
        c = fn.cast(u, dtype=types.FLOAT, device="cpu", name="c")
        pipe.set_outputs(h, c)
    assert [x.device for x in (u, f, h, c)] == ["cpu"] * 4
    nodes = {n["name"]: n for n in json.loads(pipe.serialize())["nodes"]}
    assert "device" not in nodes["u"] and "device" not in nodes["f"]
    assert nodes["c"]["device"] == "cpu"
    assert all(s["device"] == "cpu" for s in pipe.executor_statistics().values())
    out = pipe.run()
    assert out[0].as_array().shape == (2, 1, 3, 1)


def test_ops_classes_record_the_same_nodes():
    pipe = sluice.Pipeline(batch_size=3, seed=7)
    coin = ops.random.CoinFlip(probability=0.5)
    with pipe:
        a = coin(name="a")
        b = fn.random.coin_flip(probability=0.5, name="b")
        pipe.set_outputs(a, b)
    nodes = json.loads(pipe.serialize())["nodes"]
    assert nodes[0]["args"] == nodes[1]["args"] and nodes[0]["op"] == nodes[1]["op"]
    assert ops.decoders.Image.__doc__ == fn.decoders.image.__doc__
    assert ops.CropMirrorNormalize is not None and ops.readers.File is not None
