"""Shape ops: views (reshape, transpose, squeeze, expand...), joining (cat, stack).

Their derivatives only move gradients around: the inverse view, a sum over broadcast
dimensions, or a slice of the joined gradient.
"""

from __future__ import annotations

import operator
import weakref

import numpy as _np
from numpy.lib.stride_tricks import as_strided as _as_strided

from ..autograd.engine import sum_to_array
from ..autograd.grad_mode import state
from ..autograd.graph import NO_EDGE
from .. import dtypes
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import NOTHING, apply_op, defop
from ._errors import calling_op, dim_error
from .iter_layout import format_strides, strided_copy
from .view_dtype import view_dtype
from ..memory_formats import contiguous_format

_ndarray = _np.ndarray


# ----------------------------------------------------------------- view tracking


class ViewGroup:
    """One base tensor and the views taken of it (directly or through other views; of any
    float dtype, recording a graph or not), so that an in-place change of any of them can
    rebase the others' grad_fns (see ``changed_views.rebase_views``).

    As PyTorch's ``view._base``, the base stays alive while any view of it is alive (an
    in-place change of a view must update it, and the other views through it); once the
    last view is gone nothing holds it but its owners, so no reference cycle outlives the
    views.  Each view carries PyTorch's "creation meta": None, or the reason it refuses
    in-place changes (``"multi"``: an output of split/chunk/unbind, or a view of one;
    ``"no_grad"``: made under no_grad).
    """

    __slots__ = ("base", "members", "prune_at", "keep", "died", "flagged")

    def __init__(self, base):
        self.base = weakref.ref(base)
        self.members = {}  # id(view) -> (weakref, flag); dead ones pruned in bulk
        self.prune_at = 64
        self.flagged = False  # whether any member ever had a flag (skips the lookups)
        keep = self.keep = [0, None]  # [views alive, the base while any is]

        def died(_ref):
            keep[0] -= 1
            if not keep[0]:
                keep[1] = None

        self.died = died

    def add(self, view, flag=None):
        keep = self.keep
        if not keep[0]:
            keep[1] = self.base()
        keep[0] += 1
        members = self.members
        members[id(view)] = (weakref.ref(view, self.died), flag)
        if flag is not None:
            self.flagged = True
        if len(members) >= self.prune_at:
            for key in [k for k, (r, _) in members.items() if r() is None]:
                del members[key]
            self.prune_at = max(64, 2 * len(members))

    def has(self, x) -> bool:
        entry = self.members.get(id(x))
        return entry is not None and entry[0]() is x

    def flag(self, view):
        """The creation flag of ``view`` (``"multi"``, ``"no_grad"``), or None."""
        if not self.flagged:
            return None
        entry = self.members.get(id(view))
        return entry[1] if entry is not None and entry[0]() is view else None

    @property
    def views(self):
        """The views still alive (a list of tensors)."""
        return [v for v in (r() for r, _ in list(self.members.values())) if v is not None]


class ViewGroups:
    """The view groups of one block of memory, kept in the shared version counter
    (``_vc[1]``).  Usually one; ``detach()`` shares the memory and the version counter but
    starts a group of its own, as PyTorch's views of a detached tensor have it as base."""

    __slots__ = ("groups",)

    def __init__(self):
        self.groups = []

    def group_of(self, x, create=False):
        """The group whose base or member ``x`` is (a new one with base ``x`` if asked)."""
        groups = self.groups
        for g in groups:
            if g.base() is x or g.has(x):
                return g
        if create:
            groups[:] = [g for g in groups if g.keep[0] or g.base() is not None]
            g = ViewGroup(x)
            groups.append(g)
            return g
        return None

    @property
    def views(self):
        return [v for g in self.groups for v in g.views]


def track_view(x, out, flag=None):
    """Return ``out``, remembered as a view of ``x``'s memory.

    ``flag`` marks an output of a function returning several views (``"multi"``); a view
    of such a view, or one made under no_grad, is marked too (PyTorch refuses in-place
    changes of them that record a graph).
    """
    if out.__class__ is not Tensor:  # arrays, in a first-order backward
        return out
    vc = out._vc
    if vc is None or vc is not x._vc:
        if not state.enabled:
            _no_grad_view_flags(x, x, out)
        return out
    if len(vc) == 1:
        vc.append(ViewGroups())
    groups = vc[1].groups
    group = groups[0] if groups else None
    if group is None or group.base() is not x:  # (the common case: a view of the base)
        group = vc[1].group_of(x, create=True)
    if flag is None and group.flagged:
        flag = group.flag(x)
    if not state.enabled:
        flag = "no_grad"
        base = group.base()
        _no_grad_view_flags(x, x if base is None else base, out)
    group.add(out, flag)
    return out


def _no_grad_view_flags(x, base, out):
    # PyTorch: a view made under no_grad of a tensor whose base (the tensor at the root of
    # its views: not a view made to require grad itself, seed 9452075) requires grad
    # requires grad too, as a leaf whose gradient goes nowhere (no AccumulateGrad: NO_EDGE)
    if base._requires_grad and out is not x and out is not base and (
            out._data.dtype.kind == "f" or out._data.dtype == base._data.dtype):
        # (an integer or bool tensor requires grad after fill_ by a tensor requiring grad,
        # as PyTorch: its views follow it, see ops/inplace.py's _fill_tensor_op)
        out._requires_grad = True
        out._acc = NO_EDGE


def input_meta(node, i=0):
    """The shape and dtype of ``node``'s input ``i``: what its gradient must look like.

    The input may be one output of a multi-output node (a piece of split/chunk/unbind),
    whose ``out_shape`` lists one shape per output."""
    child = node.next[i]
    if child.multi_output:
        nr = node.next_nr[i] if node.next_nr else 0
        return tuple(child.out_shape[nr]), child.out_dtype[nr]
    return tuple(child.out_shape), child.out_dtype


def _norm_dim(dim, ndim):
    if dim.__class__ is not int:
        dim = _int_dim(dim)
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise dim_error(dim, ndim)
    return dim % max(ndim, 1)


def _int_dim(dim):
    """A dim that is not a Python int: an int tensor or NumPy int passes, 1.0 or (0,) don't."""
    if isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"{calling_op()}(): argument 'dim' must be int, not "
                        f"{type(dim).__name__} ({dim!r})")
    return operator.index(dim)


def _unique_dims(dims, ndim):
    """``dims`` normalised, refusing a dim named twice (``sum((0, -2))`` of a 2-D tensor)."""
    out = tuple(_norm_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"{calling_op()}(): dim {d} appears multiple times in the list of "
                           f"dims {list(dims)}; name each dimension once")
    return out


def _shape_arg(shape, required=None):
    if required and not shape:  # x.reshape(): PyTorch's arg parser refuses
        raise TypeError(f'{calling_op()}() missing 1 required positional arguments: '
                        f'"{required}"')
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(operator.index(s) for s in shape)  # ints (and int tensors), not 2.0
    except TypeError:
        bad = next(s for s in shape if not hasattr(s, "__index__"))
        raise TypeError(f"{calling_op()}(): argument must be tuple of ints, but found element "
                        f"of type {type(bad).__name__} ({bad!r}) in {list(shape)}") from None


def _infer_shape(shape, size, in_shape):
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"{calling_op()}(): invalid shape dimension {s} at index {i} of "
                               f"shape {list(shape)}; sizes are >= 0, or -1 to infer one")
    if shape.count(-1) > 1:
        raise RuntimeError(f"{calling_op()}(): only one dimension can be inferred (more than "
                           f"one -1 in the shape {list(shape)})")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 and size == 0:
            raise RuntimeError(
                f"{calling_op()}(): cannot reshape tensor of 0 elements into shape "
                f"{list(shape)} because the unspecified dimension size -1 can be any value and "
                "is ambiguous; give every size"
            )
        if known == 0 or size % known:
            raise RuntimeError(
                f"{calling_op()}(): shape '{list(shape)}' is invalid for input of size "
                f"{size} (input shape {list(in_shape)})"
            )
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif known != size:
        raise RuntimeError(
            f"{calling_op()}(): shape '{list(shape)}' is invalid for input of size {size} "
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
# a reshape of a non-contiguous tensor that strides can express (the same shape, or merging /
# splitting only dims that are contiguous with each other): a view in PyTorch too
_reshape_alias = defop("reshape", lambda a, shape, *rest: a.reshape(shape),
                       _reshape_back,
                       "ReshapeAliasBackward0", 1, NOTHING, view=True)
_unsafe_view = defop("reshape", lambda a, shape, *rest: a.reshape(shape),
                     _reshape_back,
                     "UnsafeViewBackward0", 1, NOTHING)


def _clone_forward(a, fmt=None):
    # PyTorch's clone allocates with the memory format (preserve_format by default: a
    # transposed input's copy stays transposed, so is_contiguous()/view() of it agree)
    if fmt is None and a.flags.c_contiguous and 1 not in a.shape:
        return a.copy()  # (the common case: row-major in, row-major out)
    return strided_copy(a, format_strides(a, fmt))


_clone = defop("clone", _clone_forward, lambda node, g, saved: (g,), "CloneBackward0", 1,
               NOTHING)


def clone(input, *, memory_format=None, out=None):  # noqa: A002 - PyTorch's names
    """A copy of ``input`` recorded as CloneBackward0, laid out in ``memory_format``
    (default ``preserve_format``: the input's strides when non-overlapping and dense, else
    dense in the input's stride order; ``contiguous_format``: row-major)."""
    if memory_format is None:
        return _clone(input, out=out)
    format_strides(getattr(input, "_data", input), memory_format)  # (checks it first)
    return _clone(input, memory_format, out=out)


def clone_contiguous(x):
    """``clone(x, memory_format=contiguous_format)``: a row-major copy (CloneBackward0), as
    PyTorch's contiguous(), reshape's copy and the ops that call them make."""
    return _clone(x, contiguous_format)


def reshape(x, *shape):
    """A tensor with ``x``'s data in a new shape (a view when possible); ``-1`` is inferred.

    Examples
    --------
    >>> import retrograd as T
    >>> T.arange(6.0).reshape(2, -1)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    shape = _infer_shape(_shape_arg(shape, "shape"), x.numel() if hasattr(x, "numel") else x.size,
                         x.shape)
    if not hasattr(x, "_data"):
        return x.reshape(shape)
    data = x._data
    if data.flags.c_contiguous or data.size <= 1:
        return track_view(x, reshape_op(x, shape, tuple(data.shape)))
    try:  # strides can express it (NumPy's rule is PyTorch's computeStride): a view
        data.reshape(shape, copy=False)
    except ValueError:
        pass
    else:
        return track_view(x, _reshape_alias(x, shape, tuple(data.shape)))
    # PyTorch copies (CloneBackward0), then views the copy as the new shape
    return _unsafe_view(clone_contiguous(x), shape, tuple(data.shape))


def view(x, *shape, dtype=None, size=None):
    """Like reshape, but never copies: a non-contiguous tensor raises, as in PyTorch.

    ``x.view(dtype)`` (or ``dtype=``) reads the memory as another dtype instead, not
    differentiably (ops/view_dtype.py)."""
    if dtype is not None or size is not None or (len(shape) == 1 and isinstance(
            shape[0], dtypes.dtype)):
        given = [a for a in (*shape, dtype, size) if a is not None]
        if len(given) != 1:
            raise TypeError(
                "view() received an invalid combination of arguments: it takes a dtype alone "
                "(x.view(retrograd.int32)) or a shape (x.view(2, 3), x.view(size=(2, 3))), "
                f"got {len(given)} arguments")
        if size is not None:
            shape = (size,)
        elif isinstance(given[0], dtypes.dtype):
            return view_dtype(x, given[0])
        else:
            raise TypeError(f"view(): argument 'dtype' must be retrograd.dtype, not "
                            f"{type(dtype).__name__} (e.g. x.view(retrograd.int32))")
    elif any(isinstance(s, dtypes.dtype) for s in shape):
        raise TypeError("view() received an invalid combination of arguments: a dtype is "
                        "given alone (x.view(retrograd.int32)), not with sizes")
    elif len(shape) == 1 and not hasattr(shape[0], "__index__") and not isinstance(
            shape[0], (tuple, list)):
        raise TypeError(f"view(): argument must be a retrograd.dtype or a tuple of ints, not "
                        f"{type(shape[0]).__name__} ({shape[0]!r}); e.g. x.view(retrograd."
                        "int32) or x.view(2, 3)")
    shape = _infer_shape(_shape_arg(shape, "size"), x._data.size, x._data.shape)
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
    s = _norm_dim(start_dim, len(shape))
    e = _norm_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError(
            f"flatten() has invalid args: start_dim cannot come after end_dim (start_dim="
            f"{start_dim}, end_dim={end_dim} for a tensor of shape {list(shape)}); swap them"
        )
    if not shape:
        return reshape(x, 1)
    if s == e:
        return x  # nothing to merge: PyTorch returns the tensor itself (a leaf stays a leaf)
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(x, shape[:s] + (n,) + shape[e + 1:])


# ----------------------------------------------------------------- permutations


def _transpose_fwd(a, d0, d1):
    if a.ndim == 0:  # transpose(0, -1) of a 0-d tensor: itself (NumPy has no axis to swap)
        return a.view()
    # the array's own method (NumPy's and CuPy's): np.swapaxes is a Python wrapper around
    # it, half the cost of a matmul derivative's transpose in a first-order backward
    return a.swapaxes(d0, d1)


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
    dims = _shape_arg(dims, "dims")
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
    if x.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {x.ndim}-D tensor (shape {list(x.shape)}).")
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


def squeeze(x, dim=None, *more):
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
    if more:  # x.squeeze(0, 1): the dims as varargs
        dim = (dim, *more)
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
        return track_view(x, _squeeze0(x, dims, shape))
    op = _squeeze2 if hasattr(dim, "__len__") else _squeeze1
    dims = tuple(dim) if hasattr(dim, "__len__") else (dim,)
    dims = _unique_dims(dims, len(shape))
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
    if a.__class__ is _ndarray and a.size and a.flags.c_contiguous:
        # the read-only view np.broadcast_to gives, built directly (its nditer set-up cost
        # more than the rest of a bias's derivative in a Hessian-vector product, bench/ (g))
        lead = len(shape) - a.ndim
        if lead >= 0:
            have = a.shape
            strides = [0] * lead
            for n, s, st in zip(have, shape[lead:], a.strides):
                if n == s:
                    strides.append(st)
                elif n == 1:
                    strides.append(0)
                else:
                    break  # (not expandable: NumPy's error, below)
            else:
                out = _ndarray(shape, a.dtype, a, 0, tuple(strides))
                out.setflags(False)  # (read-only; see reduce._broadcast_view)
                return out
    out = namespace(a).broadcast_to(a, shape)
    if out.__class__ is _ndarray and 1 in a.shape and a.size:
        # NumPy zeroes the stride of a size-1 dim that stays size 1; PyTorch keeps it, and
        # TensorIterator's layout sort reads it (ops/iter_layout.py)
        lead = len(shape) - a.ndim
        keep = tuple(st if n == 1 and m == 1 else ost for n, m, st, ost in
                     zip(a.shape, shape[lead:], a.strides, out.strides[lead:]))
        if keep != out.strides[lead:]:
            out = _as_strided(out, shape, out.strides[:lead] + keep, writeable=False)
    return out


expand_op = defop("expand", _expand_fwd,
                  lambda node, g, saved: (sum_to_size(g, node.params[1]),),
                  "ExpandBackward0", 1, NOTHING, view=True)
sum_to_size_op = defop("sum_to_size", lambda a, shape, in_shape=None: sum_to_array(a, shape),
                       lambda node, g, saved: (expand_op(g, node.params[1], node.params[0]),),
                       "SumBackward1", 1, NOTHING)


def sum_to_size(x, *shape):
    """Sum ``x`` over the dimensions that broadcasting to ``x.shape`` added or stretched."""
    shape = _shape_arg(shape, "size")
    have = tuple(x.shape)
    lead = len(have) - len(shape)
    if lead < 0 or any(s != 1 and s != have[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(f"sum_to_size(): size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(have)}}}; each size must be 1 or the tensor's own")
    return sum_to_size_op(x, shape, have)


def expand(x, *sizes):
    """Broadcast ``x`` to ``sizes`` without copying; ``-1`` keeps a dimension.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1.0], [2.0]]).expand(2, 3)
    tensor([[1., 1., 1.],
            [2., 2., 2.]])
    """
    sizes = _shape_arg(sizes, "size")
    shape = tuple(x.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    for i, want in enumerate(sizes):
        if want < 0 and (i < lead or want != -1):
            raise RuntimeError(
                f"expand(): the expanded size of the tensor ({want}) isn't allowed "
                + (f"in a leading, non-existing dimension {i}" if i < lead else
                   f"at dimension {i}: sizes are >= 0, or -1 to keep a dimension")
                + f" (target sizes {list(sizes)}, tensor sizes {list(shape)})"
            )
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
    return expand(x, tuple(shape))  # a tuple, so that broadcast_to(()) is not a missing size


# ----------------------------------------------------------------- join


def _channels_last(a):
    """PyTorch's is_channels_last_strides_2d/3d (suggest_memory_format): a 4-d (5-d) array
    whose strides order its dims N, H, W, C (N, D, H, W, C), ambiguous cases contiguous."""
    if a.ndim not in (4, 5):
        return False
    strides = [s // a.itemsize for s in a.strides]
    if strides[1] == 0:
        return False
    low = 0
    for d in ((1, 3, 2, 0) if a.ndim == 4 else (1, 4, 3, 2, 0)):
        if a.shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * (a.shape[d] if a.shape[d] > 1 else 1)
    return True


def _joined(out, inputs):
    """A join's result in PyTorch's layout: contiguous, unless every input is channels-last
    (cat_compute_output_memory_format), where NumPy's order-K result already follows them.
    (NumPy follows any shared layout: stack of transposed tensors gave a transposed result,
    so a later reshape was a copy where PyTorch's is a view: seed 12675358.)"""
    if out.flags.c_contiguous or all(_channels_last(a) for a in inputs):
        return out
    return namespace(out).ascontiguousarray(out)


def _cat_fwd(*args):
    *arrays, dim, sizes, skip = args
    kept = [a for a, s in zip(arrays, skip) if not s] or arrays  # (all legacy-empty: [0])
    return _joined(namespace(arrays[0]).concatenate(kept, axis=dim), kept)


def _cat_vjp(node, g, saved):
    dim, sizes, skip = node.params
    out = []
    start = 0
    for size, nxt, skipped in zip(sizes, node.next, skip):
        if skipped and nxt is not None:
            # PyTorch's cat_tensors_backward: a 1-D empty input gets fresh zeros, so under
            # create_graph its gradient does not require grad (fuzz seed 9450620)
            data = g._data if isinstance(g, Tensor) else g  # (an array when first order)
            zeros = namespace(data).zeros((0,), dtype=data.dtype)
            out.append(make_tensor(zeros) if isinstance(g, Tensor) else zeros)
        elif nxt is not None:
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


# Python's own values, which PyTorch refuses in a list of tensors (arrays pass: derivatives)
_PY_VALUES = frozenset((int, float, bool, complex, type(None), list, tuple, str))


def not_tensor_element(i, value):
    """PyTorch's TypeError for element ``i`` of a list of tensors that is a Python value."""
    return TypeError(f"expected Tensor as element {i} in argument 0, but got "
                     f"{type(value).__name__} (wrap it: retrograd.tensor(...))")


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
    for i, x in enumerate(tensors):
        if x.__class__ in _PY_VALUES:
            raise not_tensor_element(i, x)
        if x.ndim == 0:
            raise RuntimeError(f"cat(): zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated; use stack, or unsqueeze it first")
    # PyTorch skips "legacy empty" tensors (shape [0]) in every shape and dim check, and in
    # the join itself: cat([zeros(0), ones(2, 3)]) is ones(2, 3)
    skip = tuple(x.ndim == 1 and x.shape[0] == 0 for x in tensors)
    if all(skip):
        return apply_op(_cat.op, tensors, (0, (0,) * len(tensors), skip))
    ref = next(x for x, s in zip(tensors, skip) if not s)
    for i, x in enumerate(tensors):
        if skip[i]:
            continue
        if x.ndim != ref.ndim:
            raise RuntimeError(f"cat(): Tensors must have same number of dimensions: got "
                               f"{ref.ndim} and {x.ndim} (shapes {list(ref.shape)} and "
                               f"{list(x.shape)} at positions 0 and {i})")
    d = _norm_dim(dim, ref.ndim)
    for i, x in enumerate(tensors):
        if not skip[i] and any(
            a != b for j, (a, b) in enumerate(zip(x.shape, ref.shape)) if j != d
        ):
            raise RuntimeError(
                f"cat(): Sizes of tensors must match except in dimension {d}. Expected size "
                f"{list(ref.shape)} but got size {list(x.shape)} for tensor number {i} in the "
                "list."
            )
    sizes = tuple(0 if s else x.shape[d] for x, s in zip(tensors, skip))
    return apply_op(_cat.op, tensors, (d, sizes, skip))


def _stack_fwd(*args):
    *arrays, dim = args
    return _joined(namespace(arrays[0]).stack(arrays, axis=dim), arrays)


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
    for i, x in enumerate(tensors):
        if x.__class__ in _PY_VALUES:
            raise not_tensor_element(i, x)
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
register(cat, aliases=("concat", "concatenate"), method=False, signature="tensors, dim=0")
register(stack, method=False, signature="tensors, dim=0")
