"""Which operands PyTorch's matmul saves as copies, and saving them so here.

PyTorch lowers an N-D matmul to mm/mv (the batch folded into the rows) or bmm (both
operands expanded to a common batch), reshaping its operands first; mm/mv/bmm save those
reshaped tensors.  A reshape that cannot be a view copies: the saved tensor is then a
fresh tensor with its own version counter, so an in-place change of the operand after the
product does not make the backward raise (fuzz seed 14805082: ``v2 @ v5`` with ``v5`` of
shape (2, 2, 3), then ``v5`` transposed in place through a detached alias).  retrograd
computes every case with one ``@`` and saves the operands themselves; ``resave_copies``
swaps a copied operand's saved entry for a snapshot, so the version check and the saved
value both follow PyTorch.
"""

from __future__ import annotations

import math

import numpy as _np


def view_strides(shape, strides, new_shape):
    """PyTorch's ``computeStride``: the element strides of ``view(new_shape)`` of a tensor with
    these sizes and (element) strides, or None where no view can be made.  A 0-d tensor
    views as any one-element shape; an empty one as any empty shape (contiguous strides
    unless the shape is unchanged: seed 20007959).  Size-1 dims get PyTorch's strides, not
    NumPy's: they decide the layout of a later pointwise result (seed 19670971)."""
    if not shape:
        return (1,) * len(new_shape)
    if 0 in shape:
        if tuple(shape) == tuple(new_shape):
            return tuple(strides)
        new, step = [0] * len(new_shape), 1
        for d in range(len(new_shape) - 1, -1, -1):
            new[d] = step
            step *= max(new_shape[d], 1)
        return tuple(new)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base_stride = strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(new) if view_d == -1 else None


def _view_possible(shape, strides, new_shape):
    """Can ``reshape(new_shape)`` of a tensor with these sizes and strides be a view?"""
    return view_strides(shape, strides, new_shape) is not None


def _elem_strides(arr):
    item = arr.itemsize or 1
    return tuple(s // item for s in arr.strides)


def _expand(shape, strides, new_shape):
    """Sizes and strides of ``expand(new_shape)`` (new leading dims and expanded size-1
    dims get stride 0)."""
    lead = len(new_shape) - len(shape)
    out = [0] * lead
    for i, (n, s) in enumerate(zip(shape, strides)):
        out.append(0 if n == 1 and new_shape[lead + i] != 1 else s)
    return tuple(new_shape), tuple(out)


def _bmm_copies(shape, strides, batch, rows_cols):
    full, st = _expand(shape, strides, tuple(batch) + rows_cols)
    return not _view_possible(full, st, (math.prod(batch),) + rows_cols)


def torch_saved_copies(ad, bd, fold):
    """(a copied, b copied): whether PyTorch's matmul saves a copy of each operand, for
    operands of these arrays and ``fold`` (``linalg._should_fold``'s answer)."""
    sa, sb = tuple(ad.shape), tuple(bd.shape)
    ta, tb = _elem_strides(ad), _elem_strides(bd)
    if fold:
        # the larger operand (b transposed when it is the larger) is reshaped to
        # (batch * rows, cols); the smaller one is used as is or transposed (a view)
        if ad.ndim >= bd.ndim:
            return (not _view_possible(sa, ta, (math.prod(sa[:-1]), sa[-1])), False)
        shape = sb[:-2] + (sb[-1], sb[-2])
        strides = tb[:-2] + (tb[-1], tb[-2])
        return (False, not _view_possible(shape, strides, (math.prod(shape[:-1]), shape[-1])))
    # bmm: a 1-D operand is unsqueezed (a in front, b behind), both are expanded to the
    # broadcast batch and reshaped to one batch dimension
    if ad.ndim == 1:
        sa, ta = (1,) + sa, (sa[0] * ta[0],) + ta
    if bd.ndim == 1:
        sb, tb = sb + (1,), tb + (1,)
    try:
        batch = tuple(_np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:  # batch dims that do not broadcast: matmul's own check raises
        return (False, False)  # PyTorch's RuntimeError naming both shapes
    return (_bmm_copies(sa, ta, batch, sa[-2:]), _bmm_copies(sb, tb, batch, sb[-2:]))


def resave_copies(out, operands, copies):
    """Make ``out``'s node save a snapshot of each operand PyTorch saves as a copy: the
    operand's value now, with a version counter of its own.  A snapshot of an operand that
    requires grad is a recorded clone of it, so a derivative under create_graph still
    reaches the operand through it."""
    from .shape import clone
    from ..tensor import make_tensor

    node = out._grad_fn
    if node is None or not node.saved:
        return
    saved = list(node.saved)
    versions = list(node.versions) if node.versions else [0] * len(saved)
    changed = False
    for i, (x, copied) in enumerate(zip(operands, copies)):
        if not copied or saved[i] is None:
            continue
        saved[i] = clone(x) if x._requires_grad else make_tensor(x._data.copy())
        versions[i] = 0
        changed = True
    if changed:
        node.saved = tuple(saved)
        node.versions = tuple(versions) if any(versions) else None
