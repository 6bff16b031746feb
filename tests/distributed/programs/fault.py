"""Run under mpiexec -n 2: rank 1 raises while rank 0 waits in a collective; the excepthook
installed by init_process_group must end the whole job (nonzero exit), not leave rank 0
hanging."""

import time

import retrograd as T
import retrograd.distributed as dist

dist.init_process_group("mpi")
if dist.get_rank() == 1:
    time.sleep(0.2)
    raise ValueError("rank 1 fails on purpose")
dist.all_reduce(T.ones(3))   # never completes: rank 1 is gone
time.sleep(60)
