"""Losses beyond nll.py's and elementwise_losses.py's (nll, cross_entropy, bce, mse, l1), as
torch.nn.functional.

PyTorch computes some of these in one kernel with its own derivative (``SmoothL1Loss``,
``HuberLoss``, ``SoftMarginLoss``, ``MultiMarginLoss``, ``MultilabelMarginLoss``,
``CtcLoss``): they get their own record here, derivative written with retrograd's ops so
double backward works (ctc's excepted, as PyTorch's).  The others PyTorch composes from
small ops (in C++ or in Python); they are composed here from the same ops in the same
order, so values, gradients and the recorded graph are PyTorch's.  C++ composites record
a Python number operand as ``AddBackward1`` / ``MulBackward1`` / ``SubBackward1`` (no edge
for the number), Python ones as ``AddBackward0`` with an empty edge: both are kept.

The ctc_loss record is in ops/ctc.py, multi_margin_loss's in ops/multi_margin.py.
"""

from __future__ import annotations

import math
import warnings

from ..autograd.grad_mode import no_grad
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, defop
from ._errors import float_only, scalar_type_name
from .activation import logsigmoid
from .arrange import broadcast_tensors
from .elementwise_losses import l1_loss, legacy_reduction
from .nll import cross_entropy
from .binary import xlogy
from .pointwise import add_number, exp, log, mul_number, sqrt, sub, sub_number, where
from .pointwise import abs as abs_
from .linear import linear
from .loss_checks import (cast_check, no_float_kernel)
from .quiet_fp import mean_of, quiet_fp

_REDUCTIONS = ("none", "mean", "sum")


# ----------------------------------------------------------------- shared pieces


def check_reduction(reduction, name):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction ({name}() takes "
                         "reduction='none', 'mean' or 'sum')")


def reduce_loss(loss, reduction):
    """PyTorch's ``apply_loss_reduction``: MeanBackward0 / SumBackward0 / the loss itself."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _data(v):
    return v._data if isinstance(v, Tensor) else v


def _tensor_arg(value, name, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _warn_sizes(input, target):  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)


def _size(t):
    return f"torch.Size({list(t.shape)})"




def _number_minus(number, x):
    """``number - x`` as PyTorch's C++ spells it: SubBackward0 with an empty first edge."""
    return sub(make_tensor(namespace(x._data).asarray(number, dtype=x._data.dtype)), x)


def _spread(g, reduction, n):
    """The gradient reaching each element of a loss reduced by ``reduction`` over ``n``."""
    if reduction == "mean":
        return g / n if n else g * 0.0
    return g


def _numel(a):
    return a.numel() if isinstance(a, Tensor) else a.size


# ----------------------------------------------------------------- smooth_l1, huber


def _smooth_l1_elems(xp, d, beta):
    ad = xp.abs(d)
    return xp.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)


def _huber_elems(xp, d, delta):
    ad = xp.abs(d)
    return xp.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))


def _elementwise_loss_fwd(elems):
    @quiet_fp  # (inf - inf, inf * 0: nan, as PyTorch's, without NumPy's warning)
    def forward(x, t, reduction, param):
        loss = elems(namespace(x), x - t, param)
        if reduction == "mean":
            return mean_of(loss)
        return loss.sum() if reduction == "sum" else loss
    return forward


def _kernel_slope_fwd(d, bound, scale, bool_operand=False):
    # PyTorch's smooth_l1/huber backward kernels, comparison by comparison: -bound at or
    # below -bound, bound at or above bound, else d (so a nan d gives nan: seed 12514730);
    # divided by scale (smooth_l1's beta, huber's 1)
    xp = namespace(d)
    return (xp.where(d <= -bound, -bound, xp.where(d >= bound, bound, d)) / scale).astype(
        d.dtype, copy=False)


def _kernel_slope_vjp(node, g, saved):
    # PyTorch's smooth_l1/huber_loss_double_backward: grad * (|d| < bound) / scale, a product
    # (a nan grad stays nan where the mask is 0), strict at the bounds
    (d,) = saved
    bound, scale, bool_operand = node.params
    if bool_operand:
        # that double backward recomputes `input - target` with ATen's sub, which refuses a
        # bool operand (the first backward's kernel promotes it): seed 18003919
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead. "
            "(smooth_l1_loss's double backward computes input - target and one of them is "
            "bool: convert it first with .float())")
    return (g * (abs_(d) < bound) / scale,)


_kernel_slope = defop("loss_slope", _kernel_slope_fwd, _kernel_slope_vjp, "MulBackward0", 1,
                      INPUTS)


def _smooth_l1_slope(d, beta, bool_operand=False):
    # PyTorch: d / beta inside (-beta, beta), sign(d) outside (equal at the ends); 0 at d = 0
    return _kernel_slope(d, beta, beta, bool_operand)


def _huber_slope(d, delta, bool_operand=False):
    return _kernel_slope(d, delta, 1, bool_operand)


def _is_bool(v):
    return _data(v).dtype.kind == "b"


def _kernel_difference(x, t):
    """``x - t`` as PyTorch's backward kernel computes it: in the promoted dtype, a bool
    operand included (retrograd's ``sub`` refuses bool, as ATen's does, so a bool operand is
    converted to the other's floating dtype first; the forward guarantees one is floating).
    Returns the difference and whether an operand was bool."""
    if isinstance(x, Tensor) and _is_bool(x):
        return x.to(t.dtype) - t, True
    if isinstance(t, Tensor) and _is_bool(t):
        return x - t.to(x.dtype), True
    return x - t, False


def _elementwise_loss_vjp(slope):
    def vjp(node, g, saved):
        x, t = saved
        reduction, param = node.params
        nx, nt = node.next
        d, bool_operand = _kernel_difference(x, t)
        gd = _spread(g, reduction, _numel(d)) * slope(d, param, bool_operand)
        return (gd if nx else None, -gd if nt else None)
    return vjp


_smooth_l1 = defop("smooth_l1_loss", _elementwise_loss_fwd(_smooth_l1_elems),
                   _elementwise_loss_vjp(_smooth_l1_slope), "SmoothL1LossBackward0", 2, INPUTS,
                   "promote")
@quiet_fp
def _huber_fwd(x, t, reduction, delta):
    # PyTorch's huber kernel writes into empty_like(input): each element is computed in the
    # promoted dtype and stored in the input's, then reduced (a float32 input with a float64
    # target gives float32; seed 11017475)
    loss = _huber_elems(namespace(x), x - t, delta).astype(x.dtype, copy=False)
    if reduction == "mean":
        return mean_of(loss)
    return loss.sum() if reduction == "sum" else loss


_huber_grads = _elementwise_loss_vjp(_huber_slope)


def _huber_vjp(node, g, saved):
    # PyTorch's huber_loss_backward iterates (input, target, grad) as one dtype, the one of
    # the tensor differentiated (input first): a pair of mixed dtypes passes the forward
    # but not the backward
    x, t = saved
    if x.dtype != t.dtype:
        want, found = (x, t) if node.next[0] else (t, x)
        raise RuntimeError(
            f"Found dtype {scalar_type_name(_data(found).dtype)} but expected "
            f"{scalar_type_name(_data(want).dtype)} (huber_loss's backward takes an input and "
            "a target of one dtype; convert the target with target.to(input.dtype))")
    return _huber_grads(node, g, saved)


_huber = defop("huber_loss", _huber_fwd, _huber_vjp, "HuberLossBackward0", 2, INPUTS, "same")


def _float_pair(input, target, name):  # noqa: A002
    _tensor_arg(input, name, "input", 1)
    _tensor_arg(target, name, "target", 2)
    float_only(input, f"{name}_cpu", name)


def smooth_l1_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                   reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (``d = x - t``);
    ``beta = 0`` is ``l1_loss``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.smooth_l1_loss(T.tensor([0.5, 3.0]), T.tensor([0.0, 0.0]))
    tensor(1.3125)
    """
    _tensor_arg(input, "smooth_l1_loss", "input", 1)
    _tensor_arg(target, "smooth_l1_loss", "target", 2)
    _warn_sizes(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    # PyTorch's order: broadcast_tensors, the reduction's name, beta, then the kernel's
    # dtype (a structured kernel: an integer or bool input with a floating target runs, in
    # the promoted dtype; only a pair of neither floating fails)
    if tuple(input.shape) != tuple(target.shape):
        input, target = broadcast_tensors(input, target)  # noqa: A001
    check_reduction(reduction, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta (got "
                           f"beta={beta}); pass beta >= 0")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    no_float_kernel(input, target, "smooth_l1_cpu", "smooth_l1_loss")
    return _smooth_l1(input, target, reduction, float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    """``0.5 d^2`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere; ``weight``
    (the input's shape) scales each element before the reduction.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.huber_loss(T.tensor([0.5, 3.0]), T.tensor([0.0, 0.0]), delta=2.0)
    tensor(2.0625)
    """
    _tensor_arg(input, "huber_loss", "input", 1)
    _tensor_arg(target, "huber_loss", "target", 2)
    _warn_sizes(input, target)
    # PyTorch's order: broadcast_tensors, the weight's size (against the input as given),
    # the reduction's name (after the kernel with a weight), delta, then the kernel's
    # dtypes: it writes into empty_like(input), so the promoted dtype must cast to the
    # input's, and only then is an integer input refused
    shape = tuple(input.shape)
    if shape != tuple(target.shape):
        input, target = broadcast_tensors(input, target)  # noqa: A001
    if weight is not None and tuple(weight.shape) != shape:
        raise ValueError(f"Weights and input must have the same size (huber_loss got weight "
                         f"{list(weight.shape)} and input {list(shape)})")
    if weight is None:
        check_reduction(reduction, "huber_loss")
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta (got "
                           f"delta={delta}); pass delta > 0")
    cast_check(input, target, "huber_loss")
    float_only(input, "huber_cpu", "huber_loss")
    if weight is None:
        return _huber(input, target, reduction, float(delta))
    loss = _huber(input, target, "none", float(delta)) * weight
    check_reduction(reduction, "huber_loss")
    return reduce_loss(loss, reduction)


# ----------------------------------------------------------------- soft_margin


@quiet_fp
def _soft_margin_fwd(x, y, reduction, bool_target=False):
    xp = namespace(x)
    # PyTorch's kernel, not the stable max(z, 0) + log1p(exp(-|z|)): exp(-x y) overflows to
    # inf past -x y = 709.8 (88.7 in float32), and PyTorch's loss is inf there (seed
    # 20427011)
    loss = xp.log1p(xp.exp(-x * y))
    if reduction == "mean":
        return mean_of(loss)
    return loss.sum() if reduction == "sum" else loss


def _soft_margin_vjp(node, g, saved):
    (x,) = saved
    y, reduction, bool_target = node.params
    if bool_target:  # PyTorch's forward takes a bool target, its backward negates it
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported "
                           "(soft_margin_loss's backward of a bool target: pass labels of "
                           "+-1 as a float tensor)")
    # PyTorch's soft_margin_loss_backward: -y z / (1 + z) g with z = exp(-y x), so nan where
    # z overflows to inf (as its loss is inf), not sigmoid(-y x)'s 1
    z = exp(-y * x)
    return (_spread(g, reduction, _numel(x)) * -y * z / (z + 1),)


_soft_margin = defop("soft_margin_loss", _soft_margin_fwd, _soft_margin_vjp,
                     "SoftMarginLossBackward0", 1, INPUTS)


def soft_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                     reduction="mean"):
    """``log(1 + exp(-y x))`` for labels ``y`` of +-1 (the target is not differentiated, as
    PyTorch's SoftMarginLossBackward0).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.soft_margin_loss(T.tensor([0.0]), T.tensor([1.0]))
    tensor(0.6931)
    """
    _tensor_arg(input, "soft_margin_loss", "input", 1)
    _tensor_arg(target, "soft_margin_loss", "target", 2)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "soft_margin_loss")
    if target.requires_grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    # PyTorch's kernel: neg_out(output, input).mul_(target).exp_().log1p_() into a tensor of
    # the input's dtype and shape, so each step's RuntimeError in that order
    y = _data(target)
    xd = input._data
    if xd.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported "
                           "(soft_margin_loss takes a floating input: x.float())")
    try:
        shape = namespace(y).broadcast_shapes(tuple(xd.shape), tuple(y.shape))
    except ValueError:
        shape = None
    if shape != tuple(xd.shape):
        from ._errors import broadcast_message

        why = broadcast_message([xd.shape, y.shape]) or (
            f"output with shape {list(xd.shape)} doesn't match the broadcast shape "
            f"{list(shape)}")
        raise RuntimeError(f"{why} (soft_margin_loss(): the target's shape {list(y.shape)} "
                           f"must broadcast to the input's {list(xd.shape)})")
    if xd.dtype.kind != "f":
        common = namespace(xd).result_type(xd, y)
        raise RuntimeError(
            f"result type {scalar_type_name(common if common.kind == 'f' else 'float32')} "
            f"can't be cast to the desired output type {scalar_type_name(xd.dtype)} "
            "(soft_margin_loss takes a floating input: x.float())")
    if tuple(y.shape) != tuple(xd.shape):
        y = namespace(y).broadcast_to(y, xd.shape)
    return _soft_margin(input, y.astype(input._data.dtype), reduction, y.dtype.kind == "b")


# ----------------------------------------------------------------- margin-based composites


@quiet_fp
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None,  # noqa: A002
                        reduce=None, reduction="mean"):
    """``max(0, -y (x1 - x2) + margin)``: x1 should rank above x2 where y = 1, below where
    y = -1.

    Examples
    --------
    >>> import retrograd as T
    >>> F = T.nn.functional
    >>> F.margin_ranking_loss(T.tensor([1.0, 0.0]), T.tensor([0.0, 1.0]), T.tensor([1.0, 1.0]))
    tensor(0.5000)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "margin_ranking_loss")
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {_size(input1)}, input2: {_size(input2)}, target: "
            f"{_size(target)} ")
    loss = add_number(-target * (input1 - input2), float(margin)).clamp_min(0)
    return reduce_loss(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None,  # noqa: A002
                         reduce=None, reduction="mean"):
    """``x`` where y = 1, ``max(0, margin - x)`` where y = -1 (both where y is neither).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.hinge_embedding_loss(T.tensor([0.3, 2.0]), T.tensor([-1.0, 1.0]))
    tensor(1.3500)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "hinge_embedding_loss")
    y = _data(target)
    xp = namespace(input._data)
    zeros = make_tensor(xp.zeros(input.shape, input._data.dtype))
    margin_clamp = _number_minus(float(margin), input).clamp_min(0)
    output_margin = where(make_tensor(y != 1), margin_clamp, zeros)
    output_self = where(make_tensor(y != -1), input, zeros)
    return reduce_loss(output_margin + output_self, reduction)


_EPSILON = 1e-12  # PyTorch's cosine_embedding_loss EPSILON


@quiet_fp
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None,  # noqa: A002
                          reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where y = 1, ``max(0, cos(x1, x2) - margin)`` where y = -1.

    Examples
    --------
    >>> import retrograd as T
    >>> a, b = T.tensor([[1.0, 0.0]]), T.tensor([[0.0, 1.0]])
    >>> T.nn.functional.cosine_embedding_loss(a, b, T.tensor([1.0]))
    tensor(1.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "cosine_embedding_loss")
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported "
                           f"(cosine_embedding_loss got a target of shape {list(target.shape)})")
    want = 2 if td == 1 else 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(f"{td}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    # (inputs of different sizes broadcast, as PyTorch's input1 * input2; or raise there)
    # an integer or bool input: PyTorch's int sums plus the float epsilon are the default
    # float dtype (add_number would keep NumPy's float64); no gradient flows to it
    from ..dtypes import get_default_dtype

    input1, input2 = (t.to(get_default_dtype()) if t._data.dtype.kind in "biu" else t
                      for t in (input1, input2))
    prod_sum = (input1 * input2).sum(td)
    mag_square1 = add_number((input1 * input1).sum(td), _EPSILON)
    mag_square2 = add_number((input2 * input2).sum(td), _EPSILON)
    cos = prod_sum / sqrt(mag_square1 * mag_square2)
    xp = namespace(cos._data)
    zeros = make_tensor(xp.zeros(cos.shape, cos._data.dtype))
    y = _data(target)
    output_pos = where(make_tensor(xp.asarray(y == 1)), _number_minus(1.0, cos), zeros)
    output_neg = where(make_tensor(xp.asarray(y == -1)),
                       sub_number(cos, float(margin)).clamp_min(0), zeros)
    return reduce_loss(output_pos + output_neg, reduction)


# ----------------------------------------------------------------- Python composites


@quiet_fp
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None,  # noqa: A002
                                reduce=None, reduction="mean"):
    """``-mean_c(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` per sample (times ``weight``
    per class).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.multilabel_soft_margin_loss(T.tensor([[0.0, 0.0]]), T.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid (multilabel_soft_margin_loss takes "
                         "reduction='none', 'mean' or 'sum')")
    return reduce_loss(loss, reduction)


@quiet_fp
def poisson_nll_loss(input, target, log_input=True, full=False,  # noqa: A002
                     size_average=None, eps=1e-8, reduce=None, reduction="mean"):
    """The negative log-likelihood of ``target`` under a Poisson distribution of rate
    ``exp(input)`` (``log_input``) or ``input``; ``full`` adds Stirling's term for targets > 1.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.poisson_nll_loss(T.tensor([0.0]), T.tensor([2.0]))
    tensor(1.)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (poisson_nll_loss "
                         "takes 'none', 'mean' or 'sum')")
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(add_number(input, float(eps)))
    if full:
        stirling = (target * log(target) - target
                    + mul_number(log(mul_number(target, 2 * math.pi)), 0.5))
        loss = loss + stirling.masked_fill(_data(target) <= 1, 0)
    return reduce_loss(loss, reduction)


@quiet_fp
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6,  # noqa: A002
                      reduction="mean"):
    """The negative log-likelihood of ``target`` under normal distributions of mean
    ``input`` and variance ``var``: ``0.5 (log var + (x - t)^2 / var)`` (+ ``0.5 log 2 pi``
    with ``full``).  ``var`` has the input's shape, or it without the last dimension, or one
    dimension of size 1 (shared variance), or is a float; it is clamped at ``eps`` (the
    gradient passes the clamp unchanged, as PyTorch's).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.gaussian_nll_loss(T.tensor([1.0]), T.tensor([1.0]), T.tensor([1.0]))
    tensor(0.)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * make_tensor(namespace(input._data).ones(input.shape, input._data.dtype))
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): var must be a Tensor or a float, not "
                        f"{type(var).__name__}")
    elif bool((_data(var) < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass  # heteroscedastic: one dimension of size 1, broadcast
        else:
            raise ValueError(f"var is of incorrect size (gaussian_nll_loss got var "
                             f"{list(var.shape)} for input {list(input.shape)}: give it the "
                             "input's shape, that shape without the last dimension, or one "
                             "dimension of size 1)")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid (gaussian_nll_loss takes reduction='none', "
                         "'mean' or 'sum')")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def _kl_terms(input, target, log_target):  # noqa: A002
    # the right operand first, as PyTorch's compiled at::native::kl_div evaluates it: the
    # nodes' creation order decides which leaf's hooks run first (seed 20174524)
    if log_target:
        diff = target - input
        return exp(target) * diff
    product = target * input
    return xlogy(target, target) - product


@quiet_fp
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
           log_target=False):
    """The Kullback-Leibler divergence ``target * (log target - input)`` of log-probabilities
    ``input`` from ``target`` (log-probabilities too with ``log_target``).  ``'batchmean'``
    divides the sum by the batch size (the mathematical KL divergence); ``'mean'`` by every
    element, with PyTorch's warning.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([0.5, 0.5]).log()
    >>> T.nn.functional.kl_div(x, T.tensor([0.25, 0.75]), reduction="batchmean")
    tensor(0.0654)
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
        mode = reduction
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.", UserWarning, stacklevel=2)
        if reduction not in (*_REDUCTIONS, "batchmean"):
            raise ValueError(f"{reduction} is not a valid value for reduction (kl_div takes "
                             "'none', 'batchmean', 'mean' or 'sum')")
        mode = "sum" if reduction == "batchmean" else reduction
    _kl_float_inputs(input, target)
    reduced = reduce_loss(_kl_terms(input, target, log_target), mode)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = reduced / input.shape[0]
    return reduced


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None,  # noqa: A002
                         weight=None, reduction="mean", ignore_index=None,
                         label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``.

    PyTorch's ``options`` chooses a chunked computation that saves memory; retrograd always
    computes the logits whole (same values and gradients), so ``options`` changes nothing.

    Examples
    --------
    >>> import retrograd as T
    >>> x, w = T.tensor([[1.0, 0.0]]), T.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(T.nn.functional.linear_cross_entropy(x, w, T.tensor([0])).item(), 4)
    0.1269
    """
    logits = linear(input, linear_weight, linear_bias)
    logits = logits.view(*logits.shape)  # PyTorch's view of the logits to their own shape
    return cross_entropy(logits, target, weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


# ----------------------------------------------------------------- torch.* spellings

_ENUM = ("none", "mean", "sum")  # PyTorch's at::Reduction: 0, 1, 2
# (their reduction defaults to 0, none: what torch 2.13's top-level bindings do, although
# the ATen schemas say Mean)


def reduction_name(reduction, name):
    """The reduction of PyTorch's top-level (ATen) loss functions: an int, 0 / 1 / 2."""
    if isinstance(reduction, bool) or not isinstance(reduction, int) or not 0 <= reduction < 3:
        raise (TypeError if not isinstance(reduction, int) else RuntimeError)(
            f"{name}(): argument 'reduction' must be an int, 0 (none), 1 (mean) or 2 (sum), "
            f"got {reduction!r} (nn.functional.{name} takes the names)")
    return _ENUM[reduction]


def _kl_float_inputs(input, target):  # noqa: A002
    for t in (input, target):
        if getattr(t, "_data", None) is not None and t._data.dtype.kind in "biu":
            raise RuntimeError("kl_div: Integral inputs not supported. (input and target must "
                               "be floating point: convert them, e.g. target.float())")


def _kl_div_aten(input, target, reduction=0, *, log_target=False):  # noqa: A002
    """``retrograd.kl_div``: PyTorch's ``torch.kl_div`` (an int reduction, no 'batchmean'
    and no warning; see ``nn.functional.kl_div``)."""
    _kl_float_inputs(input, target)  # (as nn.functional.kl_div: dtypeD)
    return reduce_loss(_kl_terms(input, target, log_target), reduction_name(reduction, "kl_div"))


def _margin_ranking_aten(input1, input2, target, margin=0.0, reduction=0):
    """``retrograd.margin_ranking_loss``: PyTorch's top-level spelling (an int reduction)."""
    return margin_ranking_loss(input1, input2, target, margin,
                               reduction=reduction_name(reduction, "margin_ranking_loss"))


def _hinge_embedding_aten(input, target, margin=1.0, reduction=0):  # noqa: A002
    """``retrograd.hinge_embedding_loss``: PyTorch's top-level spelling (an int reduction)."""
    return hinge_embedding_loss(input, target, margin,
                                reduction=reduction_name(reduction, "hinge_embedding_loss"))


def _cosine_embedding_aten(input1, input2, target, margin=0.0, reduction=0):
    """``retrograd.cosine_embedding_loss``: PyTorch's top-level spelling (an int
    reduction)."""
    return cosine_embedding_loss(input1, input2, target, margin,
                                 reduction=reduction_name(reduction, "cosine_embedding_loss"))


def _poisson_nll_aten(input, target, log_input, full, eps, reduction):  # noqa: A002
    """``retrograd.poisson_nll_loss``: PyTorch's top-level spelling (every argument
    required, an int reduction)."""
    return poisson_nll_loss(input, target, log_input, full, eps=eps,
                            reduction=reduction_name(reduction, "poisson_nll_loss"))


def _bce_logits_aten(input, target, weight=None, pos_weight=None, reduction=0):  # noqa: A002
    """``retrograd.binary_cross_entropy_with_logits``: PyTorch's top-level spelling
    (``pos_weight`` before an int reduction)."""
    from .elementwise_losses import binary_cross_entropy_with_logits

    return binary_cross_entropy_with_logits(
        input, target, weight, reduction=reduction_name(
            reduction, "binary_cross_entropy_with_logits"), pos_weight=pos_weight)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn, _name in ((_kl_div_aten, "kl_div"), (_margin_ranking_aten, "margin_ranking_loss"),
                   (_hinge_embedding_aten, "hinge_embedding_loss"),
                   (_cosine_embedding_aten, "cosine_embedding_loss"),
                   (_poisson_nll_aten, "poisson_nll_loss"),
                   (_bce_logits_aten, "binary_cross_entropy_with_logits")):
    register(_fn, _name, method=False)

for _fn in (smooth_l1_loss, huber_loss, soft_margin_loss, margin_ranking_loss,
            hinge_embedding_loss, cosine_embedding_loss,
            multilabel_soft_margin_loss, poisson_nll_loss,
            gaussian_nll_loss, kl_div, linear_cross_entropy):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))

__all__ = ["add_number", "check_reduction", "legacy_reduction", "mul_number", "reduce_loss",
           "sub_number"]
