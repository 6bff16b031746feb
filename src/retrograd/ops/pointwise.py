"""Elementwise ops: forward on arrays and derivative side by side.

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
from ..backend import ndarray as _ndarray
from ..tensor import Tensor
from ..tensor import make_tensor as _make_tensor
from ._apply import INPUTS, NOTHING, OUTPUT, _wrap_scalar, defop
from ._errors import check_broadcast
from ._errors import scalar_type_name  # noqa: F401  (used here, and imported from here)
from .saved_checks import check_also

_isfinite = _np.isfinite
_all_reduce = _np.logical_and.reduce  # (``isfinite(a).all()`` without all()'s Python wrapper)

# ----------------------------------------------------------------- arithmetic


def broadcast_error(a, b, op: str):
    """PyTorch's RuntimeError for operands whose shapes do not broadcast, or None."""
    sa, sb = tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ()))
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for d in range(n - 1, -1, -1):  # PyTorch reports the last mismatching dimension
        if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[d]}) must match the size of tensor b ({pb[d]}) at "
                f"non-singleton dimension {d} ({op} of shapes {list(sa)} and {list(sb)}, "
                "which do not broadcast; reshape or unsqueeze one of them)"
            )
    return None


def _broadcasting(fn, op):
    """``fn`` with NumPy's broadcast ValueError turned into PyTorch's RuntimeError."""

    def forward(a, b, *params):
        try:
            return fn(a, b, *params)
        except ValueError:
            err = broadcast_error(a, b, op)
            if err is None:
                raise
            raise err from None

    return forward


def zeros_like_grad(g):
    """Zeros shaped like ``g`` that record nothing: PyTorch's ``zeros_like(grad)`` for
    derivatives that are 0 whatever the gradient (sign, round...). Not ``g * 0``, which is
    nan where ``g`` is inf or nan and records a node that gives nan second derivatives."""
    if g.__class__ is Tensor:
        return _make_tensor(namespace(g._data).zeros_like(g._data))
    return namespace(g).zeros_like(g)


def grad_where(keep, g):
    """``g`` where ``keep``, exactly 0 elsewhere, even where ``g`` is inf or nan (PyTorch's
    ``where(mask, grad, 0)``). On arrays, the common all-finite ``g`` takes ``g * keep``:
    NumPy's where with a random mask is ~3x slower than a multiply on large arrays."""
    if g.__class__ is Tensor or keep.__class__ is Tensor:
        return where(keep, g, 0.0)
    xp = namespace(g)
    if not g.ndim and not getattr(keep, "ndim", 0):  # 0-d: a branch beats any array call
        return g if keep else xp.zeros_like(g)
    if (_all_reduce(_isfinite(g), axis=None) if g.__class__ is _ndarray
            else xp.isfinite(g).all()):
        # (+ 0.0: -x * False is -0.0, PyTorch's zeros are +0.0; a kept -0.0 turns +0.0)
        out = g * keep
        out += 0.0
        return out
    return xp.where(keep, g, 0.0)


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


pow_tensor = defop("pow", _pow_fwd, _pow_vjp, "PowBackward1", 2, INPUTS | OUTPUT, "promote")


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
    return (g * p * pow(base, p - 1),)


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


# ----------------------------------------------------------------- unary functions


def _exp_vjp(node, g, saved):
    (out,) = saved
    if g is _sole[0] and g.dtype == out.dtype:  # the engine's own array: reuse it
        g *= out
        return (g,)
    return (g * out,)


exp = defop("exp", lambda a: namespace(a).exp(a), _exp_vjp, "ExpBackward0", 1, OUTPUT, "float",
            fast=_np.exp)


def _log_vjp(node, g, saved):
    (a,) = saved
    return (g / a,)


log = defop("log", lambda a: namespace(a).log(a), _log_vjp, "LogBackward0", 1, INPUTS, "float",
            fast=_np.log)


def _sqrt_vjp(node, g, saved):
    (out,) = saved
    return (g / (2 * out),)


sqrt = defop("sqrt", lambda a: namespace(a).sqrt(a), _sqrt_vjp, "SqrtBackward0", 1, OUTPUT,
             "float", fast=_np.sqrt)


def _abs_vjp(node, g, saved):
    (a,) = saved
    return (g * sign(a),)  # abs'(0) = 0, as PyTorch


def refuse_bool(fn, message, exc=NotImplementedError):
    """``fn`` that raises PyTorch's error for a bool tensor (NumPy would compute)."""

    def forward(a, *params):
        if a.dtype.kind == "b":
            raise exc(message)
        return fn(a, *params)

    return forward


abs = defop("abs", refuse_bool(lambda a: namespace(a).abs(a),  # noqa: A001
                               "\"abs_cpu\" not implemented for 'Bool'; convert first, e.g. "
                               "x.int().abs()"),
            _abs_vjp, "AbsBackward0", 1, INPUTS)
def _sign_fwd(a):
    if a.dtype.kind == "b":
        return a.copy()
    xp = namespace(a)
    out = xp.sign(a)
    # PyTorch: sign(nan) = 0 (NumPy gives nan)
    return xp.nan_to_num(out, nan=0.0) if a.dtype.kind == "f" else out


# sign'(x) = 0 everywhere, even at 0, inf, nan: zeros, whatever the gradient (PyTorch)
sign = defop("sign", _sign_fwd, lambda node, g, saved: (zeros_like_grad(g),),
             "SignBackward0", 1, NOTHING)


def _sin_vjp(node, g, saved):
    (a,) = saved
    d = cos(a)
    if type(d) is _ndarray and type(g) is _ndarray and d.shape == g.shape \
            and d.dtype == g.dtype:
        d *= g  # first order: into cos(a)'s fresh buffer, one array instead of two
        return (d,)
    return (g * d,)


sin = defop("sin", lambda a: namespace(a).sin(a), _sin_vjp, "SinBackward0", 1, INPUTS, "float",
            fast=_np.sin)


def _cos_vjp(node, g, saved):
    (a,) = saved
    return (-g * sin(a),)


cos = defop("cos", lambda a: namespace(a).cos(a), _cos_vjp, "CosBackward0", 1, INPUTS, "float",
            fast=_np.cos)


def _tanh_vjp(node, g, saved):
    (out,) = saved
    if type(g) is _ndarray and type(out) is _ndarray and out.ndim and out.dtype == g.dtype:
        # first order: 1 - out^2 written over out^2 (NumPy cannot reuse the temporary of
        # 1 - t itself), then g multiplied in: one buffer instead of two (bench/ (d))
        d = out * out
        _np.subtract(1, d, out=d)
        d *= g
        return (d,)
    return (_tanh_backward(g, out),)


def _tanh_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of tanh_backward(g, y) = g * (1 - y^2): through g, the same op
    # again (TanhBackwardBackward0 once more); through y, gg * (-2 * y * g)
    g, out = saved
    n_g, n_out = node.next
    return (_tanh_backward(gg, out) if n_g else None,
            gg * (-2 * out * g) if n_out else None)


# tanh's derivative as one record under create_graph (PyTorch's TanhBackwardBackward0), where
# composing mul/rsub/mul recorded three nodes (bench/ (g), a Hessian-vector product).  Its
# forward is the expression the tensor path computed before, bit for bit.
_tanh_backward = defop("tanh_backward", lambda g, out: g * (1 - out * out), _tanh_backward_vjp,
                       "TanhBackwardBackward0", 2, INPUTS,
                       saved_for=lambda needs: (needs[1], True))


tanh = defop("tanh", lambda a: namespace(a).tanh(a), _tanh_vjp, "TanhBackward0", 1, OUTPUT,
             "float", fast=_np.tanh)


def _sigmoid_fwd(a):
    xp = namespace(a)
    # PyTorch's kernel, 1 / (1 + exp(-x)): exp(-x) overflows to inf for a very negative x,
    # which gives the right 0. (Not 1 - 1 / (1 + exp(x)) for x < 0: that cancels to 0 at
    # x = -17 in float32 and loses digits for every negative x.)
    e = xp.exp(-xp.maximum(a, 0))  # <= 1: the x >= 0 side never overflows
    neg = a < 0
    if neg.any():
        with xp.errstate(over="ignore"):
            e = xp.where(neg, xp.exp(-a), e)
    return 1 / (1 + e)


def _sigmoid_vjp(node, g, saved):
    (out,) = saved
    if type(g) is _ndarray:  # first order: PyTorch's kernel, g * (1 - y) * y
        return (g * (1 - out) * out,)
    return (_sigmoid_backward(g, out),)


def _sigmoid_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of sigmoid_backward(g, y) = g * (1 - y) * y: through g, the same
    # op again; through y, gg * g * (1 - 2 y), one product (composing mul/rsub/mul gave
    # inf - inf = nan for an infinite g: seed 12514494's second derivative)
    g, out = saved
    n_g, n_out = node.next
    return (_sigmoid_backward(gg, out) if n_g else None,
            gg * g * (-2 * out + 1) if n_out else None)


# sigmoid's derivative as one record under create_graph (PyTorch's SigmoidBackwardBackward0)
_sigmoid_backward = defop("sigmoid_backward", lambda g, out: g * (1 - out) * out,
                          _sigmoid_backward_vjp, "SigmoidBackwardBackward0", 2, INPUTS,
                          saved_for=lambda needs: (needs[1], True))


sigmoid = defop("sigmoid", _sigmoid_fwd, _sigmoid_vjp, "SigmoidBackward0", 1, OUTPUT, "float")


def derivative_record(backward_name, rule):
    """The first derivative of a piecewise-linear op as an op of its own, as PyTorch's
    ``threshold_backward``, ``leaky_relu_backward``...: ``d(g, x, *params) = rule(g, x,
    *params)``, linear in the incoming gradient ``g`` and a step function of ``x`` (the
    op's input or output).  Under ``create_graph`` its node (``backward_name``, e.g.
    ``ThresholdBackwardBackward0``) has edges to both, so the gradient requires grad
    whenever ``x`` does, as torch's does, with a derivative of zero through ``x``; with
    arrays (a first-order backward) it is just ``rule``."""

    def vjp(node, gg, saved):
        _, x = saved  # (g is not kept: the derivative is linear in it)
        n_grad, n_x = node.next
        return (rule(gg, x, *node.params) if n_grad else None,
                zeros_like_grad(gg) if n_x else None)

    return defop(backward_name, rule, vjp, backward_name, 2, INPUTS,
                 saved_for=lambda needs: (False, needs[0]))


# PyTorch's threshold_backward: 0 where out <= 0 (relu'(0) = 0), else g; so a nan input
# passes g, and an inf or nan gradient does not leak into the zeros (g * mask would).
# (out is relu's result: >= 0, -0.0 or nan, where ``out != 0`` is ``~(out <= 0)`` in one
# pass)
threshold_backward = derivative_record("ThresholdBackwardBackward0",
                                       lambda g, out: grad_where(out != 0, g))


def _relu_vjp(node, g, saved):
    (out,) = saved
    return (threshold_backward(g, out),)


def _relu_fwd(a):
    # one function, not refuse_bool + lambda + namespace: three calls fewer per relu
    # (bench/ (f), MLP inference)
    if a.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    # maximum(0, a), the bound first: NumPy keeps the second operand at a tie, so -0.0 stays
    # -0.0 (PyTorch's a < 0 ? 0 : a)
    if type(a) is _ndarray:
        plain = _RELU_PLAIN.get(a.dtype)
        return plain(a) if plain is not None else _np.maximum(0, a)
    return namespace(a).maximum(0, a)


def _zero(dtype, shape=()):
    zero = _np.zeros(shape, dtype)
    zero.flags.writeable = False
    return zero


# Zeros arrays of a relu input's shape, for inputs of up to _ZEROS_MAX_SIZE elements, kept
# per shape (read-only, shared by every call) while the ones kept for a dtype hold at most
# _ZEROS_BUDGET elements together (4 MiB of float32) in at most _ZEROS_SHAPES shapes
_ZEROS_MAX_SIZE = 1 << 16
_ZEROS_BUDGET = 1 << 20
_ZEROS_SHAPES = 256


def _relu_plain(dtype):
    """maximum(0, a) for a float NumPy array ``a`` of ``dtype``, the bound an array of zeros.

    A 0 that NumPy broadcasts (a Python 0, or a 0-d array) sends it through its buffered
    iterator, which copies the zero into a buffer before each loop: half the cost of a
    64x128 relu (bench/ (f)).  Zeros of a's own shape and layout make it one contiguous
    loop, the same loop on the same values: the same bits, NaN and -0.0 included (checked in
    tests/ops/test_plain_path.py).  Large or non-contiguous inputs keep a 0-d zero."""
    zero = _zero(dtype)
    zeros = {}
    kept = [0]  # elements in ``zeros``
    maximum = _np.maximum

    def relu_plain(a):
        z = zeros.get(a.shape)
        if z is None:
            z = zero
            n = a.size
            if n <= _ZEROS_MAX_SIZE and kept[0] + n <= _ZEROS_BUDGET \
                    and len(zeros) < _ZEROS_SHAPES:
                z = zeros[a.shape] = _zero(dtype, a.shape)
                kept[0] += n
        if z.ndim and not a.flags.c_contiguous:
            z = zero  # (a result laid out as a's, as PyTorch's)
        return maximum(z, a)

    return relu_plain


_RELU_PLAIN = {_np.dtype(d): _relu_plain(d) for d in (_np.float32, _np.float64)}

# fast: _relu_fwd's maximum on a float NumPy array, without its dtype dispatch
relu = defop("relu", _relu_fwd, _relu_vjp, "ReluBackward0", 1, OUTPUT,
             fast=(_RELU_PLAIN[_np.dtype(_np.float32)], _RELU_PLAIN[_np.dtype(_np.float64)]))


# ----------------------------------------------------------------- selection


def _where_vjp(node, g, saved):
    cond = node.params[0]
    na, nb = node.next
    # the unselected side gets exactly 0, even where g is inf or nan (PyTorch)
    return (where(cond, g, 0.0) if na else None, where(cond, 0.0, g) if nb else None)


def _where_fwd(a, b, cond):
    try:
        return namespace(cond).where(cond, a, b)
    except ValueError as e:
        raise (broadcast_error(cond, a, "where") or broadcast_error(cond, b, "where")
               or broadcast_error(a, b, "where") or e) from None


# the condition is a parameter, not an input: PyTorch's WhereBackward0 has two next_functions
_where = defop("where", _where_fwd, _where_vjp, "WhereBackward0", 2, NOTHING, "promote")


def where(condition, input=None, other=None):  # noqa: A002 - PyTorch's names
    """``input`` where ``condition`` is True, else ``other`` (all three broadcast).

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([-1.0, 2.0])
    >>> T.where(x > 0, x, 0.0)
    tensor([0., 2.])
    """
    if input is None and other is None:  # where(cond): the indices of the True elements
        # nonzero(condition, as_tuple=True), spelled out: sorting.py is above this module
        c = condition._data
        found = namespace(c).nonzero(c if c.ndim else c.reshape(1))
        return tuple(_make_tensor(i.astype("int64")) for i in found)
    cond = condition._data if condition.__class__ is Tensor else condition
    if condition.__class__ is Tensor and cond.dtype.kind != "b" and cond.dtype.name != "uint8":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{scalar_type_name(cond.dtype)}; compare first, e.g. where(c != 0, x, y)"
        )
    if condition.__class__ is Tensor and cond.dtype.name == "uint8":
        import warnings

        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=2)
    if input.__class__ is not Tensor and other.__class__ is not Tensor:
        out = _where_fwd(input, other, cond)
        if condition.__class__ is Tensor:  # where(mask, 1.0, 0.0): a tensor of the numbers
            from ._apply import _fix_dtype

            out = _fix_dtype("promote", (input, other), namespace(cond).asarray(out))
            return _make_tensor(out)
        return out  # arrays, in a first-order backward
    # (WhereBackward0 saves the condition: an in-place change of it breaks backward)
    return check_also(_where(input, other, cond), condition)


def _clamp_fwd(a, lo, hi):
    xp = namespace(a)
    out = a
    # the bound first: NumPy keeps the second operand at a tie, PyTorch keeps x (x < lo ?
    # lo : x), so clamp(0.0, min=-0.0) is 0.0 and clamp(-0.0, min=0.0) is -0.0, as torch's
    if lo is not None:
        out = xp.maximum(lo, out)
    if hi is not None:
        out = xp.minimum(hi, out)
    return out if out is not a else a.copy()


def _clamp_vjp(node, g, saved):
    (a,) = saved
    lo, hi = node.params
    # the gradient passes at the bounds themselves, as PyTorch
    keep = True
    if lo is not None:
        keep = a >= lo
    if hi is not None:
        keep = (a <= hi) & keep if lo is not None else a <= hi
    # outside (and at nan: both comparisons are False) the gradient is exactly 0, as
    # PyTorch's where(mask, grad, 0): g * keep would leak an inf g as nan
    return (grad_where(keep, g),)


_clamp = defop("clamp", _clamp_fwd, _clamp_vjp, "ClampBackward1", 1, INPUTS)


def _clamp_tensor_fwd(a, lo, hi, has_lo=True, has_hi=True):
    xp = namespace(a)
    return xp.minimum(hi, xp.maximum(lo, a))  # (the bounds first: see _clamp_fwd)


def _clamp_tensor_vjp(node, g, saved):
    # bounds given as tensors, PyTorch's clamp_backward_min_max: x gets g where
    # lo <= x <= hi (bounds included); lo where x < lo and lo < hi; hi where x > hi or
    # hi < lo (so at lo == hi the upper bound wins); with one bound, x where x >= lo
    # (x <= hi), the bound elsewhere. A nan x sends nothing anywhere; 0, not g * 0.
    a, lo, hi = saved
    nx, nlo, nhi = node.next
    has_lo, has_hi = node.params
    # each pair compared in its own PyTorch result dtype (a 0-d float64 bound meets a float32
    # x in float32), as PyTorch's comparisons of the saved tensors
    a_lo, lo_a = in_result_dtype(a, lo)
    a_hi, hi_a = in_result_dtype(a, hi)
    if has_lo and has_hi:
        lo_hi, hi_lo = in_result_dtype(lo, hi)
        keep = (a_lo >= lo_a) & (a_hi <= hi_a)
        to_lo, to_hi = (a_lo < lo_a) & (lo_hi < hi_lo), (a_hi > hi_a) | (hi_lo < lo_hi)
    elif has_lo:
        keep, to_lo, to_hi = a_lo >= lo_a, a_lo < lo_a, None
    else:
        keep, to_lo, to_hi = a_hi <= hi_a, None, a_hi > hi_a
    return (where(keep, g, 0.0) if nx else None,
            where(to_lo, g, 0.0) if nlo else None,
            where(to_hi, g, 0.0) if nhi else None)


_clamp_tensor = defop("clamp", _clamp_tensor_fwd, _clamp_tensor_vjp, "ClampBackward0", 3,
                      INPUTS, "promote")
# x.clamp_min(tensor) / x.clamp_max(tensor): the same op under PyTorch's names for them
clamp_min_tensor = defop("clamp_min", _clamp_tensor_fwd, _clamp_tensor_vjp, "ClampMinBackward1",
                         3, INPUTS, "promote")
clamp_max_tensor = defop("clamp_max", _clamp_tensor_fwd, _clamp_tensor_vjp, "ClampMaxBackward1",
                         3, INPUTS, "promote")


def refuse_bool_number_bounds(x, lo, hi):
    """PyTorch's scalar clamp kernels have no bool version: a bool tensor clamped to Python
    bools (an int bound promotes it, a tensor bound takes the tensor kernel) raises."""
    if isinstance(x, Tensor) and x._data.dtype.kind == "b" and \
            all(b is None or b.__class__ is bool for b in (lo, hi)):
        kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else \
            "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool' (a bool tensor "
                                  "clamped to bool bounds; convert it first, e.g. x.int())")


def clamp(x, min=None, max=None, *, _op=None):  # noqa: A002 - PyTorch's keyword names
    """Limit ``x`` to ``[min, max]``; the gradient passes where ``min <= x <= max``.

    ``min`` and ``max`` are numbers or tensors (broadcast against ``x``); at least one is
    given.  At the bounds themselves the gradient passes, as in PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> T.clamp(T.tensor([-2.0, 0.5, 3.0]), -1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    refuse_bool_number_bounds(x, min, max)
    if getattr(x, "_data", x).dtype.kind != "f" and (isinstance(min, float) or
                                                   isinstance(max, float)):
        x = to_dtype(x, dtypes.get_default_dtype().numpy)  # int clamped to a float bound
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        # a missing bound is the dtype's own extreme, as a 0-d array of x's dtype, so that
        # it does not take part in the promotion (an int tensor stays int)
        data = getattr(x, "_data", x)
        xp = namespace(data)
        given = [getattr(b, "_data", b) for b in (min, max) if b is not None]
        want = dtypes.result_type(data, *given).numpy  # the dtype the bounds meet x in
        kind = want.kind
        if kind == "f":
            lo, hi = -math.inf, math.inf
        elif kind == "b":
            lo, hi = False, True
        else:
            lo, hi = xp.iinfo(want).min, xp.iinfo(want).max
        lo, hi = xp.asarray(lo, dtype=want), xp.asarray(hi, dtype=want)
        return (_op or _clamp_tensor)(x, lo if min is None else min,
                                      hi if max is None else max, min is not None,
                                      max is not None)
    return _clamp(x, min, max)


# ----------------------------------------------------------------- comparisons (no grad)


def _cmp(name, fn):
    return defop(name, _broadcasting(fn, name), None, None, 2, NOTHING, "bool",
                 differentiable=False)


def _in_common_dtype(compare):
    """Compare in PyTorch's promoted dtype: a 0-d float64 tensor does not lift a float32 one
    (NumPy's 0-d arrays do), so x != x.double()[0] of float32 values is False (seed 9202561)."""
    def forward(a, b):
        da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
        if da is not None and db is not None and da != db and (a.ndim == 0) != (b.ndim == 0):
            want = dtypes.result_type(a, b).numpy
            a, b = a.astype(want, copy=False), b.astype(want, copy=False)
        return compare(a, b)
    return forward


eq = _cmp("eq", _in_common_dtype(lambda a, b: a == b))
ne = _cmp("ne", _in_common_dtype(lambda a, b: a != b))
lt = _cmp("lt", _in_common_dtype(lambda a, b: a < b))
le = _cmp("le", _in_common_dtype(lambda a, b: a <= b))
gt = _cmp("gt", _in_common_dtype(lambda a, b: a > b))
ge = _cmp("ge", _in_common_dtype(lambda a, b: a >= b))
logical_and = _cmp("logical_and", lambda a, b: namespace(a).logical_and(a, b))
logical_or = _cmp("logical_or", lambda a, b: namespace(a).logical_or(a, b))
bitwise_and = _cmp("bitwise_and", lambda a, b: a & b)
bitwise_or = _cmp("bitwise_or", lambda a, b: a | b)
logical_not = defop("logical_not", lambda a: namespace(a).logical_not(a), None, None, 1,
                    differentiable=False)
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


def in_result_dtype(a, b):
    """``a`` and ``b`` cast to PyTorch's result dtype when their dtypes differ.

    Most ops may compute in NumPy's wider dtype and round once at the end, but floor
    division, remainder and fmod jump near a multiple of the divisor: ``3.0 % 0.02`` is about
    0 with float32's 0.02 and about 0.02 with float64's.  PyTorch computes them in the result
    dtype (float32 for a float32 tensor and a 0-d float64 tensor), so they must be too."""
    # (arrays only: under vmap the forward may see batched tensors, which promote alike)
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if (da is not None and db is not None and da != db and hasattr(a, "astype")
            and hasattr(b, "astype")):
        want = dtypes.result_type(a, b).numpy
        return a.astype(want, copy=False), b.astype(want, copy=False)
    return a, b


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



# ----------------------------------------------------------------- dtype conversion


def _to_fwd(a, np_dtype):
    return a.astype(np_dtype)


def _to_vjp(node, g, saved):
    # the engine casts the gradient back to the input's dtype
    return (g,)


to_dtype = defop("to", _to_fwd, _to_vjp, "ToCopyBackward0", 1, NOTHING)


def _extreme_vjp(node, g, saved):
    # PyTorch's maximum: a gets where(a == b, g / 2, g).masked_fill(a < b, 0), b the same
    # with a > b. So ties share g evenly, the smaller side gets exactly 0 (even for an inf
    # g), and where either is nan (no comparison holds) both get all of g.
    a, b = in_result_dtype(*saved)  # compared in PyTorch's dtype: a 0-d float64 b ties a
    na, nb = node.next                # float32 a where its float32 rounding equals a's
    a_loses, b_loses = (a < b, a > b) if node.params[0] == "max" else (a > b, a < b)
    shared = where(a == b, g * 0.5, g)
    return (where(a_loses, 0.0, shared) if na else None,
            where(b_loses, 0.0, shared) if nb else None)


# (b, a): NumPy keeps the second operand at a tie, PyTorch the first (maximum(-0.0, 0.0) is
# -0.0)
_maximum = defop("maximum", _broadcasting(lambda a, b, which: namespace(a).maximum(b, a),
                                          "maximum"), _extreme_vjp,
                 "MaximumBackward0", 2, INPUTS, "promote")
_minimum = defop("minimum", _broadcasting(lambda a, b, which: namespace(a).minimum(b, a),
                                          "minimum"), _extreme_vjp,
                 "MinimumBackward0", 2, INPUTS, "promote")


def _tensors_only(name, input, other):  # noqa: A002
    """PyTorch's TypeError for a number operand of an op that takes tensors only."""
    for x, what, pos in ((input, "input", 1), (other, "other", 2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{what}' (position {pos}) must be Tensor, "
                            f"not {type(x).__name__} (wrap it: retrograd.tensor(...))")


def maximum(input, other):  # noqa: A002 - PyTorch's names
    """Elementwise maximum; at ties the gradient is split evenly."""
    return _maximum(input, other, "max")


def minimum(input, other):  # noqa: A002
    """Elementwise minimum; at ties the gradient is split evenly."""
    return _minimum(input, other, "min")


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
