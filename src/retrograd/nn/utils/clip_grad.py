"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_ (as ``torch.nn.utils.clip_grad``).

Norms are computed on the gradient arrays directly (one vectorised reduction per
gradient), as PyTorch's foreach path does; the scaling is an in-place multiply under
no_grad, so gradient versions bump as PyTorch's do.
"""

from __future__ import annotations

import math
import types
import warnings

from ..._creation import tensor as _tensor
from ...autograd.grad_mode import no_grad
from ...backend import namespace
from ...tensor import Tensor, make_tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(arr, p: float):
    """``linalg.vector_norm(arr, p)`` on an array, in the array's dtype."""
    xp = namespace(arr)
    a = xp.abs(arr)
    if p == math.inf:
        return a.max() if a.size else xp.zeros((), arr.dtype)
    if p == -math.inf:
        return a.min()
    if p == 0:
        return xp.asarray((arr != 0).sum(), dtype=arr.dtype)
    if p == 1:
        return a.sum(dtype=arr.dtype)
    if p == 2:
        return xp.sqrt(xp.vdot(a.ravel(), a.ravel()).astype(arr.dtype))
    return (a ** p).sum(dtype=arr.dtype) ** (1.0 / p)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as one vector): the norm of
    their norms.  ``error_if_nonfinite`` raises when it is nan or inf."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tensor(0.0)
    arrays = [t._data for t in tensors]
    xp = namespace(arrays[0])
    dtype = xp.result_type(*arrays)
    norms = xp.stack([xp.asarray(_vector_norm(a, norm_type), dtype=dtype) for a in arrays])
    total = xp.asarray(_vector_norm(norms, norm_type), dtype=dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return make_tensor(total)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale the gradients by ``min(max_norm / (total_norm + 1e-6), 1)`` in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    max_norm = float(max_norm)
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Clip the gradients of ``parameters`` (in place) so their total ``norm_type`` norm is
    at most ``max_norm``; returns the total norm before clipping.

    Examples
    --------
    >>> import retrograd as T
    >>> p = T.nn.Parameter(T.zeros(2)); p.grad = T.tensor([3.0, 4.0])
    >>> T.nn.utils.clip_grad_norm_([p], 1.0)
    tensor(5.)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated: use :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
