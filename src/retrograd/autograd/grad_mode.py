"""Grad mode: whether ops record a graph.  Thread-local, as in PyTorch.

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` work as context managers and as
decorators.  The flag lives on a ``threading.local`` so a worker thread that disables
recording does not disable it for the main thread.
"""

from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode"]


class _State(threading.local):
    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are being recorded."""
    return state.enabled


class _GradModeContext:
    """Base for the grad-mode context managers; also usable as a decorator."""

    mode = True

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = self.mode

    def __exit__(self, *exc):
        state.enabled = self._prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_GradModeContext):
    """Do not record operations: results have ``requires_grad=False``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.ones(2, requires_grad=True)
    >>> with T.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    mode = False


class enable_grad(_GradModeContext):
    """Record operations again inside a ``no_grad`` block."""

    mode = True


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (retrograd has no separate inference tensors)."""

    def __init__(self, mode: bool = True):
        self.mode = not mode

    def __call__(self, func):
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = state.enabled
            state.enabled = mode
            try:
                return func(*args, **kwargs)
            finally:
                state.enabled = prev

        return wrapper


class set_grad_enabled(_GradModeContext):
    """Switch recording on or off; takes effect at once, and restores on ``with`` exit."""

    def __init__(self, mode: bool):
        self._prev = state.enabled
        self.mode = bool(mode)
        state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self._prev
        return False

    def __call__(self, func):
        state.enabled = self._prev  # used as a decorator: do not change the mode now
        mode = self.mode

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = state.enabled
            state.enabled = mode
            try:
                return func(*args, **kwargs)
            finally:
                state.enabled = prev

        return wrapper
