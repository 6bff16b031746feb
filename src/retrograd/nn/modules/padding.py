"""Padding layers over ``F.pad``: zero, constant, reflection, replication and circular
padding in 1, 2 and 3 dims. ``padding`` is an int (every side) or a tuple ordered from the
last dim: (left, right[, top, bottom[, front, back]])."""

from __future__ import annotations

from .. import functional as F
from ..module import Module
from .conv import _ntuple

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


class _PadNd(Module):
    __constants__ = ["padding"]
    _dims = 0
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> nn.ConstantPad1d((1, 2), 9.0)(T.tensor([[1.0, 2.0]]))
    tensor([[9., 1., 2., 9., 9.]])
    """

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge value not repeated)."""

    _dims = 1
    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dims with their reflection."""

    _dims = 2
    _mode = "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dims with their reflection."""

    _dims = 3
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values."""

    _dims = 1
    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dims by repeating their edge values."""

    _dims = 2
    _mode = "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dims by repeating their edge values."""

    _dims = 3
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        n = self._dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (periodic)."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around."""

    _dims = 3
