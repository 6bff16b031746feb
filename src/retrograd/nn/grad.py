"""``nn.grad``: the gradients of a convolution with respect to its input and its weight,
given the output's gradient, as ``torch.nn.grad``.

A convolution is linear in each argument, so the gradient with respect to one does not
depend on that argument's value: each function runs the convolution on zeros of the
requested size and asks the engine for the vector-Jacobian product.  With
``create_graph`` whenever an argument requires grad, the result is itself differentiable
(PyTorch's ``ConvolutionBackwardBackward0``).
"""

from __future__ import annotations

from .._creation import zeros
from ..autograd.frontend import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _check_dims(n: int, input_size, weight_shape) -> None:
    """PyTorch's message when the input is not (N, C, *n spatial dims)."""
    if len(input_size) != n + 2:
        raise RuntimeError(
            f"Expected {n + 2}-dimensional input for {n + 2}-dimensional weight "
            f"{list(weight_shape)}, but got {len(input_size)}-dimensional input of size "
            f"{list(input_size)} instead")


def _input_grad(n, conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    input_size = tuple(input_size)
    _check_dims(n, input_size, weight.shape)
    with enable_grad():
        x = zeros(input_size, dtype=grad_output.dtype, device=grad_output.device,
                  requires_grad=True)
        out = conv(x, weight, None, stride, padding, dilation, groups)
        create = weight.requires_grad or grad_output.requires_grad
        return _autograd_grad(out, x, grad_output, create_graph=create)[0]


def _weight_grad(n, conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    weight_size = tuple(weight_size)
    _check_dims(n, tuple(input.shape), weight_size)
    with enable_grad():
        w = zeros(weight_size, dtype=grad_output.dtype, device=grad_output.device,
                  requires_grad=True)
        out = conv(input, w, None, stride, padding, dilation, groups)
        create = input.requires_grad or grad_output.requires_grad
        return _autograd_grad(out, w, grad_output, create_graph=create)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to an input of size ``input_size``.

    Examples
    --------
    >>> import retrograd as T
    >>> w, go = T.ones(1, 1, 2), T.ones(1, 1, 3)
    >>> T.nn.grad.conv1d_input((1, 1, 4), w, go)
    tensor([[[1., 2., 2., 1.]]])
    """
    return _input_grad(1, F.conv1d, input_size, weight, grad_output, stride, padding,
                       dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,  # noqa: A002
                  groups=1):
    """The gradient of ``conv1d`` with respect to a weight of size ``weight_size``."""
    return _weight_grad(1, F.conv1d, input, weight_size, grad_output, stride, padding,
                        dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to an input of size ``input_size``."""
    return _input_grad(2, F.conv2d, input_size, weight, grad_output, stride, padding,
                       dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,  # noqa: A002
                  groups=1):
    """The gradient of ``conv2d`` with respect to a weight of size ``weight_size``."""
    return _weight_grad(2, F.conv2d, input, weight_size, grad_output, stride, padding,
                        dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to an input of size ``input_size``."""
    return _input_grad(3, F.conv3d, input_size, weight, grad_output, stride, padding,
                       dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,  # noqa: A002
                  groups=1):
    """The gradient of ``conv3d`` with respect to a weight of size ``weight_size``."""
    return _weight_grad(3, F.conv3d, input, weight_size, grad_output, stride, padding,
                        dilation, groups)
