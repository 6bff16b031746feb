"""Comparison helpers that tutorial code asserts with: ``isclose``, ``allclose``, ``equal``.

None records a graph (their results are bool tensors or Python bools), as in PyTorch.
"""

from __future__ import annotations

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from .pointwise import broadcast_error, scalar_type_name


def _data(x, name, what):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(x).__name__} "
                        "(wrap it: retrograd.tensor(...))")
    return x._data


def _isclose_array(a, b, rtol, atol, equal_nan, name):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{scalar_type_name(a.dtype)} did not match "
                           f"{scalar_type_name(b.dtype)} ({name} compares tensors of one "
                           "dtype; convert one with .to(other.dtype))")
    for tol, what in ((rtol, "rtol"), (atol, "atol")):
        if tol < 0:
            raise RuntimeError(f"{what} must be greater than or equal to zero, but got {tol}")
    err = broadcast_error(a, b, name)
    if err is not None:
        raise err
    xp = namespace(a)
    same = a == b
    if a.dtype.kind == "b":
        return same
    with xp.errstate(invalid="ignore", over="ignore"):
        fa = a.astype(xp.float64) if a.dtype.kind in "iu" else a
        fb = b.astype(xp.float64) if b.dtype.kind in "iu" else b
        # |a - b| <= atol + rtol * |b| where both are finite; infinities only equal
        close = same | (xp.isfinite(fa) & xp.isfinite(fb)
                        & (xp.abs(fa - fb) <= atol + rtol * xp.abs(fb)))
        if equal_nan and a.dtype.kind == "f":
            close = close | (xp.isnan(a) & xp.isnan(b))
    return close


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (a bool tensor)."""
    a, b = _data(input, "isclose", "input"), _data(other, "isclose", "other")
    return make_tensor(namespace(a).asarray(_isclose_array(a, b, rtol, atol, equal_nan,
                                                           "isclose")))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """Whether every element is close (``isclose``): a Python bool."""
    a, b = _data(input, "allclose", "input"), _data(other, "allclose", "other")
    return bool(_isclose_array(a, b, rtol, atol, equal_nan, "allclose").all())


def equal(input, other):  # noqa: A002
    """True if both have the same shape and the same values (nan never equals nan)."""
    a, b = _data(input, "equal", "input"), _data(other, "equal", "other")
    return a.shape == b.shape and bool((a == b).all())


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (isclose, allclose, equal):
    register(_fn, differentiable=False)
