"""Parameter, Buffer and the uninitialized (lazy) kinds, as ``torch.nn.parameter``.

A :class:`Parameter` is a Tensor subclass: a leaf that requires grad by default and that a
Module registers when it is assigned as an attribute.  It shares its data (and version
counter) with the tensor it was made from, as PyTorch's does.
"""

from __future__ import annotations

import weakref

from .._creation import empty
from ..tensor import Tensor, make_tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _alias_into(out: Tensor, data: Tensor, requires_grad: bool) -> Tensor:
    """Fill ``out``'s slots as a detached alias of ``data`` (same array, same versions)."""
    out._data = data._data
    out._grad_fn = None
    out._grad = None
    out._nr = 0
    out._acc = None
    out._extra = None
    if data._vc is None:
        data._vc = [0]
    out._vc = data._vc
    out._requires_grad = False
    if requires_grad:
        out._set_requires_grad(True)  # refuses integer data, as PyTorch
    return out


class Parameter(Tensor):
    """A Tensor that is a module parameter: registered when assigned to a Module attribute.

    Parameters
    ----------
    data : Tensor, optional
        The values (shared, not copied); an empty tensor when omitted.
    requires_grad : bool
        Default True.

    Examples
    --------
    >>> import retrograd as T
    >>> p = T.nn.Parameter(T.zeros(2))
    >>> p
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    # no __slots__: code sets attributes on parameters (PyTorch allows it)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}; "
                "wrap values with retrograd.tensor(...) first"
            )
        return _alias_into(object.__new__(cls), data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # all done in __new__ (Tensor has no __init__ to call)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(make_tensor(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            out._grad = make_tensor(self._grad._data.copy())
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (make_tensor(self._data), self._requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


# ----------------------------------------------------------------------------- Buffer
# PyTorch marks a buffer by setting attributes on the tensor it returns; retrograd's Tensor
# has __slots__, so the marks live here, keyed by id and dropped with the tensor.
_buffer_marks: "weakref.WeakValueDictionary[int, Tensor]" = weakref.WeakValueDictionary()
_buffer_persistent: dict[int, bool] = {}


def _forget(key):
    _buffer_persistent.pop(key, None)


class _BufferMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        # `obj is not None` first: the lookup's default is None, and None is no Buffer
        # (without this, `module.x = None` was taken for a buffer assignment)
        return obj is not None and _buffer_marks.get(id(obj)) is obj


class Buffer(metaclass=_BufferMeta):
    """A tensor that is module state but not a parameter (BatchNorm's running mean...).

    ``module.x = Buffer(t)`` registers ``t`` (detached) as a buffer; ``persistent=False``
    keeps it out of ``state_dict``.  As in PyTorch, the result is a plain Tensor for which
    ``isinstance(t, Buffer)`` is True.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        key = id(t)
        _buffer_marks[key] = t
        _buffer_persistent[key] = bool(persistent)
        weakref.finalize(t, _forget, key)
        return t


def buffer_persistent(t) -> bool:
    """The ``persistent`` flag a :class:`Buffer` was made with."""
    return _buffer_persistent.get(id(t), True)


# ----------------------------------------------------------------------------- lazy kinds
_UNINIT_MESSAGE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes."
)


class UninitializedTensorMixin:
    """What the lazy parameter and buffer share: no shape until ``materialize(shape)``."""

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor ``shape`` (uninitialised values) and make it a plain
        Parameter (or Tensor)."""
        if dtype is None:
            dtype = self.dtype
        self._data = empty(shape, dtype=dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINIT_MESSAGE)

    def size(self, dim=None):
        raise RuntimeError(_UNINIT_MESSAGE)

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (LazyLinear's weight)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _alias_into(object.__new__(cls), empty(0, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self._requires_grad, dtype=self.dtype)
        memo[id(self)] = out
        return out


class _PlainTensor(Tensor):
    """What a materialized UninitializedBuffer becomes (a Tensor; Tensor itself has slots
    and refuses ``__class__`` assignment from a class with a ``__dict__``)."""

    def __new__(cls, *args, **kwargs):  # pragma: no cover - only reached by __class__
        raise TypeError("internal class")


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet."""

    cls_to_become = _PlainTensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        out = _alias_into(object.__new__(cls), empty(0, dtype=dtype), requires_grad)
        out.persistent = persistent
        return out

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def __deepcopy__(self, memo):
        # stays uninitialised, as UninitializedParameter's copy (a deep-copied lazy module
        # must still be able to materialize it)
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self._requires_grad, dtype=self.dtype, persistent=self.persistent)
        memo[id(self)] = out
        return out


def is_lazy(param) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)
