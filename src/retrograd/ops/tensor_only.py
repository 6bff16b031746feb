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
