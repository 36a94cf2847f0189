"""sluice.subscript: indexing DataNodes per sample (``x[10:20, :, 0]``, ``x[..., ::-1]``).

An index applies to every sample with NumPy's basic-indexing rules, resolved per sample against
that sample's shape by the C ``tensor_subscript`` operator (DALI's internal TensorSubscript):
integers (negative ones count from the end; out of range fails for that sample), slices with any
step (bounds clipped), ``...`` and ``None`` (a new axis of extent 1). Unwritten trailing axes are
kept whole. The operator's ``subscript`` argument is the index written as strings, one per
position (``x[10:20, :, 0]`` -> ``["10:20", ":", "0"]``).

A DataNode in the index (a per-sample integer, start, stop or step) is written as the name of
the operator argument that carries it (``at``, ``lo``, ``hi``, ``step``) and connected as an
argument input. One node has one argument of each name, so an index with several per-sample
values of the same kind becomes a chain of nodes: later ones see the earlier results through
a subscript of the same structure (``:`` for an axis kept, nothing for an axis dropped).
"""
import operator

from .data_node import DataNode


def _invalid(item):
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None (a new axis) and DataNodes of "
        f"integers are valid DataNode indices, not {type(item).__name__} {item!r}")


def _value(v):
    """A constant index value as an int, or the DataNode itself; None stays None."""
    if v is None or isinstance(v, DataNode):
        return v
    if isinstance(v, bool):
        raise _invalid(v)
    try:
        return operator.index(v)
    except TypeError:
        raise _invalid(v) from None


def _parse(index):
    """The positions of an index: ("...",), ("new",), ("int", v) or ("slice", lo, hi, step)."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for x in index:
        if x is Ellipsis:
            items.append(("...",))
        elif x is None:
            items.append(("new",))
        elif isinstance(x, slice):
            items.append(("slice", _value(x.start), _value(x.stop), _value(x.step)))
            if isinstance(items[-1][3], int) and items[-1][3] == 0:
                raise ValueError("slice step cannot be zero")
        elif isinstance(x, (list, tuple)) or getattr(x, "ndim", 0):  # NumPy arrays & co
            raise NotImplementedError(
                "DataNode indexing: advanced indexing (lists, arrays, boolean masks) is not "
                "supported; only basic indexing (integers, slices, ..., None)")
        else:
            items.append(("int", _value(x)))
    if sum(1 for it in items if it[0] == "...") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return items


_NAMES = {"int": ("at",), "slice": ("lo", "hi", "step")}


def _per_sample(item):
    """Names of the operator arguments this position's DataNode values need."""
    return {n for n, v in zip(_NAMES.get(item[0], ()), item[1:]) if isinstance(v, DataNode)}


def _rounds(items):
    """Node number of each position: constants in node 0, per-sample values in the first node
    where their argument names are still free."""
    taken, out = [set()], []
    for it in items:
        names = _per_sample(it)
        r = next((r for r, t in enumerate(taken) if not (t & names)), len(taken))
        if r == len(taken):
            taken.append(set())
        taken[r] |= names
        out.append(r)
    return out


def _token(item, args):
    """The subscript string of a position; per-sample values go into args by name."""
    if item[0] == "...":
        return "..."
    if item[0] == "new":
        return "None"
    parts = []
    for name, v in zip(_NAMES[item[0]], item[1:]):
        if isinstance(v, DataNode):
            args[name] = v
            v = name
        parts.append("" if v is None else str(v))
    return ":".join(parts)


def subscript(node, index):
    """node[index]: the DataNode of a tensor_subscript node (a chain of them when the index has
    several per-sample values of the same kind)."""
    from .fn import _call

    items = _parse(index)
    rounds = _rounds(items)
    for r in range(max(rounds, default=0) + 1):
        tokens, args = [], {}
        for it, ir in zip(items, rounds):
            if ir == r:
                tokens.append(_token(it, args))
            elif it[0] == "...":
                tokens.append("...")
            elif not (ir < r and it[0] == "int"):  # an axis still there: whole
                tokens.append(":")
        args["subscript"] = tokens
        node = _call("tensor_subscript", [node], args)
    return node
