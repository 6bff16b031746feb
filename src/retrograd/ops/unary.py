"""More elementwise functions: log1p, expm1, rsqrt, trigonometry, rounding.

The same pattern as ``pointwise``: a forward on arrays through ``xp`` and a derivative
written with retrograd's ops (so it runs on arrays in a first-order backward and records
under ``create_graph=True``).  Integer inputs compute in the default float ("float" rule).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as _np

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .pointwise import pow as _pow
from .pointwise import sqrt, zeros_like_grad
from .saved_checks import check_also
from .stats import quiet


def _fn(name):
    return lambda a: getattr(namespace(a), name)(a)


def _fn_rounded(name):
    """``_fn(name)``, but float32/float16 computed in float64 and rounded once: NumPy's
    float32 expm1, log1p, log10, sinh, cosh and arctanh (no SIMD kernels, so float64 costs
    about the same) are a ulp farther from the truth than PyTorch's for 6-24% of arguments
    (expm1(4.0) 53.598152 against the correctly rounded 53.598148, PyTorch's: a Gram matrix
    of expm1 values, then its det, differed; fuzz seed 19660699)."""
    def forward(a):
        xp = namespace(a)
        if a.dtype.kind == "f" and a.dtype.itemsize < 8:
            # (the ufunc's float64 loop casts its input in chunks: no float64 copy of it)
            return getattr(xp, name)(a, dtype=xp.float64).astype(a.dtype, copy=False)
        return getattr(xp, name)(a)
    return forward


def _fast_rounded(name):
    """The plain (no-graph) path's kernels for ``_fn_rounded`` ops: float32 through the
    float64 loop, float64 the ufunc itself; without them these ops took the general path,
    about 1 us more a small call than a plain ufunc op."""
    ufunc = getattr(_np, name)
    f64, f32 = _np.float64, _np.float32

    def rounded32(a):
        return ufunc(a, dtype=f64).astype(f32)
    return rounded32, ufunc


log1p = defop("log1p", _fn_rounded("log1p"), lambda node, g, saved: (g / (saved[0] + 1),),
              "Log1PBackward0", 1, INPUTS, "float",
              fast=_fast_rounded("log1p"))
# d expm1(x)/dx = exp(x) = expm1(x) + 1, from the saved result
expm1 = defop("expm1", _fn_rounded("expm1"), lambda node, g, saved: (g * (saved[0] + 1),),
              "Expm1Backward0", 1, OUTPUT, "float",
              fast=_fast_rounded("expm1"))
# d x**-0.5/dx = -0.5 x**-1.5 = -0.5 * out**3, grouped as PyTorch's -0.5 * grad *
# result.pow(3): out**3 overflows to inf for tiny x, so a zero gradient there gives 0 * inf =
# nan in both, where a left-to-right product gave -0
rsqrt = defop("rsqrt", lambda a: 1 / namespace(a).sqrt(a),
              lambda node, g, saved: ((g * -0.5) * (saved[0] * saved[0] * saved[0]),),
              "RsqrtBackward0", 1, OUTPUT, "float")
log2 = defop("log2", _fn("log2"), lambda node, g, saved: (g / (saved[0] * math.log(2)),),
             "Log2Backward0", 1, INPUTS, "float")
log10 = defop("log10", _fn_rounded("log10"),
              lambda node, g, saved: (g / (saved[0] * math.log(10)),),
              "Log10Backward0", 1, INPUTS, "float",
              fast=_fast_rounded("log10"))
exp2 = defop("exp2", _fn("exp2"), lambda node, g, saved: (g * saved[0] * math.log(2),),
             "Exp2Backward0", 1, OUTPUT, "float")

# trigonometric and hyperbolic
tan = defop("tan", _fn("tan"), lambda node, g, saved: (g * (1 + _pow(saved[0], 2)),),
            "TanBackward0", 1, OUTPUT, "float")
atan = defop("atan", _fn("arctan"), lambda node, g, saved: (g / (1 + saved[0] * saved[0]),),
             "AtanBackward0", 1, INPUTS, "float")
asin = defop("asin", _fn("arcsin"),
             lambda node, g, saved: (g / sqrt(1 - saved[0] * saved[0]),),
             "AsinBackward0", 1, INPUTS, "float")
acos = defop("acos", _fn("arccos"),
             lambda node, g, saved: (-g / sqrt(1 - saved[0] * saved[0]),),
             "AcosBackward0", 1, INPUTS, "float")
sinh = defop("sinh", _fn_rounded("sinh"), lambda node, g, saved: (g * cosh(saved[0]),),
             "SinhBackward0", 1, INPUTS, "float",
              fast=_fast_rounded("sinh"))
cosh = defop("cosh", _fn_rounded("cosh"), lambda node, g, saved: (g * sinh(saved[0]),),
             "CoshBackward0", 1, INPUTS, "float",
              fast=_fast_rounded("cosh"))


def _erf_array(a, name="erf"):
    """erf (or erfc) on an array: SciPy's when installed (fast), else the math module's per
    element (exact, slow; NumPy has no erf).  erfc is its own function, not 1 - erf, which
    loses the tail: erfc(6) = 2e-17, but 1 - erf(6) = 0."""
    xp = namespace(a)
    if xp.__name__ == "cupy":
        from cupyx.scipy import special as cupy_special

        return getattr(cupy_special, name)(a)
    try:
        from scipy import special as scipy_special
    except ImportError:
        import math as _math

        fn = getattr(_math, name)
        xp = namespace(a)
        flat = [fn(v) for v in a.reshape(-1).tolist()]
        return xp.asarray(flat, dtype=a.dtype).reshape(a.shape)
    return getattr(scipy_special, name)(a).astype(a.dtype, copy=False)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erf_vjp(node, g, saved):
    from .pointwise import exp

    (a,) = saved
    # PyTorch's formula, term by term: 2 / sqrt(pi) * exp(-(x.pow(2))) * grad (its second
    # derivative goes through pow's, which overflows 2 * x at a huge x: seed 18500792)
    return (_TWO_OVER_SQRT_PI * exp(-(_pow(a, 2))) * g,)


def _erfc_vjp(node, g, saved):
    from .pointwise import exp

    (a,) = saved
    return (-_TWO_OVER_SQRT_PI * exp(-(_pow(a, 2))) * g,)


erf = defop("erf", _erf_array, _erf_vjp, "ErfBackward0", 1, INPUTS, "float")
erfc = defop("erfc", lambda a: _erf_array(a, "erfc"), _erfc_vjp, "ErfcBackward0", 1, INPUTS,
             "float")


def _zero_grad(node, g, saved):
    # round/floor/ceil/trunc: zeros whatever g (PyTorch's zeros_like(grad); g * 0 is nan
    # for an inf g and records a node)
    return (zeros_like_grad(g),)


def _rounding(name):
    def forward(a, *decimals):
        if a.dtype.kind == "b":
            raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'; convert first, "
                                      f"e.g. x.float().{name}()")
        # an integer tensor is already whole: PyTorch returns it unchanged, in its dtype
        return getattr(namespace(a), name)(a, *decimals) if a.dtype.kind == "f" else a.copy()

    return forward


# rounding: the derivative is zero almost everywhere (PyTorch returns zeros, not None)
floor = defop("floor", _rounding("floor"), _zero_grad, "FloorBackward0", 1, NOTHING)
ceil = defop("ceil", _rounding("ceil"), _zero_grad, "CeilBackward0", 1, NOTHING)
trunc = defop("trunc", _rounding("trunc"), _zero_grad, "TruncBackward0", 1, NOTHING)
def _frac_fwd(a):
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"frac_cpu\" not implemented for {a.dtype.name}; frac is "
                                  "for floating point tensors (an integer's frac is 0)")
    return a - namespace(a).trunc(a)


frac = defop("frac", _frac_fwd, lambda node, g, saved: (g,), "FracBackward0", 1, NOTHING)
_round_fwd = _rounding("round")  # NumPy rounds half to even, as PyTorch does


_round = defop("round", _round_fwd, _zero_grad, "RoundBackward0", 1, NOTHING)
_round_decimals = defop("round", _round_fwd, _zero_grad, "RoundBackward1", 1, NOTHING)


def round(x, decimals=0):  # noqa: A001 - PyTorch's name
    """Round to ``decimals`` places, halves to even (the derivative is 0)."""
    return _round(x, 0) if decimals == 0 else _round_decimals(x, decimals)


def square(x):
    """``x * x`` (PyTorch records it as ``x ** 2``: PowBackward0)."""
    from .pointwise import power

    return power(x, 2)


# ----------------------------------------------------------------- inverse hyperbolic


# PyTorch's derivatives: acosh' = (x^2 - 1)^-1/2 (inf at 1, nan below), asinh' =
# (x^2 + 1)^-1/2, atanh' = 1 / (1 - x^2) (inf at +-1)
# (NumPy may warn where the answer is nan or inf, as for log and sqrt: an errstate would
# double the cost of a small call)
acosh = defop("acosh", _fn("arccosh"),
              lambda node, g, saved: (g * rsqrt(saved[0] * saved[0] - 1),),
              "AcoshBackward0", 1, INPUTS, "float")
asinh = defop("asinh", _fn("arcsinh"),
              lambda node, g, saved: (g * rsqrt(_pow(saved[0], 2) + 1),),
              "AsinhBackward0", 1, INPUTS, "float")
atanh = defop("atanh", _fn_rounded("arctanh"),
              lambda node, g, saved: (g * 1 / (1 - _pow(saved[0], 2)),),
              "AtanhBackward0", 1, INPUTS, "float",
              fast=_fast_rounded("arctanh"))


# ----------------------------------------------------------------- complex parts of real tensors
# retrograd has no complex dtypes: on a real tensor PyTorch's conj, conj_physical,
# resolve_conj, resolve_neg and real return the tensor itself (same object, no node)


def positive(input):  # noqa: A002 - PyTorch's name
    """``+input``: the tensor itself (PyTorch refuses a bool tensor)."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported. (Convert it "
                           "first, e.g. x.int(), or leave the + out.)")
    return input


def conj(input):  # noqa: A002
    """The complex conjugate: on a real tensor, the tensor itself."""
    return input


def conj_physical(input):  # noqa: A002
    """The complex conjugate, materialized: on a real tensor, the tensor itself."""
    return input


def resolve_conj(input):  # noqa: A002
    """On a real tensor (never a conjugate view), the tensor itself."""
    return input


def resolve_neg(input):  # noqa: A002
    """On a real tensor (never a negative view), the tensor itself."""
    return input


def real(input):  # noqa: A002
    """The real part: on a real tensor, the tensor itself (``Tensor.real`` is a property)."""
    return input


# conj_physical_ on a real tensor changes nothing, yet PyTorch records it (and bumps the
# version): ConjPhysicalBackward1, whose gradient is the incoming one
conj_physical_record = defop("conj_physical", lambda a: a.copy(), lambda node, g, saved: (g,),
                             "ConjPhysicalBackward1", 1, NOTHING)


def _angle_fwd(a):
    # the angle of a real number: pi below 0, else 0 (so -0.0 gives 0); nan stays nan
    xp = namespace(a)
    return xp.where(xp.isnan(a), a, xp.where(a < 0, math.pi, 0.0)).astype(a.dtype, copy=False)


# angle and sgn of a real tensor: the derivative is zero everywhere (PyTorch returns zeros
# for real inputs, even for an inf gradient)
angle = defop("angle", _angle_fwd, _zero_grad, "AngleBackward0", 1, NOTHING, "float")


def _sgn_fwd(a):
    if a.dtype.kind == "b":
        return a.copy()
    out = namespace(a).sign(a)
    if a.dtype.kind == "f":
        # PyTorch: sgn(nan) = 0 for a real tensor, as sign (NumPy gives nan)
        # (where, not out[nan] = 0: NumPy's sign of a 0-d array is a scalar, read-only)
        nan = out != out
        if nan.any():
            out = namespace(a).where(nan, out.dtype.type(0), out)
    return out


# saves its input and result as PyTorch (sgn_backward(self, grad, result)), though a real
# derivative reads neither: an in-place change of either then makes backward raise there too
sgn = defop("sgn", _sgn_fwd, _zero_grad, "SgnBackward0", 1, INPUTS | OUTPUT)

_DEG = math.pi / 180


def _times_constant(name, c):
    """PyTorch multiplies by the constant rounded to the tensor's dtype (float32 rad2deg is x *
    57.29578f, 1 ulp off NumPy's, which computes in double: fuzz seed 9514371); half computes
    in float32, as NumPy's ufunc does."""
    def forward(a):
        if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
            return a * a.dtype.type(c)
        return getattr(namespace(a), name)(a)
    return forward


deg2rad = defop("deg2rad", _times_constant("deg2rad", _DEG), lambda node, g, saved: (g * _DEG,),
                "Deg2RadBackward0", 1, NOTHING, "float")
rad2deg = defop("rad2deg", _times_constant("rad2deg", 180 / math.pi),
                lambda node, g, saved: (g * (180 / math.pi),),
                "Rad2DegBackward0", 1, NOTHING, "float")


# ----------------------------------------------------------------- sinc, nan_to_num, logit


def _rounded_from_double(fn, x):
    """``fn(x)`` for a float32/half ``x`` computed in float64 and rounded once: the correctly
    rounded sin/cos of PyTorch's scalar kernels (glibc's sinf/cosf), where NumPy's float32
    ones are 1 ulp off for ~2% of arguments.  sinc's derivative near 0 is the difference of
    two such values (all its digits cancel), so that ulp was its whole value."""
    data = getattr(x, "_data", x)
    if data.dtype.kind != "f" or data.dtype.itemsize >= 8:
        return fn(x)
    if isinstance(x, Tensor):
        return fn(x.double()).to(x.dtype)
    return fn(data.astype("float64")).astype(data.dtype)


def _sinc_vjp(node, g, saved):
    # PyTorch's sinc_backward: g * ((pi x cos(pi x) - sin(pi x)) / (pi x^2)), and 0 where
    # pi x^2 == 0 (even for an inf gradient: a where, not a product; x * x underflows to 0
    # below |x| ~ 1e-162).  The quotient is formed before the product with g, as PyTorch's,
    # so the derivative by g is 0 / tiny = 0 where x * x is subnormal (not inf * 0 = nan).
    # Under create_graph the derivative of that where's other branch at 0 is 0 * nan = nan,
    # PyTorch's second derivative too (fuzz seed 15035885's nan came from logcumsumexp)
    from .pointwise import cos, sin, where

    (a,) = saved
    a_pi = a * math.pi
    a_sq_pi = a * a * math.pi
    # sin before cos: PyTorch's C++ builds the subtraction's right side first, and that
    # creation order is the order its engine sums the three gradients reaching a_pi: near 0
    # they are +-1/(pi x^2) and a small rest, so the order decides the second derivative
    # (0 in PyTorch for |x| < ~1e-5, -pi^2 in the other order; the truth is -pi^2 / 3)
    sin_pi = _rounded_from_double(sin, a_pi)
    cos_pi = _rounded_from_double(cos, a_pi)
    out = g * ((a_pi * cos_pi - sin_pi) / a_sq_pi)
    return (where(a_sq_pi == 0.0, 0.0, out),)


sinc = defop("sinc", _fn("sinc"), _sinc_vjp, "SincBackward0", 1, INPUTS, "float")


def _nan_to_num_fwd(a, nan, posinf, neginf):
    if a.dtype.kind != "f":
        return a.copy()  # integers and bools have no nan or inf: an unchanged copy
    xp = namespace(a)
    with quiet(xp):  # a posinf beyond the dtype's range becomes inf, as in PyTorch
        return xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_vjp(node, g, saved):
    # PyTorch: grad * isfinite(x), so an inf or nan gradient at a replaced element is nan
    (a,) = saved
    data = getattr(a, "_data", a)
    return (g * namespace(data).isfinite(data),)


_nan_to_num = defop("nan_to_num", _nan_to_num_fwd, _nan_to_num_vjp, "NanToNumBackward0", 1,
                    INPUTS)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    """Replace nan by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (by default the
    dtype's largest and smallest finite values); the gradient passes at finite elements.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nan_to_num(T.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
    tensor([0., 9., 1.])
    """
    return _nan_to_num(input, nan, posinf, neginf)


def _logit_fwd(a, eps):
    xp = namespace(a)
    if eps is not None and eps >= 0:
        # PyTorch's order: below eps -> eps, else above 1 - eps -> 1 - eps (for eps > 0.5
        # the two bounds cross, and every element becomes one of them)
        a = xp.where(a < eps, eps, xp.where(a > 1 - eps, 1 - eps, a)).astype(a.dtype)
    return xp.log(a / (1 - a))


def _logit_vjp(node, g, saved):
    from .pointwise import where

    (a,) = saved
    eps = node.params[0]
    if g.__class__ is not Tensor:
        # first order: PyTorch's logit_backward kernel. A negative eps counts as none: nan
        # outside [0, 1]; with eps, 0 outside [eps, 1 - eps] (the bounds pass the gradient)
        xp = namespace(a)
        with quiet(xp):
            out = g / (a * (1 - a))
        if eps is None or eps < 0:
            return (xp.where((a < 0) | (a > 1), math.nan, out),)
        return (xp.where((a < eps) | (a > 1 - eps), 0.0, out),)
    # create_graph: PyTorch's infinitely_differentiable_logit_backward, where any given eps
    # (even a negative one) sets the bounds
    out = g / (a * (1 - a))
    if eps is None:
        return (where((a >= 0) & (a <= 1), out, math.nan),)
    return (where((a >= eps) & (a <= 1 - eps), out, 0.0),)


_logit = defop("logit", _logit_fwd, _logit_vjp, "LogitBackward0", 1, INPUTS, "float")


def logit(input, eps=None):  # noqa: A002
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.logit(T.tensor([0.5, 0.0, 1.0]), eps=0.25)
    tensor([ 0.0000, -1.0986,  1.0986])
    """
    return _logit(input, eps)


# ----------------------------------------------------------------- frexp


def _frexp_vjp(node, g, saved):
    # only the mantissa is differentiable: x = m * 2**e, so dm/dx = 2**-e (PyTorch divides
    # by exp2(e) in the input's dtype: inf where 2**-e overflows, at subnormal inputs)
    exponent = node.params[0]
    xp = namespace(exponent)
    with quiet(xp):
        return (g / xp.exp2(exponent.astype(node.out_dtype)),)


_frexp = defop("frexp", lambda a, exponent, mantissa: mantissa, _frexp_vjp, "FrexpBackward0",
               1, NOTHING)
_frexp_result = namedtuple("frexp", ["mantissa", "exponent"])


def frexp(input):  # noqa: A002
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, the mantissa in
    [0.5, 1) in magnitude and the exponent int32 (floating-point inputs only).

    Examples
    --------
    >>> import retrograd as T
    >>> T.frexp(T.tensor([8.0, -3.0]))
    frexp(mantissa=tensor([ 0.5000, -0.7500]), exponent=tensor([4, 2], dtype=retrograd.int32))
    """
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes (got "
                           f"{input.dtype}); convert first, e.g. x.float()")
    mantissa, exponent = namespace(data).frexp(data)
    # FrexpBackward0 saves the exponent (the derivative reads its array): version-checked
    exponent = make_tensor(exponent)
    return _frexp_result(check_also(_frexp(input, exponent._data, mantissa), exponent),
                         exponent)


# ----------------------------------------------------------------- fill (out of place)


def _fill_fwd(a, value):
    out = a.copy()
    out[...] = value  # in a's dtype: fill(int tensor, 2.7) gives 2s, as PyTorch
    return out


def _fill_tensor_vjp(node, g, saved):
    na, nv = node.next
    # the value gets the sum of the output's gradient (the engine reduces the broadcast)
    return (zeros_like_grad(g) if na else None, g if nv else None)


# PyTorch's names: FillBackward0 for a number, FillBackward1 for a 0-d tensor value; the
# filled tensor's own gradient is zeros (not g * 0: an inf gradient gives 0, not nan)
_fill_number = defop("fill", _fill_fwd, _zero_grad, "FillBackward0", 1, NOTHING)
_fill_tensor = defop("fill", _fill_fwd, _fill_tensor_vjp, "FillBackward1", 2, NOTHING)


def fill(input, value):  # noqa: A002
    """A tensor shaped and typed like ``input``, every element ``value`` (a number or a
    0-d tensor, whose gradient is the sum of the output's)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions (shape {list(value.shape)}); use expand or "
                "copy_ for a tensor of values")
        return _fill_tensor(input, value)
    return _fill_number(input, value)


__all__ = ["log1p", "expm1", "rsqrt", "log2", "log10", "exp2", "tan", "atan", "asin", "acos",
           "sinh", "cosh", "floor", "ceil", "trunc", "frac", "round", "square", "erf", "erfc",
           "acosh", "asinh", "atanh", "sgn", "deg2rad", "rad2deg", "sinc", "nan_to_num",
           "logit", "frexp"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

_ALIASES = {"asin": ("arcsin",), "acos": ("arccos",), "atan": ("arctan",),
            "acosh": ("arccosh",), "asinh": ("arcsinh",), "atanh": ("arctanh",)}
_SPECIAL = ("log1p", "expm1", "exp2", "erf", "erfc", "round", "sinc", "logit")
for _name in __all__:
    register(globals()[_name], _name, aliases=_ALIASES.get(_name, ()),
             special=(_name,) if _name in _SPECIAL else ())
register(positive, dunders=("__pos__",))
for _fn in (conj, conj_physical, resolve_conj, resolve_neg):
    register(_fn)
register(real, method=False, tensor={"real": property(real)})
register(angle)
register(fill, method=False)
