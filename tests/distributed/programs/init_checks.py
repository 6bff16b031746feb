"""Run with plain python (a world of one): init_process_group's checks against MPI, and
argument errors of collectives and DDP."""

import pytest

import retrograd as T
import retrograd.distributed as dist
from retrograd.distributed import ProcessGroup

with pytest.raises(RuntimeError, match=r"world_size=2 .*mpiexec -n 2"):
    dist.init_process_group("mpi", world_size=2)
with pytest.raises(RuntimeError, match="rank=1"):
    dist.init_process_group("mpi", rank=1)
assert not dist.is_initialized()
dist.init_process_group("mpi", world_size=1, rank=0)
assert dist.is_initialized() and dist.get_backend() == "mpi"
with pytest.raises(ValueError, match="twice"):
    dist.init_process_group()
with pytest.raises(TypeError, match="retrograd Tensor"):
    dist.all_reduce([1.0, 2.0])
with pytest.raises(ValueError, match="src=3 is not a rank"):
    dist.broadcast(T.ones(2), src=3)
with pytest.raises(ValueError, match="list of 1 tensors"):
    dist.all_gather([T.ones(2), T.ones(2)], T.ones(2))
with pytest.raises(RuntimeError, match=r"output_tensor has shape \(3,\)"):
    dist.all_gather_into_tensor(T.zeros(3), T.ones(2))
with pytest.raises(RuntimeError, match="AVG"):
    dist.all_reduce(T.ones(2, dtype=T.int64), op=dist.ReduceOp.AVG)
with pytest.raises(TypeError, match="ReduceOp"):
    dist.all_reduce(T.ones(2), op="sum")
with pytest.raises(TypeError, match="nn.Module"):
    T.nn.parallel.DistributedDataParallel(T.ones(2))


class TruncatingComm:
    """A communicator of two ranks whose collectives fail as MPICH's do when the other rank
    passed a larger tensor (the real thing: mismatch.py under mpiexec -n 2)."""

    def Get_rank(self):  # noqa: N802  (mpi4py's names)
        return 0

    def Get_size(self):  # noqa: N802
        return 2

    def Allreduce(self, *args):  # noqa: N802
        from mpi4py import MPI
        raise MPI.Exception(MPI.ERR_TRUNCATE)


pair = ProcessGroup(TruncatingComm(), [0, 1])
with pytest.raises(RuntimeError, match=r"all_reduce: MPI failed on rank 0, whose tensor has "
                                       r"shape \(3,\) float32: .*RETROGRAD_DISTRIBUTED_DEBUG"
                                       r"=DETAIL"):
    dist.all_reduce(T.ones(3), group=pair)
dist.destroy_process_group()
assert not dist.is_initialized()
print("OK rank 0 of 1")
