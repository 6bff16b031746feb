"""Record what one eager call of a function does, at the level of raw arrays.

A :class:`Recorder` watches one eager run.  It sees

* every op forward on arrays (the ``forward`` of each ``defop`` record, wrapped while the
  trace is active; see :mod:`._hooks`),
* the backward pass through the engine's tracer protocol (``state.tracer``): the gradient
  each node received, the node's derivative call (``vjp(node, g, saved)`` on arrays), the
  sums of gradients arriving at one node from several paths, and each ``.grad``
  accumulation,
* ``optimizer.step()``, ``optimizer.zero_grad()``, ``module.zero_grad()`` and
  ``tensor.grad = None``: recorded as calls, replayed by calling them again (they work on
  raw arrays in place already).

Each array met is named: the output of an earlier step, an argument's data, a leaf's
``.grad``, or an *unknown* array (a parameter, a constant made inside the function, or a
value computed outside any op).  Two traces of the same call tell unknowns apart (see
``_program.classify``).  Anything the replay could not reproduce (a tensor value read by
Python, hooks, random numbers, double backward, in-place changes of tensors) marks the
trace *refused*, with the reason and the user's line that caused it.
"""

from __future__ import annotations

import os
import linecache
import sys
import tracemalloc

import numpy as np

_ndarray = np.ndarray
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# where an array may be made inside the call and still be a constant: the factories
# (zeros, tensor...), the root gradient (ones) and the engine's zeros for unused outputs.
# Arrays made anywhere else in retrograd (an op's own code between its ops) may be values
# computed from the data, which a replay would repeat stale.
_CONSTANT_SITES = tuple(os.path.join(_PACKAGE, *p) for p in (
    ("_creation.py",), ("autograd", "frontend.py"), ("autograd", "engine.py")))
_NUMPY = os.path.dirname(np.__file__)


def made_where(a):
    """Where array ``a`` was allocated (tracemalloc runs while tracing): None when that
    place only makes constants, ``"before the call"`` when it existed before the trace,
    else ``file:line`` inside retrograd."""
    tb = tracemalloc.get_object_traceback(a)
    if tb is None:
        return "before the call"
    for frame in reversed(tb):  # innermost first
        path = frame.filename
        if path.startswith(_NUMPY):
            continue
        if path.startswith(_CONSTANT_SITES) or not path.startswith(_PACKAGE):
            return None
        return f"{frame.filename}:{frame.lineno}"
    return None


def user_line() -> str:
    """``file:line: code`` of the innermost frame outside retrograd (the user's call)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_PACKAGE):
            break
        frame = frame.f_back
    if frame is None:
        return "<inside retrograd>"
    return _Where(frame.f_code.co_filename, frame.f_lineno)


class _Where(str):
    """``file:line``, with the source line added when it is shown (reading source is slow,
    and most steps' places are never shown)."""

    def __new__(cls, filename, lineno):
        self = super().__new__(cls, f"{filename}:{lineno}")
        self.filename, self.lineno = filename, lineno
        return self

    def __str__(self):
        line = linecache.getline(self.filename, self.lineno).strip()
        return f"{self.filename}:{self.lineno}: {line}"

    def __format__(self, spec):
        return format(str(self), spec)


class UncompilableError(Exception):
    """The trace cannot be replayed faithfully: ``reason`` and ``where`` say why."""

    def __init__(self, reason: str, where: str):
        super().__init__(f"{reason} (at {where})")
        self.reason = reason
        self.where = where


class Ref:
    """A name for an array in the program.

    kind ``"v"``: output ``k`` of step ``k`` (``path`` indexes into a tuple result);
    ``"a"``: the data of argument tensor ``k``; ``"u"``: unknown array ``k``;
    ``"g"``: the ``.grad`` data of leaf ``obj``.
    """

    __slots__ = ("kind", "k", "path", "obj")

    def __init__(self, kind, k=0, path=(), obj=None):
        self.kind = kind
        self.k = k
        self.path = path
        self.obj = obj

    def key(self):
        return (self.kind, self.k, self.path, id(self.obj) if self.obj is not None else None)


class Const:
    """A non-array value a step was called with (an axis, a shape, a scalar...)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Step:
    """One recorded step.  ``kind`` is ``fwd``, ``vjp``, ``sum``, ``acc``, ``call`` or
    ``nograd``; ``fn`` the function (or node/leaf/method); ``args`` templates."""

    __slots__ = ("kind", "fn", "args", "extra", "where")

    def __init__(self, kind, fn, args, extra=None, where=""):
        self.kind = kind
        self.fn = fn
        self.args = args
        self.extra = extra
        self.where = where


class Recorder:
    """The program of one eager call (see the module docstring)."""

    def __init__(self, arg_arrays):
        self.steps: list[Step] = []
        self.known: dict[int, Ref] = {}
        self.keep: list = []  # every array named stays alive: its id is never reused
        self.unknowns: list = []  # (array, copy at first sight, where)
        self.deferred: dict[int, list] = {}  # buffer sums computed by the engine
        self.pending: dict = {}  # (node, nr) -> gradient contributions, in arrival order
        self.depth = 0  # >0 inside a step whose inner work is not recorded
        self.in_backward = False
        self.graph_backward = 0  # >0 inside a backward with create_graph=True
        self.thread = None  # the thread whose work is recorded (others pass through)
        self.per_key = False  # the refusal concerns these guards only (see _compiled)
        self.refusal: UncompilableError | None = None
        self.saved: dict = {}  # node -> the arrays it saved (taken when it becomes ready)
        self.leaves: dict[int, object] = {}  # id(leaf data) -> leaf tensor
        for i, a in enumerate(arg_arrays):
            if id(a) not in self.known:
                self.known[id(a)] = Ref("a", i)
                self.keep.append(a)

    # ------------------------------------------------------------------ refusing
    def refuse(self, reason: str) -> None:
        if self.refusal is None:
            self.refusal = UncompilableError(reason, user_line())

    # ------------------------------------------------------------------ naming arrays
    def resolve(self, a) -> Ref:
        ref = self.known.get(id(a))
        if ref is not None:
            return ref
        parts = self.deferred.pop(id(a), None)
        if parts is not None:
            ref = self._emit_sum(parts)
            self.known[id(a)] = ref
            return ref
        base = a.base
        while base is not None:
            if id(base) in self.known:
                self.refuse("an array view of a traced value was made outside an op (a "
                            "computation compile cannot see)")
                break
            base = getattr(base, "base", None)
        ref = Ref("u", len(self.unknowns))
        self.unknowns.append((a, a.copy(), user_line(), made_where(a)))
        self.known[id(a)] = ref
        self.keep.append(a)
        return ref

    def template(self, obj):
        """``obj`` with every array replaced by its :class:`Ref` (tuples/lists kept)."""
        t = type(obj)
        if t is _ndarray or isinstance(obj, _ndarray):
            return self.resolve(obj)
        if t is tuple or t is list:
            return t(self.template(x) for x in obj)
        if t is dict:
            if any(isinstance(v, (_ndarray, tuple, list, dict)) for v in obj.values()):
                self.refuse("an op was called with a dict holding arrays")
            return Const(obj)
        if hasattr(obj, "_data") and hasattr(obj, "_grad_fn"):
            self.refuse("a tensor reached an array-level function")
        return Const(obj)

    def register(self, result, k, path=()):
        t = type(result)
        if t is _ndarray or isinstance(result, _ndarray):
            if id(result) not in self.known:
                self.known[id(result)] = Ref("v", k, path)
                self.keep.append(result)
        elif t is tuple or t is list:
            for i, x in enumerate(result):
                self.register(x, k, path + (i,))

    def add(self, step: Step) -> int:
        self.steps.append(step)
        return len(self.steps) - 1

    # ------------------------------------------------------------------ forward
    def forward(self, fn, name, args, kwargs, result):
        """An op forward ran on arrays: record it."""
        if name in DATA_DEPENDENT_SHAPES:
            self.refuse(f"{name}() gives a shape that depends on the values")
        kw = {key: self.template(v) for key, v in kwargs.items()}
        k = self.add(Step("fwd", fn, self.template(args), kw, user_line()))
        self.register(result, k)

    # ------------------------------------------------------------------ engine protocol
    def root_grad(self, i, out, given, grad):
        node = out._grad_fn
        if node is None:
            self.refuse("backward() of a leaf tensor")
            return
        g = grad if isinstance(grad, _ndarray) else grad._data
        self.keep.append(g)
        self.pending.setdefault((node, out._nr), []).append((g, None))

    def node_ready(self, node, g):
        from ..autograd.engine import unpack_saved
        from ..autograd.function import FunctionCtx
        from ..autograd.graph import AccumulateGrad

        if isinstance(node, FunctionCtx):
            self.refuse(f"a custom autograd.Function ({node.name()})")
        if node.hooks is not None and (node.hooks.pre or node.hooks.post or any(
                node.hooks.tensor.values()) or node.hooks.retain):
            self.refuse(f"a hook (or retain_grad) on {node.name()}")
        if self.graph_backward:
            # create_graph: the derivative's ops (and the engine's sums and casts of tensor
            # gradients) are recorded as forwards; nothing to note here
            self.pending.clear()
            return
        multi = node.multi_output
        grads = g if multi else [g]
        for nr, x in enumerate(grads):
            parts = self.pending.pop((node, nr), None)
            if x is None or not isinstance(x, _ndarray):
                continue
            if id(x) in self.known:
                continue
            self.keep.append(x)
            if parts:
                self.deferred[id(x)] = parts
        if type(node) is not AccumulateGrad:
            try:
                self.saved[node] = list(unpack_saved(node, False)) if node.saved else []
            except Exception:  # noqa: BLE001 - the engine raises its own error next
                self.saved[node] = []

    def node_done(self, node, g, grads):
        if self.graph_backward:
            return
        if any(x is not None and not isinstance(x, _ndarray) for x in grads):
            self.refuse("create_graph=True (double backward) is not compiled")
            return
        if node.saved:
            self.refuse("retain_graph=True: the graph outlives the call")
        saved = self.saved.pop(node, [])
        params = self.template(node.params) if _has_array(node.params) else None
        k = self.add(Step("vjp", node, (self.template(g), self.template(tuple(saved))),
                          params, user_line()))
        self.register(tuple(grads), k)
        nrs = node.next_nr
        for i, child in enumerate(node.next):
            gi = grads[i] if i < len(grads) else None
            if child is None or gi is None:
                continue
            nr = nrs[i] if nrs else 0
            shape, dtype = ((child.out_shape[nr], child.out_dtype[nr]) if child.multi_output
                            else (child.out_shape, child.out_dtype))
            # the engine's conform() (sum out broadcast dims, cast), when it changes anything
            spec = None if gi.shape == shape and gi.dtype == dtype else (
                shape, dtype, node, i, gi.shape, gi.dtype)
            self.pending.setdefault((child, nr), []).append((gi, spec))

    def _emit_sum(self, parts) -> Ref:
        args = tuple((self.resolve(g), spec) for g, spec in parts)
        k = self.add(Step("sum", None, args, None, user_line()))
        return Ref("v", k)

    def accumulate(self, variable, g):
        if self.graph_backward:
            self.refuse("backward(create_graph=True) into .grad is not compiled (use "
                        "autograd.grad(..., create_graph=True))")
        extra = variable._extra
        if extra is not None and (extra.hooks or extra.post_accumulate_hooks):
            self.refuse("a hook on a leaf tensor")
        self.add(Step("acc", variable, self.template(g), None, user_line()))
        self.depth += 1

    def accumulated(self, variable):
        self.depth -= 1
        self.leaves[id(variable._data)] = variable
        gd = variable._grad._data
        self.known[id(gd)] = Ref("g", obj=variable)
        self.keep.append(gd)

    def hook(self, what, fn, given, result):
        self.refuse(f"a {what}")

    def freed(self, node):
        pass

    # ------------------------------------------------------------------ Python calls
    def call(self, obj, name, args, kwargs):
        if any(_has_tensor(a) for a in args) or any(_has_tensor(a) for a in kwargs.values()):
            self.refuse(f"{type(obj).__name__}.{name}() called with tensors or a closure")
        if name == "step" and kwargs.get("closure") is not None or (args and callable(args[0])):
            self.refuse("optimizer.step(closure) is not compiled")
        self.add(Step("call", obj, (name, args, kwargs), None, user_line()))

    def grad_set_none(self, tensor):
        self.add(Step("nograd", tensor, (), None, user_line()))


# ops whose output shape depends on the values: a replay would reuse stale shapes
DATA_DEPENDENT_SHAPES = frozenset({
    "nonzero", "masked_select", "unique", "unique_consecutive", "argwhere", "bincount",
    "histc", "histogram", "repeat_interleave", "nonzero_static",
})


def _has_array(obj) -> bool:
    if isinstance(obj, _ndarray):
        return True
    if type(obj) is tuple or type(obj) is list:
        return any(_has_array(x) for x in obj)
    return False


def _has_tensor(obj) -> bool:
    if hasattr(obj, "_data") and hasattr(obj, "_grad_fn"):
        return True
    if callable(obj):
        return True
    if type(obj) is tuple or type(obj) is list:
        return any(_has_tensor(x) for x in obj)
    return False
