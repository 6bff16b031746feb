"""``retrograd.utils.dlpack``, as ``torch.utils.dlpack``: ``from_dlpack`` and ``to_dlpack``
(defined with the ops, ops/interop.py)."""

from ..ops.interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
