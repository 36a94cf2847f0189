"""sluice.fn: every operator of the C registry as a function, generated at import.

``fn.readers.file``, ``fn.decoders.image``, ``fn.random.coin_flip``, ``fn.crop_mirror_normalize``
... — one function per registered operator, its dotted name becoming nested namespaces. Each
function's ``__doc__`` and signature come from the registry (every argument with its type,
default, range, choices and whether it may be given per sample), so ``help(fn.resize)`` is the
operator reference. Calling one records a node and returns a DataNode (a tuple of them when
the operator has several outputs): into the pipeline being defined, or, called outside any
pipeline definition, a node of no pipeline yet that a pipeline adopts when its outputs reach
it (sluice.node). Without ``device`` the node runs where its inputs are ("gpu" when one of
them is GPU data, else "cpu": the build's rule, which DataNode.device reports). Constants given
as inputs (numbers, lists, NumPy arrays, types.Constant) become ``constant`` nodes. Arguments
are checked in C where the call is made: an unknown or ill-typed argument raises
``sluice.ArgumentTypeError`` (a TypeError), a bad value ``sluice.InvalidArgumentError`` (a
ValueError), each naming the operator, the node and the argument in the words the build and
the CLI use.
"""
import inspect as _inspect
import sys as _sys
import types as _pytypes

from . import _sluice
from . import node as _node
from . import types as _types
from .data_node import DataNode as _DataNode

_SCHEMAS = {op["name"]: op for op in _sluice.registry()}
_COMMON = ("device", "name")


def _input(op_name, k, x, device):
    """Positional input k as a DataNode: a constant (a number, a list, an array, a
    types.Constant) becomes a constant node, on the GPU for an operator given device="gpu"
    (DALI's rule)."""
    if isinstance(x, _DataNode):
        return x
    try:
        with _node.detached():  # adopted with the node that reads it: a failed call adds none
            return _types.Constant(x, device="gpu" if device == "gpu" else "cpu")
    except TypeError:
        raise TypeError(f"fn.{op_name}: input {k} must be a DataNode (the output of another "
                        "operator) or a constant (a number, a list of numbers, a NumPy array, "
                        f"types.Constant), got {type(x).__name__}") from None


def _num_outputs(schema, args, ninputs):
    """How many outputs a node of the operator has: the schema's outputs whose conditions hold
    (when_inputs, when_arg: random_bbox_crop's optional outputs), or the value of the argument
    that says (num_outputs_arg: python_function's num_outputs, or the length of a list such as
    element_extract's element_map), checked already. The rule is sl__node_num_outputs's
    (src/graph/check.c), read from the same schema data."""
    arg = schema["num_outputs_arg"]
    if arg is None:
        defaults = {a["name"]: a["default"] for a in schema["args"]}

        def on(o):
            if o["when_arg"] is None:
                return True
            value = args.get(o["when_arg"], defaults.get(o["when_arg"]))
            if o.get("when_arg_range") is not None:  # an int argument inside [lo, hi]
                lo, hi = o["when_arg_range"]
                return lo <= int(value) <= hi
            if o["when_arg_unless"] is not None:
                return value != o["when_arg_unless"]
            return bool(value)
        return sum(1 for o in schema["outputs"] if ninputs >= o["when_inputs"] and on(o))
    value = args.get(arg)
    if value is None:
        value = next(a["default"] for a in schema["args"] if a["name"] == arg)
    if isinstance(value, (list, tuple)):  # a list argument: its length (element_extract)
        return len(value)
    if isinstance(value, str):  # one string for a list of them (readers.webdataset's ext)
        return 1
    return int(value)


def _call(op_name, inputs, kwargs):
    """Records one node of operator op_name (into the pipeline being defined, or detached when
    none is: sluice.node); returns its DataNode, or a tuple of them (of any length) when the
    operator has not one output."""
    outs = _call_node(op_name, inputs, kwargs)[1]
    return outs[0] if len(outs) == 1 else outs


def _call_node(op_name, inputs, kwargs):
    """_call's work: returns (the node, a tuple of its DataNodes)."""
    kwargs = dict(kwargs)
    device, name = kwargs.pop("device", None), kwargs.pop("name", None)
    args, arg_inputs = {}, {}
    for key, value in kwargs.items():
        if value is None:
            continue  # DALI: None means "not given"
        if isinstance(value, _DataNode):
            arg_inputs[key] = value
        else:
            args[key] = _types.to_arg(value)
    inputs = [_input(op_name, k, x, device) for k, x in enumerate(inputs)]
    # device None: the C rule places the node from its inputs, now, so the DataNodes report
    # where the build will run them
    schema = _SCHEMAS[op_name]
    node = _node.make(op_name, name, device, inputs, args, arg_inputs, schema["flags"])
    return node, tuple(_DataNode(node, i) for i in range(_num_outputs(schema, args, len(inputs))))


def _is_input_set(x):
    """DALI's multiple input sets: a list or tuple holding DataNodes (a list of numbers is one
    constant input instead)."""
    return isinstance(x, (list, tuple)) and any(isinstance(e, _DataNode) for e in x)


def _call_op(op_name, inputs, kwargs):
    """DALI's multiple input sets: list inputs of equal length call the operator per element."""
    lists = [x for x in inputs if _is_input_set(x)]
    if not lists:
        return _call(op_name, inputs, kwargs)
    n = len(lists[0])
    if any(len(x) != n for x in lists):
        raise ValueError(f"fn.{op_name}: input lists must have the same length")
    return [_call(op_name, [x[i] if _is_input_set(x) else x for x in inputs], kwargs)
            for i in range(n)]


# ---- docs ------------------------------------------------------------------------------------

def _arg_line(a):
    facts = [a["type"]]
    if a["required"]:
        facts.append("required")
    elif a["optional"]:
        facts.append("optional")
    else:
        facts.append(f"default {a['default_json']}")
    if a["per_sample"]:
        facts.append("per-sample: a DataNode gives one value per sample")
    if a["range"]:
        facts.append("range [%g, %g]" % tuple(a["range"]))
    if a["choices"]:
        facts.append("one of " + ", ".join(repr(c) for c in a["choices"]))
    if a["min_len"] or a["max_len"]:
        facts.append(f"length {a['min_len']}..{a['max_len'] or 'any'}")
    if a["scalar_ok"]:
        facts.append("or one value")
    if a.get("auto"):
        facts.append(f'or "auto": the job\'s {a["auto"].replace("_", " ")} '
                     f'(sluice.distributed.{a["auto"]}())')
    return f"{a['name']} ({'; '.join(facts)})"


def _indent(text, prefix="    "):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _make_doc(op):
    """The docstring of fn.<op>: the registry's doc, inputs, outputs and every argument."""
    parts = [op["doc"].strip(), ""]
    if op["inputs"]:
        parts.append("Inputs (positional DataNodes%s):" % (
            "" if op["min_inputs"] == op["max_inputs"]
            else f", {op['min_inputs']} or more" if op["max_inputs"] is None
            else f", {op['min_inputs']} to {op['max_inputs']}"))
        parts += [f"    {i['name']}: {i['doc']}" for i in op["inputs"]]
        parts.append("")
    parts.append("Returns %s:" % ("a DataNode" if len(op["outputs"]) == 1
                                  else f"a tuple of {len(op['outputs'])} DataNodes"))
    parts += [f"    {o['name']}: {o['doc']}" for o in op["outputs"]]
    parts += ["", "Keyword arguments:"]
    for a in op["args"]:
        parts.append("    " + _arg_line(a))
        parts.append(_indent(a["doc"], "        "))
    parts.append("    device (str; optional; one of %s)" % ", ".join(
        repr(d) for d in op["devices"]))
    parts.append("        Where the node runs. When not given: \"gpu\" if one of the inputs is on "
                 "the GPU (the output of a\n        \"mixed\" or \"gpu\" node), else \"cpu\"; "
                 "argument inputs do not count.")
    parts.append("    name (str; optional)")
    parts.append("        The node's name (readers: used by Pipeline.epoch_size/reader_meta and the "
                 "iterators' reader_name); default \"<op>_<k>\".")
    return "\n".join(parts)


def _make_signature(op):
    P = _inspect.Parameter
    params = []
    arg_names = {a["name"] for a in op["args"]} | set(_COMMON)
    for k, i in enumerate(op["inputs"]):
        name = i["name"] + ("_input" if i["name"] in arg_names else "")
        if op["max_inputs"] is None and k == len(op["inputs"]) - 1:  # any number from here on
            params.append(P(name, P.VAR_POSITIONAL))
            break
        default = P.empty if k < op["min_inputs"] else None
        params.append(P(name, P.POSITIONAL_ONLY, default=default))
    for a in op["args"]:
        default = P.empty if a["required"] else (None if a["optional"] else a["default"])
        params.append(P(a["name"], P.KEYWORD_ONLY, default=default))
    params.append(P("device", P.KEYWORD_ONLY, default=None))
    params.append(P("name", P.KEYWORD_ONLY, default=None))
    return _inspect.Signature(params)


def _make_function(op):
    op_name = op["name"]

    def operator(*inputs, **kwargs):
        return _call_op(op_name, inputs, kwargs)

    short = op_name.rsplit(".", 1)[-1]
    operator.__name__ = short
    operator.__qualname__ = op_name
    operator.__module__ = __name__ + ("." + op_name.rsplit(".", 1)[0] if "." in op_name else "")
    operator.__doc__ = _make_doc(op)
    operator.__signature__ = _make_signature(op)
    operator._schema = op
    return operator


def _namespace(root, dotted, modname):
    """The (created on demand) nested module for dotted prefix 'a.b' under root."""
    mod = root
    for part in dotted.split("."):
        child = getattr(mod, part, None)
        if child is None:
            child = _pytypes.ModuleType(f"{mod.__name__}.{part}",
                                        f"Operators {mod.__name__}.{part}.*")
            _sys.modules[child.__name__] = child
            setattr(mod, part, child)
        mod = child
    return mod


def _install(module, make):
    for op in _SCHEMAS.values():
        prefix, _, short = op["name"].rpartition(".")
        target = _namespace(module, prefix, module.__name__) if prefix else module
        setattr(target, short, make(op))


_install(_sys.modules[__name__], _make_function)

from .external_source import external_source  # noqa: E402  (overrides the generated one)
from .python_function import (  # noqa: E402,F401  (the generated one cannot take a function)
    dl_tensor_python_function, python_function)

from . import tfrecord as _tfrecord  # noqa: E402


def _make_tfrecord(op):
    """fn.readers.tfrecord as DALI's: takes `features` (a dict of sluice.tfrecord features),
    passes it to the C operator as its feature_* arguments, returns a dict name -> DataNode."""
    generated = _make_function(op)
    own = ("feature_names", "feature_kinds", "feature_dtypes", "feature_ndims",
           "feature_shapes", "feature_defaults")

    def tfrecord(*inputs, features=None, **kwargs):
        if features is None:
            raise TypeError("fn.readers.tfrecord: the argument `features` is required (a dict "
                            "of name -> sluice.tfrecord.FixedLenFeature / VarLenFeature)")
        given = [k for k in own if kwargs.get(k) is not None]
        if given:
            raise TypeError(f"fn.readers.tfrecord: give `features`, not {given[0]}")
        fargs = _tfrecord._to_args(features)
        if not fargs["feature_shapes"]:
            del fargs["feature_shapes"]
        outs = generated(*inputs, **kwargs, **fargs)
        if isinstance(outs, list):  # multiple input sets: not for a reader
            raise TypeError("fn.readers.tfrecord takes no inputs")
        if not isinstance(outs, tuple):
            outs = (outs,)
        return dict(zip(fargs["feature_names"], outs))

    tfrecord.__name__ = "tfrecord"
    tfrecord.__qualname__ = "readers.tfrecord"
    tfrecord.__module__ = generated.__module__
    tfrecord.__doc__ = (_tfrecord.__doc__ + "\nReturns a dict: feature name -> DataNode.\n\n"
                        "The C operator behind it:\n\n" + generated.__doc__)
    tfrecord._schema = op
    return tfrecord


readers.tfrecord = _make_tfrecord(_SCHEMAS["readers.tfrecord"])  # noqa: F821  (installed above)

external_source.__doc__ += ("\n\nThe C operator behind it (one node per output):\n\n"
                            + _make_doc(_SCHEMAS["external_source"]))
python_function.__doc__ += ("\n\nThe C operator behind it:\n\n"
                            + _make_doc(_SCHEMAS["python_function"]))
