"""Array backends: NumPy (the fast path) and any array-API library such as CuPy.

Op code never calls ``numpy`` directly: it asks ``namespace(array)`` for the module that
owns the array, so the same forward and derivative code runs on CuPy.  For NumPy arrays the
answer is the ``numpy`` module itself, found by one type check.
"""

from __future__ import annotations

import numpy as np

ndarray = np.ndarray
_NUMPY_SCALAR = np.generic


def namespace(array):
    """The array module (``xp``) that owns ``array``: numpy, or e.g. cupy."""
    if type(array) is ndarray or isinstance(array, _NUMPY_SCALAR):
        return np
    module = type(array).__module__.split(".")[0]
    if module == "cupy":
        import cupy

        return cupy
    try:
        import array_api_compat

        return array_api_compat.array_namespace(array)
    except ImportError:  # pragma: no cover - only without the optional extra
        raise TypeError(
            f"retrograd does not know how to compute on {type(array).__name__}; "
            "install array-api-compat or pass a NumPy array"
        ) from None


def as_array(value):
    """NumPy returns scalars (np.float32) from 0-d ops; tensors always hold arrays."""
    if isinstance(value, _NUMPY_SCALAR):
        return np.asarray(value)
    return value


def to_numpy(array):
    """A NumPy copy of a device array (or the array itself if already NumPy)."""
    if type(array) is ndarray:
        return array
    get = getattr(array, "get", None)
    return get() if get is not None else np.asarray(array)


class device:
    """Where a tensor's data lives: ``device('cpu')`` or ``device('cuda', 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, kind="cpu", index: int | None = None):
        if isinstance(kind, device):
            kind, index = kind.type, kind.index
        elif isinstance(kind, int) and not isinstance(kind, bool):
            kind, index = "cuda", kind  # torch.device(0) is the first CUDA device
        if ":" in kind:
            kind, idx = kind.split(":", 1)
            if not idx.isdigit():
                raise RuntimeError(
                    f"Invalid device string: '{kind}:{idx}' (write e.g. 'cuda:0' or 'cpu')"
                )
            index = int(idx)
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {kind}"
            )
        self.type = kind
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (
            other.type, other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def __repr__(self):
        return f"device(type='{self.type}'" + (
            f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


_CPU = device("cpu")


def device_of(array) -> device:
    if type(array) is ndarray or isinstance(array, _NUMPY_SCALAR):
        return _CPU
    dev = getattr(array, "device", None)
    return device("cuda", getattr(dev, "id", 0))


# NumPy's floating-point warnings (divide, overflow, invalid) off, for the stretches where
# PyTorch computes inf and nan silently (ops/quiet_fp.py, the backward engine).  On NumPy 2
# ``np.errstate`` sets a context variable to an extobj it builds on every entry; setting the
# variable to one built once costs about a third (errstate: 3-5 us a call on a busy
# machine).  Per thread and per task, as errstate's.  Elsewhere (NumPy 1.26, or a NumPy that
# moved it): a fresh errstate per entry.
try:
    from numpy._core._multiarray_umath import _extobj_contextvar, _make_extobj

    _QUIET = _make_extobj(divide="ignore", over="ignore", invalid="ignore")
    _set_state, _reset_state = _extobj_contextvar.set, _extobj_contextvar.reset
except (ImportError, AttributeError, TypeError):
    _QUIET = None


def quiet_fp_enter():
    """Turn NumPy's divide/overflow/invalid warnings off; returns the token for
    :func:`quiet_fp_exit`, which must run (``finally``) in the same context."""
    if _QUIET is not None:
        return _set_state(_QUIET)
    state = np.errstate(divide="ignore", over="ignore", invalid="ignore")
    state.__enter__()
    return state


def quiet_fp_exit(token):
    """Restore the warnings :func:`quiet_fp_enter` turned off."""
    if _QUIET is not None:
        _reset_state(token)
    else:
        token.__exit__(None, None, None)
