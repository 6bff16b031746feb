"""Views of changed memory: what an in-place change does to the tensors sharing the memory.

When a view is changed its base's grad_fn becomes a CopySlices node (the old base with the
view's region replaced), and every other view that records a graph is re-derived from the
base's new grad_fn (AsStridedBackward0), so gradients through a view taken earlier see the
change too, as in PyTorch.  Here: the shadow of a tensor's previous graph position
(``shadow_of``), that re-derivation (``rebase_views``, ``regenerate_view``, adoption of
views), and the checks of what may be written (``writable_target``, overlaps, leaves).
Used by the in-place dispatch (inplace.py) and ``x[index] = value`` (index_assign.py).
"""

from __future__ import annotations

import copy
import re
import weakref

from ..autograd.grad_mode import enable_grad
from ..autograd.graph import NO_EDGE, Node, SavedOutput, move_retain_grad
import numpy as _np

from ..backend import namespace
from ..tensor import (NotLeafRef, PendingNodeRef, PendingRetainRef, Tensor, adopted_views,
                      make_tensor, still_adopted)
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
    index in ``base``.

    A view that reaches outside ``base``, or a base whose elements overlap (an expanded
    tensor), has no such index: that is a RuntimeError (as PyTorch refuses in-place writes
    to overlapping memory), never a silently skipped rebase.
    """
    xp = namespace(base)
    item = base.itemsize
    start = _address(view) - _address(base)
    if base.size == 0 or view.size == 0:
        return xp.zeros(view.shape, dtype=xp.int64)
    if base.flags.c_contiguous:
        if start % item == 0 and all(s % item == 0 for s in view.strides):
            first, steps = start // item, [s // item for s in view.strides]
            lo = first + sum(min(0, (n - 1) * s) for n, s in zip(view.shape, steps))
            hi = first + sum(max(0, (n - 1) * s) for n, s in zip(view.shape, steps))
            if 0 <= lo and hi < base.size:
                # first + sum(i_d * step_d): O(view.size), however big the base
                pos = xp.full(view.shape, first, dtype=xp.int64)
                for d, (n, step) in enumerate(zip(view.shape, steps)):
                    if n > 1 and step:
                        pos += xp.arange(0, n * step, step, dtype=xp.int64).reshape(
                            (n,) + (1,) * (view.ndim - d - 1))
                return pos
    else:
        # any other layout: match the byte offset of each view element with the base's
        offsets = xp.zeros(base.shape, dtype=xp.int64)
        for d, stride in enumerate(base.strides):
            offsets = offsets + xp.arange(base.shape[d]).reshape(
                (-1,) + (1,) * (base.ndim - d - 1)) * stride
        offsets = offsets.reshape(-1)
        order = xp.argsort(offsets, kind="stable")
        ordered = offsets[order]
        wanted = xp.full(view.shape, start, dtype=xp.int64)
        for d, stride in enumerate(view.strides):
            wanted = wanted + xp.arange(view.shape[d]).reshape(
                (-1,) + (1,) * (view.ndim - d - 1)) * stride
        found = xp.clip(xp.searchsorted(ordered, wanted), 0, ordered.size - 1)
        if (ordered[found] == wanted).all() and not (ordered[1:] == ordered[:-1]).any():
            return order[found]
    raise RuntimeError(
        f"unsupported operation: an in-place change of a view of shape {list(view.shape)} "
        f"(strides {list(view.strides)}) cannot be mapped onto its base of shape "
        f"{list(base.shape)} (strides {list(base.strides)}), whose elements overlap or do not "
        "hold the view. Please clone() the tensor before performing the operation."
    )


def _as_strided_vjp(node, g, saved):
    from .index import _index_backward
    from .shape import reshape_op

    positions, _, base_shape = node.params
    if positions is None:  # re-derived from a base whose elements share memory (its
        # CopySlices, which PyTorch's gradient reaches next, refuses)
        raise _shared_base_error(base_shape)
    size = 1
    for s in base_shape:
        size *= s
    data = g._data if isinstance(g, Tensor) else g
    if size == 0 or data.size == 0:  # PyTorch's as_strided_backward: fresh zeros (under
        # create_graph they do not require grad: seeds 9100742, 9105788, 9157920)
        zeros = namespace(data).zeros(base_shape, dtype=data.dtype)
        return (make_tensor(zeros) if isinstance(g, Tensor) else zeros,)
    return (reshape_op(_index_backward(g, positions, (size,), False), base_shape, (size,)),)


# a view re-derived from its base's new grad_fn; the forward hands back the view's own array
_as_strided = defop("as_strided", lambda base, positions, data, base_shape: data,
                    _as_strided_vjp, "AsStridedBackward0", 1)


# PyTorch's CopySlices frees the function it wraps after a backward without retain_graph,
# and a second backward through it raises; the engine frees a node's ``saved`` then, and
# raises on a freed one, so a CopySlices node "saves" this marker (its derivative reads
# nothing saved)
_RELEASED_BY_BACKWARD = ("CopySlices' wrapped function",)


def _shared_base_error(base_shape):
    return RuntimeError(
        "unsupported operation: more than one element of the written-to tensor refers to a "
        f"single memory location: an in-place change (recorded) of a view of a tensor of "
        f"shape {list(base_shape)} whose elements share memory (an expanded tensor) cannot "
        "be differentiated. Please clone() the tensor before performing the operation.")


def _copy_slices_vjp(node, g, saved):
    from ..autograd.engine import unpack_saved
    from .index import _setitem_op, getitem_op
    from .shape import reshape_op

    positions, base_shape, overlapping, fn = node.params
    n_old = node.next[0]
    if overlapping == "base":
        raise _shared_base_error(base_shape)
    if overlapping and n_old:
        # as PyTorch's CopySlices, which first copies the gradient into an empty tensor of
        # the base's layout (always: an expanded base refuses), then the view's gradient
        # into its region of that (when the old base needs one)
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to "
            f"a single memory location: an in-place change (recorded) of an expanded view of "
            f"shape {list(positions.shape)} of a base of shape {list(base_shape)} cannot be "
            "differentiated. Please clone() the view before performing the operation."
        )
    size = 1
    for s in base_shape:
        size *= s
    flat = reshape_op(g, (size,), base_shape)
    g_view = getitem_op(flat, positions, (size,), False)
    if fn is None:  # (a multi-output op changed the view: its node is an edge of ours)
        g_old = None
        if n_old:  # the old base keeps its gradient outside the view's region
            g_old = reshape_op(_setitem_op(flat, 0.0, positions, False), base_shape, (size,))
        return (g_old, g_view)
    # PyTorch's CopySlices: the in-place op's derivative runs here, on the view's part of
    # the gradient; its gradient for the view (the op's first input) goes back into that
    # part, for the old base, and those for its other inputs go along our other edges
    # (on a copy of that node: under create_graph its saved result unpacks as a tensor
    # whose grad_fn may be the unpacking node, which then runs in the next backward on its
    # own and frees what it saved; ``fn`` keeps it until CopySlices is freed)
    run = copy.copy(fn)
    run.hooks = None
    res = run.vjp(run, g_view, unpack_saved(run, hasattr(g, "_data")))
    g_old = None
    if n_old and res[0] is not None:  # (an undefined gradient for the view, as a custom
        # Function's backward returning None for it: PyTorch's CopySlices then sends
        # nothing to the old base, not even outside the view's region)
        g_old = reshape_op(_setitem_op(flat, res[0], positions, False), base_shape, (size,))
    return (g_old, *res[1:])


_copy_slices = defop("copy_slices", lambda old, src, positions, base_shape, overlap: old,
                     _copy_slices_vjp, "CopySlices", 2)


def _wrap_in_copy_slices(node, fn):
    """Make the CopySlices ``node`` (edges: the old base, the changed view) PyTorch's: edges
    to the old base and to the other inputs of ``fn``, the node of the in-place op that
    changed the view, whose derivative it then runs itself.  So ``next_functions`` is
    PyTorch's, the view's old graph is never reached from here (hooks on the view, or on
    a view it was taken of, see nothing of this gradient, as there), and hooks on CopySlices
    see one gradient per edge."""
    if fn is None or fn.multi_output or not fn.next:
        node.params = (*node.params, None)
        return
    nrs = node.next_nr
    fn_nrs = fn.next_nr
    node.next = (node.next[0], *fn.next[1:])
    if nrs or fn_nrs:
        node.next_nr = ((nrs[0] if nrs else 0),
                        *(fn_nrs[1:] if fn_nrs else (0,) * (len(fn.next) - 1)))
    node.params = (*node.params, fn)


_saved_slot = Node.__dict__["saved"]


def _set_saved(node, value):
    # the engine frees what a node saved after a backward without retain_graph (saved =
    # None): CopySlices frees the wrapped op's values with its own, as PyTorch releases
    # the function it wraps (a second backward raises)
    _saved_slot.__set__(node, value)
    fn = node.params[3] if value is None and len(node.params) > 3 else None
    if fn is not None and fn.saved:
        fn.saved = None


_copy_slices.op.node_cls.saved = property(_saved_slot.__get__, _set_saved)


def _group(x):
    vc = x._vc
    return vc[1].group_of(x) if vc is not None and len(vc) > 1 else None


def _op_label(x):
    fn = x._grad_fn
    if getattr(fn, "refused", False):  # (the op that made the view: _refusal's message)
        m = re.match(r"Output \d+ of (\w+) is a view", fn.params[0])
        return m.group(1) if m else "a view function"
    name = fn.name() if fn is not None else "a view function"
    return name.replace("WithSizes", "").replace("Backward0", "")


_MULTI_TAIL = (
    "This view is the output of a function that returns multiple views. Such functions do "
    "not allow the output views to be modified inplace. You should replace the inplace "
    "operation by an out-of-place one (or clone() the output first)."
)
_NO_GRAD_TAIL = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)


# Views taken while their base did not require grad, which came to require grad only because
# the base (or another view of it) was then written with a tensor that does: their grad_fn is
# re-derived from the base's (AsStridedBackward0), but PyTorch still counts them as leaves
# when checking an in-place change (the view has no graph position of its own), so a recorded
# in-place op on one raises "a leaf Variable that requires grad..." (the fuzzer's seed-100000
# run: `v = b[1]; b[0] = w; v.mul_(2)` raises in PyTorch, unless v.grad_fn was read between)
# (id -> weak reference: a Tensor's == is elementwise, so no WeakSet).  PyTorch re-derives
# the view (and the check passes) once its grad_fn or is_leaf is read: tensor.py drops the
# entry there
_ADOPTED = adopted_views


def _adopt(v, leaf=True):
    """Register ``v`` as adopted: a leaf to PyTorch until its grad_fn is read, or (``leaf``
    False: a refused view that has a grad_fn in PyTorch too, an output of split whose base
    changed) only registered so that the recording paths check it (tensor.rederive_view)."""
    key = id(v)
    _ADOPTED[key] = (weakref.ref if leaf else NotLeafRef)(
        v, lambda _r: _ADOPTED.pop(key, None))


_adopted = still_adopted


# Views whose memory changed in place (while their base did not require grad) since they
# were taken: PyTorch keeps a view's creation version and re-derives its grad_fn when that
# differs, so a later requires_grad_() on the base gives such a view AsStridedBackward0 (not
# a leaf), where an unchanged one stays a leaf (see regenerate_view)
_STALE: dict = {}


def _mark_stale(v):
    key = id(v)
    _STALE[key] = weakref.ref(v, lambda _r: _STALE.pop(key, None))


def regenerate_view(base, v) -> bool:
    """Called by ``requires_grad_()`` on ``base`` for each view ``v`` of it without a
    grad_fn: re-derive ``v`` from ``base`` (AsStridedBackward0) if its memory changed since
    it was taken, as PyTorch; False if not (``v`` stays a leaf)."""
    ref = _STALE.pop(id(v), None)
    if ref is None or ref() is not v:
        return False
    group = _group(v)
    if group is None:
        return False
    flag = group.flag(v)
    if flag is not None:  # a view made under no_grad (or a piece of split...): PyTorch
        # refuses to re-derive it, so reading its grad_fn or is_leaf raises (seed 9005420)
        with enable_grad():
            new = apply_op(_refused.op, (_refused_source(base),), (_refusal(v, flag), v._data))
        v._grad_fn = new._grad_fn
        v._requires_grad = True
        v._nr = 0
        _adopt(v)  # (a leaf to PyTorch until its grad_fn is read: retain_grad ignores it)
        return True
    try:
        pos = _positions(base._data, v._data)
    except RuntimeError:  # an expanded view: no element positions
        return False
    with enable_grad():
        new = apply_op(_as_strided.op, (base,), (pos, v._data, tuple(base.shape)))
    v._grad_fn = new._grad_fn
    v._requires_grad = True
    v._nr = 0
    _adopt(v)
    return True


def check_view_of_leaf(x, name, adopted=True):
    """PyTorch refuses an in-place change (that records a graph) of a view of a leaf that
    requires grad, of an output of split/chunk/unbind (functions that return several views)
    or a view of one, of a view made under no_grad, and of a view adopted into its base's
    graph (see ``_ADOPTED``), in PyTorch's order (check_inplace: the view's flags, a view
    of a leaf, then a leaf)."""
    group = _group(x)
    flag = group.flag(x) if group is not None else None
    if flag == "multi" and (x._grad_fn is None or (
            getattr(x._grad_fn, "refused", False) and _op_label(x) == "a view function")):
        flag = "no_grad"  # (PyTorch's message for a piece without a grad_fn)
    if flag == "multi":
        raise RuntimeError(
            f"Output {x._nr} of {_op_label(x)} is a view and is being modified inplace "
            f"({name}). {_MULTI_TAIL}"
        )
    if flag == "no_grad":
        raise RuntimeError(
            f"A view was created in no_grad mode and is being modified inplace with grad "
            f"mode enabled ({name} on a view of shape {list(x.shape)}). {_NO_GRAD_TAIL}"
        )
    base = group.base() if group is not None else None
    # (PyTorch asks whether the view requires grad, not its base: a view of a view made to
    # require grad has a leaf base that does not)
    if base is not None and base is not x and base._grad_fn is None and (
            base._requires_grad or x._requires_grad):
        raise RuntimeError(
            f"a view of a leaf Variable that requires grad is being used in an in-place "
            f"operation ({name} on a view of shape {list(x.shape)} of a leaf of shape "
            f"{list(base.shape)}). Do it under `with retrograd.no_grad():`, or clone() the "
            "leaf first."
        )
    if adopted and _ADOPTED and _adopted(x):
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation "
            f"({name} on a view of shape {list(x.shape)} taken before its base came to "
            "require grad: PyTorch counts it as a leaf). Take the view again after the write "
            "that made the base require grad, or use the out-of-place op.")


def check_no_grad_view(x, name):
    """An in-place change in grad mode that records nothing: PyTorch still refuses it on a
    view made under no_grad of a tensor that requires grad (the view counts as requiring
    grad there)."""
    group = _group(x)
    if group is None or group.flag(x) != "no_grad":
        return
    base = group.base()
    if base is not None and base._requires_grad:
        raise RuntimeError(
            f"A view was created in no_grad mode and is being modified inplace with grad "
            f"mode enabled ({name} on a view of shape {list(x.shape)}). {_NO_GRAD_TAIL}"
        )


def _refused_vjp(node, g, saved):
    raise RuntimeError(node.params[0])


# a view whose base changed in place, but which PyTorch refuses to re-derive (an output of
# split/unbind, or a view made under no_grad): using it in backward raises, as reading its
# grad_fn does
# (``kept``: the view's old node, held as PyTorch's view keeps its grad_fn, see rebase_views)
_refused = defop("refused_view", lambda base, message, data, kept=None: data, _refused_vjp,
                 "RefusedViewBackward", 1)
_refused.op.node_cls.refused = True
# PyTorch records these for a target of any dtype: an integer or bool tensor that gets a
# value requiring grad by fill_/masked_fill_ (with a 0-d tensor), x[i] = 0-d tensor or
# index_put_ requires grad, not a leaf (record() otherwise refuses integer results); the
# views and base of such a tensor follow it (AsStridedBackward0, CopySlices)
for _op in (_as_strided, _copy_slices, _refused):
    _op.op.node_cls.any_dtype = True


def _refused_source(base):
    """The input of a refused view's node: ``base``, or for a leaf a stand-in without an
    AccumulateGrad.  PyTorch makes no node for such a view (reading its grad_fn raises), so
    it keeps no AccumulateGrad alive: one kept here would keep the leaf's shape of now, and
    a later t_/transpose_/squeeze_ of the leaf under no_grad would make every new graph's
    gradient for it mismatch that stale shape (seed 13204195)."""
    if base._grad_fn is not None:
        return base
    source = make_tensor(base._data)
    source._requires_grad = True
    source._acc = NO_EDGE
    return source


def _refusal(v, flag):
    if flag == "multi" and v._grad_fn is not None:  # (PyTorch: no grad_fn, no_grad's message)
        return (f"Output {v._nr} of {_op_label(v)} is a view and its base or another view of "
                f"its base has been modified inplace. {_MULTI_TAIL}")
    return ("A view was created in no_grad mode and its base or another view of its base has "
            f"been modified inplace with grad mode enabled. {_NO_GRAD_TAIL}")


def _no_view_alive(vc):
    """Whether no view of the memory of version counter ``vc`` (one with view groups) is
    alive: then :func:`rebase_views` after an unrecorded change skips every group."""
    for group in vc[1].groups:
        if group.keep[0] and group.base() is not None:
            return False
    return True


def rebase_views(x, recorded=True, keep=None):
    """After an in-place change of ``x``, update the tensors sharing its memory, as PyTorch.

    If the change was recorded (``x`` got a new grad_fn) and ``x`` is a view, its base's
    grad_fn becomes CopySlices (the old base with the view's region replaced; it runs the
    in-place op's derivative itself: ``_wrap_in_copy_slices``).  Then, as
    PyTorch re-derives a view's grad_fn whenever the version of its memory changed (a
    change under no_grad, or through a detached alias, included), every view of a base that
    requires grad, ``x`` included, is re-derived from its base's grad_fn
    (AsStridedBackward0), or refused if PyTorch refuses it (see ``_refused``).  ``keep``: a
    view left as it is (an in-place view op's own tensor, which got that op's node).
    """
    vc = x._vc
    if vc is None or len(vc) < 2:
        return
    groups = vc[1]
    pos = None
    shared = None  # a base whose elements share memory, which got a CopySlices here
    if recorded:
        group = groups.group_of(x)
        base = group.base() if group is not None else None
        if base is not None and x is not base:
            if _overlapping(base._data):
                # (an expanded tensor's alias: no position maps the view onto it; PyTorch's
                # CopySlices refuses in backward, and so do the views re-derived from it)
                shared, overlap = base, "base"
            else:
                pos, overlap = _positions(base._data, x._data), _overlapping(x._data)
            new = apply_op(_copy_slices.op, (shadow_of(base, False), x),
                           (pos, tuple(base.shape), overlap))
            if new._grad_fn is not None:
                new._grad_fn.saved = _RELEASED_BY_BACKWARD
                _wrap_in_copy_slices(new._grad_fn, x._grad_fn)
            old_fn, old_nr = base._grad_fn, base._nr
            base._grad_fn = new._grad_fn
            base._requires_grad = True
            base._nr = 0
            move_retain_grad(base, old_fn, old_nr)  # .grad: of its latest value
    for group in groups.groups:
        base = group.base()
        if not group.keep[0] or base is None:
            continue  # no view alive
        views, source = group.views, base
        if not base._requires_grad:  # none records a graph, until requires_grad_()
            if base._data.dtype.kind == "f" and base._grad_fn is None:
                for v in views:
                    if v is not base and v._grad_fn is None:
                        _mark_stale(v)
            # ... but one taken of a view made to require grad, which PyTorch re-derives
            # all the same: from a base that does not require grad, so its gradient goes
            # nowhere (AsStridedBackward0 without an edge; seeds 9532038, 9548203)
            views = [v for v in views if v._grad_fn is not None]
            if not views:
                continue
            source = make_tensor(base._data)
            source._requires_grad = True
            source._acc = NO_EDGE
        with enable_grad():
            for v in views:
                if v is base or v is keep or v._vc is not vc:
                    continue
                flag = group.flag(v)
                if flag is not None:
                    # PyTorch never replaces a refused view's grad_fn (reading it raises), so
                    # a split/unbind output's node keeps the leaf's AccumulateGrad, and the
                    # shape it had, alive (leafA: t_ of the leaf after a split then raises
                    # "invalid gradient" in backward)
                    new = apply_op(_refused.op, (_refused_source(source),),
                                   (_refusal(v, flag), v._data, v._grad_fn))
                else:
                    new = apply_op(_as_strided.op, (source,),
                                   (None if base is shared else
                                    pos if v is x and pos is not None else
                                    _positions(base._data, v._data), v._data,
                                    tuple(base.shape)))
                old_fn, old_nr = v._grad_fn, v._nr
                if old_fn is None or flag is not None:  # (a leaf view, requiring grad or
                    # not; a refused view is registered too: see tensor.rederive_view)
                    _adopt(v, leaf=old_fn is None)
                v._grad_fn = new._grad_fn
                v._requires_grad = True
                v._nr = 0
                if v is not x and flag is None and old_fn is not None and v.retains_grad:
                    _defer_retain_grad(v, old_fn, old_nr)
                else:
                    move_retain_grad(v, old_fn, old_nr)
                    if flag is None and old_fn is not None and not (v is x and recorded):
                        _defer_node(v)


def _defer_node(v):
    """PyTorch regenerates the grad_fn of a view whose memory changed only when it reads it
    (the written view itself at once, if the write was recorded): register ``v`` so that
    the first read gives its new node the sequence number of then (tensor.settle_adopted),
    as the engine's order among ready nodes, and so of hooks, follows it (seed 20900268).
    An entry already there (a leaf view adopted, a pending retain_grad) does the same."""
    key = id(v)
    ref = _ADOPTED.get(key)
    if ref is not None and ref() is v:
        return
    _ADOPTED[key] = PendingNodeRef(v, lambda _r: _ADOPTED.pop(key, None))


def _defer_retain_grad(v, old_fn, old_nr):
    """Another view of ``v``'s base changed in place: PyTorch regenerates ``v``'s grad_fn
    (and moves its retain_grad hook there) only when it reads it, so until then the
    retain_grad stays on the old node (tensor.PendingRetainRef; seed 20412810).  Later
    hooks go to the new node all the same (the eager hook_home reset of move_retain_grad,
    which PyTorch does when register_hook reads the grad_fn)."""
    key = id(v)
    ref = _ADOPTED.get(key)
    if ref.__class__ is PendingRetainRef and ref() is v:
        return  # re-derived again before PyTorch read it: the first old node keeps it
    if v._extra is not None:
        v._extra.hook_home = None
    ref = PendingRetainRef(v, lambda _r: _ADOPTED.pop(key, None))
    ref.old = (old_fn, old_nr)
    _ADOPTED[key] = ref


def _leaf_error(x, name):
    if x._acc is NO_EDGE:  # requires grad without a grad_fn, but a view made under no_grad
        return RuntimeError(
            f"A view was created in no_grad mode and is being modified inplace with grad "
            f"mode enabled ({name} on a view of shape {list(x.shape)}). {_NO_GRAD_TAIL}")
    try:  # a view (made to require grad itself): PyTorch checks it as a view first
        check_view_of_leaf(x, name, adopted=False)
    except RuntimeError as e:
        return e
    return RuntimeError(
        f"a leaf Variable that requires grad is being used in an in-place operation ({name} "
        f"on a leaf of shape {list(x.shape)}). Modify it under `with retrograd.no_grad():` "
        "(e.g. an optimizer step or an initialisation), or use the out-of-place op."
    )


def _overlapping(a) -> bool:
    # (an empty tensor has no element to share memory: PyTorch writes "through" it)
    return a.size != 0 and any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides))


class _Interface:
    """Hands NumPy an array interface (a writable alias of read-only memory)."""

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


# PyTorch 2.13 warns that these may stop writing through expanded tensors
# (x[mask] = scalar is index_put_, which goes on to masked_fill_: both warn)
_DEPRECATED_ON_EXPANDED = {"masked_fill_": ("masked_fill_",), "index_fill_": ("index_fill_",),
                           "index_put_": ("index_put_",),
                           "x[mask] = value": ("index_put_",),
                           "x[mask] = scalar": ("index_put_", "masked_fill_")}


def writable_target(x, name, overlap_ok=False):
    """The array to write ``x``'s new values into.

    An expanded tensor (NumPy's read-only broadcast) has elements that share memory: PyTorch
    lets the fills (fill_, zero_, masked_fill_, x[mask] = v) write through it, every alias
    getting the same value, and refuses every other in-place op.  NumPy marks a broadcast
    read-only, so the fills write through a writable alias of the same memory.
    """
    target = x._data
    if target.flags.writeable:
        return target
    if not _overlapping(target):
        overlap_ok = True  # read-only as a view of a broadcast, but no element repeats
    elif overlap_ok and name in _DEPRECATED_ON_EXPANDED:
        import warnings

        for op in _DEPRECATED_ON_EXPANDED[name]:
            warnings.warn(
                f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor "
                "before performing this operation. This also applies to advanced indexing "
                f"e.g. tensor[{'indices] = tensor' if op == 'index_put_' else 'mask] = scalar'}",
                UserWarning, stacklevel=3)
    if overlap_ok and type(target) is _np.ndarray:
        root, link = target, target.base
        while link is not None:  # (as_strided's views hang off a helper object, not an array)
            if isinstance(link, _np.ndarray):
                root = link
            link = getattr(link, "base", None)
        if root.flags.writeable:
            interface = dict(target.__array_interface__)
            interface["data"] = (_address(target), False)
            return _np.asarray(_Interface(interface, root))
    check_writable(x, name)
    return target


def check_writable(x, name):
    """PyTorch refuses an in-place op (other than a fill) on an expanded tensor."""
    if not x._data.flags.writeable and _overlapping(x._data):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to "
            f"a single memory location ({name} on a tensor of shape {list(x.shape)}, strides "
            f"{list(x._data.strides)}, e.g. from expand()). Please clone() the tensor before "
            "performing the operation."
        )


def _write(x, data, name, overlap_ok=False):
    target = writable_target(x, name, overlap_ok)
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
    if overlap_ok and target is not x._data and _overlapping(x._data):
        # elements that share memory (a fill through an expand): PyTorch's kernels write the
        # filled ones only, so an alias left alone must not write its old value back over
        # them (masked_fill_ of an expanded tensor: seed 11020511)
        changed = data != target
        target[changed] = data[changed]
        return
    target[...] = data


def _dense(a) -> bool:
    """PyTorch's is_non_overlapping_and_dense: the dimensions (size 1 aside), ordered by
    stride, lay the elements out one after another with no gap and no repeat."""
    expected = a.itemsize
    for stride, size in sorted((s, n) for n, s in zip(a.shape, a.strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def partially_overlaps(a, b) -> bool:
    """PyTorch's get_overlap_status(a, b) == Partial: ``a`` and ``b`` share some memory but
    are not the same elements in the same layout.  As PyTorch, only tensors that are dense
    can be told apart (other layouts are "too hard": allowed); a first bounds test makes the
    common case (unrelated arrays) cost one call."""
    if a is b or (a.base is None and b.base is None) or a.size == 0 or b.size == 0 or not (
            _np if type(a) is _np.ndarray else namespace(a)).may_share_memory(a, b):
        # (two arrays that own their memory cannot share any: the common case, first)
        return False
    if not (_dense(a) and _dense(b)):
        return False
    a0, b0 = _address(a), _address(b)
    if a0 == b0 and a.nbytes == b.nbytes:  # the same block: the same elements if laid alike
        # (PyTorch compares every stride, those of size-1 dims too: swapaxes of two size-1
        # dims is a partial overlap, seed 9506467; but NumPy gives an axis added by None a 0
        # stride where PyTorch's unsqueeze gives it a nonzero one, so a 0 there matches any)
        return a.shape != b.shape or any(s != t and not (n == 1 and (s == 0 or t == 0))
                                         for n, s, t in zip(a.shape, a.strides, b.strides))
    return a0 < b0 + b.nbytes and b0 < a0 + a.nbytes


def check_no_partial_overlap(written, other, name):
    """PyTorch refuses an in-place op one of whose operands shares part of the memory it
    writes (``v *= v.squeeze()``, ``x.add_(x.unbind(0)[2])``, ``x[0:3] = x[1:4]``): the
    result would depend on the order elements are written in."""
    if other is not None and partially_overlaps(written, other):
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            f"refer to a single memory location. Please clone() the tensor before performing the "
            f"operation. ({name}: the written tensor has shape {list(written.shape)}, the operand "
            f"of shape {list(other.shape)} is a view of part of its memory)")


def _check_operands(x, args, kwargs, name):
    data = x._data
    for a in args:
        if type(a) is Tensor:
            check_no_partial_overlap(data, a._data, name)
    for a in kwargs.values():
        if type(a) is Tensor:
            check_no_partial_overlap(data, a._data, name)


def _save_self_as_output(x, node):
    """An in-place op that saves its result saves ``x`` itself, at its new version (as
    PyTorch): a later in-place change of ``x`` is then an error at backward, not a silent
    use of a private copy."""
    saved = getattr(node, "saved", None)
    if not saved or not getattr(type(node), "saves", 0) & OUTPUT:
        return
    fn = x._grad_fn
    view_fn = weakref.ref(fn) if fn is not None and fn is not node else None
    node.saved = tuple(SavedOutput(x._data, x._vc, 0, view_fn) if type(s) is SavedOutput
                       else s for s in saved)

