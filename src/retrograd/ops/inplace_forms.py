"""More in-place forms (``tan_``, ``atan2_``, ``eq_``, ``tril_``, ``x &= y``...): the ``_``
form PyTorch has of every op the other modules define, made as ``inplace.py`` makes
``add_`` (the out-of-place op's result written into the tensor, one version further, the
op's node its grad_fn, views following) and registered as their in-place forms.

Imported last by ``ops/__init__`` (the bitwise ops it defines are looked up in the
registry, not imported from it).  Two kinds of op need a node of their own:

* comparisons: ``eq`` records nothing, but PyTorch's ``y.eq_(b)`` on a tensor in a graph
  records EqBackward0 (a number) / EqBackward1 (a tensor), whose gradient is zero for both;
* ``floor_divide``: PyTorch records a node that refuses backward (``NotImplemented``).

``logical_not_`` records nothing at all in PyTorch 2.13 (the grad_fn stays what it was, even
on a leaf that requires grad): the same here.
"""

from __future__ import annotations

from ..autograd.forward_state import fw, set_tangent, tangent_of
from ..autograd.grad_mode import no_grad, state
from ..autograd.leaf_layout import note_inplace_view
from ..tensor import Tensor
from . import binary, layout, linear, pointwise, shape, stats, unary
from ._apply import apply_op, defop
from ._errors import scalar_type_name
from .changed_views import _leaf_error, _write, check_view_of_leaf, rebase_views, shadow_of
from .inplace import clamp_, inplace, MORE, overlap_dispatch, pow_
from .registry import entry, register
from .scans import bool_scan_guard, inplace_scan


def _sample(*args):
    return args[-1]  # the values, computed before the node is made (a param)


def _zero_vjp(node, g, saved):
    # PyTorch (derivatives.yaml): eq_ and friends: zeros_like for self and other
    # (exact zeros recording nothing, not g * 0: see pointwise.zeros_like_grad)
    return tuple(pointwise.zeros_like_grad(g) if n is not None else None for n in node.next)


def _not_implemented_vjp(node, g, saved):
    raise RuntimeError(f"derivative for aten::{node.params[0]} is not implemented")


def _recorded_as(name, fn, backward_number, backward_tensor, vjp=_zero_vjp, label=None):
    """``fn``'s values under a node of PyTorch's name (one for a number ``other``, one for a
    tensor), so that the in-place form records what PyTorch records."""
    one = defop(name, _sample, vjp, backward_number, 1).op
    two = defop(name, _sample, vjp, backward_tensor, 2).op

    def op_fn(x, other):
        with no_grad():
            values = fn(x, other)._data
        if values.dtype.kind == "b" and x._data.dtype.kind != "b":
            values = values.astype(x._data.dtype)  # as it will be written (and a float records)
        params = (values,) if label is None else (label, values)
        if isinstance(other, Tensor):
            return apply_op(two, (x, other), params)
        return apply_op(one, (x,), params)

    op_fn.__name__ = name
    return op_fn


def _comparison_(name):
    cap = name.capitalize()
    return inplace(_recorded_as(name, getattr(pointwise, name), f"{cap}Backward0",
                                f"{cap}Backward1"), f"{name}_", False)


COMPARISONS = {f"{n}_": _comparison_(n) for n in ("eq", "ne", "lt", "le", "gt", "ge")}

_floor_divide_recorded = _recorded_as("floor_divide", pointwise.floor_divide, "NotImplemented",
                                      "NotImplemented", _not_implemented_vjp, "floor_divide_")
ifloordiv = inplace(_floor_divide_recorded, "floor_divide_", False)


def logical_not_(x):
    """In-place ``logical_not`` (1 where x is 0, else 0, in x's dtype).  As PyTorch 2.13, it
    is not recorded: x keeps its grad_fn (and a leaf may be changed)."""
    with no_grad():
        values = pointwise.logical_not(x)._data
    _write(x, values, "logical_not_")
    x._bump_version()
    rebase_views(x, recorded=False)
    return x


# (name, the out-of-place op, whether its derivative reads the input before the change)
_ELEMENTWISE = [
    ("log2_", unary.log2, True), ("log10_", unary.log10, True), ("exp2_", unary.exp2, True),
    ("tan_", unary.tan, True), ("atan_", unary.atan, True), ("asin_", unary.asin, True),
    ("acos_", unary.acos, True), ("sinh_", unary.sinh, True), ("cosh_", unary.cosh, True),
    ("frac_", unary.frac, False), ("erf_", unary.erf, True), ("erfc_", unary.erfc, True),
    ("atan2_", binary.atan2, True), ("hypot_", binary.hypot, True),
    ("xlogy_", binary.xlogy, True),
    # same shape out as in: tril/triu/cumsum, and addmm (whose input is only scaled)
    ("tril_", layout.tril, False), ("triu_", layout.triu, False),
    ("cumsum_", inplace_scan(stats.cumsum, "cumsum_"), False), ("addmm_", linear.addmm, False),
]
ELEMENTWISE = {name: inplace(fn, name, saves) for name, fn, saves in _ELEMENTWISE}
ELEMENTWISE["cumsum_"] = bool_scan_guard(ELEMENTWISE["cumsum_"], stats.cumsum, "cumsum_out_cpu")


def _tril_writes_in_place(x):
    """PyTorch's checkTrilTriuBatchContiguous: whether tril_/triu_ zero the elements outside
    the triangle right in the tensor's memory (then an expanded tensor is allowed: every
    alias of a zeroed element becomes 0) or go through a contiguous copy, whose copy_ back
    refuses an expanded one (seed 12598053).  In place: a contiguous tensor, one of at most 3
    dims, or one whose batch dims are laid out as contiguous matrices one after another, the
    first batch dim skipped where its stride is 0 or its size 1 (seed 21265829: [2, 3, 2, 1]
    expanded along dim 0)."""
    d = x._data
    if d.ndim <= 3 or d.size == 0 or d.flags.c_contiguous:
        return True
    shape, strides = d.shape, [s // d.itemsize for s in d.strides]
    expected = shape[-1] * shape[-2]
    for i in range(d.ndim - 3, -1, -1):
        if i == 0 and (strides[0] == 0 or shape[0] == 1):
            continue
        if strides[i] != expected:
            return False
        expected *= shape[i]
    return True


for _name, _fn in (("tril_", layout.tril), ("triu_", layout.triu)):
    ELEMENTWISE[_name] = overlap_dispatch(ELEMENTWISE[_name], inplace(_fn, _name, False,
                                                                      overlap_ok=True),
                                          _tril_writes_in_place)
_ALIASES = {"atan_": ("arctan_",), "asin_": ("arcsin_",), "acos_": ("arccos_",)}


def _bitwise():
    """The in-place bitwise ops (ops/__init__ defines them, before importing this module)."""
    fns = {name: entry(name).fn for name in ("bitwise_not", "bitwise_xor")}
    invert = fns["bitwise_not"]

    def bitwise_not(x):
        float_only_not(x)  # PyTorch: NotImplementedError (~x's TypeError is the operator's)
        return invert(x)

    fns["bitwise_not"] = bitwise_not
    fns["bitwise_and"] = pointwise.bitwise_and
    fns["bitwise_or"] = pointwise.bitwise_or
    from . import registry

    shifts = {e.key: e.fn for e in registry.entries() if e.key in ("bitwise_left_shift",
                                                                  "bitwise_right_shift")}
    fns.update(shifts)
    return {f"{name}_": inplace(fn, f"{name}_", False) for name, fn in fns.items()}


def float_only_not(x):
    if x._data.dtype.kind == "f":
        raise NotImplementedError(
            f"\"bitwise_not_cpu\" not implemented for '{scalar_type_name(x._data.dtype)}': "
            "bitwise_not_() takes an integer or bool tensor")


BITWISE = _bitwise()

# ----------------------------------------------------------------- in-place view ops
# t_, transpose_, squeeze_, unsqueeze_ change the tensor's own shape (its array becomes the
# out-of-place op's view of the same memory); the values stay, the version goes one
# further, and in a graph the grad_fn becomes PyTorch's node for the in-place form, whose
# derivative undoes the shape change.  The tensor's views keep their graph (their values
# did not change).


def _view_back(node, g, saved):
    _, in_shape, swapped = node.params
    if swapped is not None:  # a transposition: swap back
        return (shape.transpose_op(g, *swapped),)
    return (shape.reshape_op(g, in_shape, tuple(g.shape)),)


def _view_node(backward):
    return defop(backward, lambda a, data, in_shape, swapped: data, _view_back, backward, 1).op


def _inplace_view(name, make, pick):
    """``x.name(*args)`` as ``make`` (the out-of-place view op, which checks the arguments
    as PyTorch) done to ``x`` itself; ``pick(x, args) -> (node, swapped dims or None)``."""

    def method(x, *args):
        old = x._grad_fn
        recorded = state.enabled and x._requires_grad
        if recorded:  # (PyTorch's autograd checks come before the op's own: seed 12522982)
            if x._grad_fn is None:
                raise _leaf_error(x, name)
            check_view_of_leaf(x, name)
        with no_grad():
            view = make(x, *args)
        data = view._data
        if recorded:
            node_op, swapped = pick(x, args)
            try:
                new = apply_op(node_op, (shadow_of(x, False),), (data, tuple(x.shape), swapped))
            except RuntimeError:
                if x._data.dtype.kind != "f":
                    # an integer tensor requiring grad ('Autograd not support dtype'): PyTorch
                    # changes its shape and version before its autograd wrapper refuses the
                    # record, and keeps its grad_fn (seed 12533187)
                    x._data = data
                    x._bump_version()
                raise
            x._grad_fn = new._grad_fn
            x._nr = 0
            # no move_retain_grad: PyTorch's in-place view ops set the new grad_fn without
            # moving a retain_grad hook, so .grad stays the gradient of the value before
            # the op, in its old shape (fuzz seeds 11005484, 11040102)
        before = x._data
        x._data = data
        x._bump_version()
        if x._grad_fn is None and data.dtype.kind in "fc":
            # a leaf's (or a future leaf's) strides as PyTorch's, for its AccumulateGrad
            note_inplace_view(x, name, args, before, data)
        if not recorded and getattr(old, "result_is_view", False):
            _rederive_product_view(x, before, data)
        # PyTorch counts the metadata change as a write: the other tensors sharing the memory
        # are re-derived (AsStridedBackward0, or refused: a view made under no_grad), and so
        # is ``x`` if it is a view and nothing was recorded (fuzz seeds 9951204, 9951218)
        rebase_views(x, recorded=False, keep=x if x._grad_fn is not old else None)
        if fw.active and tangent_of(view) is not None:
            set_tangent(x, tangent_of(view))  # forward AD: the same view of the tangent
        return x

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{name[:-1]}`` (changes the tensor's shape)."
    return method


def _rederive_product_view(x, before, data):
    """``x`` is a product that PyTorch returns as a view of a tensor it never shows (a 2-D
    by N-D matmul: the transpose of its folded product, grad_fn TransposeBackward0), whose
    shape an in-place view op under no_grad changed: PyTorch re-derives such a view's
    grad_fn from its base (AsStridedBackward0), so the gradient of the new shape goes back
    to the product's node in the old one (seed 15114207).  retrograd's product is one node
    and no view: the old value stands in for the base."""
    from ..autograd.grad_mode import enable_grad
    from .changed_views import _as_strided, _positions

    src = shadow_of(x, False)
    src._data = before
    with enable_grad():
        new = apply_op(_as_strided.op, (src,), (_positions(before, data), data,
                                                tuple(before.shape)))
    x._grad_fn = new._grad_fn
    x._nr = 0


def _swapped(x, d0, d1):
    n = x._data.ndim
    return (shape._norm_dim(d0, n), shape._norm_dim(d1, n)) if n else None


_T1, _TRANSPOSE1 = _view_node("TBackward1"), _view_node("TransposeBackward1")
_SQUEEZE = {k: _view_node(f"SqueezeBackward{k}") for k in (3, 4, 5)}
_UNSQUEEZE1 = _view_node("UnsqueezeBackward1")

t_ = _inplace_view("t_", shape.t, lambda x, a: (_T1, (0, 1) if x._data.ndim == 2 else None))
transpose_ = _inplace_view("transpose_", shape.transpose,
                           lambda x, a: (_TRANSPOSE1, _swapped(x, *a)))
swapaxes_ = _inplace_view("swapaxes_", shape.transpose,
                          lambda x, a: (_TRANSPOSE1, _swapped(x, *a)))
squeeze_ = _inplace_view("squeeze_", shape.squeeze, lambda x, a: (
    _SQUEEZE[3 if not a else 5 if len(a) > 1 or hasattr(a[0], "__len__") else 4], None))
unsqueeze_ = _inplace_view("unsqueeze_", shape.unsqueeze, lambda x, a: (_UNSQUEEZE1, None))

# ----------------------------------------------------------------- public names (registry.py)
for _name, _fn in {**COMPARISONS, **ELEMENTWISE}.items():
    register(_fn, function=False, aliases=_ALIASES.get(_name, ()), inplace_of=_name[:-1])
register(logical_not_, function=False, inplace_of="logical_not")
register(clamp_, "clip_", function=False)  # clamp_'s alias (as clip is clamp's)
for _fn in (t_, transpose_, squeeze_, unsqueeze_):
    register(_fn, function=False, inplace_of=_fn.__name__[:-1])
register(swapaxes_, function=False, aliases=("swapdims_",), inplace_of="swapaxes")
register(BITWISE["bitwise_not_"], function=False, inplace_of="bitwise_not")
register(BITWISE["bitwise_xor_"], function=False, dunders=("__ixor__",),
         inplace_of="bitwise_xor")
# PyTorch's in-place operators (x &= y ... x //= y): without them Python would rebind the
# name to a new tensor, and the other names of the tensor, and its views, would not change
register(BITWISE["bitwise_and_"], "__iand__", function=False, method=False,
         dunders=("__iand__",))
register(BITWISE["bitwise_or_"], "__ior__", function=False, method=False, dunders=("__ior__",))
register(BITWISE["bitwise_left_shift_"], "__ilshift__", function=False, method=False,
         dunders=("__ilshift__",))
register(BITWISE["bitwise_right_shift_"], "__irshift__", function=False, method=False,
         dunders=("__irshift__",))
register(ifloordiv, "__ifloordiv__", function=False, method=False, dunders=("__ifloordiv__",))
register(MORE["remainder_"], "__imod__", function=False, method=False, dunders=("__imod__",))
register(pow_, "__ipow__", function=False, method=False, dunders=("__ipow__",))
