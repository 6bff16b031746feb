"""``retrograd.accelerator``, as ``torch.accelerator``: the one accelerator this process can
use (CUDA through CuPy, or none).  Without one, ``current_accelerator()`` is None,
``is_available()`` False, ``device_count()`` 0, and the calls that need a device raise
RuntimeError, as PyTorch does."""

from __future__ import annotations

from ..backend import device as _device
from . import queries

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index",
           "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _cuda():
    return queries


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU with CuPy) can be used."""
    return _cuda().is_available()


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return _cuda().device_count()


def current_accelerator(check_available: bool = False):
    """``device(type='cuda')`` when CuPy and a GPU are there, else None."""
    if queries.is_available():
        return _device("cuda")
    return None


def _need():
    if not is_available():
        raise RuntimeError(_NONE)
    return _cuda()


def current_device_index() -> int:
    """The index of the selected accelerator device."""
    return _need().current_device()


def set_device_index(device, /) -> None:
    """Select the accelerator device."""
    _need().set_device(device)


def synchronize(device=None, /) -> None:
    """Wait for the accelerator's queued work."""
    _need().synchronize(device)
