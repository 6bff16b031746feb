"""``retrograd.compile``: guards, the trace cache, and the eager fallback."""

from __future__ import annotations

import functools
import tracemalloc
import warnings

from ..autograd.grad_mode import state
from ..dtypes import get_default_dtype
from ..random import default_generator
from ..tensor import Tensor
from . import _hooks
from ._program import RETRACE, build
from ._trace import Const, Recorder, UncompilableError

MAX_TRACES = 8  # guard combinations kept per function (then: eager, with a warning)


def _spec(obj, tensors):
    """The guard of one argument; tensors are collected (their data is the input)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return (obj._data.shape, obj._data.dtype, obj._requires_grad)
    t = type(obj)
    if t is tuple or t is list:
        return (t, tuple(_spec(x, tensors) for x in obj))
    if t is dict:
        return (t, tuple((k, _spec(v, tensors)) for k, v in obj.items()))
    if obj is None or t in (int, float, bool, str, complex):
        return (t, obj)
    return (t, id(obj))


def _aliasing(tensors):
    """None when every argument tensor is a different object, else which repeat which (the
    trace names an array once: ``f(x, x)`` and ``f(x, y)`` are different programs)."""
    ids = [id(t) for t in tensors]
    if len(set(ids)) == len(ids):
        return None
    return tuple(ids.index(i) for i in ids)


def _output_template(rec, value, arg_tensors, backward_ran):
    """How the replay rebuilds the return value (see ``_program._Writer.output``)."""
    if isinstance(value, Tensor):
        if any(value is t for t in arg_tensors):
            return ("tensor", value)
        g = rec.known.get(id(value._data))
        if g is not None and g.kind == "g" and g.obj._grad is value:
            return ("grad", g.obj)
        if value._grad_fn is not None and not backward_ran:
            rec.per_key = rec.refusal is None
            rec.refuse("the function returns a tensor that requires grad: its graph would "
                       "be lost (compile the whole step, backward included, or call it "
                       "under no_grad)")
        if value._grad_fn is None and value._requires_grad:
            return ("tensor", value)  # a leaf (a parameter): the same object
        return ("new", rec.resolve(value._data))
    t = type(value)
    if t is tuple or t is list:
        return ("seq", t, [_output_template(rec, x, arg_tensors, backward_ran) for x in value])
    if t is dict:
        return ("dict", [(k, _output_template(rec, v, arg_tensors, backward_ran))
                         for k, v in value.items()])
    if value is None or t in (int, float, bool, str):
        return ("const", value)
    rec.refuse(f"the function returns a {t.__name__}, which compile cannot rebuild")
    return ("const", Const(value))


_SCALARS = (int, float, bool, str, complex, type(None))


def _python_reads(fn):
    """The closure cells and global names ``fn`` reads directly: their scalar values (and
    the identity of tensors there) join the guard, so rebinding one retraces."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return (), {}, ()
    g = fn.__globals__
    return tuple(fn.__closure__ or ()), g, tuple(n for n in code.co_names if n in g)


def _read_guard(cells, g, names):
    out = []
    for cell in cells:
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned later)
            v = None
        out.append(_value_guard(v))
    for n in names:
        out.append(_value_guard(g.get(n)))
    return tuple(out)


def _value_guard(v):
    if type(v) in _SCALARS:
        return (type(v), v)
    if isinstance(v, Tensor):
        return (id(v), id(v._data), v._requires_grad)
    return None


def _reachable_tensors(fn, module):
    """Tensors ``fn`` can reach directly: its closure cells and globals (tensors, modules'
    parameters and buffers, optimizers' parameters, lists of those) and the module.  The
    replay reads them through the tensor (a replaced ``.data`` is seen) and guards their
    ``requires_grad`` (freezing a layer retraces)."""
    from ..nn.module import Module
    from ..optim.optimizer import Optimizer

    found: dict = {}
    optimizers: list = []
    modules: list = []

    def add(v, depth=0):
        opt = getattr(v, "optimizer", None)  # a learning-rate scheduler
        if isinstance(opt, Optimizer):
            add(opt, depth)
        if isinstance(v, Tensor):
            found[id(v._data)] = v
        elif isinstance(v, Module):
            modules.append(v)
            for t in (*v.parameters(), *v.buffers()):
                found[id(t._data)] = t
        elif isinstance(v, Optimizer):
            optimizers.append(v)
            for group in v.param_groups:
                for t in group["params"]:
                    found[id(t._data)] = t
        elif depth == 0 and type(v) in (list, tuple):
            for x in v:
                add(x, 1)
        elif depth == 0 and type(v) is dict:
            for x in v.values():
                add(x, 1)

    cells, g, names = _python_reads(fn)
    for cell in cells:
        try:
            add(cell.cell_contents)
        except ValueError:
            pass
    for n in names:
        add(g.get(n))
    add(getattr(fn, "__self__", None))
    if module is not None:
        add(module)
    return found, optimizers, modules


def _hook_tables(modules, own=None):
    """The hook dicts of ``modules`` and their submodules (but ``own``'s, which run around
    the compiled call) and the global ones: a replay runs while all are empty, as when it
    was traced (a hook registered later retraces, which then refuses)."""
    from ..nn import module as nn_module

    tables = [nn_module._global_forward_hooks, nn_module._global_forward_pre_hooks,
              nn_module._global_backward_hooks, nn_module._global_backward_pre_hooks]
    seen = set()
    for top in modules:
        for m in top.modules():
            if id(m) in seen or m is own:
                continue
            seen.add(id(m))
            d = m.__dict__
            tables += [d[name] for name in ("_forward_pre_hooks", "_forward_hooks",
                                            "_backward_hooks", "_backward_pre_hooks")
                       if name in d]
    return tuple(tables)


class _Entry:
    __slots__ = ("first", "replay", "eager", "hooks")

    def __init__(self, first, eager=False):
        self.first = first
        self.replay = None
        self.eager = eager  # these guards run eagerly (see _trace)
        self.hooks = ()  # the hook tables that must stay empty (see _hook_tables)


class CompiledFunction:
    """What ``retrograd.compile(fn)`` returns; call it as ``fn``.

    The first two calls with a new guard key (argument shapes, dtypes and requires_grad
    flags, Python scalar arguments, grad mode, and a module's ``training`` flag) run
    ``fn`` eagerly while recording its array work; later calls with that key replay the
    recording.  A function the recording cannot reproduce runs eagerly from then on, after
    one warning naming the reason and the line.
    """

    _hooks_run_outside = False  # a module's own forward hooks run around the call

    def __init__(self, fn, module=None, *, mode=None, fullgraph=False, dynamic=None):
        self._fn = fn
        self._module = module
        self._cache: dict = {}
        self._refused: UncompilableError | None = None
        self.mode = mode
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self._reads = _python_reads(fn)
        self._warned = False
        self._builds = 0
        functools.update_wrapper(self, fn)

    @property
    def refused(self):
        """Why this function runs eagerly (a :class:`UncompilableError`), or None."""
        return self._refused

    @property
    def traces(self) -> int:
        """How many guard combinations have a replay."""
        return sum(1 for e in self._cache.values() if e.replay is not None)

    @property
    def eager_guards(self) -> int:
        """How many guard combinations run eagerly (a forward called in grad mode)."""
        return sum(1 for e in self._cache.values() if e.eager)

    def __call__(self, *args, **kwargs):
        if self._refused is not None or _hooks.active is not None or state.tracer is not None:
            return self._fn(*args, **kwargs)
        if not kwargs and all(type(a) is Tensor for a in args):
            # the common call, f(tensor, ...): _spec's key without its recursion
            tensors = list(args)
            spec = (tuple, tuple((t._data.shape, t._data.dtype, t._requires_grad)
                                 for t in args))
        else:
            tensors = []
            spec = _spec(args, tensors)
        key = (state.enabled, state.inference, get_default_dtype(), spec,
               _spec(kwargs, tensors),
               self._module.training if self._module is not None else None,
               _read_guard(*self._reads), _aliasing(tensors))
        entry = self._cache.get(key)
        if entry is not None:
            if entry.replay is not None:
                out = RETRACE if any(entry.hooks) else entry.replay(tensors)
                if out is not RETRACE:
                    return out
                # a tensor it reads changed requires_grad or shape, a hook was added: retrace
                del self._cache[key]
                entry = None
            elif entry.eager:
                return self._fn(*args, **kwargs)
        return self._trace(key, entry, args, kwargs, tensors)

    def _refuse(self, why: UncompilableError) -> None:
        self._refused = why
        self._cache.clear()
        warnings.warn(f"retrograd.compile: {getattr(self._fn, '__qualname__', self._fn)} "
                      f"runs eagerly: {why.reason} (at {why.where})", UserWarning, stacklevel=3)
        if self.fullgraph:
            raise RuntimeError(f"retrograd.compile(fullgraph=True): {why}")

    def _trace(self, key, entry, args, kwargs, tensors):
        if entry is None and len(self._cache) >= MAX_TRACES:
            self._refuse(UncompilableError(f"more than {MAX_TRACES} different guard combinations "
                                 "(shapes, dtypes, scalars)", "the arguments"))
            return self._fn(*args, **kwargs)
        rec = Recorder([t._data for t in tensors])
        reachable, optimizers, modules = _reachable_tensors(self._fn, self._module)
        rec.leaves.update(reachable)
        if self._module is not None and _has_module_hooks(self._module,
                                                          self._hooks_run_outside):
            rec.refuse("the module has forward hooks")
        elif any(_hook_tables(modules, self._module if self._hooks_run_outside else None)):
            # (a replay would not call them; checked again before every replay)
            rec.refuse("a module the function reaches has forward or backward hooks")
        rng = default_generator._rng.bit_generator.state
        started = not tracemalloc.is_tracing()
        if started:  # tells constants from values computed outside ops (_trace.made_where)
            tracemalloc.start(3)
        try:
            with _hooks.observing(rec, optimizers):
                result = self._fn(*args, **kwargs)
                backward_ran = any(s.kind in ("vjp", "acc") for s in rec.steps)
                out = _output_template(rec, result, tensors, backward_ran)
        except _hooks.BusyError:
            return self._fn(*args, **kwargs)
        finally:
            if started:
                tracemalloc.stop()
        if default_generator._rng.bit_generator.state != rng:
            rec.refuse("random numbers were drawn (dropout, randn...): a replay would "
                       "repeat them")
        if rec.refusal is not None and rec.per_key:
            # a forward whose graph the caller needs (a module called in grad mode): these
            # guards run eagerly; no_grad calls of the same function still compile
            self._cache[key] = _Entry(None, eager=True)
            if not self._warned:
                self._warned = True
                warnings.warn(f"retrograd.compile: {getattr(self._fn, '__qualname__', '')} "
                              f"runs eagerly in grad mode: {rec.refusal.reason} (at "
                              f"{rec.refusal.where})", UserWarning, stacklevel=3)
            return result
        if rec.refusal is not None:
            self._refuse(rec.refusal)
            return result
        if entry is None:
            self._cache[key] = _Entry((rec, tensors, out))
            return result
        self._builds += 1
        if self._builds > 2 * MAX_TRACES:
            self._refuse(UncompilableError("retraced too often (requires_grad of the "
                                           "tensors it reads keeps changing)", "the call"))
            return result
        try:
            entry.replay = build(entry.first, (rec, tensors, out))
        except UncompilableError as why:
            self._refuse(why)
            return result
        entry.first = None
        entry.hooks = _hook_tables(modules, self._module if self._hooks_run_outside else None)
        return result


def _has_module_hooks(module, skip_own=False) -> bool:
    """Whether forward hooks would run inside the compiled call (``skip_own``: the
    module's own run around it, as for ``nn.Module.compile()``)."""
    from ..nn.module import _global_forward_hooks, _global_forward_pre_hooks

    if _global_forward_hooks or _global_forward_pre_hooks:
        return True
    for m in module.modules():
        if skip_own and m is module:
            continue
        for name in ("_forward_hooks", "_forward_pre_hooks"):
            if getattr(m, name, None):
                return True
    return False


class CompiledModule:
    """``retrograd.compile(module)``: calls go through the compiled forward; every other
    attribute (parameters, train/eval, state_dict...) is the module's (``_orig_mod``)."""

    def __init__(self, module, **options):
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", CompiledFunction(module.__call__, module,
                                                               **options))

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return f"CompiledModule({self._orig_mod!r})"
