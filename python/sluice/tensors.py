"""sluice.tensors: DALI's module name for the output types (nvidia.dali.tensors).

TensorListCPU / TensorListGPU are batches (a pipeline output, or a TensorListCPU made from
NumPy data); TensorCPU / TensorGPU one sample of one (``tl[i]``) or a dense batch as one tensor
(``tl.as_tensor()``). All are written in C (sluice._sluice); this module adds DALI's text
form (str() of a tensor or a list).
"""
from ._sluice import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU  # noqa: F401

_INDENT = " " * 4


def _host(x):
    return x.as_cpu() if type(x).__name__.endswith("GPU") else x


def _join(parts, sep):
    return sep.join(parts)


def _tensor_to_string(t, show_data=True):
    """str(TensorCPU/TensorGPU), DALI's form: the type, the data (with show_data), dtype,
    layout when there is one, shape."""
    import numpy as np

    name = type(t).__name__
    params = []
    if show_data:
        params.append(np.array2string(np.asarray(_host(t)), prefix=_INDENT, edgeitems=2))
    params.append(f"dtype={t.dtype}")
    if t.layout():
        params.append(f"layout={t.layout()}")
    params.append(f"shape={t.shape()})")
    return f"{name}(\n{_INDENT}" + _join(params, f",\n{_INDENT}")


def _tensorlist_to_string(tl, show_data=True):
    """str(TensorListCPU/TensorListGPU), DALI's form: the data (NumPy's text of the dense batch,
    or of each sample, summarised past 1000 elements), dtype, layout, num_samples, shape."""
    import numpy as np

    name, edge = type(tl).__name__, 2
    params = []
    if show_data:
        host = _host(tl)
        if len(host) == 0:
            params.append("[]")
        elif host.is_dense_tensor():
            params.append(np.array2string(np.asarray(host.as_tensor()), prefix=_INDENT,
                                          edgeitems=edge))
        else:
            samples = [np.asarray(s) for s in host]
            crop = len(samples) > 2 * edge + 1 and sum(max(a.size, 1) for a in samples) > 1000
            shown = samples[:edge] + samples[-edge:] if crop else samples
            texts = [np.array2string(a, prefix=_INDENT, edgeitems=edge) for a in shown]
            if crop:
                texts = texts[:edge] + ["..."] + texts[edge:]
            params.append("[" + _join(texts, "\n" * samples[0].ndim + _INDENT) + "]")
    params.append(f"dtype={tl.dtype}")
    if tl.layout():
        params.append(f'layout="{tl.layout()}"')
    shapes = [str(s) for s in tl.shape()]
    if len(shapes) > 16 or (len(shapes) > 2 * edge + 1 and len(shapes) * len(tl.shape()[0]) > 100):
        shapes = shapes[:edge] + ["..."] + shapes[-edge:]
    params.append(f"num_samples={len(tl)}")
    params.append(f"shape=[{', '.join(shapes)}])")
    return f"{name}(\n{_INDENT}" + _join(params, f",\n{_INDENT}")
