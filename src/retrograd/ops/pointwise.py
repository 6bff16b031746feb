"""Elementwise arithmetic (add, sub, mul, div, pow, neg, reciprocal; integer and rounded
division), forward on arrays and derivative side by side, and the registration of the basic
elementwise ops.  Its families live beside it: pointwise_common (broadcast errors, result
dtypes, zero gradients, ``to``), selection (where, clamp, maximum), elementary (exp, log,
tanh, relu...), pointwise_compare (eq, lt, logical and bitwise ops); their public names are
re-exported here.

Derivatives are written with these same ops and Python operators, so they compute on
arrays in a first-order backward and record a graph under ``create_graph=True``.
Broadcasting is not undone here: the engine reduces each gradient to its input's shape.
"""

from __future__ import annotations

import math
import numbers

import numpy as _np

from .. import dtypes
from ..autograd.graph import sole_grad as _sole
from ..backend import namespace
from ..tensor import Tensor
from ._apply import INPUTS, NOTHING, OUTPUT, _wrap_scalar, defop
from ._errors import check_broadcast
from ._errors import scalar_type_name  # noqa: F401  (used here, and imported from here)

# the families pointwise's arithmetic builds on, in their own modules; their public names are
# re-exported here (``pointwise.where``, ``pointwise.exp``... are their import path)
from .elementary import (  # noqa: F401
    abs, cos, derivative_record, exp, log, relu, sigmoid, sign, sin, sqrt, tanh,
    threshold_backward,
)
from .pointwise_common import (  # noqa: F401
    broadcast_error, in_result_dtype, to_dtype, zeros_like_grad,
)
from .pointwise_compare import (  # noqa: F401
    bitwise_and, bitwise_or, eq, ge, gt, le, logical_and, logical_not, logical_or, lt, ne,
)
from .selection import (  # noqa: F401
    clamp, clamp_max_tensor, clamp_min_tensor, grad_where, maximum, minimum,
    refuse_bool_number_bounds, where,
)


# ----------------------------------------------------------------- arithmetic


def _add_vjp(node, g, saved):
    a, b = node.next
    alpha = node.params[0] if node.params else 1
    return (g if a else None, (g if alpha == 1 else g * alpha) if b else None)


def _add_fwd(a, b, alpha=1):
    try:
        return a + b if alpha == 1 else a + b * alpha
    except ValueError as e:
        raise broadcast_error(a, b, "add") or e from None


add_op = defop("add", _add_fwd, _add_vjp, "AddBackward0", 2, NOTHING, "promote",
               fast=_np.add)


def add(input, other, *, alpha=1):  # noqa: A002 - PyTorch's names
    """``input + alpha * other``, broadcasting; either may be a Python number.

    Examples
    --------
    >>> import retrograd as T
    >>> T.add(T.tensor([1.0, 2.0]), T.tensor([1.0, 1.0]), alpha=2)
    tensor([3., 4.])
    """
    if alpha.__class__ is int and alpha == 1:
        return add_op(input, other)
    return add_op(input, other, check_alpha(input, other, alpha))


def check_alpha(input, other, alpha):  # noqa: A002 - PyTorch's names
    """``alpha`` for add/sub as PyTorch takes it: no fractional alpha when the result is an
    integer or bool tensor (NumPy would silently compute in float), no bool alpha unless
    the result is bool, and for a bool result alpha counts as a bool (True + 2 * True is
    True, where NumPy would give the integer 3)."""
    kind = dtypes.result_type(input, other).numpy.kind
    if type(alpha).__module__ == "numpy":  # a NumPy scalar counts as the Python number
        alpha = alpha.item()             # (np.float64 would make float32 data float64)
    if alpha.__class__ is bool:
        if kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif kind in "biu" and not isinstance(alpha, numbers.Integral):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number "
            f"(alpha={alpha!r}); pass an integer alpha, or convert the tensors with .float()")
    return bool(alpha) if kind == "b" else alpha


def _sub_vjp(node, g, saved):
    a, b = node.next
    alpha = node.params[0] if node.params else 1
    return (g if a else None, (-g if alpha == 1 else g * -alpha) if b else None)


def _is_bool(x) -> bool:
    return x.__class__ is bool or (hasattr(x, "dtype") and x.dtype.kind == "b")


def _check_bool_sub(a, b):
    # PyTorch refuses `-` with bools (NumPy only refuses bool - bool, with a TypeError).
    if _is_bool(a) or _is_bool(b):
        if _is_bool(a) and _is_bool(b):
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead (or "
            "convert it first with .float())."
        )


def _sub_fwd(a, b, alpha=1):
    _check_bool_sub(a, b)
    try:
        return a - b if alpha == 1 else a - b * alpha
    except ValueError as e:
        raise broadcast_error(a, b, "sub") or e from None


sub_op = defop("sub", _sub_fwd, _sub_vjp, "SubBackward0", 2, NOTHING, "promote",
               fast=_np.subtract)


def sub(input, other, *, alpha=1):  # noqa: A002 - PyTorch's names
    """``input - alpha * other``, broadcasting; either may be a Python number."""
    if alpha.__class__ is int and alpha == 1:
        return sub_op(input, other)
    return sub_op(input, other, check_alpha(input, other, alpha))
# ``2 - x``: PyTorch records it as RsubBackward1
def _with_number(fn):
    """``fn(tensor_array, number)`` with PyTorch's promotion (NumPy's differs for integer
    arrays and float numbers: int64 - 2.5 is float32 in PyTorch, float64 in NumPy)."""

    def forward(a, c):
        if a.dtype.kind == "f":
            return fn(a, c)
        want = dtypes.result_type(a, c).numpy
        try:
            return fn(a.astype(want) if want.kind == "f" else a, c).astype(want, copy=False)
        except OverflowError:  # -2 - uint8_tensor: PyTorch wraps the number, NumPy raises
            return fn(a, _wrap_scalar(c, want)).astype(want, copy=False)

    return forward


# ``2 - x``: the number is a parameter, not an input (PyTorch's rsub.Scalar: RsubBackward1
# with one next_function)
_number_minus = _with_number(lambda a, c: c - a)


def _rsub_number_fwd(a, c):
    _check_bool_sub(c, a)  # before any cast: 2.5 - bool_tensor is an error in PyTorch
    return _number_minus(a, c)


# ATen's tensor-with-a-number ops (add(Tensor, Scalar)...), as C++ composites record them:
# AddBackward1 / SubBackward1 / MulBackward1 with one edge, the number a parameter (Python's
# ``x * c`` records MulBackward0 instead)
# (an integer or bool tensor with a float number gives the default float dtype, as
# PyTorch's: NumPy's float64 made integer losses float64; seed 12525854)
add_number = defop("add", _with_number(lambda a, c: a + c), lambda node, g, saved: (g,),
                   "AddBackward1", 1)
sub_number = defop("sub", _with_number(lambda a, c: a - c), lambda node, g, saved: (g,),
                   "SubBackward1", 1)
def _scale(g, c):
    """``g * c`` for a Python number ``c``; into ``g`` itself when it is the engine's own
    gradient (the result keeps g's dtype either way: a Python number never promotes)."""
    if g is _sole[0] and (type(c) is float or type(c) is int):
        g *= c
        return g
    return g * c


mul_number = defop("mul", _with_number(lambda a, c: a * c),
                   lambda node, g, saved: (_scale(g, node.params[0]),), "MulBackward1", 1)


rsub = defop("rsub", _rsub_number_fwd, lambda node, g, saved: (-g,), "RsubBackward1", 1,
             NOTHING)


def _mul_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    if nb is None:  # x * c with a number c (x * 0.1): g * c, in g's memory when it may
        return (_scale(g, b), None)  # (``_scale`` checks that b is a number)
    return (g * b if na else None, g * a if nb else None)


def _mul_fwd(a, b):
    try:
        return a * b
    except ValueError as e:
        raise broadcast_error(a, b, "mul") or e from None


# each input is saved only for the other's derivative (PyTorch's MulBackward0: x * 2 and
# x * w with w needing no grad keep w only, so x may change in place afterwards)
mul = defop("mul", _mul_fwd, _mul_vjp, "MulBackward0", 2, INPUTS, "promote",
            saved_for=lambda needs: (needs[1], needs[0]), fast=_np.multiply)


def _div_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    ga = g / b if na else None
    # -g * ((a / b) / b), PyTorch's order: -g * a / (b * b) has a nan second derivative
    # at b == 0 or inf (it differentiates b * b: inf * 0)
    gb = -g * ((a / b) / b) if nb else None
    return (ga, gb)


def _div_fwd(a, b):
    try:
        return a / b
    except ValueError as e:
        raise broadcast_error(a, b, "div") or e from None


# a / b: b is read by both derivatives, a only by b's (PyTorch's DivBackward0)
div = defop("div", _div_fwd, _div_vjp, "DivBackward0", 2, INPUTS, "float",
            saved_for=lambda needs: (needs[1], True))


def _reciprocal_vjp(node, g, saved):
    # PyTorch's -grad * (result * result), grouped as there: out * out overflows to inf for
    # |x| < 1e-154, so a zero gradient there gives 0 * inf = nan in both (not -0 * out * out)
    (out,) = saved
    return (-g * (out * out),)


reciprocal = defop("reciprocal", lambda a: 1 / a, _reciprocal_vjp, "ReciprocalBackward0", 1,
                   OUTPUT, "float")


def rdiv(x, other):
    """``other / x`` (``Tensor.__rtruediv__``): PyTorch records ``reciprocal(x) * other``
    (MulBackward0 over ReciprocalBackward0), and so does retrograd."""
    if isinstance(other, Tensor):
        return div(other, x)
    return mul(reciprocal(x), other)


def _neg_fwd(a):
    try:
        return -a
    except TypeError:  # NumPy refuses -bool with a TypeError; PyTorch's class is RuntimeError
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        ) from None


neg = defop("neg", _neg_fwd, lambda node, g, saved: (-g,), "NegBackward0")


def _pow_vjp(node, g, saved):
    # tensor ** tensor (a Python number on either side is pow / pow_scalar_base below);
    # PyTorch's PowBackward1 saves base, exponent and the result
    base, exponent, out = saved
    nb, ne = node.next
    gb = ge = None
    if nb:
        _check_bool_sub(getattr(exponent, "_data", exponent), 1)  # (p - 1: a bool p raises)
        # d(x**p)/dx = p * x**(p-1); PyTorch gives 0 where p == 0 (even at x == 0)
        gb = where(exponent == 0, 0.0, g * exponent * base ** (exponent - 1))
    if ne:
        # d(x**p)/dp = x**p * log(x); PyTorch defines it as 0 where x == 0 and p >= 0, with
        # g outside the where, as PyTorch's pow_backward_exponent: so a second derivative
        # there is nan (the masked branch's 0 times log(0)), as PyTorch's
        ge = g * where((base == 0) & (exponent >= 0), 0.0, out * log(base))
    return (gb, ge)


def _pow_fwd(a, b):
    try:
        return a ** b
    except ValueError:  # NumPy: "Integers to negative integer powers are not allowed."
        err = broadcast_error(a, b, "pow")
        if err is not None:
            raise err from None
        return _int_pow_negative(a, b)


def _int_pow_negative(a, b):
    # PyTorch refuses an integer tensor to a negative Python int power, but computes
    # tensor ** tensor exactly: 1 ** -n = 1, (-1) ** -n = +-1, anything else ** -n = 0.
    if not hasattr(b, "dtype"):
        raise RuntimeError(
            f"Integers to negative integer powers are not allowed. Convert the base to "
            f"floating point first, e.g. x.float() ** {b}"
        )
    xp = namespace(b)
    base = xp.asarray(a)
    positive = xp.where(b >= 0, b, 0)
    odd = (b % 2) != 0
    negative_result = xp.where(base == 1, 1, xp.where(base == -1, xp.where(odd, -1, 1), 0))
    return xp.where(b >= 0, base ** positive, negative_result).astype(
        xp.result_type(base, b))


def _pow_tensor_fwd(a, b):
    # tensor ** tensor is PyTorch's pow kernel everywhere, but NumPy's power loop computes
    # an exponent of 0.5 that is the same for a whole inner loop (a 0-d or broadcast
    # exponent) as sqrt: -0.0 ** 0.5 is -0.0 and -inf ** 0.5 nan there, +0.0 and inf in pow
    # (seed 21187886: an atan2 of it then gave -pi against pi).  Only those two bases
    # differ beyond rounding; a Python number exponent is sqrt in PyTorch too (pow below)
    out = _pow_fwd(a, b)
    if getattr(out, "dtype", None) is not None and out.dtype.kind == "f":
        xp = namespace(out)
        half = b == 0.5
        if xp.any(half):
            fix = half & ((a == 0) | (a == -xp.inf))
            if xp.any(fix):
                out = xp.where(fix, xp.where(a == 0, 0.0, xp.inf).astype(out.dtype), out)
    return out


pow_tensor = defop("pow", _pow_tensor_fwd, _pow_vjp, "PowBackward1", 2, INPUTS | OUTPUT, "promote")


# A Python number as exponent or base is a parameter, not an input: like PyTorch's
# pow.Tensor_Scalar / pow.Scalar, the node has one next_function.


def _pow_exponent_vjp(node, g, saved):
    (base,) = saved
    p = node.params[0]
    # d(x**p)/dx = p * x**(p-1); PyTorch gives zeros where p == 0 (even at x == 0, and for
    # an inf or nan g)
    if p == 0:
        return (zeros_like_grad(g),)
    # (the pow op, not `**`, also on arrays: x ** -0.5 is rsqrt, as PyTorch's, see below)
    # grouped as PyTorch's pow_backward, grad * (p * x ** (p - 1)): a zero grad meets an
    # overflowed 2 * x as 0 * inf = nan there (erf's second derivative at a huge x through
    # its x.pow(2), seed 18500792), not (grad * p) * x = 0
    return (g * (p * pow(base, p - 1)),)


def _pow_exponent_fwd(a, p):
    if p == -0.5 and a.dtype.kind == "f":
        # PyTorch computes x ** -0.5 as rsqrt(x): -inf at -0.0 and nan at -inf, where
        # NumPy's pow gives inf and 0
        return 1 / namespace(a).sqrt(a)
    if a.size == 0 and a.dtype.kind in "biu" and p.__class__ is int and p < 0:
        return _int_pow_negative(a, p)  # raises as PyTorch, also with nothing to compute
    return _pow_fwd(a, p)


pow = defop("pow", _pow_exponent_fwd, _pow_exponent_vjp, "PowBackward0", 1, INPUTS)  # noqa: A001


def _pow_base_vjp(node, g, saved):
    exponent, out = saved
    base = node.params[0]
    # d(b**x)/dx = b**x * log(b); PyTorch defines it as 0 where b == 0 and x >= 0
    if base == 0:
        return (g * where(exponent >= 0, 0.0, out * -math.inf),)  # g outside, as above
    return (g * out * (math.log(base) if base > 0 else math.nan),)


def _pow_base_fwd(x, base):
    return _pow_fwd(base, x)


pow_scalar_base = defop("pow", _pow_base_fwd, _pow_base_vjp, "PowBackward2", 1, INPUTS | OUTPUT)


def power(input, exponent):  # noqa: A002 - PyTorch's names (also for x.pow(exponent=2))
    """``a ** b`` with PyTorch's grad_fn names (PowBackward0/1/2 by which side is a tensor)."""
    a, b = input, exponent
    if _bool_operand(a) and _bool_operand(b) and b.__class__ is not bool:
        # (bool tensor ** Python bool works in PyTorch: a scalar exponent takes another path)
        check_broadcast("pow", a, b)  # (the shapes' error first, as PyTorch's)
        raise NotImplementedError(
            "\"pow\" not implemented for 'Bool'; convert the base first, e.g. x.int() ** y"
        )
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return _pow_fwd(a, b)  # arrays (a first-order derivative): just compute
    if isinstance(b, Tensor):
        if isinstance(a, Tensor):
            return pow_tensor(a, b)
        if b._data.dtype.kind == "f":
            return pow_scalar_base(b, a)
        return _integer_pow(pow_scalar_base, b, a, dtypes.result_type(a, b._data))
    if a._data.dtype.kind == "f":
        return pow(a, b)
    return _integer_pow(pow, a, b, dtypes.result_type(a._data, b))


def _integer_pow(op, tensor, number, want):
    """pow of an integer or bool tensor with a Python number, in PyTorch's result dtype
    (int ** 2.5 is float32, bool ** True is bool): NumPy would give float64 or int8."""
    if want.is_floating_point:
        return op(tensor.to(want), number)
    out = op(tensor, number)
    if out._data.dtype != want.numpy:
        out._data = out._data.astype(want.numpy)  # an integer result: nothing recorded
    return out


def _bool_operand(x) -> bool:
    return x.__class__ is bool or (hasattr(x, "_data") and x._data.dtype.kind == "b")



# ----------------------------------------------------------------- integer and rounded division

def _is_integral(x) -> bool:
    return x.__class__ in (int, bool) or (hasattr(x, "dtype") and x.dtype.kind in "iub")


def _check_int_divisor(a, b, what):
    # PyTorch raises for integer division by zero where NumPy returns 0 with a warning.
    if _is_integral(a) and _is_integral(b):
        if _is_bool(a) and _is_bool(b):
            check_broadcast(what, a, b)  # (the shapes' error first, as PyTorch's)
            raise NotImplementedError(
                f"\"{what}\" not implemented for 'Bool'; convert the operands first, e.g. "
                "x.int()"
            )
        zero = b == 0
        if zero if zero.__class__ is bool else zero.any():
            check_broadcast(what, a, b)
            raise RuntimeError(
                f"ZeroDivisionError: integer {what} by zero; use a floating dtype "
                "(x.float()) to get inf/nan instead"
            )



def _floor_divide_fwd(a, b):
    _check_int_divisor(a, b, "floor division")
    a, b = in_result_dtype(a, b)
    return a // b


def _remainder_fwd(a, b):
    _check_int_divisor(a, b, "remainder")
    a, b = in_result_dtype(a, b)
    arr = a if hasattr(a, "dtype") else b
    if not hasattr(arr, "astype") or arr.dtype.kind != "f":  # (arrays only, as above)
        return a % b
    # PyTorch's kernel: fmod, then + b where the nonzero rest and b differ in sign. A zero
    # rest keeps fmod's sign, the dividend's (-0.0 % 1.5 and -3.0 % 1.5 are -0.0, 0.0 % -1.5
    # is 0.0), where NumPy's % gives the divisor's; a zero divisor gives nan, quietly
    xp = namespace(arr)
    with xp.errstate(invalid="ignore", divide="ignore"):
        rest = xp.fmod(a, b)
        return xp.where((rest != 0) & ((xp.asarray(b) < 0) != (rest < 0)), rest + b, rest)


floor_divide = defop("floor_divide", _floor_divide_fwd, None, None, 2, NOTHING, "promote",
                     differentiable=False)


def _remainder_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    # PyTorch's -grad * self.div(other, rounding_mode='floor'): recorded (with a zero
    # derivative), so under create_graph the divisor's gradient requires grad, as torch's
    return (g if na else None, -g * _div_rounded(a, b, "floor") if nb else None)


# PyTorch's names: RemainderBackward0 for a number divisor, RemainderBackward1 for a tensor
# a number divisor is a parameter (PyTorch's remainder.Scalar has one next_function)
_remainder_scalar = defop("remainder", _with_number(_remainder_fwd),
                          lambda node, g, saved: (g,), "RemainderBackward0", 1, NOTHING)
_remainder_tensor = defop("remainder", _remainder_fwd, _remainder_vjp, "RemainderBackward1", 2,
                          INPUTS, "promote",  # both read only for the divisor's derivative
                          saved_for=lambda needs: (needs[1], needs[1]))


def _no_derivative(what):
    def vjp(node, g, saved):
        raise RuntimeError(
            f"derivative for aten::{what} is not implemented (as in PyTorch); compute it from "
            "differentiable ops instead"
        )

    return vjp


# ``2.5 % x``: PyTorch records a node called NotImplemented that raises in backward
_rremainder = defop("remainder", _remainder_fwd, _no_derivative("remainder"), "NotImplemented",
                    2, NOTHING, "promote")


def remainder(input, other):  # noqa: A002 - PyTorch's names
    """``input % other``, Python's modulus (the result takes the divisor's sign).

    Examples
    --------
    >>> import retrograd as T
    >>> T.remainder(T.tensor([-3.0, 5.0]), 2)
    tensor([1., 1.])
    """
    if isinstance(other, Tensor):
        return (_remainder_tensor if isinstance(input, Tensor) else _rremainder)(input, other)
    return _remainder_scalar(input, other)


# div with rounding_mode: a step function, so PyTorch's DivBackward2 gives zeros to both
def _div_rounded_fwd(a, b, mode):
    xp = namespace(a if hasattr(a, "dtype") else b)
    # in PyTorch's dtype, as remainder: a float32 a over a 0-d float64 b jumps where float32's
    # quotient does (also the divisor's derivative of remainder and fmod)
    a, b = in_result_dtype(a, b)
    ints = all(getattr(x, "dtype", None) is None and isinstance(x, (int, bool))
               or getattr(x, "dtype", None) is not None and x.dtype.kind in "biu" for x in (a, b))
    if ints:
        _check_int_divisor(a, b, f"div_{mode}")
        q = xp.floor_divide(a, b)
        if mode == "trunc":  # round toward zero: one up where floor went below an inexact q
            q = q + ((q < 0) & (q * b != a))
        return q
    with xp.errstate(divide="ignore", invalid="ignore"):
        if mode == "trunc":
            return xp.trunc(a / b)
        # NumPy's floor_divide is PyTorch's div_floor (fmod-based, not floor(a / b)), but
        # PyTorch gives a / b (+-inf, nan) for a zero divisor
        q = xp.floor_divide(a, b)
        zero = xp.asarray(b) == 0
        return xp.where(zero, a / b, q) if zero.any() else q


def _div_rounded_vjp(node, g, saved):
    na, nb = node.next
    return (zeros_like_grad(g) if na else None, zeros_like_grad(g) if nb else None)


_div_rounded = defop("div", _div_rounded_fwd, _div_rounded_vjp, "DivBackward2", 2, NOTHING,
                     "promote")


def divide(input, other, *, rounding_mode=None):  # noqa: A002
    """``input / other``; ``rounding_mode`` ``"trunc"`` or ``"floor"`` rounds the quotient
    (integers then stay integers, and the gradient is zero)."""
    if rounding_mode is None:
        return div(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    for x in (input, other):
        d = x._data if isinstance(x, Tensor) else None
        if d is not None and d.dtype.kind == "b" and all(
                (y._data.dtype.kind == "b") if isinstance(y, Tensor) else isinstance(y, bool)
                for y in (input, other)):
            raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    return _div_rounded(input, other, rounding_mode)



# ----------------------------------------------------------------- public names (registry.py)
from .registry import or_not_implemented, reflected, register  # noqa: E402

# Reflected operators put the tensor first where PyTorch records (x, 3) for 3 * x.
register(add, tensor={"__add__": add_op, "__radd__": add_op},
         signature="input, other, *, alpha=1")
register(sub, tensor={"__sub__": sub_op},  # __rsub__: binary.rsub
         signature="input, other, *, alpha=1")
register(mul, dunders=("__mul__", "__rmul__"))
register(divide, "div", tensor={"__truediv__": div, "__rtruediv__": rdiv},
         signature="input, other, *, rounding_mode=None")
register(floor_divide, function=False, method=False, dunders=("__floordiv__",),
         tensor={"__rfloordiv__": reflected(floor_divide)})
register(remainder, dunders=("__mod__",), tensor={"__rmod__": reflected(remainder)},
         signature="input, other")
register(power, "pow", dunders=("__pow__",), tensor={"__rpow__": reflected(power)},
         signature="input, exponent")
register(neg, dunders=("__neg__",))
register(abs, dunders=("__abs__",))
for _fn in (sign, exp, log, sqrt, sin, cos):
    register(_fn)
register(reciprocal, function=False)
register(tanh, functional=("tanh",))
register(sigmoid, functional=("sigmoid",), special=("expit",))
register(relu)
register(clamp, aliases=("clip",), signature="input, min=None, max=None")
register(maximum, signature="input, other")
register(minimum, signature="input, other")
register(where, method=False, signature="condition, input=None, other=None",
         tensor={"where": lambda self, condition, other: where(condition, self, other)})
register(eq, tensor={"__eq__": or_not_implemented(eq)})
register(ne, tensor={"__ne__": or_not_implemented(ne)})
for _fn in (lt, le, gt, ge):
    register(_fn, dunders=(f"__{_fn.__name__}__",))
register(bitwise_and, function=False, method=False, dunders=("__and__",),
         tensor={"__rand__": reflected(bitwise_and)})
register(bitwise_or, function=False, method=False, dunders=("__or__",),
         tensor={"__ror__": reflected(bitwise_or)})
register(logical_not, function=False)
