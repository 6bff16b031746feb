"""How a gradient becomes ``.grad``: PyTorch's AccumulateGrad at a leaf, and retain_grad at a
non-leaf, with the leaf's hooks around it (PyTorch's order: the tensor's hooks, the capture
for ``grad()``/``inputs=``, AccumulateGrad's pre-hooks, the accumulation, the
post-accumulate-grad hooks, AccumulateGrad's post-hooks).

A first ``.grad`` is a copy of the gradient unless the gradient is a fresh array that only
the engine holds (``sys.getrefcount`` says so), which becomes ``.grad`` as it is; later
gradients are added in place, under ``grad_lock`` (threads may run backward into one
leaf).  A leaf whose shape changed in place since the graph used it follows PyTorch's
layout rule (``leaf_layout.py``).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..backend import as_array
from .engine_hooks import _run_pre_hooks, _run_tensor_hooks, _wrap, above
from .grad_mode import state
from .leaf_layout import into_shape_error, leaf_grad_buffer, leaf_shaped_grad

#: Held around every addition into a ``.grad`` (leaves and retain_grad tensors).  One lock
#: for all tensors: uncontended it costs about 0.07 us per accumulation, and it is taken
#: only for the accumulation itself, never while hooks or derivatives run.
grad_lock = threading.Lock()

_ndarray = np.ndarray
_getrefcount = getattr(sys, "getrefcount", lambda obj: 1 << 30)  # (not CPython: never)

# The reuse below trusts sys.getrefcount to count every holder of an array.  That holds on
# CPython up to 3.13, where these counts were measured; 3.14 lets frames borrow references
# without counting them, so elsewhere every limit is -1 and nothing is ever reused in place
# (correct, only slower): a missed holder would be a silently wrong gradient.
_EXACT_REFCOUNTS = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
# ... and for a gradient reaching a leaf, checked in _run_leaf (or _run_plain_leaf):
# run_backward's ``g``, that function's and getrefcount's (tests/test_inplace_accumulation.py
# checks it); other callers of _accumulate_into_grad (backward(inputs=), a compiled
# replay) always copy
_SOLE_LEAF_REFS = 3 if _EXACT_REFCOUNTS else -1
# ... and for the array under such a gradient when it is a view: the view's base pointer,
# _run_plain_leaf's ``base`` and getrefcount's argument (another view or holder adds one)
_SOLE_BASE_REFS = 3 if _EXACT_REFCOUNTS else -1


def _accumulate_into_grad(tensor, g, as_tensors, sole=False, unshared=False):
    """Add ``g`` into ``tensor.grad`` as PyTorch's AccumulateGrad does (hold ``grad_lock``).

    ``sole``: the caller checked that ``g`` is a fresh array no one else holds (_run_leaf),
    so a first ``.grad`` may be ``g`` itself rather than a copy.  ``unshared``: nothing but
    the engine holds the array ``g`` (a view or not), as PyTorch's use count of the gradient
    tensor would say: only such a gradient may be stolen by a reshaped leaf."""
    make_tensor = above.make_tensor

    current = tensor._grad
    retained = tensor._grad_fn is not None
    if as_tensors:
        if current is None:
            if retained:
                # PyTorch's retain_grad hook clones (CloneBackward0 when g has a graph)
                tensor._grad = g.clone()
            elif g._data.shape != tensor._data.shape:
                # a leaf reshaped in place since the graph used it: under create_graph
                # PyTorch always copies into the leaf's layout (broadcasting, or raising)
                out = make_tensor(leaf_grad_buffer(tensor, g._data))
                if g._grad_fn is None:
                    out._data[...] = g._data
                else:
                    above.copy_(out, g)
                tensor._grad = out
            elif g._grad_fn is None:
                tensor._grad = make_tensor(g._data.copy())
            else:
                # PyTorch copies into a fresh tensor (grad_fn CopyBackwards), so .grad
                # never aliases a tensor that is part of the graph
                copy_ = above.copy_

                out = make_tensor(g._data.copy())
                copy_(out, g)
                tensor._grad = out
        else:
            tensor._grad = current + g
        return
    g = as_array(g)
    if current is None:
        if g.shape != tensor._data.shape and tensor._grad_fn is None:
            # (a leaf only: a retained non-leaf keeps the shape its node had, as PyTorch's)
            g, sole = leaf_shaped_grad(tensor, g, unshared), True
        # The array may be shared (the user's gradient argument, or one gradient sent to
        # two inputs by an add): copy so that .grad never aliases anything else -- unless
        # it is a derivative's fresh result that only the engine holds (``sole``), which
        # becomes .grad as it is (a copy fewer a leaf a step).
        tensor._grad = make_tensor(g if sole else g.copy())
    else:
        # In place, as PyTorch's AccumulateGrad in a first-order pass: ``g = x.grad`` taken
        # earlier sees the sum, even when that .grad requires grad (no graph is recorded).
        # (not a retained non-leaf's: PyTorch's retain_grad hook always adds out of place,
        # so a .grad taken earlier keeps its value, and the sum records no graph)
        data = current._data
        if data.shape != g.shape:
            # a leaf whose shape changed in place (under no_grad) between two backwards:
            # PyTorch's ``grad += new_grad`` broadcasts into .grad or refuses
            try:
                fits = np.broadcast_shapes(data.shape, g.shape) == data.shape
            except ValueError:
                fits = False
            if not fits:
                raise into_shape_error(
                    data.shape, g.shape, "(adding a gradient into .grad: the leaf's shape was "
                    "changed in place since; set .grad to None or change the shape back)")
        if not retained and data.dtype == g.dtype and data.flags.writeable:
            data += g
            current._bump_version()
        else:
            tensor._grad = make_tensor(data + g)


def _run_node_prehooks(node, hooks, g, as_tensors):
    """Tensor hooks, then retain_grad, of this node's outputs.

    An output that got no gradient (None) is shown to its tensor hooks as None, as
    PyTorch's (they run even when the whole node got none); retain_grad keeps nothing."""
    multi = node.multi_output
    grads = list(g) if multi else [g]
    tracer = state.tracer
    # list(): another thread may register a hook on this node while ours run
    for nr, table in list(hooks.tensor.items()):
        if table:
            grads[nr] = _run_tensor_hooks(table, grads[nr], as_tensors,
                                          f"the output of {node.name()}")
    for nr, ref in list(hooks.retain.items()):
        tensor = ref()
        if tensor is not None and grads[nr] is not None:
            if tracer is not None:
                tracer.accumulate(tensor, grads[nr])
            grad_lock.acquire()
            try:
                _accumulate_into_grad(tensor, grads[nr], as_tensors)
            finally:
                grad_lock.release()
    return grads if multi else grads[0]


def _leaf_hooks(node, g, as_tensors):
    extra = node.variable._extra
    if extra is not None and extra.hooks:
        g = _run_tensor_hooks(extra.hooks, g, as_tensors, "a leaf tensor")
    return g


def _run_leaf(node, g, captures, captured, needed, accumulate, as_tensors, trace):
    """A gradient reached a leaf: capture it (grad / inputs=) and/or add it into ``.grad``.

    PyTorch's order: the leaf tensor's hooks, the capture, then AccumulateGrad's pre-hooks,
    the accumulation, the post-accumulate-grad hooks and AccumulateGrad's post-hooks.
    A leaf that is neither captured nor needed is skipped, hooks included.  One that got no
    gradient (None: an undefined one) still runs all of them, as PyTorch's AccumulateGrad
    node does, with None (the pre- and post-hooks a tuple of None); nothing is accumulated.
    """
    captures_here = captures.get(node) if captures is not None else None
    wanted = accumulate and (needed is None or node in needed)
    if captures_here is None and not wanted:
        return
    g = _leaf_hooks(node, g, as_tensors)
    if captures_here is not None:
        for position, _ in captures_here:
            captured[position] = g
    if not wanted:
        return
    hooks = node.hooks
    if hooks is not None and hooks.pre:
        g = _run_pre_hooks(node, hooks, g, as_tensors)
    if g is None:
        _after_accumulation(node, node.variable, hooks, g, as_tensors, trace)
        return
    variable = node.variable
    if variable._grad_fn is not None:
        raise _moved_into_graph(variable)
    if trace is not None:
        trace.accumulate(variable, g)
    # a fresh array that only run_backward's ``g`` and ours hold may become .grad as it is
    refs = _getrefcount(g)
    sole = (variable._grad is None and refs <= _SOLE_LEAF_REFS and type(g) is _ndarray
            and g.base is None and g.flags.writeable)
    # whether PyTorch's use count of this gradient would say no one else holds it (which
    # decides a reshaped leaf's .grad, leaf_shaped_grad): any type (a 0-d derivative may be
    # a NumPy scalar), the capture of backward(inputs=) not counted (ours, not a user's);
    # where counts are not exact, taken as unshared, as most are (it decides .grad's shape,
    # never a reuse in place)
    if captures_here is not None:
        refs -= sum(captured[position] is g for position, _ in captures_here)
    unshared = refs <= _SOLE_LEAF_REFS or not _EXACT_REFCOUNTS
    # threads adding into one .grad must not lose updates (acquire/release: half the
    # cost of a ``with`` block on CPython 3.11, and this runs for every leaf)
    grad_lock.acquire()
    try:
        _accumulate_into_grad(variable, g, as_tensors, sole, unshared)
    finally:
        grad_lock.release()
    if trace is not None:
        trace.accumulated(variable)
    _after_accumulation(node, variable, hooks, g, as_tensors, trace)


def _after_accumulation(node, variable, hooks, g, as_tensors, trace):
    """The post-accumulate-grad hooks, then AccumulateGrad's post-hooks."""
    extra = variable._extra
    post_acc = extra.post_accumulate_hooks if extra is not None else None
    if post_acc:
        for fn in list(post_acc.values()):
            fn(variable)
            if trace is not None:
                trace.hook("post-accumulate-grad hook", fn, variable._grad, None)
    if hooks is not None and hooks.post:
        given = (_wrap(g, as_tensors),)
        for fn in list(hooks.post.values()):
            fn((), given)


def _moved_into_graph(variable):
    """PyTorch's AccumulateGrad refuses a leaf that has since got a grad_fn: a view taken
    as a leaf whose base an in-place op requiring grad changed (seed 15124237)."""
    return RuntimeError(
        "leaf variable has been moved into the graph interior (a leaf of shape "
        f"{list(variable.shape)} that the graph used is now a view of a tensor changed in "
        "place by an op requiring grad; clone() it before that change)")


def _run_plain_leaf(variable, g):
    """:func:`_run_leaf` where nothing but the accumulation has anything to do: a
    first-order ``backward()`` without tracer or ``inputs=``, at a leaf without hooks (the
    caller checked).  A fresh array only the engine holds becomes ``.grad`` as it is."""
    sole = False
    # (``unshared`` also for a view or a NumPy scalar: PyTorch counts the gradient tensor's
    # users, not its storage's, when a reshaped leaf decides whether to steal it)
    alone = _getrefcount(g) <= _SOLE_LEAF_REFS
    unshared = alone or not _EXACT_REFCOUNTS  # (as in _run_leaf)
    if alone and type(g) is _ndarray and g.flags.writeable:
        base = g.base
        if base is None:
            sole = True
        elif (type(base) is _ndarray and base.base is None and base.shape == g.shape
              and base.strides == g.strides and _getrefcount(base) <= _SOLE_BASE_REFS):
            # a view of all of a fresh array in its own layout, which nothing else holds
            # (nn.Linear's weight gradient, transposed twice): that array itself
            g = base
            sole = True
    if variable._grad_fn is not None:
        raise _moved_into_graph(variable)
    grad_lock.acquire()
    try:
        if variable._grad is None and g.shape == variable._data.shape:
            # (as_array: a 0-d derivative may be a NumPy scalar, which a later backward
            # could not add into in place, as PyTorch's .grad += does)
            variable._grad = above.make_tensor(g if sole else as_array(g).copy())
        else:
            _accumulate_into_grad(variable, g, False, sole, unshared)
    finally:
        grad_lock.release()
