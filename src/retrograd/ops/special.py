"""Special functions: gamma family, Bessel, normal distribution, erfinv (``torch.special``).

The forwards come from SciPy's ``scipy.special`` (``cupyx.scipy.special`` for CuPy arrays),
an optional dependency imported on first use by :func:`scipy_special`; without it these ops
raise an ImportError that names the op and the extra to install.  Where NumPy has the
function (i0) or PyTorch computes it from other ops (ndtr, entr, xlog1py, trigamma) no SciPy
is needed.  Each derivative is PyTorch's (derivatives.yaml), written with retrograd's own
ops so it records under ``create_graph=True``: every order works.

This module also makes the in-place forms of unary.py's new ops (``acosh_``, ``sgn_``...):
unary.py sits below inplace.py and cannot import it.
"""

from __future__ import annotations

import math
import numbers

from .. import dtypes
from ..backend import namespace
from ..tensor import Tensor
from . import unary
from ._apply import BOTH, INPUTS, NOTHING, OUTPUT, defop
from .inplace import inplace, overlap_dispatch
from .pointwise import add_number, broadcast_error, exp, log, mul_number, where
from .pointwise import pow as _pow
from .stats import quiet

_SCIPY = {}  # array module name -> its scipy.special, filled on first use


def scipy_special(a, op: str):
    """The ``scipy.special`` module for ``a``'s array library, imported once.

    >>> import numpy as np
    >>> scipy_special(np.zeros(2), "lgamma").__name__
    'scipy.special'
    """
    name = namespace(a).__name__
    mod = _SCIPY.get(name)
    if mod is None:
        try:
            if name == "cupy":
                import cupyx.scipy.special as mod
            else:
                import scipy.special as mod
        except ImportError:
            raise ImportError(
                f"retrograd's {op} needs SciPy (scipy.special), an optional dependency: "
                "pip install retrograd[scipy] (or pip install scipy)") from None
        _SCIPY[name] = mod
    return mod


def _scipy_fn(name, fn_name, half=True):
    """The forward ``scipy.special.fn_name(a)`` in ``a``'s dtype (SciPy computes float16 in
    float32).  ``half=False``: PyTorch has no float16 kernel and refuses it."""

    def forward(a):
        if not half and a.dtype.kind == "f" and a.dtype.itemsize == 2:
            raise NotImplementedError(f"\"{fn_name}_cpu\" not implemented for 'Half' ({name} "
                                      "has no float16 kernel in PyTorch); convert first, e.g. "
                                      "x.float()")
        # (SciPy's functions do not warn: no errstate needed)
        return getattr(scipy_special(a, name), fn_name)(a).astype(a.dtype, copy=False)

    return forward


# ----------------------------------------------------------------- gamma family


def _lgamma_vjp(node, g, saved):
    return (g * digamma(saved[0]),)


def _lgamma_fwd(a):
    # log|Gamma(x)|: inf at the poles 0, -1, -2... (where the derivative, digamma, is nan),
    # and at -inf (SciPy's gammaln gives -inf there, PyTorch's std::lgamma inf)
    out = _scipy_fn("lgamma", "gammaln")(a)
    return namespace(out).where(a == -math.inf, math.inf, out).astype(a.dtype, copy=False)


lgamma = defop("lgamma", _lgamma_fwd, _lgamma_vjp, "LgammaBackward0", 1, INPUTS, "float")


def _digamma_vjp(node, g, saved):
    return (g * polygamma(1, saved[0]),)


# SciPy's psi is PyTorch's digamma: -inf at 0, +inf at -0.0, nan at negative integers
digamma = defop("digamma", _scipy_fn("digamma", "psi"), _digamma_vjp, "DigammaBackward0", 1,
                INPUTS, "float")


def _trigamma(a):
    """polygamma(1, x) as PyTorch computes it (its series, not SciPy's zeta: the two differ
    by up to 5e-10 relative, and at the poles PyTorch gives huge finite values)."""
    xp = namespace(a)
    with quiet(xp):
        small = a < 0.5
        s = xp.sin(math.pi * a)
        result = xp.where(small, -(math.pi * math.pi) / (s * s), 0.0).astype(a.dtype)
        x = xp.where(small, 1 - a, a).astype(a.dtype)
        for _ in range(6):
            result = result + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
        return xp.where(small, -result, result).astype(a.dtype, copy=False)


def _polygamma_fwd(a, n):
    if n == 0:
        return digamma(a)
    if n == 1:
        return _trigamma(a)
    # PyTorch: (-1)^(n+1) n! zeta(n + 1, x), nan at +inf (SciPy's polygamma gives 0 there)
    xp = namespace(a)
    sp = scipy_special(a, "polygamma")
    factorial = math.exp(math.lgamma(n + 1)) if n <= 170 else math.inf
    with quiet(xp):
        out = (1.0 if n % 2 else -1.0) * factorial * sp.zeta(n + 1, a.astype("float64"))
        out = xp.where(a == math.inf, math.nan, out)
    return out.astype(a.dtype, copy=False)


def _polygamma_vjp(node, g, saved):
    return (g * polygamma(node.params[0] + 1, saved[0]),)


_polygamma = defop("polygamma", _polygamma_fwd, _polygamma_vjp, "PolygammaBackward0", 1,
                   INPUTS, "float")
# the in-place x.polygamma_(n) is PolygammaBackward1 in PyTorch, the same derivative
_polygamma_inplace = defop("polygamma", _polygamma_fwd, _polygamma_vjp, "PolygammaBackward1", 1,
                           INPUTS, "float")


def _check_int(value, fn, arg, position):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be int, not "
                        f"{type(value).__name__}")


def polygamma(n, input):  # noqa: A002
    """The ``n``-th derivative of digamma (``n`` a non-negative int; note the order).

    Examples
    --------
    >>> import retrograd as T
    >>> T.polygamma(1, T.tensor([1.0]))  # pi**2 / 6
    tensor([1.6449])
    """
    return _polygamma(input, _checked_n(n))


def _checked_n(n):
    _check_int(n, "polygamma", "n", 1)
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n (got n={n}).")
    return n


def _mvlgamma_offsets(p):
    return [-(p - 1) / 2 + i / 2 for i in range(p)]  # PyTorch's arange(-p/2 + 0.5, 0.5, 0.5)


def _mvlgamma_fwd(a, p):
    xp = namespace(a)
    if not a.flags.c_contiguous:  # a row-major result, as PyTorch's (its sum over the
        a = xp.ascontiguousarray(a)  # stacked terms is laid out row-major)
    sp = scipy_special(a, "mvlgamma")
    terms = xp.stack([sp.gammaln(a + xp.asarray(c, dtype=a.dtype)) for c in
                      _mvlgamma_offsets(p)], axis=-1)
    return (terms.sum(-1) + p * (p - 1) * math.log(math.pi) / 4).astype(a.dtype, copy=False)


def _mvlgamma_vjp(node, g, saved):
    # PyTorch: grad * sum_i digamma(x - i/2)
    (a,) = saved
    total = None
    for c in _mvlgamma_offsets(node.params[0]):
        d = digamma(a + c)
        total = d if total is None else total + d
    return (g * total,)


_mvlgamma = defop("mvlgamma", _mvlgamma_fwd, _mvlgamma_vjp, "MvlgammaBackward0", 1, INPUTS,
                  "float")


def mvlgamma(input, p):  # noqa: A002
    """The multivariate log-gamma of dimension ``p`` (an int >= 1), elementwise:
    ``sum_i lgamma(x - i/2) + p (p - 1) / 4 log(pi)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.mvlgamma(T.tensor([2.5]), 1)  # lgamma(2.5)
    tensor([0.2847])
    """
    _check_int(p, "mvlgamma", "p", 2)
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got p={p})")
    if getattr(input, "_data", input).dtype.kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor. (mvlgamma; convert "
                           "it first, e.g. x.float())")
    return _mvlgamma(input, p)


# ----------------------------------------------------------------- erfinv, Bessel


_SQRT_PI = math.sqrt(math.pi)


def _erfinv_vjp(node, g, saved):
    # PyTorch: sqrt(pi) / 2 * exp(erfinv(x)^2): inf at +-1, nan outside [-1, 1]
    y = erfinv(saved[0])
    return (0.5 * _SQRT_PI * exp(_pow(y, 2)) * g,)


def _erfinv_fwd(a):
    # PyTorch's float32 (and half) erfinv is its float64 one rounded (all but 1e-4 of the points
    # agree), where SciPy's float32 kernel is 1-3 ulp off in 40%: near the pole at +-1 that
    # difference, divided by a small one, is large (fuzz seed 9501888).  erfinv(-0.0) is -0.0.
    xp = namespace(a)
    narrow = a.dtype.kind == "f" and a.dtype.itemsize < 8
    out = scipy_special(a, "erfinv").erfinv(a.astype(xp.float64) if narrow else a)
    return xp.where(a == 0, a, out).astype(a.dtype, copy=False)


erfinv = defop("erfinv", _erfinv_fwd, _erfinv_vjp, "ErfinvBackward0", 1, INPUTS, "float")


def _i0_fwd(a):
    # SciPy's i0 when installed (NumPy's is ~50x slower on small arrays: Python-level
    # Chebyshev series); NumPy's without it, so i0 itself never needs SciPy
    try:
        sp = scipy_special(a, "i0")
    except ImportError:
        return namespace(a).i0(a).astype(a.dtype, copy=False)
    return sp.i0(a).astype(a.dtype, copy=False)


i0 = defop("i0", _i0_fwd, lambda node, g, saved: (g * i1(saved[0]),), "I0Backward0", 1,
           INPUTS, "float")


def _tiny_guarded(a):
    """(|x| > eps, x with the tiny elements replaced by eps): PyTorch's i1/i1e backward uses
    the limit 0.5 there instead of 0/0."""
    data = getattr(a, "_data", a)
    eps = float(namespace(data).finfo(data.dtype).eps)
    not_tiny = abs(data) > eps
    return not_tiny, where(not_tiny, a, eps)


def _i0e_vjp(node, g, saved):
    a, out = saved
    return (g * (i1e(a) - unary.sgn(a) * out),)


def _i1_vjp(node, g, saved):
    a, out = saved
    not_tiny, safe = _tiny_guarded(a)
    return (g * where(not_tiny, i0(safe) - out / safe, 0.5),)


def _i1e_vjp(node, g, saved):
    a, out = saved
    not_tiny, safe = _tiny_guarded(a)
    return (g * where(not_tiny, i0e(safe) - out * (unary.sgn(safe) + 1 / safe), 0.5),)


i0e = defop("special_i0e", _scipy_fn("special.i0e", "i0e"), _i0e_vjp, "SpecialI0EBackward0", 1,
            BOTH, "float")
i1 = defop("special_i1", _scipy_fn("special.i1", "i1"), _i1_vjp, "SpecialI1Backward0", 1, BOTH,
           "float")
i1e = defop("special_i1e", _scipy_fn("special.i1e", "i1e"), _i1e_vjp, "SpecialI1EBackward0", 1,
            BOTH, "float")


# ----------------------------------------------------------------- the normal distribution

# ndtr is a composite in PyTorch, (1 + erf(x / sqrt(2))) * 0.5, recorded as its pieces: the
# scalar multiply and add are MulBackward1 / AddBackward1 nodes with one input each
_mul_number, _add_number = mul_number, add_number


def ndtr(input):  # noqa: A002
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``, computed as PyTorch does.

    Examples
    --------
    >>> import retrograd as T
    >>> T.special.ndtr(T.tensor([0.0]))
    tensor([0.5000])
    """
    x = input
    if x._data.dtype.kind != "f":
        from .. import dtypes

        x = x.to(dtypes.get_default_dtype())
    return _mul_number(_add_number(unary.erf(_mul_number(x, math.sqrt(0.5))), 1), 0.5)


_SQRT_2PI = math.sqrt(2 * math.pi)

# PyTorch: ndtri' = sqrt(2 pi) exp(ndtri(p)^2 / 2), from the result
ndtri = defop("special_ndtri", _scipy_fn("special.ndtri", "ndtri", half=False),
              lambda node, g, saved: (g * _SQRT_2PI * exp(_pow(saved[0], 2) / 2),),
              "SpecialNdtriBackward0", 1, OUTPUT, "float")


def _log_ndtr_vjp(node, g, saved):
    # PyTorch: grad / sqrt(2 pi) * exp(-(log_ndtr(x) + x^2 / 2))
    a, out = saved
    return (g / _SQRT_2PI * exp(-(out + _pow(a, 2) / 2)),)


log_ndtr = defop("special_log_ndtr", _scipy_fn("special.log_ndtr", "log_ndtr", half=False),
                 _log_ndtr_vjp, "SpecialLogNdtrBackward0", 1, BOTH, "float")


def _erfcx_vjp(node, g, saved):
    a, out = saved
    return ((2.0 * a * out - 2.0 / _SQRT_PI) * g,)  # PyTorch's formula


erfcx = defop("special_erfcx", _scipy_fn("special.erfcx", "erfcx", half=False), _erfcx_vjp,
              "SpecialErfcxBackward0", 1, BOTH, "float")


# ----------------------------------------------------------------- entr, xlog1py


def _entr_fwd(a):
    # -x log x for x > 0, 0 at 0, -inf below, nan stays nan (PyTorch's and SciPy's entr)
    xp = namespace(a)
    with quiet(xp):
        out = xp.where(a > 0, -a * xp.log(a), xp.where(a == 0, 0.0, -math.inf))
    return xp.where(xp.isnan(a), a, out).astype(a.dtype, copy=False)


# PyTorch: entr' = -(1 + log x): inf at 0, nan below
entr = defop("special_entr", _entr_fwd, lambda node, g, saved: (g * -(1 + log(saved[0])),),
             "SpecialEntrBackward0", 1, INPUTS, "float")


def _as_float(v, like):
    """``v`` as a floating array: a Python number in the tensor side's dtype (as PyTorch
    treats a number operand), an integer or bool array in the default float."""
    if not hasattr(v, "dtype"):
        return namespace(like).asarray(v, dtype=like.dtype)
    if v.dtype.kind != "f":
        return v.astype(dtypes.get_default_dtype().numpy)
    return v


def _xlog1py_fwd(x, y):
    # x * log1p(y), 0 where x == 0 (even where log1p(y) is -inf or nan), nan where y is nan
    x = _as_float(x, y) if hasattr(y, "dtype") else x
    y = _as_float(y, x)
    x = _as_float(x, y)
    xp = namespace(x)
    with quiet(xp):
        try:
            r = x * xp.log1p(y)
        except ValueError:
            raise broadcast_error(x, y, "special.xlog1py") from None
        return xp.where(xp.isnan(y), y + x, xp.where(x == 0, 0.0, r)).astype(r.dtype)


def _xlog1py_dx(g, x, y):
    # PyTorch: xlog1py(grad, y), 0 where x == 0 and y <= -1
    return where((x == 0) & (y <= -1), 0.0, xlog1py(g, y))


def _xlog1py_vjp(node, g, saved):
    x, y = saved
    nx, ny = node.next
    return (_xlog1py_dx(g, x, y) if nx else None, g * x / (y + 1) if ny else None)


_xlog1py = defop("special_xlog1py", _xlog1py_fwd, _xlog1py_vjp, "SpecialXlog1PyBackward0", 2,
                 INPUTS, "float")
# a number on one side is a parameter (PyTorch's self_scalar / other_scalar overloads)
_xlog1py_number_x = defop("special_xlog1py", lambda y, x: _xlog1py_fwd(x, y),
                          lambda node, g, saved: (g * node.params[0] / (saved[0] + 1),),
                          "SpecialXlog1PyBackward1", 1, INPUTS, "float")
_xlog1py_number_y = defop("special_xlog1py", _xlog1py_fwd,
                          lambda node, g, saved: (_xlog1py_dx(g, saved[0], node.params[0]),),
                          "SpecialXlog1PyBackward2", 1, INPUTS, "float")


def xlog1py(input, other):  # noqa: A002
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is nan).

    Examples
    --------
    >>> import retrograd as T
    >>> T.special.xlog1py(T.tensor([0.0, 2.0]), T.tensor([-1.0, 0.0]))
    tensor([0., 0.])
    """
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return _xlog1py(input, other)
        return _xlog1py_number_y(input, other)
    if isinstance(other, Tensor):
        return _xlog1py_number_x(other, input)
    if hasattr(input, "dtype") or hasattr(other, "dtype"):
        return _xlog1py_fwd(input, other)  # arrays, in a first-order backward
    raise TypeError(f"special_xlog1py(): expected a Tensor for input or other, got "
                    f"{type(input).__name__} and {type(other).__name__}; wrap one in "
                    "retrograd.tensor(...)")


__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "erfinv", "i0", "i0e", "i1", "i1e",
           "ndtr", "ndtri", "log_ndtr", "erfcx", "entr", "xlog1py", "scipy_special"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(lgamma, special=("gammaln",))
register(digamma, special=("digamma", "psi"))
register(polygamma, method=False, special=("polygamma",),
         tensor={"polygamma": lambda self, n: polygamma(n, self)})
register(mvlgamma, special=("multigammaln",))
register(erfinv, special=("erfinv",))
register(i0, special=("i0",))
for _name in ("i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "entr", "xlog1py"):
    register(globals()[_name], _name, function=False, method=False, special=(_name,))

def _not_implemented(name):
    def vjp(node, g, saved):
        raise NotImplementedError(
            f"the derivative for 'inplace version of {name}' is not implemented (as in "
            f"PyTorch 2.13); use the out-of-place x.{name}() where a gradient is needed")

    return vjp


# PyTorch records acosh_, asinh_, atanh_ (AcoshBackward1...) but has no derivative for them
_inverse_hyperbolic_inplace = {
    name: defop(name, getattr(unary, name).op.forward, _not_implemented(name),
                f"{name.capitalize()}Backward1", 1, NOTHING, "float")
    for name in ("acosh", "asinh", "atanh")}

# In-place forms, of this module's ops and of unary.py's.  The flag: the derivative reads
# the input, so the stand-in for the tensor's old self must keep its values.
_INPLACE = {
    "acosh_": (_inverse_hyperbolic_inplace["acosh"], False, ("arccosh_",)),
    "asinh_": (_inverse_hyperbolic_inplace["asinh"], False, ("arcsinh_",)),
    "atanh_": (_inverse_hyperbolic_inplace["atanh"], False, ("arctanh_",)),
    "sgn_": (unary.sgn, False, ()),
    "deg2rad_": (unary.deg2rad, False, ()), "rad2deg_": (unary.rad2deg, False, ()),
    "sinc_": (unary.sinc, True, ()), "nan_to_num_": (unary.nan_to_num, True, ()),
    "logit_": (unary.logit, True, ()), "conj_physical_": (unary.conj_physical_record, False, ()),
    "i0_": (i0, True, ()), "lgamma_": (lgamma, True, ()), "digamma_": (digamma, True, ()),
    "polygamma_": (lambda x, n: _polygamma_inplace(x, _checked_n(n)), True, ()),
    "mvlgamma_": (mvlgamma, True, ()),
    "erfinv_": (erfinv, True, ()),
}
def _inplace_form(op, name, saves):
    # conj_physical_ of a real tensor runs no kernel (it records, bumps the version): no
    # check for an expanded tensor either
    method = inplace(op, name, saves, overlap_ok=name == "conj_physical_")
    if name != "nan_to_num_":
        return method
    # PyTorch's nan_to_num_ of an integer or bool tensor copies it onto itself (nothing to
    # replace), so it takes an expanded one as it is (seed 12609766)
    return overlap_dispatch(method, inplace(op, name, saves, overlap_ok=True),
                            lambda x: x._data.dtype.kind != "f")


for _name, (_op, _saves, _aliases) in _INPLACE.items():
    register(_inplace_form(_op, _name, _saves), _name, function=False, aliases=_aliases,
             inplace_of=_name[:-1])
