"""``retrograd.special``: the functions of ``torch.special`` that retrograd has.

Filled from the op registry (each op lists its ``special=`` names where it is defined):
``expit`` is ``sigmoid``; ``softmax`` and ``log_softmax`` require ``dim`` here, as in
PyTorch.
"""

from .ops import registry as _registry

globals().update(_registry.namespace("special"))
__all__ = sorted(_registry.namespace("special"))
