"""More elementwise functions: log1p, expm1, rsqrt, trigonometry, rounding.

The same pattern as ``pointwise``: a forward on arrays through ``xp`` and a derivative
written with retrograd's ops (so it runs on arrays in a first-order backward and records
under ``create_graph=True``).  Integer inputs compute in the default float ("float" rule).
"""

from __future__ import annotations

import math

from ..backend import namespace
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .pointwise import sqrt, zeros_like_grad


def _fn(name):
    return lambda a: getattr(namespace(a), name)(a)


log1p = defop("log1p", _fn("log1p"), lambda node, g, saved: (g / (saved[0] + 1),),
              "Log1PBackward0", 1, INPUTS, "float")
# d expm1(x)/dx = exp(x) = expm1(x) + 1, from the saved result
expm1 = defop("expm1", _fn("expm1"), lambda node, g, saved: (g * (saved[0] + 1),),
              "Expm1Backward0", 1, OUTPUT, "float")
# d x**-0.5/dx = -0.5 x**-1.5 = -0.5 * out**3
rsqrt = defop("rsqrt", lambda a: 1 / namespace(a).sqrt(a),
              lambda node, g, saved: (g * -0.5 * saved[0] * saved[0] * saved[0],),
              "RsqrtBackward0", 1, OUTPUT, "float")
log2 = defop("log2", _fn("log2"), lambda node, g, saved: (g / (saved[0] * math.log(2)),),
             "Log2Backward0", 1, INPUTS, "float")
log10 = defop("log10", _fn("log10"), lambda node, g, saved: (g / (saved[0] * math.log(10)),),
              "Log10Backward0", 1, INPUTS, "float")
exp2 = defop("exp2", _fn("exp2"), lambda node, g, saved: (g * saved[0] * math.log(2),),
             "Exp2Backward0", 1, OUTPUT, "float")

# trigonometric and hyperbolic
tan = defop("tan", _fn("tan"), lambda node, g, saved: (g * (1 + saved[0] * saved[0]),),
            "TanBackward0", 1, OUTPUT, "float")
atan = defop("atan", _fn("arctan"), lambda node, g, saved: (g / (1 + saved[0] * saved[0]),),
             "AtanBackward0", 1, INPUTS, "float")
asin = defop("asin", _fn("arcsin"),
             lambda node, g, saved: (g / sqrt(1 - saved[0] * saved[0]),),
             "AsinBackward0", 1, INPUTS, "float")
acos = defop("acos", _fn("arccos"),
             lambda node, g, saved: (-g / sqrt(1 - saved[0] * saved[0]),),
             "AcosBackward0", 1, INPUTS, "float")
sinh = defop("sinh", _fn("sinh"), lambda node, g, saved: (g * cosh(saved[0]),),
             "SinhBackward0", 1, INPUTS, "float")
cosh = defop("cosh", _fn("cosh"), lambda node, g, saved: (g * sinh(saved[0]),),
             "CoshBackward0", 1, INPUTS, "float")


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
    return (g * _TWO_OVER_SQRT_PI * exp(-(a * a)),)


def _erfc_vjp(node, g, saved):
    from .pointwise import exp

    (a,) = saved
    return (-g * _TWO_OVER_SQRT_PI * exp(-(a * a)),)


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


__all__ = ["log1p", "expm1", "rsqrt", "log2", "log10", "exp2", "tan", "atan", "asin", "acos",
           "sinh", "cosh", "floor", "ceil", "trunc", "frac", "round", "square", "erf", "erfc"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

_ALIASES = {"asin": ("arcsin",), "acos": ("arccos",), "atan": ("arctan",)}
_SPECIAL = ("log1p", "expm1", "exp2", "erf", "erfc", "round")
for _name in __all__:
    register(globals()[_name], _name, aliases=_ALIASES.get(_name, ()),
             special=(_name,) if _name in _SPECIAL else ())
