"""The non-tensor operands of the defop callers (ops/_apply.py): Python numbers, NumPy
scalars, and PyTorch's TypeErrors for the values it refuses where it wants a Tensor."""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..tensor import make_tensor


# Python's own values, which PyTorch's parser refuses where it wants a Tensor; the op code's
# first-order derivatives pass arrays and NumPy scalars here, never these
_NOT_ARRAYS = frozenset((int, float, bool, complex, type(None), list, tuple, str))
# the two-input ops PyTorch computes on two Python numbers, giving a 0-d tensor
_NUMBERS_GIVE_TENSOR = frozenset(("add", "sub", "mul", "div", "true_divide", "floor_divide"))


def not_tensor(name, value, what="input", position=1):
    """PyTorch's TypeError for a non-tensor ``value`` given for a Tensor argument."""
    return TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, not "
                     f"{type(value).__name__} (wrap it: retrograd.tensor(...))")


def numbers_only(name, a, b):
    """``a`` as the 0-d tensor PyTorch makes of it for ``name(a, b)`` of two Python numbers
    (``torch.add(2, 2)`` is ``tensor(4)``), or PyTorch's TypeError where it refuses them."""
    numbers = (int, float, bool, complex)
    if name not in _NUMBERS_GIVE_TENSOR or type(a) not in numbers or type(b) not in numbers:
        if type(a) not in numbers:
            return _raise(not_tensor(name, a))
        return _raise(TypeError(
            f"{name}() received an invalid combination of arguments - got "
            f"({type(a).__name__}, {type(b).__name__}): one of them must be a Tensor (wrap "
            "it: retrograd.tensor(...))"))
    if type(a) is complex or type(b) is complex:
        return _raise(TypeError(f"{name}(): retrograd has no complex dtype (got {a!r}, {b!r}); "
                                "store real and imaginary parts as two real tensors"))
    return make_tensor(np.asarray(a, dtype=dtypes._scalar_dtype(a).numpy))


def _raise(error):
    raise error


def _scalar_operand(value, name):
    """The non-tensor operand of a binary op: NumPy scalars count as Python numbers (as in
    PyTorch, so ``x * np.float64(2)`` stays float32); arrays pass; lists, None... don't."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, numbers.Number) or hasattr(value, "shape"):
        return value
    raise TypeError(
        f"{name}(): argument 'other' must be Tensor or Number, not {type(value).__name__} "
        "(convert it first, e.g. with retrograd.tensor(...))"
    )


def _wrap_scalar(value, dtype):
    """A Python int outside an integer dtype's range, wrapped into it as PyTorch does."""
    return np.array(value).astype(dtype)[()]
