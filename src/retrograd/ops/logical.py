"""Predicates, logical and bitwise ops, and the integer two-input ops (issue 6).

* elementwise predicates: ``isnan isinf isfinite isposinf isneginf isreal signbit``: bool
  tensors, never recorded (PyTorch: no grad_fn even for an input that requires grad);
* tensor predicates returning a Python bool: ``is_nonzero is_same_size is_signed
  is_complex is_conj is_neg``;
* ``logical_and/or/xor`` (bool results, any input dtypes) and their ``_`` forms, which
  write 1/0 in the tensor's own dtype and, as ``logical_not_`` in PyTorch 2.13, record
  nothing (the grad_fn stays what it was);
* ``heaviside``, ``gcd``, ``lcm`` (no derivative: heaviside's backward raises, as PyTorch's);
* ``igamma``/``igammac`` (SciPy's regularized incomplete gamma functions): differentiable in
  ``other`` only; a gradient for ``input`` raises NotImplementedError, as in PyTorch.
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..backend import namespace
from ..tensor import Tensor
from . import pointwise, pointwise_compare
from ._apply import INPUTS, defop
from ._errors import check_broadcast, scalar_type_name
from .changed_views import _write, rebase_views
from .inplace import inplace
from .pointwise import exp, log
from .pointwise_common import _broadcasting

# ----------------------------------------------------------------- elementwise predicates


def _isnan_fwd(a):
    return a != a  # nan is the one value unequal to itself; integers and bools: all False


def _isinf_fwd(a):
    xp = namespace(a)
    return xp.isinf(a) if a.dtype.kind == "f" else xp.zeros(a.shape, dtype=bool)


def _isfinite_fwd(a):
    xp = namespace(a)
    return xp.isfinite(a) if a.dtype.kind == "f" else xp.ones(a.shape, dtype=bool)


def _signed_inf(sign):
    def forward(a):
        xp = namespace(a)
        if a.dtype.kind != "f":
            return xp.zeros(a.shape, dtype=bool)
        return a == sign * math.inf

    return forward


def _signbit_fwd(a):
    xp = namespace(a)
    if a.dtype.kind == "f":
        return xp.signbit(a)  # -0.0 and -nan too, as PyTorch
    if a.dtype.kind == "i":
        return a < 0
    return xp.zeros(a.shape, dtype=bool)  # uint8, bool


def _isreal_fwd(a):
    return namespace(a).ones(a.shape, dtype=bool)  # every tensor here is real


def _predicate(name, forward):
    return defop(name, forward, None, None, 1, differentiable=False,
                 doc=f"Elementwise ``{name}``: a bool tensor of the input's shape (PyTorch's "
                     f"torch.{name}).")


isnan = _predicate("isnan", _isnan_fwd)
isinf = _predicate("isinf", _isinf_fwd)
isfinite = _predicate("isfinite", _isfinite_fwd)
isposinf = _predicate("isposinf", _signed_inf(1))
isneginf = _predicate("isneginf", _signed_inf(-1))
isreal = _predicate("isreal", _isreal_fwd)
signbit = _predicate("signbit", _signbit_fwd)

# ----------------------------------------------------------------- tensor predicates


def _tensor_arg(x, fn, arg="input", position=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x._data


def is_nonzero(input):  # noqa: A002 - PyTorch's name
    """Whether a one-element tensor is nonzero: a Python bool."""
    data = _tensor_arg(input, "is_nonzero")
    if data.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous (is_nonzero "
                           f"of a tensor of shape {list(data.shape)})")
    if data.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous "
                           f"(is_nonzero of a tensor of shape {list(data.shape)}; reduce it "
                           "first, e.g. x.any() or x.all())")
    return bool(data.reshape(()) != 0)


def is_same_size(input, other):  # noqa: A002
    """Whether both tensors have the same shape: a Python bool."""
    _tensor_arg(input, "is_same_size")
    _tensor_arg(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):  # noqa: A002
    """Whether the dtype holds negative values (not uint8, not bool)."""
    return _tensor_arg(input, "is_signed").dtype.kind in "if"


def is_complex(input):  # noqa: A002
    """False: retrograd's tensors are real."""
    _tensor_arg(input, "is_complex")
    return False


def is_conj(input):  # noqa: A002
    """False: a real tensor is never a lazily conjugated view."""
    _tensor_arg(input, "is_conj")
    return False


def is_neg(input):  # noqa: A002
    """False: a real tensor is never a lazily negated view."""
    _tensor_arg(input, "is_neg")
    return False


# ----------------------------------------------------------------- logical ops

logical_and = pointwise.logical_and
logical_or = pointwise.logical_or
logical_xor = pointwise_compare._cmp("logical_xor", lambda a, b: namespace(a).logical_xor(a, b))


def _logical_inplace(name, fn):
    """``x.name_(other)``: 1 where the logical op holds, else 0, in x's dtype.  Not recorded,
    as PyTorch 2.13's logical_not_ / logical_and_ (the grad_fn stays what it was)."""

    def method(x, other):
        with no_grad():
            values = fn(x, other)._data
        if values.dtype != x._data.dtype:
            values = values.astype(x._data.dtype)
        _write(x, values, name)
        x._bump_version()
        rebase_views(x, recorded=False)
        return x

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}`` (the result in the tensor's own dtype)."
    return method


logical_and_ = _logical_inplace("logical_and_", logical_and)
logical_or_ = _logical_inplace("logical_or_", logical_or)
logical_xor_ = _logical_inplace("logical_xor_", logical_xor)

# ----------------------------------------------------------------- heaviside, gcd, lcm


def _heaviside_fwd(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes (input is "
            f"{scalar_type_name(a.dtype)}, values is {scalar_type_name(b.dtype)}; convert one "
            "with .to(other.dtype))")
    xp = namespace(a)
    return xp.where(a == 0, b, (a > 0).astype(a.dtype)).astype(a.dtype)


def _no_derivative(name):
    def vjp(node, g, saved):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return vjp


_heaviside = defop("heaviside", _broadcasting(_heaviside_fwd, "heaviside"),
                   _no_derivative("heaviside"), "NotImplemented", 2, dtype_rule="same")


def heaviside(input, values):  # noqa: A002
    """0 where ``input < 0``, 1 where ``input > 0``, ``values`` where ``input == 0``."""
    for t, arg in ((input, "input"), (values, "values")):
        _tensor_arg(t, "heaviside", arg, 1 if arg == "input" else 2)
    return _heaviside(input, values)


def _integer_only(name):
    def forward(a, b):
        xp = namespace(a)
        common = xp.result_type(a, b)  # (a bool with an int computes in the int: PyTorch's)
        if common.kind not in "iu":
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{scalar_type_name(common)}' ({name} "
                "takes integer tensors)")
        return getattr(xp, name)(a, b)

    return _broadcasting(forward, name)


def _integer_op(name, doc):
    op = defop(name, _integer_only(name), None, None, 2,
               dtype_rule="promote", differentiable=False)

    def fn(input, other):  # noqa: A002
        _tensor_arg(input, name)
        _tensor_arg(other, name, "other", 2)
        return op(input, other)

    fn.__name__ = name
    fn.__doc__ = doc
    fn.op = op.op
    return fn


gcd = _integer_op("gcd", "The greatest common divisor, elementwise (integer tensors; "
                         "gcd(0, 0) = 0).")
lcm = _integer_op("lcm", "The least common multiple, elementwise (integer tensors; "
                         "lcm(0, x) = 0).")

# ----------------------------------------------------------------- igamma, igammac


def _igamma_fwd(fn_name):
    def forward(a, x):
        from .special import scipy_special

        sc = scipy_special(a, fn_name)
        out = getattr(sc, "gammainc" if fn_name == "igamma" else "gammaincc")(a, x)
        return out.astype(namespace(out).result_type(a, x))

    return forward


def _igamma_vjp(node, g, saved):
    a, x = saved
    na, nx = node.next
    if na is not None:
        raise NotImplementedError(
            f"the derivative for '{node.params[0]}: input' is not implemented.")
    from .special import lgamma

    # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a); Q = 1 - P
    a = a.detach() if isinstance(a, Tensor) else a
    if getattr(a, "dtype", None) is not None and getattr(a, "_data", a).dtype.kind == "b":
        # PyTorch's formula computes a - 1 in a's dtype
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           f"supported ({node.params[0]}'s derivative by x reads a - 1 of a "
                           "bool input a); convert a to a float first")
    dx = exp((a - 1) * log(x) - x - lgamma(a))
    return (None, g * dx if node.params[0] == "igamma" else g * -dx)


def _igamma_op(name):
    op = defop(name, _broadcasting(lambda a, x, which: _igamma_fwd(which)(a, x), name),
               _igamma_vjp, f"{name.capitalize()}Backward0", 2, INPUTS, "float")

    def fn(input, other):  # noqa: A002
        kinds = [_tensor_arg(t, name, arg, pos).dtype
                 for t, arg, pos in ((input, "input", 1), (other, "other", 2))]
        if all(k.kind != "f" for k in kinds):
            # PyTorch promotes first (a float with an integer tensor is a float: seed-less
            # stop 20 leftover); its kernel refuses an integer or bool promoted type
            from .. import dtypes

            check_broadcast(name, input, other)  # (the shapes' error first, as PyTorch's)
            common = dtypes.promote_types(input.dtype, other.dtype)
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{scalar_type_name(common.numpy)}' ({name} takes "
                                      "floating tensors; convert with .float())")
        return op(input, other, name)

    fn.__name__ = name
    fn.__doc__ = (f"The regularized {'lower' if name == 'igamma' else 'upper'} incomplete "
                  "gamma function of ``input`` (a) at ``other`` (x) (SciPy).")
    fn.op = op.op
    return fn


igamma = _igamma_op("igamma")
igammac = _igamma_op("igammac")

# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (isnan, isinf, isfinite, isposinf, isneginf, isreal, signbit):
    register(_fn)
for _fn in (is_nonzero, is_same_size, is_signed, is_conj, is_neg):
    register(_fn, differentiable=False)
register(is_complex, method=False, differentiable=False)  # (Tensor.is_complex: tensor.py)
for _fn in (logical_and, logical_or, logical_xor):
    register(_fn)
for _fn in (logical_and_, logical_or_, logical_xor_):
    register(_fn, function=False, inplace_of=_fn.__name__[:-1], differentiable=False)
register(heaviside, signature="input, values")
register(inplace(heaviside, "heaviside_", False), "heaviside_", function=False,
         inplace_of="heaviside")
for _fn in (gcd, lcm):
    register(_fn, signature="input, other")
    register(inplace(_fn, _fn.__name__ + "_", False), _fn.__name__ + "_",
             inplace_of=_fn.__name__)
register(igamma, special=("gammainc",), signature="input, other")
register(igammac, special=("gammaincc",), signature="input, other")
for _fn in (igamma, igammac):
    register(inplace(_fn, _fn.__name__ + "_", True), _fn.__name__ + "_", function=False,
             inplace_of=_fn.__name__)
