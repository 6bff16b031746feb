"""``retrograd.embedding_bag``: PyTorch's top-level ``torch.embedding_bag``, the ATen form
behind ``nn.functional.embedding_bag``.

Its signature differs from the functional's (the weight first, ``mode`` an int: 0 sum,
1 mean, 2 max, ``offsets`` required) and it returns four tensors: ``(output, offset2bag,
bag_size, max_indices)``.  The output is the functional's (the same EmbeddingBagBackward0
record, ops/embedding.py); the three int64 tensors follow PyTorch's CPU kernel, including
its quirks (checked against torch 2.13):

With ``include_last_offset`` the last offset must be the input's length, as PyTorch
documents: PyTorch's kernels disagree with each other past it (its float32 fast path drops
the trailing entries but divides a mean by their count, and its backward reads uninitialised
memory there), so retrograd gives the trailing entries to the last bag, as its float64 path.

* ``offset2bag``: the bag of every index (padding entries too; with
  ``include_last_offset``, entries past the last offset belong to the last bag).  Empty in
  sum mode on PyTorch's fast path (float32/float16 weight with unit row stride, no
  ``padding_idx``), where the kernel never computes it.
* ``bag_size``: the entries per bag, padding left out, for mean and max; zeros for sum
  (one per bag; one per offset, even with ``include_last_offset``, when grad mode is on and
  neither the weight nor ``per_sample_weights`` requires grad: PyTorch's forward-only kernel).
* ``max_indices``: for max, the weight row chosen for every (bag, column), 0 for an empty
  bag; for mean, a copy of ``bag_size``; for sum, zeros (as many as ``bag_size``).
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import make_tensor
from . import embedding as _emb

_MODE_NAMES = {0: "sum", 1: "mean", 2: "max"}


def _fast_path(weight, padding_idx):
    w = weight._data
    return (w.dtype in (np.float32, np.float16) and padding_idx is None
            and (w.shape[1] <= 1 or w.strides[1] == w.itemsize))


def _max_indices(w, idx, bag_of, bags):
    """The row index of the first maximum of each (bag, column); 0 for an empty bag."""
    xp = namespace(w)
    dim = w.shape[1]
    out = xp.zeros((bags, dim), dtype="int64")
    used = xp.nonzero(bag_of >= 0)[0]
    if used.size == 0:
        return out
    rows = xp.take(w, idx[used], 0)
    bag = bag_of[used]  # non-decreasing: bags are runs of entries
    starts = xp.nonzero(xp.r_[True, bag[1:] != bag[:-1]])[0]
    best = xp.maximum.reduceat(rows, starts, axis=0)
    run = xp.cumsum(xp.r_[0, (bag[1:] != bag[:-1]).astype("int64")])
    hit = rows == best[run]
    n = used.shape[0]
    pos = xp.where(hit, xp.arange(n)[:, None], n)
    first = xp.minimum.reduceat(pos, starts, axis=0)
    out[bag[starts]] = idx[used][first]
    return out


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Bags of embeddings, as ``torch.embedding_bag``: returns ``(output, offset2bag,
    bag_size, max_indices)``; ``mode`` is 0 (sum), 1 (mean) or 2 (max).

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> out, offset2bag, bag_size, _ = T.embedding_bag(w, T.tensor([0, 1, 2]),
    ...                                                T.tensor([0, 2]), mode=1)
    >>> out, offset2bag, bag_size
    (tensor([[1., 2.],
            [4., 5.]]), tensor([0, 0, 1]), tensor([2, 1]))
    """
    if not hasattr(offsets, "_data"):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, "
                        f"not {type(offsets).__name__}")
    if mode not in _MODE_NAMES:
        raise RuntimeError(f"`mode` must be sum, mean, or max. (embedding_bag got mode={mode!r}"
                           "; pass 0 for sum, 1 for mean, 2 for max)")
    idx = _emb._check_indices(indices, "embedding_bag")
    _emb._check_indices(offsets, "embedding_bag")
    if idx.ndim != 1:
        # PyTorch reads a 2-D input's length as its first dimension here; retrograd asks for
        # the flat form that the top-level function is documented for
        raise RuntimeError(f"embedding_bag(): indices must be 1-D with offsets (got shape "
                           f"{list(indices.shape)}); flatten them, or call "
                           "nn.functional.embedding_bag with a 2-D input and no offsets")
    if mode == 2:
        scale_grad_by_freq = False  # (PyTorch's max backward ignores it; F refuses it)
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError(f"embedding_bag: per_sample_weights only supported with mode='sum' "
                           f"(got mode={mode}, '{_MODE_NAMES[mode]}')")
    out = _emb.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                             _MODE_NAMES[mode], sparse, per_sample_weights,
                             include_last_offset, padding_idx)
    num = weight.shape[0]
    pad = -1 if padding_idx is None else padding_idx % num
    offs = offsets._data.astype("int64")
    bag_of, bags, keep = _emb._bag_layout(idx, offs, include_last_offset, pad)
    xp = namespace(idx)
    # every entry's bag, padding entries too (bag_of marks those -1)
    all_bags = xp.minimum(xp.searchsorted(offs, xp.arange(idx.shape[0]), side="right") - 1,
                          bags - 1).astype("int64")
    if mode == 0 and _fast_path(weight, padding_idx):
        offset2bag = xp.zeros((0,), dtype="int64")
    else:
        offset2bag = all_bags
    if mode == 0:
        # PyTorch's forward-only kernel (grad mode on, nothing requiring grad) makes these
        # one per offset, include_last_offset or not; its other paths, one per bag
        forward_only = state.enabled and not (weight.requires_grad or (
            per_sample_weights is not None and per_sample_weights.requires_grad))
        n = offs.shape[0] if forward_only else bags
        bag_size = xp.zeros((n,), dtype="int64")
        max_indices = xp.zeros((n,), dtype="int64")
    else:
        bag_size = xp.bincount(bag_of[keep], minlength=bags).astype("int64")[:bags]
        max_indices = (bag_size.copy() if mode == 1
                       else _max_indices(weight._data, idx, bag_of, bags))
    return (out, make_tensor(offset2bag), make_tensor(bag_size), make_tensor(max_indices))


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(embedding_bag, method=False)
