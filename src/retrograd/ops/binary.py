"""More elementwise ops of two or three tensors: addcmul, addcdiv, lerp (what optimizers
use), atan2, hypot, logaddexp, xlogy, and clamp_min / clamp_max.

Inputs broadcast; the engine sums each gradient back to its input's shape.
"""

from __future__ import annotations

import math

from ..backend import namespace
from ..tensor import Tensor
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .pointwise import exp, log, where


def _addcmul_fwd(a, t1, t2, value):
    return a + value * (t1 * t2)


def _addcmul_vjp(node, g, saved):
    _, t1, t2 = saved
    value = node.params[0]
    n0, n1, n2 = node.next
    return (g if n0 else None, g * value * t2 if n1 else None, g * value * t1 if n2 else None)


# input is never read; tensor1 only for tensor2's derivative and vice versa (PyTorch)
_addcmul = defop("addcmul", _addcmul_fwd, _addcmul_vjp, "AddcmulBackward0", 3, INPUTS,
                 "promote", saved_for=lambda needs: (False, needs[2], needs[1]))


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002 - PyTorch's names
    """``input + value * tensor1 * tensor2``."""
    if all(getattr(t, "_data", t).dtype.kind == "b" for t in (input, tensor1, tensor2)
           if hasattr(getattr(t, "_data", t), "dtype")):
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    return _addcmul(input, tensor1, tensor2, value)


def _addcdiv_fwd(a, t1, t2, value):
    return a + value * (t1 / t2)


def _addcdiv_vjp(node, g, saved):
    _, t1, t2 = saved
    value = node.params[0]
    n0, n1, n2 = node.next
    return (g if n0 else None, g * value / t2 if n1 else None,
            -g * value * t1 / (t2 * t2) if n2 else None)


_addcdiv = defop("addcdiv", _addcdiv_fwd, _addcdiv_vjp, "AddcdivBackward0", 3, INPUTS, "float",
                 saved_for=lambda needs: (False, needs[2], needs[1] or needs[2]))


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2``."""
    kinds = [getattr(t, "_data", t).dtype.kind for t in (tensor1, tensor2)
             if hasattr(getattr(t, "_data", t), "dtype")]
    if kinds and all(k in "biu" for k in kinds):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. Convert one of them "
            "to a floating dtype first, e.g. tensor1.float()"
        )
    return _addcdiv(input, tensor1, tensor2, value)


def _lerp_fwd(a, b, w):
    # PyTorch's two-sided formula: from `a` for |w| < 0.5, from `b` otherwise (exact at
    # w = 1, and lerp(inf, 0, 0.5) = inf where a + w * (b - a) is nan)
    diff = b - a
    if not hasattr(w, "shape"):
        return a + w * diff if abs(w) < 0.5 else b - diff * (1 - w)
    xp = namespace(w)
    return xp.where(xp.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))


def _lerp_number_vjp(node, g, saved):
    w = node.params[0]
    n0, n1 = node.next
    return (g * (1 - w) if n0 else None, g * w if n1 else None)


def _lerp_tensor_vjp(node, g, saved):
    a, b, w = saved
    n0, n1, n2 = node.next
    return (g * (1 - w) if n0 else None, g * w if n1 else None, g * (b - a) if n2 else None)


# a number weight: nothing is read but the weight; a tensor weight: input and end only for
# the weight's derivative, the weight always (PyTorch's LerpBackward0/1)
_lerp_number = defop("lerp", _lerp_fwd, _lerp_number_vjp, "LerpBackward0", 2, NOTHING,
                     "promote")
_lerp_tensor = defop("lerp", _lerp_fwd, _lerp_tensor_vjp, "LerpBackward1", 3, INPUTS, "promote",
                     saved_for=lambda needs: (needs[2], needs[2], True))


def lerp(input, end, weight):  # noqa: A002
    """``input + weight * (end - input)``; ``weight`` a number or a tensor."""
    from .pointwise import scalar_type_name

    dt = input._data.dtype
    for other, what in ((end, "end"), (weight, "weight")):
        if isinstance(other, Tensor) and other._data.dtype != dt:
            raise RuntimeError(f"expected dtype {scalar_type_name(dt).lower()} for `{what}` "
                               f"but got dtype {scalar_type_name(other._data.dtype).lower()}"
                               " (lerp needs one floating dtype; convert with .to())")
    if dt.kind != "f":
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for "
                                  f"'{scalar_type_name(dt)}'; lerp is for floating tensors")
    if isinstance(weight, Tensor):
        return _lerp_tensor(input, end, weight)
    return _lerp_number(input, end, weight)


def _atan2_vjp(node, g, saved):
    y, x = saved
    ny, nx = node.next
    # PyTorch: both derivatives are 0 at (0, 0), where x / r2 would be nan (its second
    # derivatives stay nan there, as PyTorch's)
    r2 = x * x + y * y
    recip = where(r2 == 0, 0.0, 1 / r2)
    return (g * x * recip if ny else None, g * -y * recip if nx else None)


def _floats_only(fn, name):
    """``fn`` refusing two integer (or bool) operands, as PyTorch's kernels do."""

    def forward(a, b):
        if (getattr(a, "dtype", None) is None or a.dtype.kind in "biu") and (
                getattr(b, "dtype", None) is None or b.dtype.kind in "biu"):
            kind = next(x.dtype for x in (a, b) if hasattr(x, "dtype"))
            from .pointwise import scalar_type_name

            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{scalar_type_name(kind)}'; convert to a float first")
        return fn(a, b)

    return forward


def _in_float(fn):
    """``fn`` computing in PyTorch's result dtype (the default float for two integers):
    NumPy would compute log or arctan2 of a small integer type in float16 and lose digits."""
    from .. import dtypes

    def forward(a, b):
        da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
        if (da is None or da.kind == "f") and (db is None or db.kind == "f") and da == db:
            return fn(a, b)  # the common case: nothing to convert
        want = dtypes.result_type(a, b).numpy
        if want.kind != "f":
            want = dtypes.get_default_dtype().numpy
        a = a.astype(want, copy=False) if da is not None else a
        b = b.astype(want, copy=False) if db is not None else b
        return fn(a, b)

    return forward


atan2 = defop("atan2", _in_float(lambda y, x: namespace(y).arctan2(y, x)), _atan2_vjp,
              "Atan2Backward0", 2, INPUTS, "float")


def _hypot_vjp(node, g, saved):
    a, b, out = saved
    na, nb = node.next
    return (g * a / out if na else None, g * b / out if nb else None)


hypot = defop("hypot", _floats_only(lambda a, b: namespace(a).hypot(a, b), "hypot"), _hypot_vjp,
              "HypotBackward0", 2,
              INPUTS | OUTPUT, "float",  # each input only for its own derivative
              saved_for=lambda needs: needs)


def _logaddexp_vjp(node, g, saved):
    # PyTorch's g / (1 + exp(b - a)): finite where an input is +-inf (exp(a - out) is nan
    # there, inf - inf)
    a, b = saved
    na, nb = node.next
    return (g / (1 + exp(b - a)) if na else None, g / (1 + exp(a - b)) if nb else None)


logaddexp = defop("logaddexp", _floats_only(lambda a, b: namespace(a).logaddexp(a, b),
                                             "logaddexp"), _logaddexp_vjp,
                  "LogaddexpBackward0", 2, INPUTS, "float")


def _xlogy_fwd(x, y):
    from .stats import quiet

    xp = namespace(x if hasattr(x, "dtype") else y)
    with quiet(xp):
        r = x * xp.log(y)
    # 0 where x == 0, even where log(y) is -inf or nan (but nan where y is nan)
    return xp.where((xp.asarray(x) == 0) & ~xp.isnan(xp.asarray(y)), xp.zeros_like(r), r)


def _xlogy_vjp(node, g, saved):
    x, y = saved
    nx, ny = node.next
    # d/dx = log(y), but 0 where x == 0 and y <= 0 (PyTorch's masked_fill); d/dy = x / y
    return (where((x == 0) & (y <= 0), 0.0, g * log(y)) if nx else None,
            g * x / y if ny else None)


_xlogy = defop("xlogy", _in_float(_xlogy_fwd), _xlogy_vjp, "XlogyBackward0", 2, INPUTS, "float")


def _xlogy_number_vjp(node, g, saved):
    # ``other`` a number y: d/dx = log(y) (PyTorch's XlogyBackward2), but 0 where x == 0
    # when y <= 0, as the two-tensor form
    y = node.params[0]
    if y > 0:
        return (g * math.log(y),)
    (x,) = saved
    return (where(x == 0, g * 0, g * (-math.inf if y == 0 else math.nan)),)


# a number keeps x's float dtype (float32 stays float32), as any Python scalar operand
_xlogy_number = defop("xlogy", lambda x, y: _xlogy_fwd(x, namespace(x).asarray(y, x.dtype)),
                      _xlogy_number_vjp, "XlogyBackward2", 1, INPUTS, "float")


def xlogy(input, other):  # noqa: A002 - PyTorch's names
    """``input * log(other)``, 0 where ``input == 0``."""
    if isinstance(input, Tensor) and isinstance(other, (int, float)) \
            and not isinstance(other, bool):
        return _xlogy_number(input, other)
    return _xlogy(input, other)


def _clamp_min_vjp(node, g, saved):
    (a,) = saved
    return (g * (a >= node.params[0]),)  # the bound itself passes the gradient, as clamp


def _clamp_max_vjp(node, g, saved):
    (a,) = saved
    return (g * (a <= node.params[0]),)


_clamp_min = defop("clamp_min", lambda a, m: namespace(a).maximum(a, m), _clamp_min_vjp,
                   "ClampMinBackward0", 1, INPUTS)
_clamp_max = defop("clamp_max", lambda a, m: namespace(a).minimum(a, m), _clamp_max_vjp,
                   "ClampMaxBackward0", 1, INPUTS)


def clamp_min(input, min):  # noqa: A002
    """``max(x, min)``; a tensor bound goes through ``clamp``."""
    from .pointwise import clamp, clamp_min_tensor

    if isinstance(min, Tensor):
        return clamp(input, min=min, _op=clamp_min_tensor)
    if isinstance(min, float) and getattr(input, "_data", input).dtype.kind != "f":
        return clamp(input, min=min)  # an int clamped to a float number: the default float
    return _clamp_min(input, min)


def clamp_max(input, max):  # noqa: A002
    """``min(x, max)``; a tensor bound goes through ``clamp``."""
    from .pointwise import clamp, clamp_max_tensor

    if isinstance(max, Tensor):
        return clamp(input, max=max, _op=clamp_max_tensor)
    if isinstance(max, float) and getattr(input, "_data", input).dtype.kind != "f":
        return clamp(input, max=max)  # an int clamped to a float number: the default float
    return _clamp_max(input, max)


__all__ = ["addcmul", "addcdiv", "lerp", "atan2", "hypot", "logaddexp", "xlogy", "clamp_min",
           "clamp_max"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _name in __all__:
    register(globals()[_name], _name, special=("xlogy",) if _name == "xlogy" else ())
