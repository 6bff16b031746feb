"""``slice_inverse``: PyTorch's inverse of a slice (``torch.slice_inverse``, an op of its
functionalization pass): given ``input``, a slice ``src[dim, start:end:step]`` of ``src``,
it returns ``input``'s storage seen with ``src``'s sizes, strides and offset, i.e. ``src``
as ``input`` sees it (the whole base of the slice).

Its derivative is PyTorch's (SliceInverseBackward0): ``input`` gets the gradient's slice
``[start:end:step]`` along ``dim``, ``src`` the rest (the gradient with that slice zeroed).
The result holds the values (a new array): writing into it does not reach ``input``, where
PyTorch's result is a view.
"""

from __future__ import annotations

from ..tensor import Tensor
from ._apply import NOTHING, defop
from .strided import as_strided
from .take_put import slice_scatter


def _slice(g, dim, start, end, step):
    index = [slice(None)] * g.ndim
    index[dim] = slice(start, end, step)
    return g[tuple(index)]


def _vjp(node, g, saved):
    _, dim, start, end, step, zeros_shape = node.params
    if zeros_shape is None:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-g.ndim}, {g.ndim - 1}], but got {dim}) (slice_inverse's dim)")
    n_self, n_src = node.next
    gs = _slice(g, dim, start, end, step) if n_self else None
    if n_src:
        if isinstance(g, Tensor):
            gsrc = slice_scatter(g, g.new_zeros(zeros_shape), dim, start, end, step)
        else:
            gsrc = g.copy()
            index = [slice(None)] * g.ndim
            index[dim] = slice(start, end, step)
            gsrc[tuple(index)] = 0
    else:
        gsrc = None
    return gs, gsrc


_slice_inverse = defop("slice_inverse", lambda a, s, values, *params: values, _vjp,
                       "SliceInverseBackward0", 2, NOTHING)


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):  # noqa: A002
    """``input`` (a slice of ``src`` along ``dim``) seen as the whole of ``src``: its
    storage with ``src``'s sizes, strides and storage offset.

    Examples
    --------
    >>> import retrograd as T
    >>> base = T.arange(6.0).reshape(3, 2)
    >>> T.slice_inverse(base[1:], base, 0, 1)
    tensor([[0., 1.],
            [2., 3.],
            [4., 5.]])
    """
    for name, t in (("input", input), ("src", src)):
        if not isinstance(t, Tensor):
            raise TypeError(f"slice_inverse(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    values = as_strided(input.detach(), tuple(src.shape), src.stride(),
                        src.storage_offset())._data
    if not -src.ndim <= dim < max(src.ndim, 1):
        # PyTorch reads dim only in backward; so does this one (it raises there)
        return _slice_inverse(input, src, values, dim, start, end, step, None)
    dim %= max(src.ndim, 1)
    zeros_shape = tuple(_slice(values, dim, start, end, step).shape)
    return _slice_inverse(input, src, values, dim, start, end, step, zeros_shape)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(slice_inverse, method=False)
