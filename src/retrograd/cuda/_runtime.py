"""Finding CuPy and setting CUDA up once, for ``retrograd.cuda`` and ``retrograd.accelerator``."""

from __future__ import annotations

import functools

#: whether a call has needed (and found) a GPU in this process
initialized = False

_NOT_BUILT = ("retrograd has no CUDA backend here: CuPy is not installed (pip install "
              "retrograd[gpu], or the cupy wheel for your CUDA version, on a machine with an "
              "NVIDIA GPU); check retrograd.cuda.is_available() before using the GPU")


@functools.lru_cache(maxsize=1)
def cupy_or_none():
    """The cupy module, or None when it is not installed (or fails to import); looked up
    once (a failing import costs a search of sys.path every time)."""
    try:
        import cupy
    except Exception:  # ImportError, or a CuPy built for another CUDA failing to load
        return None
    return cupy


def lazy_init():
    """cupy, with a GPU known to be there; else PyTorch's errors: AssertionError without a
    CUDA backend (CPU-only build), RuntimeError with one but no usable GPU."""
    global initialized
    cupy = cupy_or_none()
    if cupy is None:
        raise AssertionError(_NOT_BUILT)
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise RuntimeError(f"Found no NVIDIA driver on your system ({e}); check that the "
                           "GPU driver is installed, or run on the CPU") from None
    if count == 0:
        raise RuntimeError("No CUDA GPUs are available; run on the CPU (device='cpu')")
    initialized = True
    return cupy
