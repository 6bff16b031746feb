"""Collectives on retrograd tensors over MPI, in place and with PyTorch's signatures.

Contiguous arrays go to MPI as they are (mpi4py's buffer protocol: no copy, no pickling);
a non-contiguous tensor is staged through one contiguous copy and written back.

Every rank must pass a tensor of the same shape and dtype (and the same op and root).  As in
PyTorch this is not checked by default: a mismatch is what MPI makes of it (an MPI error on
some ranks, which becomes a RuntimeError saying what to do, and wrong data or a hang on
others: see ``_check``).  In the debug mode (``RETROGRAD_DISTRIBUTED_DEBUG=DETAIL``,
``TORCH_DISTRIBUTED_DEBUG=DETAIL``, ``set_debug_level(DebugLevel.DETAIL)``, or
``RETROGRAD_DISTRIBUTED_CHECK=1``) the ranks check before each collective, in one 16-byte
all-reduce, that they agree, and every rank raises an error naming each rank's shape.

As in PyTorch, collectives write the tensor's memory without autograd: a leaf that requires
grad may be passed, no graph is recorded and its version counter does not move.
"""

from __future__ import annotations

import enum

import numpy as np

from ..backend import namespace
from ..tensor import Tensor
from . import _check, _mpi
from .process_group import resolve


class ReduceOp(enum.Enum):
    """How all_reduce / reduce / reduce_scatter combine the ranks' tensors."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"


def _mpi_failure(exc, g, fn, arr):
    """The RuntimeError for an MPI error inside a collective: almost always ranks that passed
    tensors of different sizes (MPI says "Message truncated"); only this rank knows, so the
    message says how to make every rank name its shape."""
    first = str(exc).splitlines()[0].replace(", error stack:", "").strip()
    where = (f"on rank {g.ranks[g.rank()]}, whose tensor has shape {tuple(arr.shape)} "
             f"{arr.dtype.name}" if arr is not None else f"on rank {g.ranks[g.rank()]}")
    if _check.ENABLED:   # the layouts were checked: something else went wrong
        return RuntimeError(f"{fn}: MPI failed {where}: {first}")
    return RuntimeError(
        f"{fn}: MPI failed {where}: {first}. The ranks most likely passed tensors of "
        "different shapes or dtypes (or a different op or root); every rank must pass the "
        "same. Run with RETROGRAD_DISTRIBUTED_DEBUG=DETAIL (or call "
        "dist.set_debug_level(dist.DebugLevel.DETAIL) on every rank) to check each "
        "collective and name every rank's shape")


class Work:
    """The handle of a collective started with ``async_op=True``: ``wait()`` blocks until it
    is done (and writes the result into the tensors), ``is_completed()`` asks without
    blocking."""

    def __init__(self, requests, finish=None, keep=(), failure=None):
        self._requests = list(requests)
        self._finish = finish
        self._keep = keep  # the buffers MPI is writing into stay alive until the end
        self._failure = failure   # (group, fn, array) for the error message of a failure
        self._done = False

    def _failed(self, exc):
        if self._failure is None:
            return exc
        self._done = True
        self._requests = []
        self._keep = ()
        return _mpi_failure(exc, *self._failure)

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()
            self._requests = []
            self._keep = ()

    def wait(self, timeout=None) -> bool:
        if not self._done:
            MPI = _mpi.mpi()
            try:
                MPI.Request.Waitall(self._requests)
            except MPI.Exception as exc:
                raise self._failed(exc) from exc
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done:
            MPI = _mpi.mpi()
            try:
                finished = MPI.Request.Testall(self._requests)
            except MPI.Exception as exc:
                raise self._failed(exc) from exc
            if finished:
                self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()


class _Done(Work):
    def __init__(self):
        super().__init__([])
        self._done = True


# ----------------------------------------------------------------------------- buffers
def _array(tensor, fn: str, arg: str):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: {arg} must be a retrograd Tensor, got "
                        f"{type(tensor).__name__}")
    return tensor._data


def _staged(arr):
    """(a C-contiguous array with arr's values, whether it is a copy to write back)."""
    if arr.flags.c_contiguous:
        return arr, False
    return namespace(arr).ascontiguousarray(arr), True


def _raw(arr):
    """The contiguous array's bytes, for moving data of any dtype (bool, float16...)."""
    return arr.reshape(-1).view(np.uint8)


_LOGICAL = {ReduceOp.SUM: "LOR", ReduceOp.MAX: "LOR", ReduceOp.BOR: "LOR",
            ReduceOp.PRODUCT: "LAND", ReduceOp.MIN: "LAND", ReduceOp.BAND: "LAND",
            ReduceOp.BXOR: "LXOR"}
_ARITH = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD",
          ReduceOp.MIN: "MIN", ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND",
          ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}


def _validate_op(dtype, op, fn: str) -> None:
    """The errors PyTorch raises for an op the dtype does not support."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}: op must be a dist.ReduceOp (SUM, AVG, PRODUCT, MIN, MAX...), "
                        f"got {op!r}")
    kind = dtype.kind
    if kind == "b" and op is ReduceOp.AVG:
        raise RuntimeError(f"{fn}: ReduceOp.AVG needs a floating-point tensor, got bool")
    if kind == "f" and op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        raise RuntimeError(f"{fn}: ReduceOp.{op.name} needs an integer or bool tensor, got "
                           f"{dtype}")
    if op is ReduceOp.AVG and kind != "f":
        raise RuntimeError(f"{fn}: ReduceOp.AVG: result type Float can't be cast to the "
                           f"tensor's {dtype}; use SUM and divide, or a float tensor")


def _reduction(arr, op, fn: str):
    """(the array MPI reduces, the MPI op, whether to divide by the size afterwards): bool
    reduces as logical ops on its bytes, float16 (MPI has none) in float32, AVG as a SUM
    then a division."""
    _validate_op(arr.dtype, op, fn)
    MPI = _mpi.mpi()
    if arr.dtype.kind == "b":
        return arr.view(np.uint8), getattr(MPI, _LOGICAL[op]), False
    work = arr.astype(np.float32) if arr.dtype == np.float16 else arr
    return work, getattr(MPI, _ARITH[op]), (op is ReduceOp.AVG)


def _check_same(g, fn: str, arr, *extra):
    """Every rank passes a tensor of arr's shape and dtype (and the same op/root), else
    every rank raises naming them: see ``_check``."""
    _check.check_same(g, fn, (fn, tuple(int(n) for n in arr.shape), arr.dtype.str) + extra)


def _run(async_op, blocking, nonblocking, finish, keep, failure=None):
    """Run a collective now (blocking MPI call) or start it (returning a Work).
    ``failure``, (group, fn name, this rank's array), turns an MPI error into a RuntimeError
    that says what to do (a try costs nothing when nothing is raised)."""
    MPI = _mpi.mpi()
    try:
        if async_op:
            return Work([nonblocking()], finish, keep, failure)
        blocking()
    except MPI.Exception as exc:
        if failure is None:
            raise
        raise _mpi_failure(exc, *failure) from exc
    if finish is not None:
        finish()
    return None


def _list_of(tensors, fn, arg, count, shape, dtype):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != count:
        got = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{fn}: {arg} must be a list of {count} tensors (one per rank of "
                         f"the group), got {got}")
    arrays = [_array(t, fn, f"{arg}[{i}]") for i, t in enumerate(tensors)]
    for i, a in enumerate(arrays):
        if a.shape != shape or a.dtype != dtype:
            raise RuntimeError(f"{fn}: {arg}[{i}] has shape {tuple(a.shape)} {a.dtype.name}, "
                               f"but the tensor has shape {tuple(shape)} {np.dtype(dtype).name}"
                               "; every entry must match it")
    return arrays


# --------------------------------------------------------------------------- collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine ``tensor`` across the ranks with ``op``, in place on every rank."""
    fn = "all_reduce"
    g = resolve(group, fn)
    arr = _array(tensor, fn, "tensor")
    size = g.size()
    if size == 1:   # every op of one rank is the identity: nothing to move or compute
        _validate_op(arr.dtype, op, fn)
        return _Done() if async_op else None
    _check_same(g, fn, arr, f"op={getattr(op, 'name', op)}")
    staged, copied = _staged(arr)
    work, mpi_op, average = _reduction(staged, op, fn)
    MPI = _mpi.mpi()

    def finish():
        if average:
            work[...] /= size
        if work is not staged or copied:
            arr[...] = work.view(arr.dtype) if work.dtype == np.uint8 else work

    return _run(async_op, lambda: g.comm.Allreduce(MPI.IN_PLACE, work, mpi_op),
                lambda: g.comm.Iallreduce(MPI.IN_PLACE, work, mpi_op), finish,
                (work,), (g, fn, arr))


def broadcast(tensor, src, group=None, async_op=False):
    """Copy rank ``src``'s tensor into every rank's ``tensor``."""
    fn = "broadcast"
    g = resolve(group, fn)
    root = g.group_rank(src, fn, "src")
    arr = _array(tensor, fn, "tensor")
    _check_same(g, fn, arr, f"src={src}")
    staged, copied = _staged(arr)
    raw = _raw(staged)

    def finish():
        if copied:
            arr[...] = staged

    return _run(async_op, lambda: g.comm.Bcast(raw, root=root),
                lambda: g.comm.Ibcast(raw, root=root), finish, (raw,), (g, fn, arr))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    fn = "all_gather"
    g = resolve(group, fn)
    arr = _array(tensor, fn, "tensor")
    outs = _list_of(tensor_list, fn, "tensor_list", g.size(), arr.shape, arr.dtype)
    _check_same(g, fn, arr)
    send, _ = _staged(arr)
    xp = namespace(arr)
    recv = xp.empty((g.size(),) + arr.shape, dtype=arr.dtype)

    def finish():
        for i, out in enumerate(outs):
            out[...] = recv[i]

    return _run(async_op, lambda: g.comm.Allgather(_raw(send), _raw(recv)),
                lambda: g.comm.Iallgather(_raw(send), _raw(recv)), finish,
                (send, recv), (g, fn, arr))


def _into_flat(out_arr, fn, arg, numel, dtype, why):
    if out_arr.dtype != dtype or out_arr.size != numel:
        raise RuntimeError(f"{fn}: {arg} has shape {tuple(out_arr.shape)} "
                           f"{out_arr.dtype.name}, but {why} needs {numel} elements of "
                           f"{np.dtype(dtype).name}")
    return _staged(out_arr)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` concatenated (rank order) into ``output_tensor``, whose
    size is world_size times the input's (stacked or concatenated along dim 0)."""
    fn = "all_gather_into_tensor"
    g = resolve(group, fn)
    src = _array(input_tensor, fn, "input_tensor")
    out = _array(output_tensor, fn, "output_tensor")
    n = g.size()
    shape = tuple(src.shape)
    ok = (tuple(out.shape) in ((n,) + shape, ((shape[0] * n,) + shape[1:]) if shape else ())
          and out.dtype == src.dtype)
    if not ok:
        raise RuntimeError(f"{fn}: output_tensor has shape {tuple(out.shape)} "
                           f"{out.dtype.name}, but gathering {n} inputs of shape {shape} "
                           f"{src.dtype.name} needs shape {(n,) + shape} or "
                           f"{((shape[0] * n,) + shape[1:]) if shape else (n,)} of that dtype")
    _check_same(g, fn, src)
    send, _ = _staged(src)
    recv, copied = _staged(out)

    def finish():
        if copied:
            out[...] = recv

    return _run(async_op, lambda: g.comm.Allgather(_raw(send), _raw(recv)),
                lambda: g.comm.Iallgather(_raw(send), _raw(recv)), finish,
                (send, recv), (g, fn, src))


def _reduce_scatter(fn, out, send, op, g, async_op):
    work_send, mpi_op, average = _reduction(send, op, fn)
    staged, copied = _staged(out)
    recv, _, _ = _reduction(staged, op, fn)
    if recv is staged and work_send.dtype != staged.dtype:  # float16 reduced in float32
        recv = staged.astype(work_send.dtype)
    size = g.size()

    def finish():
        if average:
            recv[...] /= size
        if recv is not staged or copied:
            out[...] = recv.view(out.dtype) if recv.dtype == np.uint8 else recv

    return _run(async_op, lambda: g.comm.Reduce_scatter_block(work_send, recv, mpi_op),
                lambda: g.comm.Ireduce_scatter_block(work_send, recv, mpi_op), finish,
                (work_send, recv), (g, fn, out))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world_size chunks along dim 0) across ranks; rank i keeps chunk i
    in ``output``."""
    fn = "reduce_scatter_tensor"
    g = resolve(group, fn)
    src = _array(input, fn, "input")
    out = _array(output, fn, "output")
    if src.dtype != out.dtype or src.size != out.size * g.size():
        raise RuntimeError(f"{fn}: input has shape {tuple(src.shape)} {src.dtype.name} and "
                           f"output {tuple(out.shape)} {out.dtype.name}; input must hold "
                           f"world_size ({g.size()}) times output's elements, same dtype")
    _check_same(g, fn, src, f"op={getattr(op, 'name', op)}")
    send, _ = _staged(src)
    return _reduce_scatter(fn, out, send, op, g, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` across ranks into rank i's ``output``."""
    fn = "reduce_scatter"
    g = resolve(group, fn)
    out = _array(output, fn, "output")
    ins = _list_of(input_list, fn, "input_list", g.size(), out.shape, out.dtype)
    _check_same(g, fn, out, f"op={getattr(op, 'name', op)}")
    send = namespace(out).stack(ins) if ins else out
    return _reduce_scatter(fn, out, send, op, g, async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine ``tensor`` across ranks with ``op`` into rank ``dst``'s tensor."""
    fn = "reduce"
    g = resolve(group, fn)
    root = g.group_rank(dst, fn, "dst")
    arr = _array(tensor, fn, "tensor")
    _check_same(g, fn, arr, f"op={getattr(op, 'name', op)}", f"dst={dst}")
    staged, copied = _staged(arr)
    work, mpi_op, average = _reduction(staged, op, fn)
    MPI = _mpi.mpi()
    mine = g.rank() == root
    size = g.size()
    send = MPI.IN_PLACE if mine else work
    recv = work if mine else None

    def finish():
        if not mine:
            return
        if average:
            work[...] /= size
        if work is not staged or copied:
            arr[...] = work.view(arr.dtype) if work.dtype == np.uint8 else work

    return _run(async_op, lambda: g.comm.Reduce(send, recv, mpi_op, root=root),
                lambda: g.comm.Ireduce(send, recv, mpi_op, root=root), finish,
                (work,), (g, fn, arr))


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    fn = "gather"
    g = resolve(group, fn)
    root = g.group_rank(dst, fn, "dst")
    arr = _array(tensor, fn, "tensor")
    mine = g.rank() == root
    if mine:
        outs = _list_of(gather_list, fn, "gather_list", g.size(), arr.shape, arr.dtype)
    elif gather_list:
        raise ValueError(f"{fn}: Argument ``gather_list`` must NOT be specified on "
                         f"non-destination ranks (this is rank {g.ranks[g.rank()]}, dst={dst})")
    _check_same(g, fn, arr, f"dst={dst}")
    send, _ = _staged(arr)
    recv = namespace(arr).empty((g.size(),) + arr.shape, dtype=arr.dtype) if mine else None
    recv_raw = _raw(recv) if mine else None

    def finish():
        if mine:
            for i, out in enumerate(outs):
                out[...] = recv[i]

    return _run(async_op, lambda: g.comm.Gather(_raw(send), recv_raw, root=root),
                lambda: g.comm.Igather(_raw(send), recv_raw, root=root), finish,
                (send, recv), (g, fn, arr))


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """``scatter_list[i]`` of rank ``src`` into rank i's ``tensor``."""
    fn = "scatter"
    g = resolve(group, fn)
    root = g.group_rank(src, fn, "src")
    arr = _array(tensor, fn, "tensor")
    mine = g.rank() == root
    if mine:
        ins = _list_of(scatter_list, fn, "scatter_list", g.size(), arr.shape, arr.dtype)
    elif scatter_list:
        raise ValueError(f"{fn}: Argument ``scatter_list`` must NOT be specified on "
                         f"non-source ranks (this is rank {g.ranks[g.rank()]}, src={src})")
    _check_same(g, fn, arr, f"src={src}")
    send = namespace(arr).stack(ins) if mine else None
    send_raw = _raw(send) if mine else None
    recv, copied = _staged(arr)

    def finish():
        if copied:
            arr[...] = recv

    return _run(async_op, lambda: g.comm.Scatter(send_raw, _raw(recv), root=root),
                lambda: g.comm.Iscatter(send_raw, _raw(recv), root=root), finish,
                (send, recv), (g, fn, arr))


# ------------------------------------------------------------------------ point to point
def _p2p_peer(g, peer, fn, arg):
    if peer is None:
        return None
    if peer == g.ranks[g.rank()]:
        raise ValueError(f"{fn}: {arg}={peer} is this process's own rank; send to another")
    return g.group_rank(peer, fn, arg)


def isend(tensor, dst, group=None, tag=0):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    g = resolve(group, "isend")
    peer = _p2p_peer(g, dst, "isend", "dst")
    send, _ = _staged(_array(tensor, "isend", "tensor"))
    return Work([g.comm.Isend(_raw(send), dest=peer, tag=tag)], None, (send,))


def irecv(tensor, src=None, group=None, tag=0):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    g = resolve(group, "irecv")
    MPI = _mpi.mpi()
    peer = _p2p_peer(g, src, "irecv", "src")
    arr = _array(tensor, "irecv", "tensor")
    recv, copied = _staged(arr)
    source = MPI.ANY_SOURCE if peer is None else peer

    def finish():
        if copied:
            arr[...] = recv

    return Work([g.comm.Irecv(_raw(recv), source=source, tag=tag)], finish, (recv,))


def send(tensor, dst, group=None, tag=0) -> None:
    """Send ``tensor`` to rank ``dst`` (blocks until the buffer may be reused)."""
    g = resolve(group, "send")
    peer = _p2p_peer(g, dst, "send", "dst")
    buf, _ = _staged(_array(tensor, "send", "tensor"))
    g.comm.Send(_raw(buf), dest=peer, tag=tag)


def recv(tensor, src=None, group=None, tag=0) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's
    rank."""
    g = resolve(group, "recv")
    MPI = _mpi.mpi()
    peer = _p2p_peer(g, src, "recv", "src")
    arr = _array(tensor, "recv", "tensor")
    buf, copied = _staged(arr)
    status = MPI.Status()
    raw = _raw(buf)
    try:
        g.comm.Recv(raw, source=MPI.ANY_SOURCE if peer is None else peer, tag=tag,
                    status=status)
    except MPI.Exception as exc:   # a larger message than the tensor: "Message truncated"
        first = str(exc).splitlines()[0].replace(", error stack:", "").strip()
        raise RuntimeError(f"recv: MPI failed receiving into a tensor of shape "
                           f"{tuple(arr.shape)} {arr.dtype.name} ({first}); the sender's "
                           "tensor must have the same shape and dtype") from exc
    count = status.Get_count(MPI.BYTE)
    if count != raw.size:
        raise RuntimeError(f"recv: received {count} bytes from rank "
                           f"{g.ranks[status.Get_source()]} into a tensor of shape "
                           f"{tuple(arr.shape)} {arr.dtype.name} ({raw.size} bytes); the "
                           "sender's tensor must have the same shape and dtype")
    if copied:
        arr[...] = buf
    return g.ranks[status.Get_source()]


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached this call."""
    g = resolve(group, "barrier")
    return _run(async_op, g.comm.Barrier, g.comm.Ibarrier, None, ())
