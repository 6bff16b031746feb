"""DistributedDataParallel's reducer: the gradient buckets and their all-reduces.

A plain object (not a Module: its attributes change every iteration, and Module's attribute
protocol would tax each change), driven by post-accumulate-grad hooks during backward.
"""

from __future__ import annotations

import numpy as np

from ...backend import namespace
from ...distributed import _mpi
from ...distributed.collectives import ReduceOp, _reduction
from ...tensor import Tensor, make_tensor

# the first bucket (the last layers, whose gradients backward produces first) is small, so
# that its all-reduce starts early, as PyTorch's (dist._DEFAULT_FIRST_BUCKET_BYTES)
FIRST_BUCKET_BYTES = 2 ** 20


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
        # each parameter's stretch of the buffer, shaped as it (gradient_as_bucket_view)
        self.views = [self.buffer[lo:hi].reshape(p._data.shape)
                      for p, lo, hi in zip(params, self.offsets, self.offsets[1:])]
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


class Reducer:
    """Counts gradients in during one backward; starts each bucket's all-reduce when it is
    full; when the last gradient is in, waits for them all and averages into ``.grad``.

    With ``as_view`` (DDP's gradient_as_bucket_view) each ``.grad`` is instead its
    parameter's stretch of the bucket buffer, as PyTorch's: a gradient that arrives as a
    tensor of its own is copied in once and ``.grad`` becomes the view, so a later backward
    accumulates straight into the bucket (nothing to copy when the gradients are zeroed in
    place), the all-reduce runs on the buffer, and the average is written back by dividing
    the buffer in place: no copy out, and no separate gradient arrays kept."""

    def __init__(self, params, group, bucket_bytes_cap, find_unused_parameters,
                 as_view=False):
        self.params = params
        self.group = group
        self.world_size = group.size()
        self.find_unused_parameters = find_unused_parameters
        self.as_view = as_view
        self.buckets = make_buckets(params, bucket_bytes_cap)
        self.bucket_of = {pos: b for b in self.buckets for pos in b.positions}
        # (bucket, index in it) of each parameter, for the views
        self.slot_of = {pos: (b, k) for b in self.buckets for k, pos in enumerate(b.positions)}
        if as_view:   # gradients that exist already become views now, as PyTorch's
            for i, p in enumerate(params):
                if p._grad is not None:
                    self.into_view(i)
        self.expecting = False      # a forward under sync prepared a reduction
        self.ready = set()
        self.unused = set()
        self.launched = []
        self.requests = []

    def unfinished(self):
        """The indices still without a gradient, when the last backward left some."""
        if self.expecting and self.ready:
            return [i for i in range(len(self.params)) if i not in self.ready]
        return None

    def prepare(self, sync):
        self.expecting = sync
        self.ready = set()
        self.unused = set()
        self.launched = []
        self.requests = []
        for b in self.buckets:
            b.pending = len(b.params)
            b.work = None

    def hook_for(self, index):
        def hook(param):
            if self.expecting and index not in self.ready:
                self.mark_ready(index, used=True)
        return hook

    def mark_unreached(self, reached):
        for i, p in enumerate(self.params):
            if id(p) not in reached:
                self.mark_ready(i, used=False)

    def into_view(self, index):
        """Make ``.grad`` the parameter's view of its bucket (copying a gradient that lives
        elsewhere into it); zeros in the bucket when there is no gradient."""
        bucket, k = self.slot_of[index]
        view = bucket.views[k]
        grad = self.params[index]._grad
        if grad is None:
            view[...] = 0
        elif grad._data is not view:
            view[...] = grad._data
            self.params[index]._grad = make_tensor(view)

    def mark_ready(self, index, used):
        self.ready.add(index)
        if not used:
            self.unused.add(index)
        if self.as_view:
            self.into_view(index)
        bucket = self.bucket_of[index]
        bucket.pending -= 1
        if bucket.pending == 0:
            self.launch(bucket)
        elif self.requests:
            # MPI progresses non-blocking transfers only inside MPI calls: nudge them
            _mpi.mpi().Request.Testall(self.requests)
        if len(self.ready) == len(self.params):
            self.finish()

    def launch(self, bucket):
        """The bucket's gradients are all in: start its all-reduce (on a world of one the
        sum is the gradients themselves, so there is nothing to move)."""
        if self.world_size == 1:
            return
        if not self.as_view:      # with views the gradients are in the buffer already
            bucket.fill()
        work, mpi_op, _ = _reduction(bucket.buffer, ReduceOp.SUM, "DistributedDataParallel")
        self.requests.append(self.group.comm.Iallreduce(_mpi.mpi().IN_PLACE, work, mpi_op))
        bucket.work = work
        self.launched.append(bucket)

    def finish(self):
        self.expecting = False
        if self.world_size == 1:
            return
        MPI = _mpi.mpi()
        MPI.Request.Waitall(self.requests)
        used_anywhere = None
        if self.find_unused_parameters:
            flags = np.zeros(len(self.params), dtype=np.int32)
            flags[[i for i in range(len(self.params)) if i not in self.unused]] = 1
            self.group.comm.Allreduce(MPI.IN_PLACE, flags, MPI.SUM)
            used_anywhere = flags
        n = self.world_size
        if self.as_view:
            self._finish_views(used_anywhere)
            return
        for b in self.launched:
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
        self.launched = []
        self.requests = []

    def _finish_views(self, used_anywhere):
        """The average in the buffer itself; a parameter without a gradient on this rank
        but used on another gets its view as ``.grad`` (one no rank used keeps None)."""
        n = self.world_size
        for b in self.launched:
            if b.work is b.buffer:
                b.xp.divide(b.buffer, n, out=b.buffer)
            else:                  # float16, reduced in float32
                b.buffer[...] = b.work / n
            for p, pos, view in zip(b.params, b.positions, b.views):
                if p._grad is None and (used_anywhere is None or used_anywhere[pos]):
                    p._grad = make_tensor(view)
            b.work = None
        self.launched = []
        self.requests = []


def make_buckets(params, cap):
    """Buckets of one dtype and at most ``cap`` bytes (the first at most 1 MiB), in reverse
    parameter order: backward produces the last layers' gradients first."""
    buckets, current, positions, nbytes, dtype = [], [], [], 0, None
    limit = min(cap, FIRST_BUCKET_BYTES)
    for pos in reversed(range(len(params))):
        p = params[pos]
        size = p._data.nbytes
        if current and (p._data.dtype != dtype or nbytes + size > limit):
            buckets.append(_Bucket(len(buckets), current, positions))
            current, positions, nbytes, limit = [], [], 0, cap
        current.append(p)
        positions.append(pos)
        nbytes += size
        dtype = p._data.dtype
    if current:
        buckets.append(_Bucket(len(buckets), current, positions))
    return buckets


def parameters_reached(out) -> set:
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
