"""Collation: how a DataLoader turns a list of samples into a batch, as PyTorch does.

``default_collate`` stacks tensors and NumPy arrays along a new first dimension, turns Python
ints into an int64 tensor and floats into a float64 one, keeps strings as a list, and recurses
into dicts, namedtuples, tuples (returned as lists, as in PyTorch) and lists.
``default_convert`` (used when batching is off) only turns NumPy arrays into tensors.
"""

from __future__ import annotations

import collections.abc
import copy
import numbers
import re

import numpy as np

from ... import dtypes
from ..._creation import as_tensor, tensor
from ...ops.shape import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

# NumPy dtypes of strings, bytes, unicode and objects cannot become tensors
_STR_OR_OBJECT = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _check_same_shape(batch) -> None:
    # PyTorch's stack message, with the entry numbers the DataLoader maps back to indices
    first = tuple(batch[0].shape)
    for i, t in enumerate(batch):
        if tuple(t.shape) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )


def collate_tensor_fn(batch, *, collate_fn_map=None):
    _check_same_shape(batch)
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _STR_OR_OBJECT.search(elem.dtype.str) is not None:
        raise TypeError(_ERR.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def _mixed(batch, i, what) -> TypeError:
    return TypeError(
        f"default_collate: entry {i} of the batch is {type(batch[i]).__name__} "
        f"{batch[i]!r} where entry 0 is {type(batch[0]).__name__}: {what}; make every sample "
        "hold the same types, or pass a collate_fn")


def collate_float_fn(batch, *, collate_fn_map=None):
    for i, x in enumerate(batch):
        if not isinstance(x, numbers.Real):  # torch.tensor(..., dtype=float64) TypeError
            raise _mixed(batch, i, "must be real number")
    return tensor(batch, dtype=dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    for i, x in enumerate(batch):
        if isinstance(x, (str, bytes)):  # PyTorch's TypeError (None stays a RuntimeError)
            raise _mixed(batch, i, "invalid data type")
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


#: element type -> its collate function (exact type first, then the first isinstance match);
#: extend it, or pass your own map to :func:`collate`, to batch other types.
default_collate_fn_map: dict = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _rebuild_mapping(elem, items: dict):
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)  # keeps the mapping's type and extra attributes
            clone.update(items)
            return clone
        return type(elem)(items)
    except TypeError:  # a mapping type without copy()/update()/__init__(dict)
        return items


def _rebuild_sequence(elem, items: list):
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(elem)(items)
    except TypeError:  # e.g. range
        return items


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples of one structure), looking element types up in
    ``collate_fn_map`` and recursing into mappings and sequences."""
    if len(batch) == 0:
        raise IndexError("collate: the batch is empty (a list of at least one sample is needed)")
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {
            key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
            for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            sizes = [len(e) for e in batch]
            raise RuntimeError(
                "each element in list of batch should be of equal size (got lengths "
                f"{sizes}); make the samples the same length or pass a collate_fn that pads"
            )
        # each column is a tuple of samples, as in PyTorch (strings come back as that tuple)
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as PyTorch returns (backwards compatibility there)
        return _rebuild_sequence(elem, columns)
    raise TypeError(_ERR.format(elem_type))


def default_collate(batch):
    """Put a list of samples together as one batch, as ``torch.utils.data.default_collate``.

    Examples
    --------
    >>> from retrograd.utils.data import default_collate
    >>> default_collate([(1, 0.5, "a"), (2, 1.5, "b")])
    [tensor([1, 2]), tensor([0.5000, 1.5000], dtype=retrograd.float64), ('a', 'b')]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """NumPy arrays (and NumPy scalars) to tensors, inside any nesting of mappings and
    sequences; everything else unchanged (the collate function when batching is off)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_"):
        if isinstance(data, np.ndarray) and _STR_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data
