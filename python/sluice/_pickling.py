"""sluice._pickling: how parallel sources reach workers started with ``py_start_method="spawn"``.

Exports ``dumps(obj)`` (``loads`` is ``pickle.loads``). Standard pickle saves functions by
reference (module + qualified name), which fails for lambdas and local functions and is
fragile for functions of ``__main__``; as DALI's default callback pickler does, this one saves
those by value: the code object (``marshal``, the same interpreter runs the workers), the
globals the code names (each pickled in turn: modules by name, other functions by reference or
by value), defaults, closure cells and ``__dict__``. Classes and other objects are pickled as
usual, so a local class still needs ``py_callback_pickler=cloudpickle`` (or dill).
"""
import builtins
import importlib
import io
import marshal
import pickle
import sys
import types


def _by_reference(f):
    """True when pickle can find f again by module and qualified name in another process."""
    if f.__module__ in (None, "__main__") or "<" in f.__qualname__:
        return False
    obj = sys.modules.get(f.__module__)
    for part in f.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is f


def _global_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


_SELF = "__sluice_self__"  # stands for the function itself inside its globals and cells


def _rebuild_function(code, glob, name, qualname, defaults, kwdefaults, cells, fdict, module):
    glob = dict(glob)
    glob.setdefault("__builtins__", builtins)
    glob.setdefault("__name__", module)
    code = marshal.loads(code)
    closure = None
    if cells is not None:
        closure = tuple(types.CellType() if v is _EMPTY else types.CellType(v) for v in cells)
    f = types.FunctionType(code, glob, name, defaults, closure)
    f.__qualname__, f.__kwdefaults__, f.__module__ = qualname, kwdefaults, module
    f.__dict__.update(fdict)
    for k, v in list(glob.items()):
        if isinstance(v, str) and v == _SELF:
            glob[k] = f
    for c in closure or ():
        try:
            if isinstance(c.cell_contents, str) and c.cell_contents == _SELF:
                c.cell_contents = f
        except ValueError:
            pass
    return f


class _Empty:
    def __reduce__(self):
        return (_empty, ())


def _empty():
    return _EMPTY


_EMPTY = _Empty()


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return importlib.import_module, (obj.__name__,)
        if not isinstance(obj, types.FunctionType) or _by_reference(obj):
            return NotImplemented
        glob = {}
        for n in _global_names(obj.__code__):
            if n in obj.__globals__:
                v = obj.__globals__[n]
                glob[n] = _SELF if v is obj else v
        cells = None
        if obj.__closure__ is not None:
            cells = []
            for c in obj.__closure__:
                try:
                    v = c.cell_contents
                except ValueError:
                    v = _EMPTY
                cells.append(_SELF if v is obj else v)
            cells = tuple(cells)
        return _rebuild_function, (marshal.dumps(obj.__code__), glob, obj.__name__,
                                   obj.__qualname__, obj.__defaults__, obj.__kwdefaults__,
                                   cells, dict(obj.__dict__), obj.__module__)


def dumps(obj):
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


loads = pickle.loads
