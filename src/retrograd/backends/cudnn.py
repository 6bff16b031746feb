"""``backends.cudnn``: retrograd does not use cuDNN (its GPU path is CuPy), so
``is_available()`` is False and ``version()`` None, as on a PyTorch build without CUDA.
``enabled``, ``benchmark``, ``deterministic``, ``allow_tf32`` and ``benchmark_limit`` are
plain module attributes with PyTorch's defaults; setting them changes nothing."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic",
           "allow_tf32", "benchmark_limit"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = None  # PyTorch reads None here when it has no cuDNN


def is_available() -> bool:
    """Whether cuDNN can be used: never, retrograd's convolutions do not call it."""
    return False


def version():
    """The cuDNN version: None, as no cuDNN is loaded."""
    return None


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,  # noqa: A002
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Set the flags for the duration of a ``with`` block, then restore them."""
    module = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {name: module[name] for name in names}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                  deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
