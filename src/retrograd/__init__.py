"""retrograd: reverse-mode automatic differentiation with PyTorch's API, on NumPy.

``import retrograd as T`` and use it as you would ``import torch as T`` for autograd:

>>> import retrograd as T
>>> x = T.tensor([[0.5]], requires_grad=True)
>>> z = (2 * x) ** 3
>>> z.backward()
>>> x.grad              # dz/dx = 24 x^2
tensor([[6.]])

This file only re-exports: the op functions come from the op registry
(``ops/registry.py``) through ``_assembly.py``, which also gives Tensor its methods.
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
from .memory_formats import (
    channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format,
)
from .dtypes import (
    bool, can_cast, double, finfo, float, float16, float32, float64, get_default_dtype, half,
    iinfo, int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype,
    short, uint8,
)
from .random import (
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from .tensor import Size, Tensor, is_floating_point, is_tensor, numel

# every op's top-level function (retrograd.add, retrograd.clip...), named in the op registry
from ._assembly import *  # noqa: E402, F403

from . import linalg, nn, special, viz  # noqa: E402, F401  (built on the names above)
from . import func  # noqa: E402, F401  (torch.func: grad, jacrev, vmap...)
from .func import vmap  # noqa: E402  (retrograd.vmap, as torch.vmap)
from . import backends, cuda, optim, utils  # noqa: E402, F401  (the training stack, above nn)
from . import distributed  # noqa: E402, F401  (torch.distributed over MPI)
from .cuda import accelerator  # noqa: E402  (retrograd.accelerator, as torch.accelerator)
from .serialization import load, save  # noqa: E402
from .compiler import compile  # noqa: E402, A004  (retrograd.compile, as torch.compile)

__version__ = "0.1.0"
from .ops.runtime import (  # noqa: E402  (thread counts and deterministic mode, as torch)
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, get_num_interop_threads,
    get_num_threads, is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
    set_num_interop_threads, set_num_threads, use_deterministic_algorithms,
)
from .ops.runtime import (  # noqa: E402  (more settings and queries; cond/while_loop, eager)
    cond, get_default_device, get_float32_matmul_precision, is_storage, is_warn_always_enabled,
    set_float32_matmul_precision, set_flush_denormal, set_warn_always, typename, while_loop,
)
from .ops.runtime import (  # noqa: E402  (sym_* on plain numbers; get_device, init_num_threads)
    get_device, init_num_threads, sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not,
    sym_sqrt, sym_sum,
)
from .ops.runtime import (  # noqa: E402  (anomaly switch; backend queries answering False)
    cudnn_is_acceptable, is_distributed, is_vulkan_available, set_anomaly_enabled,
)
