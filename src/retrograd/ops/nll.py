"""The negative log-likelihood losses: ``nll_loss`` and ``cross_entropy`` (log_softmax
followed by nll_loss, as PyTorch records it; class weights, ignore_index, label smoothing,
probability targets), with their own derivative records.
"""

from __future__ import annotations

import numpy as _np

from ..backend import as_array, namespace
from ..tensor import Tensor as _Tensor
from ..tensor import make_tensor as _make_tensor
from ._errors import PY_VALUES, float_only, not_a_tensor
from ._apply import INPUTS, NOTHING, defop
from .index import _scatter_fwd
from . import pointwise as _pointwise
from .pointwise import add_number, mul_number
from .shape import input_meta, reshape_op
from .saved_checks import check_also
from .elementwise_losses import _check_reduction, legacy_reduction
from .nn import _log_softmax, log_softmax, one_hot_grad
from .loss_checks import nll_kernel_dtypes, nll_one_sample_backward
from .quiet_fp import quiet_fp


_ndarray = _np.ndarray
_max_reduce = _np.maximum.reduce
_NLL_TARGET_DTYPES = (_np.dtype(_np.int64), _np.dtype(_np.uint8))
# NumPy's built-in dtypes are singletons: ``is`` tests them without a Python-level lookup
# (``dtype.name`` runs NumPy's Python code: a tenth of nll_loss's forward)
_F32 = _np.dtype("float32")
_F64 = _np.dtype("float64")
_I64 = _np.dtype("int64")
_U64 = _np.dtype("uint64")
# the largest count a float32 holds exactly: ``g / count`` in Python's float64 rounds to
# float32 as NumPy's float32 division does (double rounding is exact for one division)
_F32_EXACT_INT = 1 << 24


def _rows(n):
    """``arange(n)`` (read-only, kept per n): the row index of an (N, C) pick."""
    rows = _ROWS.get(n)
    if rows is None:
        rows = _np.arange(n)
        rows.flags.writeable = False
        if len(_ROWS) < 64:
            _ROWS[n] = rows
    return rows


def _row_offsets(n, c):
    """``arange(n) * c`` (read-only, kept per shape): plus the targets, their flat positions
    in an (N, C) array, for ``take``/``put`` (a third of fancy indexing's cost)."""
    offsets = _OFFSETS.get((n, c))
    if offsets is None:
        offsets = _np.arange(0, n * c, c)
        offsets.flags.writeable = False
        if len(_OFFSETS) < 64:
            _OFFSETS[(n, c)] = offsets
    return offsets


_ROWS = {}
_OFFSETS = {}


def _nll_fwd(logp, target, reduction, count):
    if type(logp) is _ndarray and type(target) is _ndarray:
        # fancy indexing: ~3x faster than take_along_axis on a training batch (bench/ (e));
        # the ufunc's reduction itself (ndarray.sum goes through NumPy's Python wrapper)
        picked = logp[_rows(logp.shape[0]), target]
        if reduction == "none":
            return -picked
        total = _add_reduce(picked, None)
    else:
        xp = namespace(logp)
        picked = logp[xp.arange(logp.shape[0]), target]
        if reduction == "none":
            return -picked
        total = picked.sum()
    # (negating the sum rather than each term: the same values, exactly, one array op fewer)
    return -total / count if reduction == "mean" else -total


def _nll_grad_fwd(g, logp, target, reduction, count, shape, dtype):
    # the (N, C) gradient in one allocation: zeros, -g (over count) at the targets; the
    # input ``logp`` is not read (PyTorch's nll_loss_backward takes it, see _nll_grad)
    xp = namespace(g)
    out = xp.zeros(shape, dtype)
    out[xp.arange(target.shape[0]), target] = -(g / count) if reduction == "mean" else -g
    return out


def _input_zeros(gg, shape, dtype):
    """The input's exact-zero derivative of an nll_loss derivative record (PyTorch's
    ``self: zeros_like(grad)``), an array or a Tensor as ``gg`` is."""
    if hasattr(gg, "_data"):
        return _make_tensor(namespace(gg._data).zeros(shape, dtype))
    return namespace(gg).zeros(shape, dtype)


def _nll_grad_vjp(node, gg, saved):
    # nll_loss's derivative is linear in g, and its adjoint is nll_loss itself: picking
    # -gg at the targets (over count) is what the scatter above transposes to.  The input
    # gets exact zeros (PyTorch's ``self: zeros_like(grad)``).
    target, reduction, count, shape, dtype = node.params
    n_g, n_input = node.next
    zeros = _input_zeros(gg, shape, dtype) if n_input is not None else None
    return (_nll(gg, target, reduction, count) if n_g is not None else None, zeros)


# PyTorch's nll_loss_backward(grad, self, target, ...) as one record
# (NllLossBackwardBackward0), for arrays (a first-order backward) and tensors
# (create_graph) alike.  Its edges are PyTorch's: the incoming gradient and the input, which
# it takes without reading, so that under create_graph the derivative requires grad as
# PyTorch's does and gives the input zeros.  One node, where composing div/reshape/expand/
# neg/reshape/scatter recorded six and tying the input on recorded a second (bench/ (g), a
# Hessian-vector product).
_nll_grad = defop("nll_loss_backward", _nll_grad_fwd, _nll_grad_vjp, "NllLossBackwardBackward0",
                  2, NOTHING)


def _input_meta(node, saved):
    """The input's shape when the loss ran (the saved input's: an in-place t_ or unsqueeze_
    under no_grad may have changed the tensor's since, and the engine then sums the gradient
    to its producer's shape or refuses it, as PyTorch's) and its dtype."""
    return tuple(saved[0].shape), input_meta(node)[1]


def _nll_vjp(node, g, saved):
    target, reduction, count = node.params
    if (type(g) is _ndarray and type(target) is _ndarray and not g.ndim
            and reduction != "none" and node.hooks is None):
        dtype = g.dtype
        shape = saved[0].shape
        if (dtype is _F64 or (dtype is _F32 and count <= _F32_EXACT_INT)) and count > 0 \
                and len(shape) == 2:
            # first order, a reduced loss (a training step): -(g / count) as a Python float
            # (the same bits, see _F32_EXACT_INT) put at the targets' flat positions, and
            # the gradient left for log_softmax's derivative (nn.one_hot_grad)
            c = g.item() / count if reduction == "mean" else g.item()
            out = _np.zeros(shape, dtype)
            flat = target + _row_offsets(*shape)
            out.put(flat, -c)
            # (c as the array holds it, not 0: a row of the gradient must sum to -c exactly)
            if ((dtype is _F64 and c > 0.0) or c >= _F32_TINY) and c < _INF \
                    and type(node.next[0]) is _LOG_SOFTMAX_NODE:
                one_hot_grad[0] = (out, c, flat)
            return (out,)
    return (_nll_grad(g, saved[0], target, reduction, count, *_input_meta(node, saved)),)


_nll = defop("nll_loss", _nll_fwd, _nll_vjp, "NllLossBackward0", 1, INPUTS)
_LOG_SOFTMAX_NODE = _log_softmax.op.node_cls
_INF = float("inf")
_F32_TINY = float(_np.finfo(_np.float32).tiny)  # (a smaller c rounds to 0 or subnormal)
_add_reduce = _np.add.reduce


def _nll_general_fwd(logp, target, weights, reduction, total, class_dim, ignored=None):
    xp = namespace(logp)
    idx = xp.expand_dims(target, class_dim)
    picked = -xp.take_along_axis(logp, idx, axis=class_dim).squeeze(class_dim) * weights
    if ignored is not None:
        # PyTorch's kernels skip an ignored target: 0, not a nan input times its 0 weight
        # (seed 13801247)
        picked = xp.where(ignored, picked.dtype.type(0), picked)
    if reduction == "mean":
        return picked.sum() / total
    if reduction == "sum":
        return picked.sum()
    return picked


def _nll_general_grad_fwd(g, logp, target, weights, reduction, total, class_dim, ignored,
                         shape, dtype):
    # zeros with -g * weight (over total) at the targets along class_dim; ``logp`` is an
    # edge only (PyTorch's nll_loss_backward takes the input, see _nll_general_grad)
    xp = namespace(g)
    if reduction == "mean":
        g = g / total
    if reduction != "none" and target.ndim:
        g = xp.broadcast_to(g.reshape((1,) * target.ndim), target.shape)
    g = -g * weights
    if ignored is not None:  # PyTorch skips ignored targets: 0, not 0 * (g / 0 total) = nan
        g = xp.where(ignored, g.dtype.type(0), g)  # (seed 11039613)
    idx = xp.expand_dims(target, class_dim)
    return _scatter_fwd(g.reshape(idx.shape).astype(dtype, copy=False), idx, class_dim, shape)


def _nll_general_grad_vjp(node, gg, saved):
    # linear in g, with nll_loss itself as its adjoint (picking -gg * weight at the targets,
    # over total); the input gets exact zeros (PyTorch's ``self: zeros_like(grad)``)
    target, weights, reduction, total, class_dim, ignored, shape, dtype = node.params
    n_g, n_input = node.next
    zeros = _input_zeros(gg, shape, dtype) if n_input is not None else None
    loss = _nll_2d if node.name() == "NllLoss2DBackwardBackward0" else _nll_general
    return (loss(gg, target, weights, reduction, total, class_dim, ignored)
            if n_g is not None else None, zeros)


# nll_loss_backward / nll_loss2d_backward of the general path as one record each, with
# PyTorch's edges (the incoming gradient and the input), as _nll_grad: one node where
# div/reshape/expand/neg/mul/where/reshape/scatter and a tie node on top recorded nine
_nll_general_grad = defop("nll_loss_backward", _nll_general_grad_fwd, _nll_general_grad_vjp,
                          "NllLossBackwardBackward0", 2, NOTHING)
_nll_2d_grad = defop("nll_loss2d_backward", _nll_general_grad_fwd, _nll_general_grad_vjp,
                     "NllLoss2DBackwardBackward0", 2, NOTHING)


def _nll_general_vjp(node, g, saved):
    grad = _nll_2d_grad if node.name() == "NllLoss2DBackward0" else _nll_general_grad
    return (grad(g, saved[0], *node.params, *_input_meta(node, saved)),)


# with class weights, ignored targets, an unbatched input (C,) or a K-dim one (N, C, d1...)
_nll_general = defop("nll_loss", _nll_general_fwd, _nll_general_vjp, "NllLossBackward0", 1,
                     INPUTS)
_nll_2d = defop("nll_loss", _nll_general_fwd, _nll_general_vjp, "NllLoss2DBackward0", 1,
                INPUTS)


def _check_nll_weight(weight, c):
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
        # (a bare IndexError otherwise: seed 12101249)
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)} (nll_loss/cross_entropy: one weight "
            "per class)")


def _check_nll_target_dtype(t):
    """PyTorch's nll_loss takes class indices as int64 or uint8 only (int32 too is refused)."""
    # (dtype.name is a Python property, a tenth of the loss's Python: read only when the
    # dtype is not a native int64 or uint8 one)
    if t.dtype not in _NLL_TARGET_DTYPES and t.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_pointwise.scalar_type_name(t.dtype)} (nll_loss/cross_entropy "
                           "take class indices: use target.long())")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
             reduce=None, reduction="mean"):
    """Negative log-likelihood of class-index ``target`` under log-probabilities ``input``.

    ``input`` is ``(N, C)``, ``(C,)`` (one sample) or ``(N, C, d1, ...)``; ``target`` holds
    class indices of shape ``(N,)``, ``()`` or ``(N, d1, ...)``.  ``weight`` (``(C,)``)
    scales each class; targets equal to ``ignore_index`` count for nothing.  With
    ``reduction="mean"`` the sum is divided by the total weight of the counted targets.

    Examples
    --------
    >>> import retrograd as T
    >>> logp = T.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> T.nn.functional.nll_loss(logp, T.tensor([0, 1]))
    tensor(0.3000)
    """
    logp = input
    t = target._data if hasattr(target, "_data") else target
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    nd = logp.ndim
    if nd == 1 and t.ndim:
        # PyTorch's nll_loss_nd on an unbatched input, in its order (seed 12101249); a
        # one-element target, which PyTorch's forward takes and its backward refuses, is
        # refused below (tests/fuzz/known_bugs.py: _nll_one_sample_target)
        if t.ndim > 1:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported "
                               f"(nll_loss/cross_entropy: target of shape {list(t.shape)} for "
                               f"an input of shape {list(logp.shape)})")
        _check_nll_target_dtype(t)
        if t.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{t.shape[0]} (nll_loss/cross_entropy: an input of shape "
                             f"{list(logp.shape)} is one sample)")
        _check_nll_weight(weight, logp.shape[0])
        nll_kernel_dtypes(logp, weight, "nll_loss_out_frame")
        # one sample with a one-element target: PyTorch's forward takes it as the 0-d
        # target, its backward refuses the pair (size mismatch) unless the input has one
        # class too (its check compares input.size(0) with the target's; seed 13907262)
        one = target.reshape(()) if hasattr(target, "_data") else t.reshape(())
        out = nll_loss(logp, one, weight, ignore_index=ignore_index, reduction=reduction)
        if logp.shape[0] == 1:
            return out
        return nll_one_sample_backward(out, tuple(logp.shape), tuple(t.shape))
    want_t = (nd - 1,) if nd != 1 else (0,)
    if nd == 0 or t.ndim != want_t[0] or (nd >= 2 and (
            t.shape[0] != logp.shape[0] or tuple(t.shape[1:]) != tuple(logp.shape[2:]))):
        if nd >= 2 and t.ndim and t.shape[0] == logp.shape[0]:  # PyTorch: RuntimeError
            raise RuntimeError(
                f"nll_loss(): Expected target size {[logp.shape[0], *logp.shape[2:]]}, got "
                f"{list(t.shape)}: nll_loss/cross_entropy take an input of shape "
                f"{list(logp.shape)} (N, C, d1, ...) with class indices of shape (N, d1, ...)")
        raise ValueError(
            f"Expected input batch_size ({logp.shape[0] if nd else 1}) to match target "
            f"batch_size ({t.shape[0] if t.ndim else 1}); nll_loss/cross_entropy take input of "
            f"shape (N, C) (or (C,), or (N, C, d1, ...)) and class indices of shape (N,) (or (),"
            f" or (N, d1, ...)), got {list(logp.shape)} and {list(t.shape)}"
        )
    _check_nll_target_dtype(t)
    c = logp.shape[1] if nd >= 2 else logp.shape[0]
    _check_nll_weight(weight, c)  # before the targets' range, as PyTorch
    nll_kernel_dtypes(logp, weight, "nll_loss_out_frame" if nd <= 2 else
                       "nll_loss2d_forward_out_frame")
    if nd >= 3 and t.dtype.kind == "u" and (t.size or reduction == "none"):
        # PyTorch's nll_loss2d kernel reads the targets as int64 (its 1-d/2-d kernel takes
        # bytes too); it returns before reading them for an empty target reduced
        raise RuntimeError("expected scalar type Long but found Byte (nll_loss/cross_entropy "
                           "of an input with more than 2 dims take int64 class indices: use "
                           "target.long())")
    ignored = None
    if t.size:
        if type(t) is _ndarray and t.dtype.kind == "i" and not 0 <= ignore_index < c:
            # one pass instead of min() and max(): read as unsigned, a negative target is
            # huge, so the largest is below c exactly when every target is in [0, c)
            out_of_range = _max_reduce(t.view(_U64 if t.dtype is _I64 else
                                              f"u{t.dtype.itemsize}"), axis=None) >= c
        else:
            lo, hi = t.min(), t.max()
            out_of_range = lo < 0 or hi >= c or 0 <= ignore_index < c
        if out_of_range:
            mask = t == ignore_index
            ignored = mask if mask.any() else None
            bad = t[~mask]
            if bad.size and (bad.min() < 0 or bad.max() >= c):
                raise IndexError(
                    f"nll_loss(): Target {int(bad.max() if bad.max() >= c else bad.min())} is "
                    f"out of bounds: there are {c} classes, so targets must be in [0, {c - 1}] (or "
                    f"ignore_index={ignore_index})"
                )
    # (NllLossBackward0 saves self, target and weight: their versions are checked, as the
    # derivative reads the target's array itself; fuzzG)
    if weight is None and ignored is None and nd == 2:
        return check_also(_nll(logp, t, reduction, t.shape[0]), logp, target)  # (the fastest)
    # the general record: per-sample weights (0 where ignored), classes along class_dim
    xp = namespace(t)
    dt = logp._data.dtype if hasattr(logp, "_data") else logp.dtype
    safe = t if ignored is None else xp.where(ignored, 0, t)
    w = xp.ones(t.shape, dt)
    if weight is not None:
        wd = weight._data if hasattr(weight, "_data") else xp.asarray(weight)
        w = wd[safe].astype(dt)
    if ignored is not None:
        w = w * ~ignored
    total = w.sum()
    if nd <= 2:
        return check_also(_nll_general(logp, safe, w, reduction, total, nd - 1, ignored),
                          logp, target, weight)
    if nd == 4:
        return check_also(_nll_2d(logp, safe, w, reduction, total, 1, ignored), logp, target,
                          weight)
    # PyTorch views other ranks as (N, C, rest, 1), and the "none" loss back: ViewBackward0
    n, rest = t.shape[0], t.size // max(t.shape[0], 1)
    shape4 = (n, c, rest, 1)
    out = check_also(_nll_2d(reshape_op(logp, shape4, tuple(logp.shape)),
                             safe.reshape(n, rest, 1), w.reshape(n, rest, 1), reduction, total,
                             1, None if ignored is None else ignored.reshape(n, rest, 1)),
                     logp, target, weight)
    return reshape_op(out, tuple(t.shape), (n, rest, 1)) if reduction == "none" else out


def _div_count_vjp(node, g, saved):
    return (g / node.params[0],)


# the mean over a batch of probability-target losses: PyTorch's div(Tensor, Scalar)
_div_count = defop("div", lambda a, n: a / n, _div_count_vjp, "DivBackward1", 1, NOTHING)


@quiet_fp
def cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                  ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input, class_dim), target)``, or with class probabilities.

    ``target`` is class indices (see :func:`nll_loss`) or, with the shape of ``input``,
    probabilities per class: then the loss per sample is ``-sum(target * log_softmax)``
    (scaled per class by ``weight``), averaged over the batch with ``reduction="mean"``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([[2.0, 0.0], [0.0, 2.0]], requires_grad=True)
    >>> loss = T.nn.functional.cross_entropy(x, T.tensor([0, 1]))
    >>> round(loss.item(), 4)
    0.1269
    """
    if (type(input) is _Tensor and type(target) is _Tensor and weight is None
            and size_average is None and reduce is None and not label_smoothing):
        fast = _cross_entropy_2d(input, target, ignore_index, reduction)
        if fast is not None:
            return fast
    if input.__class__ in PY_VALUES:  # (not wrapped by ops/tensor_only.py: hot)
        raise not_a_tensor("cross_entropy_loss", "input", 1, input)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    class_dim = 0 if input.ndim == 1 else 1  # (PyTorch's: a 0-d input has no dim 1)
    t = target._data if hasattr(target, "_data") else target
    # PyTorch's dispatch, and the order of its checks: a target of the input's shape is
    # class probabilities, any other class indices (seed 12101249)
    probabilities = tuple(t.shape) == tuple(input.shape)
    if probabilities:
        if t.dtype.kind != "f":
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got "
                f"{_pointwise.scalar_type_name(t.dtype)} (cross_entropy: a target of the "
                f"input's shape {list(input.shape)} holds probabilities; class indices take "
                "the input's shape less the class dim)")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target "
                               f"(cross_entropy got ignore_index={ignore_index})")
        n_classes = input.shape[class_dim] if input.ndim else 1
        if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {n_classes} "
                f"classes or no classes but got weight tensor of shape: {list(weight.shape)}")
    # PyTorch checks the range only when label_smoothing > 0: a negative one means none
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if label_smoothing > 0 and probabilities:
        # probabilities: mixed with the uniform distribution, as PyTorch does
        n_classes = input.shape[class_dim]
        target = add_number(mul_number(target, 1 - label_smoothing), label_smoothing / n_classes)
    logp = log_softmax(input, class_dim)
    if not probabilities and input._data.dtype.kind != "f":
        # an empty integer input passes PyTorch's log_softmax (no element to compute) and
        # stops at nll_loss's kernel
        float_only(input, "nll_loss_out_frame", "cross_entropy")
    if label_smoothing > 0 and not probabilities:
        return _label_smoothed(logp, target, weight, ignore_index, reduction,
                               label_smoothing, class_dim)
    if probabilities:
        terms = logp * target
        if weight is not None:
            shape = [1] * input.ndim
            shape[class_dim] = -1
            terms = terms * weight.reshape(shape)
        if reduction == "none":
            return -terms.sum(class_dim)
        if reduction == "mean" and input._data.size == 0:
            # PyTorch's -(sum).fill_(nan): nan, NegBackward0 (fuzz seed 17980130)
            return -(terms.sum().fill_(float("nan")))
        loss = -terms.sum()
        if reduction == "sum":
            return loss
        # the mean over every sample and position: numel / C (N * d1 * ... for a K-dim
        # input, as PyTorch's cross_entropy_loss_prob_target), not the batch size alone
        n_classes = input.shape[class_dim] if input.ndim else 1
        return _div_count(loss, input._data.size // n_classes)
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


def _cross_entropy_2d(input, target, ignore_index, reduction):  # noqa: A002
    """cross_entropy's common case, a training batch: float logits (N, C) and int64 class
    indices (N,) in range, none ignored, no weight.  The records and checks the general
    path below makes for it (LogSoftmaxBackward0, then NllLossBackward0 saving the input and
    the target), without its dispatch (a third of an HVP's forward: bench/ (g)).  None for
    anything else, which the general path decides and reports."""
    xd = input._data
    t = target._data
    dt = xd.dtype
    if not ((dt is _F32 or dt is _F64) and t.dtype is _I64 and xd.ndim == 2 and t.ndim == 1
            and type(xd) is _ndarray and type(t) is _ndarray and xd.size
            and t.shape[0] == xd.shape[0]
            and (reduction == "mean" or reduction == "sum" or reduction == "none")):
        return None
    c = xd.shape[1]
    # every target in [0, C) (read as unsigned, a negative one is huge), none ignored
    if 0 <= ignore_index < c or _max_reduce(t.view(_U64), axis=None) >= c:
        return None
    logp = _log_softmax(input, 1)
    return check_also(_nll(logp, t, reduction, t.shape[0]), logp, target)


def _label_smoothed(logp, target, weight, ignore_index, reduction, eps, class_dim):
    """PyTorch's label smoothing for class indices: ``(1 - eps) * nll + eps / C * smooth``,
    where ``smooth`` is ``-sum(log_softmax)`` over the classes (weighted per class), 0 at
    ignored targets, and its mean divides by the targets' total weight (as nll_loss's)."""
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    n_classes = logp.shape[class_dim]
    t = target._data if hasattr(target, "_data") else as_array(target)
    if logp.ndim == 1 and t.ndim == 1:  # (one sample, a one-element target: nll_loss took it)
        raise RuntimeError("output with shape [] doesn't match the broadcast shape [1] "
                           "(cross_entropy with label_smoothing of a 1-d input (one sample) "
                           "takes a 0-d target: pass target.reshape(()))")
    ignored = t == ignore_index
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = n_classes
        smooth = -(logp * weight.reshape(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(_make_tensor(namespace(t).asarray(ignored)), 0.0)
    if reduction == "mean":
        kept = t[~ignored]
        if weight is not None:
            total = weight.gather(0, _make_tensor(kept.reshape(-1))).sum()
        else:
            total = _make_tensor(namespace(t).asarray(kept.size, dtype="int64"))
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    # (ATen's Tensor * Scalar: MulBackward1)
    return mul_number(nll, 1 - eps) + mul_number(smooth, eps / n_classes)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (nll_loss, cross_entropy):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))


cross_entropy.checks_input = True  # (ops/tensor_only.py leaves it unwrapped)
