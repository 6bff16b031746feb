"""``retrograd.linalg``: the functions of ``torch.linalg`` that retrograd has.

Filled from the op registry (each op lists its ``linalg=`` names where it is defined, in
``ops/linalg*.py``), plus ``LinAlgError``, the RuntimeError subclass that singular inputs
raise, as ``torch.linalg.LinAlgError``.
"""

from .ops import registry as _registry
from .ops.linalg_solve import LinAlgError

globals().update(_registry.namespace("linalg"))
__all__ = sorted(_registry.namespace("linalg")) + ["LinAlgError"]
