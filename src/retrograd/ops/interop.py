"""DLPack: ``from_dlpack`` / ``to_dlpack`` and ``Tensor.__dlpack__`` /
``__dlpack_device__``, through NumPy's (or CuPy's) own DLPack support.

A tensor made by ``from_dlpack`` shares the producer's memory (no copy unless ``copy=True``
or the producer cannot share), so a change on one side shows on the other; it starts
without history, as PyTorch's.  ``to_dlpack`` gives the legacy capsule, to be consumed once
by some ``from_dlpack``.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, make_tensor

_CUDA = 2  # DLPack's device type of a CUDA array


class _Capsule:
    """A bare capsule (``to_dlpack``'s) dressed as a producer: NumPy's from_dlpack takes only
    objects with ``__dlpack__``."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # the CPU (legacy capsules from to_dlpack here are NumPy's)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of ``ext_tensor``: any object with ``__dlpack__`` (a
    PyTorch tensor, a NumPy or CuPy array...) or a DLPack capsule.

    Examples
    --------
    >>> import numpy as np, retrograd as T
    >>> a = np.arange(3.0)
    >>> t = T.from_dlpack(a)
    >>> a[0] = 7.0; t
    tensor([7., 1., 2.], dtype=retrograd.float64)
    """
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(f"from_dlpack received an invalid capsule: expected an object "
                               f"with __dlpack__ (a tensor or array) or a DLPack capsule, got "
                               f"{type(ext_tensor).__name__}")
        ext_tensor = _Capsule(ext_tensor)
    kind = ext_tensor.__dlpack_device__()[0]
    if kind == _CUDA:
        try:
            import cupy
        except ImportError:
            raise RuntimeError("from_dlpack: the producer's memory is on a CUDA device; "
                               "retrograd's CUDA arrays need CuPy (pip install cupy-cuda12x)"
                               ) from None
        return make_tensor(cupy.from_dlpack(ext_tensor))
    kwargs = {} if copy is None else {"copy": copy}
    try:
        arr = np.from_dlpack(ext_tensor, **kwargs)
    except TypeError as e:  # (a NumPy before 2.1 has no copy=)
        if not kwargs:
            raise
        arr = np.from_dlpack(ext_tensor)
        if copy:
            arr = arr.copy()
        del e
    return make_tensor(arr)


def to_dlpack(tensor):
    """The legacy DLPack capsule of ``tensor``'s memory (shared, not copied)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor._data.__dlpack__()


def _dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: the tensor's memory for another library's ``from_dlpack``."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    if stream not in (-1, None):
        kwargs["stream"] = stream
    return self._data.__dlpack__(**kwargs)


def _dlpack_device(self):
    """``Tensor.__dlpack_device__``: (device type, index), 1 for the CPU, 2 for CUDA."""
    return self._data.__dlpack_device__()


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(from_dlpack, method=False, differentiable=False)
register(to_dlpack, method=False, differentiable=False)
register(_dlpack, "__dlpack__", function=False, method=False, differentiable=False,
         tensor={"__dlpack__": _dlpack, "__dlpack_device__": _dlpack_device})
