"""``nn.attention``: choosing the kernel behind ``scaled_dot_product_attention``.

PyTorch has several (math, flash, memory-efficient, cuDNN) and ``sdpa_kernel`` limits which
may run.  retrograd has one, the math formulation, used whatever is chosen: the context
manager here checks its argument as PyTorch does and keeps the chosen list (readable
through :func:`current_backends`) so code written for PyTorch runs unchanged, but it
selects nothing, and a choice PyTorch would refuse on the CPU (no math kernel, no usable
fused one) is not refused here.
"""

from __future__ import annotations

import contextlib
import threading
from enum import IntEnum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The attention kernels PyTorch knows, with its values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_DEFAULT = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
            SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.OVERRIDEABLE]
_state = threading.local()


def current_backends() -> list:
    """The backends the innermost ``sdpa_kernel`` allows (all of them outside one)."""
    return list(getattr(_state, "backends", _DEFAULT))


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Allow only ``backends`` (one SDPBackend or a list) inside the ``with`` block;
    ``set_priority`` orders them.  In retrograd every choice computes with the math
    kernel (see the module docstring).

    Examples
    --------
    >>> from retrograd.nn.attention import SDPBackend, sdpa_kernel, current_backends
    >>> with sdpa_kernel([SDPBackend.MATH]):
    ...     current_backends()
    [<SDPBackend.MATH: 0>]
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = getattr(_state, "backends", None)
    _state.backends = list(dict.fromkeys(backends))
    try:
        yield {}
    finally:
        if previous is None:
            del _state.backends
        else:
            _state.backends = previous
