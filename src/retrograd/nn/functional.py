"""``retrograd.nn.functional``: activations and losses, as in ``torch.nn.functional``.

Filled from the op registry: each op lists its ``functional=`` names where it is defined
(``ops/activation.py``, ``ops/nn.py``...).
"""

from ..ops import registry as _registry

globals().update(_registry.namespace("nn.functional"))
__all__ = sorted(_registry.namespace("nn.functional"))

# composites written in nn itself rather than registered as ops
from ._conv_tbc import conv_tbc  # noqa: E402,F401
from ._gumbel import gumbel_softmax  # noqa: E402,F401

__all__ = sorted([*__all__, "conv_tbc", "gumbel_softmax"])
