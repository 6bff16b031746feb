"""``backends.mkldnn``: oneDNN, which retrograd does not call (NumPy's BLAS does its
matrix work), so ``is_available()`` is False; ``enabled``, ``deterministic`` and
``allow_tf32`` keep PyTorch's defaults and change nothing."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["is_available", "is_acl_available", "flags", "enabled", "deterministic",
           "allow_tf32"]

enabled = True
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether oneDNN (MKL-DNN) can be used: never, retrograd does not call it."""
    return False


def is_acl_available() -> bool:
    """Whether the Arm Compute Library is there for oneDNN: no."""
    return False


@contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Set the flags for the duration of a ``with`` block, then restore them."""
    module = globals()
    saved = {name: module[name] for name in ("enabled", "deterministic", "allow_tf32")}
    module.update(enabled=enabled, deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
