"""Dropout modules."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["Dropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training mode, scaling the rest by
    ``1 / (1 - p)``; the identity in eval mode."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)
