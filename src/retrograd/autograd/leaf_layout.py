"""A leaf's first ``.grad`` when an in-place view op under no_grad (``t_``, ``transpose_``,
``swapaxes_``, ``squeeze_``, ``unsqueeze_``) changed the leaf's shape after its
AccumulateGrad was made, so the gradient (of the shape the graph used) no longer has the
leaf's shape.  PyTorch's AccumulateGrad then decides by strides, not shapes: it steals the
gradient, shape and all, when ``obeys_layout_contract(grad, variable)`` holds (every
dimension of the gradient longer than 1 has the leaf's stride at that index, none of length
1 has stride 0), and otherwise copies it into an empty tensor of the leaf's sizes and
strides (``clone_obey_contract``), which broadcasts it or raises.  Under create_graph it
always copies.

So what is judged is PyTorch's strides, which NumPy's do not give: NumPy's strides of
length-1 and empty dimensions are arbitrary, a flip is a view with negative strides where
PyTorch's flip copies, and ``unsqueeze_`` gives a new dimension ``size * stride`` of its
right neighbour in PyTorch (0 beside an empty one).  The leaf's side is exact: the in-place
view ops record the strides PyTorch gives the leaf (:func:`note_inplace_view`), including
the stale entries of PyTorch's inline sizes-and-strides storage past the new last dimension,
which its contract reads (unchecked) when the gradient has more dimensions than the leaf.
The gradient's side is modelled from its array (:func:`torch_strides`): fresh results are
contiguous, a flip's negative strides are its input's layout, a stride-0 length-1 dimension
stays 0; an empty gradient is contiguous unless it is a broadcast view (PyTorch's
TensorIterator and permutations make other layouts for some ops: not modelled).
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["note_inplace_view", "leaf_shaped_grad", "leaf_grad_buffer", "into_shape_error",
           "torch_strides"]

#: PyTorch keeps up to this many sizes and strides inline; past a tensor's last dimension
#: the inline storage keeps what earlier shapes wrote there
_INLINE = 5

#: id(tensor) -> (a weak reference to it, its array, PyTorch's strides storage: its strides,
#: then the stale inline entries, None where unknown), written by the in-place view ops,
#: valid while the tensor still holds that array.  (Not a WeakKeyDictionary: its lookups
#: compare tensors with ==, which is elementwise.)
_layouts = {}


def _forget(key):
    def drop(ref):
        entry = _layouts.get(key)
        if entry is not None and entry[0] is ref:
            del _layouts[key]
    return drop


def contiguous_strides(shape):
    """PyTorch's strides (in elements) of a contiguous tensor: each the product of the later
    sizes, a size 0 counting as 1."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def torch_strides(arr):
    """The strides PyTorch's tensor of this value would have, as far as the array tells:
    contiguous for a C-contiguous array (NumPy's strides for those are arbitrary in their
    length-1 dimensions; for an empty one see :func:`_empty_strides`), else NumPy's in
    elements, a negative one (a flip view: PyTorch's flip copies in its input's layout) as
    its absolute value; a length-1 dimension with stride 0 (an expanded value) keeps 0
    either way."""
    shape = arr.shape
    item = arr.itemsize
    if arr.size == 0:
        return _empty_strides(arr)
    if arr.flags.c_contiguous:
        strides = contiguous_strides(shape)
    else:
        strides = [abs(s) // item for s in arr.strides]
    return [0 if n == 1 and s == 0 else st for n, s, st in zip(shape, arr.strides, strides)]


def _empty_strides(arr):
    """:func:`torch_strides` of an empty array (whose NumPy strides say nothing): contiguous,
    but for a broadcast view (read-only, of a base with no more dimensions: a sum's
    derivative) PyTorch's ``expand`` strides of its base taken as contiguous: 0 for a new
    leading dimension and where a length-1 dimension was stretched.  (Other layouts of
    empty gradients, such as a permuted one or a TensorIterator output of a binary op with
    a scalar, which orders a size-0 dimension innermost, are not modelled.)"""
    shape, base = arr.shape, arr.base
    if base is None or arr.flags.writeable or base.ndim > arr.ndim:
        return contiguous_strides(shape)
    base_strides, lead, strides = contiguous_strides(base.shape), arr.ndim - base.ndim, []
    for i, n in enumerate(shape):
        j = i - lead
        if j < 0 or base.shape[j] == 1 and n != 1:
            strides.append(0)
        elif base.shape[j] == n:
            strides.append(base_strides[j])
        else:  # (not a broadcast of this base as it is: maybe of a view of it)
            return _expanded_view_strides(arr)
    return strides


def _expanded_view_strides(arr):
    """A read-only broadcast of a reshaped view of a non-empty base (a sum's derivative over
    a middle dimension: (3,) viewed (3, 1), expanded to (3, 0)): NumPy's strides there are
    expand's, 0 where it stretched, the view's elsewhere (PyTorch's (1, 0), not contiguous,
    so a leaf transposed since then does not steal it: seed 19914695); else contiguous."""
    if arr.base.size == 0 or 0 not in arr.strides:
        return contiguous_strides(arr.shape)
    return [abs(s) // arr.itemsize for s in arr.strides]


def _storage_of(tensor, data):
    """PyTorch's strides storage of ``tensor`` holding ``data``: as recorded by the last
    in-place view op, or as :func:`torch_strides` gives it (nothing known past the end)."""
    entry = _layouts.get(id(tensor))
    if entry is not None and entry[0]() is tensor and entry[1] is data:
        return list(entry[2])
    strides = torch_strides(data)
    return strides + [None] * (_INLINE - len(strides))


def _norm(d, n):
    return d + n if d < 0 else d


def note_inplace_view(tensor, name, args, before, after):
    """Record PyTorch's strides for ``tensor`` after ``name(*args)`` (an in-place view op)
    took its array from ``before`` to ``after``: transpositions swap two strides,
    ``unsqueeze_(d)`` inserts ``sizes[d] * strides[d]`` (1 at the end), ``squeeze_`` drops
    the squeezed dimensions; entries past the new last dimension keep what was there."""
    storage = _storage_of(tensor, before)
    shape, n = list(before.shape), before.ndim
    strides = storage[:n]
    if name == "t_" and n == 2 or name in ("transpose_", "swapaxes_") and n:
        a, b = (0, 1) if name == "t_" else (_norm(args[0], n), _norm(args[1], n))
        strides[a], strides[b] = strides[b], strides[a]
    elif name == "unsqueeze_":
        d = _norm(args[0], n + 1)
        strides.insert(d, 1 if d >= n else shape[d] * strides[d])
    elif name == "squeeze_":
        dims = range(n) if not args else args[0] if hasattr(args[0], "__len__") else args
        drop = {_norm(d, n) for d in dims} if n else set()
        strides = [s for i, s in enumerate(strides) if i not in drop or shape[i] != 1]
    if len(strides) != after.ndim:  # (not a form modelled here: PyTorch's contiguous)
        strides = contiguous_strides(after.shape)
    # PyTorch's inline storage: the new strides over the old ones, the rest left as they were
    storage = strides + storage[len(strides):] if len(strides) <= _INLINE else strides
    key = id(tensor)
    _layouts[key] = (weakref.ref(tensor, _forget(key)), after,
                     storage + [None] * (_INLINE - len(storage)))


def _non_overlapping_and_dense(shape, strides) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: ordered by stride, the dimensions longer
    than 1 tile memory without gaps."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    need = 1
    for i in sorted((i for i in range(len(shape)) if shape[i] >= 2), key=lambda i: strides[i]):
        if strides[i] != need:
            return False
        need *= shape[i]
    return True


def _obeys_layout_contract(g_shape, g_strides, leaf_storage) -> bool:
    """PyTorch's ``obeys_layout_contract`` for a dense leaf.  It indexes the leaf's strides
    by the gradient's dimensions: past the leaf's last one it reads the stale inline entries
    (None: unknown, taken as agreeing, as a contiguous gradient of the old shape would)."""
    for i, (n, st) in enumerate(zip(g_shape, g_strides)):
        if n != 1:
            want = leaf_storage[i] if i < len(leaf_storage) else None
            if want is not None and st != want:
                return False
        elif st == 0:
            return False
    return True


def leaf_shaped_grad(tensor, g, unshared=True):
    """The first ``.grad`` of a leaf whose shape changed since its AccumulateGrad was made,
    from the array ``g`` of the old shape: ``g`` itself (a copy) where PyTorch steals it,
    else ``g`` broadcast into the leaf's shape, or PyTorch's error where it does not
    broadcast (seeds 14502034, 15067259, 17039749, 17211184).  PyTorch steals only a
    gradient no one else holds (``unshared``: its use count), so one that an add/add_ sent
    to the leaf and, the same tensor, to a node still waiting is copied (seed 19570739)."""
    if type(g) is not np.ndarray:  # (another array library: no layout to judge)
        return g
    data = tensor._data
    storage = _storage_of(tensor, data)
    leaf_strides = storage[:data.ndim]
    if not _non_overlapping_and_dense(data.shape, leaf_strides):
        # PyTorch: stolen if contiguous, else clone(contiguous): g's shape either way
        return g.copy()
    if (unshared and g.dtype == data.dtype
            and _obeys_layout_contract(g.shape, torch_strides(g), storage)):
        return g.copy()
    try:
        return np.broadcast_to(g, data.shape).astype(data.dtype, copy=True)
    except ValueError:
        pass
    raise into_shape_error(data.shape, g.shape, "(the leaf's shape was changed in place "
                           "after the graph used it; change it back before backward)")


def leaf_grad_buffer(tensor, g):
    """Where a create_graph backward puts the first ``.grad`` of a leaf reshaped since its
    AccumulateGrad was made (PyTorch never steals there: clone_obey_contract): zeros of the
    leaf's shape to copy ``g`` into, or of ``g``'s shape for a leaf that is not dense (its
    ``clone``), after PyTorch's check that ``g`` broadcasts to the leaf."""
    data = tensor._data
    storage = _storage_of(tensor, data)
    if not _non_overlapping_and_dense(data.shape, storage[:data.ndim]):
        return np.zeros_like(g)
    try:
        fits = np.broadcast_shapes(g.shape, data.shape) == data.shape
    except ValueError:
        fits = False
    if not fits:
        raise into_shape_error(data.shape, g.shape, "(the leaf's shape was changed in place "
                               "after the graph used it; change it back before backward)")
    return np.zeros(data.shape, data.dtype)


def into_shape_error(out_shape, g_shape, hint):
    """PyTorch's error writing a gradient of ``g_shape`` into a tensor of ``out_shape``
    (copy_ or +=) where it does not broadcast to that shape."""
    try:
        both = np.broadcast_shapes(g_shape, out_shape)
    except ValueError:  # TensorIterator's check: the first dimension from the right
        for d in range(1, min(len(g_shape), len(out_shape)) + 1):
            a, b = out_shape[-d], g_shape[-d]
            if a != b and a != 1 and b != 1:
                return RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {len(out_shape) - d} {hint}")
        raise
    return RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast "
                        f"shape {list(both)} {hint}")
