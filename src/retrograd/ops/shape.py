"""Shape ops: views (reshape, transpose, squeeze, expand...), joining (cat, stack).

Their derivatives only move gradients around: the inverse view, a sum over broadcast
dimensions, or a slice of the joined gradient.
"""

from __future__ import annotations

import weakref

from ..autograd.engine import sum_to_array
from ..backend import namespace
from ..tensor import Tensor
from ._apply import NOTHING, apply_op, defop


# ----------------------------------------------------------------- view tracking


class ViewGroup:
    """The tensors sharing one block of memory: its base and the views of it that record a
    graph.  Kept in the shared version counter (``_vc[1]``), so that an in-place change of
    any of them can rebase the others' grad_fns (see ``inplace.rebase_views``)."""

    __slots__ = ("base", "refs", "prune_at")

    def __init__(self, base):
        self.base = weakref.ref(base)
        self.refs = []  # weak references (cheaper than a WeakSet); dead ones pruned in bulk
        self.prune_at = 64

    def add(self, view):
        refs = self.refs
        refs.append(weakref.ref(view))
        if len(refs) >= self.prune_at:
            refs[:] = [r for r in refs if r() is not None]
            self.prune_at = max(64, 2 * len(refs))

    @property
    def views(self):
        """The views still alive (a list of tensors)."""
        return [v for v in (r() for r in self.refs) if v is not None]


def track_view(x, out):
    """Return ``out``, remembered as a view of ``x``'s memory if it records a graph."""
    if out.__class__ is not Tensor:  # arrays, in a first-order backward
        return out
    vc = out._vc
    if out._grad_fn is not None and vc is not None and vc is x._vc:
        if len(vc) == 1:
            vc.append(ViewGroup(x))
        vc[1].add(out)
    return out


def _norm_dim(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
            f"{max(ndim, 1) - 1}], but got {dim})"
        )
    return dim % max(ndim, 1)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape, size, in_shape):
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred (more than one -1 in the shape)")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or size % known:
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {size} "
                f"(input shape {list(in_shape)})"
            )
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif known != size:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {size} "
            f"(input shape {list(in_shape)}); the new shape must have the same number of elements"
        )
    return shape


# ----------------------------------------------------------------- reshape / view


def _reshape_back(node, g, saved):
    shape, in_shape = node.params
    return (reshape_op(g, in_shape, shape),)



reshape_op = defop("reshape", lambda a, shape, *rest: a.reshape(shape),
                   _reshape_back,
                   "ViewBackward0", 1, NOTHING, view=True)
_unsafe_view = defop("reshape", lambda a, shape, *rest: a.reshape(shape),
                     _reshape_back,
                     "UnsafeViewBackward0", 1, NOTHING)


clone = defop("clone", lambda a, memory_format=None: a.copy(), lambda node, g, saved: (g,),
              "CloneBackward0", 1, NOTHING)


def reshape(x, *shape):
    """A tensor with ``x``'s data in a new shape (a view when possible); ``-1`` is inferred.

    Examples
    --------
    >>> import retrograd as T
    >>> T.arange(6.0).reshape(2, -1)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    shape = _infer_shape(_shape_arg(shape), x.numel() if hasattr(x, "numel") else x.size,
                         x.shape)
    if not hasattr(x, "_data"):
        return x.reshape(shape)
    data = x._data
    if data.flags.c_contiguous or data.size <= 1:
        return track_view(x, reshape_op(x, shape, tuple(data.shape)))
    # PyTorch copies (CloneBackward0), then views the copy as the new shape
    return _unsafe_view(clone(x), shape, tuple(data.shape))


def view(x, *shape):
    """Like reshape, but never copies: a non-contiguous tensor raises, as in PyTorch."""
    shape = _infer_shape(_shape_arg(shape), x._data.size, x._data.shape)
    try:
        x._data.reshape(shape, copy=False)
    except ValueError:
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (shape "
            f"{list(x._data.shape)} viewed as {list(shape)}): at least one dimension spans "
            "across two contiguous subspaces. Use .reshape(...) instead."
        ) from None
    return track_view(x, reshape_op(x, shape, tuple(x._data.shape)))


def flatten(x, start_dim=0, end_dim=-1):
    shape = tuple(x.shape)
    if not shape:
        return reshape(x, 1)
    s = _norm_dim(start_dim, len(shape))
    e = _norm_dim(end_dim, len(shape))
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(x, shape[:s] + (n,) + shape[e + 1:])


# ----------------------------------------------------------------- permutations


def _transpose_fwd(a, d0, d1):
    return namespace(a).swapaxes(a, d0, d1)


transpose_op = defop("transpose", _transpose_fwd,
                     lambda node, g, saved: (transpose_op(g, *node.params),),
                     "TransposeBackward0", 1, NOTHING, view=True)
_t_op = defop("t", lambda a: a.T, lambda node, g, saved: (_t_op(g),),
              "TBackward0", 1, NOTHING, view=True)


def transpose(x, dim0, dim1):
    """Swap two dimensions (a view).

    Examples
    --------
    >>> import retrograd as T
    >>> T.zeros(2, 3, 4).transpose(0, 2).shape
    retrograd.Size([4, 3, 2])
    """
    n = x._data.ndim if x.__class__ is Tensor else x.ndim
    if n >= 2 and dim0 == -2 and dim1 == -1:  # .mT, in every matmul derivative
        return track_view(x, transpose_op(x, n - 2, n - 1))
    return track_view(x, transpose_op(x, _norm_dim(dim0, n), _norm_dim(dim1, n)))


def t(x):
    """Transpose a tensor of at most 2 dimensions."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return track_view(x, _t_op(x))


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


permute_op = defop("permute", lambda a, dims: namespace(a).transpose(a, dims),
                   lambda node, g, saved: (permute_op(g, _inverse(node.params[0])),),
                   "PermuteBackward0", 1, NOTHING, view=True)


def permute(x, *dims):
    dims = _shape_arg(dims)
    n = x.ndim
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    dims = tuple(_norm_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims)})")
    return track_view(x, permute_op(x, dims))


def mT(x):  # noqa: N802 - PyTorch's name
    return transpose(x, -2, -1)


# ----------------------------------------------------------------- squeeze / unsqueeze


def _squeeze_vjp(node, g, saved):
    in_shape = node.params[1]
    return (reshape_op(g, in_shape, tuple(g.shape)),)


_squeeze0 = defop("squeeze", lambda a, dims, in_shape: a.reshape(
    tuple(s for i, s in enumerate(in_shape) if i not in dims)), _squeeze_vjp,
    "SqueezeBackward0", 1, NOTHING, view=True)
_squeeze1 = defop("squeeze", _squeeze0.op.forward, _squeeze_vjp, "SqueezeBackward1", 1,
                  NOTHING, view=True)
# squeeze with a tuple of dims (PyTorch's squeeze.dims overload)
_squeeze2 = defop("squeeze", _squeeze0.op.forward, _squeeze_vjp, "SqueezeBackward2", 1,
                  NOTHING, view=True)


def squeeze(x, dim=None):
    """Remove dimensions of size 1 (all of them, or only ``dim``).

    Examples
    --------
    >>> import retrograd as T
    >>> T.zeros(2, 3, 4).permute(2, 0, 1).shape
    retrograd.Size([4, 2, 3])

    Examples
    --------
    >>> import retrograd as T
    >>> T.zeros(2, 1, 3, 1).squeeze().shape, T.zeros(2, 1, 3, 1).squeeze(1).shape
    (retrograd.Size([2, 3]), retrograd.Size([2, 3, 1]))
    """
    shape = tuple(x.shape)
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
        return track_view(x, _squeeze0(x, dims, shape))
    op = _squeeze1 if isinstance(dim, int) else _squeeze2
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(_norm_dim(d, len(shape)) for d in dims)
    dims = tuple(d for d in dims if shape and shape[d] == 1)
    return track_view(x, op(x, dims, shape))


def _unsqueeze_fwd(a, dim):
    return namespace(a).expand_dims(a, dim)


unsqueeze_op = defop("unsqueeze", _unsqueeze_fwd,
                     lambda node, g, saved: (squeeze_dim(g, node.params[0]),),
                     "UnsqueezeBackward0", 1, NOTHING, view=True)


def squeeze_dim(g, dim):
    shape = tuple(g.shape)
    return _squeeze1(g, (dim,), shape)


def unsqueeze(x, dim):
    """Insert a dimension of size 1 at ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.zeros(2, 3).unsqueeze(-1).shape
    retrograd.Size([2, 3, 1])
    """
    return track_view(x, unsqueeze_op(x, _norm_dim(dim, x.ndim + 1)))


# ----------------------------------------------------------------- broadcasting


def _expand_fwd(a, shape, in_shape=None):
    return namespace(a).broadcast_to(a, shape)


expand_op = defop("expand", _expand_fwd,
                  lambda node, g, saved: (sum_to_size(g, node.params[1]),),
                  "ExpandBackward0", 1, NOTHING, view=True)
sum_to_size_op = defop("sum_to_size", lambda a, shape, in_shape=None: sum_to_array(a, shape),
                       lambda node, g, saved: (expand_op(g, node.params[1], node.params[0]),),
                       "SumBackward1", 1, NOTHING)


def sum_to_size(x, *shape):
    """Sum ``x`` over the dimensions that broadcasting to ``x.shape`` added or stretched."""
    shape = _shape_arg(shape)
    return sum_to_size_op(x, shape, tuple(x.shape))


def expand(x, *sizes):
    """Broadcast ``x`` to ``sizes`` without copying; ``-1`` keeps a dimension.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1.0], [2.0]]).expand(2, 3)
    tensor([[1., 1., 1.],
            [2., 2., 2.]])
    """
    sizes = _shape_arg(sizes)
    shape = tuple(x.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i, s in enumerate(shape):
        want = sizes[lead + i]
        if want == -1:
            out[lead + i] = s
        elif s != 1 and s != want:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({s}) "
                f"at non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(shape)}"
            )
    return track_view(x, expand_op(x, tuple(out), shape))


def broadcast_to(x, shape):
    return expand(x, *shape)


# ----------------------------------------------------------------- join


def _cat_fwd(*args):
    *arrays, dim, sizes = args
    return namespace(arrays[0]).concatenate(arrays, axis=dim)


def _cat_vjp(node, g, saved):
    dim, sizes = node.params[0], node.params[1]
    out = []
    start = 0
    for size, nxt in zip(sizes, node.next):
        if nxt is not None:
            index = (slice(None),) * dim + (slice(start, start + size),)
            out.append(_getitem(g, index))
        else:
            out.append(None)
        start += size
    return tuple(out)


_cat = defop("cat", _cat_fwd, _cat_vjp, "CatBackward0", 0, NOTHING, "promote")


def _getitem(x, index):
    # the ``[]`` operator (index.getitem on a tensor, once the package is assembled): shape.py
    # is below index.py, which builds on its views
    return x[index]


def cat(tensors, dim=0):
    """Join tensors along an existing dimension.

    Examples
    --------
    >>> import retrograd as T
    >>> T.cat([T.zeros(1, 2), T.ones(2, 2)]).shape
    retrograd.Size([3, 2])
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ref = tensors[0]
    d = _norm_dim(dim, ref.ndim)
    for i, x in enumerate(tensors):
        if x.ndim != ref.ndim or any(
            a != b for j, (a, b) in enumerate(zip(x.shape, ref.shape)) if j != d
        ):
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected size "
                f"{list(ref.shape)} but got size {list(x.shape)} for tensor number {i} in the "
                "list."
            )
    sizes = tuple(x.shape[d] for x in tensors)
    return apply_op(_cat.op, tensors, (d, sizes))


def _stack_fwd(*args):
    *arrays, dim = args
    return namespace(arrays[0]).stack(arrays, axis=dim)


def _stack_vjp(node, g, saved):
    dim = node.params[0]
    return tuple(
        _getitem(g, (slice(None),) * dim + (i,)) if nxt is not None else None
        for i, nxt in enumerate(node.next)
    )


_stack = defop("stack", _stack_fwd, _stack_vjp, "StackBackward0", 0, NOTHING, "promote")


def stack(tensors, dim=0):
    """Join tensors along a new dimension.

    Examples
    --------
    >>> import retrograd as T
    >>> T.stack([T.zeros(2), T.ones(2)], dim=1)
    tensor([[0., 1.],
            [0., 1.]])
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, x in enumerate(tensors):
        if tuple(x.shape) != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(x.shape)} at entry {i}"
            )
    d = _norm_dim(dim, len(shape) + 1)
    return apply_op(_stack.op, tensors, (d,))


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(reshape, tensor={"reshape_as": lambda self, other: reshape(self, tuple(other.shape))})
register(view, function=False,
         tensor={"view_as": lambda self, other: view(self, tuple(other.shape))})
register(expand, tensor={"expand_as": lambda self, other: expand(self, tuple(other.shape))})
register(permute, tensor={"T": property(lambda self: permute(self, *reversed(range(self.ndim))))})
register(transpose, tensor={"mT": property(mT)})
for _fn in (flatten, t, squeeze, unsqueeze, broadcast_to, clone):
    register(_fn)
register(sum_to_size, function=False)
register(cat, aliases=("concat", "concatenate"), method=False, signature="tensors, dim=0")
register(stack, method=False, signature="tensors, dim=0")
