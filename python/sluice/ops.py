"""sluice.ops: DALI's class-style operators, generated from the same registry as sluice.fn.

``ops.Resize(resize_x=224)`` (or ``ops.readers.File(...)``, ``ops.random.CoinFlip(...)``)
makes an operator object holding keyword arguments; calling it on inputs
(``resize(images)``) records a node exactly as ``fn.resize(images, resize_x=224)`` does, with
the call's keyword arguments added. Class names are the CamelCase of the operator's last name
part under the same namespaces as fn (``decoders.image_random_crop`` ->
``ops.decoders.ImageRandomCrop``); ``ops.ExternalSource`` wraps fn.external_source. An
operator made without ``device`` places each node it records from that call's inputs, as fn
does.
"""
import sys

from . import fn as _fn


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


class _Operator:
    """Base of the generated classes: stores keyword arguments, records a node per call."""

    _fn = None  # the fn.* function, set per class

    def __init__(self, *, device=None, **kwargs):
        self._kwargs = dict(kwargs, device=device)

    @property
    def device(self):
        """The device given, or None: each call then places its node from the inputs."""
        return self._kwargs["device"]

    def __call__(self, *inputs, **kwargs):
        return type(self)._fn(*inputs, **{**self._kwargs, **kwargs})

    def __repr__(self):
        return f"{type(self).__qualname__}({self._kwargs})"


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
    module.ExternalSource = type("ExternalSource", (_Operator,), {
        "_fn": staticmethod(_fn.external_source), "__doc__": _fn.external_source.__doc__,
        "__module__": __name__})


_install()
