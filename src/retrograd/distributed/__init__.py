"""retrograd.distributed: torch.distributed's API over MPI (mpi4py).

Launch with ``mpiexec -n 4 python train.py`` (or Slurm's ``srun``); plain ``python`` is a
world of one.  mpi4py is optional: ``pip install retrograd[mpi]``; without it this module
imports and ``init_process_group`` raises an ImportError saying what to install.

On a cluster, use the system's MPI rather than the wheel: ``pip install mpi4py`` built
against it (``MPICC=mpicc pip install --no-binary mpi4py mpi4py``), then launch as any MPI
program, e.g. under Slurm ``srun -n 8 python train.py`` (or ``mpiexec`` inside an
allocation).

Collectives are not checked across ranks by default, as in PyTorch; run with
``RETROGRAD_DISTRIBUTED_DEBUG=DETAIL`` (or ``TORCH_DISTRIBUTED_DEBUG=DETAIL``) to have every
collective check that the ranks pass the same shapes and dtypes (see ``_check`` for what
happens without).  An uncaught exception on one rank aborts the whole job (MPI_Abort) once
the group is initialised, so no rank waits forever for a peer that died.

>>> import retrograd.distributed as dist
>>> dist.is_initialized()
False
"""

from ._check import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
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
    "DebugLevel", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_reduce", "barrier", "broadcast", "destroy_process_group",
    "gather", "get_backend", "get_debug_level", "get_process_group_ranks", "get_rank",
    "get_world_size", "init_process_group", "irecv", "is_available", "is_initialized",
    "is_mpi_available", "isend", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "send", "set_debug_level", "set_debug_level_from_env",
]
