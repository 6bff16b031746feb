"""Rearranging channels into space and back: PixelShuffle, PixelUnshuffle, ChannelShuffle."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r), r the ``upscale_factor``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> nn.PixelShuffle(2)(T.zeros(1, 8, 3, 3)).shape
    retrograd.Size([1, 2, 6, 6])
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), r the ``downscale_factor``."""

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups (ShuffleNet): (N, g * c, ...) read as
    (N, g, c, ...) and transposed to (N, c, g, ...)."""

    __constants__ = ["groups"]

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
