"""retrograd.autograd: ``backward``, ``grad``, ``Function``, ``Variable``, grad modes, checks.

``grad_mode``, ``graph`` and ``engine`` sit below the Tensor class (they import no tensor and
no op); ``frontend`` (``backward``, ``grad``), ``function``, ``gradcheck``, ``variable``
and ``tracing`` sit above the ops.  This file only re-exports.
"""

from __future__ import annotations

from . import engine  # noqa: F401
from .frontend import backward, grad
from .grad_mode import (
    detect_anomaly, enable_grad, inference_mode, is_anomaly_check_nan_enabled,
    is_anomaly_enabled, is_grad_enabled, is_inference_mode_enabled, no_grad, set_detect_anomaly,
    set_grad_enabled,
)
from .graph import accumulator_of  # noqa: F401
from .function import Function, FunctionCtx
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable
from . import functional  # noqa: F401
from . import graph  # noqa: F401 - saved-tensor hooks, multi-grad hooks (torch.autograd.graph)
from . import forward_ad  # noqa: F401


def trace(params=None):
    """Record one backward pass step by step (see ``retrograd.autograd.tracing``)."""
    from .tracing import trace as _trace

    return _trace(params)


__all__ = [
    "backward", "grad", "Variable", "Function", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "inference_mode", "is_inference_mode_enabled", "gradcheck",
    "gradgradcheck", "trace", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "FunctionCtx", "functional", "graph",
]
