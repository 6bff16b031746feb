"""retrograd: reverse-mode automatic differentiation with PyTorch's API, on NumPy.

``import retrograd as T`` and use it as you would ``import torch as T`` for autograd:

>>> import retrograd as T
>>> x = T.tensor([[0.5]], requires_grad=True)
>>> z = (2 * x) ** 3
>>> z.backward()
>>> x.grad              # dz/dx = 24 x^2
tensor([[6.]])
"""

from . import autograd, dtypes, random
from ._creation import (
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor, arange, as_tensor, empty, empty_like, eye, from_numpy, full,
    full_like, linspace, ones, ones_like, rand, rand_like, randint, randint_like, randn,
    randn_like, tensor, zeros, zeros_like,
)
from ._formatting import get_printoptions, printoptions, set_printoptions
from .autograd import (
    enable_grad, inference_mode, is_anomaly_check_nan_enabled, is_anomaly_enabled,
    is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from .backend import device
from .dtypes import (
    bool, can_cast, double, finfo, float, float16, float32, float64, get_default_dtype, half,
    iinfo, int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype,
    short, uint8,
)
from .ops import clone
from .ops.index import gather
from .ops.linalg import addmm, bmm, dot, einsum, matmul, outer
from .ops.pointwise import (
    abs, add, clamp, cos, div, eq, exp, ge, gt, le, log, lt, maximum, minimum, mul, ne, neg,
    power as pow, relu, remainder, sigmoid, sign, sin, sqrt, sub, tanh, where,
)
from .ops.reduce import argmax, argmin, max, mean, min, sum
from .ops.shape import (
    broadcast_to, cat, expand, flatten, permute, reshape, squeeze, stack, t, transpose,
    unsqueeze,
)
from .ops.nn import log_softmax, softmax
from .ops.layout import (
    chunk, diag, diag_embed, diagonal, flip, index_select, masked_select, movedim, narrow, roll,
    trace,
    split, swapaxes, tile, tril, triu, unbind, unflatten,
)
from .ops.binary import (
    addcdiv, addcmul, atan2, clamp_max, clamp_min, hypot, lerp, logaddexp, xlogy,
)
from .ops.sorting import argsort, kthvalue, nonzero, sort, topk
from .ops.stats import amax, amin, cumsum, logsumexp, norm, prod, std, var
from .ops.unary import (
    acos, asin, atan, ceil, cosh, erf, erfc, exp2, expm1, floor, frac, log1p, log2, log10, round,
    rsqrt,
    sinh, square, tan, trunc,
)
from .random import (
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from .tensor import Size, Tensor

mm = matmul
clip = clamp
concat = concatenate = cat
is_tensor = lambda obj: isinstance(obj, Tensor)  # noqa: E731
numel = lambda input: input.numel()  # noqa: E731
is_floating_point = lambda input: input.is_floating_point()  # noqa: E731

from . import nn  # noqa: E402  (built on the names above)
from . import viz  # noqa: E402  (draw(): DOT text needs nothing else)

__version__ = "0.1.0"
