"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``.

A :class:`PackedSequence` stores a batch of sequences time step by time step: step ``t``
holds the ``batch_sizes[t]`` sequences that are still running (sequences sorted longest
first), so ``data`` has ``sum(lengths)`` rows and no padding.  Every conversion here is ONE
``index_select`` through a precomputed row index (padding comes from one extra row appended
to the data), so each is a single differentiable op whatever the number of sequences.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ..._creation import tensor as _tensor
from ...backend import namespace
from ...ops.pointwise import scalar_type_name
from ...ops.shape import cat
from ...tensor import Tensor, make_tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def _int64(values) -> Tensor:
    return _tensor(np.asarray(values, dtype=np.int64))


def _host(t) -> np.ndarray:
    """A tensor's (or list's) values as a NumPy int64 array on the host."""
    if isinstance(t, Tensor):
        data = t._data
        data = data.get() if hasattr(data, "get") else data  # CuPy -> NumPy
        return np.asarray(data).astype(np.int64, copy=False)
    return np.asarray(t, dtype=np.int64)


def _index(x: Tensor, rows: np.ndarray) -> Tensor:
    """``rows`` (host int64) as an index tensor in the namespace of ``x``."""
    return make_tensor(namespace(x._data).asarray(rows))


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None for None)."""
    if permutation is None:
        return None
    perm = _host(permutation)
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size, dtype=np.int64)
    return _int64(inverse)


_PackedSequenceBase = namedtuple("PackedSequence_",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """A packed batch of variable-length sequences (made by :func:`pack_padded_sequence` or
    :func:`pack_sequence`, never by hand): ``data`` (sum of lengths, \\*), ``batch_sizes``
    (int64, one per time step), ``sorted_indices`` / ``unsorted_indices`` (the permutation
    that sorted the batch by length, or None).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([T.tensor([1., 2., 3.]), T.tensor([4., 5.])])
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), sorted_indices=...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif getattr(batch_sizes, "is_cuda", False):
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` converted as ``Tensor.to``; the indices follow its device, batch_sizes
        stay on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def follow(t):
            return None if t is None else t.to(data.device)

        return type(self)(data, self.batch_sizes, follow(self.sorted_indices),
                          follow(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        return self.to("cuda", *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def double(self):
        return self.to(dtype=_dtype("float64"))

    def float(self):
        return self.to(dtype=_dtype("float32"))

    def half(self):
        return self.to(dtype=_dtype("float16"))

    def long(self):
        return self.to(dtype=_dtype("int64"))

    def int(self):
        return self.to(dtype=_dtype("int32"))

    def short(self):
        return self.to(dtype=_dtype("int16"))

    def char(self):
        return self.to(dtype=_dtype("int8"))

    def byte(self):
        return self.to(dtype=_dtype("uint8"))

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _dtype(name):
    from ... import dtypes

    return getattr(dtypes, name)


def _lengths_array(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(
                f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D "
                f"{lengths.device.type} {scalar_type_name(lengths._data.dtype)} tensor; pass "
                "one length per sequence, e.g. lengths.flatten()")
    arr = _host(lengths)
    if arr.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{arr.ndim}D lengths; pass one length per sequence")
    return arr


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """Per time step, how many of the (longest-first) sequences are still running."""
    steps = np.arange(int(sorted_lengths[0]))
    return (sorted_lengths[None, :] > steps[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    with the given ``lengths`` (a list or a 1-D tensor).  With ``enforce_sorted`` the
    lengths must be decreasing; otherwise the batch is sorted here and the permutation kept
    in the result, so the RNN's outputs come back in the caller's order.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.nn.utils.rnn import pack_padded_sequence
    >>> pack_padded_sequence(T.zeros(3, 2, 1), [3, 1]).batch_sizes.tolist()
    [2, 1, 1]
    """
    lens = _lengths_array(lengths)
    if input.ndim < 2:
        raise RuntimeError(f"pack_padded_sequence(): input must have at least 2 dimensions "
                           f"(time and batch), got shape {list(input.shape)}")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if lens.shape[0] != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.shape[0]} "
            f"(batch_size={batch}); give one length per sequence of the batch dimension "
            f"({'0' if batch_first else '1'})")
    if enforce_sorted:
        if np.any(lens[:-1] < lens[1:]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order = None
    else:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
    if lens.size and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lens.size == 0:
        raise RuntimeError("pack_padded_sequence(): got an empty batch (no lengths); pack "
                           "at least one sequence")
    if lens[0] > steps:
        raise RuntimeError(
            f"pack_padded_sequence(): a length of {int(lens[0])} exceeds the "
            f"{steps} time steps of the input of shape {list(input.shape)}; lengths must be at "
            "most the padded length")
    batch_sizes = _batch_sizes(lens)
    original = order if order is not None else np.arange(batch)
    rows = []
    for t, bs in enumerate(batch_sizes):
        b = original[:bs]
        rows.append(b * steps + t if batch_first else t * batch + b)
    rows = np.concatenate(rows)
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _index(input, rows))
    sorted_indices = None if order is None else _int64(order).to(input.device)
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def _with_padding_row(data: Tensor, padding_value) -> Tensor:
    """``data`` with one more row, all ``padding_value``, at the end (the row every padded
    position reads)."""
    xp = namespace(data._data)
    pad = make_tensor(xp.full((1,) + tuple(data.shape[1:]), padding_value,
                              dtype=data._data.dtype))
    return cat([data, pad], 0)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of :func:`pack_padded_sequence`: a padded tensor ``(T, B, *)`` (or
    ``(B, T, *)``) and the lengths (int64), in the batch order given to the packing.
    ``total_length`` pads to that many time steps (at least the longest sequence).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.nn.utils import rnn
    >>> padded, lengths = rnn.pad_packed_sequence(
    ...     rnn.pack_sequence([T.tensor([1., 2.]), T.tensor([3.])]), batch_first=True)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 2.0], [3.0, 0.0]], [2, 1])
    """
    batch_sizes = _host(sequence.batch_sizes)
    steps = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}")
        steps = total_length
    batch = int(batch_sizes[0])
    data = sequence.data
    n = data.shape[0]
    # position[t, b]: the row of data holding step t of sorted sequence b (n: padding)
    position = np.full((steps, batch), n, dtype=np.int64)
    offset = 0
    for t, bs in enumerate(batch_sizes):
        position[t, :bs] = np.arange(offset, offset + bs)
        offset += bs
    lengths = (position[: batch_sizes.shape[0]] < n).sum(0).astype(np.int64)
    if sequence.unsorted_indices is not None:
        unsorted = _host(sequence.unsorted_indices)
        position, lengths = position[:, unsorted], lengths[unsorted]
    if batch_first:
        position = position.T
    rows = np.ascontiguousarray(position).reshape(-1)
    padded = _with_padding_row(data, padding_value).index_select(0, _index(data, rows))
    padded = padded.reshape(position.shape + tuple(data.shape[1:]))
    return padded, _int64(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths ``(L_i, *)`` into one tensor ``(T, B, *)``
    (``(B, T, *)`` with ``batch_first``), padded with ``padding_value`` on the right (or the
    left, ``padding_side="left"``).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.nn.utils.rnn import pad_sequence
    >>> pad_sequence([T.tensor([1., 2.]), T.tensor([3.])], batch_first=True).tolist()
    [[1.0, 2.0], [3.0, 0.0]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if s.ndim == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                f"pad_sequence(): sequence {i} has shape {list(s.shape)} but sequence 0 has "
                f"shape {list(sequences[0].shape)}; every sequence must have at least one "
                "dimension and the same size in every dimension after the first")
    lengths = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    steps, batch = int(lengths.max()), len(sequences)
    data = cat(list(sequences), 0)
    n = data.shape[0]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    position = np.full((batch, steps), n, dtype=np.int64)
    for b, (start, length) in enumerate(zip(starts, lengths)):
        first = 0 if padding_side == "right" else steps - length
        position[b, first:first + length] = np.arange(start, start + length)
    if not batch_first:
        position = position.T
    rows = np.ascontiguousarray(position).reshape(-1)
    padded = _with_padding_row(data, padding_value).index_select(0, _index(data, rows))
    return padded.reshape(position.shape + trailing)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of sequences of the given lengths (the inverse
    of :func:`pad_sequence` with right padding).  Unlike PyTorch 2.13, the input is not
    transposed in place when ``batch_first`` is False."""
    lens = _lengths_array(lengths)
    batch_dim = 0 if batch_first else 1
    return [padded_sequences.select(batch_dim, b)[: int(length)]
            for b, length in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences ``(L_i, *)`` (longest first unless ``enforce_sorted`` is
    False): ``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a :class:`PackedSequence`, in the order they were packed."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
