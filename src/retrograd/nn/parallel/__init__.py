"""retrograd.nn.parallel: DistributedDataParallel (data parallelism across MPI ranks)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
