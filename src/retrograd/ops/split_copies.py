"""``split_copy``, ``split_with_sizes_copy``, ``unbind_copy``: the pieces of ``split`` /
``unbind`` as new tensors (no memory shared with the input), recorded as one node of several
outputs named after the view's, as PyTorch's (SplitBackward0_copy...).  The derivative is
the view's: the pieces' gradients concatenated (stacked for unbind), with retrograd's ops.
"""

from __future__ import annotations

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..tensor import make_tensor
from ._apply import NOTHING, multi_output_class, record_multi
from .layout import split, unbind
from .shape import _norm_dim, cat, stack


def _cat_vjp(node, grads, saved):
    return (cat(list(grads), node.params[0]),)


def _stack_vjp(node, grads, saved):
    return (stack(list(grads), node.params[0]),)


_SplitCopy = multi_output_class("SplitBackward0_copy", _cat_vjp, NOTHING)
_SplitWithSizesCopy = multi_output_class("SplitWithSizesBackward0_copy", _cat_vjp, NOTHING)
_UnbindCopy = multi_output_class("UnbindBackward0_copy", _stack_vjp, NOTHING)


def _copies(input, pieces, node_cls, dim):  # noqa: A002
    outs = [make_tensor(p._data.copy()) for p in pieces]
    params = (_norm_dim(dim, input.ndim),)
    if input.requires_grad and state.enabled:
        record_multi(node_cls, input, outs, params)
    if fw.active:  # forward AD: the tangents (ops/_jvp.py), as split's
        fw.propagate_multi(node_cls, input, outs, params)
    return tuple(outs)


def split_copy(input, split_size, dim=0):  # noqa: A002
    """``split(input, split_size, dim)`` as copies.

    Examples
    --------
    >>> import retrograd as T
    >>> [p.tolist() for p in T.split_copy(T.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    if hasattr(split_size, "__len__"):
        raise TypeError(f"split_copy(): argument 'split_size' must be int, not "
                        f"{type(split_size).__name__} (split_with_sizes_copy takes a list)")
    n = input.shape[_norm_dim(dim, input.ndim)] if input.ndim else 0
    if split_size == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {n}")
    return _copies(input, split(input.detach(), split_size, dim), _SplitCopy, dim)


def split_with_sizes_copy(input, split_sizes, dim=0):  # noqa: A002
    """``split(input, split_sizes, dim)`` (a list of sizes) as copies."""
    return _copies(input, split(input.detach(), list(split_sizes), dim), _SplitWithSizesCopy,
                   dim)


def unbind_copy(input, dim=0):  # noqa: A002
    """``unbind(input, dim)`` as copies."""
    return _copies(input, unbind(input.detach(), dim), _UnbindCopy, dim)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (split_copy, split_with_sizes_copy, unbind_copy):
    register(_fn, method=False)
