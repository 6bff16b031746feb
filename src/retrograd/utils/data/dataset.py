"""Datasets, as ``torch.utils.data``: the map-style ``Dataset`` (``__getitem__``/``__len__``),
the stream-style ``IterableDataset`` (``__iter__``), and the ways of combining them
(``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``ChainDataset``, ``Subset``,
``random_split``).
"""

from __future__ import annotations

import bisect
import math
import warnings

from ...random import default_generator, numpy_generator

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map from keys (usually ``0 .. len - 1``) to samples.

    Subclasses define ``__getitem__`` (and ``__len__``, which samplers and ``len(loader)``
    use); ``__getitems__(indices)`` may be added to fetch a whole batch in one call.

    Examples
    --------
    >>> from retrograd.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self): return 4
    ...     def __getitem__(self, i): return i * i
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy; split the work with
    :func:`retrograd.utils.data.get_worker_info` or each sample arrives once per worker.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: "Dataset") -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension: item ``i`` is
    ``tuple(t[i] for t in tensors)``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.utils.data import TensorDataset
    >>> ds = TensorDataset(T.arange(6.).reshape(3, 2), T.tensor([0, 1, 0]))
    >>> len(ds), ds[1]
    (3, (tensor([2., 3.]), tensor(1)))
    """

    def __init__(self, *tensors) -> None:
        if tensors and any(tensors[0].size(0) != t.size(0) for t in tensors):
            sizes = [tuple(t.shape) for t in tensors]
            raise AssertionError(
                f"Size mismatch between tensors: TensorDataset needs tensors of the same first "
                f"dimension (their number of samples), got shapes {sizes}"
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of the same length side by side: item ``i`` is the tuple (positional
    datasets) or the dict (keyword datasets) of their items ``i``."""

    def __init__(self, *args, **kwargs) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or ``dict``- (via ``kwargs``) "
                "like input/output, but both types are given."
            )
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise ValueError(
                f"Size mismatch between datasets: lengths {[len(d) for d in datasets]}"
            )
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after another: indices ``0 .. len(a) - 1`` reach ``a``, the
    next ones ``b``, and so on."""

    @staticmethod
    def cumsum(sequence) -> list:
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError(
                    "ConcatDataset does not support IterableDataset (it has no length to "
                    "index into); chain streams with ChainDataset instead"
                )
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(
                    f"absolute value of index should not exceed dataset length: index {idx} "
                    f"for a ConcatDataset of length {len(self)}"
                )
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (chained lazily, on each iteration)."""

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The items of ``dataset`` at ``indices`` (item ``i`` is ``dataset[indices[i]]``)."""

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices
        # the DataLoader fetches through __getitems__, which would bypass an overridden
        # __getitem__: PyTorch refuses such a subclass, and so do we
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n    return "
                "[self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        # the DataLoader fetches a batch through __getitems__ when the dataset has one
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(n: int, lengths) -> list:
    """PyTorch's rounding of fractions: floor(n * f) each, then the remainder handed out one
    by one, round-robin from the first split."""
    sizes = []
    for i, frac in enumerate(lengths):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        sizes.append(math.floor(n * frac))
    for i in range(n - sum(sizes)):
        sizes[i % len(sizes)] += 1
    for i, size in enumerate(sizes):
        if size == 0:
            warnings.warn(f"Length of split at index {i} is 0. "
                          "This might result in an empty dataset.", stacklevel=3)
    return sizes


def random_split(dataset, lengths, generator=default_generator) -> list:
    """Split ``dataset`` at random into non-overlapping :class:`Subset` s of ``lengths``.

    ``lengths`` are sizes summing to ``len(dataset)``, or fractions summing to 1 (each split
    gets ``floor(frac * len)``, the remainder goes one by one to the first splits, as in
    PyTorch).  Pass ``generator=`` for a repeatable split.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.utils.data import random_split
    >>> a, b, c = random_split(range(10), [0.3, 0.3, 0.4], generator=T.Generator().manual_seed(0))
    >>> len(a), len(b), len(c)
    (3, 3, 4)
    """
    n = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        lengths = _split_lengths(n, lengths)
    if sum(lengths) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset! "
            f"(lengths {list(lengths)} sum to {sum(lengths)}, the dataset has {n} items; pass "
            "sizes that add up to its length, or fractions that add up to 1)"
        )
    order = numpy_generator(generator).permutation(n).tolist()
    splits, end = [], 0
    for length in lengths:
        length = int(length)
        splits.append(Subset(dataset, order[end:end + length]))
        end += length
    return splits
