"""DistributedSampler: each rank visits its own, equally long share of a dataset's keys."""

from __future__ import annotations

import math

import numpy as np

from ...distributed import get_rank, get_world_size
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The keys of ``dataset`` for rank ``rank`` of ``num_replicas``, as PyTorch's.

    Every rank draws the same permutation (seeded by ``seed + epoch``; call
    ``set_epoch(epoch)`` each epoch to change it), pads it by repeating its start until it
    divides evenly (or, with ``drop_last``, cuts the tail) and takes every
    ``num_replicas``-th key starting at ``rank``.  The permutations come from NumPy's
    generator, so with ``shuffle=True`` the order is not PyTorch's; without shuffling the
    keys are exactly PyTorch's.

    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = get_world_size()
        if rank is None:
            rank = get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            # the largest share every rank can have without repeating a key
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            keys = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            keys = list(range(n))
        if self.drop_last:
            keys = keys[: self.total_size]
        else:
            short = self.total_size - len(keys)
            if short > 0:
                # repeat the order from its start, as many times as it takes
                keys += (keys * math.ceil(short / len(keys)))[:short]
        return iter(keys[self.rank: self.total_size: self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch: with ``shuffle=True``, each epoch draws another order."""
        self.epoch = epoch
