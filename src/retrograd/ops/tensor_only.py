"""PyTorch's TypeError for a Python number where an op's signature takes a Tensor only.

Most two-input ops take a number for ``other`` (``x.add(2)``); these do not, in PyTorch
2.13: ``torch.hypot(x, 2.0)``, ``x.atan2_(1.0)``, ``torch.maximum(x, 0)`` raise its
argument parser's TypeError, and so does a number as the first argument of a function
(``torch.eq(2.0, x)``).  retrograd's op code takes numbers (its derivatives call these
ops with them), so the public names are wrapped here, once every op is registered: the
registry's function, its method and in-place forms, checked before anything else runs (as
PyTorch's parser comes before its checks of shapes, dtypes and memory overlap).
"""

from __future__ import annotations

import functools

from ..tensor import Tensor
from . import registry

# both arguments must be tensors (the function, the method and the in-place forms)
_BOTH = ("atan2", "hypot", "logaddexp", "igamma", "igammac", "maximum", "minimum", "dist",
         "logical_and", "logical_or", "logical_xor", "cross", "nextafter", "gcd", "lcm")
# a number may be ``other`` (x.eq(2)), never ``input`` (the function's first argument)
_INPUT = ("eq", "ne", "lt", "gt", "le", "ge", "dot", "vdot", "inner", "outer", "kron",
          "clamp_min", "clamp_max")


def _is_tensor(value):
    # (inside vmap an argument may be a batched stand-in: the op's own rule takes it)
    return isinstance(value, Tensor) or hasattr(value, "__retrograd_batched__")


def _refuse(name, what, position, value):
    return TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, not "
                     f"{type(value).__name__} (wrap it: retrograd.tensor(...))")


def _checked(fn, name, method, other_too):
    """``fn`` (a function, or a method when ``method``) refusing a non-tensor input (the
    function's first argument) and, with ``other_too``, a non-tensor ``other``."""

    @functools.wraps(fn)
    def _call(*args, **kwargs):  # (private: calling_op names the op, not this)
        if not method and args and not _is_tensor(args[0]):
            raise _refuse(name, "input", 1, args[0])
        if not method and "input" in kwargs and not _is_tensor(kwargs["input"]):
            raise _refuse(name, "input", 1, kwargs["input"])
        if other_too:
            k = 1  # (a method's self is args[0] too)
            other = args[k] if len(args) > k else kwargs.get("other", None)
            if (len(args) > k or "other" in kwargs) and not _is_tensor(other):
                raise _refuse(name, "other", 1 if method else 2, other)
        return fn(*args, **kwargs)

    return _call


def _wrap(key, other_too):
    e = registry.entry(key)
    if e.names.get("torch"):
        e.fn = _checked(e.fn, key, False, other_too)
    if other_too:
        for m, f in list(e.methods.items()):
            if not m.startswith("__"):
                e.methods[m] = _checked(f, m, True, True)


for _key in _BOTH:
    _wrap(_key, True)
    _inplace = registry.entry(_key).inplace
    if _inplace is not None:
        _wrap(_inplace, True)
for _key in _INPUT:
    _wrap(_key, False)


# ----------------------------------------------------------------- a number as ``input``
# Every other registered function whose first parameter is a tensor refuses a Python number
# there, as PyTorch 2.13's parser does (torch.sign(2), torch.clamp(2, x), torch.eq(2, x)):
# retrograd's op code would compute a number or fail inside with an AttributeError.  The
# functions below take one (PyTorch's Scalar-first overloads, the number-number forms that
# make a 0-d tensor, or a first parameter that is no tensor), checked against torch by
# tests/fuzz/test_regressions_dtyped.py.
_NUMBER_FIRST_OK = frozenset((
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "pow", "float_power", "xlogy", "xlog1py", "polygamma",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "isin", "bucketize", "normal", "split", "norm", "tensordot", "einsum", "stft", "lstsq", "eig",
    "symeig", "solve", "matrix_rank", "lobpcg", "pca_lowrank", "svd_lowrank",
    "unique_consecutive", "unravel_index", "broadcast_shapes"))
# ... of which these are left unwrapped: retrograd.mul is Tensor.mul (the fast path,
# tests/ops/test_out_keywords.py), so two numbers give a number (PyTorch: a 0-d tensor)
_UNWRAPPED = frozenset((
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide"))
_TENSOR_FIRST = ("input", "x", "self", "A", "a", "x1", "input1", "y", "condition",
                 "sorted_sequence")
_NUMBER_TYPES = (int, float, bool, complex)
# Python's own values a user may pass by mistake (a list, None): refused as numbers are
_NOT_TENSORS = frozenset((*_NUMBER_TYPES, type(None), list, tuple, str))


def _number_input(fn, name):
    """``fn`` taking a Python number as ``input`` as PyTorch does: refused, unless ``name``
    has a Scalar-first overload; then a number first needs a tensor second, and ``input=``
    by keyword is refused (that overload names it ``self``)."""
    refuse_first = name not in _NUMBER_FIRST_OK

    @functools.wraps(fn)
    def _call(*args, **kwargs):
        if args and args[0].__class__ in _NOT_TENSORS:
            if refuse_first or args[0].__class__ not in _NUMBER_TYPES:
                raise _refuse(name, "input", 1, args[0])
            if len(args) > 1 and args[1].__class__ in _NUMBER_TYPES:
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"({type(args[0]).__name__}, {type(args[1]).__name__}): one "
                                "of them must be a Tensor (wrap it: retrograd.tensor(...))")
        if kwargs and "input" in kwargs and kwargs["input"].__class__ in _NOT_TENSORS:
            raise _refuse(name, "input", 1, kwargs["input"])
        return fn(*args, **kwargs)

    # (the op itself one unwrap away, as for the other wrapped names)
    _call.__wrapped__ = getattr(fn, "__wrapped__", fn)
    return _call


def _wrap_number_input():
    import inspect

    done = set(_BOTH) | set(_INPUT)
    for e in registry.entries():
        # (functions of nn.functional, special, linalg only are named as there)
        names = e.names.get("torch") or next((n for n in e.names.values() if n), ())
        if not names or e.key in done or e.fn is None or names[0] in _UNWRAPPED:
            continue
        if getattr(e.fn, "op", None) is not None:
            continue  # (defop's callers: nothing in between, tests/ops/test_out_keywords.py)
        if getattr(getattr(e.fn, "__wrapped__", e.fn), "checks_input", False):
            continue  # (hot functions that check on their slow path: linear, cross_entropy)
        try:
            params = list(inspect.signature(e.fn).parameters)
        except (TypeError, ValueError):
            continue
        if not params or params[0] not in _TENSOR_FIRST:
            continue
        e.fn = _number_input(e.fn, names[0])


_wrap_number_input()
