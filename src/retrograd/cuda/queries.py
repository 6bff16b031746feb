"""The functions of ``retrograd.cuda`` (see the package's docstring)."""

from __future__ import annotations

from ..backend import device as _device
from . import _runtime
from ._runtime import cupy_or_none, lazy_init

__all__ = [
    "is_available", "device_count", "is_initialized", "current_device", "set_device",
    "get_device_name", "get_device_capability", "get_device_properties", "synchronize",
    "manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache", "memory_allocated",
    "memory_reserved", "max_memory_allocated", "device", "is_bf16_supported",
]


def is_available() -> bool:
    """Whether a CUDA GPU can be used (CuPy installed and at least one device visible)."""
    return device_count() > 0


def device_count() -> int:
    """The number of visible CUDA GPUs (0 without CuPy or a driver)."""
    cupy = cupy_or_none()
    if cupy is None:
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no driver, or CUDA refused: no usable device
        return 0


def is_initialized() -> bool:
    """Whether CUDA has been set up in this process (by a call that needed a GPU)."""
    return _runtime.initialized


def _index(device=None) -> int:
    """A device index from None (the current one), an int, 'cuda:i' or a device."""
    if device is None:
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    dev = _device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return current_device() if dev.index is None else dev.index


def current_device() -> int:
    """The index of the selected CUDA device."""
    return int(lazy_init().cuda.runtime.getDevice())


def set_device(device) -> None:
    """Select the CUDA device that new GPU arrays go to."""
    cupy = lazy_init()
    index = _index(device)
    if index >= 0:  # PyTorch ignores negative indices
        cupy.cuda.runtime.setDevice(index)


def get_device_properties(device=None) -> dict:
    """The CUDA runtime's properties of ``device`` (a dict, from CuPy)."""
    cupy = lazy_init()
    return cupy.cuda.runtime.getDeviceProperties(_index(device))


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    name = get_device_properties(device)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple:
    """The GPU's compute capability ``(major, minor)``."""
    props = get_device_properties(device)
    return int(props["major"]), int(props["minor"])


def synchronize(device=None) -> None:
    """Wait until every kernel queued on ``device`` has finished."""
    cupy = lazy_init()
    with cupy.cuda.Device(_index(device)):
        cupy.cuda.runtime.deviceSynchronize()


def manual_seed(seed: int) -> None:
    """Seed the GPU random generator (a silent no-op without a GPU, as in PyTorch)."""
    if is_available():
        cupy_or_none().random.seed(int(seed) % (2 ** 32))


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's random generator (a no-op without a GPU)."""
    cupy = cupy_or_none()
    for index in range(device_count()):
        with cupy.cuda.Device(index):
            cupy.random.seed(int(seed) % (2 ** 32))


def seed() -> None:
    """Seed the GPU generator from fresh entropy (a no-op without a GPU)."""
    if is_available():
        cupy_or_none().random.seed()


def seed_all() -> None:
    """Seed every GPU's generator from fresh entropy (a no-op without a GPU)."""
    cupy = cupy_or_none()
    for index in range(device_count()):
        with cupy.cuda.Device(index):
            cupy.random.seed()


def empty_cache() -> None:
    """Return CuPy's cached, unused GPU memory to the driver (a no-op without a GPU)."""
    if is_initialized():
        cupy = cupy_or_none()
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory held by arrays (0 without a GPU, as in PyTorch)."""
    if not is_initialized():
        return 0
    return int(cupy_or_none().get_default_memory_pool().used_bytes())


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory held by CuPy's pool, in use or cached (0 without a GPU)."""
    if not is_initialized():
        return 0
    return int(cupy_or_none().get_default_memory_pool().total_bytes())


def max_memory_allocated(device=None) -> int:
    """CuPy's pool keeps no peak: the bytes held now (0 without a GPU)."""
    return memory_allocated(device)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: retrograd has no bfloat16 dtype (NumPy has none)."""
    return False


class device:
    """Context manager that selects a CUDA device inside its block, as ``torch.cuda.device``.

    Constructing it needs no GPU; entering it does."""

    def __init__(self, device):
        if device is None:
            self.idx = -1  # -1: leave the selection as it is
        elif isinstance(device, int) and not isinstance(device, bool):
            self.idx = device
        else:
            dev = _device(device)
            if dev.type != "cuda":
                raise ValueError(f"Expected a cuda device, but got: {dev}")
            self.idx = -1 if dev.index is None else dev.index
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return self
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False
