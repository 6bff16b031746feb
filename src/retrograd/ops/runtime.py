"""Runtime settings with PyTorch's names: intra- and inter-op thread counts and
deterministic-algorithm mode (``torch.set_num_threads``, ``torch.use_deterministic_algorithms``
and their getters), warn-always, float32 matmul precision, flush-denormal, the default device;
the queries ``typename`` and ``is_storage``; and ``cond`` / ``while_loop`` as PyTorch runs
them eagerly (plain Python control flow: gradients flow through the branch or iterations run).

Honest about what they change.  retrograd computes with NumPy in the calling thread, so

* ``set_num_threads(n)`` records ``n`` (``get_num_threads`` returns it) and, when the
  optional ``threadpoolctl`` package is installed, limits the BLAS/OpenMP pools NumPy's
  matrix products use to ``n`` threads; without it NumPy's BLAS threads are left as they
  are (set ``OMP_NUM_THREADS`` before starting Python instead);
* ``set_num_interop_threads(n)`` only records ``n``: retrograd runs no inter-op pool.  As in
  PyTorch it may be called once;
* deterministic mode is recorded and reported: every retrograd op is already deterministic
  on the CPU (the same inputs give the same bits: scatter-adds run in a fixed order), so no
  op raises or warns under it.
"""

from __future__ import annotations

import math
import os
import warnings

from ..autograd.grad_mode import anomaly
from ..backend import device
from ._errors import PY_VALUES, not_a_tensor

_threads = [os.cpu_count() or 1]
_interop = [os.cpu_count() or 1, False]  # value, set once already
_deterministic = [False, False]  # enabled, warn_only
_limiter = [None]  # threadpoolctl's controller, while a limit is set


def _positive_int(name, n):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer (got {n})")


def get_num_threads() -> int:
    """The number of threads for intra-op parallelism (the machine's cores by default)."""
    return _threads[0]


def set_num_threads(int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Set the number of intra-op threads: recorded, and applied to NumPy's BLAS/OpenMP
    pools when ``threadpoolctl`` is installed (``pip install threadpoolctl``).

    Examples
    --------
    >>> import retrograd as T
    >>> before = T.get_num_threads()
    >>> T.set_num_threads(1); T.get_num_threads()
    1
    >>> T.set_num_threads(before)
    """
    n = int
    _positive_int("set_num_threads", n)
    _threads[0] = n
    try:
        import threadpoolctl
    except ImportError:
        return  # NumPy's BLAS keeps its own thread count (see the module's docstring)
    if _limiter[0] is not None:
        _limiter[0].restore_original_limits()
    _limiter[0] = threadpoolctl.threadpool_limits(limits=n)


def get_num_interop_threads() -> int:
    """The number of inter-op threads (recorded only: retrograd has no inter-op pool)."""
    return _interop[0]


def set_num_interop_threads(int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Record the number of inter-op threads; like PyTorch, only once per process."""
    n = int
    _positive_int("set_num_interop_threads", n)
    if _interop[1]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop[:] = [n, True]


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """Turn deterministic mode on or off (recorded: retrograd's ops are all deterministic)."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic[:] = [mode, warn_only]


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode was turned on with ``warn_only=True``."""
    return _deterministic[1]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """``"default"``/0 (off), ``"warn"``/1 (on, warn only) or ``"error"``/2 (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                               f"{debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    _deterministic[:] = [debug_mode > 0, debug_mode == 1]


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (on, warn only) or 2 (on), as :func:`set_deterministic_debug_mode`."""
    if not _deterministic[0]:
        return 0
    return 1 if _deterministic[1] else 2


# ----------------------------------------------------------------- more settings and queries

_warn_always = [False]
_matmul_precision = ["highest"]


def set_warn_always(b) -> None:
    """Record whether warnings PyTorch gives once should be given every time (retrograd's
    warnings go through Python's ``warnings`` filters, which decide that)."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """What :func:`set_warn_always` set (False by default)."""
    return _warn_always[0]


def set_float32_matmul_precision(precision) -> None:
    """Record ``"highest"``, ``"high"`` or ``"medium"``.  NumPy's float32 products always
    run in full float32 (``"highest"``), whatever is recorded; anything else warns and
    changes nothing, as PyTorch's."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    """What :func:`set_float32_matmul_precision` recorded (``"highest"`` by default)."""
    return _matmul_precision[0]


def set_flush_denormal(mode) -> bool:
    """PyTorch turns the CPU's flush-to-zero of denormal floats on or off and returns True
    where it can; NumPy exposes no such switch, so this returns False: not supported."""
    return False


def get_default_device():
    """The device factory functions use: the CPU (retrograd has no ``set_default_device``)."""
    return device("cpu")


def is_storage(obj) -> bool:
    """False: retrograd has no storage objects (a tensor's data is a NumPy array)."""
    return False


def typename(obj) -> str:
    """The name of ``obj``'s type as PyTorch spells it: ``tensor.type()`` for a tensor
    (``"retrograd.FloatTensor"``), else ``module.qualname``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.typename(T.zeros(2)), T.typename(3)
    ('retrograd.FloatTensor', 'int')
    """
    if hasattr(obj, "_data") and hasattr(obj, "type"):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


# ----------------------------------------------------------------- control flow (eager)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, as ``torch.cond``
    runs eagerly; ``pred`` a bool, a number or a one-element tensor.  Gradients flow
    through the branch taken."""
    if hasattr(pred, "_data"):
        if pred._data.size != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = bool(pred._data.reshape(()))
    return true_fn(*operands) if pred else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)``, as
    ``torch.while_loop`` runs eagerly; returns the last body's result (``carried_inputs``
    when the body never runs).  Gradients flow through every iteration."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"while_loop: carried_inputs must be a tuple or list of tensors, "
                           f"got {type(carried_inputs).__name__}")
    result = carried = tuple(carried_inputs)
    while bool(cond_fn(*carried)):
        result = body_fn(*carried)
        carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    return result


# ----------------------------------------------------------------- sym_* on plain values
# (PyTorch's SymInt-aware helpers; retrograd has no symbolic shapes, so they are the Python
# operations on numbers, with PyTorch's float promotion in sym_max / sym_min)


def sym_not(a):
    """``not a``."""
    return not a


def sym_float(a):
    """``float(a)``."""
    return float(a)


def sym_int(a):
    """``int(a)``: a float truncated toward zero."""
    return int(a)


def sym_max(a, b):
    """``max(a, b)``, a float when either is."""
    m = max(a, b)
    return float(m) if isinstance(a, float) or isinstance(b, float) else m


def sym_min(a, b):
    """``min(a, b)``, a float when either is."""
    m = min(a, b)
    return float(m) if isinstance(a, float) or isinstance(b, float) else m


def sym_sqrt(a):
    """``math.sqrt(a)``."""
    return math.sqrt(a)


def sym_sum(args):
    """``sum(args)``."""
    return sum(args)


def sym_ite(b, t, f):
    """``t if b else f``."""
    return t if b else f


def get_device(input) -> int:  # noqa: A002
    """-1 for a CPU tensor, the device index for a CUDA one (``Tensor.get_device``)."""
    d = input.device
    return -1 if d.type == "cpu" else (d.index or 0)


def init_num_threads() -> None:
    """PyTorch initialises its thread pool in the calling thread; retrograd has none."""


def set_anomaly_enabled(enabled, check_nan=True) -> None:
    """Turn autograd's anomaly mode on or off (``torch.set_anomaly_enabled``; the same
    switch as ``autograd.set_detect_anomaly``)."""
    anomaly.enabled, anomaly.check_nan = bool(enabled), bool(check_nan)


def is_distributed(input) -> bool:  # noqa: A002
    """False: retrograd tensors are never distributed tensors."""
    if input.__class__ in PY_VALUES:  # (PyTorch's parser wants a Tensor)
        raise not_a_tensor("is_distributed", "input", 1, input)
    return False


def is_vulkan_available() -> bool:
    """False: retrograd has no Vulkan backend."""
    return False


def cudnn_is_acceptable(input) -> bool:  # noqa: A002
    """False: retrograd does not use cuDNN."""
    if input.__class__ in PY_VALUES:  # (PyTorch's parser wants a Tensor)
        raise not_a_tensor("cudnn_is_acceptable", "input", 1, input)
    return False
