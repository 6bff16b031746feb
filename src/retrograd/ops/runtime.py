"""Runtime settings with PyTorch's names: intra- and inter-op thread counts and
deterministic-algorithm mode (``torch.set_num_threads``, ``torch.use_deterministic_algorithms``
and their getters).

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

import os

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
