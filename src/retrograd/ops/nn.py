"""Neural-network ops with their own derivative records (composites would be slower).

softmax / log_softmax are computed stably (max subtracted); cross_entropy is
log_softmax followed by nll_loss, as PyTorch records it.
"""

from __future__ import annotations

import numpy as _np

from ..backend import as_array, namespace
from ..dtypes import dtype as dtype_class
from ..tensor import Tensor as _Tensor
from ..tensor import make_tensor as _make_tensor
from .stats import quiet
from ._errors import float_only
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .index import _scatter_fwd
from .reduce import sum as _sum
from . import pointwise as _pointwise
from .pointwise import add_number, exp, mul_number
from .shape import _norm_dim, input_meta, reshape_op
from .saved_checks import check_also
from .loss_checks import bce_logits_checks, nll_kernel_dtypes, nll_one_sample_backward


_ndarray = _np.ndarray
_max_reduce = _np.maximum.reduce
_NLL_TARGET_DTYPES = (_np.dtype(_np.int64), _np.dtype(_np.uint8))
_add_reduce = _np.add.reduce
_exp = _np.exp
_log = _np.log
# NumPy's built-in dtypes are singletons: ``is`` tests them without a Python-level lookup
# (``dtype.name`` runs NumPy's Python code: a tenth of nll_loss's forward)
_F32 = _np.dtype("float32")
_F64 = _np.dtype("float64")
_I64 = _np.dtype("int64")
_U64 = _np.dtype("uint64")


def _softmax_fwd(a, dim):
    xp = namespace(a)
    if a.size == 0:  # (the max of an empty dimension has no identity)
        return a.copy()
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _softmax_vjp(node, g, saved):
    (y,) = saved
    dim = node.params[0]
    gy = g * y
    return (gy - y * _sum(gy, dim, True) if hasattr(gy, "_data") else gy - y * gy.sum(
        axis=dim, keepdims=True),)


_softmax = defop("softmax", _softmax_fwd, _softmax_vjp, "SoftmaxBackward0", 1, OUTPUT, "float")


def _log_softmax_fwd(a, dim):
    if type(a) is _ndarray and a.size:
        # NumPy arrays: the ufuncs' reductions themselves (ndarray.max/sum go through
        # NumPy's Python wrappers), the exponentials' temporary reused for the sum's log
        shifted = a - _max_reduce(a, dim, keepdims=True)
        e = _exp(shifted)
        return shifted - _log(_add_reduce(e, dim, keepdims=True))
    xp = namespace(a)
    if a.size == 0:
        return a.copy()
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


def _log_softmax_vjp(node, g, saved):
    (y,) = saved
    dim = node.params[0]
    if hasattr(g, "_data"):
        return (_log_softmax_backward(g, y, dim),)
    # first order: the array function itself (no import statement or op call per backward)
    return (_log_softmax_backward_fwd(g, y, dim),)


def _log_softmax_backward_fwd(g, y, dim):
    if type(g) is _ndarray and type(y) is _ndarray:  # (the ufuncs themselves, as above)
        return g - _exp(y) * _add_reduce(g, dim, keepdims=True)
    return g - namespace(y).exp(y) * g.sum(axis=dim, keepdims=True)


def _log_softmax_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of _log_softmax_backward_data(g, y) = g - exp(y) * sum(g): through
    # g, gg - sum(gg * exp(y)); through y, -sum(g) * exp(y) * gg
    g, y = saved
    dim = node.params[0]
    n_g, n_y = node.next
    if not hasattr(gg, "_data") and not hasattr(y, "_data"):  # first order: arrays
        e = namespace(y).exp(y)
        return ((gg - (gg * e).sum(axis=dim, keepdims=True)) if n_g else None,
                (-g.sum(axis=dim, keepdims=True) * e * gg) if n_y else None)
    e = exp(y)
    return ((gg - _sum(gg * e, dim, True)) if n_g else None,
            (-_sum(g, dim, True) * e * gg) if n_y else None)


# log_softmax's derivative as one record under create_graph (PyTorch's
# LogSoftmaxBackwardDataBackward0), where composing exp/sum/mul/sub recorded four nodes
# (bench/ (g), a Hessian-vector product); its forward is the first-order formula above
_log_softmax_backward = defop("log_softmax_backward", _log_softmax_backward_fwd,
                              _log_softmax_backward_vjp, "LogSoftmaxBackwardDataBackward0", 2,
                              INPUTS, saved_for=lambda needs: (needs[1], True))


_log_softmax = defop("log_softmax", _log_softmax_fwd, _log_softmax_vjp, "LogSoftmaxBackward0", 1,
                     OUTPUT, "float")


def _dim_for(x, dim, name):
    if dim is None:
        # PyTorch's legacy implicit choice, with its warning
        import warnings

        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning, stacklevel=3,
        )
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return _norm_dim(dim, x.ndim)


def _empty_like(x):
    """PyTorch's softmax kernels, and their dtype check, are not reached for an empty input:
    an empty integer or bool tensor gives an empty one of its dtype (seed 11010560)."""
    return _make_tensor(namespace(x._data).empty_like(x._data))


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 - PyTorch's names
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    The signature is ``torch.nn.functional.softmax``'s: ``_stacklevel`` is accepted and unused,
    so ``F.softmax(input=x, dim=1)`` and a positional ``dtype`` after it work as in PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> T.softmax(T.tensor([0.0, 0.0, 0.0, 0.0]), dim=0)
    tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """
    x = input
    if isinstance(_stacklevel, dtype_class) and dtype is None:
        dtype = _stacklevel  # torch.softmax(x, dim, dtype) / x.softmax(dim, dtype)
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    dim = _dim_for(x, dim, "softmax")  # (the dim is checked first, as PyTorch)
    if not x._data.size and x._data.dtype.kind != "f":
        return _empty_like(x)
    float_only(x, "softmax_lastdim_kernel_impl", "softmax")  # integers need dtype=
    return _softmax(x, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 - PyTorch's names
    """``log(softmax(x, dim))``, computed stably (signature as :func:`softmax`'s).

    Examples
    --------
    >>> import retrograd as T
    >>> T.log_softmax(T.tensor([1.0, 1.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    x = input
    if isinstance(_stacklevel, dtype_class) and dtype is None:
        dtype = _stacklevel
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    dim = _dim_for(x, dim, "log_softmax")
    if not x._data.size and x._data.dtype.kind != "f":
        return _empty_like(x)  # (as softmax's, seed 11058080)
    float_only(x, "log_softmax_lastdim_kernel_impl", "log_softmax")
    return _log_softmax(x, dim)


# ----------------------------------------------------------------- losses


def _nll_fwd(logp, target, reduction, count):
    xp = namespace(logp)
    # fancy indexing: ~3x faster than take_along_axis on a training batch (bench/ (e))
    picked = logp[xp.arange(logp.shape[0]), target]
    # (negating the sum rather than each term: the same values, exactly, one array op fewer)
    if reduction == "mean":
        return -picked.sum() / count
    if reduction == "sum":
        return -picked.sum()
    return -picked


def _nll_grad_fwd(g, logp, target, reduction, count, shape, dtype):
    # the (N, C) gradient in one allocation: zeros, -g (over count) at the targets; the
    # input ``logp`` is not read (PyTorch's nll_loss_backward takes it, see _nll_grad)
    xp = namespace(g)
    out = xp.zeros(shape, dtype)
    out[xp.arange(target.shape[0]), target] = -(g / count) if reduction == "mean" else -g
    return out


def _nll_grad_vjp(node, gg, saved):
    # nll_loss's derivative is linear in g, and its adjoint is nll_loss itself: picking
    # -gg at the targets (over count) is what the scatter above transposes to.  The input
    # gets exact zeros (PyTorch's ``self: zeros_like(grad)``).
    target, reduction, count, shape, dtype = node.params
    n_g, n_input = node.next
    zeros = None
    if n_input is not None:
        zeros = namespace(gg._data if hasattr(gg, "_data") else gg).zeros(shape, dtype)
        if hasattr(gg, "_data"):
            zeros = _make_tensor(zeros)
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


def _nll_vjp(node, g, saved):
    target, reduction, count = node.params
    return (_nll_grad(g, saved[0], target, reduction, count, *input_meta(node)),)


_nll = defop("nll_loss", _nll_fwd, _nll_vjp, "NllLossBackward0", 1, INPUTS)


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
    zeros = None
    if n_input is not None:
        zeros = namespace(gg._data if hasattr(gg, "_data") else gg).zeros(shape, dtype)
        if hasattr(gg, "_data"):
            zeros = _make_tensor(zeros)
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
    return (grad(g, saved[0], *node.params, *input_meta(node)),)


# with class weights, ignored targets, an unbatched input (C,) or a K-dim one (N, C, d1...)
_nll_general = defop("nll_loss", _nll_general_fwd, _nll_general_vjp, "NllLossBackward0", 1,
                     INPUTS)
_nll_2d = defop("nll_loss", _nll_general_fwd, _nll_general_vjp, "NllLoss2DBackward0", 1,
                INPUTS)


def _check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


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
        loss = -terms.sum()
        if reduction == "sum":
            return loss
        return _div_count(loss, input.shape[0] if input.ndim >= 2 else 1)
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


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002 - PyTorch's names
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (random numbers from retrograd's generator: ``retrograd.manual_seed`` repeats them)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input._data.dtype.kind != "f" and training and p != 0:
        raise RuntimeError(f"dropout(): result type Float can't be cast to the desired output "
                           f"type {input.dtype} (dropout scales by 1 / (1 - p)); convert the "
                           "input with x.float() first")
    if not training or p == 0:
        return input
    from ..random import generator
    from ..tensor import make_tensor

    data = input._data
    keep = generator().random(data.shape) >= p
    scale = make_tensor(namespace(data).asarray(
        keep.astype(data.dtype) * (1.0 / (1 - p) if p < 1 else 0.0)))
    return input.mul_(scale) if inplace else input * scale


def _reduce_loss(loss, reduction):
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def _bce_fwd(x, t, weight, reduction):
    xp = namespace(x)
    if hasattr(t, "shape") and x.dtype != t.dtype:
        t = t.astype(x.dtype)
    # PyTorch clamps each log at -100, so that x = 0 or 1 give a finite loss
    with quiet(xp):
        loss = -(t * xp.maximum(xp.log(x), -100) + (1 - t) * xp.maximum(xp.log1p(-x), -100))
    if weight is not None:  # (PyTorch's loss.mul_(weight): the loss keeps the input's dtype)
        loss = (loss * weight).astype(x.dtype, copy=False)
    return _reduce_loss(loss, reduction)


def _spread_loss_grad(g, x, weight, reduction):
    """The gradient of each element of a weighted, reduced loss (before the element's own
    derivative): ``g / numel`` for a mean, times the weight."""
    if reduction == "mean":
        g = g / (x.numel() if hasattr(x, "_data") else x.size)
    return g if weight is None else g * weight


def _bce_vjp(node, g, saved):
    x, t = saved
    weight, reduction = node.params
    nx, nt = node.next
    from .pointwise import clamp
    from .unary import logit

    def scaled(d):  # PyTorch's order: grad times the derivative, times weight, over numel
        d = g * d
        if weight is not None:
            d = d * weight
        return d / (x.numel() if hasattr(x, "_data") else x.size) if reduction == "mean" else d

    gx = gt = None
    if nx:
        # d/dx = (x - t) / (x (1 - x)), the denominator kept >= PyTorch's EPSILON (1e-12 as
        # a float32, whatever the dtype)
        gx = scaled((x - t) / clamp((1 - x) * x, 9.999999960041972e-13))
    if nt:  # d/dt = log(1 - x) - log(x) = -logit(x), unclamped as PyTorch's (the loss's logs
        # are clamped at -100, not its target derivative: +-inf at x = 0 or 1; seed 12553003)
        gt = scaled(-logit(x))
    return (gx, gt)


_bce = defop("binary_cross_entropy", _bce_fwd, _bce_vjp, "BinaryCrossEntropyBackward0", 2,
             INPUTS, "promote")


def _as_data(v):
    return v._data if hasattr(v, "_data") else v


def binary_cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                         reduce=None, reduction="mean"):
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x`` (logs clamped at -100)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({list(target.shape)}) that is different to the input size "
            f"({list(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    xd, td = input._data, _as_data(target)
    if td.dtype != xd.dtype:  # (PyTorch: before the range checks)
        raise RuntimeError(
            f"Found dtype {_pointwise.scalar_type_name(td.dtype)} but expected "
            f"{_pointwise.scalar_type_name(xd.dtype)}: binary_cross_entropy takes the target in "
            "the input's dtype (target.to(input.dtype))")
    float_only(input, "binary_cross_entropy", "binary_cross_entropy")  # (after the dtypes)
    for what, a in (("input", xd), ("target", td)):
        if a.size and not ((a >= 0) & (a <= 1)).all():  # (nan fails too, as PyTorch's)
            raise RuntimeError(
                f"all elements of {what} should be between 0 and 1 (binary_cross_entropy takes "
                f"probabilities; for logits use binary_cross_entropy_with_logits)")
    # (the loss is the input's dtype, as PyTorch's: a float64 weight does not widen it)
    w = None if weight is None else _as_data(weight).astype(xd.dtype, copy=False)
    return _bce(input, target, w, reduction)


def _bce_logits_fwd(x, t, weight, reduction, pos_weight=None):
    xp = namespace(x)
    # max(x, 0) - x t + log(1 + exp(-|x|)): stable for any x
    if pos_weight is None:
        loss = xp.maximum(x, 0) - x * t + xp.log1p(xp.exp(-xp.abs(x)))
    else:  # (1 - t) x + (1 + (pw - 1) t) softplus(-x), PyTorch's form
        scale = 1 + (pos_weight - 1) * t
        loss = (1 - t) * x + scale * (xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0))
    out = _reduce_loss(loss if weight is None else loss * weight, reduction)
    # PyTorch's result has the target's dtype ((1 - target).mul_(input)...): a float64 input
    # with a float32 target gives float32
    return out.astype(t.dtype if t.dtype.kind == "f" else x.dtype)


def _bce_logits_vjp(node, g, saved):
    x, t = saved
    weight, reduction, *rest = node.params
    pos_weight = rest[0] if rest else None
    from .pointwise import sigmoid

    nx, nt = node.next
    g = _spread_loss_grad(g, x, weight, reduction)
    if pos_weight is None:
        return (g * (sigmoid(x) - t) if nx else None, -g * x if nt else None)
    # d/dx = (1 + (pw - 1) t) sigmoid(x) - pw t;  d/dt = (pw - 1) softplus(-x) - x
    from .activation import logsigmoid

    gx = g * ((1 + (pos_weight - 1) * t) * sigmoid(x) - pos_weight * t) if nx else None
    gt = g * ((1 - pos_weight) * logsigmoid(x) - x) if nt else None
    return (gx, gt)


_bce_logits = defop("binary_cross_entropy_with_logits", _bce_logits_fwd, _bce_logits_vjp,
                    "BinaryCrossEntropyWithLogitsBackward0", 2, INPUTS, "same")


def legacy_reduction(size_average, reduce, reduction):
    """PyTorch's ``_Reduction.legacy_get_string``: the deprecated ``size_average`` /
    ``reduce`` flags, when either is given, decide the reduction (with its warning)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    import warnings

    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", UserWarning, stacklevel=3)
    return ret


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(x), t)`` computed stably from the logits ``x``.

    ``pos_weight`` (broadcast against the input, typically one per class along the last
    dimension) weighs the positive term: ``-(pw t log sigmoid(x) + (1 - t) log(1 -
    sigmoid(x)))``.  Like ``weight``, it is a constant: PyTorch refuses one that requires
    grad.

    Examples
    --------
    >>> import retrograd as T
    >>> F = T.nn.functional
    >>> F.binary_cross_entropy_with_logits(T.tensor([0.0]), T.tensor([1.0]))
    tensor(0.6931)
    >>> F.binary_cross_entropy_with_logits(T.tensor([0.0]), T.tensor([1.0]),
    ...                                    pos_weight=T.tensor([2.0]))
    tensor(1.3863)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size "
                         f"({list(input.shape)})")
    pw = bce_logits_checks(input, target, weight, pos_weight)
    w = None if weight is None else _as_data(weight)
    if pos_weight is None:
        return _bce_logits(input, target, w, reduction)
    return _bce_logits(input, target, w, reduction, pw.astype(input._data.dtype))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
            weight=None):
    """Mean (or summed) absolute error: ``|x - t|``, optionally weighted per element."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    shape = tuple(input.shape)  # (PyTorch: broadcast first, then the reduction's name)
    input, target = _broadcast_pair(input, target, "l1_loss")  # noqa: A001
    if weight is not None:
        return _weighted_loss((input - target).abs(), shape, weight, reduction)
    _check_reduction(reduction)
    return _reduce_loss((input - target).abs(), reduction)


def _broadcast_pair(input, target, name):  # noqa: A002
    """PyTorch's l1_loss and mse_loss broadcast the pair first (torch.broadcast_tensors), so
    a 0-d operand counts in the dtype promotion as a dimensioned one: a float32 input with a
    0-d float64 target gives float64 (seed 11017475's class)."""
    if hasattr(target, "_data") and tuple(input.shape) != tuple(target.shape):
        from .arrange import broadcast_tensors

        try:
            return broadcast_tensors(input, target)
        except RuntimeError as e:
            raise RuntimeError(f"{e} ({name}() broadcasts the input and the target against "
                               "each other; give them the same shape)") from None
    return input, target


def _weighted_loss(errors, shape, weight, reduction):
    """PyTorch's weighted l1/mse: ``errors * weight``, its sum, or that sum over
    ``weight.sum()`` for the mean; ``weight`` must have the input's size as given (``shape``,
    before broadcasting), and the reduction's name is checked last."""
    if tuple(weight.shape) != shape:
        raise ValueError(f"Weights and input must have the same size. (weight "
                         f"{list(weight.shape)}, input {list(shape)})")
    weighted = errors * weight
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    return weighted.sum() / weight.sum()


def _mse_fwd(a, b, reduction):
    d = (a - b) ** 2
    if reduction == "mean":
        return d.mean()
    if reduction == "sum":
        return d.sum()
    return d


def _as_float(x, like):
    """``x`` in ``like``'s dtype if it is bool: a bool input of mse_loss is read as 0/1 (and
    a bool tensor has no ``-``, which create_graph's derivative would call: seed 12669445)."""
    if getattr(x, "_data", x).dtype.kind != "b":
        return x
    return x.to(like.dtype) if hasattr(x, "_data") else x.astype(like.dtype)


def _mse_vjp(node, g, saved):
    a, b = saved
    reduction = node.params[0]
    na, nb = node.next
    diff = _as_float(a, b) - _as_float(b, a)
    scale = 2.0
    if reduction == "mean":  # a Tensor's size is a method, an array's a number
        n = diff.numel() if hasattr(diff, "_data") else diff.size
        scale = 2.0 / n if n else 0.0  # an empty input: an empty gradient
    ga = g * scale * diff
    return (ga if na else None, -ga if nb else None)


_mse = defop("mse_loss", _mse_fwd, _mse_vjp, "MseLossBackward0", 2, INPUTS, "promote")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
             weight=None):
    """Mean (or summed) squared error, optionally weighted per element.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.mse_loss(T.tensor([1.0, 3.0]), T.tensor([0.0, 0.0]))
    tensor(5.)
    """
    if tuple(input.shape) != tuple(target.shape):
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning, stacklevel=2,
        )
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    shape = tuple(input.shape)  # (PyTorch: broadcast first, then the reduction's name)
    input, target = _broadcast_pair(input, target, "mse_loss")  # noqa: A001
    if weight is not None:
        return _weighted_loss((input - target) ** 2, shape, weight, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    kinds = (input._data.dtype.kind, getattr(target, "_data", target).dtype.kind)
    if all(k in "biu" for k in kinds):
        from .pointwise import scalar_type_name

        raise NotImplementedError(f"\"mse_cpu\" not implemented for "
                                  f"'{scalar_type_name(input._data.dtype)}'; mse_loss needs a "
                                  "floating input (x.float())")
    return _mse(input, target, reduction)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402


def _special_softmax(input, dim, *, dtype=None):  # noqa: A002 - PyTorch's names
    """``retrograd.special.softmax``: as ``softmax``, with ``dim`` required."""
    return softmax(input, dim, dtype=dtype)


def _special_log_softmax(input, dim, *, dtype=None):  # noqa: A002 - PyTorch's names
    """``retrograd.special.log_softmax``: as ``log_softmax``, with ``dim`` required."""
    return log_softmax(input, dim, dtype=dtype)


register(softmax, functional=("softmax",))
register(log_softmax, functional=("log_softmax",))
register(_special_softmax, "softmax", function=False, method=False, special=("softmax",))
register(_special_log_softmax, "log_softmax", function=False, method=False,
         special=("log_softmax",))
for _fn in (nll_loss, cross_entropy, dropout, binary_cross_entropy,
            binary_cross_entropy_with_logits, l1_loss, mse_loss):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
