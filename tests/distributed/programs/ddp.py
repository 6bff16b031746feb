"""Run under mpiexec (any number of ranks dividing 8): DistributedDataParallel training
equals single-process training on the full global batch, with and without no_sync."""

import itertools

import numpy as np

import retrograd as T
import retrograd.distributed as dist
from retrograd import nn
from retrograd.nn.parallel import DistributedDataParallel as DDP  # noqa: N817

T.set_default_dtype(T.float64)
dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
BATCH = 8
rng = np.random.default_rng(0)
X = T.from_numpy(rng.standard_normal((4, BATCH, 5)))    # 4 global batches
Y = T.from_numpy(rng.standard_normal((4, BATCH, 3)))
SHARD = slice(RANK * BATCH // SIZE, (RANK + 1) * BATCH // SIZE)


def model(seed):
    T.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 6), nn.Tanh(),
                         nn.Linear(6, 3))


def train(net, accumulate, shard, ddp=None):
    """SGD steps over the 4 batches; with accumulate, two batches per step."""
    opt = T.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    per_step = 2 if accumulate else 1
    for step in range(0, 4, per_step):
        opt.zero_grad()
        for k in range(step, step + per_step):
            last = k == step + per_step - 1
            context = ddp.no_sync() if (ddp is not None and not last) else _nothing()
            with context:
                loss = nn.functional.mse_loss(net(X[k][shard]), Y[k][shard])
                loss.backward()
        opt.step()
    return [p.detach().numpy().copy() for p in net.parameters()]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def close(a, b):
    return all(np.allclose(x, y, rtol=1e-10, atol=1e-12) for x, y in zip(a, b))


for accumulate, cap, view in itertools.product((False, True), (None, 1e-4), (False, True)):
    # cap: one bucket; a bucket per parameter or two (100-byte cap)
    want = train(model(0), accumulate, slice(None))
    # the other ranks start elsewhere: construction broadcasts rank 0's parameters
    ddp = DDP(model(0 if RANK == 0 else 100 + RANK), bucket_cap_mb=cap,
              gradient_as_bucket_view=view)
    if cap is not None:
        assert len(ddp._buckets) > 2, len(ddp._buckets)
    got = train(ddp, accumulate, SHARD, ddp)
    assert close(got, want), (accumulate, cap, view,
                              [abs(a - b).max() for a, b in zip(got, want)])
    flat = np.concatenate([g.ravel() for g in got])
    everyone = T.zeros(SIZE, flat.size)
    dist.all_gather_into_tensor(everyone, T.from_numpy(flat))
    assert (everyone.numpy() == flat).all(), "ranks ended with different parameters"

# inside no_sync the gradients stay local (they differ across ranks); the next backward
# outside averages what accumulated
ddp = DDP(model(0))
with ddp.no_sync():
    nn.functional.mse_loss(ddp(X[0][SHARD]), Y[0][SHARD]).backward()
local = ddp.module[0].weight.grad.detach().clone()
ranks = T.zeros((SIZE,) + tuple(local.shape), dtype=local.dtype)
dist.all_gather_into_tensor(ranks, local)
assert SIZE == 1 or not (ranks[0] == ranks[1]).all(), "no_sync() still reduced"
nn.functional.mse_loss(ddp(X[0][SHARD]), Y[0][SHARD]).backward()
dist.all_gather_into_tensor(ranks, ddp.module[0].weight.grad)
assert (ranks == ranks[0]).all(), "the backward after no_sync() did not reduce"


def bucket_views(ddp):
    """Whether every parameter's .grad is its stretch of its bucket's flat buffer."""
    return all(p.grad is not None and np.shares_memory(p.grad.numpy(), b.buffer)
               and p.grad.shape == p.shape
               for b in ddp._buckets for p in b.params)


# gradient_as_bucket_view=True, as PyTorch's: .grad is None until the first backward, then
# a view of the bucket (the all-reduce runs on it, no copy out); zero_grad(set_to_none=True)
# drops it and the next backward makes it the view again; zeroing in place keeps the view;
# inside no_sync() backward accumulates in the view, the next synced one averages the sum;
# a .grad assigned by the user is copied into the bucket and replaced by the view
grads = {}
for view in (False, True):
    ddp = DDP(model(0), bucket_cap_mb=1e-4, gradient_as_bucket_view=view)
    params = list(ddp.parameters())
    assert all(p.grad is None for p in params)

    def loss(k, ddp=ddp):
        return nn.functional.mse_loss(ddp(X[k][SHARD]), Y[k][SHARD])

    loss(0).backward()
    assert bucket_views(ddp) is view
    first = [p.grad.numpy().copy() for p in params]
    ddp.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in params)
    loss(0).backward()
    assert bucket_views(ddp) is view and close([p.grad.numpy() for p in params], first)
    ddp.zero_grad(set_to_none=False)
    assert bucket_views(ddp) is view and all(float(p.grad.abs().sum()) == 0 for p in params)
    with ddp.no_sync():
        loss(0).backward()
    loss(1).backward()
    assert bucket_views(ddp) is view
    grads[view, "no_sync"] = [p.grad.numpy().copy() for p in params]
    params[0].grad = T.ones_like(params[0])
    loss(0).backward()
    assert bucket_views(ddp) is view
    grads[view, "assigned"] = [p.grad.numpy().copy() for p in params]
# the same numbers either way (the accumulated no_sync sum, the user's ones plus a grad)
for what in ("no_sync", "assigned"):
    assert close(grads[True, what], grads[False, what]), what

# buckets: reverse parameter order, the first at most 1 MiB (so that its all-reduce starts
# early, as PyTorch's), the rest up to bucket_cap_mb (25 MiB by default)
big = DDP(nn.Sequential(nn.Linear(300, 300), nn.Linear(300, 300)))   # float64 weights: 720 kB
assert [b.positions for b in big._buckets] == [[3, 2, 1], [0]], [b.positions for b in big._buckets]
assert [b.buffer.nbytes for b in big._buckets] == [724800, 720000]

# the wrapped module and its state_dict, with PyTorch's ``module.`` prefix
ddp = DDP(model(0))
assert isinstance(ddp.module, nn.Sequential)
assert list(ddp.state_dict()) == ["module." + k for k in ddp.module.state_dict()]


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 3)
        self.register_buffer("count", T.zeros(2, dtype=T.int64))

    def forward(self, x):
        self.count += 1
        return self.lin(x)


# buffers: rank 0's are broadcast at construction and before each forward (they may drift
# apart on the ranks in between: here rank 1 counts twice as fast)
net = WithBuffer()
ddp = DDP(net)
for _ in range(3):
    ddp(X[0][SHARD]).sum().backward()
    if RANK:
        net.count += 1
ddp(X[0][SHARD])
assert net.count.tolist() == [4, 4], net.count   # rank 0 counted 4 forwards
ddp = DDP(WithBuffer(), broadcast_buffers=False)
ddp.module.count += RANK
ddp(X[0][SHARD])
assert ddp.module.count.tolist() == [1 + RANK] * 2

# a buffer replaced by one of another size on one rank after construction: by default the
# buffer broadcast fails on the receiving rank, with a RuntimeError saying to use the debug
# mode; in it, every rank raises before the broadcast, naming each rank's buffers
for debug in (False, True):
    dist.set_debug_level(dist.DebugLevel.DETAIL if debug else dist.DebugLevel.OFF)
    ddp = DDP(WithBuffer())
    if RANK == 1:
        ddp.module.count = T.zeros(3, dtype=T.int64)
    try:
        ddp(X[0][SHARD])
    except RuntimeError as exc:
        text = str(exc)
        if debug:
            assert "rank 0:" in text and "rank 1:" in text and "(3,) int64" in text, text
        else:
            assert RANK == 1 and "RETROGRAD_DISTRIBUTED_DEBUG=DETAIL" in text, text
    else:
        assert SIZE == 1 or (RANK == 0 and not debug), "a buffer mismatch went unnoticed"
dist.set_debug_level(dist.DebugLevel.OFF)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(5, 3)
        self.unused = nn.Linear(5, 3)

    def forward(self, x):
        return self.used(x)


# an unused parameter: with find_unused_parameters the reduction completes, its grad stays
# None; without, the next forward says what happened
for view in (False, True):
    T.manual_seed(0)
    ddp = DDP(TwoHeads(), find_unused_parameters=True, gradient_as_bucket_view=view)
    for _ in range(2):
        ddp(X[0][SHARD]).sum().backward()
    assert ddp.module.unused.weight.grad is None and ddp.module.used.weight.grad is not None
    assert view is np.shares_memory(ddp.module.used.weight.grad.numpy(),
                                    ddp._buckets[0].buffer)
ddp = DDP(TwoHeads())
ddp(X[0][SHARD]).sum().backward()
try:
    ddp(X[0][SHARD])
except RuntimeError as exc:
    assert "find_unused_parameters=True" in str(exc), exc
else:
    raise AssertionError("an unfinished reduction went unnoticed")

# different models on the ranks: every rank raises at construction, naming the ranks and
# the first tensors that differ (the buckets are built from this layout, so it is the one
# check DDP makes; backward carries none)
try:
    DDP(nn.Sequential(nn.Linear(5, 4), nn.Linear(4, 3 + RANK)))
except RuntimeError as exc:
    text = str(exc)
    assert SIZE > 1 and "rank 0:" in text and "rank 1:" in text, text
    assert "#2 (3, 4) float64" in text and "#2 (4, 4) float64" in text, text
    assert "same model" in text, text
else:
    assert SIZE == 1, "DDP wrapped different models on the ranks"
# and the group goes on working
ddp = DDP(model(0))
nn.functional.mse_loss(ddp(X[0][SHARD]), Y[0][SHARD]).backward()

dist.destroy_process_group()
print(f"OK rank {RANK} of {SIZE}")
