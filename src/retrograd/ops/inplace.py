"""In-place ops (``add_``, ``mul_``, ``zero_``, ``copy_``...): version counting and rebasing.

An in-place op computes its result with the out-of-place op, writes it into the
tensor's own array (so views and ``.data`` aliases see it), bumps the version counter, and
makes the tensor's grad_fn the new node.  The node's input is a *shadow* holding the
tensor's previous graph position (and, if the op saves its inputs, the previous values).

The other tensors sharing that memory follow, as in PyTorch (changed_views.py): when a view
is changed its base's grad_fn becomes a CopySlices node, and every other view that records a
graph is re-derived from the base's new grad_fn (AsStridedBackward0).  This module is the
dispatch (``inplace``, forward AD, integer tensors) and the ops made with it;
``x[index] = value`` is in index_assign.py.
"""

from __future__ import annotations

from ..autograd.forward_state import fw, set_tangent, tangent_of
from ..autograd.grad_mode import no_grad, state
from ..autograd.graph import move_retain_grad
import numpy as _np

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from . import pointwise
from .changed_views import (
    _ADOPTED, _adopted, _check_operands, _leaf_error, _no_view_alive, _save_self_as_output,
    _write, check_no_grad_view, check_no_partial_overlap, check_view_of_leaf, check_writable,
    rebase_views, shadow_of,
)



# ----------------------------------------------------------------- forward AD (ops/_jvp.py)
def _has_tangent(x, args, kwargs) -> bool:
    return any(isinstance(a, Tensor) and tangent_of(a) is not None
               for a in (x, *args, *kwargs.values()))


def _take_tangent(x, new):
    """``x`` changed in place: its tangent becomes ``new`` (None: zeros), written into the
    tangent it has where possible, so views of the tangent (of views of ``x``) follow."""
    old = tangent_of(x)
    if old is not None and (new is None or (
            old._data.shape == new._data.shape and not old._requires_grad
            and not new._requires_grad and old._data.flags.writeable)):
        if new is None:
            old._data[...] = 0
        else:
            old._data[...] = new._data
        return
    if new is None:
        new = make_tensor(namespace(x._data).zeros_like(x._data))
    set_tangent(x, new)


def _dual_inplace(method, op_fn, x, args, kwargs):
    """An in-place op on a dual (or with a dual argument): the tangent is the out-of-place
    op's, computed first (from ``x`` before the change); then the change, not propagating."""
    with no_grad():
        new = tangent_of(op_fn(x, *args, **kwargs))
    fw.active = False
    try:
        method(x, *args, **kwargs)
    finally:
        fw.active = True
    _take_tangent(x, new)
    if state.tracer is not None:  # autograd.trace(): the step's result is x itself
        fw.report_inplace(x)
    return x


# in-place ops PyTorch refuses on an integer or bool tensor that requires grad (they compute
# out of place, then copy: 'Autograd not support dtype'); it records the others (MulBackward0)
_INTEGER_REFUSED = {"abs_", "absolute_", "clamp_", "clamp_min_", "clamp_max_", "square_",
                    "pow_", "sgn_", "nan_to_num_",
                    # (PyTorch refuses these before their kernels too: seed 12554342)
                    "hardtanh_", "threshold_", "hypot_", "nextafter_",
                    # (cumprod_ too, before its dim check; cumsum_ records: dtypeD)
                    "cumprod_"}


# in-place ops whose derivative for an operand (from that position on) reads the original
# tensor: PyTorch saves a clone of it, which it refuses for an integer or bool tensor that
# requires grad ('Autograd not support dtype') where that operand requires grad too
# (int.mul_(int), both requiring grad; seed 18008347's class)
_SELF_SAVED_FOR_OTHER = {"mul_": 0, "div_": 0, "remainder_": 0, "fmod_": 0, "lerp_": 1}


def _integer_requiring_grad(args, kwargs):
    """Whether an operand is an integer or bool tensor that requires grad."""
    return any(isinstance(a, Tensor) and a._requires_grad and a._data.dtype.kind != "f"
               for a in (*args, *kwargs.values()))


def _on_integer(x, name, op_fn, saves_inputs, args, kwargs):
    """``op_fn`` on an integer or bool ``x`` that requires grad, or with an integer or bool
    operand that does, recording its node as PyTorch does (_apply.integer_grad), or
    PyTorch's refusal (those ops save a clone of ``x``, refused only where ``x`` requires
    grad: int.clamp_(min=int_requiring_grad) records ClampBackward0, seed 18008347)."""
    if x._requires_grad and (name in _INTEGER_REFUSED or (
            name in _SELF_SAVED_FOR_OTHER and _integer_requiring_grad(
                args[_SELF_SAVED_FOR_OTHER[name]:], kwargs))):
        from ._apply import _dtype_name

        raise RuntimeError(f"Autograd not support dtype: {_dtype_name(x._data.dtype)} ({name} "
                           "of an integer or bool tensor that requires grad; detach() it or "
                           "convert it to a float first)")
    state.int_inplace = True
    try:
        result = op_fn(shadow_of(x, saves_inputs), *args, **kwargs)
    finally:
        state.int_inplace = False
    # (PyTorch records nothing for copy_ into it: the old grad_fn stays)
    return result.detach() if name == "copy_" else result


# two-input ops whose kernel refuses some dtypes (hypot: floats only; gcd, bitwise: integers):
# PyTorch's TensorIterator promotes self with the other operand and checks that the result
# type can be written into self before it looks for a kernel, so bool.hypot_(int64) is
# "result type Long can't be cast to ... Bool" (RuntimeError), not the kernel's
# NotImplementedError (fuzz seeds 12520467, 12525213)
# The output's shape is checked before both (an operand that broadcasts self to a bigger
# shape: "output with shape ... doesn't match the broadcast shape", RuntimeError, also where
# the kernel would refuse the dtypes: fuzzZ, fmod_/ldexp_/pow_/remainder_ of bools)
_CAST_BEFORE_KERNEL = {"hypot_", "nextafter_", "igamma_", "igammac_", "gcd_", "lcm_",
                       "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
                       "bitwise_right_shift_", "fmod_", "ldexp_", "pow_", "remainder_"}


# in-place ops whose other operand must be a tensor (a number: PyTorch's TypeError, before
# the result-type check)
_TENSOR_OTHER = {"atan2_", "hypot_", "ldexp_", "nextafter_"}


def _check_result_cast(x, args, name):
    from ..dtypes import can_cast, result_type

    if not args or (state.enabled and x._requires_grad and name in _INTEGER_REFUSED):
        return  # (autograd's refusal of the dtype comes first: _on_integer)
    other = args[0]
    if isinstance(other, Tensor):
        try:
            shape = _np.broadcast_shapes(x._data.shape, other._data.shape)
        except ValueError:  # shapes that do not broadcast: the op raises PyTorch's error
            return  # (fuzz seed 15126039)
        if tuple(shape) != x._data.shape:  # (PyTorch's shape check comes first)
            raise RuntimeError(
                f"output with shape {list(x._data.shape)} doesn't match the broadcast shape "
                f"{list(shape)} in {name}; an in-place op cannot change the tensor's shape")
        other = other._data
    elif not isinstance(other, (bool, int, float)):
        return
    if x._data.dtype.kind == "f":
        return
    promoted = result_type(x._data, other)
    if not can_cast(promoted, x.dtype):
        target = pointwise.scalar_type_name(x._data.dtype)
        raise RuntimeError(
            f"result type {pointwise.scalar_type_name(promoted.numpy)} can't be cast to the "
            f"desired output type {target} ({name} writes into the "
            f"tensor of dtype {x.dtype}; use the out-of-place op or convert the tensor first)")


def inplace(op_fn, name, saves_inputs, ufunc=None, overlap_ok=None):
    """Make ``x.name_(other)`` from the out-of-place ``op_fn``.

    ``ufunc`` names the array function (``"subtract"``) that can write the result straight
    into ``x``'s array when nothing is recorded: an optimizer step ``p -= lr * p.grad``
    under no_grad then costs one array pass instead of a temporary, a copy and the op's
    promotion checks (bench/ (e): -16 us a step).  ``overlap_ok``: a fill, which PyTorch
    lets write through an expanded tensor (masked_fill_ by default: it is made in
    ops/__init__.py).
    """
    if overlap_ok is None:
        overlap_ok = name == "masked_fill_"
    # the fills read their value as a number first: PyTorch checks no overlap for them
    check_operands = name not in ("fill_", "masked_fill_", "zero_")

    np_ufunc = getattr(_np, ufunc) if ufunc is not None else None
    cast_first = name in _CAST_BEFORE_KERNEL

    def method(x, *args, **kwargs):
        if fw.active and _has_tangent(x, args, kwargs):
            return _dual_inplace(method, op_fn, x, args, kwargs)
        if np_ufunc is not None and not kwargs and len(args) == 1:
            other = args[0]
            xd = x._data
            od = other._data if type(other) is Tensor else other
            tx = type(xd)
            if (xd.dtype.kind == "f"
                    and ((type(od) is tx and od.dtype == xd.dtype and od.shape == xd.shape)
                         or type(od) is float)
                    and not (state.enabled and (
                        x._requires_grad or (type(other) is Tensor and other._requires_grad)
                        or (x._vc is not None and len(x._vc) > 1)))):
                # same dtype and shape (or a Python float, which keeps x's dtype): the
                # result is exactly what the out-of-place op gives, written in place.
                # (Two arrays that own their memory cannot overlap: an optimizer step's
                # p -= lr * p.grad skips the overlap check.)
                if check_operands and type(od) is tx and (
                        xd.base is not None or od.base is not None):
                    check_no_partial_overlap(xd, od, name)
                try:
                    if tx is _np.ndarray:
                        np_ufunc(xd, od, out=xd)
                    else:
                        getattr(namespace(xd), ufunc)(xd, od, out=xd)
                except ValueError:  # read-only (of an expanded tensor): the general path
                    pass
                else:
                    vc = x._vc
                    if vc is None:
                        x._vc = [1]
                        return x
                    if type(vc) is list and (len(vc) == 1 or _no_view_alive(vc)):
                        # (not inference; no view to re-derive: rebase_views would skip
                        # every group.  nn.Linear's weight.t() views die with the graph,
                        # and an optimizer step comes after backward)
                        vc[0] += 1
                        return x
                    x._bump_version()
                    if len(vc) > 1:
                        rebase_views(x, recorded=False)
                    return x
        if check_operands:
            _check_operands(x, args, kwargs, name)
        if name in _TENSOR_OTHER and args and not isinstance(args[0], Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__} (wrap it: retrograd.tensor(...))")
        if cast_first:
            _check_result_cast(x, args, name)
        wants = state.enabled and (
            x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                   for a in (*args, *kwargs.values()))
        )
        if wants and x._grad_fn is None and x._requires_grad:
            raise _leaf_error(x, name)
        if not wants and state.enabled:
            check_no_grad_view(x, name)
        if wants:
            floating = x._data.dtype.kind == "f"
            if floating:
                check_view_of_leaf(x, name)
            elif x._requires_grad and name != "copy_" and _ADOPTED and _adopted(x):
                # an integer or bool view adopted into its base's graph is a leaf to PyTorch
                # too, whatever the op records (seed 9148977; copy_ checks nothing)
                check_view_of_leaf(x, name)
            if not overlap_ok and not x._data.flags.writeable:
                check_writable(x, name)  # (PyTorch: before the kernel's dtype and shapes)
            if not floating and (x._requires_grad or _integer_requiring_grad(args, kwargs)):
                result = _on_integer(x, name, op_fn, saves_inputs, args, kwargs)
            else:
                result = op_fn(shadow_of(x, saves_inputs), *args, **kwargs)
            if not floating and result._requires_grad:
                # (an integer or bool target: PyTorch checks the view only where the op
                # records, as fill_ does and copy_ does not)
                check_view_of_leaf(x, name)
            if isinstance(result, Tensor) and not result._requires_grad:
                # nothing recorded (copy_ of a tensor that requires grad into an integer or
                # bool one: PyTorch's target stays a leaf that does not require grad)
                _write(x, result._data, name, overlap_ok)
                x._bump_version()
                rebase_views(x, recorded=False)
                return x
            _write(x, result._data, name, overlap_ok)
            old_fn, old_nr = x._grad_fn, x._nr
            node = x._grad_fn = result._grad_fn
            if node is not None and node.out_dtype != x._data.dtype:
                # computed in a wider dtype (a float32 tensor plus a float64 one): the gradient
                # arriving is the tensor's dtype, as PyTorch casts it (so a retained .grad
                # and a hook see float32)
                node.out_dtype = x._data.dtype
            x._requires_grad = result._requires_grad
            x._nr = 0
            # a view's own grad_fn becomes AsStridedBackward0 of its base's
            rebase_views(x)
            move_retain_grad(x, old_fn, old_nr)
            x._bump_version()
            _save_self_as_output(x, node)
            return x
        if not overlap_ok and not x._data.flags.writeable:
            check_writable(x, name)  # (an expanded bool tensor's floor_: seed 9612508)
        with no_grad():
            result = op_fn(x, *args, **kwargs)
        _write(x, result._data if isinstance(result, Tensor) else result, name, overlap_ok)
        x._bump_version()
        rebase_views(x, recorded=False)
        return x

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{name[:-1]}``."
    return method


def overlap_dispatch(plain, fill, when):
    """``plain`` (an in-place form refusing memory that overlaps itself), or ``fill`` (the
    same op written as a fill: only the elements it changes, so an expanded tensor's aliases
    all take the changed value) where ``when(x)``."""

    def method(x, *args, **kwargs):
        return (fill if when(x) else plain)(x, *args, **kwargs)

    method.__name__, method.__doc__ = plain.__name__, plain.__doc__
    return method


add_ = inplace(lambda x, other, alpha=1: pointwise.add(x, other, alpha=alpha), "add_", False,
               "add")
sub_ = inplace(lambda x, other, alpha=1: pointwise.sub(x, other, alpha=alpha), "sub_", False,
               "subtract")
mul_ = inplace(pointwise.mul, "mul_", True, "multiply")
div_ = inplace(pointwise.divide, "div_", True, "true_divide")
pow_ = inplace(pointwise.power, "pow_", True)
clamp_ = inplace(pointwise.clamp, "clamp_", True)
relu_ = inplace(pointwise.relu, "relu_", False)
neg_ = inplace(pointwise.neg, "neg_", False)
exp_ = inplace(pointwise.exp, "exp_", False)


def _more_inplace():
    """The in-place forms of the other elementwise ops.  ``saves_inputs``: the op's
    derivative reads its input, so the shadow must keep the values from before the change."""
    from . import binary, unary

    pw = pointwise
    table = {
        "abs_": (pw.abs, True), "sqrt_": (pw.sqrt, False), "log_": (pw.log, True),
        "sin_": (pw.sin, True), "cos_": (pw.cos, True), "tanh_": (pw.tanh, False),
        "sigmoid_": (pw.sigmoid, False), "sign_": (pw.sign, False),
        "reciprocal_": (pw.reciprocal, False), "log1p_": (unary.log1p, True),
        "expm1_": (unary.expm1, False), "rsqrt_": (unary.rsqrt, False),
        "square_": (unary.square, True), "floor_": (unary.floor, False),
        "ceil_": (unary.ceil, False), "round_": (unary.round, False),
        "trunc_": (unary.trunc, False), "remainder_": (pw.remainder, True),
        # what optimizers use (their derivatives do not read the tensor being changed,
        # except lerp's by a tensor weight and the clamps)
        "addcmul_": (binary.addcmul, False), "addcdiv_": (binary.addcdiv, False),
        "lerp_": (binary.lerp, True), "clamp_min_": (binary.clamp_min, True),
        "clamp_max_": (binary.clamp_max, True),
    }
    return {name: inplace(fn, name, saves) for name, (fn, saves) in table.items()}


MORE = _more_inplace()


def _fill_fwd(a, value):
    out = a.copy()
    out[...] = value
    return out


# PyTorch 2.13's names: FillBackward2 for a number, FillBackward3 for a 0-d tensor (whose
# gradient is the sum of the output's: the engine reduces the broadcast), ZeroBackward0; the
# overwritten tensor gets exact zeros (not g * 0: nan where g is inf or nan), as PyTorch
_zeros = pointwise.zeros_like_grad
_fill_op = pointwise.defop("fill", _fill_fwd, lambda node, g, saved: (_zeros(g),), "FillBackward2",
                           1, pointwise.NOTHING)
_fill_tensor_op = pointwise.defop(
    "fill", _fill_fwd,
    lambda node, g, saved: (_zeros(g) if node.next[0] else None, g if node.next[1] else None),
    "FillBackward3", 2, pointwise.NOTHING)
_zero_op = pointwise.defop("zero", lambda a: _fill_fwd(a, 0), lambda node, g, saved: (_zeros(g),),
                           "ZeroBackward0", 1, pointwise.NOTHING)
_fill_tensor_op.op.node_cls.any_dtype = True  # (see _refused above)
_fill_number = inplace(_fill_op, "fill_", False, overlap_ok=True)
_fill_tensor = inplace(_fill_tensor_op, "fill_", False)


def fill_(x, value):
    """Fill with ``value`` (a number or a 0-d tensor) in place."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions (shape {list(value.shape)}); use copy_ to write a "
                "tensor of values"
            )
        return _fill_tensor(x, value)
    return _fill_number(x, value)


zero_ = inplace(_zero_op, "zero_", False, overlap_ok=True)
zero_.__doc__ = "Fill with zeros in place (``x.grad.zero_()``, ``x.grad.data.zero_()``)."


def _copy_fwd(a, src):
    xp_src = src
    out = a.copy()
    out[...] = xp_src
    return out


def _copy_vjp(node, g, saved):
    # the overwritten tensor gets exact zeros (PyTorch's zeros_like(grad)), not g * 0: nan
    # where g is nan (seed 9127822)
    na, ns = node.next
    return (pointwise.zeros_like_grad(g) if na else None, g if ns else None)


_copy_op = pointwise.defop("copy", _copy_fwd, _copy_vjp, "CopyBackwards", 2, pointwise.NOTHING)
_copy_other = inplace(_copy_op, "copy_", False)
# PyTorch's copy_ returns at once when the source is the tensor itself, before checking for
# elements sharing memory (an expanded tensor copied onto itself: seed 9630941); the version
# still moves and the op is recorded
_copy_itself = inplace(_copy_op, "copy_", False, overlap_ok=True)


def copy_(x, *args, **kwargs):
    """Copy the elements of ``src`` into ``x`` (broadcast to its shape, cast to its dtype)."""
    return (_copy_itself if args and args[0] is x else _copy_other)(x, *args, **kwargs)



# ----------------------------------------------------------------- issue 6's two-input ops


def _binary_inplace():
    from . import binary

    table = {"copysign_": (binary.copysign, True), "fmod_": (binary.fmod, True),
             "ldexp_": (binary.ldexp, True), "nextafter_": (binary.nextafter, False),
             "true_divide_": (binary.true_divide, True)}
    out = {name: inplace(fn, name, saves) for name, (fn, saves) in table.items()}
    power_ = inplace(binary.float_power, "float_power_", True)

    def float_power_(x, exponent):
        # the result is float64, and an in-place form cannot change the dtype (PyTorch)
        if x._data.dtype != "float64":
            name = pointwise.scalar_type_name(x._data.dtype)
            raise RuntimeError(
                f"the base given to float_power_ has dtype {name}"
                " but the operation's result requires dtype Double (convert it first with "
                "x.double())")
        return power_(x, exponent)

    out["float_power_"] = float_power_
    return out


BINARY_INPLACE = _binary_inplace()


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn, _iop in ((add_, "__iadd__"), (sub_, "__isub__"), (mul_, "__imul__"),
                  (div_, "__itruediv__")):
    register(_fn, function=False, dunders=(_iop,), inplace_of=_fn.__name__[:-1])
register(pow_, function=False, inplace_of="pow")
for _fn in (clamp_, relu_, neg_, exp_, *MORE.values()):
    register(_fn, function=False, inplace_of=_fn.__name__[:-1])
for _fn in (zero_, fill_, copy_):
    register(_fn, function=False)
for _name, _fn in BINARY_INPLACE.items():  # torch.ldexp_ is also a function
    register(_fn, _name, function=_name == "ldexp_", inplace_of=_name[:-1])
