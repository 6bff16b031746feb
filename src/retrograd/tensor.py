"""Tensor: a NumPy (or CuPy) array plus the autograd metadata PyTorch keeps.

The class is thin on purpose: data access, autograd attributes and Python protocols live
here; every computation is an op from ``retrograd.ops``, bound as a method when the
package is assembled (``retrograd/_assembly.py``, from the op registry).  This module
imports nothing above itself: what it needs from above (creation functions, ``backward``)
it finds in :data:`above`, filled in by the assembly.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import dtypes
from .autograd.grad_mode import inference_blocks as _inference_blocks
from .autograd.grad_mode import state as _grad_state
from .autograd import graph as _graph
from .autograd.graph import NO_EDGE, InferenceVersion, check_inplace_allowed

__all__ = ["Tensor", "Size", "make_tensor", "is_tensor", "is_floating_point", "numel"]

_new = object.__new__
_tuple_new = tuple.__new__


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``retrograd.Size([2, 3])``.

    Slicing, ``+`` and ``*`` give a Size again, as ``torch.Size`` does.

    Examples
    --------
    >>> import retrograd as T
    >>> T.zeros(2, 3).shape[1:] + (4,)
    retrograd.Size([3, 4])
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for i, s in enumerate(sizes):
            if not hasattr(s, "__index__"):
                raise TypeError(
                    f"retrograd.Size() takes an iterable of 'int' (item {i} is "
                    f"'{type(s).__name__}')"
                )
        return tuple.__new__(cls, (s.__index__() for s in sizes))

    def __repr__(self) -> str:
        return f"retrograd.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        out = tuple.__getitem__(self, index)
        return Size(out) if isinstance(index, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def make_tensor(data, grad_fn=None):
    """Wrap an array as a Tensor without copying or checking (the ops' fast path)."""
    t = _new(Tensor)
    t._data = data
    t._grad_fn = grad_fn
    t._requires_grad = grad_fn is not None
    t._grad = None
    # made under inference_mode: an inference tensor (its own version counter marks it)
    t._vc = InferenceVersion((1,)) if _inference_blocks and _grad_state.inference else None
    t._nr = 0
    t._acc = None
    t._extra = None
    return t


_graph.wrap_array = make_tensor  # for grad_fn._saved_result (the graph layer sits below)


#: dtype name -> the legacy class name that ``Tensor.type()`` reports
_LEGACY_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor",
}


class _Extra:
    """Rarely used per-tensor state, allocated on first use to keep tensors small."""

    __slots__ = ("hooks", "retains_grad", "name", "post_accumulate_hooks", "fw_grad",
                 "hook_home")

    def __init__(self):
        self.hooks = {}
        # (node, output nr) a non-leaf's first hook went to: PyTorch's ``_backward_hooks``
        # dict, which its later hooks join until an in-place op rebases the tensor's history
        self.hook_home = None
        self.retains_grad = False
        self.name = None
        self.post_accumulate_hooks = None  # {id: fn(tensor)}, leaves only
        self.fw_grad = None  # (level, tangent): forward AD (autograd/forward_state.py)


def contiguous_strides(shape) -> tuple:
    """PyTorch's strides of a contiguous tensor of ``shape`` (a size 0 steps as size 1)."""
    steps = []
    step = 1
    for n in reversed(shape):
        steps.append(step)
        step *= max(n, 1)
    return tuple(reversed(steps))


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Create tensors with ``retrograd.tensor(data)``, ``retrograd.zeros(...)`` and friends.
    With ``requires_grad=True`` every op on the tensor is recorded, and ``backward()``
    computes gradients into the ``.grad`` of the leaves.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = ("_data", "_grad_fn", "_requires_grad", "_grad", "_vc", "_nr", "_acc",
                 "_extra", "__weakref__")
    # NumPy must hand binary operators with an array on the left to our reflected methods.
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        # ``retrograd.Tensor(2, 3)`` / ``Tensor([1, 2])`` as the legacy constructor does.
        return above.legacy_new(cls, dtypes.get_default_dtype(), args, kwargs)

    # ------------------------------------------------------------------ data access
    @property
    def shape(self) -> Size:
        """The size of each dimension, as a :class:`Size` (a tuple)."""
        return _tuple_new(Size, self._data.shape)  # NumPy's shape is valid: skip the checks

    def size(self, dim: int | None = None):
        """The shape as a :class:`Size`, or one dimension's length."""
        if dim is None:
            return _tuple_new(Size, self._data.shape)
        if self._data.ndim == 0:
            # PyTorch: a 0-d tensor has no size to ask for, not even size(0) or size(-1).
            raise IndexError(
                f"Dimension specified as {dim} but tensor has no dimensions; a 0-d tensor "
                "has no sizes (use .shape, which is retrograd.Size([]))"
            )
        return self._data.shape[self._check_dim(dim)]

    def _check_dim(self, dim: int) -> int:
        ndim = self._data.ndim
        lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
        if not lo <= dim <= hi:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
                f"{dim}) for a tensor of shape {list(self._data.shape)}"
            )
        return dim % ndim if ndim else 0

    def dim(self) -> int:
        """The number of dimensions (0 for a scalar tensor)."""
        return self._data.ndim

    @property
    def ndim(self) -> int:
        """The number of dimensions, as ``dim()``."""
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        """The number of elements (the product of the sizes)."""
        return self._data.size

    nelement = numel

    @property
    def dtype(self) -> dtypes.dtype:
        """The element type (``retrograd.float32``...)."""
        return dtypes.FROM_NUMPY[self._data.dtype]

    @property
    def device(self):
        """Where the data lives: ``device(type='cpu')`` or a CUDA device."""
        from .backend import device_of

        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        """Whether the data lives on a CUDA device."""
        return self.device.type == "cuda"

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating type (only those can require grad)."""
        return self._data.dtype.kind == "f"

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of all elements."""
        return self._data.nbytes

    def is_complex(self) -> bool:
        """Always False: retrograd has no complex dtypes."""
        return False  # retrograd has no complex dtypes

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements are laid out in row-major order without gaps (or in
        ``memory_format``'s order: channels_last, NHWC, for a 4-d tensor; channels_last_3d,
        NDHWC, for a 5-d one; size-1 dims' strides do not count, as PyTorch's)."""
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        from .memory_formats import channels_last, channels_last_3d

        data = self._data
        order = {channels_last: (4, [1, 3, 2, 0]),
                 channels_last_3d: (5, [1, 4, 3, 2, 0])}.get(memory_format)
        if order is None:  # contiguous_format (PyTorch refuses preserve_format here)
            return bool(data.flags.c_contiguous)
        if data.ndim != order[0]:
            return False
        expected = data.itemsize
        for d in order[1]:
            if data.shape[d] != 1:
                if data.strides[d] != expected:
                    return False
                expected *= data.shape[d]
        return True

    def stride(self, dim: int | None = None):
        """Steps in elements (not bytes, unlike NumPy) between neighbours along each dim.

        An empty tensor reports PyTorch's contiguous strides (``zeros(0, 3)``: ``(3, 1)``,
        a dim of size 0 counting as 1): NumPy gives every freshly made empty array all-zero
        strides, which PyTorch never reports.  (An empty view keeps the strides NumPy
        derived from its base, as PyTorch's view does.)"""
        data = self._data
        strides = data.strides
        if data.size == 0 and not any(strides):
            steps = contiguous_strides(data.shape)
        else:
            steps = tuple(st // data.itemsize for st in strides)
        if dim is None:
            return steps
        return steps[self._check_dim(dim)]

    def data_ptr(self) -> int:
        """The address of the first element (equal for tensors that share memory)."""
        data = self._data
        if type(data) is np.ndarray:
            return data.__array_interface__["data"][0]
        return data.data.ptr  # CuPy

    def get_device(self) -> int:
        """-1 for CPU tensors, else the CUDA device index (as PyTorch)."""
        dev = self.device
        return -1 if dev.type == "cpu" else (dev.index or 0)

    def char(self) -> "Tensor":
        """This tensor as int8 (``retrograd.CharTensor``)."""
        return self.to(dtypes.int8)

    def cpu(self) -> "Tensor":
        """This tensor on the CPU (itself if it is there already)."""
        return self.to("cpu")

    def cuda(self, device=None) -> "Tensor":
        """A copy on a CUDA device (needs CuPy)."""
        return self.to("cuda" if device is None else f"cuda:{int(device)}")

    def type(self, dtype=None):
        """``t.type()`` names the legacy class (``'retrograd.FloatTensor'``); ``t.type(d)``
        converts to dtype ``d`` (a dtype or such a name)."""
        if dtype is None:
            return f"retrograd.{_LEGACY_NAMES[self.dtype.name]}"
        if isinstance(dtype, str):
            name = dtype.removeprefix("torch.").removeprefix("retrograd.")
            by_class = {v: k for k, v in _LEGACY_NAMES.items()}
            if name not in by_class:
                raise ValueError(
                    f"invalid type: {dtype!r}; use e.g. 'retrograd.DoubleTensor' or a dtype"
                )
            dtype = dtypes.to_dtype(by_class[name])
        elif hasattr(dtype, "dtype") and not isinstance(dtype, dtypes.dtype):
            dtype = dtype.dtype  # a legacy class such as retrograd.DoubleTensor
        return self.to(dtype)

    # ------------------------------------------------------------------ new_* (same dtype)
    def _new_kwargs(self, dtype):
        return self.dtype if dtype is None else dtype

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> "Tensor":
        """A copy of ``data`` with this tensor's dtype (unless ``dtype`` is given)."""
        return above.tensor(data, dtype=self._new_kwargs(dtype), requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> "Tensor":
        """Zeros of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
        return above.zeros(*size, dtype=self._new_kwargs(dtype), requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> "Tensor":
        """Ones of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
        return above.ones(*size, dtype=self._new_kwargs(dtype), requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> "Tensor":
        """An uninitialised tensor of ``size`` with this tensor's dtype."""
        return above.empty(*size, dtype=self._new_kwargs(dtype), requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None,
                 requires_grad=False) -> "Tensor":
        """``fill_value`` everywhere, with this tensor's dtype (unless ``dtype`` is given)."""
        return above.full(size, fill_value, dtype=self._new_kwargs(dtype),
                    requires_grad=requires_grad)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar "
                f"(shape {list(self._data.shape)}); item() needs exactly one element: index "
                "it (x[0]) or reduce it (x.sum()) first"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists of numbers; a 0-d tensor gives a number."""
        return self._data.tolist()

    def numpy(self, *, force: bool = False):
        """The underlying NumPy array (shared memory, as PyTorch)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        from .backend import to_numpy

        return to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        """NumPy's view of the data: ``np.asarray(t)`` shares memory, ``np.array(t)`` copies.

        As ``numpy()``, it refuses a tensor that requires grad (detach it first).
        """
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                f"instead (the tensor has shape {list(self._data.shape)})."
            )
        from .backend import to_numpy

        arr = to_numpy(self._data)
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)  # a new array either way
        if copy:
            return arr.copy()
        return arr

    @property
    def data(self) -> "Tensor":
        """A tensor sharing this one's memory, detached, whose changes autograd does not see."""
        return make_tensor(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        old, self._data = self._data, value._data
        # as PyTorch's set_data: an AccumulateGrad made for the old dtype/shape (kept alive by
        # an older graph) would cast new gradients back to it, so the leaf gets a fresh one
        if (self._acc is not None and self._acc is not NO_EDGE
                and (old.dtype != value._data.dtype or old.shape != value._data.shape)):
            self._acc = None

    # ------------------------------------------------------------------ autograd attributes
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded for backward."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._set_requires_grad(flag)

    def _set_requires_grad(self, flag: bool) -> None:
        flag = bool(flag)
        if self._grad_fn is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach()."
                )
            return
        if flag and self._data.dtype.kind != "f":
            raise RuntimeError(
                f"only Tensors of floating point dtype can require gradients (this tensor is "
                f"{self.dtype}); convert it first, e.g. x.float().requires_grad_()"
            )
        if flag and type(self._vc) is InferenceVersion and not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if self._acc is NO_EDGE:
            return  # a view made under no_grad: it requires grad as its base does (PyTorch)
        self._requires_grad = flag
        vc = self._vc
        if flag and vc is not None and len(vc) > 1:
            # PyTorch: the views taken of this tensor before now require grad too, as leaves
            # whose gradient goes nowhere (their requires_grad is their base's)
            group = vc[1].group_of(self)
            if group is not None and group.base() is self:
                for v in group.views:
                    # (a view made to require grad itself stays a leaf of its own, whose
                    # .grad backward fills: seed 9524479)
                    if v is not self and v._grad_fn is None and v._data.dtype.kind == "f" \
                            and not above.regenerate_view(self, v) and not v._requires_grad:
                        v._requires_grad = True
                        v._acc = NO_EDGE

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place and return the tensor (floating leaves only)."""
        self._set_requires_grad(requires_grad)
        return self

    @property
    def grad_fn(self):
        """The node that made this tensor (``MulBackward0``...), None for a leaf."""
        fn = self._grad_fn
        if getattr(fn, "refused", False):  # a view PyTorch won't re-derive (ops/changed_views.py)
            fn.vjp(fn, None, None)  # raises, explaining why
        if adopted_views:  # reading it re-derives the view in PyTorch (ops/changed_views.py)
            settle_adopted(self)
        return fn

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor was made by a recorded op (then it has a grad_fn)."""
        fn = self._grad_fn
        if fn is not None and getattr(fn, "refused", False):  # PyTorch reads grad_fn here
            fn.vjp(fn, None, None)  # raises, explaining why
        if adopted_views:
            settle_adopted(self)
        return fn is None

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (leaves, and non-leaves after
        ``retain_grad()``); None until then."""
        # PyTorch warns only while a non-leaf's .grad is unset (an assigned one is returned)
        if self._grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the "
                    "gradient and the tensor are the same size"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype {value.dtype} to a tensor "
                    f"with dtype {self.dtype}. The gradient must match the tensor's dtype; "
                    f"convert it first with grad.to({self.dtype})"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def _version(self) -> int:
        if type(self._vc) is InferenceVersion:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0] if self._vc is not None else 0

    def is_inference(self) -> bool:
        """True for a tensor made under ``inference_mode()`` (or a view of one)."""
        return type(self._vc) is InferenceVersion

    def _bump_version(self) -> None:
        if type(self._vc) is InferenceVersion:
            check_inplace_allowed(self._vc)
        if self._vc is None:
            self._vc = [1]
        else:
            self._vc[0] += 1

    def _extra_state(self) -> _Extra:
        extra = self._extra
        if extra is None:
            from .autograd.graph import create_once

            extra = create_once(self, "_extra", _Extra)  # threads registering at once
        return extra

    @property
    def retains_grad(self) -> bool:
        """Whether ``retain_grad()`` was called on this non-leaf tensor."""
        return self._extra is not None and self._extra.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return  # leaves keep their gradient anyway
        if adopted_views and still_adopted(self):
            # a view re-derived from its base since it was taken as a leaf: PyTorch has not
            # re-derived it until its grad_fn is read, so it is a leaf there (seed 9545962)
            return
        if getattr(self._grad_fn, "refused", False):  # PyTorch reads grad_fn here
            self._grad_fn.vjp(self._grad_fn, None, None)  # raises, explaining why
        extra = self._extra_state()  # (PyTorch reads no grad_fn here: a pending move waits)
        if extra.retains_grad:
            return
        extra.retains_grad = True
        import weakref

        self._grad_fn._hook_table().retain[self._nr] = weakref.ref(self)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one.

        Returns a handle whose ``remove()`` unregisters the hook.
        """
        if not self._requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient; "
                "call .requires_grad_() on the leaf first"
            )
        from .autograd.graph import add_hook

        if adopted_views:  # (PyTorch's register_hook reads grad_fn: a pending retain moves)
            settle_pending_retain(self)
        extra = self._extra_state()
        if self._grad_fn is None:
            return add_hook(extra.hooks, hook)
        # PyTorch registers a tensor's hook dict on the grad_fn it has at its first hook;
        # an in-place op that rebases the history (graph.move_retain_grad) starts a new
        # dict, an in-place view op (unsqueeze_, t_...) does not, so a hook registered
        # after one still sees the gradient of the old value (seed 15005694)
        home = extra.hook_home
        if home is None:
            home = extra.hook_home = (self._grad_fn, self._nr)
        table = home[0]._hook_table().tensor.setdefault(home[1], {})
        return add_hook(table, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` on a leaf after backward has added into its ``.grad``.

        Returns a handle whose ``remove()`` unregisters the hook.
        """
        if not self._requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient; "
                "call .requires_grad_() on the leaf first"
            )
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors (this "
                f"one comes from {self._grad_fn.name()}); register it on the leaf, or use "
                "register_hook() to see this tensor's gradient"
            )
        from .autograd.graph import add_hook, create_once

        return add_hook(create_once(self._extra_state(), "post_accumulate_hooks", dict), hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None,
                 **legacy):
        """Compute the gradient of this tensor w.r.t. the graph leaves into their ``.grad``.

        ``gradient`` weights the outputs (a vector-Jacobian product); it may be omitted for
        a one-element tensor, and (retrograd extension, as the seed post relied on) any
        gradient whose shape broadcasts to this tensor's shape is broadcast.  The legacy
        keywords ``grad_variables=`` and ``retain_variables=`` are accepted with a warning.
        """
        above.backward(self, gradient, retain_graph, create_graph, inputs=inputs, **legacy)

    def detach(self) -> "Tensor":
        """A new tensor sharing data (and version counter) with this one, outside the graph."""
        out = make_tensor(self._data)
        if self._vc is None:
            self._vc = [0]
        out._vc = self._vc
        return out

    def detach_(self) -> "Tensor":
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        vc = self._vc
        # (by identity: ``in`` on a WeakSet would compare tensors with ==)
        if vc is not None and len(vc) > 1 and any(v is self for v in getattr(vc[1], "views", ())):
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead (this tensor is a view "
                f"of shape {list(self._data.shape)} into another tensor's memory)."
            )
        self._grad_fn = None
        self._requires_grad = False
        if self._extra is not None:  # and out of forward AD: its tangent goes, as PyTorch's
            self._extra.fw_grad = None
            self._extra.hook_home = None
        return self

    def __repr__(self) -> str:
        from ._formatting import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    # ------------------------------------------------------------------ Python protocols
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        # as PyTorch: the rows are unbind(0)'s views (grad_fn UnbindBackward0)
        return iter(above.unbind(self, 0))

    def _one_value(self, kind: str):
        if self._data.size != 1:
            # PyTorch raises ValueError here (but RuntimeError from item() and bool()).
            raise ValueError(
                f"only one element tensors can be converted to Python scalars ({kind} of a "
                f"Tensor of shape {list(self._data.shape)} with {self._data.size} elements); "
                "reduce it first, e.g. with .sum() or .mean(), or index one element"
            )
        return self._data.reshape(()).item()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            how_many = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(
                f"Boolean value of Tensor with {how_many} is ambiguous "
                f"(shape {list(self._data.shape)}); use .any() or .all(), or compare "
                ".numel() for emptiness"
            )
        return bool(self._data.reshape(()).item())

    def __float__(self) -> float:
        if self._requires_grad:
            # PyTorch 2.13 warns here (only for float(), not int()/bool()/item())
            warnings.warn(
                "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                "behavior.\nConsider using tensor.detach() first.",
                UserWarning,
                stacklevel=2,
            )
        return float(self._one_value("float()"))

    def __int__(self) -> int:
        return int(self._one_value("int()"))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()).item())

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        # ``f"{loss:.4f}"`` works on 0-d tensors, as in PyTorch
        if self._data.ndim == 0:
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)

    def __contains__(self, element) -> bool:
        import numbers

        if isinstance(element, (Tensor, numbers.Number)):
            return bool((self == element).any().item())
        raise RuntimeError(
            "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
            f"{type(element)}."
        )

    def __reduce_ex__(self, protocol):
        from .backend import to_numpy

        return (above.rebuild, (np.array(to_numpy(self._data)), self._requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment; detach() it first"
            )
        out = make_tensor(self._data.copy())
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = make_tensor(self._grad._data.copy())
        memo[id(self)] = out
        return out



class _Above:
    """The functions of the layers above tensor.py that a few methods call (``new_zeros``,
    ``backward``, ``iter()``, the legacy constructor, pickling).  The package's assembly
    (``retrograd/_assembly.py``) fills them in; importing them here would make a cycle."""

    __slots__ = ("legacy_new", "tensor", "zeros", "ones", "empty", "full", "rebuild",
                 "backward", "unbind", "regenerate_view")


above = _Above()

# id -> weak reference of the views ops/changed_views.py's rebase_views "adopted" (see _adopt there)
adopted_views: dict = {}


class NotLeafRef(weakref.ref):
    """An ``adopted_views`` entry of a view PyTorch does not count as a leaf (see _adopt)."""

    __slots__ = ()


def still_adopted(t) -> bool:
    """Whether ``t`` is an adopted view whose grad_fn PyTorch has not re-derived yet.

    PyTorch re-derives it when its grad_fn is read: by ``grad_fn``/``is_leaf``, by an op
    that records a graph on it (collecting its inputs' edges: ops/_apply.py's recording
    paths and custom Functions), or by an op that raises after its autograd wrapper has
    collected them (the callers' error paths: :func:`forget_adopted`).  Each of these drops
    the view's entry, so no reference count is read.
    """
    ref = adopted_views.get(id(t))
    if ref is None or isinstance(ref, NotLeafRef) or ref() is not t:
        return False
    if t._grad_fn is None:  # (no longer a view of the base's graph)
        settle_adopted(t)
        return False
    return True


class PendingRetainRef(NotLeafRef):
    """An ``adopted_views`` entry of a view that retains its grad and was re-derived from
    its base (another view of it changed in place): PyTorch regenerates such a view's
    grad_fn only when it reads it, and only then moves the retain_grad hook to the new node
    (update_tensor_hooks_on_new_gradfn), so a backward before that gives ``.grad`` the
    gradient of the old node (seed 20412810).  ``old``: (old node, output number)."""

    __slots__ = ("old",)


class PendingNodeRef(NotLeafRef):
    """An ``adopted_views`` entry of a view re-derived from its base (its memory changed in
    place since it was taken) that is no leaf to PyTorch either: PyTorch regenerates its
    grad_fn only when it reads it, so the node is as new as that read (see
    :func:`settle_adopted`)."""

    __slots__ = ()


def settle_adopted(t) -> None:
    """PyTorch reads ``t``'s grad_fn: drop its ``adopted_views`` entry, and move a pending
    retain_grad (:class:`PendingRetainRef`) from the old node to ``t``'s grad_fn.

    Every view with an entry was re-derived from its base by ops/changed_views.py when its
    memory changed; PyTorch makes that node only now, at the first read of the view's
    grad_fn, so it takes its sequence number now: among the nodes ready in backward, the
    engine runs the most recently created first, which decides the order of hooks (seed
    20900268: a view zeroed under no_grad, read by the loss after another leaf's op)."""
    ref = adopted_views.pop(id(t), None)
    if ref is None or ref() is not t:
        return
    fn = t._grad_fn
    if fn is not None and not getattr(fn, "refused", False):
        fn.seq = _graph.next_sequence_nr()
    if ref.__class__ is not PendingRetainRef:
        return
    old_fn, old_nr = ref.old
    if old_fn.hooks is not None:
        old_fn.hooks.retain.pop(old_nr, None)
    if t._grad_fn is not None and t.retains_grad:
        t._grad_fn._hook_table().retain[t._nr] = weakref.ref(t)


def settle_pending_retain(t) -> None:
    """:func:`settle_adopted` for a :class:`PendingRetainRef` or :class:`PendingNodeRef`
    entry only (reads of grad_fn that leave an adopted leaf view adopted)."""
    if adopted_views.get(id(t)).__class__ in (PendingRetainRef, PendingNodeRef):
        settle_adopted(t)


def rederive_view(t, fn) -> None:
    """An op records a graph on ``t`` (whose grad_fn ``fn`` is not None) while some view is
    adopted: PyTorch reads ``t``'s grad_fn there (its autograd wrapper collects the inputs'
    edges), which re-derives an adopted view (its entry goes) or raises for a view it
    refuses to re-derive (made under no_grad, or an output of split/unbind, whose base
    changed in place: ops/changed_views.py registers those as adopted too, so the recording paths
    pay one dict read while no view is adopted)."""
    if getattr(fn, "refused", False):
        fn.vjp(fn, None, None)  # raises, explaining why (the entry stays)
    settle_adopted(t)


def forget_adopted(tensors) -> None:
    """An op that records a graph failed after PyTorch's autograd wrapper read its inputs'
    grad_fn (before the kernel's own checks): those adopted views are re-derived there (or
    refused: :func:`rederive_view`)."""
    if adopted_views and _grad_state.enabled:
        for t in tensors:
            if isinstance(t, Tensor) and t._requires_grad and t._grad_fn is not None:
                rederive_view(t, t._grad_fn)


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a retrograd Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:  # noqa: A002 - PyTorch's name
    """Whether ``input``'s dtype is a floating-point type."""
    if not isinstance(input, Tensor):
        raise TypeError("is_floating_point(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return input.is_floating_point()


def numel(input) -> int:  # noqa: A002 - PyTorch's name
    """The number of elements of ``input``."""
    return input.numel()
