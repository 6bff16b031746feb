"""Grad mode: whether ops record a graph.  Thread-local, as in PyTorch.

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` work as context managers and as
decorators.  The flag lives on a ``threading.local`` so a worker thread that disables
recording does not disable it for the main thread.

What is per thread and what is shared matches PyTorch 2.13 (checked by running both):
grad mode and inference mode are per thread, and a new thread starts with grad enabled
and inference mode off, whatever the thread that started it had; anomaly detection (and
its check_nan flag) is process-wide: turned on in one thread, every thread sees it.  The
active ``autograd.trace()`` (retrograd's own) is per thread too: it narrates the backward
passes of the thread that opened it.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


class _State(threading.local):
    # class attributes: the values every new thread starts with
    enabled = True
    inference = False
    tracer = None  # the autograd.trace() recorder active in this thread (engine reads it)
    # False while a grad() or backward(inputs=...) runs: a reentrant checkpoint refuses then
    checkpoint_valid = True


state = _State()
_object_new = object.__new__

#: Non-empty while some thread is inside ``inference_mode()`` (one entry per open block):
#: when it is empty no thread is in inference mode, so the ops' hot paths skip reading the
#: thread-local ``state.inference`` (a thread-local read costs about as much as building
#: the result tensor).  list.append/pop are atomic, so threads need no lock.
inference_blocks = []


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are being recorded."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (which also turns recording off)."""
    return state.inference


def _wrap_generator(ctx_factory, func):
    """Run each step of a generator inside a fresh context, as PyTorch's decorators do."""

    @functools.wraps(func)
    def generator(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator


def _decorate(ctx_factory, func):
    if inspect.isgeneratorfunction(func):
        return _wrap_generator(ctx_factory, func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with ctx_factory():
            return func(*args, **kwargs)

    return wrapper


class _GradModeContext:
    """Base for the grad-mode context managers; also usable as a decorator.

    ``@no_grad()`` and bare ``@no_grad`` both decorate; a generator function runs each
    step (between yields) in the mode, not the caller's code between them.
    """

    # (slots: no per-instance dict to build on each ``with no_grad():``; subclasses that
    # keep more state have their dict)
    __slots__ = ("_prev",)
    mode = True

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return _object_new(cls)  # (not super(): ``with no_grad()`` is on hot paths)
        if not callable(orig_func):
            raise TypeError(
                f"{cls.__name__}() takes no arguments; use it as `with {cls.__name__}():` or "
                f"as a decorator `@{cls.__name__}()`"
            )
        return cls()(orig_func)

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = self.mode

    def __exit__(self, exc_type, exc_value, traceback):
        state.enabled = self._prev
        return False

    def __call__(self, func):
        return _decorate(self.clone, func)

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

    __slots__ = ()
    mode = False

    def __enter__(self):  # (the base's, with the mode a constant: inference loops open one
        # per batch, bench/ (f)).  The thread's dict of ``state``, read once: a read and a
        # write of ``state.enabled`` are two thread-local lookups (~470 instructions more);
        # a thread that never set it has no entry, and reads the class default (True)
        d = state.__dict__
        self._prev = d.get("enabled", True)
        d["enabled"] = False


class enable_grad(_GradModeContext):
    """Record operations again inside a ``no_grad`` block."""

    __slots__ = ()
    mode = True


class inference_mode(_GradModeContext):
    """Like ``no_grad`` (retrograd has no separate inference tensors).

    ``inference_mode(False)`` leaves the grad mode as it is.
    """

    def __new__(cls, mode=True):
        if callable(mode):  # bare @inference_mode
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True):
        self._inference = bool(mode)

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        if self._inference:
            inference_blocks.append(None)  # (before the flag: never on while this is empty)
            state.enabled = False
        state.inference = self._inference

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
        if self._inference:
            inference_blocks.pop()
        return False

    def clone(self):
        return self.__class__(self._inference)


class set_grad_enabled(_GradModeContext):
    """Switch recording on or off; takes effect at once, and restores on ``with`` exit.

    Examples
    --------
    >>> import retrograd as T
    >>> with T.set_grad_enabled(False):
    ...     T.is_grad_enabled()
    False
    """

    def __new__(cls, mode):
        return object.__new__(cls)

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
        return _decorate(self.clone, func)

    def clone(self):
        return _ModeContext(self.mode)

    def __repr__(self):
        return f"retrograd.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class _ModeContext(_GradModeContext):
    """A plain ``with`` block that sets the grad mode to ``mode`` (used by decorators)."""

    def __new__(cls, mode):
        return object.__new__(cls)

    def __init__(self, mode: bool):
        self.mode = mode

    def clone(self):
        return _ModeContext(self.mode)


# --------------------------------------------------------------------------- anomaly mode
#: Non-empty while something must see every node an op records (``graph.on_record``):
#: active saved-tensor hooks (one entry per open ``saved_tensors_hooks`` block, in any
#: thread) and anomaly mode (which keeps each node's forward traceback).  The op machinery
#: tests only this list's truth, so recording costs one check when neither is on.
record_extras = []


class _Anomaly:
    """Anomaly detection is process-wide in PyTorch (not per thread): so here."""

    check_nan = True
    _enabled = False

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        if value and not self._enabled:
            record_extras.append(self)
        elif not value and self._enabled:
            record_extras.remove(self)
        self._enabled = value


anomaly = _Anomaly()


def is_anomaly_enabled() -> bool:
    """True inside ``detect_anomaly()`` / after ``set_detect_anomaly(True)``."""
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly mode also checks every backward result for NaN."""
    return anomaly.check_nan


class detect_anomaly:
    """Debug backward: NaN gradients raise, naming the node, and an error in backward
    warns with the traceback of the forward call that recorded the failing node.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([0.0, 1.0], requires_grad=True)
    >>> with T.autograd.detect_anomaly():           # doctest: +SKIP
    ...     x.sqrt().sum().backward()
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        import warnings

        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.", UserWarning, stacklevel=2,
        )

    def __enter__(self):
        self._prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        anomaly.enabled, anomaly.check_nan = self._prev
        return False

    def __call__(self, func):
        check_nan = self.check_nan

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            ctx = object.__new__(detect_anomaly)  # no second warning per call
            ctx.check_nan = check_nan
            with ctx:
                return func(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off now; as a ``with`` block, restore on exit."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        anomaly.enabled, anomaly.check_nan = self._prev
        return False
