"""DistributedDataParallel: one model replica per rank, gradients averaged during backward.

At construction rank 0's parameters and buffers are broadcast, so every replica starts equal.
The parameters that require grad are packed, last first (backward meets them roughly in that
order), into buckets of at most ``bucket_cap_mb``.  A post-accumulate-grad hook on each
parameter counts it ready; when a bucket's last gradient lands, the bucket is copied into one
flat buffer (allocated once) and its all-reduce starts non-blocking, while backward goes on
computing the earlier layers' gradients.  When the last bucket has started (inside the last
hook, so before ``backward()`` returns) every all-reduce is waited for, and divided by the
world size straight into the ``.grad`` tensors, in place.

The ranks' parameter and buffer layouts are checked to agree once, at construction (as
PyTorch does): the buckets are made from them, so every later bucket layout is the same on
every rank and the hot path carries no check.  On a world of one the averages are the
gradients themselves, so backward moves no data (the hooks still keep the bookkeeping that
catches a parameter left without a gradient).
"""

from __future__ import annotations

import contextlib

import numpy as np

from ...autograd.grad_mode import is_grad_enabled
from ...backend import namespace
from ...distributed import _check, _mpi
from ...distributed.collectives import ReduceOp, _reduction
from ...distributed.process_group import resolve
from ...tensor import Tensor, make_tensor
from ..module import Module

_DEFAULT_BUCKET_MB = 25.0
_SAME_MODULE = ("every rank must wrap the same model: parameters and buffers of the same "
                "shapes and dtypes, in the same order")


class _Bucket:
    """Parameters whose gradients travel in one all-reduce."""

    def __init__(self, index, params, positions):
        self.index = index
        self.params = params          # Parameter objects
        self.positions = positions    # their indices in the DDP's parameter list
        first = params[0]._data
        self.xp = namespace(first)
        self.dtype = first.dtype
        self.sizes = [int(p._data.size) for p in params]
        self.offsets = np.cumsum([0] + self.sizes).tolist()
        self.buffer = self.xp.zeros(self.offsets[-1], dtype=self.dtype)
        self.pending = len(params)
        self.work = None              # (request, reduced array)

    def fill(self):
        """Copy the parameters' gradients into the flat buffer (zeros for a missing one)."""
        grads = [p._grad for p in self.params]
        if all(g is not None for g in grads):
            self.xp.concatenate([g._data.reshape(-1) for g in grads], out=self.buffer)
            return
        for g, lo, hi in zip(grads, self.offsets, self.offsets[1:]):
            self.buffer[lo:hi] = 0 if g is None else g._data.reshape(-1)


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
            self._sync_states(list(module.parameters()) + list(module.buffers()))
        self._buckets = self._make_buckets()
        self._bucket_of = {}
        for b in self._buckets:
            for pos in b.positions:
                self._bucket_of[pos] = b
        self._expecting = False   # a forward under sync prepared a reduction
        self._ready = set()
        self._launched = []
        self._requests = []
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                              for i, p in enumerate(self._params)]

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
            f"grad) and {len(buffers)} buffers"), "module", _SAME_MODULE)

    def _sync_states(self, tensors):
        """Rank 0's values into every rank's tensors: one broadcast per dtype (the tensors
        packed into one flat buffer), not one per tensor.  Their layout matches across the
        ranks: checked at construction for parameters, and for buffers (which a module may
        replace) by the one check every rank makes here each time."""
        if self.world_size == 1 or not tensors:
            return
        g = self.process_group
        _check.check_same(g, "DistributedDataParallel", (
            "DistributedDataParallel", tuple(tuple(int(n) for n in t._data.shape)
                                             for t in tensors),
            tuple(t._data.dtype.str for t in tensors), "buffers"), "module", _SAME_MODULE)
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype.str, []).append(t._data)
        for arrays in by_dtype.values():
            xp = namespace(arrays[0])
            flat = xp.concatenate([a.reshape(-1) for a in arrays])
            g.comm.Bcast(flat.view(np.uint8), root=0)   # group rank 0: its global ranks[0]
            offset = 0
            for a in arrays:
                a[...] = flat[offset:offset + a.size].reshape(a.shape)
                offset += a.size

    def _make_buckets(self):
        buckets, current, positions, nbytes, dtype = [], [], [], 0, None
        for pos in reversed(range(len(self._params))):
            p = self._params[pos]
            size = p._data.nbytes
            if current and (p._data.dtype != dtype or nbytes + size > self.bucket_bytes_cap):
                buckets.append(_Bucket(len(buckets), current, positions))
                current, positions, nbytes = [], [], 0
            current.append(p)
            positions.append(pos)
            nbytes += size
            dtype = p._data.dtype
        if current:
            buckets.append(_Bucket(len(buckets), current, positions))
        return buckets

    # ----------------------------------------------------------------------- forward
    def forward(self, *inputs, **kwargs):
        if self._expecting and self._ready:
            missing = [i for i in range(len(self._params)) if i not in self._ready]
            raise RuntimeError(
                "DistributedDataParallel: Expected to have finished reduction in the prior "
                "iteration before starting a new one. Parameters with indices "
                f"{missing} received no gradient in the last backward: pass "
                "find_unused_parameters=True to DistributedDataParallel, or make sure every "
                "parameter takes part in computing the loss")
        if self.broadcast_buffers and self.world_size > 1:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync_states(buffers)
        sync = is_grad_enabled() and self.require_backward_grad_sync and bool(self._params)
        self._prepare(sync)
        out = self.module(*inputs, **kwargs)
        if sync and self.find_unused_parameters:
            reached = _parameters_reached(out)
            for i, p in enumerate(self._params):
                if id(p) not in reached:
                    self._mark_ready(i, used=False)
        return out

    def _prepare(self, sync):
        self._expecting = sync
        self._ready = set()
        self._unused = set()
        self._launched = []
        self._requests = []
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None

    # ---------------------------------------------------------------------- backward
    def _hook_for(self, index):
        def hook(param):
            if self._expecting and index not in self._ready:
                self._mark_ready(index, used=True)
        return hook

    def _mark_ready(self, index, used):
        self._ready.add(index)
        if not used:
            self._unused.add(index)
        bucket = self._bucket_of[index]
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch(bucket)
        elif self._requests:
            # MPI progresses non-blocking transfers only inside MPI calls: nudge them
            _mpi.mpi().Request.Testall(self._requests)
        if len(self._ready) == len(self._params):
            self._finish()

    def _launch(self, bucket):
        """The bucket's gradients are all in: start its all-reduce (on a world of one the
        sum is the gradients themselves, so there is nothing to move)."""
        if self.world_size == 1:
            return
        bucket.fill()
        work, mpi_op, _ = _reduction(bucket.buffer, ReduceOp.SUM, "DistributedDataParallel")
        request = self.process_group.comm.Iallreduce(_mpi.mpi().IN_PLACE, work, mpi_op)
        bucket.work = work
        self._requests.append(request)
        self._launched.append(bucket)

    def _finish(self):
        self._expecting = False
        if self.world_size == 1:
            return
        MPI = _mpi.mpi()
        MPI.Request.Waitall(self._requests)
        used_anywhere = None
        if self.find_unused_parameters:
            flags = np.zeros(len(self._params), dtype=np.int32)
            flags[[i for i in range(len(self._params)) if i not in self._unused]] = 1
            self.process_group.comm.Allreduce(MPI.IN_PLACE, flags, MPI.SUM)
            used_anywhere = flags
        n = self.world_size
        for b in self._launched:
            reduced = b.work
            for p, pos, lo, hi in zip(b.params, b.positions, b.offsets, b.offsets[1:]):
                if used_anywhere is not None and not used_anywhere[pos]:
                    continue  # no rank used it: its .grad stays as it was (None), as torch
                value = reduced[lo:hi].reshape(p._data.shape)
                grad = p._grad
                if grad is None:
                    p.grad = make_tensor((value / n).astype(p._data.dtype, copy=False))
                elif value.dtype == grad._data.dtype:
                    b.xp.divide(value, n, out=grad._data)   # average and copy in one pass
                else:                                       # float16, reduced in float32
                    grad._data[...] = value / n
            b.work = None
        self._launched = []
        self._requests = []

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


def _parameters_reached(out) -> set:
    """ids of the leaves that the graph behind ``out`` (tensors in any nesting) reaches."""
    roots, reached = [], set()
    stack = [out]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.grad_fn is not None:
                roots.append(item.grad_fn)
            elif item.requires_grad:
                reached.add(id(item))  # the output is a parameter itself
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    seen = set()
    nodes = roots
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                nodes.append(nxt)
    return reached
