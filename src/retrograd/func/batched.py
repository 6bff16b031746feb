"""BatchedTensor: how vmap batches for real.

Inside ``vmap`` each input mapped over becomes a :class:`BatchedTensor`: a wrapper holding a
*physical* value whose dimension 0 is the batch, plus the vmap *level* it belongs to.  User
code sees the *logical* tensor (the physical one without dimension 0).  An op called on a
BatchedTensor goes to :func:`dispatch`, which finds the op's batching rule (the op
registry's ``Entry.batch_rule``, set from ``batching_rules.RULES``) and runs the op once on the
physical values; ops without a rule run once per sample and are stacked (with a warning).

Nested vmaps nest wrappers: the value of a level-2 BatchedTensor is a level-1 BatchedTensor
(or a Tensor), so the physical tensor holds the outer batch first, then the inner one.  A
rule runs the op on the values with the public (dispatching) functions, so a value that is
itself batched at a lower level is batched again by the same rules.

How calls reach :func:`dispatch` (nothing on the plain-Tensor fast paths):

* methods and operators: BatchedTensor gets every registered Tensor method (below);
* functions: the op registry's public functions check ``registry.batching[0]`` (non-zero
  only while a vmap runs) and the ``defop`` callers check their non-Tensor branches
  (``ops/_apply.py``), both handing the call to ``registry.batched_call`` = :func:`dispatch`.
"""

from __future__ import annotations

import warnings

import numpy as _np

from .. import random as _random
from ..ops import registry
from ..tensor import Size, Tensor

BATCHED = "__retrograd_batched__"


class Level:
    """One running vmap: its level number, batch size and randomness mode."""

    __slots__ = ("level", "size", "randomness", "fname")

    def __init__(self, level, size, randomness, fname):
        self.level = level
        self.size = size
        self.randomness = randomness
        self.fname = fname


#: the running vmaps, outermost first
STACK: list[Level] = []
_counter = [0]


def push_level(size, randomness, fname) -> Level:
    _counter[0] += 1
    lv = Level(_counter[0], size, randomness, fname)
    STACK.append(lv)
    registry.batching[0] = len(STACK)
    return lv


def pop_level(lv) -> None:
    STACK.remove(lv)
    registry.batching[0] = len(STACK)


def level_info(level) -> Level:
    for lv in STACK:
        if lv.level == level:
            return lv
    raise RuntimeError(
        f"vmap: a BatchedTensor of level {level} is used outside the vmap that made it (it "
        "escaped through a closure or a global); return it from the vmapped function instead")


class BatchedTensor:
    """A logical tensor of a vmap: ``value`` holds the batch in dimension 0 (``level``)."""

    __slots__ = ("value", "level")
    __retrograd_batched__ = True
    # NumPy refuses to compute on it (TypeError) rather than treating it as a sequence: an op
    # whose forward meets one among its parameters then hands the call to dispatch
    __array_ufunc__ = None

    def __array__(self, *args, **kwargs):
        raise TypeError("a BatchedTensor (inside vmap) is not an array")

    def __init__(self, value, level: int):
        self.value = value
        self.level = level

    # ----------------------------------------------------------------- metadata (logical)
    @property
    def shape(self) -> Size:
        return Size(self.value.shape[1:])

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self.shape[_norm(dim, self.dim(), "size")]

    def dim(self) -> int:
        return self.value.dim() - 1

    @property
    def ndim(self) -> int:
        return self.dim()

    def numel(self) -> int:
        return Size(self.shape).numel()

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def device(self):
        return self.value.device

    @property
    def requires_grad(self) -> bool:
        return self.value.requires_grad

    @property
    def is_leaf(self) -> bool:
        return self.value.is_leaf

    @property
    def grad_fn(self):
        return self.value.grad_fn

    def is_floating_point(self) -> bool:
        return self.value.is_floating_point()

    def element_size(self) -> int:
        return self.value.element_size()

    def __iter__(self):
        return iter(self.unbind(0))

    def __repr__(self):
        return f"BatchedTensor(lvl={self.level}, bdim=0, value=\n{self.value!r}\n)"

    __hash__ = object.__hash__

    def _data_dependent(self, *_):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() (or bool(), float(), .tolist(), "
            ".numpy()) on a Tensor inside vmap. We don't support vmap over calling .item() on a "
            "Tensor: its value differs per sample. Compute with tensors instead (e.g. "
            "retrograd.where instead of an if on a tensor).")

    item = tolist = numpy = __bool__ = __float__ = __int__ = __index__ = _data_dependent

    def backward(self, *args, **kwargs):
        raise RuntimeError(
            "vmap: backward() inside vmap is not supported: use retrograd.func.grad or "
            "retrograd.func.vjp inside the vmapped function instead")

    def requires_grad_(self, requires_grad=True):
        self.value.requires_grad_(requires_grad)
        return self

    def detach(self):
        return BatchedTensor(self.value.detach(), self.level)

    # Tensor attributes whose registry callable takes its arguments in another order than
    # the op's function: spelled with the op itself, so the op's rule sees its own order
    @property
    def T(self):  # noqa: N802 - PyTorch's name
        return self.permute(*reversed(range(self.dim())))

    @property
    def mT(self):  # noqa: N802
        return self.transpose(-2, -1)

    @property
    def H(self):  # noqa: N802
        return self.T.conj()

    @property
    def mH(self):  # noqa: N802
        return self.mT.conj()

    def __rmatmul__(self, other):
        if isinstance(other, _np.ndarray):
            return NotImplemented
        return registry.entry("matmul").fn(other, self)

    # new tensors made from a BatchedTensor's dtype: the same for every sample (unbatched)
    def new_tensor(self, *args, **kwargs):
        return self.value.new_tensor(*args, **kwargs)

    def new_zeros(self, *args, **kwargs):
        return self.value.new_zeros(*args, **kwargs)

    def new_ones(self, *args, **kwargs):
        return self.value.new_ones(*args, **kwargs)

    def new_empty(self, *args, **kwargs):
        return self.value.new_empty(*args, **kwargs)

    def new_full(self, *args, **kwargs):
        return self.value.new_full(*args, **kwargs)

    def reshape_as(self, other):
        return self.reshape(*other.shape)

    def view_as(self, other):
        return self.view(*other.shape)

    def expand_as(self, other):
        return self.expand(*other.shape)


def _norm(dim, ndim, name="dim"):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim}) (in {name} of a tensor inside vmap)")
    return dim + n if dim < 0 else dim


# --------------------------------------------------------------------------- dispatch


def is_batched(x) -> bool:
    return type(x) is BatchedTensor


def max_level(args, kwargs=None):
    """The highest vmap level among the BatchedTensors of ``args``/``kwargs`` (None: none)."""
    best = None
    for a in args:
        if type(a) is BatchedTensor:
            if best is None or a.level > best:
                best = a.level
        elif type(a) in (list, tuple):
            for b in a:
                if type(b) is BatchedTensor and (best is None or b.level > best):
                    best = b.level
    if kwargs:
        for a in kwargs.values():
            if type(a) is BatchedTensor and (best is None or a.level > best):
                best = a.level
    return best


def dispatch(key, fn, args, kwargs=None):
    """Run ``fn(*args, **kwargs)`` (the op registered as ``key``) with BatchedTensors among
    its arguments: by its batching rule, or once per sample (with a warning)."""
    kwargs = kwargs or {}
    level = max_level(args, kwargs)
    if level is None:
        if fn is None:  # a record's NumPy error with no BatchedTensor involved: the public
            fn = registry.entry(key).fn  # op's own checks say what went wrong
        if _random.on_draw is None:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except _random.DrawPerSampleError:  # a random op, no batched input, randomness='different'
            return _random.per_sample(fn if fn is not None else registry.entry(key).fn, args,
                                      kwargs)
    e = registry._ENTRIES.get(key) or _by_op_name().get(key)
    if fn is None:  # a defop record met a BatchedTensor among its parameters: its public op
        if e is None:
            raise RuntimeError(f"vmap: {key} got a BatchedTensor where it takes a number; "
                               "pass it as a tensor argument of the public function instead")
        fn = e.fn
    rule = None
    if e is not None:
        rule = e.batch_rule  # (set by batching_rules.py)
        if getattr(e.fn, "__wrapped__", None) is fn:
            fn = e.fn  # rules call the op on values that may be batched at a lower level
    IN_RULE[0] += 1
    try:
        if rule is None:
            return fallback(key, fn, args, kwargs, level)
        return rule(fn, args, kwargs, level)
    finally:
        IN_RULE[0] -= 1


#: ``[n]``: how many rules (or fallback loops) are running: a random draw outside any rule
#: under randomness='different' would give every sample the same numbers (vmap.py refuses)
IN_RULE = [0]


_OP_NAMES: dict = {}


def _by_op_name():
    """defop name -> entry, for records whose name is not their key (``special_entr``)."""
    if not _OP_NAMES:
        _OP_NAMES.update({e.op.name: e for e in registry.entries() if e.op is not None})
    return _OP_NAMES


def value_at(x, level):
    """``(value, batched)``: the value of ``x`` at vmap ``level`` (batch in dim 0) or ``x``."""
    if type(x) is BatchedTensor and x.level == level:
        return x.value, True
    return x, False


def wrap(result, level):
    """Wrap an op's physical result(s) (batch in dim 0) as BatchedTensors of ``level``."""
    if isinstance(result, (Tensor, BatchedTensor)):
        return BatchedTensor(result, level)
    if isinstance(result, tuple):
        values = [wrap(r, level) for r in result]
        return type(result)(*values) if hasattr(result, "_fields") else tuple(values)
    if isinstance(result, list):
        return [wrap(r, level) for r in result]
    return result


def materialize(x, level):
    """``x`` as a physical value batched at ``level``: unbatched tensors are expanded."""
    if type(x) is BatchedTensor and x.level == level:
        return x.value
    size = level_info(level).size
    x = x if isinstance(x, (Tensor, BatchedTensor)) else _op("tensor")(x)
    return x.unsqueeze(0).expand(size, *x.shape)


def _op(name):
    """The public (dispatching) function of the registry key ``name``."""
    if name == "tensor":
        from .._creation import tensor
        return tensor
    return registry.entry(name).fn


def _select(x, level, i):
    if type(x) is BatchedTensor and x.level == level:
        return x.value.select(0, i)
    if type(x) in (list, tuple):
        return type(x)(_select(y, level, i) for y in x)
    return x


def fallback(key, fn, args, kwargs, level):
    """No batching rule: run ``fn`` once per sample and stack the results."""
    name = key if isinstance(key, str) else getattr(fn, "__name__", repr(fn))
    warnings.warn(
        f"There is a performance drop because we have not yet implemented the batching rule "
        f"for {name}. retrograd.func.vmap runs it once per sample and stacks the results "
        f"(please file an issue asking for a batching rule for {name}).", UserWarning,
        stacklevel=4)
    size = level_info(level).size
    outs = [fn(*[_select(a, level, i) for a in args],
               **{k: _select(v, level, i) for k, v in kwargs.items()}) for i in range(size)]
    return _stack_results(outs, level, name)


def _stack_results(outs, level, name):
    first = outs[0]
    if isinstance(first, (Tensor, BatchedTensor)):
        return BatchedTensor(_op("stack")(list(outs), 0), level)
    if isinstance(first, (tuple, list)):
        parts = [_stack_results([o[j] for o in outs], level, name) for j in range(len(first))]
        if hasattr(first, "_fields"):
            return type(first)(*parts)
        return type(first)(parts)
    if all(o == first for o in outs):
        return first  # a Python value the same for every sample (a size, a flag)
    raise RuntimeError(f"vmap: {name} returned a Python value that differs between samples "
                       f"({outs[:3]}...); it cannot be batched")


# ------------------------------------------------------------ methods from the registry


def _method(key, fn):
    def method(self, *args, **kwargs):
        return dispatch(key, fn, (self, *args), kwargs)

    method.__name__ = getattr(fn, "__name__", key)
    return method


def _reflected(fn):
    """``array OP batched`` inside an op's forward: NotImplemented, so NumPy's TypeError
    sends the op to dispatch (see the defop callers); other operands go to the op."""

    def method(self, other):
        if isinstance(other, _np.ndarray):
            return NotImplemented
        return fn(self, other)

    method.__name__ = getattr(fn, "__name__", "reflected")
    return method


def _install_methods():
    own = set(vars(BatchedTensor))
    for e in registry.entries():
        for name, fn in e.methods.items():
            if name in own:
                continue
            if isinstance(fn, property):
                getter = _method(e.key, fn.fget)
                setattr(BatchedTensor, name, property(getter))
            elif fn is getattr(e.fn, "__wrapped__", e.fn):
                # the op's public function: it puts every parameter in place, then dispatches
                setattr(BatchedTensor, name, _reflected(e.fn) if name.startswith("__r") else e.fn)
            else:
                m = _method(e.key, fn)
                setattr(BatchedTensor, name, _reflected(m) if name.startswith("__r") else m)


_install_methods()
registry.batched_call = dispatch
