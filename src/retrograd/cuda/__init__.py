"""``retrograd.cuda``: device queries, as ``torch.cuda``.

retrograd computes on an NVIDIA GPU through CuPy (``pip install retrograd[gpu]``).  Without
CuPy this module behaves as a CPU-only PyTorch build's ``torch.cuda``: ``is_available()`` is
False, ``device_count()`` is 0, seeding is a silent no-op, the memory counters read 0, and
what needs a GPU (``current_device()``, ``get_device_name()``, ``synchronize()``...) raises
AssertionError.  With CuPy but no usable GPU those raise RuntimeError, as a CUDA build of
PyTorch does on a machine without one.

The usual device choice runs anywhere::

    device = "cuda" if retrograd.cuda.is_available() else "cpu"
    x = x.to(device)
"""

from . import accelerator  # noqa: F401  (retrograd.accelerator, re-exported at top level)
from .queries import (
    current_device, device, device_count, empty_cache, get_device_capability, get_device_name,
    get_device_properties, is_available, is_bf16_supported, is_initialized,
    manual_seed, manual_seed_all, max_memory_allocated, memory_allocated, memory_reserved, seed,
    seed_all, set_device, synchronize,
)
from .queries import __all__  # noqa: F401
