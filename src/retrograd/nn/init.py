"""Weight initializers, as ``torch.nn.init``: each fills a tensor in place (under no_grad)
and returns it.

The distributions, bounds and errors are PyTorch's; the numbers come from retrograd's
generator (``retrograd.manual_seed`` or ``generator=``), so they differ from PyTorch's.
"""

from __future__ import annotations

import math
import warnings

from ..autograd.grad_mode import no_grad
from ..backend import namespace
from ..random import numpy_generator
from ..tensor import make_tensor

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
    "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
    "orthogonal", "sparse",
]


def _copy_array(tensor, values):
    """Write the array ``values`` into ``tensor`` (in place, a version bump, no graph)."""
    with no_grad():
        xp = namespace(tensor._data)
        tensor.copy_(make_tensor(xp.asarray(values, dtype=tensor._data.dtype)))
    return tensor


def calculate_gain(nonlinearity, param=None) -> float:
    """The recommended gain for a nonlinearity (``'relu'``: sqrt(2), ``'tanh'``: 5/3...)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or \
                isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill ``tensor`` with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill ``tensor`` with N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None):
    """Fill ``tensor`` with N(mean, std^2) truncated to [a, b] (values redrawn until inside)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    # inverse-CDF sampling as PyTorch, with the inverse normal CDF from the standard
    # library (NumPy has no erfinv; SciPy is optional)
    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    rng = numpy_generator(generator)
    u = rng.uniform(lo, hi, size=tuple(tensor.shape))
    inv = _normal_ppf(u)
    import numpy as np

    values = np.clip(mean + std * inv, a, b)
    return _copy_array(tensor, values)


def _normal_ppf(u):
    """The standard normal quantile function, elementwise (Acklam's rational approximation
    refined by one Halley step: ~1e-15 relative error)."""
    import numpy as np

    u = np.asarray(u, dtype=np.float64)
    c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
         -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
    d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
         3.754408661907416e+00]
    a_ = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
          1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
    b_ = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
          6.680131188771972e+01, -1.328068155288572e+01]
    out = np.empty_like(u)
    low, high = u < 0.02425, u > 1 - 0.02425
    mid = ~(low | high)
    q = u[mid] - 0.5
    r = q * q
    out[mid] = (((((a_[0] * r + a_[1]) * r + a_[2]) * r + a_[3]) * r + a_[4]) * r + a_[5]) * q / \
        (((((b_[0] * r + b_[1]) * r + b_[2]) * r + b_[3]) * r + b_[4]) * r + 1)
    for mask, sign, p in ((low, 1.0, u), (high, -1.0, 1 - u)):
        q = np.sqrt(-2 * np.log(np.maximum(p[mask], 1e-300)))
        out[mask] = sign * (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    # one Halley step against the exact CDF
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    e = 0.5 * erfc(-out / math.sqrt(2)) - u
    step = e * math.sqrt(2 * math.pi) * np.exp(out * out / 2)
    return out - step / (1 + out * step / 2)


def constant_(tensor, val: float):
    """Fill ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D ``tensor`` with the identity (ones on the diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    xp = namespace(tensor._data)
    return _copy_array(tensor, xp.eye(*tensor.shape))


def dirac_(tensor, groups: int = 1):
    """Fill a 3-, 4- or 5-D (convolution weight) ``tensor`` with the Dirac delta: the
    convolution keeps the input channels' identity, in each of ``groups``."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    xp = namespace(tensor._data)
    values = xp.zeros(tuple(sizes))
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_per_group + d, d) + centre] = 1
    return _copy_array(tensor, values)


def _calculate_fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan) (``mode`` picks the fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):
    """He normal: N(0, std^2), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(fan), generator)


def orthogonal_(tensor, gain: float = 1, generator=None):
    """Fill ``tensor`` (2-D or more, trailing dims flattened) with a (semi-)orthogonal
    matrix times ``gain``: the Q of a QR of a Gaussian matrix, signs fixed by R's diagonal."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy as np

    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = numpy_generator(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _copy_array(tensor, (gain * q).reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std: float = 0.01, generator=None):
    """Fill a 2-D ``tensor`` with N(0, std^2), then zero a ``sparsity`` fraction of each
    column (rows chosen at random)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    rng = numpy_generator(generator)
    values = rng.normal(0.0, std, size=(rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:num_zeros], col] = 0
    return _copy_array(tensor, values)


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated: use :func:`{new_name}`."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
