"""Muon: momentum whose update is orthogonalised by a Newton-Schulz iteration, for the 2-D
weights of hidden layers, as ``torch.optim.Muon``.

One difference from PyTorch, on purpose: PyTorch runs the Newton-Schulz iteration in
bfloat16 (a speed trick for GPUs) and adds the bfloat16 result to the parameter.  NumPy has
no bfloat16, so retrograd runs it in the parameter's own dtype (float32 stays float32,
float64 float64).  The algorithm is the same; the update carries more precision, so a
float32 trajectory agrees with PyTorch's to bfloat16's precision (about 3 significant
digits of each update), and with the iteration in the same dtype on both sides the two
agree to the last bits (tests/optim/test_muon.py checks both).
"""

from __future__ import annotations

import math

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import add_scaled_, lerp_
from .optimizer import PerParameterOptimizer, check_tensor_lr, to_scalar

__all__ = ["Muon"]

# Keller Jordan's coefficients and defaults, as PyTorch's
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """About ``U V^T`` for ``grad = U S V^T`` (its singular values pushed towards 1 by a
    quintic iteration whose coefficients maximise the slope at zero; the result is roughly
    ``U S' V^T`` with ``S'`` in [0.5, 1.5], which trains as well), in ``grad``'s dtype."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    xp = namespace(grad)
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.T if tall else grad              # the Gram matrix of the shorter side
    # divide by the Frobenius norm (at least eps): the spectral norm is then at most 1
    x = x / xp.maximum(xp.sqrt(xp.sum(x * x)), x.dtype.type(eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


def adjust_lr(lr: float, adjust_lr_fn, shape) -> float:
    """The learning rate for a matrix of this shape: Keller's ``sqrt(max(1, A/B))``
    ("original", the default) or Moonshot's ``0.2 sqrt(max(A, B))`` ("match_rms_adamw")."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(PerParameterOptimizer):
    """Muon (Jordan et al., 2024) as ``torch.optim.Muon``, for 2-D parameters only (use
    AdamW or SGD for biases, embeddings and the like).

    Per step: ``buf.lerp_(g, 1 - momentum)``; the update is ``g.lerp(buf, momentum)`` with
    Nesterov (the default), else ``buf``; it is orthogonalised by ``ns_steps`` Newton-Schulz
    iterations (in the parameter's dtype: PyTorch uses bfloat16, see the module docstring);
    then decoupled weight decay ``p *= 1 - lr * weight_decay`` and
    ``p -= adjust_lr(lr, shape) * update``.  State: ``momentum_buffer``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([[3.0, 0.0], [0.0, 0.5]], requires_grad=True)
    >>> opt = T.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['momentum_buffer']
    >>> T.optim.Muon([T.zeros(3, requires_grad=True)])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Muon only supports 2D parameters whereas we found a parameter with size: ...
    """

    def __init__(self, params, lr=1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True,
                 ns_coefficients: tuple = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _group_settings(self, group):
        return (to_scalar(group["lr"]), group["weight_decay"], group["momentum"],
                group["nesterov"], group["ns_coefficients"], group["eps"], group["ns_steps"],
                group["adjust_lr_fn"])

    def _init_state(self, state, param, group):
        state["momentum_buffer"] = make_tensor(namespace(param).zeros_like(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, wd, momentum, nesterov, coefficients, eps, ns_steps, adjust_fn = settings
        if param.dtype.kind == "c":
            raise RuntimeError("Muon does not support complex parameters")
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = state["momentum_buffer"]._data
        lerp_(buf, grad, 1 - momentum, scratch.get(1, buf))
        if nesterov:
            update = scratch.get(2, buf)
            update[...] = grad
            lerp_(update, buf, momentum, scratch.get(1, buf))
        else:
            update = buf
        update = zeropower_via_newtonschulz(update, coefficients, ns_steps, eps)
        param *= 1 - lr * wd
        add_scaled_(param, update, -adjust_lr(lr, adjust_fn, param.shape),
                    scratch.get(1, param))
