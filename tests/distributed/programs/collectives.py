"""Run under mpiexec: every collective against its NumPy expectation (dtypes, odd sizes,
non-contiguous tensors, async), rank mismatches in the debug mode, sub-groups, point to
point."""

import numpy as np

import retrograd as T
import retrograd.distributed as dist

dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
SHAPES = [(), (1,), (7,), (3, 5)]
Op = dist.ReduceOp


def data(rank, dtype, shape, salt=0):
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n) + 3 * rank + salt
    if dtype == "bool":
        return ((k % 2) == 0).reshape(shape)
    return (k % 3 + 1).astype(dtype).reshape(shape)


def expect(op, arrays, dtype):
    stack = np.stack(arrays)
    if dtype == "bool":
        fn = {Op.SUM: np.any, Op.MAX: np.any, Op.PRODUCT: np.all, Op.MIN: np.all}[op]
        return fn(stack, axis=0)
    if op is Op.AVG:
        return (stack.astype(np.float64).sum(0) / SIZE).astype(dtype)
    fn = {Op.SUM: np.sum, Op.PRODUCT: np.prod, Op.MIN: np.min, Op.MAX: np.max}[op]
    return fn(stack, axis=0).astype(dtype)


def tensor(a, view=False):
    """A tensor holding ``a``; with view=True a non-contiguous one (every other column)."""
    if not view or a.ndim < 2:
        return T.from_numpy(np.array(a))
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    wide[..., ::2] = a
    return T.from_numpy(wide)[..., ::2]


def same(t, want, what):
    got = t.numpy() if isinstance(t, T.Tensor) else t
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    tol = 1e-3 if want.dtype == np.float16 else 0
    assert np.allclose(got, want, rtol=tol, atol=tol) if tol else np.array_equal(got, want), (
        what, got, want)


count = 0
for dtype in DTYPES:
    for shape in SHAPES:
        for view in (False, True):
            if view and len(shape) < 2:
                continue
            mine = data(RANK, dtype, shape)
            everyone = [data(r, dtype, shape) for r in range(SIZE)]
            ops = [Op.SUM, Op.PRODUCT, Op.MIN, Op.MAX]
            if dtype.startswith("float"):
                ops.append(Op.AVG)
            for op in ops:
                for async_op in ((False, True) if op is Op.SUM else (False,)):
                    t = tensor(mine, view)
                    work = dist.all_reduce(t, op=op, async_op=async_op)
                    if async_op:
                        assert work.wait() is True and work.is_completed()
                    same(t, expect(op, everyone, dtype), ("all_reduce", dtype, shape, op))
                    t = tensor(mine, view)
                    dist.reduce(t, dst=SIZE - 1, op=op)
                    same(t, expect(op, everyone, dtype) if RANK == SIZE - 1 else mine,
                         ("reduce", dtype, shape, op))
                    count += 2
            for src in range(SIZE):
                t = tensor(mine, view)
                work = dist.broadcast(t, src=src, async_op=True)
                work.wait()
                same(t, everyone[src], ("broadcast", dtype, shape))
            outs = [tensor(np.zeros(shape, dtype), view) for _ in range(SIZE)]
            dist.all_gather(outs, tensor(mine, view))
            for r in range(SIZE):
                same(outs[r], everyone[r], ("all_gather", dtype, shape))
            gathered = [tensor(np.zeros(shape, dtype)) for _ in range(SIZE)]
            dist.gather(tensor(mine, view), gathered if RANK == 0 else None, dst=0)
            if RANK == 0:
                for r in range(SIZE):
                    same(gathered[r], everyone[r], ("gather", dtype, shape))
            t = tensor(np.zeros(shape, dtype), view)
            pieces = [tensor(data(r, dtype, shape, salt=7)) for r in range(SIZE)]
            dist.scatter(t, pieces if RANK == SIZE - 1 else None, src=SIZE - 1)
            same(t, data(RANK, dtype, shape, salt=7), ("scatter", dtype, shape))
            count += 4
        # the *_tensor forms: flat and stacked outputs, odd lengths
        for n in (1, 5):
            mine = data(RANK, dtype, (n,))
            everyone = [data(r, dtype, (n,)) for r in range(SIZE)]
            for out_shape in ((SIZE * n,), (SIZE, n)):
                out = T.from_numpy(np.zeros(out_shape, dtype))
                dist.all_gather_into_tensor(out, T.from_numpy(mine))
                same(out, np.concatenate(everyone).reshape(out_shape),
                     ("all_gather_into_tensor", dtype))
            full = [data(r, dtype, (SIZE * n,), salt=1) for r in range(SIZE)]
            for op in (Op.SUM, Op.MAX) + ((Op.AVG,) if dtype.startswith("float") else ()):
                out = T.from_numpy(np.zeros(n, dtype))
                dist.reduce_scatter_tensor(out, T.from_numpy(full[RANK]), op=op)
                same(out, expect(op, full, dtype)[RANK * n:(RANK + 1) * n],
                     ("reduce_scatter_tensor", dtype, op))
                out = T.from_numpy(np.zeros(n, dtype))
                chunks = [T.from_numpy(c) for c in np.split(full[RANK], SIZE)]
                w = dist.reduce_scatter(out, chunks, op=op, async_op=True)
                w.wait()
                same(out, expect(op, full, dtype)[RANK * n:(RANK + 1) * n],
                     ("reduce_scatter", dtype, op))
            count += 4

# a leaf that requires grad: written in place, no graph, as PyTorch
w = T.ones(3, requires_grad=True)
dist.all_reduce(w)
assert w.grad_fn is None and w.requires_grad and float(w.detach().sum()) == 3 * SIZE

# mismatched shapes or dtypes across ranks: in the debug mode (off by default, as in
# PyTorch; switched on here at run time, on every rank) every rank raises, naming the ranks.
# mismatch.py runs the same with the environment variables, and without the check.
dist.set_debug_level(dist.DebugLevel.DETAIL)
for mine in (T.zeros(3 + RANK), T.zeros(3, dtype=T.float64 if RANK else T.float32)):
    try:
        dist.all_reduce(mine)
    except RuntimeError as exc:
        assert (SIZE > 1 and "rank 0" in str(exc) and f"rank {SIZE - 1}" in str(exc)
                and "all_reduce" in str(exc)), exc
    else:
        assert SIZE == 1, "a mismatch across ranks went unnoticed"


def raises_naming_ranks(call, *words):
    """On more than one rank ``call()`` raises on every rank, naming each rank and words."""
    try:
        call()
    except RuntimeError as exc:
        text = str(exc)
        assert SIZE > 1 and all(f"rank {r}:" in text for r in range(SIZE)), text
        assert all(w in text for w in words), (words, text)
    else:
        assert SIZE == 1, ("a mismatch across ranks went unnoticed", words)


# the rest of what must agree: the op, the root, and the collective itself
raises_naming_ranks(lambda: dist.all_reduce(T.ones(3), op=Op.MAX if RANK else Op.SUM),
                    "op=SUM", "op=MAX")
raises_naming_ranks(lambda: dist.broadcast(T.ones(3), src=RANK), "src=0", "src=1")
raises_naming_ranks(lambda: dist.reduce(T.ones(2), dst=0, op=Op.MIN if RANK else Op.MAX),
                    "op=MAX", "op=MIN")
raises_naming_ranks(
    lambda: (dist.all_reduce if RANK == 0 else dist.broadcast)(
        *((T.ones(4),) if RANK == 0 else (T.ones(4), 0))),
    "all_reduce of shape (4,) float32", "broadcast of shape (4,) float32")
raises_naming_ranks(lambda: dist.all_gather_into_tensor(T.zeros(SIZE * (2 + RANK)),
                                                        T.ones(2 + RANK)),
                    "shape (2,)", "shape (3,)")
# every rank raised at the same point, so the group goes on working
t = T.ones(5) * (RANK + 1)
dist.all_reduce(t, op=Op.AVG)
same(t, np.full(5, (SIZE + 1) / 2, np.float32), "all_reduce after a mismatch")
# async: the check runs before the collective starts, the error is raised by the call
raises_naming_ranks(lambda: dist.all_reduce(T.zeros(2 + RANK), async_op=True), "all_reduce")

dist.set_debug_level(dist.DebugLevel.OFF)

# a world of one moves nothing but still validates the op, as every world does
if SIZE == 1:
    for op in (Op.AVG,):
        try:
            dist.all_reduce(T.ones(2, dtype=T.int64), op=op)
        except RuntimeError as exc:
            assert "ReduceOp.AVG" in str(exc), exc
        else:
            raise AssertionError("AVG of an int tensor went through on a world of one")
    w = dist.all_reduce(T.ones(2), op=Op.PRODUCT, async_op=True)
    assert w.is_completed() and w.wait()

if SIZE > 1:
    # point to point, in a ring, blocking and not
    right, left = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    out = T.from_numpy(data(RANK, "float32", (3, 5)))
    got = T.zeros(3, 5)
    sent = dist.isend(out, dst=right)
    assert dist.recv(got, src=left) == left
    sent.wait()
    same(got, data(left, "float32", (3, 5)), "send/recv")
    got = T.zeros(4, dtype=T.int64)
    req = dist.irecv(got, src=left)
    dist.send(T.arange(4) + RANK, dst=right)
    req.wait()
    same(got, np.arange(4) + left, "isend/irecv")
    # a sub-group of rank 1 and up: collectives inside it, others are not members
    sub = dist.new_group(list(range(1, SIZE)))
    if RANK >= 1:
        t = T.tensor([float(RANK)])
        dist.all_reduce(t, group=sub)
        assert float(t) == sum(range(1, SIZE)) and dist.get_world_size(sub) == SIZE - 1
        dist.broadcast(t, src=SIZE - 1, group=sub)
    else:
        assert sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1

dist.barrier()
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"OK rank {RANK} of {SIZE}: {count} collective checks")
