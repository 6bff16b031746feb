"""``native_layer_norm`` and ``native_batch_norm``: PyTorch's ATen forms, which return the
statistics beside the output: ``(out, mean, rstd)`` and ``(out, save_mean, save_invstd)``.

The output is ``layer_norm`` / ``batch_norm``'s (NativeLayerNormBackward0 /
NativeBatchNormBackward0); the statistics carry no gradient, as PyTorch's (not
differentiable outputs): the mean and ``1 / sqrt(biased var + eps)`` over the normalized
dimensions, shaped as PyTorch's (layer norm: the leading dims with ones after; batch norm:
one per channel in training, empty in evaluation).
"""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from .normalization import _batch_norm, _normalized_shape, _verify_batch_size, layer_norm
from .quiet_fp import quiet_fp


@quiet_fp
def native_layer_norm(input, normalized_shape, weight, bias, eps):  # noqa: A002
    """``(layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd)``.

    Examples
    --------
    >>> import retrograd as T
    >>> out, mean, rstd = T.native_layer_norm(T.tensor([[1.0, 3.0]]), [2], None, None, 0.0)
    >>> out, mean, rstd
    (tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    shape = _normalized_shape(normalized_shape, "native_layer_norm")
    out = layer_norm(input, shape, weight, bias, eps)
    a = input._data
    xp = namespace(a)
    axes = tuple(range(a.ndim - len(shape), a.ndim))
    mean = a.mean(axis=axes, keepdims=True)
    var = ((a - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = (1 / xp.sqrt(var + eps)).astype(a.dtype, copy=False)
    return out, make_tensor(mean.astype(a.dtype, copy=False)), make_tensor(rstd)


@quiet_fp
def native_batch_norm(input, weight, bias, running_mean, running_var, training,  # noqa: A002
                      momentum, eps):
    """``(batch_norm(...), save_mean, save_invstd)``: the batch's per-channel mean and
    ``1 / sqrt(biased var + eps)`` in training, empty tensors in evaluation with running
    statistics."""
    if training:
        _verify_batch_size(input.shape)
    out = _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    a = input._data
    xp = namespace(a)
    if not training and running_mean is not None:
        empty = xp.zeros((0,), dtype=a.dtype)
        return out, make_tensor(empty), make_tensor(empty.copy())
    axes = (0,) + tuple(range(2, a.ndim))
    mean = a.mean(axis=axes)
    var = ((a - mean.reshape((1, -1) + (1,) * (a.ndim - 2))) ** 2).mean(axis=axes)
    invstd = (1 / xp.sqrt(var + eps)).astype(a.dtype, copy=False)
    return out, make_tensor(mean.astype(a.dtype, copy=False)), make_tensor(invstd)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(native_layer_norm, method=False)
register(native_batch_norm, method=False)
