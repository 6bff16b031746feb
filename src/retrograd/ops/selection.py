"""Elementwise selection: ``where``, ``clamp``, ``maximum``/``minimum``, and ``grad_where``
(a gradient kept where a mask holds, exactly 0 elsewhere), which derivatives use.
"""

from __future__ import annotations

import math

import numpy as _np

from .. import dtypes
from ..backend import namespace
from ..backend import ndarray as _ndarray
from ..tensor import Tensor
from ..tensor import make_tensor as _make_tensor
from ._apply import INPUTS, NOTHING, defop
from ._errors import scalar_type_name  # noqa: F401  (used here, and imported from here)
from .saved_checks import check_also
from .cast_inside import take_source
from .pointwise_common import _broadcasting, broadcast_error, in_result_dtype, to_dtype

_isfinite = _np.isfinite
_all_reduce = _np.logical_and.reduce  # (``isfinite(a).all()`` without all()'s Python wrapper)
_vdot = _np.vdot


def _all_finite(g):
    """Whether every element of the NumPy array ``g`` is finite.  Its sum of squares is
    finite only if they all are (an inf or nan element makes it inf or nan), and one BLAS
    dot costs ~40% fewer instructions than isfinite and its reduction (a 64x128 relu's
    backward, bench/ (e), (m)); a sum that overflows on finite values asks isfinite."""
    return _isfinite(_vdot(g, g)) or _all_reduce(_isfinite(g), axis=None)


def grad_where(keep, g):
    """``g`` where ``keep``, exactly 0 elsewhere, even where ``g`` is inf or nan (PyTorch's
    ``where(mask, grad, 0)``). On arrays, the common all-finite ``g`` takes ``g * keep``:
    NumPy's where with a random mask is ~3x slower than a multiply on large arrays."""
    if g.__class__ is Tensor or keep.__class__ is Tensor:
        return where(keep, g, 0.0)
    xp = namespace(g)
    if not g.ndim and not getattr(keep, "ndim", 0):  # 0-d: a branch beats any array call
        return g if keep else xp.zeros_like(g)
    if _all_finite(g) if g.__class__ is _ndarray else xp.isfinite(g).all():
        # (+ 0.0: -x * False is -0.0, PyTorch's zeros are +0.0; a kept -0.0 turns +0.0)
        out = g * keep
        out += 0.0
        return out
    return xp.where(keep, g, 0.0)



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
    if input is None or other is None:  # (PyTorch's parser: where(cond, x) has no overload)
        raise TypeError("where() received an invalid combination of arguments: give both "
                        "input and other (where(condition, input, other)), or only the "
                        "condition")
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
    if (input.__class__ is Tensor) is not (other.__class__ is Tensor):
        input, other = _scalar_operand_cast(input, other)  # noqa: A001 - PyTorch's name
    # (WhereBackward0 saves the condition: an in-place change of it breaks backward)
    return check_also(_where(input, other, cond), condition)


def _scalar_operand_cast(input, other):  # noqa: A002 - PyTorch's names
    """PyTorch's where with a Python number wraps the number and converts the tensor to the
    result dtype (``.to``) before its where kernel: a bool or integer tensor that requires
    grad (only a write of a tensor requiring grad makes one) is converted first, so
    where(c, bool_t, 2) is an int64 tensor without grad and where(c, int_t, 2.5) records
    WhereBackward0 over ToCopyBackward0; where(c, int_t, 2) keeps int64 and is refused."""
    t = input if input.__class__ is Tensor else other
    if t._requires_grad and t._data.dtype.kind != "f":
        want = dtypes.result_type(input, other)
        if want.numpy != t._data.dtype:
            t = t.to(want)
            return (t, other) if input.__class__ is Tensor else (input, t)
    return input, other


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


def _clamp_bound_fwd(a, bound, is_min):
    xp = namespace(a)
    return xp.maximum(bound, a) if is_min else xp.minimum(bound, a)  # (the bound first)


def _clamp_bound_vjp(node, g, saved):
    # PyTorch's clamp_min.Tensor / clamp_max.Tensor: x gets g where x >= min (x <= max),
    # the bound where x < min (x > max); a nan x sends nothing anywhere; 0, not g * 0
    a, bound = in_result_dtype(*saved)  # (compared in PyTorch's result dtype, as clamp's)
    nx, nb = node.next
    keep, to_bound = (a >= bound, a < bound) if node.params[0] else (a <= bound, a > bound)
    return (where(keep, g, 0.0) if nx else None, where(to_bound, g, 0.0) if nb else None)


# x.clamp_min(tensor) / x.clamp_max(tensor): two inputs (x and the bound), as PyTorch's
# ClampMinBackward1 / ClampMaxBackward1 (clamp's third, missing bound is no input of theirs)
clamp_min_tensor = defop("clamp_min", _clamp_bound_fwd, _clamp_bound_vjp, "ClampMinBackward1",
                         2, INPUTS, "promote")
clamp_max_tensor = defop("clamp_max", _clamp_bound_fwd, _clamp_bound_vjp, "ClampMaxBackward1",
                         2, INPUTS, "promote")


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
        # an int clamped to a float number: computed in the default float, the cast inside
        # ClampBackward1 (no ToCopyBackward0 below it, as PyTorch)
        given = x
        x = to_dtype(x, dtypes.get_default_dtype().numpy)
        if not (isinstance(min, Tensor) or isinstance(max, Tensor)):
            return take_source(_clamp(x, min, max), x, given)
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
        if _op is not None:  # (clamp_min / clamp_max of a tensor bound: two inputs)
            return _op(x, min if min is not None else max, min is not None)
        lo, hi = xp.asarray(lo, dtype=want), xp.asarray(hi, dtype=want)
        return _clamp_tensor(x, lo if min is None else min,
                                      hi if max is None else max, min is not None,
                                      max is not None)
    return _clamp(x, min, max)


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
