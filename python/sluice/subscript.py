"""sluice.subscript: indexing DataNodes per sample (``x[10:20, :, 0]``, ``x[..., 1:3]``).

An index applies to every sample. It becomes one C ``slice`` node (``axes`` — negative ones
count from the back, which is how ``...`` is expressed — with absolute ``start``/``end`` and
``out_of_bounds_policy="trim_to_shape"``, so a range past the end is clipped as Python clips
it), followed, for integer indices, by a ``reshape`` that drops those axes.

What the C operators cannot express yet raises NotImplementedError naming it: steps other than
1 (``x[..., ::-1]``), negative starts/stops/indices (they count from a per-sample extent),
``None`` (new axes), per-sample (DataNode) indices, and integer indices anywhere but on the
last axes written without ``...``. DALI's ``tensor_subscript`` supports these; sluice needs a C
operator with steps and per-axis index dropping for them.
"""
import operator

from .data_node import DataNode

_BIG = 2 ** 40  # an "until the end" stop; trim_to_shape clips it to the extent


def _unsupported(what):
    return NotImplementedError(
        f"DataNode indexing: {what} is not supported yet (sluice's slice operator has no "
        "steps, no negative coordinates and no axis dropping); use fn.slice, fn.flip, "
        "fn.reshape or fn.transpose explicitly")


def _axis_item(item):
    """(start, end, drop) for one index item, or None for a whole axis."""
    if isinstance(item, DataNode):
        raise _unsupported("a per-sample (DataNode) index")
    if isinstance(item, slice):
        if item.step not in (None, 1):
            raise _unsupported(f"step {item.step}")
        start = 0 if item.start is None else operator.index(item.start)
        stop = _BIG if item.stop is None else operator.index(item.stop)
        if start < 0 or stop < 0:
            raise _unsupported("a negative start or stop")
        return None if (start == 0 and stop == _BIG) else (start, max(stop, start), False)
    i = operator.index(item)
    if i < 0:
        raise _unsupported(f"the negative index {i}")
    return (i, i + 1, True)


def _split(index):
    if not isinstance(index, tuple):
        index = (index,)
    if any(x is None for x in index):
        raise _unsupported("None (a new axis)")
    n_ell = sum(1 for x in index if x is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ell == 0:
        return list(index), []
    k = index.index(Ellipsis)
    return list(index[:k]), list(index[k + 1:])


def subscript(node, index):
    """node[index]: DataNode(s) of a slice (and reshape) node."""
    from .fn import _call

    front, back = _split(index)
    axes, starts, ends, drops = [], [], [], []
    for pos, item in [(p, x) for p, x in enumerate(front)] + \
                     [(p - len(back), x) for p, x in enumerate(back)]:
        r = _axis_item(item)
        if r is None:
            continue
        axes.append(pos)
        starts.append(r[0])
        ends.append(r[1])
        if r[2]:
            drops.append(pos)
    if not axes:
        return node
    out = _call("slice", [node], dict(axes=axes, start=starts, end=ends,
                                      out_of_bounds_policy="trim_to_shape"))
    if not drops:
        return out
    first = min(drops)
    if back or first == 0 or any(p not in drops for p in range(first, len(front))):
        raise _unsupported("an integer index that is not on the last axes written without '...'")
    return _call("reshape", [out], dict(rel_shape=[1.0] * first))
