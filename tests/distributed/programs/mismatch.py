"""Run under ``mpiexec -n 2``: ranks passing tensors of different shapes, with the cross-rank
check on (RETROGRAD_DISTRIBUTED_DEBUG / TORCH_DISTRIBUTED_DEBUG=DETAIL, or
RETROGRAD_DISTRIBUTED_CHECK=1, set by the test) and off (the default).

Checked: every rank raises a RuntimeError naming each rank's shape, and the group goes on.
Unchecked: what MPI (the mpich wheel) makes of it.  A broadcast raises on the receiving rank,
which the RuntimeError turns into advice to use the debug mode, and the group goes on; a
blocking all_reduce (with ``--all-reduce``) raises on the rank with the smaller tensor, with
the same advice, while the other rank carries on with wrong data, and MPICH then ends the
job with a nonzero status.
"""

import sys

import retrograd as T
import retrograd.distributed as dist
from retrograd.distributed import _check

dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
assert SIZE == 2, "run with mpiexec -n 2"
ADVICE = "RETROGRAD_DISTRIBUTED_DEBUG=DETAIL"

if _check.ENABLED:
    for call in (lambda: dist.all_reduce(T.zeros(3 + RANK)),
                 lambda: dist.broadcast(T.ones(3 + RANK), src=0),
                 lambda: dist.all_reduce(T.zeros(3 + RANK), async_op=True)):
        try:
            call()
        except RuntimeError as exc:
            assert "rank 0: " in str(exc) and "rank 1: " in str(exc), exc
        else:
            raise AssertionError("the check is on, yet a mismatch went through")
    t = T.ones(2) * (RANK + 1)
    dist.all_reduce(t)
    assert t.tolist() == [3.0, 3.0], t
    print(f"OK rank {RANK} of {SIZE}: checked", flush=True)
else:
    t = T.ones(3 + RANK)
    try:
        dist.broadcast(t, src=0)
    except RuntimeError as exc:
        assert RANK == 1 and ADVICE in str(exc) and "(4,) float32" in str(exc), exc
        print(f"rank {RANK}: broadcast raised: {exc}", flush=True)
    else:
        assert RANK == 0, "the receiving rank took a broadcast of another size silently"
    t = T.ones(2) * (RANK + 1)
    dist.all_reduce(t)            # the group goes on after a failed broadcast
    assert t.tolist() == [3.0, 3.0], t
    print(f"OK rank {RANK} of {SIZE}: unchecked", flush=True)
    if "--all-reduce" not in sys.argv:
        sys.exit(0)
    try:
        dist.all_reduce(T.ones(3 + RANK))
    except RuntimeError as exc:
        assert RANK == 0 and ADVICE in str(exc) and "Message truncated" in str(exc), exc
        print(f"rank {RANK}: all_reduce raised: {exc}", flush=True)
    else:
        assert RANK == 1, "the rank with the smaller tensor took a larger one silently"
        print(f"rank {RANK}: the all_reduce of another shape returned", flush=True)
    # MPICH ends the job (nonzero) once a collective failed in its shared-memory path, at a
    # moment of its own: the lines above may or may not make it out first
