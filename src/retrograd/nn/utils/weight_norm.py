"""Legacy ``nn.utils.weight_norm`` / ``remove_weight_norm`` (forward pre-hook based).

``weight`` becomes ``g * v / ||v||`` with the norm taken over every dim but ``dim``
(``dim=None``: over the whole tensor).  The module keeps ``weight_g`` and ``weight_v``
as parameters and recomputes the plain attribute ``weight`` before each forward.
Deprecated in PyTorch in favour of ``nn.utils.parametrizations.weight_norm``, which
uses the same two functions below.
"""

from __future__ import annotations

import warnings

from ...ops.linalg_scalars import vector_norm
from ...tensor import Tensor
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim``: the ``pow``-norm of ``v`` over every dim but ``dim``, kept
    broadcastable against ``v``; ``dim=-1`` means over the whole tensor (a 0-d result)."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.dim() if v.dim() else 0
    others = tuple(d for d in range(v.dim()) if d != dim)
    if not others:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return vector_norm(v, pow, dim=others, keepdim=True)


def weight_norm_fn(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``torch._weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))``."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g``/``_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_fn(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> "WeightNorm":
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (deprecated, as in PyTorch: use
    :func:`retrograd.nn.utils.parametrizations.weight_norm`).

    Examples
    --------
    >>> import warnings
    >>> from retrograd import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = nn.utils.weight_norm(nn.Linear(3, 2))
    >>> sorted(m.state_dict())
    ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo :func:`weight_norm`: ``<name>`` becomes one plain parameter again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
