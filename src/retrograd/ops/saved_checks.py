"""Tensors a node saves for their version check only (PyTorch's node saves them).

PyTorch's nodes save, beside the values their derivative formulas read, index and mask
tensors (ScatterBackward0's index, WhereBackward0's condition), sources (IndexAddBackward0),
inputs whose values retrograd's derivative does not need (CumminBackward0's self, kept as
indices here) and results (AminmaxBackward0's min and max).  An in-place change of one
after the op is an error at backward there; retrograd's derivative reads its own copies of
what it needs (flat positions, masks as arrays), so the node only has to keep the tensors
and check that their versions did not move.
"""

from __future__ import annotations

from ..autograd.graph import check_saveable
from ..tensor import Tensor


def check_also(out, *tensors):
    """Add ``tensors`` to what ``out``'s node (if it recorded one) saved, after the values its
    derivative reads, for their version check only: PyTorch's node saves them (the index of
    ScatterBackward0, the mask of WhereBackward0, the input of CumminBackward0...), so an
    in-place change of one after the op breaks backward there (fuzz seeds 11011618,
    11016151, 11008651).  The derivative reads the arrays it was given, which the check
    guarantees unchanged; a ``None`` (not saved for this call) is skipped."""
    node = getattr(out, "_grad_fn", None)  # (a batched tensor under vmap has none)
    extra = tuple(t for t in tensors if isinstance(t, Tensor))
    if node is None or not extra or node.saved is None:
        return out
    saved = tuple(node.saved)
    new = tuple(t._vc[0] if t._vc is not None else 0 for t in extra)
    old = node.versions
    if any(new):
        for t in extra:
            check_saveable(t._vc)  # (an inference tensor cannot be saved)
    node.saved = saved + extra
    if old is not None or any(new):
        old = tuple(old or ()) + (0,) * (len(saved) - len(old or ()))
        node.versions = old + new
    return out
