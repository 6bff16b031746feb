"""parameters_to_vector and vector_to_parameters (as ``torch.nn.utils``)."""

from __future__ import annotations

from ...ops.shape import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated into one vector (differentiable)."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive slices of ``vec`` into the parameters' data (not recorded)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
