"""retrograd.distributed: torch.distributed's API over MPI (mpi4py).

Launch with ``mpiexec -n 4 python train.py`` (or Slurm's ``srun``); plain ``python`` is a
world of one.  mpi4py is optional: ``pip install retrograd[mpi]``; without it this module
imports and ``init_process_group`` raises an ImportError saying what to install.
"""

from .collectives import (
    ReduceOp, Work, all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast,
    gather, irecv, isend, recv, reduce, reduce_scatter, reduce_scatter_tensor, scatter, send,
)
from .process_group import (
    GroupMember, ProcessGroup, destroy_process_group, get_backend, get_process_group_ranks,
    get_rank, get_world_size, init_process_group, is_available, is_initialized,
    is_mpi_available, new_group,
)

__all__ = [
    "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_reduce", "barrier", "broadcast", "destroy_process_group", "gather", "get_backend",
    "get_process_group_ranks", "get_rank", "get_world_size", "init_process_group", "irecv",
    "is_available", "is_initialized", "is_mpi_available", "isend", "new_group", "recv",
    "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", "send",
]
