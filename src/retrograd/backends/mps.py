"""``backends.mps``: Apple's Metal backend, which retrograd does not have."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether the MPS device can be used: never in retrograd."""
    return False


def is_built() -> bool:
    """Whether retrograd was built with MPS support: it was not."""
    return False
