"""Elementary functions: exp, log, sqrt, abs, sign, sin, cos, tanh, sigmoid, relu (and the
double-backward records of tanh, sigmoid and threshold).

Derivatives are written with retrograd's ops, so they compute on arrays in a first-order
backward and record a graph under ``create_graph=True``.
"""

from __future__ import annotations


import numpy as _np

from ..autograd.graph import sole_grad as _sole
from ..backend import namespace
from ..backend import ndarray as _ndarray
from .pointwise_common import zeros_like_grad
from .selection import grad_where
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from ._elision import UFUNCS



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


# the least float32 whose correctly rounded tanh is 1 (so is every larger one's)
_TANH_SATURATES_F32 = 9.010913848876953


def _tanh_f32(a, out=None):
    """NumPy's float32 tanh, its saturation corrected: NumPy's is faithful, not correctly
    rounded, and below |x| = 10 it never reaches 1: 0.99999994 where the truth (and
    PyTorch's) is 1.0, from |x| = 9.0109 on, so 1 - y^2 (the derivative) is 1.2e-7 against
    0 (seed 19000394).  ``out`` may be ``a`` (the elision of a temporary)."""
    big = None
    # (two reductions, no temporary: most inputs have nothing to correct; a nan fails both
    # comparisons and takes the full test)
    if a.size and not (_max_reduce(a, None) < _TANH_SATURATES_F32
                       and _min_reduce(a, None) > -_TANH_SATURATES_F32):
        big = _np.abs(a) >= _TANH_SATURATES_F32  # (before out overwrites a)
    r = _np.tanh(a, out=_np.empty_like(a) if out is None else out)  # (0-d: an array)
    if big is not None:
        _np.copysign(_np.float32(1), r, out=r, where=big)
    return r


_max_reduce = _np.maximum.reduce
_min_reduce = _np.minimum.reduce


UFUNCS.add(_tanh_f32)  # (it takes out=, and may write its input: elision may use it)


def _tanh_fwd(a):
    xp = namespace(a)
    if a.dtype != xp.float32:
        return xp.tanh(a)
    if type(a) is _ndarray:
        return _tanh_f32(a)
    big = xp.abs(a) >= _TANH_SATURATES_F32  # (CuPy: as _tanh_f32)
    return xp.where(big, xp.sign(a), xp.tanh(a)).astype(a.dtype)


tanh = defop("tanh", _tanh_fwd, _tanh_vjp, "TanhBackward0", 1, OUTPUT, "float",
             fast=(_tanh_f32, _np.tanh))


def _sigmoid_fwd(a):
    xp = namespace(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        # float32/16: three float32 roundings (exp, 1 +, 1 /) left 12 % of the results a ulp
        # farther from the truth than PyTorch's (sigmoid(-2): logit of it was not -2, so
        # digamma missed its pole, seed 17049821); in float64, one rounding at the end
        # (exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below)
        e = xp.array(a, dtype=xp.float64)  # (a 0-d operand may be a NumPy scalar)
        xp.abs(e, out=e)
        xp.negative(e, out=e)
        xp.exp(e, out=e)
        r = e.copy()  # (in place throughout: e + 1 of a 0-d array is a scalar)
        r += 1
        xp.divide(1, r, out=r)
        e *= r
        # PyTorch's float32 exp(-x) overflows below -88.7228 (log of float32's max): its
        # sigmoid is 0 there, not the subnormal truth (log of it is -inf)
        xp.copyto(e, 0, where=a < -88.72283172607422)
        return xp.where(a < 0, e, r).astype(a.dtype)
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
