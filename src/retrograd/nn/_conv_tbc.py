"""``nn.functional.conv_tbc``: a 1-D convolution over (time, batch, channels) tensors,
composed as ``conv1d`` between two permutations (no data is copied by the permutations;
the derivative is conv1d's own)."""

from __future__ import annotations

from ..ops import registry
from ..tensor import Tensor

__all__ = ["conv_tbc"]


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:  # noqa: A002
    """Convolve ``input`` (time, batch, in_channels) with ``weight`` (kernel width,
    in_channels, out_channels) plus ``bias`` (out_channels), padding ``pad`` steps of
    time on each side; the result is (time + 2 * pad - width + 1, batch, out_channels).

    Examples
    --------
    >>> import retrograd as T
    >>> import retrograd.nn.functional as F
    >>> F.conv_tbc(T.ones(4, 1, 1), T.ones(2, 1, 1), T.zeros(1)).flatten()
    tensor([2., 2., 2.])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    conv1d = registry.entry("conv1d").fn
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)
