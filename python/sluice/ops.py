"""sluice.ops: DALI's class-style operators, generated from the same registry as sluice.fn.

``ops.Resize(resize_x=224)`` (or ``ops.readers.File(...)``, ``ops.random.CoinFlip(...)``)
makes an operator object holding keyword arguments; calling it on inputs
(``resize(images)``) records a node exactly as ``fn.resize(images, resize_x=224)`` does, with
the call's keyword arguments added. Class names are the CamelCase of the operator's last name
part under the same namespaces as fn (``decoders.image_random_crop`` ->
``ops.decoders.ImageRandomCrop``); ``ops.ExternalSource(source=None, num_outputs=None, ...)``
is DALI's class over fn.external_source (sluice.external_source.ExternalSource), and
``ops.PythonFunction`` / ``ops.DLTensorPythonFunction`` DALI's classes over fn.python_function
and fn.dl_tensor_python_function (sluice.python_function). An argument
goes to the constructor or to the call, not both. Objects may be made anywhere (typically in a
Pipeline subclass's ``__init__``) and called any number of times, each call a node. An
operator made without ``device`` places each node it records from that call's inputs, as fn
does (DALI's ops default to "cpu").
"""
import sys

from . import fn as _fn
from . import external_source as _es
from . import python_function as _pf


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


class _Operator:
    """Base of the generated classes: holds keyword arguments, records a node per call.

    As DALI's: arguments go to the constructor or to the call, not both (ValueError: "The
    argument `x` was already specified in __init__."; None in the call means "not given");
    an object may be called any number of times (in define_graph, in several pipelines), each
    call a new node. The arguments are checked by the call, in C (DALI checks those given to
    the constructor there already).
    """

    _fn = None  # the fn.* function, set per class

    def __init__(self, *, device=None, **kwargs):
        self._kwargs = {k: v for k, v in kwargs.items() if v is not None}
        self._device = device

    @property
    def device(self):
        """The device given, or None: each call then places its node from the inputs."""
        return self._device

    def __call__(self, *inputs, **kwargs):
        merged = dict(self._kwargs)
        for k, v in kwargs.items():
            if v is None:
                continue
            if k in merged or (k == "device" and self._device is not None):
                raise ValueError(f"The argument `{k}` was already specified in __init__.")
            merged[k] = v
        merged.setdefault("device", self._device)
        return type(self)._fn(*inputs, **merged)

    def __repr__(self):
        return f"{type(self).__qualname__}(device={self._device!r}, {self._kwargs})"


def _make_class(op):
    short = op["name"].rpartition(".")[2]
    func = _fn._make_function(op)
    return type(_camel(short), (_Operator,), {
        "_fn": staticmethod(func), "__doc__": func.__doc__,
        "__qualname__": _camel(short), "__module__": __name__,
    })


def _install():
    module = sys.modules[__name__]
    for op in _fn._SCHEMAS.values():
        prefix, _, short = op["name"].rpartition(".")
        target = _fn._namespace(module, prefix, __name__) if prefix else module
        setattr(target, _camel(short), _make_class(op))
    tfr = module.readers.Tfrecord  # DALI's name is TFRecord; its call takes `features`
    del module.readers.Tfrecord
    tfr.__name__ = tfr.__qualname__ = "TFRecord"
    tfr._fn = staticmethod(_fn.readers.tfrecord)
    module.readers.TFRecord = tfr
    module.ExternalSource = _es.ExternalSource  # DALI's class, not the generated one
    module.PythonFunction = _pf.PythonFunction  # DALI's classes, with a Python function
    module.DLTensorPythonFunction = _pf.DLTensorPythonFunction
    module._dlpack_to_array = _pf.dlpack_to_array  # DALI's helpers of the same names
    module._dlpack_from_array = _pf.dlpack_from_array


_install()
