"""``retrograd.memory_format`` and its four values, as PyTorch's ``torch.memory_format``.

A memory format names the strides of a fresh tensor: ``preserve_format`` (the default of
``clone``, the ``*_like`` factories and ``to``: the input's own strides when they are
non-overlapping and dense, else dense in the input's stride order), ``contiguous_format``
(row-major), ``channels_last`` (4-d, NHWC in memory) and ``channels_last_3d`` (5-d, NDHWC).
How each becomes strides is ops/iter_layout.py's ``format_strides``."""

from __future__ import annotations


class memory_format:  # noqa: N801 - PyTorch's name
    """One of PyTorch's memory formats: compared by identity, printed as retrograd's dtypes
    are (``retrograd.channels_last``, where torch prints ``torch.channels_last``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"retrograd.{self.name}"

    def __reduce__(self):  # pickles to the same object (identity is what callers compare)
        return self.name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
