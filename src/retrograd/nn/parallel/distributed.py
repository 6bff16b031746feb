"""DistributedDataParallel: one model replica per rank, gradients averaged during backward.

At construction rank 0's parameters and buffers are broadcast, so every replica starts equal.
The parameters that require grad are packed, last first (backward meets them roughly in that
order), into buckets of at most ``bucket_cap_mb`` (the first at most 1 MiB, so that its
all-reduce starts early, as PyTorch's).  A post-accumulate-grad hook on each
parameter counts it ready; when a bucket's last gradient lands, the bucket is copied into one
flat buffer (allocated once) and its all-reduce starts non-blocking, while backward goes on
computing the earlier layers' gradients.  When the last bucket has started (inside the last
hook, so before ``backward()`` returns) every all-reduce is waited for, and divided by the
world size straight into the ``.grad`` tensors, in place.  With
``gradient_as_bucket_view=True`` (as PyTorch's) each ``.grad`` is instead a view of its
bucket's buffer: a gradient is copied in once when it is not one already, later backwards
(after ``zero_grad(set_to_none=False)``, or inside ``no_sync()``) accumulate straight into
the bucket, and the average is the buffer divided in place, with no copy back and no
gradient arrays besides the buckets.

The ranks' parameter and buffer layouts are checked to agree once, at construction (as
PyTorch does), whatever the debug level: the buckets are made from them, so every later
bucket layout is the same on every rank and the hot path carries no check.  The buffers
broadcast before each forward (a module may replace them) are checked again each time only
in the debug mode (``RETROGRAD_DISTRIBUTED_DEBUG=DETAIL``); without it a buffer whose size
differs across ranks makes the broadcast fail on the receiving ranks with a RuntimeError that
says so, and one of another dtype but the same byte size is copied as bytes.  On a world of
one the averages are the gradients themselves, so backward moves no data (the hooks still
keep the bookkeeping that catches a parameter left without a gradient).
"""

from __future__ import annotations

import contextlib

import numpy as np

from ...autograd.grad_mode import is_grad_enabled
from ...backend import namespace
from ...distributed import _check, _mpi
from ...distributed.process_group import resolve
from ..module import Module
from ._reducer import Reducer, parameters_reached

_DEFAULT_BUCKET_MB = 25.0
_SAME_MODULE = ("every rank must wrap the same model: parameters and buffers of the same "
                "shapes and dtypes, in the same order")


class DistributedDataParallel(Module):
    """Wrap ``module`` so that ``backward()`` averages its gradients across the ranks.

    >>> import retrograd.distributed as dist
    >>> from retrograd import nn
    >>> dist.init_process_group("mpi")                  # doctest: +SKIP
    >>> ddp = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))   # doctest: +SKIP
    >>> ddp(x).sum().backward()   # grads now the average over ranks  # doctest: +SKIP
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **unsupported):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError("DistributedDataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        used = sorted(k for k, v in unsupported.items() if v not in (None, False))
        if used:
            raise NotImplementedError(f"DistributedDataParallel: {', '.join(used)} is not "
                                      "supported by retrograd's MPI DDP; leave it unset")
        self.module = module
        self.process_group = resolve(process_group, "DistributedDataParallel")
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.static_graph = bool(static_graph)
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_MB if bucket_cap_mb is None
                                     else bucket_cap_mb) * 2 ** 20)
        self.world_size = self.process_group.size()
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._check_layout()
        if init_sync:
            self._sync_states(list(module.parameters()) + list(module.buffers()),
                              always_check=True)
        # PyTorch syncs the buffers it found at construction; a module with none skips the
        # walk over its submodules on every forward
        self._has_buffers = any(True for _ in module.buffers())
        self._reducer = Reducer(self._params, self.process_group, self.bucket_bytes_cap,
                                self.find_unused_parameters, self.gradient_as_bucket_view)
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._reducer.hook_for(i))
                              for i, p in enumerate(self._params)]

    @property
    def _buckets(self):
        return self._reducer.buckets

    # ------------------------------------------------------------------ construction
    def _check_layout(self):
        """Every rank wraps a module with the same parameters and buffers (shapes, dtypes,
        which require grad), else every rank raises naming them: the buckets are built from
        this layout, so it is checked once here and never again in backward."""
        params = list(self.module.parameters())
        buffers = list(self.module.buffers())
        _check.check_same(self.process_group, "DistributedDataParallel", (
            "DistributedDataParallel",
            tuple(tuple(int(n) for n in t._data.shape) for t in params + buffers),
            tuple(t._data.dtype.str for t in params + buffers),
            f"{len(params)} parameters ({sum(p.requires_grad for p in params)} requiring "
            f"grad) and {len(buffers)} buffers"), "module", _SAME_MODULE, always=True)

    def _sync_states(self, tensors, always_check=False):
        """Rank 0's values into every rank's tensors: one broadcast per dtype (the tensors
        packed into one flat buffer), not one per tensor.  Their layout is checked to match
        across the ranks at construction, and before each forward's buffer broadcast (a
        module may replace its buffers) in the debug mode only."""
        if self.world_size == 1 or not tensors:
            return
        g = self.process_group
        _check.check_same(g, "DistributedDataParallel", (
            "DistributedDataParallel", tuple(tuple(int(n) for n in t._data.shape)
                                             for t in tensors),
            tuple(t._data.dtype.str for t in tensors), "buffers"), "module", _SAME_MODULE,
            always=always_check)
        MPI = _mpi.mpi()
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype.str, []).append(t._data)
        for arrays in by_dtype.values():
            xp = namespace(arrays[0])
            flat = xp.concatenate([a.reshape(-1) for a in arrays])
            try:
                g.comm.Bcast(flat.view(np.uint8), root=0)   # group rank 0: global ranks[0]
            except MPI.Exception as exc:   # buffers of other sizes than rank 0's
                raise RuntimeError(
                    f"DistributedDataParallel: broadcasting rank {g.ranks[0]}'s buffers "
                    f"failed on rank {g.ranks[g.rank()]} ({str(exc).splitlines()[0]}); "
                    f"{_SAME_MODULE}. Run with RETROGRAD_DISTRIBUTED_DEBUG=DETAIL to check "
                    "them before each forward and name every rank's shapes") from exc
            offset = 0
            for a in arrays:
                a[...] = flat[offset:offset + a.size].reshape(a.shape)
                offset += a.size

    # ----------------------------------------------------------------------- forward
    def forward(self, *inputs, **kwargs):
        reducer = self._reducer
        missing = reducer.unfinished()
        if missing is not None:
            raise RuntimeError(
                "DistributedDataParallel: Expected to have finished reduction in the prior "
                "iteration before starting a new one. Parameters with indices "
                f"{missing} received no gradient in the last backward: pass "
                "find_unused_parameters=True to DistributedDataParallel, or make sure every "
                "parameter takes part in computing the loss")
        if self._has_buffers and self.broadcast_buffers and self.world_size > 1:
            self._sync_states(list(self.module.buffers()))
        sync = is_grad_enabled() and self.require_backward_grad_sync and bool(self._params)
        reducer.prepare(sync)
        out = self.module(*inputs, **kwargs)
        if sync and self.find_unused_parameters:
            reducer.mark_unreached(parameters_reached(out))
        return out

    # ------------------------------------------------------------------ public extras
    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients locally: backward passes inside skip the all-reduce, the
        first one outside averages everything accumulated."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


