"""Creating tensors: ``tensor``, ``zeros``, ``randn``, ``arange``... and the legacy
constructors the seed post uses (``FloatTensor([1, 0])``, ``FloatTensor(2, 3)``)."""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from . import dtypes
from . import random as _random
from .tensor import Tensor, make_tensor


def _numpy_dtype(dtype):
    return None if dtype is None else dtypes.to_dtype(dtype).numpy


def _finish(data, requires_grad=False, device=None):
    t = make_tensor(data)
    if requires_grad:
        t.requires_grad_(True)
    if device is not None and str(device) != "cpu":
        from .backend import move_to_device

        t = move_to_device(t, device)
        t = make_tensor(t._data)
        if requires_grad:
            t.requires_grad_(True)
    return t


def _infer_array(data, dtype=None):
    """Data (nested lists, numbers, arrays, tensors) to an array with PyTorch's dtype rules."""
    want = _numpy_dtype(dtype)
    if isinstance(data, Tensor):
        arr = np.array(data._data, dtype=want, copy=True)
        return arr
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.array(data, dtype=want, copy=True)
        if arr.dtype not in dtypes.FROM_NUMPY:
            raise TypeError(
                f"can't convert np.ndarray of type {arr.dtype}; the supported types are: "
                + ", ".join(d.name for d in dtypes._ALL)
            )
        return arr
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _tensors_to_values(data)
    try:
        arr = np.array(data, dtype=want)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"could not make a tensor from {type(data).__name__} data: {e}. Nested lists must "
            "be rectangular and hold numbers"
        ) from None
    if want is None:
        kind = arr.dtype.kind
        if kind == "f":
            arr = arr.astype(dtypes.get_default_dtype().numpy)
        elif kind in "iu":
            arr = arr.astype(np.int64)
        elif kind == "b":
            pass
        else:
            raise TypeError(
                f"Could not infer dtype of {type(data).__name__} (NumPy made {arr.dtype}); "
                "tensors hold numbers or bools"
            )
    return arr


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _tensors_to_values(data):
    if isinstance(data, (list, tuple)):
        return [_tensors_to_values(x) for x in data]
    if isinstance(data, Tensor):
        return data._data.tolist()
    return data


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (lists, numbers, arrays).

    Python floats give the default dtype (float32), ints give int64, as PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1, 2], [3, 4]]).dtype
    retrograd.int64
    """
    return _finish(_infer_array(data, dtype), requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or _numpy_dtype(dtype) == data.dtype):
        return make_tensor(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with ``array`` (changes to one show in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype not in dtypes.FROM_NUMPY:
        raise TypeError(
            f"can't convert np.ndarray of type {array.dtype}. The only supported types are: "
            + ", ".join(d.name for d in dtypes._ALL)
        )
    return make_tensor(array)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(
                f"size must be a tuple of ints, but got {type(s).__name__} ({s!r}) in {size!r}"
            )
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _float_dtype(dtype):
    return _numpy_dtype(dtype) if dtype is not None else dtypes.get_default_dtype().numpy


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.zeros(_size(size), _float_dtype(dtype)), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.ones(_size(size), _float_dtype(dtype)), requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.empty(_size(size), _float_dtype(dtype)), requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dtypes._scalar_dtype(fill_value)
    return _finish(np.full(_size((size,)), fill_value, _numpy_dtype(dtype)), requires_grad, device)


def _like(fn):
    def like(input, dtype=None, device=None, requires_grad=False):  # noqa: A002
        d = dtype if dtype is not None else input.dtype
        return fn(tuple(input.shape), dtype=d, requires_grad=requires_grad)

    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):  # noqa: A002
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad, device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is float."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    return _finish(np.arange(start, end, step).astype(_numpy_dtype(dtype)), requires_grad, device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.linspace(start, end, steps).astype(_float_dtype(dtype)), requires_grad,
                   device)


def rand(*size, dtype=None, generator=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1) (see ``manual_seed``)."""
    rng = generator or _random.generator()
    return _finish(rng.random(_size(size)).astype(_float_dtype(dtype)), requires_grad, device)


def randn(*size, dtype=None, generator=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples (see ``manual_seed``)."""
    rng = generator or _random.generator()
    return _finish(rng.standard_normal(_size(size)).astype(_float_dtype(dtype)), requires_grad,
                   device)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    rng = _random.generator()
    return _finish(rng.integers(low, high, _size((size,))).astype(
        _numpy_dtype(dtype or dtypes.int64)), requires_grad, device)


def randn_like(input, dtype=None, requires_grad=False):  # noqa: A002
    return randn(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


def rand_like(input, dtype=None, requires_grad=False):  # noqa: A002
    return rand(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


# ----------------------------------------------------------------- legacy constructors


def legacy_new(cls, dtype, args, kwargs):
    """``FloatTensor(2, 3)`` is uninitialised of that size (zeros here); ``FloatTensor([1, 0])``
    is that data, as in the PyTorch of the seed post."""
    if kwargs.pop("device", None) not in (None, "cpu"):
        raise RuntimeError("legacy constructors make CPU tensors; use .to('cuda') after")
    if kwargs:
        raise TypeError(f"legacy tensor constructor got unexpected arguments {sorted(kwargs)}")
    if not args:
        return make_tensor(np.zeros((0,), dtype.numpy))
    if builtins.all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return make_tensor(np.zeros(_size(args), dtype.numpy))
    if len(args) == 1:
        if isinstance(args[0], Tensor):
            return make_tensor(args[0]._data.astype(dtype.numpy, copy=False))
        return make_tensor(_infer_array(args[0], dtype))
    raise TypeError(
        f"{cls.__name__}() takes a size (ints) or one sequence of data, got {args!r}"
    )


def _legacy(name, dtype):
    def __new__(cls, *args, **kwargs):  # noqa: N807
        return legacy_new(cls, dtype, args, kwargs)

    def __instancecheck__(cls, other):  # noqa: N807
        return isinstance(other, Tensor) and other.dtype is dtype

    meta = type(name + "Meta", (type,), {"__instancecheck__": __instancecheck__})
    return meta(name, (), {"__new__": __new__, "__doc__": f"Legacy constructor: {dtype} data."})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
LongTensor = _legacy("LongTensor", dtypes.int64)
IntTensor = _legacy("IntTensor", dtypes.int32)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
CharTensor = _legacy("CharTensor", dtypes.int8)
BoolTensor = _legacy("BoolTensor", dtypes.bool)


def _rebuild(array, requires_grad):
    t = make_tensor(array)
    t._requires_grad = requires_grad
    return t
