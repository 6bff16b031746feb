"""Creating tensors: ``tensor``, ``zeros``, ``randn``, ``arange``... and the legacy
constructors the seed post uses (``FloatTensor([1, 0])``, ``FloatTensor(2, 3)``).

Data inference follows PyTorch: Python floats give the default dtype (float32), ints int64,
bools bool; NumPy arrays and scalars keep their dtype; nested lists are promoted element by
element (``[np.float64(1.5), 2]`` is float64) and must be rectangular.
"""

from __future__ import annotations

import builtins
import math
import numbers
import warnings

import numpy as np

from . import dtypes
from . import random as _random
from .tensor import Size, Tensor, contiguous_strides, make_tensor

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
    "ones_like", "empty_like", "full_like", "eye", "arange", "linspace", "rand", "randn",
    "randint", "rand_like", "randn_like", "randint_like", "FloatTensor", "DoubleTensor",
    "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "CharTensor",
    "BoolTensor",
]


def _numpy_dtype(dtype):
    if isinstance(dtype, str):
        from .ops._errors import calling_op

        dtypes.refuse_name(dtype, calling_op("tensor"))
    return None if dtype is None else dtypes.to_dtype(dtype).numpy


def _strided_if_empty(data):
    """An empty array with PyTorch's contiguous strides instead of NumPy's zeros, so that
    views of it (``zeros(0, 3).t()``: strides ``(1, 3)``) report PyTorch's strides too."""
    if data.size or data.ndim < 2 or type(data) is not np.ndarray or any(data.strides):
        return data
    steps = contiguous_strides(data.shape)
    return np.lib.stride_tricks.as_strided(data, strides=[s * data.itemsize for s in steps])


def _finish(data, requires_grad=False, device=None):
    t = make_tensor(_strided_if_empty(data))
    if requires_grad:
        t.requires_grad_(True)
    if device is not None and str(device) != "cpu":
        from .ops import move_to_device

        t = move_to_device(t, device)
        t = make_tensor(t._data)
        if requires_grad:
            t.requires_grad_(True)
    return t


def _check_byte_order(np_dtype) -> None:
    if not np_dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported; convert it first with "
            "array.astype(array.dtype.newbyteorder('='))"
        )


def _unsupported_numpy(np_dtype) -> TypeError:
    return TypeError(
        f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only supported "
        "types are: " + ", ".join(d.name for d in dtypes._ALL)
        + " (convert it first, e.g. array.astype(numpy.float32))"
    )


# ----------------------------------------------------------------- data -> array


def _is_sequence(obj) -> bool:
    if isinstance(obj, (list, tuple, range)):
        return True
    if isinstance(obj, np.ndarray):
        return obj.ndim > 0
    if isinstance(obj, Tensor):
        return obj._data.ndim > 0
    return False


def _sizes(data) -> list:
    """The shape implied by the first element along each level (PyTorch's compute_sizes)."""
    sizes = []
    obj = data
    while _is_sequence(obj):
        n = len(obj)
        sizes.append(n)
        if n == 0:
            break
        obj = obj[0]
    return sizes


def _leaf_dtype(x) -> dtypes.dtype:
    """The dtype one scalar contributes to a list's dtype."""
    if isinstance(x, builtins.bool | np.bool_):
        return dtypes.bool
    if isinstance(x, np.generic):
        if x.dtype not in dtypes.FROM_NUMPY:
            raise _unsupported_numpy(x.dtype)
        return dtypes.FROM_NUMPY[x.dtype]
    if isinstance(x, numbers.Integral):
        return dtypes.int64
    if isinstance(x, numbers.Real):
        return dtypes.get_default_dtype()
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, numbers.Complex):
        raise TypeError(
            f"retrograd has no complex dtype (got {x!r}); store real and imaginary parts as "
            "two real tensors"
        )
    raise RuntimeError(
        f"Could not infer dtype of {type(x).__name__}; tensors hold numbers and bools "
        "(nested lists of them, NumPy arrays or tensors)"
    )


def _check_nested(seq, sizes, dim, found: set) -> None:
    """Check that ``seq`` is rectangular with ``sizes`` and collect its leaves' dtypes."""
    n = len(seq)
    if n != sizes[dim]:
        raise ValueError(
            f"expected sequence of length {sizes[dim]} at dim {dim} (got {n}); nested lists "
            "must be rectangular (every row the same length)"
        )
    last = dim == len(sizes) - 1
    for item in seq:
        if isinstance(item, (np.ndarray, Tensor)) and item.ndim > 0:
            if isinstance(item, Tensor):
                raise ValueError(
                    "only one element tensors can be converted to Python scalars (got a "
                    f"tensor of shape {list(item.shape)} inside a list); use "
                    "retrograd.stack(list_of_tensors) to join tensors"
                )
            if list(item.shape) != sizes[dim + 1:]:
                raise ValueError(
                    f"expected sequence of length {sizes[dim + 1]} at dim {dim + 1} (got "
                    f"{item.shape[0]}); nested lists must be rectangular"
                )
            if item.dtype not in dtypes.FROM_NUMPY:
                raise _unsupported_numpy(item.dtype)
            found.add(dtypes.FROM_NUMPY[item.dtype])
        elif last:
            if _is_sequence(item):
                raise TypeError(
                    f"expected a number at dim {dim + 1} but got a sequence "
                    f"({type(item).__name__}); nested lists must be rectangular"
                )
            if isinstance(item, str):
                raise ValueError(f"too many dimensions 'str' (tensors hold numbers, got {item!r})")
            found.add(_leaf_dtype(item))
        else:
            if not _is_sequence(item):
                raise TypeError(
                    f"not a sequence: expected a list of length {sizes[dim + 1]} at dim "
                    f"{dim + 1} but got {type(item).__name__}; nested lists must be rectangular"
                )
            _check_nested(item, sizes, dim + 1, found)


def _plain(data):
    """Nested data with tensors replaced by their values, for ``np.array``."""
    if isinstance(data, Tensor):
        return data._data.reshape(()).item() if data._data.ndim == 0 else data._data
    if isinstance(data, (list, tuple, range)):
        return [_plain(x) for x in data]
    return data


def _has_tensor(data) -> bool:
    for x in data:
        if isinstance(x, Tensor):
            return True
        if isinstance(x, (list, tuple)) and _has_tensor(x):
            return True
    return False


def _from_numpy_like(arr, want):
    _check_byte_order(arr.dtype)
    if arr.dtype not in dtypes.FROM_NUMPY:
        raise _unsupported_numpy(arr.dtype)
    return np.array(arr, dtype=want, copy=True)


_PYTHON_LEAVES = {builtins.float, builtins.int, builtins.bool}


def _rows_are_lists(seq, levels: int) -> bool:
    if levels <= 0:
        return True
    for x in seq:
        if x.__class__ is not list and x.__class__ is not tuple:
            return False
        if not _rows_are_lists(x, levels - 1):
            return False
    return True


def _fast_nested(data, want):
    """Nested lists of plain Python numbers, converted at C speed (``None`` if the data has
    anything else: NumPy scalars, tensors, ragged rows... which the careful path handles).

    The leaves' types decide the dtype as in PyTorch: any float gives the default float,
    else any int gives int64, else bool.
    """
    try:
        objects = np.array(data, dtype=object)
    except (ValueError, TypeError):
        return None
    # NumPy unpacks tensors and arrays nested in the lists: only plain lists may hold rows
    if not _rows_are_lists(data, objects.ndim - 1):
        return None
    kinds = set(map(type, objects.flat))
    if not kinds <= _PYTHON_LEAVES:
        return None
    if want is None:
        if builtins.float in kinds or not kinds:
            want = dtypes.get_default_dtype().numpy
        elif builtins.int in kinds:
            want = np.dtype(np.int64)
        else:
            want = np.dtype(np.bool_)
    try:
        return objects.astype(want)
    except (OverflowError, ValueError, TypeError):
        return None  # the careful path applies PyTorch's overflow rule and its errors


def _infer_array(data, dtype=None):
    """Data (nested lists, numbers, arrays, tensors) to a new array with PyTorch's dtype."""
    want = _numpy_dtype(dtype)
    if isinstance(data, Tensor):
        from .backend import to_numpy

        return np.array(to_numpy(data._data), dtype=want, copy=True)
    if isinstance(data, (np.ndarray, np.generic)):
        return _from_numpy_like(np.asarray(data), want)
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type 'str' (got {data!r}); tensors hold numbers")
    if isinstance(data, (list, tuple)):
        arr = _fast_nested(data, want)
        if arr is not None:
            return arr
    if _is_sequence(data):
        sizes = _sizes(data)
        found: set = set()
        if sizes[0] > 0:
            _check_nested(data, sizes, 0, found)
        inferred = dtypes.get_default_dtype()
        if found:
            it = iter(found)
            inferred = next(it)
            for d in it:
                inferred = dtypes.promote_types(inferred, d)
        if isinstance(data, range) or (isinstance(data, (list, tuple)) and _has_tensor(data)):
            data = _plain(data)
        target = want if want is not None else inferred.numpy
        return _array_checked(data, target).reshape(sizes)
    inferred = _leaf_dtype(data)  # a Python scalar (or a 0-d tensor-like)
    target = want if want is not None else inferred.numpy
    return _array_checked(data, target)


def _has_huge_int(data) -> bool:
    """Whether some Python int in ``data`` is outside int64 (an error path only: O(n))."""
    flat = np.array(data, dtype=object).ravel()
    return any(isinstance(v, builtins.int) and not -2 ** 63 <= v < 2 ** 63 for v in flat)


def _array_checked(data, target):
    """``np.array(data, target)`` with PyTorch's overflow rule for integer targets: a value
    must fit the type, except that an unsigned type also takes negatives down to -max (they
    wrap: ``ByteTensor([-1])`` is 255), where NumPy 2 refuses any value out of range."""
    try:
        return np.array(data, dtype=target)
    except (OverflowError, ValueError):  # ValueError: NaN to an integer type
        pass
    target = np.dtype(target)
    try:
        wide = np.array(data, dtype=np.int64)
    except OverflowError:
        if target.kind in "iub" and _has_huge_int(data):
            # PyTorch reads Python ints as int64 first
            raise ValueError(
                f"Overflow when unpacking long long: a Python int does not fit in int64 (the "
                f"target type is {target.name}); use a float dtype for such large values"
            ) from None
        wide = None
    except ValueError:
        wide = None
    if wide is not None and target.kind in "iu":
        info = np.iinfo(target)
        low = -int(info.max) if target.kind == "u" else int(info.min)
        if wide.size == 0 or (int(wide.min()) >= low and int(wide.max()) <= int(info.max)):
            return wide.astype(target)
    raise RuntimeError(
        f"value cannot be converted to type {target.name} without overflow; pick a wider dtype"
    )


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (lists, numbers, arrays).

    Python floats give the default dtype (float32), ints give int64, bools bool; NumPy
    arrays keep their dtype.

    Parameters
    ----------
    data : array_like
        A number, a (nested, rectangular) list or tuple, a NumPy array or a tensor.
    dtype : retrograd.dtype, optional
        The element type; inferred from ``data`` when omitted.
    requires_grad : bool
        Record operations on the new tensor (floating dtypes only).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1, 2], [3, 4]]).dtype
    retrograd.int64
    >>> T.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), "
            "rather than retrograd.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    arr = _infer_array(data, dtype)
    if requires_grad and arr.dtype.kind != "f":
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients (got "
            f"{dtypes.FROM_NUMPY[arr.dtype]}); pass dtype=retrograd.float32 or use float data"
        )
    return _finish(arr, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can.

    Examples
    --------
    >>> import numpy as np, retrograd as T
    >>> a = np.zeros(2)
    >>> t = T.as_tensor(a)
    >>> a[0] = 1.0
    >>> t
    tensor([1., 0.], dtype=retrograd.float64)
    """
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or _numpy_dtype(dtype) == data.dtype):
        if data.dtype not in dtypes.FROM_NUMPY:
            raise _unsupported_numpy(data.dtype)
        return make_tensor(data)
    return _finish(_infer_array(data, dtype), False, device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with ``array`` (changes to one show in the other).

    Examples
    --------
    >>> import numpy as np, retrograd as T
    >>> a = np.arange(3)
    >>> t = T.from_numpy(a)
    >>> t[0] = 7
    >>> a
    array([7, 1, 2])
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _check_byte_order(array.dtype)
    if array.dtype not in dtypes.FROM_NUMPY:
        raise _unsupported_numpy(array.dtype)
    if not array.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and retrograd does not support non-writable "
            "tensors: writing to this tensor (in place ops, x[i] = v) will fail. Copy the array "
            "first (array.copy()) or use retrograd.tensor(array).",
            UserWarning,
            stacklevel=2,
        )
    return make_tensor(array)


# ----------------------------------------------------------------- sizes and fills


def _size(size, name="tensor"):
    """``(2, 3)``, ``((2, 3),)``, ``([2, 3],)`` or ``(Size([2, 3]),)`` as a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for i, s in enumerate(size):
        if isinstance(s, builtins.bool) or not hasattr(s, "__index__") or (
            isinstance(s, Tensor) and s._data.dtype.kind not in "iu"
        ):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with "
                f"error \"type must be tuple of ints,but got {type(s).__name__}\" (size "
                f"{size!r}; sizes are ints, e.g. {name}(2, 3))"
            )
    size = tuple(s.__index__() for s in size)
    for s in size:
        if s < 0:
            from .ops._errors import calling_op

            raise RuntimeError(
                f"{calling_op(name)}(): Trying to create tensor with negative dimension {s}: "
                f"{list(size)}; sizes must be >= 0"
            )
    return size


def _float_dtype(dtype):
    return _numpy_dtype(dtype) if dtype is not None else dtypes.get_default_dtype().numpy


def _check_grad_dtype(np_dtype, requires_grad):
    if requires_grad and np.dtype(np_dtype).kind != "f":
        raise RuntimeError(
            "Only Tensors of floating point and complex dtype can require gradients (got "
            f"{dtypes.FROM_NUMPY[np.dtype(np_dtype)]}); use a floating dtype"
        )


def _filled(name, fill):
    def _make(*size, dtype=None, device=None, requires_grad=False, out=None, **kw):
        if "size" in kw and not size:
            size = (kw.pop("size"),)
        if kw:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
        if not size:
            raise TypeError(
                f'{name}() missing 1 required positional arguments: "size" (e.g. {name}(2, 3), '
                f"or {name}(()) for a 0-d tensor)"
            )
        dtypes.refuse_name(dtype, name)
        np_dtype = _float_dtype(dtype)
        _check_grad_dtype(np_dtype, requires_grad)
        return _finish(fill(_size(size, name), np_dtype), requires_grad, device)

    _make.__name__ = _make.__qualname__ = name
    _make.__doc__ = (
        f"A tensor of the given size filled with {name} (the default float dtype unless "
        f"``dtype`` is given).\n\n    Examples\n    --------\n    >>> import retrograd as T\n"
        f"    >>> T.{name}(2, 3).shape\n    retrograd.Size([2, 3])\n"
    )
    return _make


zeros = _filled("zeros", np.zeros)
ones = _filled("ones", np.ones)
empty = _filled("empty", np.empty)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; the dtype follows the value's type.

    Examples
    --------
    >>> import retrograd as T
    >>> T.full((2,), 7)
    tensor([7, 7])
    """
    if dtype is None:
        dtype = (fill_value.dtype if isinstance(fill_value, Tensor)
                 else dtypes._scalar_dtype(fill_value))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    np_dtype = _numpy_dtype(dtype)
    _check_grad_dtype(np_dtype, requires_grad)
    if isinstance(size, numbers.Integral) or not hasattr(size, "__iter__"):
        from .ops._errors import calling_op

        raise TypeError(f"{calling_op('full')}(): argument 'size' (position 1) must be tuple of "
                        f"ints, not {type(size).__name__}; e.g. full(({size},), value)")
    size = _size(tuple(size), "full")
    return _finish(np.full(size, fill_value, np_dtype), requires_grad, device)


def _like_input(input, name):  # noqa: A002
    """PyTorch's TypeError for a ``*_like`` of a number, list or None (not an AttributeError
    from reading its shape); inside vmap a batched stand-in passes."""
    if not isinstance(input, Tensor) and not hasattr(input, "__retrograd_batched__"):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__} (wrap it: retrograd.tensor(...))")


def _laid_out_like(out, input, memory_format):  # noqa: A002
    """``out`` (a fresh tensor of ``input``'s shape) laid out as PyTorch's ``empty_like``
    lays it out: ``memory_format`` (None: preserve_format, ``input``'s strides when
    non-overlapping and dense, else dense in its stride order; ops/iter_layout.py)."""
    data = getattr(input, "_data", None)  # (none: vmap's batched stand-in, laid out its way)
    if data is None or memory_format is None and data.flags.c_contiguous and 1 not in data.shape:
        return out  # (the common case: row-major, as made)
    from .ops.iter_layout import format_strides, strided_copy

    strides = format_strides(data, memory_format)
    if strides is not None:
        out._data = strided_copy(out._data, strides)
    return out


def _like(fn):
    def like(input, dtype=None, device=None, requires_grad=False, memory_format=None):  # noqa: A002
        _like_input(input, like.__name__)
        dtypes.refuse_name(dtype, like.__name__)
        d = dtype if dtype is not None else input.dtype
        return _laid_out_like(fn(tuple(input.shape), dtype=d, requires_grad=requires_grad),
                              input, memory_format)

    like.__name__ = like.__qualname__ = fn.__name__ + "_like"
    like.__doc__ = (f"``{fn.__name__}`` with the shape (and, unless ``dtype`` is given, the "
                    "dtype) of ``input``.")
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False,  # noqa: A002
              memory_format=None):
    """``full`` with the shape and (unless ``dtype`` is given) the dtype of ``input``, laid
    out as ``input`` (``memory_format``: see ``empty_like``)."""
    _like_input(input, "full_like")
    return _laid_out_like(full(tuple(input.shape), fill_value, dtype=dtype or input.dtype,
                               requires_grad=requires_grad), input, memory_format)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``)."""
    from .ops._errors import int_arg

    n, m = int_arg(n, "n"), m if m is None else int_arg(m, "m")
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"eye(): {name} must be greater or equal to 0, got {v}")
    np_dtype = _float_dtype(dtype)
    _check_grad_dtype(np_dtype, requires_grad)
    return _finish(np.eye(n, m, dtype=np_dtype), requires_grad, device)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is float.

    Examples
    --------
    >>> import retrograd as T
    >>> T.arange(3)
    tensor([0, 1, 2])
    >>> T.arange(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero (arange(start, end, step) with "
                           "step=0)")
    for v in (start, end, step):
        if not math.isfinite(v):
            raise RuntimeError(f"arange(): unsupported range: {start} -> {end} (bounds must "
                               "be finite)")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange(): upper bound and lower bound inconsistent with step sign (start={start}, "
            f"end={end}, step={step}); use a negative step to count down"
        )
    if dtype is None:
        dtype = dtypes.get_default_dtype() if _is_float(start, end, step) else dtypes.int64
    np_dtype = _numpy_dtype(dtype)
    _check_grad_dtype(np_dtype, requires_grad)
    n = max(0, math.ceil((end - start) / step))
    # As PyTorch: start + i * step, in double for floating results (then rounded once).
    work = np.float64 if np_dtype.kind == "f" or _is_float(start, end, step) else np.int64
    values = start + step * np.arange(n, dtype=work)
    return _finish(values.astype(np_dtype), requires_grad, device)


def _is_float(*values) -> bool:
    return any(isinstance(v, (float, np.floating)) for v in values)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    from .ops._errors import int_arg

    steps = int_arg(steps, "steps")
    if steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be non-negative (got {steps})")
    np_dtype = _float_dtype(dtype)
    _check_grad_dtype(np_dtype, requires_grad)
    values = np.linspace(_number(start), _number(end), steps)
    return _finish(values.astype(np_dtype), requires_grad, device)


# ----------------------------------------------------------------- random


def _size_kw(size, kw, name):
    # ``randn(size=(2, 3))`` as well as ``randn(2, 3)``
    if "size" in kw and not size:
        size = (kw.pop("size"),)
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    return size


def _random_float_dtype(dtype, name):
    np_dtype = _float_dtype(dtype)
    if np_dtype.kind != "f":
        raise NotImplementedError(
            f"{name} is only implemented for floating dtypes (got "
            f"{dtypes.FROM_NUMPY[np_dtype]}); use randint for integers"
        )
    return np_dtype


@_random.sampled  # vmap(randomness='different'): a draw per sample
def rand(*size, dtype=None, generator=None, device=None, requires_grad=False,
         **kw) -> Tensor:
    """Uniform samples in [0, 1) (repeatable after ``manual_seed``).

    Examples
    --------
    >>> import retrograd as T
    >>> T.rand(2, 3).shape
    retrograd.Size([2, 3])
    """
    size = _size_kw(size, kw, "rand")
    rng = _random.numpy_generator(generator)
    np_dtype = _random_float_dtype(dtype, "rand")
    return _finish(rng.random(_size(size, "rand")).astype(np_dtype), requires_grad, device)


@_random.sampled  # vmap(randomness='different'): a draw per sample
def randn(*size, dtype=None, generator=None, device=None, requires_grad=False,
          **kw) -> Tensor:
    """Standard normal samples (repeatable after ``manual_seed``).

    Examples
    --------
    >>> import retrograd as T
    >>> T.randn(4, requires_grad=True).requires_grad
    True
    """
    size = _size_kw(size, kw, "randn")
    rng = _random.numpy_generator(generator)
    np_dtype = _random_float_dtype(dtype, "randn")
    return _finish(rng.standard_normal(_size(size, "randn")).astype(np_dtype), requires_grad,
                   device)


@_random.sampled  # vmap(randomness='different'): a draw per sample
def randint(low=0, high=None, size=None, *, dtype=None, generator=None, device=None,
            requires_grad=False) -> Tensor:
    """Random integers in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.randint(0, 10, (2, 3)).dtype
    retrograd.int64
    """
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # randint(high, size)
    if size is None or high is None:
        raise TypeError(
            "randint() needs a size: randint(high, size) or randint(low, high, size), with "
            f"size a tuple of ints (got low={low!r}, high={high!r}, size={size!r})"
        )
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}"
        )
    if low >= high:
        raise RuntimeError(
            f"randint(): random_ expects 'from' to be less than 'to', but got from={low} >= "
            f"to={high}"
        )
    rng = _random.numpy_generator(generator)
    np_dtype = _numpy_dtype(dtype or dtypes.int64)
    _check_grad_dtype(np_dtype, requires_grad)
    return _finish(rng.integers(low, high, _size((size,), "randint")).astype(np_dtype),
                   requires_grad, device)


def randn_like(input, dtype=None, requires_grad=False, memory_format=None):  # noqa: A002
    """``randn`` with the shape and (unless ``dtype`` is given) the dtype of ``input``, laid
    out as ``input`` (``memory_format``: see ``empty_like``)."""
    _like_input(input, "randn_like")
    return _laid_out_like(randn(tuple(input.shape), dtype=dtype or input.dtype,
                                requires_grad=requires_grad), input, memory_format)


def rand_like(input, dtype=None, requires_grad=False, memory_format=None):  # noqa: A002
    """``rand`` with the shape and (unless ``dtype`` is given) the dtype of ``input``, laid
    out as ``input`` (``memory_format``: see ``empty_like``)."""
    _like_input(input, "rand_like")
    return _laid_out_like(rand(tuple(input.shape), dtype=dtype or input.dtype,
                               requires_grad=requires_grad), input, memory_format)


def randint_like(input, low=0, high=None, dtype=None, requires_grad=False,  # noqa: A002
                 memory_format=None):
    """``randint`` with the shape and (unless ``dtype`` is given) the dtype of ``input``,
    laid out as ``input`` (``memory_format``: see ``empty_like``)."""
    _like_input(input, "randint_like")
    if high is None:
        low, high = 0, low
    return _laid_out_like(randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                                  requires_grad=requires_grad), input, memory_format)


# ----------------------------------------------------------------- legacy constructors


def legacy_new(cls, dtype, args, kwargs):
    """``FloatTensor(2, 3)`` is uninitialised of that size (zeros here); ``FloatTensor([1, 0])``
    is that data, as in the PyTorch of the seed post."""
    if kwargs.pop("device", None) not in (None, "cpu"):
        raise RuntimeError("legacy constructors make CPU tensors; use .to('cuda') after")
    if "data" in kwargs and not args:
        args = (kwargs.pop("data"),)
    if kwargs:
        raise TypeError(f"legacy tensor constructor got unexpected arguments {sorted(kwargs)}")
    if not args:
        return make_tensor(np.zeros((0,), dtype.numpy))
    if len(args) == 1 and isinstance(args[0], Size):
        return make_tensor(np.zeros(tuple(args[0]), dtype.numpy))
    if builtins.all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return make_tensor(np.zeros(_size(args, cls.__name__), dtype.numpy))
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            # PyTorch: the legacy constructor aliases a tensor of its own dtype, and refuses
            # to convert one of another dtype
            if data.dtype is not dtype:
                raise TypeError(
                    f"expected {dtype} (got {data.dtype}) in {cls.__name__}(tensor); convert it "
                    f"with tensor.to({dtype})"
                )
            return make_tensor(data._data)
        if not (_is_sequence(data) or isinstance(data, np.ndarray)):
            raise TypeError(
                f"new(): data must be a sequence (got {type(data).__name__}); write "
                f"{cls.__name__}([{data!r}]) for one value"
            )
        return make_tensor(_infer_array(data, dtype))
    raise TypeError(
        f"{cls.__name__}() takes a size (ints) or one sequence of data, got {args!r}; e.g. "
        f"{cls.__name__}(2, 3) or {cls.__name__}([1, 0])"
    )


def _legacy(name, dtype):
    def __new__(cls, *args, **kwargs):  # noqa: N807
        return legacy_new(cls, dtype, args, kwargs)

    def __instancecheck__(cls, other):  # noqa: N807
        return isinstance(other, Tensor) and other.dtype is dtype

    meta = type(name + "Meta", (type,), {"__instancecheck__": __instancecheck__})
    return meta(name, (), {"__new__": __new__, "__doc__": f"Legacy constructor: {dtype} data.",
                           "dtype": dtype})


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
