"""Activation functions with their own records: leaky_relu, softplus, silu, elu,
logsigmoid, hardtanh / relu6.

Conventions at the kinks follow PyTorch and are written beside each derivative.
"""

from __future__ import annotations

from ..backend import namespace
from ._apply import INPUTS, OUTPUT, defop
from ._errors import float_only
from .changed_views import check_writable
from .inplace import inplace as _inplace
from .log1p_exp import log1p_exp_neg_abs, round_into, times_sigmoid
from .inplace import relu_ as _relu_
from .pointwise import derivative_record, exp, sigmoid, where
from .pointwise import relu as _relu
from ._errors import PY_VALUES, not_a_tensor
from .quiet_fp import quiet_fp


def relu(input, inplace=False):  # noqa: A002 - PyTorch's names
    """``max(x, 0)``; relu'(0) = 0.  ``inplace=True`` changes ``input`` (``relu_``)."""
    if inplace:
        if input.__class__ in PY_VALUES:  # (not wrapped by ops/tensor_only.py: hot)
            raise not_a_tensor("relu", "input", 1, input)
        return _relu_(input)
    return _relu(input)  # (refuses a number itself)


relu.checks_input = True


def _leaky_fwd(a, slope):
    return namespace(a).where(a > 0, a, a * slope)


# leaky_relu'(0) = negative_slope, as PyTorch (the test is x > 0)
_leaky_backward = derivative_record("LeakyReluBackwardBackward0",
                                    lambda g, a, slope: where(a > 0, g, g * slope))


def _leaky_vjp(node, g, saved):
    return (_leaky_backward(g, saved[0], node.params[0]),)


_leaky_relu = defop("leaky_relu", _leaky_fwd, _leaky_vjp, "LeakyReluBackward0", 1, INPUTS)
# in place, PyTorch saves the result instead (the input is gone): LeakyReluBackward1
_leaky_relu_saving_result = defop("leaky_relu", _leaky_fwd, _leaky_vjp, "LeakyReluBackward1", 1,
                                  OUTPUT)
_leaky_relu_ = _inplace(_leaky_relu_saving_result, "leaky_relu_", False)


def overlap_first(x, inplace, name):
    """PyTorch's refusal of an in-place write into an expanded tensor, which comes before
    its kernel's refusal of an integer or bool dtype (float_only): seed 15111218."""
    if inplace and hasattr(x, "_data"):
        check_writable(x, name)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002 - PyTorch's names
    """``x`` where positive, ``negative_slope * x`` elsewhere (the result has x's sign, so
    the in-place form's derivative reads it from the result)."""
    overlap_first(input, inplace, "leaky_relu_")
    float_only(input, "leaky_relu_cpu", "leaky_relu")
    if inplace:
        return _leaky_relu_(input, negative_slope)
    return _leaky_relu(input, negative_slope)


def _softplus_fwd(a, beta, threshold):
    xp = namespace(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        # PyTorch's float32 (and float16's float32 opmath) kernel: beta * x and the threshold
        # test in float32, then log1p(exp(beta * x)) / beta; here in float64 from that bx,
        # rounded once (NumPy's float32 log1p and exp left it up to 2.6 ulp off: log1p_exp.py)
        beta32, f32 = xp.float32(beta), xp.float32
        bx = a.astype(f32, copy=False) * beta32
        soft = log1p_exp_neg_abs(xp, bx, wide=True)
        pos = xp.maximum(bx, 0)
        soft += pos
        if beta32 != 1:
            soft /= float(beta32)
        out = round_into(xp, soft, pos, a.dtype)
        xp.copyto(out, a, where=bx > f32(threshold))
        return out
    bx = a * beta
    # log1p(exp(bx)) / beta, linear above the threshold (as PyTorch), stable for large bx
    soft = (xp.maximum(bx, 0) + log1p_exp_neg_abs(xp, bx)) / beta
    return xp.where(bx > threshold, a, soft)


def _softplus_backward_fwd(g, a, beta, threshold):
    # PyTorch's softplus_backward: g where beta * x > threshold, else g * sigmoid(beta * x)
    # (its kernel writes g * z / (z + 1), z = exp(beta * x), which overflows to nan only for
    # a threshold above ~709 / beta, where its forward overflows to inf too; retrograd's
    # forward is exact there, and so is this slope)
    bx = a * beta
    rounded = times_sigmoid(namespace(a), g, bx)
    return namespace(a).where(bx > threshold, g, g * sigmoid(bx) if rounded is None else rounded)


def _softplus_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of softplus_backward: by the gradient, the same op (linear in
    # it); by x, softplus_double_backward: sigmoid_backward(gg * g, sigmoid(beta * x)) *
    # (beta * x < threshold) * beta, a product with the mask, so an inf or nan gg * g above
    # the threshold (and at it) gives nan as in PyTorch (a where's derivative gave 0)
    from .elementary import _sigmoid_backward

    g, a = saved
    beta, threshold = node.params
    n_g, n_a = node.next
    d_g = _softplus_backward(gg, a, beta, threshold) if n_g else None
    d_a = None
    if n_a:
        bx = a * beta
        d_a = _sigmoid_backward(gg * g, sigmoid(bx)) * (bx < threshold) * beta
    return d_g, d_a


_softplus_backward = defop("softplus_backward", _softplus_backward_fwd, _softplus_backward_vjp,
                           "SoftplusBackwardBackward0", 2, INPUTS)


def _softplus_vjp(node, g, saved):
    (a,) = saved
    beta, threshold = node.params
    return (_softplus_backward(g, a, beta, threshold),)


_softplus = defop("softplus", _softplus_fwd, _softplus_vjp, "SoftplusBackward0", 1, INPUTS,
                  "float")


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    float_only(input, "softplus_cpu", "softplus")
    return _softplus(input, beta, threshold)


@quiet_fp
def _silu_fwd(a):
    xp = namespace(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        # PyTorch's x / (1 + exp(-x)) in float64, rounded once: with NumPy's float32 exp
        # (and two more float32 roundings) it was up to 2.4 ulp off the truth
        e = xp.array(a, dtype=xp.float64)  # (a new array, even 0-d: the steps in place)
        xp.negative(e, out=e)
        out = xp.empty_like(a)  # (the input's layout, as the ufunc's result had)
        with xp.errstate(over="ignore", invalid="ignore"):  # (-inf / inf: nan, as PyTorch)
            xp.exp(e, out=e)
            e += 1
            xp.divide(a, e, out=out, casting="same_kind")  # (the float64 loop, one rounding)
        # PyTorch's float32 exp(-x) overflows below -88.7228 (log of float32's max): its
        # silu is -0 there, not the float32 subnormal of the truth (as sigmoid's)
        xp.copyto(out, -0.0, where=(a < -88.72283172607422) & (a > -xp.inf))
        return out
    return a / (1 + xp.exp(-a))


def _silu_vjp(node, g, saved):
    (a,) = saved
    s = sigmoid(a)
    return (g * s * (1 + a * (1 - s)),)


_silu = defop("silu", _silu_fwd, _silu_vjp, "SiluBackward0", 1, INPUTS, "float")
_silu_ = _inplace(_silu, "silu_", True)


def silu(input, inplace=False):  # noqa: A002
    """``x * sigmoid(x)``."""
    float_only(input, "silu_cpu", "silu")
    return _silu_(input) if inplace else _silu(input)


def _elu_fwd(a, alpha):
    xp = namespace(a)
    if a.dtype.kind == "f" and a.dtype.itemsize < 8:
        return elu_rounded_once(a, alpha, 1.0, 1.0)
    return xp.where(a > 0, a, alpha * xp.expm1(xp.minimum(0, a)))  # (-0.0 stays -0.0)


def elu_rounded_once(a, alpha, scale, input_scale):
    """PyTorch's float32 (and float16's float32 opmath) elu kernel, ``x * scale`` where
    ``x > 0``, else ``expm1(x * input_scale) * (alpha * scale)``, with its coefficients
    and ``x * input_scale`` in float32, but the rest in float64 and rounded once: NumPy's
    float32 expm1 left elu, celu and selu up to 2.2 ulp off where PyTorch's are within
    0.5-1.5."""
    xp = namespace(a)
    f32 = xp.float32
    # (minimum(0, x), not (x, 0): NumPy's gives its second argument at a tie, so -0.0
    # stays -0.0, as PyTorch's expm1(-0.0) * coefficient)
    with xp.errstate(invalid="ignore", over="ignore"):
        coef, in_scale = f32(alpha) * f32(scale), f32(input_scale)
        t = xp.asarray(xp.minimum(0, a), dtype=f32)  # (an array, even 0-d: reused below)
        if in_scale != 1:
            t *= in_scale
        out = xp.expm1(t, dtype=xp.float64)
        out *= float(coef)
        # + max(0, x) * scale, PyTorch's float32 product: the pieces are 0 on each other's
        # side (-0.0 + -0.0 at -0.0), a select without a mask (NumPy's where and copyto
        # were slower than the expm1 here)
        pos = xp.maximum(0, a, out=t)
        if scale != 1:
            pos *= f32(scale)
        if coef > 0 and xp.isfinite(coef) and xp.isfinite(in_scale):
            out += pos
        else:  # (0 * inf would be nan on the side PyTorch's select does not take, and a
            # sum would lose the sign of a zero; PyTorch's result is x itself at +-0)
            out = xp.where(a < 0, out, pos)
        return round_into(xp, out, pos, a.dtype)


def _elu_backward_fwd(g, x, alpha, scale, input_scale, is_result):
    """PyTorch's elu_backward kernel: ``g * scale`` where ``x > 0``; elsewhere
    ``g * input_scale * alpha * scale * exp(x * input_scale)`` from the input, or
    ``g * input_scale * (x + alpha * scale)`` from the result (``is_result``: the in-place
    forms, whose input is gone).  The test is ``x > 0`` as in its vectorized body, so x = 0
    takes the exp branch (elu'(0) = alpha) and a nan x gives nan (its scalar tail, all of a
    tensor of < 8 float64 / 16 float32 elements with AVX2, passes ``g * scale`` there: see
    tests/fuzz/known_bugs.py, _nan_input_position)."""
    xp = namespace(x)
    if is_result:
        neg = g * input_scale * (x + alpha * scale)
    else:  # (min(x, 0): the x > 0 lanes, not taken, do not overflow exp)
        neg = g * input_scale * (alpha * scale) * xp.exp(xp.minimum(x, 0) * input_scale)
    return xp.where(x > 0, g * scale, neg)


def _elu_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of elu_backward (derivatives.yaml, elu_double_backward): by the
    # gradient, elu_backward itself (linear in it); by x,
    #   from the input:  elu_backward(gg * g * input_scale, x) * (x < 0)
    #   from the result: gg * g * input_scale * (x < 0)
    # products with a 0/1 mask, not a where: an inf or nan gradient gives nan for x >= 0
    # as in PyTorch; elu''(0) = 0 (x = 0 is outside the mask, though elu'(0) = alpha)
    g, x = saved
    params = node.params
    alpha, scale, input_scale, is_result = params
    n_g, n_x = node.next
    d_g = _elu_backward(gg, x, *params) if n_g else None
    d_x = None
    if n_x:
        ggg = gg * g * input_scale
        if is_result:
            d_x = ggg * (x < 0)  # (a bool mask keeps ggg's dtype)
        else:
            d_x = _elu_backward(ggg, x, *params) * (x < 0)
    return d_g, d_x


_elu_backward = defop("elu_backward", _elu_backward_fwd, _elu_backward_vjp,
                      "EluBackwardBackward0", 2, INPUTS)


def elu_backward(g, x, alpha, scale, input_scale, is_result):
    """The first derivative of the elu family (elu, selu, celu and their in-place forms),
    one record (EluBackwardBackward0 under create_graph, as PyTorch's)."""
    return _elu_backward(g, x, alpha, scale, input_scale, is_result)


def _elu_vjp(node, g, saved):
    (a,) = saved
    return (_elu_backward(g, a, node.params[0], 1.0, 1.0, False),)


_elu = defop("elu", _elu_fwd, _elu_vjp, "EluBackward0", 1, INPUTS, "float")


def _elu_result_vjp(node, g, saved):
    (out,) = saved
    return (_elu_backward(g, out, node.params[0], 1.0, 1.0, True),)


_elu_ = _inplace(defop("elu", _elu_fwd, _elu_result_vjp, "EluBackward1", 1, OUTPUT, "float"),
                 "elu_", False)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    overlap_first(input, inplace, "elu_")
    float_only(input, "elu_cpu", "elu")
    return _elu_(input, alpha) if inplace else _elu(input, alpha)


_SQRT_HALF = 0.5 ** 0.5
_SQRT_2_OVER_PI = (2 / 3.141592653589793) ** 0.5
_INV_SQRT_2PI = 1 / (2 * 3.141592653589793) ** 0.5


@quiet_fp
def _gelu_fwd(a, approximate):
    xp = namespace(a)
    if approximate == "tanh":
        return 0.5 * a * (1 + xp.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)))
    from .unary import _erf_array

    return 0.5 * a * (1 + _erf_array(a * _SQRT_HALF))


def _gelu_slope(a, approximate):
    """gelu'(x), on arrays or tensors (recording nothing that is differentiated: the
    record below has its own derivative)."""
    from .pointwise import tanh
    from .unary import erf

    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)
        t = tanh(inner)
        d_inner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * a * a)
        return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * d_inner
    # d/dx x * Phi(x) = Phi(x) + x * phi(x)
    return 0.5 * (1 + erf(a * _SQRT_HALF)) + a * _INV_SQRT_2PI * exp(-0.5 * a * a)


def _gelu_curvature(a, approximate):
    """gelu''(x) in PyTorch's closed form (gelu_double_backward), so that an infinite
    gradient times it is inf, not the inf - inf = nan of differentiating gelu' piece by
    piece (found by the degenerate-point sweep)."""
    from .pointwise import tanh
    from .unary import cosh

    if approximate == "tanh":
        kappa = 0.044715
        inner = _SQRT_2_OVER_PI * (a + kappa * (a * a * a))
        t = tanh(inner)
        sech = 1 / cosh(inner)
        f = 0.5 * a
        g = 1 - t * t
        h = _SQRT_2_OVER_PI * (1 + 3 * kappa * a * a)
        f_prime_gh = 0.5 * g * h
        g_prime_fh = f * h * ((2 * sech) * (-sech * t) * h)
        h_prime_fg = f * g * (6 * kappa * a * _SQRT_2_OVER_PI)
        return f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg
    square = a * a
    pdf = _INV_SQRT_2PI * exp(-0.5 * square)
    return 2 * pdf - square * pdf


def _gelu_backward_fwd(g, a, approximate):
    return g * _gelu_slope(a, approximate)


def _gelu_backward_vjp(node, gg, saved):
    # PyTorch's gelu_backward derivatives: by grad_output gelu_backward(gg, x), by x
    # gelu_double_backward: gg * grad_output * gelu''(x)
    g, a = saved
    approximate = node.params[0]
    n_g, n_a = node.next
    return (gg * _gelu_slope(a, approximate) if n_g else None,
            gg * g * _gelu_curvature(a, approximate) if n_a else None)


_gelu_backward = defop("gelu_backward", _gelu_backward_fwd, _gelu_backward_vjp,
                       "GeluBackwardBackward0", 2, INPUTS)


def _gelu_vjp(node, g, saved):
    (a,) = saved
    return (_gelu_backward(g, a, node.params[0]),)


_gelu = defop("gelu", _gelu_fwd, _gelu_vjp, "GeluBackward0", 1, INPUTS, "float")


def gelu(input, approximate="none"):  # noqa: A002
    """``x * Phi(x)`` (Phi the standard normal CDF), or its tanh approximation."""
    if approximate not in ("none", "tanh"):  # (before the kernel's dtype, as PyTorch's)
        raise RuntimeError(f"approximate argument must be either none or tanh, got "
                           f"{approximate!r}")
    float_only(input, "GeluKernelImpl", "gelu")
    return _gelu(input, approximate)


def _logsigmoid_fwd(a):
    xp = namespace(a)
    if not a.flags.c_contiguous:  # PyTorch's log_sigmoid kernel writes a row-major result,
        a = xp.ascontiguousarray(a)  # whatever the input's layout (seed 19695685)
    # PyTorch's min(x, 0) - log1p(exp(-|x|)), in float64 for a float32 x and rounded once
    # (NumPy's float32 log1p and exp left it up to 2.6 ulp off the truth: log1p_exp.py)
    out = log1p_exp_neg_abs(xp, a, wide=True)
    neg = xp.minimum(a, 0)
    xp.subtract(neg, out, out=out)  # (exact: min(x, 0) is in both dtypes)
    return round_into(xp, out, neg, a.dtype)


def _logsigmoid_vjp(node, g, saved):
    (a,) = saved
    if hasattr(a, "_data") or hasattr(g, "_data"):  # (Tensors: under create_graph)
        return (g * sigmoid(-a),)
    rounded = times_sigmoid(namespace(a), g, -a)
    return (g * sigmoid(-a) if rounded is None else rounded,)


_logsigmoid = defop("logsigmoid", _logsigmoid_fwd, _logsigmoid_vjp, "LogSigmoidBackward0", 1,
                    INPUTS, "float")


def logsigmoid(input):  # noqa: A002 - PyTorch's name
    """``log(sigmoid(x))``, computed stably; an integer or bool input is refused, as
    PyTorch's log_sigmoid kernel (floats only) does."""
    float_only(input, "log_sigmoid_cpu", "logsigmoid")
    return _logsigmoid(input)


def _hardtanh_fwd(a, lo, hi):
    return namespace(a).clip(a, lo, hi)


# unlike clamp, the gradient stops at the bounds themselves (PyTorch: lo < x < hi), and
# at nan (as PyTorch's vectorised kernel; its scalar tail, tensors of < 8 elements,
# passes g there); 0, not g * 0, outside
_hardtanh_backward = derivative_record(
    "HardtanhBackwardBackward0", lambda g, a, lo, hi: where((a > lo) & (a < hi), g, 0.0))


def _hardtanh_vjp(node, g, saved):
    return (_hardtanh_backward(g, saved[0], *node.params),)


_hardtanh = defop("hardtanh", _hardtanh_fwd, _hardtanh_vjp, "HardtanhBackward0", 1, INPUTS)


_hardtanh_ = _inplace(_hardtanh, "hardtanh_", True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """``x`` clipped to ``[min_val, max_val]``."""
    if min_val > max_val:  # (PyTorch's functional checks this first; hardtanh_ does not)
        raise ValueError(f"min_val cannot be greater than max_val (hardtanh got min_val="
                         f"{min_val}, max_val={max_val})")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh; convert with x.float()")
    if input._data.dtype.kind in "iu":  # PyTorch clamps in the integer type (bounds cast)
        min_val, max_val = int(min_val), int(max_val)
    return (_hardtanh_ if inplace else _hardtanh)(input, min_val, max_val)


def relu6(input, inplace=False):  # noqa: A002
    """``min(max(x, 0), 6)`` (PyTorch records it as hardtanh)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

# nn.functional's relu (with inplace=) is its own entry; retrograd.relu is pointwise's
for _fn in (relu, leaky_relu, softplus, silu, elu, gelu, hardtanh, relu6, logsigmoid):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
