"""``backends.cpu``: what the CPU offers the array library."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The widest SIMD level NumPy dispatches to, in PyTorch's words: ``"AVX512"``,
    ``"AVX2"`` or ``"DEFAULT"`` (on other architectures, ``"DEFAULT"``)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as found
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as found
    if all(found.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL")):
        return "AVX512"
    return "AVX2" if found.get("AVX2") else "DEFAULT"
