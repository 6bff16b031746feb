"""``x[index] = value`` (``Tensor.__setitem__``): an in-place change, recorded as CopySlices.

(Here, not in index.py: an assignment is an in-place change, and needs the view machinery of
changed_views.py and the in-place ``copy_``/``fill_`` of inplace.py.)
"""

from __future__ import annotations

from ..autograd.forward_state import fw, set_tangent, tangent_of
from ..autograd.grad_mode import state
from ..autograd.graph import NO_EDGE, move_retain_grad

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from . import pointwise
from ._apply import apply_op, defop
from .changed_views import (
    _RELEASED_BY_BACKWARD, _leaf_error, _overlapping, check_no_grad_view,
    check_no_partial_overlap, check_view_of_leaf, rebase_views, shadow_of, writable_target,
)
from .inplace import _fill_tensor, _has_tangent, copy_


# ----------------------------------------------------------------- x[index] = value
# (here, not in index.py: an assignment is an in-place change, and needs the view machinery)
from .index import (  # noqa: E402
    _alias, _basic_op, _getitem_fwd, _index_put_op, _is_basic, _setitem_fwd, _setitem_op,
    _unwrap_index, check_index_tensors, getitem, index_tensors, setitem_split, write_at,
)
from .saved_checks import check_also  # noqa: E402

_setitem_op.op.node_cls.any_dtype = True  # CopySlices, as _copy_slices (see _refused)
_index_put_op.op.node_cls.any_dtype = True


def _expanded_base_vjp(node, g, saved):
    raise RuntimeError(
        "unsupported operation: more than one element of the written-to tensor refers to a "
        f"single memory location: x[...] = value recorded on an expanded tensor of shape "
        f"{list(node.out_shape)} cannot be differentiated (CopySlices copies the gradient into "
        "a tensor of its layout). Please clone() the tensor before performing the operation.")


# x[basic] = value on a tensor whose elements share memory (an expanded tensor's detached
# alias): PyTorch's CopySlices first copies the gradient into an empty tensor of that
# layout, which refuses, so its backward always raises (seed 15089313)
_setitem_expanded = defop("setitem", _setitem_fwd, _expanded_base_vjp, "CopySlices", 2,
                          pointwise.NOTHING, "same")
_setitem_expanded.op.node_cls.any_dtype = True


def _is_view(x) -> bool:
    vc = x._vc
    if vc is None or len(vc) < 2:
        return False
    group = vc[1].group_of(x)
    return group is not None and group.base() is not x


def _only_masks(index) -> bool:
    """An advanced index whose index arrays are all bool (masks)."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [i for i in items if getattr(i, "dtype", None) is not None]
    return bool(arrays) and all(i.dtype.kind == "b" for i in arrays)


def setitem(x, index, value):
    """``x[index] = value`` in place; recorded (CopySlices) when a gradient is needed."""
    if fw.active and _has_tangent(x, (value,), {}):
        # forward AD: the tangent gets the same assignment (of the value's tangent, or 0)
        fw.active = False
        try:
            setitem(x, index, value)
            tangent = tangent_of(x)
            if tangent is None:
                tangent = make_tensor(namespace(x._data).zeros_like(x._data))
                set_tangent(x, tangent)
            vt = tangent_of(value) if isinstance(value, Tensor) else None
            setitem(tangent, index, 0.0 if vt is None else vt)
        finally:
            fw.active = True
        return
    given = index
    index = _unwrap_index(index)
    basic = _is_basic(index)
    if not basic:
        check_index_tensors(index, tuple(x.shape))
    split = None if basic else setitem_split(given, index, tuple(x.shape))
    if split is not None:  # PyTorch's order: the basic part's view first (CopySlices)
        view_index, rest = split
        if rest is None:
            return setitem(x, view_index, value)
        return setitem(getitem(x, view_index), rest, value)
    v_is_t = isinstance(value, Tensor)
    wants = state.enabled and (x._requires_grad or (v_is_t and value._requires_grad))
    if wants and x._grad_fn is None and x._requires_grad:
        if x._acc is NO_EDGE:
            raise _leaf_error(x, "x[...] = value")
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation "
            f"(x[{index!r}] = ... on a leaf of shape {list(x.shape)}). Wrap it in "
            "`with retrograd.no_grad():` if this is an initialisation, or clone() it first."
        )
    vdata = value._data if v_is_t else value
    if v_is_t and value.ndim and basic:  # (a 0-d value is a fill: not checked, as PyTorch)
        check_no_partial_overlap(_getitem_fwd(x._data, index, None, True) if x._data.ndim
                                 else x._data, vdata, "x[...] = value")
    elif v_is_t and not basic and not (value.ndim == 0 and _only_masks(index)):
        check_no_partial_overlap(x._data, vdata, "x[index] = value")  # (index_put_)
    # x[mask] = v is a fill, which PyTorch lets write through an expanded tensor
    # into an expanded tensor (elements sharing memory), PyTorch writes what does not repeat
    # an element: a basic index's region that does not, or any advanced index (index_put_,
    # with a deprecation warning)
    if basic:
        name = "x[...] = value"
        region = _getitem_fwd(x._data, index, None, True) if x._data.ndim else x._data
        overlap_ok = not any(s == 0 and n > 1 for n, s in zip(region.shape, region.strides))
    else:
        is_mask = getattr(index, "dtype", None) is not None and index.dtype.kind == "b"
        scalar = not v_is_t or value.ndim == 0
        name = "x[mask] = scalar" if is_mask and scalar else "x[mask] = value"
        overlap_ok = True
    if not basic and v_is_t and value._data.dtype != x._data.dtype and not (
            value.ndim == 0 and _only_masks(index)):
        # PyTorch's index_put_ (only x[mask] = 0-d tensor is masked_fill_, which casts)
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{pointwise.scalar_type_name(x._data.dtype)} for the destination and "
            f"{pointwise.scalar_type_name(value._data.dtype)} for the source. (x[{index!r}] = "
            f"value of shape {list(value.shape)}: convert the value with .to(x.dtype) first)")
    if wants and basic and x._data.dtype.kind != "f" and x._requires_grad and (
            x._data.ndim and _basic_op(index if isinstance(index, tuple) else (index,),
                                       tuple(x.shape)) is not _alias):
        # an integer or bool tensor that requires grad: PyTorch's x[index] (a view of it)
        # refuses to record (ops/_apply.integer_grad)
        raise RuntimeError(
            f"Autograd not support dtype: {pointwise.scalar_type_name(x._data.dtype)} "
            f"(x[{index!r}] = ... of an integer or bool tensor that requires grad; detach() "
            "it or convert it to a float first)")
    if wants and basic and x._data.dtype.kind != "f" and not (
            (not v_is_t or value.ndim == 0) and region.shape != ()):
        # into an integer or bool tensor PyTorch's copy_ records nothing (its fill_ by a 0-d
        # tensor, and index_put_, do: see _fill_tensor_op; a number is a 0-d tensor there:
        # seeds 15120006, 15127374)
        wants = False
    target = writable_target(x, name, overlap_ok)
    if not wants and state.enabled:
        check_no_grad_view(x, "x[...] = value")
    whole = basic and _basic_op(index if isinstance(index, tuple) else (index,),
                                tuple(x.shape)) is _alias
    if wants and basic and (whole or _is_view(x)):
        # as PyTorch: x[index] is a view of x (x itself where the index selects all of it),
        # written with copy_, or with fill_ for a 0-d value (a number is one) of another
        # shape; the view's base then records the change (CopySlices).  (Into a tensor that
        # is not a view, the one CopySlices node below does the same, faster.)
        # (x[i] = v writes a view taken now, not x: an adopted x is no matter)
        check_view_of_leaf(x, "x[...] = value", adopted=whole)
        view = x if whole else getitem(x, index)
        if not v_is_t:
            value = make_tensor(namespace(x._data).asarray(value, dtype=x._data.dtype))
        try:
            if value.ndim == 0 and view.ndim:
                _fill_tensor(view, value)
            else:
                copy_(view, value)
        except ValueError as e:  # a value that does not broadcast to the region
            raise RuntimeError(f"shape mismatch: {e} (assigning a value of shape "
                               f"{list(value.shape)} into x[{index!r}] of shape "
                               f"{list(view.shape)})") from None
        return
    if wants:
        check_view_of_leaf(x, "x[...] = value")
        op = (_index_put_op if not basic else _setitem_expanded if _overlapping(x._data)
              else _setitem_op)
        new = apply_op(op.op, (shadow_of(x, False), value), (index, basic))
        if basic and new._grad_fn is not None:
            new._grad_fn.saved = _RELEASED_BY_BACKWARD
        if not basic:  # (IndexPutBackward0 saves the index tensors: their versions count)
            check_also(new, *index_tensors(given))
        write_at(target, index, _getitem_fwd(new._data, index, None, basic))
        old_fn, old_nr = x._grad_fn, x._nr
        x._grad_fn = new._grad_fn
        x._requires_grad = True
        x._nr = 0
        rebase_views(x)
        move_retain_grad(x, old_fn, old_nr)
    else:
        try:
            write_at(target, index, vdata)
        except (ValueError, IndexError) as e:
            # PyTorch raises RuntimeError("shape mismatch: ...") for a value that can't broadcast
            if "broadcast" in str(e):
                raise RuntimeError(f"shape mismatch: {e} (assigning into a tensor of shape "
                                   f"{list(x.shape)})") from None
            raise type(e)(f"{e} (assigning into a tensor of shape {list(x.shape)})") from None
        rebase_views(x, recorded=False)
    x._bump_version()



from .registry import register  # noqa: E402

register(setitem, function=False, method=False, dunders=("__setitem__",))
