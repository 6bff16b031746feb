"""Batched derivatives of the common nodes, on physical gradients (batch in dimension 0).

For ``autograd.grad(..., is_grads_batched=True)`` (``batched_backward.py``): these node
types' own formulas branch on the gradient being an array (``hasattr(g, "_data")``) or
call op records that have no batching rule, so a BatchedTensor cannot go through them.
Each function here takes the node, its physical gradient ``g`` (``[batch, *out_shape]``),
the node's saved tensors and the batch size, and returns one physical gradient (or None)
per input -- the same values as the node's ``vjp`` applied to every sample, computed with
public ops on tensors, so that under ``create_graph=True`` they are recorded (double
backward through an is_grads_batched result works).
"""

from __future__ import annotations

from ..ops import elementary, embedding, index, layout, linalg, linear, nll, nn, reduce, shape
from ..ops.index import _index_backward
from ..ops.pointwise import threshold_backward, where
from ..ops.reduce import _keep_shape
from ..ops.shape import input_meta

__all__ = ["PHYSICAL", "sum_to_batched"]


def sum_to_batched(g, shape, batch):
    """A physical gradient ``[batch, *broadcast shape]`` summed to ``[batch, *shape]``."""
    have = tuple(g.shape[1:])
    lead = len(have) - len(shape)
    dims = [1 + i for i in range(lead)] + [
        1 + lead + i for i, n in enumerate(shape) if n == 1 and have[lead + i] != 1]
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(batch, *shape)


def _spread(g, in_shape, axes, batch):
    """A reduced gradient sent back to every element reduced (sum's and mean's derivative)."""
    keep = _keep_shape(in_shape, axes)
    return g.reshape(batch, *keep).expand(batch, *in_shape)


def _sum(node, g, saved, batch):
    axes, keepdim, in_shape = node.params
    return (_spread(g, in_shape, axes, batch),)


def _mean(node, g, saved, batch):
    axes, keepdim, in_shape, count = node.params
    return (_spread(g, in_shape, axes, batch) / count,)


def _reshape(node, g, saved, batch):
    shape, in_shape = node.params
    return (g.reshape(batch, *in_shape),)


def _shift(dim):
    """A dimension of the logical tensor, as a dimension of the physical one."""
    return dim + 1 if dim >= 0 else dim


def _log_softmax(node, g, saved, batch):
    (y,) = saved
    d = _shift(node.params[0])
    return (g - y.exp() * g.sum(d, keepdim=True),)


def _log_softmax_backward(node, g, saved, batch):
    # LogSoftmaxBackwardDataBackward0 (log_softmax's derivative under create_graph): its
    # sums run over the shifted dim of the batched g, the saved values are unbatched
    go, y = saved
    dim = node.params[0]
    n_go, n_y = node.next
    e = y.exp()
    return ((g - (g * e).sum(_shift(dim), keepdim=True)) if n_go else None,
            (-go.sum(dim, keepdim=True) * e * g) if n_y else None)


def _softmax(node, g, saved, batch):
    (y,) = saved
    d = _shift(node.params[0])
    gy = g * y
    return (gy - y * gy.sum(d, keepdim=True),)


def _relu(node, g, saved, batch):
    (out,) = saved
    # the record itself (one where, and its double backward): out broadcasts over the batch
    return (threshold_backward(g, out.unsqueeze(0).expand(batch, *out.shape)),)


def _one_hot(target, classes, class_dim, dtype):
    """``[... C at class_dim ...]``: 1 where the class is the target (a constant)."""
    from .._creation import arange

    arange = arange(classes).reshape(*([1] * class_dim), classes,
                                            *([1] * (target.dim() - class_dim)))
    return (target.unsqueeze(class_dim) == arange).to(dtype)


def _nll(node, g, saved, batch):
    in_shape, dtype = input_meta(node)
    if len(node.params) == 3:  # the common (N, C) record: no weights, no ignored targets
        target, reduction, count = node.params
        weights, class_dim = None, 1
        if reduction == "mean":
            g = g / count
        ignored = None
    else:
        target, weights, reduction, total, class_dim, ignored = node.params
        if reduction == "mean":
            g = g / total
    from .._creation import tensor

    target = tensor(target)
    tshape = tuple(target.shape)
    if reduction != "none":
        g = g.reshape(batch, *([1] * len(tshape)))
    g = -g
    if weights is not None:
        g = g * tensor(weights, dtype=dtype)
    if ignored is not None:  # 0 there, not 0 * (g / 0 total) = nan, as ops/nn.py's
        g = where(tensor(ignored), 0.0, g)
    hot = _one_hot(target, in_shape[class_dim], class_dim, dtype)
    return ((g.unsqueeze(class_dim + 1) * hot).expand(batch, *in_shape),)


def _advanced_adjacent(index) -> bool:
    """Whether NumPy keeps the indexed dimensions in place (every advanced index -- an array
    or an int beside one -- next to each other): then a leading ``:`` for the batch leaves
    the batch in front of the result, as the physical gradient has it."""
    spots = [i for i, x in enumerate(index) if not (x is None or x is Ellipsis
                                                    or isinstance(x, slice))]
    return not spots or spots == list(range(spots[0], spots[-1] + 1))


def _getitem(node, g, saved, batch):
    index, shape, basic = node.params
    index = index if isinstance(index, tuple) else (index,)
    if not basic and not _advanced_adjacent(index):
        return None  # advanced indices moved to the front: the per-sample loop
    # the record itself (zeros, then the gradient written or added at the index), whose own
    # derivative is getitem: double backward through it works
    return (_index_backward(g, (slice(None), *index), (batch, *shape), basic),)


def _embedding(node, g, saved, batch):
    indices, padding_idx, scale_grad_by_freq, num, dim = node.params
    from .._creation import tensor

    flat = indices.reshape(-1)
    rows = g.reshape(batch, flat.shape[0], dim)
    coef = None
    if padding_idx >= 0:
        coef = (flat != padding_idx).astype(float)
    if scale_grad_by_freq:
        import numpy as np  # (the indices are a host array: their counts are host work)

        scale = 1.0 / np.bincount(flat, minlength=num)[flat]
        coef = scale if coef is None else coef * scale
    if coef is not None:
        rows = rows * tensor(coef, dtype=rows.dtype).reshape(1, -1, 1)
    return (_index_backward(rows, (slice(None), flat), (batch, num, dim), False),)


def _transpose(node, g, saved, batch):
    d0, d1 = node.params
    return (g.transpose(d0 + 1, d1 + 1),)


def _t(node, g, saved, batch):
    return (g.transpose(-2, -1) if g.dim() == 3 else g,)


def _permute(node, g, saved, batch):
    (dims,) = node.params
    back = [0] * len(dims)
    for i, p in enumerate(dims):
        back[p] = i
    return (g.permute(0, *(d + 1 for d in back)),)


def _back_to_input_shape(node, g, saved, batch):
    """squeeze / unsqueeze: the gradient has the input's elements in its order."""
    return (g.reshape(batch, *input_meta(node)[0]),)


def _expand(node, g, saved, batch):
    return (sum_to_batched(g, input_meta(node)[0], batch),)


def _split(node, grads, saved, batch):
    from ..ops.shape import cat

    return (cat(list(grads), _shift(node.params[0])),)


def _unbind(node, grads, saved, batch):
    from ..ops.shape import stack

    return (stack(list(grads), _shift(node.params[0])),)


def _mm_pair(g, a, b, need_a, need_b, batch):
    """The gradients of ``a @ b`` (both 2-D) for a batch ``g`` ``[batch, m, n]``, each as one
    matrix product over the whole batch (a batched matmul of many small matrices is what
    NumPy does slowly)."""
    m, n = g.shape[1], g.shape[2]
    ga = gb = None
    if need_a:  # g @ b^T, the batch folded into the rows
        ga = _product(g.reshape(batch * m, n), b.t()).reshape(batch, m, b.shape[0])
    if need_b:  # a^T @ g, the batch folded into the columns
        cols = g.permute(1, 0, 2).reshape(m, batch * n)
        gb = _product(a.t(), cols).reshape(a.shape[1], batch, n).permute(1, 0, 2)
    return ga, gb


def _product(p, q):
    """``p @ q``; an outer product (one row of ``q``) as a broadcast multiply, which NumPy
    does some 25x faster than its matmul with an inner dimension of 1 (a vector input's
    weight gradient: x (1, K) gives a^T of shape (K, 1))."""
    return p * q if p.shape[1] == 1 else p @ q


def _matmul(node, g, saved, batch):
    a, b = saved
    # (an operand only the other's gradient reads is saved alone: both are matrices when the
    # saved ones are and the result is one)
    if len(node.out_shape) != 2 or any(x is not None and x.dim() != 2 for x in (a, b)):
        return None  # vectors and batches of matrices: the BatchedTensor formula
    na, nb = node.next
    return _mm_pair(g, a, b, na is not None, nb is not None, batch)


def _addmm(node, g, saved, batch):
    _, x, wt = saved
    beta, alpha = node.params if node.params else (1, 1)
    nbias, nx, nw = node.next
    ga = g if alpha == 1 else g * alpha
    gx, gw = _mm_pair(ga, x, wt, nx is not None, nw is not None, batch)
    return ((g if beta == 1 else g * beta) if nbias is not None else None, gx, gw)


def _vjp_of(record):
    return record.op.node_cls.vjp


#: a node's derivative formula (its ``vjp``, which tells records sharing a name apart) ->
#: the batched derivative on physical tensors
PHYSICAL = {
    reduce._sum_vjp: _sum, reduce._mean_vjp: _mean, shape._reshape_back: _reshape,
    nn._log_softmax_vjp: _log_softmax, nn._log_softmax_backward_vjp: _log_softmax_backward,
    nn._softmax_vjp: _softmax, elementary._relu_vjp: _relu,
    nll._nll_vjp: _nll, nll._nll_general_vjp: _nll, index._getitem_vjp: _getitem,
    embedding._embedding_vjp: _embedding,
    _vjp_of(shape.transpose_op): _transpose, _vjp_of(shape._t_op): _t,
    _vjp_of(shape.permute_op): _permute, shape._squeeze_vjp: _back_to_input_shape,
    _vjp_of(shape.unsqueeze_op): _back_to_input_shape, _vjp_of(shape.expand_op): _expand,
    layout._split_vjp: _split, layout._unbind_vjp: _unbind,
    linalg._matmul_vjp: _matmul, linear._addmm_vjp: _addmm,
}
