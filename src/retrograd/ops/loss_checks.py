"""The losses' argument checks in PyTorch 2.13's order, with its exception classes (shared
by ops/losses.py, ops/losses_multilabel.py and ops/nn.py; tests/ops/test_loss_raises.py is
their table): PyTorch checks shapes, then dtypes, in an order of its own per loss, and its
kernels' dtype rules decide which class a user sees."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._apply import NOTHING, defop
from ._errors import float_only, scalar_type_name


def _data(v):
    return v._data if hasattr(v, "_data") else v


def no_float_kernel(input, target, kernel, name):  # noqa: A002
    """PyTorch's NotImplementedError of a kernel for floats run on the promoted dtype of
    ``input`` and ``target`` when neither is floating (one floating operand runs)."""
    xd, td = _data(input), _data(target)
    if xd.dtype.kind in "biu" and td.dtype.kind in "biu":
        kind = namespace(xd).result_type(xd, td)
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_type_name(kind)}': {name}() takes a "
            "floating input or target; convert it first (x.float())")


def cast_check(input, target, name):  # noqa: A002
    """PyTorch's RuntimeError of a kernel writing into a tensor of the input's dtype
    (``empty_like(input)``): the promoted dtype of the pair must cast to it (an integer
    input with a floating target, a bool input with an integer one, fail)."""
    xd, td = _data(input), _data(target)
    common = namespace(xd).result_type(xd, td)
    if common != xd.dtype and not (common.kind == "f" and xd.dtype.kind == "f") and (
            common.kind in "fc" or xd.dtype.kind == "b"):
        raise RuntimeError(
            f"result type {scalar_type_name(common)} can't be cast to the desired output type "
            f"{scalar_type_name(xd.dtype)} ({name}() computes in the input's dtype: convert "
            "the input first, x.float())")


def empty_batch_loss(input, shape, reduction):  # noqa: A002
    """multi_margin/multilabel_margin of an empty integer or bool input: PyTorch returns
    before its kernel's dtype dispatch, a result of the input's dtype (uninitialized there,
    zeros here: tests/fuzz/known_bugs.py _margin_loss_empty_garbage)."""
    xd = input._data
    return make_tensor(namespace(xd).zeros(shape if reduction == "none" else (), xd.dtype))


def class_input_check(input, name):  # noqa: A002
    """PyTorch's shape check of the (N, C), (C,) or () input of multi_margin_loss and
    multilabel_margin_loss: (number of samples, number of classes)."""
    nd = input.ndim
    if not (nd == 0 or (nd in (1, 2) and input.shape[-1] != 0)):
        raise RuntimeError(f"{name}(): Expected non-empty vector or matrix with optional 0-dim "
                           f"batch size, but got: {list(input.shape)}")
    return (input.shape[0] if nd == 2 else 1), (input.shape[-1] if nd else 1)


def long_target(t, name):
    """multi_margin_loss and multilabel_margin_loss read the target as int64 (PyTorch refuses
    int32, uint8 and bool there)."""
    if t.dtype.name != "int64":
        raise RuntimeError(f"{name}(): expected scalar type Long but found "
                           f"{scalar_type_name(t.dtype)} for the target; class indices must "
                           "be integers (use target.long())")


def _refused_backward_vjp(node, g, saved):
    shape, t_shape = node.params
    raise RuntimeError(f"size mismatch (got input: {list(shape)}, target: {list(t_shape)}): "
                       "nll_loss's backward of a 1-d input (one sample) takes a 0-d target, "
                       "not a one-element 1-d one (pass target.reshape(()))")


# nll_loss of a 1-d input with a one-element 1-d target: the loss, whose backward raises as
# PyTorch's NllLossBackward0 does for that pair (it checks input and target sizes)
nll_one_sample_backward = defop("nll_loss", lambda a, shape, t_shape: a.copy(),
                                 _refused_backward_vjp, "NllLossBackward0", 1, NOTHING)


def nll_kernel_dtypes(logp, weight, kernel):
    """PyTorch's nll_loss kernel, after the shape checks: an integer or bool input has no
    kernel (NotImplementedError, even an empty one), the weight must have the input's dtype."""
    float_only(logp, kernel, "nll_loss")
    if weight is not None and weight._data.dtype != logp._data.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(logp._data.dtype)} but found "
            f"{scalar_type_name(weight._data.dtype)} (nll_loss/cross_entropy take "
            "the weight in the input's dtype: weight.to(input.dtype))")


def bce_logits_checks(input, target, weight, pos_weight):  # noqa: A002
    """binary_cross_entropy_with_logits' checks after the sizes: the constants must not
    require grad (PyTorch's autograd wrapper), then its kernel, step by step: log_sigmoid(
    input), (pos_weight - 1) * target multiplied into it, (1 - target).mul_(input),
    loss.mul_(weight).  Returns pos_weight's array (or None)."""
    for name, v in (("weight", weight), ("pos_weight", pos_weight)):
        if getattr(v, "requires_grad", False):
            raise RuntimeError(
                f"The function 'binary_cross_entropy_with_logits' is not differentiable with "
                f"respect to argument '{name}'. This input cannot have requires_grad True.")
    float_only(input, "log_sigmoid_cpu", "binary_cross_entropy_with_logits")
    pw = None if pos_weight is None else _data(pos_weight)
    if pw is not None and pw.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported "
                           "(binary_cross_entropy_with_logits computes pos_weight - 1: pass a "
                           "floating pos_weight)")
    for name, v in (("pos_weight", pw), ("weight", _data(weight))):
        if v is None:
            continue
        try:
            fits = namespace(v).broadcast_shapes(tuple(v.shape), tuple(input.shape)) == \
                tuple(input.shape)
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"binary_cross_entropy_with_logits(): {name} of shape {list(v.shape)} does "
                f"not broadcast to the input's {list(input.shape)}; give one weight per class "
                "along the last dimension")
    if _data(target).dtype.kind in "biu":  # (PyTorch: its (1 - target) * input fails)
        raise RuntimeError(
            f"result type {scalar_type_name(input._data.dtype)} can't be cast to the "
            f"desired output type {scalar_type_name(_data(target).dtype)}: "
            "binary_cross_entropy_with_logits takes a floating target (target.float())")
    return pw
