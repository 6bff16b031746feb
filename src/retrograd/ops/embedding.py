"""Embeddings: ``embedding`` (EmbeddingBackward0), ``embedding_bag`` (EmbeddingBagBackward0)
and ``one_hot``.

Both records' derivatives scatter rows of the gradient back into the weight's shape with
``index_add`` (written with retrograd's ops, so they differentiate again: the derivative of
a scatter-add is a gather).  PyTorch's conventions: the ``padding_idx`` row gets no
gradient; ``scale_grad_by_freq`` divides each row's gradient by how often its index occurs
in the input; ``max_norm`` rescales, in place and without recording, the referenced rows of
the weight whose ``norm_type`` norm exceeds it (to ``max_norm / (norm + 1e-7)`` times
themselves), before the lookup.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import no_grad
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, defop
from ._errors import scalar_type_name
from .saved_checks import check_also
from .quiet_fp import quiet_fp


def _data(v):
    return v._data if isinstance(v, Tensor) else v


def _index_add_rows(xp, shape, dtype, index, rows):
    """``zeros(shape).index_add(0, index, rows)``: arrays (first order) or tensors."""
    if isinstance(rows, Tensor):
        from .scatter import index_add

        zeros = make_tensor(xp.zeros(shape, dtype))
        return index_add(zeros, 0, make_tensor(index), rows)
    return segment_sums(xp, shape, rows.dtype, index, rows)


def segment_sums(xp, shape, dtype, index, rows):
    """``zeros(shape)`` with ``rows[k]`` added at ``index[k]``: sorted by index and summed
    per run (np.add.reduceat), several times faster than the unbuffered np.add.at."""
    out = xp.zeros(shape, dtype)
    if index.shape[0] == 0:
        return out
    order = xp.argsort(index, kind="stable")
    uniq, starts = xp.unique(index[order], return_index=True)
    out[uniq] = xp.add.reduceat(xp.take(rows, order, 0), starts, axis=0)
    return out


def _take_rows(x, index):
    """``x[index]`` along dim 0, for an array or a tensor (recorded)."""
    if isinstance(x, Tensor):
        from .layout import index_select

        return index_select(x, 0, make_tensor(index))
    return x[index]


# ----------------------------------------------------------------- embedding


def _embedding_fwd(weight, indices, padding_idx, scale_grad_by_freq, num, dim):
    return namespace(weight).take(weight, indices, 0)  # (take: much faster than weight[idx])


def _embedding_vjp(node, g, saved):
    indices, padding_idx, scale_grad_by_freq, num, dim = node.params
    dtype = _data(g).dtype
    xp = namespace(indices)
    flat = indices.reshape(-1)
    rows = g.reshape(flat.shape[0], dim)
    coef = None
    if padding_idx >= 0:
        coef = (flat != padding_idx).astype(dtype)
    if scale_grad_by_freq:
        counts = xp.bincount(flat, minlength=num)
        scale = (1.0 / counts[flat]).astype(dtype)
        coef = scale if coef is None else coef * scale
    if coef is not None:
        rows = rows * coef[:, None]
    return (_index_add_rows(xp, (num, dim), dtype, flat, rows),)


_embedding = defop("embedding", _embedding_fwd, _embedding_vjp, "EmbeddingBackward0", 1, NOTHING)


def _check_indices(indices, name):
    t = _data(indices)
    if not hasattr(t, "dtype") or t.dtype.kind not in "iu" or t.dtype.itemsize not in (4, 8):
        what = (f"torch.{scalar_type_name(t.dtype)}Tensor" if hasattr(t, "dtype")
                else type(indices).__name__)
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {what} instead (while "
                           f"checking arguments for {name})")
    return t.astype("int64")


def _lookup(weight, idx, padding_idx, scale_grad_by_freq):
    if weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D (embedding got a weight of shape "
                           f"{list(weight.shape)}: (num_embeddings, embedding_dim))")
    num = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        bad = int(idx.max() if idx.max() >= num else idx.min())
        raise IndexError(f"index out of range in self (embedding: index {bad} for a weight "
                         f"of {num} rows; indices must be in [0, {num - 1}])")
    # the weight is the record's one input; the indices are a parameter
    return _embedding(weight, idx, int(padding_idx), bool(scale_grad_by_freq), *weight.shape)


@quiet_fp
def _renorm_rows(weight, idx, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows of ``weight`` used by ``idx`` whose norm exceeds
    ``max_norm`` are scaled down to it, in place (the weight's version goes up)."""
    xp = namespace(weight._data)
    with no_grad():
        rows = xp.unique(idx.reshape(-1))
        w = weight._data
        norms = xp.linalg.norm(w[rows], ord=norm_type, axis=1) if norm_type not in (0,) else \
            (w[rows] != 0).sum(1).astype(w.dtype)
        big = norms > max_norm
        if big.any():
            scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
            w[rows[big]] *= scale[:, None]
            weight._bump_version()


def embedding(input, weight, padding_idx=None, max_norm=None,  # noqa: A002
              norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` (num_embeddings, embedding_dim) at the indices ``input``: shape
    ``input.shape + (embedding_dim,)``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> T.nn.functional.embedding(T.tensor([2, 0]), w)
    tensor([[4., 5.],
            [0., 1.]])
    """
    if sparse:
        raise NotImplementedError("embedding(sparse=True): retrograd has no sparse gradients; "
                                  "use sparse=False (a dense gradient of the weight's shape)")
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.shape[0]:
            raise AssertionError(f"Padding_idx must be within num_embeddings (got {padding_idx}"
                                 f" for {weight.shape[0]} embeddings)")
        if padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError(f"Padding_idx must be within num_embeddings (got "
                                     f"{padding_idx} for {weight.shape[0]} embeddings)")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    idx = _check_indices(input, "embedding")
    if max_norm is not None:
        if weight.ndim == 2 and idx.size and 0 <= idx.min() and idx.max() < weight.shape[0]:
            _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    # (EmbeddingBackward0 saves the indices: an in-place change of them breaks backward)
    return check_also(_lookup(weight, idx, padding_idx, scale_grad_by_freq), input)


def torch_embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False,  # noqa: A002
                    sparse=False):
    """``retrograd.embedding``: PyTorch's ``torch.embedding(weight, indices, ...)``, the
    weight first and ``padding_idx`` not checked (F.embedding is the checked spelling)."""
    if sparse:
        raise NotImplementedError("embedding(sparse=True): retrograd has no sparse gradients")
    return check_also(_lookup(weight, _check_indices(input, "embedding"), padding_idx,
                              scale_grad_by_freq), input)


# ----------------------------------------------------------------- embedding_bag

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bag_layout(idx, offsets, include_last_offset, padding_idx):
    """Which bag each entry belongs to (-1: none), the number of bags, and the entries that
    count (not padding).  With ``include_last_offset``, entries past the last offset go to
    the last bag (as PyTorch's mean and max; offsets normally end at the input's length)."""
    n = idx.shape[0]
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    bags = max(bags, 0)
    bag_of = np.minimum(np.searchsorted(offsets, np.arange(n), side="right") - 1, bags - 1)
    keep = bag_of >= 0
    if padding_idx >= 0:
        keep &= idx != padding_idx
    return np.where(keep, bag_of, -1), bags, keep


@quiet_fp
def _bag_fwd(weight, psw, idx, bag_of, bags, keep, mode, freq_scale):
    xp = namespace(weight)
    dim = weight.shape[1]
    used = xp.nonzero(keep)[0]
    rows = xp.take(weight, idx[used], 0)
    if psw is not None:
        rows = rows * psw[used][:, None]
    if mode == 2:
        out = xp.zeros((bags, dim), weight.dtype)
        arg = xp.full((bags, dim), -1, dtype="int64")
        for b in range(bags):  # (a loop over bags: max has no scatter form in NumPy)
            sel = used[bag_of[used] == b]
            if sel.size:
                block = weight[idx[sel]]
                which = block.argmax(0)
                out[b] = block[which, xp.arange(dim)]
                arg[b] = idx[sel][which]
        return out, (arg,)
    out = segment_sums(xp, (bags, dim), weight.dtype, bag_of[used], rows)
    if mode == 1:
        counts = xp.bincount(bag_of[used], minlength=bags)
        out = out / xp.maximum(counts, 1)[:, None].astype(weight.dtype)
    return out, (None,)


def _bag_vjp(node, g, saved):
    weight, psw, arg = saved[:3]  # (then the indices and offsets: a version check only)
    idx, bag_of, bags, keep, mode, freq_scale = node.params
    nw, npsw = node.next
    num, dim = weight.shape
    dtype = _data(weight).dtype
    xp = namespace(idx)
    used = xp.nonzero(keep)[0]
    gw = gp = None
    if nw and mode == 2:
        valid = arg.reshape(-1) >= 0
        flat_index = (arg * dim + xp.arange(dim)[None, :]).reshape(-1)[valid]
        pos = xp.nonzero(valid)[0]
        src = _take_rows(g.reshape(-1), pos)
        gw = _index_add_rows(xp, (num * dim,), dtype, flat_index, src).reshape(num, dim)
    elif nw:
        coef = xp.ones(used.shape[0], dtype)
        if mode == 1:
            counts = xp.bincount(bag_of[used], minlength=bags)
            coef = coef / counts[bag_of[used]]
        if freq_scale is not None:
            coef = coef * freq_scale[idx[used]]
        rows = _take_rows(g, bag_of[used])
        if psw is not None:
            rows = rows * _take_rows(psw, used).reshape(-1, 1)
        gw = _index_add_rows(xp, (num, dim), dtype, idx[used], rows * coef[:, None])
    if npsw:  # d out[bag] / d psw[k] = weight[idx[k]]
        n = keep.shape[0]
        prod = (_take_rows(g, bag_of[used]) * _take_rows(weight, idx[used])).sum(1)
        gp = _index_add_rows(xp, (n,), dtype, used, prod)
    return (gw, gp)


_bag = defop("embedding_bag", _bag_fwd, _bag_vjp, "EmbeddingBagBackward0", 2, INPUTS,
             extras=True)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,  # noqa: A002
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sums, means or maxima of bags of embeddings: ``input`` (B, L) holds B bags of L
    indices, or ``input`` (n,) with ``offsets`` (B,) the start of each bag (and, with
    ``include_last_offset``, one more: the end of the last).  ``per_sample_weights`` scales
    each entry (``mode="sum"`` only); entries equal to ``padding_idx`` are left out.
    Empty bags give zeros.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> T.nn.functional.embedding_bag(T.tensor([0, 1, 2]), w, T.tensor([0, 2]))
    tensor([[1., 2.],
            [4., 5.]])
    """
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}"
                         f") is not None, then it must have the same shape as the input "
                         f"({list(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    idx = _check_indices(input, "embedding_bag")
    psw = per_sample_weights
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        if idx.shape[1] == 0:  # (PyTorch's arange of offsets fails: step must be nonzero)
            raise RuntimeError(f"embedding_bag(): a 2-D input of {idx.shape[0]} empty bags "
                               "(width 0) is refused, as PyTorch (step must be nonzero); pass "
                               "1-D indices with offsets for empty bags")
        offs = np.arange(idx.shape[0], dtype="int64") * idx.shape[1]
        include_last_offset = False
        idx = idx.reshape(-1)
        if psw is not None:
            psw = psw.reshape(-1)
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError(f"offsets has to be a 1D Tensor (embedding_bag got offsets of "
                             f"shape {list(offsets.shape)})")
        offs = _check_indices(offsets, "embedding_bag")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{idx.ndim}")
    if mode not in _MODES:
        raise ValueError(f"mode has to be one of sum, mean or max (embedding_bag got {mode!r})")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): retrograd has no sparse "
                                  "gradients; use sparse=False")
    if psw is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    num = weight.shape[0]
    if padding_idx is None:
        padding_idx = -1
    elif not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                           f"through {num - 1}, but got {padding_idx}")
    elif padding_idx < 0:
        padding_idx += num
    if offs.size and offs[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offs[0])}")
    if offs.size and offs[-1] > idx.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"{idx.shape[0]} but got offsets[-1] of {int(offs[-1])}")
    if offs.size > 1 and (np.diff(offs) < 0).any():
        raise RuntimeError(f"embedding_bag(): offsets must be non-decreasing, got "
                           f"{offs.tolist()}")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        bad = int(idx.max() if idx.max() >= num else idx.min())
        raise RuntimeError(f"embedding_bag(): index {bad} is out of range for a weight of "
                           f"{num} rows (Expected i < index_size; indices must be in "
                           f"[0, {num - 1}])")
    if max_norm is not None:
        _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    bag_of, bags, keep = _bag_layout(idx, offs, include_last_offset, padding_idx)
    freq = None
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num)
        freq = (1.0 / np.maximum(counts, 1)).astype(weight._data.dtype)
    # (EmbeddingBagBackward0 saves the indices and offsets: their versions count)
    return check_also(_bag(weight, psw, idx, bag_of, bags, keep, _MODES[mode], freq), input,
                      offsets)


# ----------------------------------------------------------------- one_hot


def one_hot(tensor, num_classes=-1):
    """Class indices (int64) as one-hot rows: shape ``tensor.shape + (num_classes,)``, int64;
    ``num_classes=-1`` takes the largest index + 1.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.one_hot(T.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError("one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__} (wrap it: retrograd.tensor(...))")
    t = _data(tensor)
    if not hasattr(t, "dtype") or t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = namespace(t)
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes < 0 or (t.size and t.max() >= num_classes):
        raise RuntimeError(f"Class values must be smaller than num_classes. (one_hot got "
                           f"num_classes={num_classes})")
    out = (t[..., None] == xp.arange(num_classes)).astype("int64")
    return make_tensor(out)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(torch_embedding, "embedding", method=False)
register(embedding, function=False, method=False, functional=("embedding",))
register(embedding_bag, function=False, method=False, functional=("embedding_bag",))
register(one_hot, function=False, method=False, functional=("one_hot",), differentiable=False)
