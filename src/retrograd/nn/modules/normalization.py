"""Normalisation over features rather than the batch: LayerNorm, GroupNorm, RMSNorm,
LocalResponseNorm, as ``torch.nn`` (no running statistics)."""

from __future__ import annotations

import numbers

from ..._creation import empty
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


def make_affine(module, shape, affine: bool, bias: bool, dtype) -> None:
    """The per-feature ``weight`` (and ``bias`` unless ``bias=False``) of a normalisation
    layer, registered as None when not ``affine`` (PyTorch's state_dict keys either way)."""
    module.register_parameter("weight", Parameter(empty(shape, dtype=dtype)) if affine else None)
    module.register_parameter("bias", Parameter(empty(shape, dtype=dtype))
                              if affine and bias else None)


def reset_affine(module) -> None:
    """``weight`` to 1 and ``bias`` to 0, those that exist."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


def _shape_tuple(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dims, then scale by ``weight`` (1)
    and shift by ``bias`` (0) when ``elementwise_affine``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> nn.LayerNorm(2)(T.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        make_affine(self, self.normalized_shape, elementwise_affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Split the channels into ``num_groups`` groups and normalise each group of each
    sample; per-channel affine ``weight`` (1) and ``bias`` (0)."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        make_affine(self, num_channels, affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x ** 2) + eps) * weight`` over the last dims; ``eps=None`` means the
    dtype's machine epsilon."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Divide each value by a power of the summed squares of ``size`` neighbouring
    channels: ``x / (k + alpha / size * sum(x ** 2)) ** beta``."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ += ["CrossMapLRN2d"]


def _cross_map_windows(channels: int, size: int):
    """Which channels' squares each channel's scale sums, as a (C, C) 0/1 matrix: the
    running-window recurrence of PyTorch's legacy CrossMapLRN2d (its window is not centred
    like local_response_norm's, so the values differ)."""
    import numpy as np

    pre_pad = int((size - 1) / 2 + 1)
    windows = np.zeros((channels, channels))
    windows[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        windows[c] = windows[c - 1]
        if c < channels - pre_pad + 1:
            windows[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            windows[c, c - pre_pad] -= 1
    return windows


class CrossMapLRN2d(Module):
    """Legacy (Lua Torch) local response normalisation across channels of 4-D inputs:
    ``x * (k + alpha / size * window_sum(x ** 2)) ** -beta``."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        from ..._creation import tensor

        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        n, c, h, w = input.shape
        windows = tensor(_cross_map_windows(c, self.size), dtype=input.dtype)
        sums = (windows @ (input * input).reshape(n, c, h * w)).reshape(n, c, h, w)
        return input * (sums * (self.alpha / self.size) + self.k) ** -self.beta

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
