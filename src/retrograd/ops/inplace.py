"""In-place ops (``add_``, ``mul_``, ``zero_``, ``copy_``...): version counting and rebasing.

An in-place op computes its result with the out-of-place op, writes it into the
tensor's own array (so views and ``.data`` aliases see it), bumps the version counter, and
makes the tensor's grad_fn the new node.  The node's input is a *shadow* holding the
tensor's previous graph position (and, if the op saves its inputs, the previous values).

The other tensors sharing that memory follow, as in PyTorch: when a view is changed its
base's grad_fn becomes a CopySlices node (the old base with the view's region replaced),
and every other view that records a graph is re-derived from the base's new grad_fn
(AsStridedBackward0), so gradients through a view taken earlier see the change too.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad, state
from ..autograd.graph import SavedOutput, move_retain_grad
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from . import pointwise
from ._apply import OUTPUT, apply_op, defop


def shadow_of(x, keep_values: bool):
    """A stand-in for ``x`` as it was before an in-place change."""
    s = make_tensor(x._data.copy() if keep_values else x._data, x._grad_fn)
    s._requires_grad = x._requires_grad
    s._nr = x._nr
    s._acc = x._acc
    return s


# ----------------------------------------------------------------- views of changed memory


def _address(a) -> int:
    try:
        return a.__array_interface__["data"][0]
    except AttributeError:  # CuPy
        return a.data.ptr


def _positions(base, view):
    """For each element of ``view`` (an array into ``base``'s memory), its C-order flat
    index in ``base``; None where that cannot be worked out (a base that is not dense)."""
    if not base.flags.c_contiguous or base.size == 0:
        return None
    item = base.itemsize
    start = _address(view) - _address(base)
    if start % item or any(s % item for s in view.strides):
        return None
    xp = namespace(base)
    flat = xp.arange(base.size)
    return xp.array(xp.lib.stride_tricks.as_strided(
        flat[start // item:], view.shape, tuple(s // item * flat.itemsize for s in view.strides)))


def _as_strided_vjp(node, g, saved):
    from .index import _index_backward
    from .shape import reshape_op

    positions, _, base_shape = node.params
    size = 1
    for s in base_shape:
        size *= s
    return (reshape_op(_index_backward(g, positions, (size,), False), base_shape, (size,)),)


# a view re-derived from its base's new grad_fn; the forward hands back the view's own array
_as_strided = defop("as_strided", lambda base, positions, data, base_shape: data,
                    _as_strided_vjp, "AsStridedBackward0", 1)


def _copy_slices_vjp(node, g, saved):
    from .index import _setitem_op, getitem_op
    from .shape import reshape_op

    positions, base_shape = node.params
    n_old, n_src = node.next
    size = 1
    for s in base_shape:
        size *= s
    flat = reshape_op(g, (size,), base_shape)
    g_old = g_src = None
    if n_old:  # the old base keeps its gradient outside the view's region
        g_old = reshape_op(_setitem_op(flat, 0.0, positions, False), base_shape, (size,))
    if n_src:
        g_src = getitem_op(flat, positions, (size,), False)
    return (g_old, g_src)


_copy_slices = defop("copy_slices", lambda old, src, positions, base_shape: old,
                     _copy_slices_vjp, "CopySlices", 2)


def _group_base(x):
    vc = x._vc
    if vc is None or len(vc) < 2:
        return None
    base = vc[1].base()
    return base if base is not None and base._vc is vc else None


def check_view_of_leaf(x, name):
    """PyTorch refuses an in-place change of a view of a leaf that requires grad, and of an
    output of split/chunk/unbind (functions that return several views)."""
    fn = x._grad_fn
    if fn is not None and getattr(fn, "multi_view", False):
        op = fn.name().replace("WithSizes", "").replace("Backward0", "")
        raise RuntimeError(
            f"Output {x._nr} of {op} is a view and is being modified inplace ({name}). This "
            "view is the output of a function that returns multiple views. Such functions do "
            "not allow the output views to be modified inplace. You should replace the "
            "inplace operation by an out-of-place one (or clone() the output first)."
        )
    base = _group_base(x)
    if base is not None and base is not x and base._grad_fn is None and base._requires_grad:
        raise RuntimeError(
            f"a view of a leaf Variable that requires grad is being used in an in-place "
            f"operation ({name} on a view of shape {list(x.shape)} of a leaf of shape "
            f"{list(base.shape)}). Do it under `with retrograd.no_grad():`, or clone() the "
            "leaf first."
        )


def rebase_views(x):
    """After ``x`` got a new grad_fn from an in-place op, update the tensors sharing its
    memory: its base (CopySlices) if ``x`` is a view, and every other tracked view."""
    base = _group_base(x)
    if base is None:
        return
    if x is not base:
        pos = _positions(base._data, x._data)
        if pos is None:
            return
        new = apply_op(_copy_slices.op, (shadow_of(base, False), x), (pos, tuple(base.shape)))
        base._grad_fn = new._grad_fn
        base._requires_grad = True
        base._nr = 0
    for v in x._vc[1].views:
        if v is x or v is base or v._vc is not x._vc:
            continue
        pos = _positions(base._data, v._data)
        if pos is not None:
            new = apply_op(_as_strided.op, (base,), (pos, v._data, tuple(base.shape)))
            v._grad_fn = new._grad_fn
            v._requires_grad = True
            v._nr = 0


def _leaf_error(x, name):
    return RuntimeError(
        f"a leaf Variable that requires grad is being used in an in-place operation ({name} "
        f"on a leaf of shape {list(x.shape)}). Modify it under `with retrograd.no_grad():` "
        "(e.g. an optimizer step or an initialisation), or use the out-of-place op."
    )


def _write(x, data, name):
    target = x._data
    if data.dtype != target.dtype:
        if target.dtype.kind != "f" and data.dtype.kind == "f" or (
            target.dtype.kind == "b" and data.dtype.kind != "b"
        ):
            raise RuntimeError(
                f"result type {pointwise.scalar_type_name(data.dtype)} can't be cast to the "
                f"desired output type {pointwise.scalar_type_name(target.dtype)} in {name} (the "
                f"tensor is {x.dtype}); use the out-of-place op or convert the tensor first"
            )
    if data.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(data.shape)} in {name}; an in-place op cannot change the tensor's shape"
        )
    target[...] = data


def _save_self_as_output(x):
    """An in-place op that saves its result saves ``x`` itself, at its new version (as
    PyTorch): a later in-place change of ``x`` is then an error at backward, not a silent
    use of a private copy."""
    node = x._grad_fn
    saved = getattr(node, "saved", None)
    if not saved or not getattr(type(node), "saves", 0) & OUTPUT:
        return
    node.saved = tuple(SavedOutput(x._data, x._vc) if type(s) is SavedOutput else s
                       for s in saved)


def inplace(op_fn, name, saves_inputs, ufunc=None):
    """Make ``x.name_(other)`` from the out-of-place ``op_fn``.

    ``ufunc`` names the array function (``"subtract"``) that can write the result straight
    into ``x``'s array when nothing is recorded: an optimizer step ``p -= lr * p.grad``
    under no_grad then costs one array pass instead of a temporary, a copy and the op's
    promotion checks (bench/ (e): -16 us a step).
    """

    def method(x, *args, **kwargs):
        if ufunc is not None and len(args) == 1 and not kwargs:
            other = args[0]
            xd = x._data
            od = other._data if type(other) is Tensor else other
            if (xd.dtype.kind == "f"
                    and (type(od) is float
                         or (type(od) is type(xd) and od.dtype == xd.dtype
                             and od.shape == xd.shape))
                    and not (state.enabled and (
                        x._requires_grad or (type(other) is Tensor and other._requires_grad)))):
                # same dtype and shape (or a Python float, which keeps x's dtype): the
                # result is exactly what the out-of-place op gives, written in place
                getattr(namespace(xd), ufunc)(xd, od, out=xd)
                x._bump_version()
                return x
        wants = state.enabled and (
            x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                   for a in (*args, *kwargs.values()))
        )
        if wants and x._grad_fn is None and x._requires_grad:
            raise _leaf_error(x, name)
        if wants:
            check_view_of_leaf(x, name)
            result = op_fn(shadow_of(x, saves_inputs), *args, **kwargs)
            _write(x, result._data, name)
            old_fn, old_nr = x._grad_fn, x._nr
            x._grad_fn = result._grad_fn
            x._requires_grad = result._requires_grad
            x._nr = 0
            move_retain_grad(x, old_fn, old_nr)
            rebase_views(x)
            x._bump_version()
            _save_self_as_output(x)
            return x
        with no_grad():
            result = op_fn(x, *args, **kwargs)
        _write(x, result._data if isinstance(result, Tensor) else result, name)
        x._bump_version()
        return x

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{name[:-1]}``."
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
# gradient is the sum of the output's: the engine reduces the broadcast), ZeroBackward0
_fill_op = pointwise.defop("fill", _fill_fwd, lambda node, g, saved: (g * 0,), "FillBackward2",
                           1, pointwise.NOTHING)
_fill_tensor_op = pointwise.defop(
    "fill", _fill_fwd,
    lambda node, g, saved: (g * 0 if node.next[0] else None, g if node.next[1] else None),
    "FillBackward3", 2, pointwise.NOTHING)
_zero_op = pointwise.defop("zero", lambda a: _fill_fwd(a, 0), lambda node, g, saved: (g * 0,),
                           "ZeroBackward0", 1, pointwise.NOTHING)
_fill_number = inplace(_fill_op, "fill_", False)
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


zero_ = inplace(_zero_op, "zero_", False)
zero_.__doc__ = "Fill with zeros in place (``x.grad.zero_()``, ``x.grad.data.zero_()``)."


def _copy_fwd(a, src):
    xp_src = src
    out = a.copy()
    out[...] = xp_src
    return out


def _copy_vjp(node, g, saved):
    na, ns = node.next
    return (g * 0 if na else None, g if ns else None)


_copy_op = pointwise.defop("copy", _copy_fwd, _copy_vjp, "CopyBackwards", 2, pointwise.NOTHING)
copy_ = inplace(_copy_op, "copy_", False)


# ----------------------------------------------------------------- x[index] = value
# (here, not in index.py: an assignment is an in-place change, and needs the view machinery)
from .index import _index_put_op, _is_basic, _setitem_op, _unwrap_index  # noqa: E402


def setitem(x, index, value):
    """``x[index] = value`` in place; recorded (CopySlices) when a gradient is needed."""
    index = _unwrap_index(index)
    basic = _is_basic(index)
    v_is_t = isinstance(value, Tensor)
    wants = state.enabled and (x._requires_grad or (v_is_t and value._requires_grad))
    if wants and x._grad_fn is None and x._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation "
            f"(x[{index!r}] = ... on a leaf of shape {list(x.shape)}). Wrap it in "
            "`with retrograd.no_grad():` if this is an initialisation, or clone() it first."
        )
    vdata = value._data if v_is_t else value
    if wants:
        check_view_of_leaf(x, "x[...] = value")
        op = _setitem_op if basic else _index_put_op
        new = apply_op(op.op, (shadow_of(x, False), value), (index, basic))
        x._data[index] = new._data[index]
        old_fn, old_nr = x._grad_fn, x._nr
        x._grad_fn = new._grad_fn
        x._requires_grad = True
        x._nr = 0
        move_retain_grad(x, old_fn, old_nr)
        rebase_views(x)
    else:
        try:
            x._data[index] = vdata
        except (ValueError, IndexError) as e:
            # PyTorch raises RuntimeError("shape mismatch: ...") for a value that can't broadcast
            if "broadcast" in str(e):
                raise RuntimeError(f"shape mismatch: {e} (assigning into a tensor of shape "
                                   f"{list(x.shape)})") from None
            raise type(e)(f"{e} (assigning into a tensor of shape {list(x.shape)})") from None
    x._bump_version()


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

register(setitem, function=False, method=False, dunders=("__setitem__",))
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
