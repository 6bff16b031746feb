"""DataParallel, as ``torch.nn.DataParallel`` on a machine without GPUs: it runs the module.

PyTorch's DataParallel splits each batch across the GPUs of one process, runs a replica of
the module on each and gathers the outputs.  Without a GPU (PyTorch's CPU build, or a CUDA
build on a machine with none) it does none of that: ``module`` is kept, ``device_ids`` is
``[]`` whatever was passed, and ``forward`` calls the module.  retrograd does the same,
so ``model = nn.DataParallel(model)`` in a PyTorch script runs unchanged on a CPU, and the
``module.`` prefix it gives the state_dict keys is PyTorch's.

With GPUs (CuPy), one device is what PyTorch does too: the module is moved there and each
forward moves the tensors it is given there.  Splitting a batch across several GPUs is not
implemented: that raises, naming the GPUs, and points to DistributedDataParallel (one
process per GPU), which PyTorch itself recommends over DataParallel.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

from ...backend import device as _device
from ...tensor import Tensor
from ..module import Module

__all__ = ["DataParallel"]


def _gpu_count() -> int:
    """Visible CUDA GPUs, 0 without CuPy (retrograd.cuda.device_count()'s answer; that
    package sits a layer above nn, so asked here directly)."""
    if importlib.util.find_spec("cupy") is None:
        return 0
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # a CuPy for another CUDA, no driver: no usable GPU
        return 0


def _device_index(d, arg: str) -> int:
    """A GPU index from an int, 'cuda:1' or device('cuda', 1) (PyTorch's _get_device_index
    with optional=True: a bare 'cuda' is the current device, 0 here)."""
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    try:
        dev = d if isinstance(d, _device) else _device(d)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"DataParallel: {arg} entries must be GPU indices or 'cuda:N' "
                         f"devices, got {d!r}") from exc
    if dev.type != "cuda":
        raise ValueError(f"DataParallel: {arg} must name CUDA devices, got {d!r}")
    return 0 if dev.index is None else dev.index


def _to_device(value, dev):
    """Tensors in ``value`` (nested in tuples, lists and dicts) moved to ``dev``."""
    if isinstance(value, Tensor):
        return value.to(dev)
    if isinstance(value, tuple) and hasattr(value, "_fields"):   # a namedtuple
        return type(value)(*(_to_device(v, dev) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_to_device(v, dev) for v in value)
    if isinstance(value, Mapping):
        return type(value)((k, _to_device(v, dev)) for k, v in value.items())
    return value


class DataParallel(Module):
    """Run ``module`` (on a machine without GPUs, as PyTorch: the module itself, batch
    unsplit); ``module`` holds it and the state_dict keys start with ``module.``.

    >>> import retrograd as T
    >>> net = T.nn.DataParallel(T.nn.Linear(3, 2))
    >>> net.device_ids, list(net.state_dict())
    ([], ['module.weight', 'module.bias'])
    >>> net(T.ones(4, 3)).shape
    retrograd.Size([4, 2])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        gpus = _gpu_count()
        if gpus == 0:
            # PyTorch without a GPU: everything else is ignored, as there
            self.module = module
            self.device_ids = []
            return
        ids = list(range(gpus)) if device_ids is None else [
            _device_index(d, "device_ids") for d in device_ids]
        if not ids:
            raise RuntimeError("no available devices were found")
        bad = [i for i in ids if not 0 <= i < gpus]
        if bad:
            raise ValueError(f"DataParallel: device_ids {ids} name GPUs {bad} but this "
                             f"machine has {gpus} (cuda:0 to cuda:{gpus - 1})")
        if len(ids) > 1:
            raise NotImplementedError(
                f"DataParallel: device_ids {ids} name {len(ids)} GPUs, and retrograd's "
                "DataParallel does not split a batch across GPUs; use "
                "nn.parallel.DistributedDataParallel with one process per GPU (what PyTorch "
                f"recommends too), or one GPU: DataParallel(module, device_ids=[{ids[0]}])")
        self.dim = dim
        self.module = module
        self.device_ids = ids
        self.output_device = ids[0] if output_device is None else _device_index(
            output_device, "output_device")
        self.src_device_obj = _device("cuda", ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of them on "
                    f"device: {t.device}")
        return self.module(*_to_device(inputs, self.src_device_obj),
                           **_to_device(kwargs, self.src_device_obj))
