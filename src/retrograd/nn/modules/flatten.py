"""Flatten and Unflatten."""

from __future__ import annotations

from ..module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` into one (by default all but the batch)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (a tuple or list of ints)."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input_size) -> None:
        if isinstance(input_size, (tuple, list)):
            for idx, elem in enumerate(input_size):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element "
                                    f"of type {type(elem).__name__} at pos {idx}")
            return
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(input_size).__name__}")

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
