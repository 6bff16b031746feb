"""More elementwise ops of two or three tensors: addcmul, addcdiv, lerp (what optimizers
use), atan2, hypot, logaddexp, xlogy, and clamp_min / clamp_max.

Inputs broadcast; the engine sums each gradient back to its input's shape.
"""

from __future__ import annotations

import math

from .. import dtypes
from ..backend import namespace
from ..tensor import Tensor
from . import registry
from ._apply import BOTH, INPUTS, NOTHING, OUTPUT, defop
from ._errors import check_broadcast, scalar_type_name, tensor_arg
from .pointwise import _neg_fwd, grad_where, in_result_dtype
from .selection import _tensors_only
from .cast_inside import take_source
from .pointwise import (_check_bool_sub, _check_int_divisor, _div_rounded, _rsub_number_fwd,
                        _with_number, exp, mul_number, power, to_dtype, where,
                        zeros_like_grad)
from .pointwise import div as _true_div
from .stats import quiet
from .pointwise import eq as _eq
from .pointwise import rsub as _rsub_number


def _float_operands_in_result_dtype(*arrays):
    """Float arrays of several dtypes cast to PyTorch's result dtype, as its kernels do before
    computing: a float32 0.69 plus a 0-d float64 -0.69 is 0.0, not float64's -2.4e-9
    rounded to float32 (arrays only; others are left to the op's promotion)."""
    kinds = {getattr(x, "dtype", None) for x in arrays}
    if len(kinds) > 1 and all(hasattr(x, "astype") and x.dtype.kind == "f" for x in arrays):
        want = dtypes.result_type(*arrays).numpy
        return tuple(x.astype(want, copy=False) for x in arrays)
    return arrays


def _addcmul_fwd(a, t1, t2, value):
    a, t1, t2 = _float_operands_in_result_dtype(a, t1, t2)
    return a + value * (t1 * t2)


_times_number = _with_number(lambda a, c: a * c)


def _times_value(t, value):
    """``t * value`` as PyTorch's derivative of addcmul computes it (ATen's mul(Tensor,
    Scalar)): under create_graph a MulBackward1 node on ``t`` itself, whose gradient in a
    second backward is checked against ``t``'s shape of the forward (a leaf squeezed in
    place since then raises "invalid gradient", seed 20140980)."""
    return mul_number(t, value) if isinstance(t, Tensor) else _times_number(t, value)


def _addcmul_vjp(node, g, saved):
    # PyTorch's formulas: grad * (tensor2 * value), grad * (tensor1 * value)
    _, t1, t2 = saved
    value = node.params[0]
    n0, n1, n2 = node.next
    return (g if n0 else None, g * _times_value(t2, value) if n1 else None,
            g * _times_value(t1, value) if n2 else None)


# input is never read; tensor1 only for tensor2's derivative and vice versa (PyTorch)
_addcmul = defop("addcmul", _addcmul_fwd, _addcmul_vjp, "AddcmulBackward0", 3, INPUTS,
                 "promote", saved_for=lambda needs: (False, needs[2], needs[1]))


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002 - PyTorch's names
    """``input + value * tensor1 * tensor2``."""
    if all(getattr(t, "_data", t).dtype.kind == "b" for t in (input, tensor1, tensor2)
           if hasattr(getattr(t, "_data", t), "dtype")):
        check_broadcast("addcmul", input, tensor1, tensor2)  # (first, as PyTorch's)
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if isinstance(value, float) and all(
            getattr(getattr(t, "_data", t), "dtype", None) is not None
            and getattr(t, "_data", t).dtype.kind in "iub" for t in (input, tensor1, tensor2)):
        value = int(value)  # PyTorch casts value to the integer result type first (truncates)
    return _addcmul(input, tensor1, tensor2, value)


def _addcdiv_fwd(a, t1, t2, value):
    # PyTorch's kernel: every operand in the result dtype (an integer one too) and
    # self + value * t1 / t2 from the left: value * (t1 / t2) rounds otherwise in about a
    # third of the elements, and x.addcdiv(x, c, value=-c) is then 1 ulp from 0 instead of
    # exactly 0, which abs' kink turns into a wrong gradient (seed 21740890)
    a, t1, t2 = _operands_in_inexact_result_dtype(a, t1, t2)
    return a + (value * t1) / t2


def _operands_in_inexact_result_dtype(*arrays):
    """Arrays cast to PyTorch's float (or complex) result dtype, the default float dtype
    where they are all integers (arrays only; others are left to the op's promotion)."""
    if not all(hasattr(x, "astype") and hasattr(x, "dtype") for x in arrays):
        return arrays
    want = dtypes.result_type(*arrays)
    if not (want.is_floating_point or want.is_complex):
        want = dtypes.get_default_dtype()
    return tuple(x.astype(want.numpy, copy=False) for x in arrays)


def _value_over(value, t):
    """``value / t`` as PyTorch's derivative of addcdiv computes it (a tensor like ``t``
    filled with value, divided in place by ``t``): DivBackward0 on ``t`` itself under
    create_graph.  An integer ``t`` cannot take the true quotient in place: PyTorch's
    backward raises."""
    data = t._data if isinstance(t, Tensor) else t
    if data.dtype.kind not in "fc":
        raise RuntimeError(
            f"result type {scalar_type_name(dtypes.get_default_dtype().numpy)} can't be cast "
            f"to the desired output type {scalar_type_name(data.dtype)}")
    return _true_div(value, t) if isinstance(t, Tensor) else value / t


def _addcdiv_vjp(node, g, saved):
    # PyTorch's formulas: grad * (value / tensor2),
    # -grad * (value * tensor1 / (tensor2 * tensor2))
    _, t1, t2 = saved
    value = node.params[0]
    n0, n1, n2 = node.next
    g1 = g * _value_over(value, t2) if n1 else None
    g2 = None
    if n2:
        # the operands in the order PyTorch's compiled formula builds them (right first):
        # the nodes' creation order decides what the second backward runs first
        square = t2 * t2
        g2 = -g * (_times_value(t1, value) / square)
    return (g if n0 else None, g1, g2)


_addcdiv = defop("addcdiv", _addcdiv_fwd, _addcdiv_vjp, "AddcdivBackward0", 3, INPUTS, "float",
                 saved_for=lambda needs: (False, needs[2], needs[1] or needs[2]))


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2``."""
    if registry.batching[0] and any(hasattr(t, "__retrograd_batched__")
                                    for t in (tensor1, tensor2)):
        # x.addcdiv(batched, ...) inside vmap (the method is this function): to the rule
        return registry.batched_call("addcdiv", addcdiv, (input, tensor1, tensor2),
                                     {"value": value})
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
    if hasattr(w, "shape") and not (a.dtype == b.dtype == w.dtype):
        # a 0-d weight of another dtype (lerp below lets it through): every operand is cast
        # to the promoted dtype first, as PyTorch's TensorIterator does (a float32 input
        # stays float32); here, not before the call, so that the record saves the caller's
        # tensors and a later in-place change of them is caught (fuzz seed 18706469)
        from .. import dtypes

        want = dtypes.result_type(a, b, w).numpy
        a, b, w = (x.astype(want, copy=False) for x in (a, b, w))
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
    if n0 and getattr(w, "_data", w).dtype.kind == "b":
        # PyTorch 2.13 takes a 0-d bool weight forward, and its input's derivative
        # grad * (1 - weight) then refuses it (NumPy's 1 - True is 0 without a word)
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported: lerp's derivative for `input` computes 1 - weight; "
                           "give lerp a floating weight (weight.float()) to differentiate it")
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

    tensor_arg(input, "input", 0)  # (a number input or end: PyTorch's TypeError)
    tensor_arg(end, "end")
    dt = input._data.dtype
    # PyTorch takes a 0-d weight of any other dtype: the operands are promoted as for any
    # op (a 0-d weight counts only against 0-d operands: input float32 of shape [2] with
    # an int64 or float64 0-d weight stays float32; all 0-d, float32 and float64 is float64;
    # int64 or bool operands with a 0-d float64 weight are float64: fuzz seed 9475216)
    cast_weight = isinstance(weight, Tensor) and weight._data.ndim == 0 and \
        weight._data.dtype != dt and not (
            isinstance(end, Tensor) and end._data.dtype != dt)  # (end: input's dtype, always)
    for other, what in ((end, "end"), (weight, "weight")):
        if isinstance(other, Tensor) and other._data.dtype != dt and not (
                what == "weight" and cast_weight):
            from ._apply import _C_NAMES

            raise RuntimeError(f"expected dtype {_C_NAMES.get(str(dt), str(dt))} for `{what}` "
                               "but got dtype "
                               f"{_C_NAMES.get(str(other._data.dtype), str(other._data.dtype))}"
                               " (lerp needs one floating dtype; convert with .to())")
    if cast_weight:
        from .. import dtypes

        # (the operands are cast in _lerp_fwd: the record saves them as given, as PyTorch's
        # LerpBackward1 does, so an in-place change of one before backward raises there)
        dt = dtypes.result_type(input._data, end._data, weight._data).numpy
    if dt.kind != "f":
        kernel = "tensor" if isinstance(weight, Tensor) else "scalar"
        check_broadcast("lerp", input, end, weight)  # (the shapes' error first, as PyTorch's)
        raise NotImplementedError(f"\"lerp_kernel_{kernel}\" not implemented for "
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
    # -y through _neg_fwd: a bool y raises PyTorch's RuntimeError (NumPy's is a TypeError)
    return (g * x * recip if ny else None, g * _neg_fwd(y) * recip if nx else None)


def _floats_only(fn, name):
    """``fn`` refusing two integer (or bool) operands, as PyTorch's kernels do."""

    def forward(a, b):
        if (getattr(a, "dtype", None) is None or a.dtype.kind in "biu") and (
                getattr(b, "dtype", None) is None or b.dtype.kind in "biu"):
            kind = next(x.dtype for x in (a, b) if hasattr(x, "dtype"))
            from .pointwise import scalar_type_name

            check_broadcast(name, a, b)  # (the shapes' error first, as PyTorch's)
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
    # PyTorch's derivatives.yaml: grad * self / result and grad * other / result, unguarded:
    # at (0, 0) both are 0 / 0 = nan (first order), and so the second order there, as
    # PyTorch's (checked against it, hypot and hypot_, either operand: fuzz seed 15020013 is
    # a float32 layer_norm that is exactly 0 here and 1e-8 in PyTorch, not this formula)
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
    # PyTorch's formula subtracts the operands: a bool one raises there
    _check_bool_sub(getattr(b, "_data", b), getattr(a, "_data", a))
    return (g / (1 + exp(b - a)) if na else None, g / (1 + exp(a - b)) if nb else None)


def _logaddexp_fwd(a, b):
    xp = namespace(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8 and a.dtype == getattr(b, "dtype", None):
        # float32 in float64, rounded once: NumPy's float32 kernel (and PyTorch's, max +
        # log1p(exp(-|a - b|)), two roundings) is up to 3 ulp off the truth, as PyTorch's
        # (ops/log1p_exp.py); the float64 result is correctly rounded
        return xp.asarray(xp.logaddexp(a, b, dtype=xp.float64), dtype=a.dtype)
    return xp.logaddexp(a, b)


logaddexp = defop("logaddexp", _floats_only(_logaddexp_fwd, "logaddexp"), _logaddexp_vjp,
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
    # d/dx = log(y), but 0 where x == 0 and y <= 0 (PyTorch's masked_fill); d/dy = x / y.
    # PyTorch's d/dx is xlogy(g, y): 0 where g is 0, even where log(y) is -inf (fuzz seed
    # 9495021: logaddexp's zero derivative at -inf met log(0))
    return (where((x == 0) & (y <= 0), 0.0, xlogy(g, y)) if nx else None,
            g * x / y if ny else None)


_xlogy = defop("xlogy", _in_float(_xlogy_fwd), _xlogy_vjp, "XlogyBackward0", 2, INPUTS, "float")


def _xlogy_number_vjp(node, g, saved):
    # ``other`` a number y: d/dx = log(y) (PyTorch's XlogyBackward2), but 0 where x == 0
    # when y <= 0, as the two-tensor form
    y = node.params[0]
    if y > 0:
        return (g * math.log(y),)
    (x,) = saved
    # xlogy(g, y): 0 where g is 0 (not 0 * -inf), as PyTorch's
    return (where(x == 0, 0.0, xlogy(g, y)),)


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
    # the bound itself passes the gradient, as clamp; below it exactly 0 (PyTorch's
    # where(mask, grad, 0): g * mask would be nan where g is inf)
    return (grad_where(a >= node.params[0], g),)


def _clamp_max_vjp(node, g, saved):
    (a,) = saved
    return (grad_where(a <= node.params[0], g),)


# the bound first, as clamp (pointwise._clamp_fwd): x is kept at a tie (signed zeros)
_clamp_min = defop("clamp_min", lambda a, m: namespace(a).maximum(m, a), _clamp_min_vjp,
                   "ClampMinBackward0", 1, INPUTS)
_clamp_max = defop("clamp_max", lambda a, m: namespace(a).minimum(m, a), _clamp_max_vjp,
                   "ClampMaxBackward0", 1, INPUTS)


def clamp_min(input, min):  # noqa: A002
    """``max(x, min)``; a tensor bound goes through ``clamp``."""
    from .pointwise import clamp, clamp_min_tensor, refuse_bool_number_bounds

    if isinstance(min, Tensor):
        return clamp(input, min=min, _op=clamp_min_tensor)
    if isinstance(min, float) and getattr(input, "_data", input).dtype.kind != "f":
        # an int clamped to a float number: the default float, recorded as ClampMinBackward0
        # (an int tensor made to require grad by a write: fuzz seed 8106467)
        if not isinstance(input, Tensor):
            return clamp(input, min=min)
        cast = input.to(dtypes.get_default_dtype())  # (cast inside the node, as PyTorch)
        return take_source(_clamp_min(cast, min), cast, input)
    refuse_bool_number_bounds(input, min, None)
    return _clamp_min(input, min)


def clamp_max(input, max):  # noqa: A002
    """``min(x, max)``; a tensor bound goes through ``clamp``."""
    from .pointwise import clamp, clamp_max_tensor, refuse_bool_number_bounds

    if isinstance(max, Tensor):
        return clamp(input, max=max, _op=clamp_max_tensor)
    if isinstance(max, float) and getattr(input, "_data", input).dtype.kind != "f":
        # an int clamped to a float number: the default float, recorded as ClampMaxBackward0
        # (an int tensor made to require grad by a write: fuzz seed 8106467)
        if not isinstance(input, Tensor):
            return clamp(input, max=max)
        cast = input.to(dtypes.get_default_dtype())  # (cast inside the node, as PyTorch)
        return take_source(_clamp_max(cast, max), cast, input)
    refuse_bool_number_bounds(input, None, max)
    return _clamp_max(input, max)



# ----------------------------------------------------------------- issue 6: more two-input ops


def _no_number(fn, name):
    """PyTorch's fmax, fmin, ldexp, logaddexp2 and nextafter take tensors only (atan2, hypot,
    logaddexp, maximum...: ops/tensor_only.py wraps their public names)."""

    def call(input, other):  # noqa: A002 - PyTorch's names
        if registry.batching[0] and (hasattr(other, "__retrograd_batched__")
                                     or hasattr(input, "__retrograd_batched__")):
            # x.fmin(batched) inside vmap (the method is this function): to the op's rule
            return registry.batched_call(name, call, (input, other))
        _tensors_only(name, input, other)
        return fn(input, other)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = fn.__doc__
    call.op = fn.op
    return call


def _refuse_bools(fn, name):
    def forward(a, b, *params):
        if getattr(a, "dtype", None) is not None and a.dtype.kind == "b" and (
                b.__class__ is bool or getattr(b, "dtype", None) is not None
                and b.dtype.kind == "b"):
            check_broadcast(name, a, b)  # (the shapes' error first, as PyTorch's)
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'; convert "
                                      "first, e.g. x.int()")
        return fn(a, b, *params)

    return forward


# copysign: |a| with b's sign, in a float (two integers give the default float).
# d/da = copysign(1, a) * copysign(1, b) = out / a, and 0 where a == 0 (PyTorch's
# copysign_tensor_self_backward); d/db = 0 (zeros, not None: PyTorch's zeros_like)
def _copysign_vjp(node, g, saved):
    a, _, out = saved
    na, nb = node.next
    return (g * where(a == 0, 0.0, out / a) if na else None,
            zeros_like_grad(g) if nb else None)


def _copysign_number_vjp(node, g, saved):
    a, out = saved
    return (g * where(a == 0, 0.0, out / a),)


_copysign_fwd = _in_float(lambda a, b: namespace(a if hasattr(a, "dtype") else b).copysign(a, b))
_copysign_tensor = defop("copysign", _copysign_fwd, _copysign_vjp, "CopysignBackward0", 2,
                         INPUTS | OUTPUT, "float",
                         # (input only when it needs a gradient, as PyTorch: seed 9813834)
                         saved_for=lambda needs: (needs[0], False))
_copysign_number = defop("copysign", _copysign_fwd, _copysign_number_vjp, "CopysignBackward1", 1,
                         INPUTS | OUTPUT, "float")


def _tensor_first(name, input):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__} (wrap it: retrograd.tensor(...))")


def copysign(input, other):  # noqa: A002
    """``|input|`` with the sign of ``other`` (also of -0.0); always a float."""
    _tensor_first("copysign", input)
    if isinstance(other, Tensor):
        return _copysign_tensor(input, other)
    return _copysign_number(input, float(other))


# fmax / fmin: maximum / minimum that ignore a nan (nan only where both are nan).
# PyTorch: a gets g where a >= b (a <= b for fmin) or b is nan, b gets the rest: ties go to a
def _fext_vjp(node, g, saved):
    a, b = in_result_dtype(*saved)  # compared in PyTorch's dtype (0-d float64 vs float32)
    na, nb = node.next
    a_wins = ((a >= b) if node.params[0] == "max" else (a <= b)) | (b != b)
    return (where(a_wins, g, 0.0) if na else None, where(a_wins, 0.0, g) if nb else None)


def _fext_fwd(a, b, which):
    xp = namespace(a)
    if a.dtype.kind != "f" and b.dtype.kind != "f":
        return xp.fmax(a, b) if which == "max" else xp.fmin(a, b)
    # the first operand at ties (fmax(0.0, -0.0) is 0.0, fmax(-0.0, 0.0) is -0.0), as
    # PyTorch's kernel; NumPy's vectorized fmax may return either zero
    keep = ((a >= b) if which == "max" else (a <= b)) | (b != b)
    return xp.where(keep, a, b)


_fmax = defop("fmax", _fext_fwd, _fext_vjp, "FmaxBackward0", 2, INPUTS, "promote")
_fmin = defop("fmin", _fext_fwd, _fext_vjp, "FminBackward0", 2, INPUTS, "promote")


def _fmax_call(input, other):  # noqa: A002
    """Elementwise maximum that ignores nan."""
    return _fmax(input, other, "max")


def _fmin_call(input, other):  # noqa: A002
    """Elementwise minimum that ignores nan."""
    return _fmin(input, other, "min")


_fmax_call.op, _fmin_call.op = _fmax.op, _fmin.op
fmax = _no_number(_fmax_call, "fmax")
fmin = _no_number(_fmin_call, "fmin")


# fmod: C's remainder, the sign of the dividend (remainder takes the divisor's).
# PyTorch: d/da = g; d/db = -g * trunc(a / b) (FmodBackward1), a number divisor FmodBackward0
def _fmod_fwd(a, b):
    _check_int_divisor(a, b, "fmod")
    a, b = in_result_dtype(a, b)  # (as remainder: PyTorch's dtype decides near a multiple)
    return namespace(a if hasattr(a, "dtype") else b).fmod(a, b)


def _fmod_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    return (g if na else None, -g * _div_rounded(a, b, "trunc") if nb else None)


_fmod_tensor = defop("fmod", _refuse_bools(_fmod_fwd, "fmod"), _fmod_vjp, "FmodBackward1", 2,
                     INPUTS, "promote", saved_for=lambda needs: (needs[1], needs[1]))


def _fmod_number_fwd(a, c):
    return _with_number(_refuse_bools(_fmod_fwd, "fmod"))(a, c)


_fmod_number = defop("fmod", _fmod_number_fwd, lambda node, g, saved: (g,), "FmodBackward0", 1,
                     NOTHING)


def fmod(input, other):  # noqa: A002
    """C's ``fmod``: ``input - trunc(input / other) * other``, the dividend's sign."""
    _tensor_first("fmod", input)
    if isinstance(other, Tensor):
        return _fmod_tensor(input, other)
    return _fmod_number(input, other)


# ldexp: input * 2 ** other, in a float. PyTorch's LdexpBackward0 saves other (when input
# needs a gradient) and its result: d/da = g * 2 ** b, d/db = g * result * log(2), so an
# in-place change of the result breaks its backward, one of input does not (fuzz seed 9801820)
def _ldexp_fwd(a, b):
    xp = namespace(a)
    if b.dtype.kind == "b" and a.dtype.kind == "f":  # PyTorch computes 2 ** b in b's dtype
        check_broadcast("ldexp", a, b)  # (the shapes' error first, as PyTorch's)
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'; convert the "
                                  "exponent first, e.g. other.int()")
    return a * xp.exp2(b)


def _ldexp_checked(a, b):
    if hasattr(b, "dtype") and b.dtype.kind == "b" and a.dtype.kind == "f":
        return _ldexp_fwd(a, b)  # (raises)
    return _in_float(_ldexp_fwd)(a, b)


def _ldexp_vjp(node, g, saved):
    _, b, result = saved
    na, nb = node.next
    return (g * 2.0 ** b if na else None, g * result * math.log(2) if nb else None)


ldexp = _no_number(defop("ldexp", _ldexp_checked, _ldexp_vjp, "LdexpBackward0", 2,
                         BOTH, "float", saved_for=lambda needs: (False, needs[0])), "ldexp")


# logaddexp2: log2(2 ** a + 2 ** b); PyTorch: d/da = g / (1 + 2 ** (b - a)) (nan at a = b = +-inf)
def _logaddexp2_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    _check_bool_sub(getattr(b, "_data", b), getattr(a, "_data", a))  # (as logaddexp's)
    return (g / (1 + 2.0 ** (b - a)) if na else None, g / (1 + 2.0 ** (a - b)) if nb else None)


_INV_LN2_F32 = float(dtypes.float32.numpy.type(1 / math.log(2)))  # PyTorch's inv_log_2
_INV_LN2 = 1 / math.log(2)
_SPLIT = 134217729.0  # 2 ** 27 + 1: Veltkamp's split of a float64 into two 26-bit halves
_INV_LN2_HI = _SPLIT * _INV_LN2 - (_SPLIT * _INV_LN2 - _INV_LN2)
_INV_LN2_LO = _INV_LN2 - _INV_LN2_HI


def _fused_add_inv_ln2(m, x):
    """``m + x / ln 2`` (``x * _INV_LN2``) rounded once, a fused multiply-add, which NumPy
    lacks: Dekker's exact product ``x * c = p + err`` (c's halves precomputed) and Knuth's
    exact sum ``m + p = s + e``, then ``s + (e + err)`` (float64; an overflow or a nan
    gives nan, for the caller's fallback)."""
    p = x * _INV_LN2
    t = _SPLIT * x
    xh = t - (t - x)
    xl = x - xh
    err = ((xh * _INV_LN2_HI - p) + xh * _INV_LN2_LO + xl * _INV_LN2_HI) + xl * _INV_LN2_LO
    s = m + p
    bb = s - m
    e = (m - (s - bb)) + (p - bb)
    return s + (e + err)


def _logaddexp2_fwd(a, b):
    a, b = in_result_dtype(a, b)
    xp = namespace(a)
    if xp.result_type(a, b) == xp.float64:
        # PyTorch's float64 kernel fuses the multiply-add below too: logaddexp2(-1, -1) is
        # -4.76e-17 (ln 2 and 1 / ln 2 rounded), not NumPy's 0, and a 0 / 0 downstream gives
        # nan against 1 (fuzz seed 18610245); it agrees with PyTorch's on ties (a == b)
        # always, elsewhere more often than NumPy's (98% against 84%)
        with quiet(xp):  # (nan operands, inf - inf: NumPy's answer where not finite)
            out = _fused_add_inv_ln2(xp.maximum(a, b), xp.log1p(xp.exp2(-xp.abs(a - b))))
            finite = xp.isfinite(out)
            if not finite.all():
                out = xp.where(finite, out, xp.logaddexp2(a, b))
        return xp.asarray(out)  # (0-d operands give a NumPy scalar)
    with quiet(xp):  # (nan operands: PyTorch does not warn)
        out = xp.logaddexp2(a, b)
    if out.dtype == xp.float32:
        # PyTorch's float32 kernel: max(a, b) + log1p(exp2(-|a - b|)) * (1 / ln 2 in float32),
        # the multiply-add fused (one rounding): logaddexp2(-1, -1) is -1.06e-8, not NumPy's 0,
        # which a pole downstream turns into -1e8 against inf (fuzz seed 9501888).  In float64
        # the product of two float32s is exact, so the sum rounds once (then to float32).
        with quiet(xp):  # (inf - inf: the where keeps NumPy's inf)
            m = xp.maximum(a, b).astype(xp.float64)
            tail = xp.log1p(xp.exp2(-xp.abs(a - b))).astype(xp.float64)
            fused = (m + tail * _INV_LN2_F32).astype(xp.float32)
        out = xp.where(xp.isfinite(fused), fused, out)
    return out


logaddexp2 = _no_number(defop("logaddexp2", _floats_only(_logaddexp2_fwd, "logaddexp2"),
                              _logaddexp2_vjp, "Logaddexp2Backward0", 2, INPUTS, "float"),
                        "logaddexp2")


# nextafter: the next float after input towards other. PyTorch's NextafterBackward0 passes g
# to input and zeros to other
def _nextafter_vjp(node, g, saved):
    # what PyTorch 2.13 gives (checked at boundaries in tests/ops/test_binary_dtypes.py): g
    # where input != other, 0 where they are equal (there the result is other itself)
    # (equal in PyTorch's promoted dtype: a float32 input meets a 0-d float64 other in
    # float32, seed 9207376)
    a, b = saved
    na, nb = node.next
    return (where(_eq(a, b), 0.0, g) if na else None, zeros_like_grad(g) if nb else None)


nextafter = _no_number(defop("nextafter", _floats_only(_in_float(
    lambda a, b: namespace(a).nextafter(a, b)), "nextafter"), _nextafter_vjp,
    "NextafterBackward0", 2, INPUTS, "float", saved_for=lambda needs: (needs[0], needs[0])),
    "nextafter")


def float_power(input, exponent):  # noqa: A002
    """``input ** exponent`` computed in float64 (PyTorch casts both, recording ToCopy)."""
    def f64(x):
        if isinstance(x, Tensor):
            return x if x._data.dtype == "float64" else to_dtype(x, "float64")
        return float(x) if isinstance(x, (bool, int)) else x

    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return power(f64(input), f64(exponent))


# rsub(input, other, alpha): other - alpha * input. PyTorch: RsubBackward0 for a tensor
# other (both get gradients: -alpha * g and g), RsubBackward1 for a number
def _rsub_vjp(node, g, saved):
    na, nb = node.next
    alpha = node.params[0] if node.params else 1
    return ((-g if alpha == 1 else g * -alpha) if na else None, g if nb else None)


def _rsub_fwd(a, b, alpha=1):
    _check_bool_sub(b, a)
    if alpha == 1:
        return b - a
    # alpha * input in the result dtype, as PyTorch (uint8 * 2 must not wrap first)
    want = dtypes.result_type(a, b).numpy
    return b - alpha * (a.astype(want) if getattr(a, "dtype", want) != want else a)


_rsub_tensor = defop("rsub", _rsub_fwd, _rsub_vjp, "RsubBackward0", 2, NOTHING, "promote")


def rsub(input, other, *, alpha=1):  # noqa: A002
    """``other - alpha * input``: ``2 - x`` is ``rsub(x, 2)``."""
    _tensor_first("rsub", input)
    if isinstance(other, Tensor):
        return _rsub_tensor(input, other) if alpha == 1 else _rsub_tensor(input, other, alpha)
    if alpha == 1:
        return _rsub_number(input, other)
    return _rsub_number_alpha(input, other, alpha)


def _rsub_number_alpha_fwd(a, c, alpha):
    if a.dtype.kind == "b":
        return _rsub_number_fwd(a, c)  # (raises PyTorch's bool error)
    want = dtypes.result_type(a, c, alpha).numpy
    return _rsub_number_fwd(a.astype(want, copy=False) * alpha, c)


_rsub_number_alpha = defop("rsub", _rsub_number_alpha_fwd,
                           lambda node, g, saved: (g * -node.params[1],), "RsubBackward1", 1,
                           NOTHING)


def rsub_method(self, other):
    """``other - self`` (``Tensor.__rsub__``): a tensor ``other`` is rsub's tensor form."""
    if isinstance(other, Tensor):
        return _rsub_tensor(self, other)
    return _rsub_number(self, other)


def true_divide(input, other):  # noqa: A002
    """``input / other``, PyTorch's other name for ``div`` without rounding."""
    return _true_div(input, other)

__all__ = ["addcmul", "addcdiv", "lerp", "atan2", "hypot", "logaddexp", "xlogy", "clamp_min",
           "clamp_max", "copysign", "fmax", "fmin", "fmod", "ldexp", "logaddexp2", "nextafter",
           "float_power", "true_divide"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

# PyTorch's parameters of the plain wrappers (the defop'd ones take input/other and out=)
_SIGNATURES = {"addcmul": "input, tensor1, tensor2, *, value=1",
               "addcdiv": "input, tensor1, tensor2, *, value=1",
               "lerp": "input, end, weight", "clamp_min": "input, min",
               "clamp_max": "input, max", "float_power": "input, exponent"}
_DEFOPS = ("atan2", "hypot", "logaddexp")  # defop callers: out= and names built in
for _name in __all__:
    register(globals()[_name], _name, special=("xlogy",) if _name == "xlogy" else (),
             signature=_SIGNATURES.get(_name, None if _name in _DEFOPS else "input, other"))
# (no signature: rsub has PyTorch's names already, and no out=, as PyTorch's)
register(rsub, method=False, tensor={"__rsub__": rsub_method})
