"""Samplers: the order in which a DataLoader visits a map-style dataset's keys.

The random ones draw from NumPy's generator behind a ``retrograd.Generator`` (or the default
one), so their orders are repeatable under ``retrograd.manual_seed`` / ``generator=``, but
are not PyTorch's numbers (PyTorch uses another generator).
"""

from __future__ import annotations

import numbers

import numpy as np

from ...random import numpy_generator
from ...tensor import make_tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: subclasses define ``__iter__`` (the keys, in order) and, when they can,
    ``__len__``."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _is_positive_int(value) -> bool:
    return (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and value > 0)


def _own_stream(generator):
    """The NumPy generator a sampler draws one epoch from.  Without ``generator=`` PyTorch
    seeds a fresh generator from the default one each epoch (so ``manual_seed`` fixes the
    sequence of epochs); we do the same."""
    if generator is not None:
        return numpy_generator(generator)
    seed = int(numpy_generator(None).integers(0, 2 ** 63))
    return np.random.default_rng(seed)


class RandomSampler(Sampler):
    """Keys in random order: a permutation of the dataset (repeated and cut to
    ``num_samples`` when given), or ``num_samples`` independent draws with
    ``replacement=True``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.utils.data import RandomSampler
    >>> order = list(RandomSampler(range(5), generator=T.Generator().manual_seed(1)))
    >>> sorted(order)
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not _is_positive_int(self.num_samples):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # the dataset may change size between epochs: read its length each time
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        rng = _own_stream(self.generator)
        total = self.num_samples
        if self.replacement:
            yield from rng.integers(0, n, size=total, dtype=np.int64).tolist()
            return
        for _ in range(total // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n).tolist()[: total % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in random order (a new order each epoch)."""

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in numpy_generator(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` keys ``0 .. len(weights) - 1`` drawn with probabilities proportional to
    ``weights`` (with replacement by default), as ``torch.multinomial``."""

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not _is_positive_int(num_samples):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights.numpy(force=True) if hasattr(weights, "numpy") else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = _as_float64_tensor(w)
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        w = self.weights.numpy()
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry < 0 or not "
                "finite): WeightedRandomSampler's weights must be finite and non-negative"
            )
        total = w.sum()
        if total <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0): "
                               "WeightedRandomSampler needs at least one positive weight")
        if not self.replacement and self.num_samples > w.size:
            raise RuntimeError(
                f"cannot sample n_sample > prob_dist.size(-1) samples without replacement: "
                f"num_samples={self.num_samples} but there are only {w.size} weights"
            )
        rng = numpy_generator(self.generator)
        if self.replacement:
            yield from rng.choice(w.size, size=self.num_samples, p=w / total).tolist()
            return
        # without replacement the positive weights come first; once they are used up, the
        # zero-weight keys follow (as torch.multinomial does), in random order
        positive = np.flatnonzero(w)
        first = rng.choice(positive, size=min(self.num_samples, positive.size), replace=False,
                           p=w[positive] / total)
        rest = rng.permutation(np.flatnonzero(w == 0))[: self.num_samples - first.size]
        yield from first.tolist()
        yield from rest.tolist()

    def __len__(self) -> int:
        return self.num_samples


def _as_float64_tensor(array):
    return make_tensor(np.ascontiguousarray(array, dtype=np.float64))


class BatchSampler(Sampler):
    """Groups another sampler's keys into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``).

    Examples
    --------
    >>> from retrograd.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not _is_positive_int(batch_size):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for key in self.sampler:
            batch.append(key)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
