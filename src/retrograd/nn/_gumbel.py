"""``nn.functional.gumbel_softmax``: a differentiable sample from a categorical
distribution, composed from registered ops (the noise has no gradient, so no record of
its own is needed)."""

from __future__ import annotations

import warnings

from .._creation import empty_like, zeros_like
from ..tensor import Tensor

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """``softmax((logits + g) / tau)`` with ``g ~ Gumbel(0, 1)`` drawn from retrograd's
    generator; ``hard=True`` returns the one-hot of its argmax in the forward pass with
    the soft sample's gradient (the straight-through estimator).  ``eps`` is deprecated
    and ignored, as in PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> import retrograd.nn.functional as F
    >>> y = F.gumbel_softmax(T.zeros(2, 3), tau=0.5, hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
