"""Fetchers: turn one key (or one batch of keys) from the sampler into one collated item.

The same fetchers run in the main process (``num_workers=0``) and in each worker process.
A collate failure is re-raised with the dataset indices of the batch, so that a dataset
returning samples of different shapes is easy to find.
"""

from __future__ import annotations

from ._collate import default_collate
from .dataset import TensorDataset

__all__ = ["MapFetcher", "IterableFetcher", "make_fetcher"]


def _with_context(error: BaseException, context: str) -> BaseException:
    """``error`` again, same class, its message followed by ``context`` (or ``error`` itself,
    with a note, when its class cannot be rebuilt from a message)."""
    message = f"{error.args[0] if len(error.args) == 1 else error}\n{context}"
    try:
        # KeyError prints the repr of its message: a note reads better there
        rebuilt = None if isinstance(error, KeyError) else type(error)(message)
    except Exception:  # an exception class whose __init__ takes other arguments
        rebuilt = None
    if rebuilt is None:
        if hasattr(error, "add_note"):  # Python 3.11+
            error.add_note(context)
        return error
    rebuilt.__cause__ = error.__cause__
    return rebuilt


class MapFetcher:
    """Fetch from a map-style dataset: ``dataset[i]`` per key, or ``__getitems__(keys)``."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        # the same batch as default_collate of the samples (a list of stacked rows), and no
        # graph to record: gradients would flow through stack there, through indexing here
        self.whole_rows = (type(dataset) is TensorDataset and collate_fn is default_collate
                           and not any(t.requires_grad for t in dataset.tensors))

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.whole_rows and type(index) is list and all(type(i) is int for i in index):
            # TensorDataset + default_collate: stacking the rows of a batch is gathering them,
            # one fancy index per tensor instead of a view per sample and a stack
            return [t[index] for t in self.dataset.tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        try:
            return self.collate_fn(data)
        except Exception as error:
            raise _with_context(error, (
                f"DataLoader: collating the samples at dataset indices {list(index)} failed "
                "('entry k' above is the k-th of these indices); make the dataset return "
                "samples of one structure and shape, or pass a collate_fn that can batch them"
            )) from None


class IterableFetcher:
    """Fetch from an iterable dataset: the next sample, or the next ``len(index)`` samples
    (``index`` is then a batch of placeholders from the sampler)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False
        self.count = 0  # samples taken so far, to name a failing batch

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            data = next(self.dataset_iter)
            self.count += 1
            return self.collate_fn(data)
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        first, self.count = self.count, self.count + len(data)
        try:
            return self.collate_fn(data)
        except Exception as error:
            raise _with_context(error, (
                f"DataLoader: collating samples {first} to {self.count - 1} of the iterable "
                "dataset's stream failed ('entry k' above is sample "
                f"{first} + k); make it yield samples of one structure and shape, or pass a "
                "collate_fn that can batch them"
            )) from None


def make_fetcher(is_iterable: bool, dataset, auto_collation, collate_fn, drop_last):
    cls = IterableFetcher if is_iterable else MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
