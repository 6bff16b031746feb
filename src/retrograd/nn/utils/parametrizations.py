"""``nn.utils.parametrizations``: weight_norm and spectral_norm as parametrizations
(``orthogonal`` lives in ``_orthogonal.py`` and is re-exported here).

Both register a small module with :func:`parametrize.register_parametrization`, so the
state_dict holds ``parametrizations.weight.original0/1`` (weight norm: g and v) or
``parametrizations.weight.original`` plus the power-iteration vectors
``parametrizations.weight.0._u/_v`` (spectral norm), with PyTorch's names.
"""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.linalg_scalars import vector_norm
from ...tensor import Tensor
from ..module import Module
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from . import parametrize
from ._orthogonal import orthogonal
from .weight_norm import norm_except_dim, weight_norm_fn

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """``forward(g, v) = g * v / ||v||``; its right inverse splits a weight into (g, v)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_fn(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        return norm_except_dim(weight, 2, self.dim), weight


def _weight_norm_compat_hook(name: str):
    """A load pre-hook that reads a checkpoint saved with the legacy ``weight_norm`` (keys
    ``<name>_g``/``<name>_v``) into ``parametrizations.<name>.original0/1``."""

    def hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
             unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    return hook


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||``, the norm over every dim but
    ``dim`` (``dim=None``: the whole tensor); g and v are
    ``module.parametrizations.<name>.original0`` and ``original1``.

    Examples
    --------
    >>> from retrograd import nn
    >>> m = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    >>> [k for k in m.state_dict()]
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    module.register_load_state_dict_pre_hook(_weight_norm_compat_hook(name))
    return module


def _normalize(x: Tensor, eps: float) -> Tensor:
    """``F.normalize(x, dim=0, eps=eps)`` for a vector."""
    return x / vector_norm(x, 2).clamp_min(eps)


class _SpectralNorm(Module):
    """``forward(W) = W / sigma(W)``, sigma estimated by power iteration on the buffers
    ``_u``/``_v`` (advanced in training mode only); a 1-D weight is just normalized."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", _normalize(u, self.eps))
                self.register_buffer("_v", _normalize(v, self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # in place on the buffers (PyTorch's out=), so the module keeps the same tensors
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(weight_mat.mv(self._v), self.eps))
                self._v.copy_(_normalize(weight_mat.H.mv(self._u), self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        # any value is a valid original: W / sigma(W) is only known up to scale
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as ``W / sigma(W)`` (sigma the largest singular
    value, by power iteration; ``dim`` defaults to 1 for ConvTranspose, else 0).

    Examples
    --------
    >>> from retrograd import nn
    >>> m = nn.utils.parametrizations.spectral_norm(nn.Linear(3, 2))
    >>> [k for k in m.state_dict()][2:]
    ['parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
