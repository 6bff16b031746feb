"""retrograd.nn.parallel: DistributedDataParallel (data parallelism across MPI ranks) and
DataParallel (PyTorch's single-process wrapper, which on a machine without GPUs runs the
module as it is)."""

from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
