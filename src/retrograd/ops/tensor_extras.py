"""Tensor methods about storage and identity (issue 6): ``new`` (the legacy constructor of the
tensor's dtype), ``storage_offset``, ``output_nr``, ``resize_``/``resize_as_`` (not
recorded; refused on a tensor that requires grad, as PyTorch), and ``narrow_copy``.
"""

from __future__ import annotations

import operator

from ..autograd.grad_mode import no_grad, state
from ..backend import namespace
from ..tensor import Tensor, above
from . import layout
from ._apply import defop
from .padding import pad


def new(self, *args, **kwargs):
    """``x.new(2, 3)`` (zeros of x's dtype; PyTorch's are uninitialised) or ``x.new(data)``;
    ``x.new()`` is empty."""
    return above.legacy_new(type(self), self.dtype, args, dict(kwargs))


def _root(a):
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def storage_offset(self):
    """How many elements into its storage the tensor starts (0 unless it is a view)."""
    a = self._data
    root = _root(a)
    try:
        start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    except AttributeError:  # CuPy
        start = a.data.ptr - root.data.ptr
    return int(start // a.itemsize)


def output_nr(self):
    """Which output of its grad_fn this tensor is (0 for a leaf)."""
    return int(self._nr or 0)


def _sizes(args, name):
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) or (
        len(args) == 1 and hasattr(args[0], "__len__")) else args
    for s in sizes:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__}")
        if operator.index(s) < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(sizes)}")
    return tuple(operator.index(s) for s in sizes)


def _resize(x, sizes, name):
    if state.enabled and x._requires_grad:
        raise RuntimeError(f"cannot resize variables that require grad ({name} of a tensor of "
                           f"shape {list(x.shape)}; detach it first)")
    a = x._data
    xp = namespace(a)
    n = 1
    for s in sizes:
        n *= s
    if tuple(a.shape) == sizes:
        return x
    # PyTorch keeps the tensor's storage and storage offset and gives it row-major strides
    # for the new sizes: its elements are the storage's from the offset on, in memory order
    # (a transposed tensor's are not its row-major values); a storage too small grows, its
    # new elements uninitialised there, zeros here (and other views of it keep the old one)
    from .strided import _storage

    info = _storage(a)
    if info is None or any(st < 0 for st in info[2]):  # no storage to address: the values
        flat, offset = xp.ascontiguousarray(a).reshape(-1), 0
    else:
        flat, offset, _ = info
    if offset + n > flat.size:
        bigger = xp.zeros((offset + n,), dtype=a.dtype)
        bigger[:flat.size] = flat
        flat = bigger
    strides, step = [], a.itemsize
    for s in reversed(sizes):
        strides.append(step)
        step *= max(s, 1)
    x._data = xp.lib.stride_tricks.as_strided(flat[offset:], sizes, tuple(reversed(strides)))
    x._bump_version()
    return x


def resize_(self, *sizes, memory_format=None):
    """Give the tensor the shape ``sizes`` in place, keeping its first elements."""
    return _resize(self, _sizes(sizes, "resize_"), "resize_")


def resize_as_(self, the_template, memory_format=None):
    """``resize_`` to the shape of ``the_template``."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, "
                        f"not {type(the_template).__name__}")
    return _resize(self, tuple(the_template.shape), "resize_as_")


def _narrow_copy_fwd(a, dim, start, length, in_shape):
    index = (slice(None),) * dim + (slice(start, start + length),)
    return a[index].copy()


def _narrow_copy_vjp(node, g, saved):
    # the gradient of a slice: g zero-padded back to the input's shape (pad records, so
    # every order works)
    dim, start, length, in_shape = node.params
    flat = []
    for d in reversed(range(len(in_shape))):
        flat += [start, in_shape[d] - start - length] if d == dim else [0, 0]
    if isinstance(g, Tensor):
        return (pad(g, flat),)
    widths = [(0, 0)] * len(in_shape)
    widths[dim] = (start, in_shape[dim] - start - length)
    return (namespace(g).pad(g, widths),)


_narrow_copy = defop("narrow_copy", _narrow_copy_fwd, _narrow_copy_vjp, "NarrowCopyBackward0", 1)


def narrow_copy(input, dim, start, length):  # noqa: A002
    """``narrow`` as a new tensor (a copy, not a view of ``input``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"narrow_copy(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    n = input.ndim
    if isinstance(dim, int) and n and not -n <= dim < n:  # (narrow's is an IndexError)
        raise RuntimeError(f"narrow_copy(): dim {dim} out of range for a tensor with {n} "
                           f"dimension(s) (expected a dim in [{-n}, {n - 1}])")
    with no_grad():
        layout.narrow(input, dim, start, length)  # checks the arguments as PyTorch
    dim = dim % input.ndim
    start = start + input.shape[dim] if start < 0 else start
    return _narrow_copy(input, dim, start, length, tuple(input.shape))


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(new, function=False, differentiable=False)
register(storage_offset, function=False, differentiable=False)
register(output_nr, "output_nr", function=False, method=False,
         tensor={"output_nr": property(output_nr)}, differentiable=False)
register(resize_, function=False, differentiable=False)
register(resize_as_, function=False, differentiable=False)
register(narrow_copy, signature="input, dim, start, length")
