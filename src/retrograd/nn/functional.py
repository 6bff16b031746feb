"""``retrograd.nn.functional``: activations and losses, as in ``torch.nn.functional``.

Filled from the op registry: each op lists its ``functional=`` names where it is defined
(``ops/activation.py``, ``ops/nn.py``...).
"""

from ..ops import registry as _registry

globals().update(_registry.namespace("nn.functional"))
__all__ = sorted(_registry.namespace("nn.functional"))
