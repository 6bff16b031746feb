"""More activation functions: selu, celu, glu, prelu, rrelu, hardsigmoid, hardswish, mish,
softsign, tanhshrink, threshold, softshrink, hardshrink, softmin, and the in-place forms
``F.relu_``, ``F.elu_``, ``F.selu_``... (activation.py holds the first ones).

Each elementwise one is its own record, named as PyTorch's grad_fn; an in-place form whose
input is gone afterwards reads its derivative from the result (PyTorch's ``...Backward1``).
Derivatives at kinks follow PyTorch's kernels and are written beside each.  Where a
derivative is piecewise, its own derivative is cut at the same points as PyTorch's
(:func:`_flat_outside`), so second derivatives at the boundaries agree too.
"""

from __future__ import annotations

import struct

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from ._errors import dim_error, float_only, scalar_type_name
from ._jvp import RULES as _JVP_RULES
from .iter_layout import like_torch
from .activation import (_elu_, _hardtanh_, _leaky_relu_, elu_backward, elu_rounded_once,
                         overlap_first)
from .inplace import inplace as _inplace
from .inplace import relu_ as _relu_
from .log1p_exp import log1p_exp_neg_abs, round_into
from .pointwise import _no_derivative, derivative_record, sigmoid, tanh, where, zeros_like_grad
from .shape import input_meta
from .quiet_fp import quiet_fp

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _flat_outside(a, mask):
    """``a`` whose own derivative is zero where ``mask`` is False: for a piecewise derivative
    whose pieces PyTorch differentiates only inside (hardswish at x = +-3).  Arrays (a
    first-order backward) pass through."""
    if isinstance(a, Tensor):
        return where(mask, a, a.detach())
    return a


# ----------------------------------------------------------------- selu, celu (the elu family)


def _elu3_fwd(a, alpha, scale, input_scale, backward_input_scale):
    xp = namespace(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        return elu_rounded_once(a, alpha, scale, input_scale)
    return xp.where(a > 0, a * scale, (scale * alpha) * xp.expm1(xp.minimum(a, 0) * input_scale))


def _elu3_vjp(node, g, saved):
    (a,) = saved
    alpha, scale, _, input_scale = node.params
    return (elu_backward(g, a, alpha, scale, input_scale, False),)


def _elu3_result_vjp(node, g, saved):
    (out,) = saved  # (the input is overwritten: PyTorch's is_result form)
    alpha, scale, _, input_scale = node.params
    return (elu_backward(g, out, alpha, scale, input_scale, True),)


_selu = defop("selu", _elu3_fwd, _elu3_vjp, "EluBackward0", 1, INPUTS, "float")
_selu_ = _inplace(defop("selu", _elu3_fwd, _elu3_result_vjp, "EluBackward1", 1, OUTPUT,
                        "float"), "selu_", False)
_celu = defop("celu", _elu3_fwd, _elu3_vjp, "CeluBackward0", 1, INPUTS, "float")
_celu_ = _inplace(defop("celu", _elu3_fwd, _elu3_result_vjp, "CeluBackward1", 1, OUTPUT,
                        "float"), "celu_", False)


def selu(input, inplace=False):  # noqa: A002 - PyTorch's names
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with SELU's fixed alpha and
    scale (self-normalizing networks).

    Examples
    --------
    >>> import retrograd as T
    >>> T.selu(T.tensor([1.0, 0.0]))
    tensor([1.0507, 0.0000])
    """
    overlap_first(input, inplace, "selu_")
    float_only(input, "elu_cpu", "selu")
    return (_selu_ if inplace else _selu)(input, SELU_ALPHA, SELU_SCALE, 1.0, 1.0)


def selu_(input):  # noqa: A002
    """:func:`selu` in place."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.celu(T.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    overlap_first(input, inplace, "celu_")
    if alpha == 0:  # (checked before the kernel's dtype, as PyTorch's)
        raise RuntimeError("ZeroDivisionError: celu's alpha must not be 0 (it divides x)")
    float_only(input, "elu_cpu", "celu")
    # PyTorch's derivative divides by alpha rounded to float32 (derivatives.yaml:
    # 1.0 / alpha.toFloat()); the forward by alpha itself
    backward_scale = 1.0 / struct.unpack("f", struct.pack("f", alpha))[0]
    return (_celu_ if inplace else _celu)(input, alpha, 1.0, 1.0 / alpha, backward_scale)


def celu_(input, alpha=1.0):  # noqa: A002
    """:func:`celu` in place."""
    return celu(input, alpha, True)


# ----------------------------------------------------------------- glu


@quiet_fp
def _glu_fwd(a, dim):
    xp = namespace(a)
    h = a.shape[dim] // 2
    lead = (slice(None),) * (dim % a.ndim)
    first, second = a[lead + (slice(0, h),)], a[lead + (slice(h, 2 * h),)]  # (views)
    # PyTorch's kernel is a TensorIterator over the two halves (narrow views): the result
    # takes its layout from them (ops/iter_layout.py), not NumPy's
    out = first / (1 + xp.exp(-second))
    # (a row-major input: halves whose strides fall in row-major order, so NumPy's result is
    # row-major too, as PyTorch's; the layout sort is for the other inputs)
    return out if a.flags.c_contiguous else like_torch(out, (first, second))


def _glu_vjp(node, g, saved):
    (a,) = saved
    dim = node.params[0]
    h = a.shape[dim] // 2
    if isinstance(a, Tensor):
        first, second = a.narrow(dim, 0, h), a.narrow(dim, h, h)
    else:
        xp = namespace(a)
        first = xp.take(a, xp.arange(h), axis=dim)
        second = xp.take(a, xp.arange(h, 2 * h), axis=dim)
    s = sigmoid(second)
    d_first = g * s
    d_second = d_first * first * (1 - s)
    if isinstance(d_first, Tensor):
        from .shape import cat

        return (cat([d_first, d_second], dim),)
    return (namespace(d_first).concatenate([d_first, d_second], axis=dim),)


_glu = defop("glu", _glu_fwd, _glu_vjp, "GluBackward0", 1, INPUTS)


def glu(input, dim=-1):  # noqa: A002
    """The gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input``
    along ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.glu(T.tensor([2.0, 0.0]))
    tensor([1.])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -input.ndim <= dim < input.ndim:
        raise dim_error(dim, input.ndim)
    dim %= input.ndim
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]} (glu splits it into two halves)")
    # PyTorch checks the shape before the dtype (its kernel's dtype dispatch comes last)
    float_only(input, "glu_cpu", "glu")
    return _glu(input, dim)


# ----------------------------------------------------------------- prelu


@quiet_fp
def _prelu_fwd(a, w):
    return namespace(a).where(a > 0, a, w * a)


def _sum_to(a, shape):
    """``a`` summed down to ``shape`` (which broadcasts to it, same rank)."""
    if tuple(a.shape) == tuple(shape):
        return a
    if isinstance(a, Tensor):
        return a.sum_to_size(*shape)
    axes = tuple(i for i, (n, m) in enumerate(zip(a.shape, shape)) if m == 1 and n != 1)
    return a.sum(axis=axes, keepdims=True)


# PyTorch's _prelu_kernel_backward as records of their own (PreluKernelBackwardBackward0):
# under create_graph the input's gradient requires grad whenever the input does, as torch's,
# and the second derivatives are PyTorch's, cut at x >= 0 (where the first derivative takes
# the x <= 0 branch at 0: its kernel and its derivative formulas disagree there).
def _prelu_dx_fwd(g, a, w):
    return namespace(a).where(a > 0, g, w * g)


def _prelu_dx_vjp(node, gg, saved):
    g, a, w = saved
    n_g, n_a, n_w = node.next
    nonneg = a >= 0 if n_g or n_w else None  # (not saved when only x needs a gradient)
    return (where(nonneg, gg, gg * w) if n_g else None,
            zeros_like_grad(gg) if n_a else None,  # piecewise constant in x
            _sum_to(where(nonneg, 0.0, g * gg), tuple(w.shape)) if n_w else None)


def _prelu_dw_fwd(g, a, w):
    # (the weight is an edge only, not read: see _prelu_dw below)
    return namespace(a).where(a > 0, 0.0, a * g).astype(a.dtype, copy=False)


def _prelu_dw_vjp(node, gg, saved):
    g, a, _w = saved
    n_g, n_a, n_w = node.next
    nonneg = a >= 0 if n_g or n_a else None
    zeros = None
    if n_w:  # PyTorch's ``weight: zeros_like(...)`` when only the weight's gradient is used
        shape, dtype = input_meta(node, 2)
        zeros = namespace(gg._data if isinstance(gg, Tensor) else gg).zeros(shape, dtype)
        if isinstance(gg, Tensor):
            zeros = make_tensor(zeros)
    return (where(nonneg, 0.0, gg * a) if n_g else None,
            where(nonneg, 0.0, g * gg) if n_a else None,
            zeros)


_prelu_dx = defop("prelu_backward", _prelu_dx_fwd, _prelu_dx_vjp, "PreluKernelBackwardBackward0",
                  3, INPUTS, "promote",
                  saved_for=lambda needs: (needs[2], needs[0] or needs[2], needs[0] or needs[2]))
# The weight's gradient takes the weight as an edge it does not read, as PyTorch's
# _prelu_kernel_backward(grad, self, weight) does: under create_graph it requires grad when
# the weight does, and its own derivative gives the weight zeros (seed 11001163).  One node.
_prelu_dw = defop("prelu_backward", _prelu_dw_fwd, _prelu_dw_vjp, "PreluKernelBackwardBackward0",
                  3, INPUTS, "promote", saved_for=lambda needs: (needs[1], True, False))


def _prelu_vjp(node, g, saved):
    a, w = saved
    na, nw = node.next
    # PyTorch's _prelu_kernel_backward: the x <= 0 branch at 0 (slope w, weight grad 0)
    da = _prelu_dx(g, a, w) if na else None
    # (summed over the broadcast dims after, which stays its last node: SumBackward1)
    dw = _sum_to(_prelu_dw(g, a, w), tuple(w.shape)) if nw else None
    return (da, dw)


_prelu_kernel = defop("prelu", _prelu_fwd, _prelu_vjp, "PreluKernelBackward0", 2, INPUTS)


def prelu(input, weight):  # noqa: A002
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` holds one slope, or one per
    channel (dimension 1).

    Examples
    --------
    >>> import retrograd as T
    >>> T.prelu(T.tensor([[-2.0, 3.0]]), T.tensor([0.25, 0.5]))
    tensor([[-0.5000,  3.0000]])
    """
    if input._data.dtype != weight._data.dtype:  # (before the dtype's kernel, as PyTorch)
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {scalar_type_name(input._data.dtype)} "
            f"and {scalar_type_name(weight._data.dtype)} (convert the weight: w.to(x.dtype))")
    ndim, count = input.ndim, weight.numel()
    if count != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor. (prelu with one weight per "
                               "channel needs an input with a channel dimension)")
        channels = input.shape[1] if ndim > 1 else 1
        if channels != count:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {count} and channel size = {channels}. (prelu's weight has one slope per "
                "channel, dimension 1 of the input)")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    float_only(input, "prelu_cpu", "prelu")  # (the kernel's check: after the shapes')
    if ndim != weight.ndim:
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = count
        weight = weight.reshape(tuple(shape))
    return _prelu_kernel(input, weight)


# ----------------------------------------------------------------- rrelu


def _rrelu_fwd(a, slope, noise):
    if not a.flags.c_contiguous:  # PyTorch's rrelu_with_noise writes a row-major result
        a = namespace(a).ascontiguousarray(a)  # (as logsigmoid's: seed 19695685)
    if noise is not None:
        return a * noise
    return namespace(a).where(a > 0, a, a * slope)


_rrelu_backward = derivative_record("RreluWithNoiseBackwardBackward0",
                                   lambda g, a, slope: where(a > 0, g, g * slope))


def _rrelu_vjp(node, g, saved):
    (a,) = saved
    slope, noise = node.params
    if noise is not None:  # training: the slopes drawn in the forward
        return (g * noise,)
    return (_rrelu_backward(g, a, slope),)  # eval: leaky_relu's, slope (lower + upper) / 2


_rrelu = defop("rrelu", _rrelu_fwd, _rrelu_vjp, "RreluWithNoiseBackward0", 1, INPUTS)
# in place the input is gone: the same derivative read from the result's sign
_rrelu_ = _inplace(defop("rrelu", _rrelu_fwd, _rrelu_vjp, "RreluWithNoiseBackward1", 1,
                         OUTPUT), "rrelu_", False)


def _rrelu_call(x, lower, upper, training, inplace, gen):
    overlap_first(x, inplace, "rrelu_")
    if lower > upper:  # (checked before the kernel's dtype, as PyTorch's)
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound (rrelu "
                           f"got lower={lower}, upper={upper})")
    float_only(x, "leaky_relu_cpu" if not training else "rrelu_with_noise_out_cpu", "rrelu")
    noise = None
    if training and upper - lower > 1e-6:  # (PyTorch's test; below it, leaky_relu's slope)
        from ..random import generator

        rng = generator() if gen is None else gen._rng
        data = x._data
        xp = namespace(data)
        # one slope per element, uniform in [lower, upper], where x <= 0; 1 elsewhere
        drawn = xp.asarray(rng.uniform(lower, upper, data.shape)).astype(data.dtype)
        noise = xp.where(data > 0, xp.ones((), data.dtype), drawn)
    slope = (lower + upper) / 2
    return (_rrelu_ if inplace else _rrelu)(x, slope, noise)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """The randomized leaky ReLU: in training each negative element gets a slope drawn
    uniformly from ``[lower, upper]`` (retrograd's generator: ``manual_seed`` repeats them;
    backward uses the same slopes); in evaluation the slope is ``(lower + upper) / 2``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.rrelu(T.tensor([-1.0, 2.0]), 0.25, 0.75)
    tensor([-0.5000,  2.0000])
    """
    return _rrelu_call(input, lower, upper, training, inplace, None)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):  # noqa: A002
    """:func:`rrelu` in place."""
    return _rrelu_call(input, lower, upper, training, True, generator)


def rrelu_aten(input, lower=1.0 / 8, upper=1.0 / 3, training=False,  # noqa: A002
               generator=None):
    """``retrograd.rrelu``: PyTorch's top-level form (a ``generator`` instead of ``inplace``)."""
    return _rrelu_call(input, lower, upper, training, False, generator)


# ----------------------------------------------------------------- hardsigmoid, hardswish, mish


_ONE_SIXTH = 0.16666667163372040  # float(numpy.float32(1 / 6))


def _hardsigmoid_fwd(a):
    return namespace(a).clip(a + 3, 0, 6) / 6


def _hardsigmoid_backward_fwd(g, a):
    # PyTorch: 1/6 strictly inside (-3, 3), 0 at the ends and outside
    # (times 1/6 rounded to float32, as PyTorch's kernel: float64 results agree to the bit)
    xp = namespace(a)
    return xp.where((a > -3) & (a < 3), g * _ONE_SIXTH, xp.zeros((), g.dtype))


# PyTorch's hardsigmoid_backward has no derivative: under create_graph the first derivative
# requires grad (a node called NotImplemented) and a backward through it raises, as torch's
_hardsigmoid_backward = defop("hardsigmoid_backward", _hardsigmoid_backward_fwd,
                              _no_derivative("hardsigmoid_backward"), "NotImplemented", 2,
                              NOTHING, "promote")


def _hardsigmoid_vjp(node, g, saved):
    (a,) = saved
    return (_hardsigmoid_backward(g, a),)


def _hardsigmoid_jvp(op, inputs, tangents, out, params):
    # forward mode: the tangent through the same derivative (the fallback, which transposes
    # the VJP, would differentiate hardsigmoid_backward), as PyTorch's hardsigmoid_backward(t, x)
    return _hardsigmoid_backward(tangents[0], inputs[0])


_hardsigmoid = defop("hardsigmoid", _hardsigmoid_fwd, _hardsigmoid_vjp, "HardsigmoidBackward0",
                     1, INPUTS)
_hardsigmoid_ = _inplace(_hardsigmoid, "hardsigmoid_", True)
_JVP_RULES[("hardsigmoid", "HardsigmoidBackward0")] = _hardsigmoid_jvp


def hardsigmoid(input, inplace=False):  # noqa: A002
    """``clip(x + 3, 0, 6) / 6``, a piecewise-linear sigmoid."""
    float_only(input, "hardsigmoid_cpu", "hardsigmoid")
    return (_hardsigmoid_ if inplace else _hardsigmoid)(input)


@quiet_fp
def _hardswish_fwd(a):
    return a * namespace(a).clip(a + 3, 0, 6) / 6


def _hardswish_backward_fwd(g, a):
    # PyTorch's hardswish_backward: 0 up to -3, g from 3 on, g * (x / 3 + 1/2) strictly
    # between (a nan x passes g, as its scalar kernel: see known_bugs._nan_input_position)
    xp = namespace(a)
    return xp.where(a <= -3, g.dtype.type(0), xp.where((a < 3) & ~(a != a),
                                                       g * (a / 3 + 0.5), g))


def _hardswish_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of hardswish_backward: by the gradient, the same op; by x,
    # where(-3 < x < 3, gg * g / 3, 0) (a where: outside, an inf or nan gg * g stays out)
    g, a = saved
    n_g, n_a = node.next
    d_g = _hardswish_backward(gg, a) if n_g else None
    d_a = where((a > -3) & (a < 3), gg * g / 3.0, 0.0) if n_a else None
    return d_g, d_a


_hardswish_backward = defop("hardswish_backward", _hardswish_backward_fwd,
                            _hardswish_backward_vjp, "HardswishBackwardBackward0", 2, INPUTS)


def _hardswish_vjp(node, g, saved):
    (a,) = saved
    return (_hardswish_backward(g, a),)


_hardswish = defop("hardswish", _hardswish_fwd, _hardswish_vjp, "HardswishBackward0", 1, INPUTS)
_hardswish_ = _inplace(_hardswish, "hardswish_", True)


def hardswish(input, inplace=False):  # noqa: A002
    """``x * clip(x + 3, 0, 6) / 6`` (MobileNetV3)."""
    float_only(input, "hardswish_cpu", "hardswish")
    return (_hardswish_ if inplace else _hardswish)(input)


@quiet_fp
def _mish_fwd(a):
    xp = namespace(a)
    # x * tanh(softplus(x)), softplus in its stable form; for a float32 x all in float64,
    # rounded once (NumPy's float32 exp, log1p and tanh left it up to 2.8 ulp off the truth)
    softplus = log1p_exp_neg_abs(xp, a, wide=True)
    pos = xp.maximum(a, 0)
    softplus += pos
    xp.tanh(softplus, out=softplus)
    softplus *= a
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        # PyTorch's float32 exp(x) is 0 below -103.97 (150 ln 2: under half the least
        # subnormal), so its mish is x * tanh(0) = -0 there, not the subnormal truth
        xp.copyto(softplus, -0.0, where=(a < -103.97207708) & (a > -xp.inf))
    return round_into(xp, softplus, pos, a.dtype)


def _mish_vjp(node, g, saved):
    # PyTorch's mish derivative, g * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)) with
    # sp = log1p(exp(x)) as written (no threshold: exp overflows to inf above ~709, and
    # under create_graph its derivative meets that inf as PyTorch's composite
    # infinitely_differentiable_mish_backward does)
    from .pointwise import exp
    from .unary import log1p

    (a,) = saved
    if isinstance(a, Tensor):
        t = tanh(log1p(exp(a)))
        return (g * (t + a * sigmoid(a) * (1.0 - t * t)),)
    xp = namespace(a)
    with xp.errstate(over="ignore", invalid="ignore"):  # (PyTorch's first-order kernel)
        s = 1 / (1 + xp.exp(-a))
        t = xp.tanh(xp.log1p(xp.exp(a)))
        return (g * (t + a * s * (1 - t * t)),)


_mish = defop("mish", _mish_fwd, _mish_vjp, "MishBackward0", 1, INPUTS)
_mish_ = _inplace(_mish, "mish_", True)


def mish(input, inplace=False):  # noqa: A002
    """``x * tanh(softplus(x))``."""
    float_only(input, "mish_cpu", "mish")
    return (_mish_ if inplace else _mish)(input)


# ----------------------------------------------------------------- softsign, tanhshrink, softmin


@quiet_fp
def softsign(input):  # noqa: A002
    """``x / (1 + |x|)`` (composed, as PyTorch)."""
    return input / (input.abs() + 1)


def tanhshrink(input):  # noqa: A002
    """``x - tanh(x)`` (composed, as PyTorch)."""
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """``softmax(-x, dim)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.softmin(T.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    from .nn import _dim_for, softmax

    negated = -input  # (first, as PyTorch's: a bool input's negation error comes first)
    dim = _dim_for(input, dim, "softmin")
    return softmax(negated, dim, dtype=dtype)


# ----------------------------------------------------------------- threshold, shrinks


def _threshold_fwd(a, threshold, value):
    xp = namespace(a)
    # PyTorch's test is x <= threshold: nan is kept (and its gradient passes)
    return xp.where(a <= threshold, xp.asarray(value).astype(a.dtype), a)


# threshold'(threshold) = 0
_threshold_backward = derivative_record(
    "ThresholdBackwardBackward0", lambda g, a, threshold: where(a <= threshold, 0.0, g))


def _threshold_vjp(node, g, saved):
    return (_threshold_backward(g, saved[0], node.params[0]),)


_threshold = defop("threshold", _threshold_fwd, _threshold_vjp, "ThresholdBackward0", 1, INPUTS)
# in place PyTorch keeps a copy of the input (not the result: value may exceed threshold)
_threshold_ = _inplace(defop("threshold", _threshold_fwd, _threshold_vjp, "ThresholdBackward1",
                             1, INPUTS), "threshold_", True,
                        overlap_ok=True)  # (its kernel checks no overlap: idempotent)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """``x`` where ``x > threshold``, ``value`` elsewhere.

    Examples
    --------
    >>> import retrograd as T
    >>> T.threshold(T.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _threshold_call(input, threshold, value, inplace)


def threshold_(input, threshold, value):  # noqa: A002
    """:func:`threshold` in place."""
    return _threshold_call(input, threshold, value, True)


def _threshold_call(x, th, value, inplace):
    if x._data.dtype.kind == "b":
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool' (convert with "
                                  "x.float())")  # (NotImplementedError as PyTorch's: 12675702)
    return (_threshold_ if inplace else _threshold)(x, th, value)


def _dead_zone(a, lambd):
    return (a >= -lambd) & (a <= lambd)


def _shrink_backward(name):
    # PyTorch: 0 on [-lambd, lambd] (ends included), g outside
    d = derivative_record(name, lambda g, a, lambd: where(_dead_zone(a, lambd), 0.0, g))
    return lambda node, g, saved: (d(g, saved[0], node.params[0]),)


def _hardshrink_fwd(a, lambd):
    return namespace(a).where(_dead_zone(a, lambd), 0, a).astype(a.dtype, copy=False)


@quiet_fp
def _softshrink_fwd(a, lambd):
    xp = namespace(a)
    # (a * 0 in the dead zone: a zero of a's sign, and nan stays nan, as PyTorch)
    return xp.where(a > lambd, a - lambd, xp.where(a < -lambd, a + lambd, a * 0))


_hardshrink = defop("hardshrink", _hardshrink_fwd, _shrink_backward(
    "HardshrinkBackwardBackward0"), "HardshrinkBackward0", 1, INPUTS)
_softshrink = defop("softshrink", _softshrink_fwd, _shrink_backward(
    "SoftshrinkBackwardBackward0"), "SoftshrinkBackward0", 1, INPUTS)


def hardshrink(input, lambd=0.5):  # noqa: A002
    """``x`` where ``|x| > lambd``, 0 elsewhere.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([-1.0, 0.25, 0.75]).hardshrink()
    tensor([-1.0000,  0.0000,  0.7500])
    """
    float_only(input, "hardshrink_cpu", "hardshrink")
    return _hardshrink(input, lambd)


def softshrink(input, lambd=0.5):  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    float_only(input, "softshrink_check", "softshrink")
    if not lambd >= 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{scalar_type_name(input._data.dtype)}, but found {lambd} "
                           "(softshrink's lambd)")
    return _softshrink(input, lambd)


# ----------------------------------------------------------------- in-place forms of activation.py


def relu_(input):  # noqa: A002
    """``F.relu_``: relu in place."""
    return _relu_(input)


def elu_(input, alpha=1.0):  # noqa: A002
    """``F.elu_``: elu in place."""
    overlap_first(input, True, "elu_")
    float_only(input, "elu_cpu", "elu_")
    return _elu_(input, alpha)


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    """``F.leaky_relu_``: leaky_relu in place."""
    overlap_first(input, True, "leaky_relu_")
    float_only(input, "leaky_relu_cpu", "leaky_relu_")
    return _leaky_relu_(input, negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """``F.hardtanh_``: hardtanh in place."""
    if input._data.dtype.kind in "iu":  # PyTorch clamps in the integer type (bounds cast)
        min_val, max_val = int(min_val), int(max_val)
    return _hardtanh_(input, min_val, max_val)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (selu, celu, threshold, selu_, celu_, threshold_, rrelu_):
    register(_fn, method=False, functional=(_fn.__name__,))
register(prelu, functional=("prelu",))
register(hardshrink, functional=("hardshrink",))
register(rrelu, function=False, method=False, functional=("rrelu",))
register(rrelu_aten, "rrelu", method=False)
for _fn in (glu, hardsigmoid, hardswish, mish, softsign, tanhshrink, softmin, softshrink,
            relu_, elu_, leaky_relu_, hardtanh_):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
