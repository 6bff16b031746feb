"""Install the recorder's observers for the length of one traced call, then remove them.

Nothing here is on the eager hot path: the observers are swapped in only while a trace
runs (the defop callers keep their forward in a closure cell, which is swapped; classes get
wrapped methods) and the originals are put back afterwards, even when the call raises.
Every observer calls the original and returns its result unchanged, so a traced call
computes exactly what an eager one does.
"""

from __future__ import annotations

import sys
import threading
from threading import get_ident
from contextlib import contextmanager

import numpy as np

from ..autograd import engine
from ..autograd.grad_mode import state
from ..ops._apply import Op
from ..tensor import Tensor

_lock = threading.Lock()


class BusyError(RuntimeError):
    """Another thread holds the (process-wide) observers: run eagerly this time."""


_ops_cache: list | None = None
active = None  # the Recorder of the trace running now (one at a time, process-wide)


def _op_sites():
    """(caller function, closure index of its ``forward``, Op) for every defop op, and
    the Op records themselves (``apply_op`` reads ``op.forward``)."""
    global _ops_cache
    if _ops_cache is None or _ops_cache[2] != len(sys.modules):  # (a module imported later)
        sites, ops, seen = [], [], set()
        from ..ops import registry

        candidates = [e.fn for e in registry.entries()]
        candidates += [m for e in registry.entries() for m in e.methods.values()]
        for name, module in list(sys.modules.items()):
            if name.startswith("retrograd.") and module is not None:
                candidates += _with_containers(vars(module).values())
        for value in candidates:
            op = getattr(value, "op", None) if callable(value) else None
            if type(op) is not Op or id(value) in seen:
                continue
            seen.add(id(value))
            if id(op) not in seen:
                seen.add(id(op))
                ops.append(op)
            code = getattr(value, "__code__", None)
            if code is not None and "forward" in code.co_freevars:
                sites.append((value, code.co_freevars.index("forward"), op))
        _ops_cache = (sites, ops, len(sys.modules))
    return _ops_cache[:2]


# Array kernels of ops that build their node themselves instead of through defop (the
# convolution's columns, max-pool's argmax, average pooling's divisors): the callers look
# them up in their module when they run, so swapping the module's name observes them as
# op forwards.  Each computes a fresh result from its arguments only (nothing changed in
# place), so a replay may call it as the eager op does.
_KERNELS = {
    "retrograd.ops.conv": ("_convolution_fwd", "_weight_grad_fwd", "_unfold_fwd", "_fold_fwd"),
    "retrograd.ops.pooling": ("_max_forward", "_divisors"),
}


def _with_containers(values, depth=2):
    """``values`` and what their dicts, tuples and lists hold (ops kept in tables, as
    pooling's ``{2: (avg_pool2d, its adjoint)}``), ``depth`` levels down."""
    out = []
    for v in values:
        out.append(v)
        if depth and type(v) in (dict, tuple, list):
            out += _with_containers(v.values() if type(v) is dict else v, depth - 1)
    return out


def _forward_observer(rec, fn, name):
    def forward(*args, **kwargs):
        if rec.depth or rec.in_backward or get_ident() != rec.thread:
            return fn(*args, **kwargs)
        rec.depth += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            rec.depth -= 1
        if type(result) is not np.ndarray and isinstance(result, np.generic):
            # the caller would wrap it (as_array) into an array this trace cannot name
            result = np.asarray(result)
        rec.forward(fn, name, args, kwargs, result)
        return result

    return forward


def _refusing(rec, original, why):
    def method(self, *args, **kwargs):
        if not rec.depth and not rec.in_backward and get_ident() == rec.thread:
            rec.refuse(why)
        return original(self, *args, **kwargs)

    return method


def _recorded_call(rec, original, name):
    def method(self, *args, **kwargs):
        if rec.depth or rec.in_backward or get_ident() != rec.thread:
            return original(self, *args, **kwargs)
        rec.call(self, name, args, kwargs)
        rec.depth += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            rec.depth -= 1

    return method


def _backward_observer(rec, original):
    def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None,
                     accumulate=True, allow_unused=False):
        if get_ident() != rec.thread:  # another thread's backward: not ours to record
            return original(roots, root_grads, retain_graph, create_graph, inputs,
                            accumulate, allow_unused)
        if retain_graph and not create_graph:
            rec.refuse("retain_graph=True: the graph outlives the call")
        if rec.depth or rec.in_backward:
            return original(roots, root_grads, retain_graph, create_graph, inputs,
                            accumulate, allow_unused)
        if create_graph:
            # the derivatives run on tensors, through ops: their forwards are recorded
            # like the function's own (a second backward then sees the nodes they made)
            rec.graph_backward += 1
            try:
                return original(roots, root_grads, retain_graph, create_graph, inputs,
                                accumulate, allow_unused)
            finally:
                rec.graph_backward -= 1
        rec.in_backward = True
        try:
            return original(roots, root_grads, retain_graph, create_graph, inputs,
                            accumulate, allow_unused)
        finally:
            rec.in_backward = False

    return run_backward


def _classes_defining(base, name):
    out, stack = [], [base]
    while stack:
        cls = stack.pop()
        if name in vars(cls):
            out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


@contextmanager
def observing(rec, optimizers=()):
    """Run the body with ``rec`` observing (see the module docstring)."""
    global active
    from ..nn.module import Module
    from ..optim.optimizer import Optimizer

    rec.thread = get_ident()
    if not _lock.acquire(blocking=False):
        raise BusyError("another thread is tracing")  # the caller runs eagerly instead
    undo = []
    try:
        sites, ops = _op_sites()
        for fn, index, op in sites:
            cell = fn.__closure__[index]
            original = cell.cell_contents
            cell.cell_contents = _forward_observer(rec, original, op.name)
            undo.append(lambda c=cell, o=original: setattr(c, "cell_contents", o))
        for op in ops:
            original = op.forward
            op.forward = _forward_observer(rec, original, op.name)
            undo.append(lambda p=op, o=original: setattr(p, "forward", o))

        for module_name, names in _KERNELS.items():
            module = sys.modules.get(module_name)
            for kname in names if module is not None else ():
                original = getattr(module, kname, None)
                if original is None:  # (renamed: its op is then refused, not broken)
                    continue
                setattr(module, kname, _forward_observer(rec, original, kname.strip("_")))
                undo.append(lambda m=module, n=kname, o=original: setattr(m, n, o))

        def patch(cls, name, value):
            original = vars(cls)[name]
            setattr(cls, name, value)
            undo.append(lambda: setattr(cls, name, original))

        for name in ("__bool__", "item", "__float__", "__int__", "__index__", "tolist",
                     "numpy", "__array__"):
            patch(Tensor, name, _refusing(rec, vars(Tensor)[name],
                                          f"Tensor.{name}() reads a tensor's value in Python "
                                          "(data-dependent control flow)"))
        patch(Tensor, "_bump_version", _refusing(rec, vars(Tensor)["_bump_version"],
                                                 "an in-place change of a tensor"))
        grad_prop = vars(Tensor)["grad"]

        def set_grad(self, value):
            if not rec.depth and not rec.in_backward and get_ident() == rec.thread:
                if value is None:
                    rec.grad_set_none(self)
                else:
                    rec.refuse("assigning a tensor to .grad")
            grad_prop.fset(self, value)

        patch(Tensor, "grad", property(grad_prop.fget, set_grad, grad_prop.fdel,
                                       grad_prop.__doc__))
        from ..optim import lr_scheduler

        stepping = [Optimizer, lr_scheduler.LRScheduler]
        plateau = getattr(lr_scheduler, "ReduceLROnPlateau", None)
        if plateau is not None and not issubclass(plateau, lr_scheduler.LRScheduler):
            stepping.append(plateau)
        for base in stepping:  # replayed as calls: they read and update their own state
            for cls in _classes_defining(base, "step"):
                patch(cls, "step", _recorded_call(rec, vars(cls)["step"], "step"))
        for opt in optimizers:
            # a scheduler wraps its optimizer's step in an instance attribute (which calls
            # the class's step as it was then): observe that wrapper too
            own = vars(opt).get("step")
            if own is not None:
                wrapped = _recorded_call(rec, lambda self, *a, f=own, **k: f(*a, **k), "step")

                def observer(*a, o=opt, w=wrapped, **k):
                    return w(o, *a, **k)

                observer.__dict__.update(vars(own))  # the scheduler's marks
                opt.step = observer
                undo.append(lambda o=opt, f=own: setattr(o, "step", f))
        for base in (Optimizer, Module):
            for cls in _classes_defining(base, "zero_grad"):
                patch(cls, "zero_grad", _recorded_call(rec, vars(cls)["zero_grad"],
                                                       "zero_grad"))
        original_backward = engine.run_backward
        engine.run_backward = _backward_observer(rec, original_backward)
        undo.append(lambda: setattr(engine, "run_backward", original_backward))
        previous = state.tracer
        state.tracer = rec
        undo.append(lambda: setattr(state, "tracer", previous))
        active = rec
        yield rec
    finally:
        active = None
        for fn in reversed(undo):
            fn()
        _lock.release()
