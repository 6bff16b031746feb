"""Turn two traces of the same call into one straight-line Python function.

:func:`build` checks that the two recordings (two eager calls with the same guards) did the
same thing, step for step, and sorts every *unknown* array (one no earlier step produced):

* the same array object in both calls: state that lives across calls (a parameter, a
  buffer): the replay reads that object (through its tensor when it is a leaf's data);
* a new object with the same values: a constant made inside the function (``ones`` for
  the root gradient, ``zeros(3)``): the replay uses a private copy;
* a new object with other values: a value computed outside any op compile can see (the
  replay would use stale numbers): the function is refused.

The replay is generated source: one line per step, ``v3 = f3(a0, v2)`` for an op forward,
``v9 = j9(n9, v8, (a0, v3))`` for a derivative (the traced node is kept as a read-only
template: its ``params``, ``next`` and output shapes), a ``.grad`` accumulation (under
``grad_lock``, as the engine's), ``m4()`` for ``optimizer.step()`` (plain SGD's written
out: ``_inline_optim``).  The common steps are written as the NumPy calls themselves
instead (``_lower``: ``v5 = MATMUL(a0, v4)``).  No Tensor, no Node and no engine is
involved; what the steps compute are the same array functions (or, lowered, the same
element operations) eager calls, in the same order, so the results are the same to the
bit.  ``_optimize`` then leaves out dead steps, runs constant ones once
and deletes values after their last use.
"""

from __future__ import annotations

import numpy as np

from ..autograd.accumulate_grad import _accumulate_into_grad, grad_lock
from ..tensor import make_tensor
from ._inline_optim import inline_step
from ._lower import Lowering
from ._optimize import _NAME, constant_steps, drop_unused, free_after_last_use, freeze
from ._trace import Const, Ref, UncompilableError


RETRACE = object()  # what a replay returns when a tensor it reads changed requires_grad


def _same_value(x, y) -> bool:
    if x is y:
        return True
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
    if isinstance(x, (tuple, list)):
        return len(x) == len(y) and all(_same_value(a, b) for a, b in zip(x, y))
    if isinstance(x, float) and x != x:
        return y != y
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - objects without a usable ==
        return False


class _Side:
    """How one trace names objects that are not arrays (leaves, optimizers...)."""

    def __init__(self, rec, arg_tensors):
        self.rec = rec
        self.arg_pos = {id(t): i for i, t in enumerate(arg_tensors)}

    def obj_key(self, obj):
        i = self.arg_pos.get(id(obj))
        return ("arg", i) if i is not None else ("obj", id(obj))


def _same_tpl(a, b, sa, sb) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is Ref:
        if a.kind != b.kind or a.k != b.k or a.path != b.path:
            return False
        return a.obj is None or sa.obj_key(a.obj) == sb.obj_key(b.obj)
    if type(a) is Const:
        return _same_value(a.value, b.value)
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_same_tpl(x, y, sa, sb) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same_tpl(a[k], b[k], sa, sb) for k in a)
    return _same_value(a, b)


def _same_step(s, t, sa, sb) -> bool:
    if s.kind != t.kind:
        return False
    if s.kind == "fwd":
        return s.fn is t.fn and _same_tpl(s.args, t.args, sa, sb) and _same_tpl(
            s.extra, t.extra, sa, sb)
    if s.kind == "vjp":
        if type(s.fn) is not type(t.fn) or not _same_tpl(s.args, t.args, sa, sb):
            return False
        if (s.extra is None) != (t.extra is None):
            return False
        if s.extra is not None:
            return _same_tpl(s.extra, t.extra, sa, sb)
        return (_same_value(s.fn.params, t.fn.params)
                and [c is None for c in s.fn.next] == [c is None for c in t.fn.next])
    if s.kind == "sum":
        if len(s.args) != len(t.args):
            return False
        for (ra, pa), (rb, pb) in zip(s.args, t.args):
            if not _same_tpl(ra, rb, sa, sb) or (pa is None) != (pb is None):
                return False
            if pa is not None and (pa[0] != pb[0] or pa[1] != pb[1] or pa[3:] != pb[3:]):
                return False
        return True
    if s.kind in ("acc", "nograd"):
        return sa.obj_key(s.fn) == sb.obj_key(t.fn) and _same_tpl(s.args, t.args, sa, sb)
    if s.kind == "call":
        return s.fn is t.fn and _same_value(s.args, t.args)
    return False


def _conform_expr(e, spec, w):
    """The engine's ``conform`` (``sum_to_array``, then a cast) for the traced shapes,
    written out: the same NumPy calls, without its per-call shape analysis."""
    shape, dtype, _node, _i, gshape, gdtype = spec
    if gshape != shape:
        lead = len(gshape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
        if axes:
            e = f"{e}.sum(axis={axes!r}, keepdims=True)"
        if lead:
            e = f"{e}.reshape({tuple(shape)!r})"
    if gdtype != dtype:
        e = f"{e}.astype({w.name(dtype)})"
    return e


class _Writer:
    """Builds the replay's source and the namespace its names refer to."""

    def __init__(self, side):
        self.side = side
        self.ns = {"ACCUMULATE": _accumulate_into_grad, "LOCK": grad_lock, "MK": make_tensor}
        self.lines = []
        self.names = {}
        self.unknown_expr = {}
        self.objects = {}  # "L" names -> tensors the replay reads through
        self.private = set()  # unknowns that are the replay's private (frozen) copies
        self.const = set()  # steps computed once, when the replay is built

    def name(self, value, prefix="k"):
        key = id(value)
        got = self.names.get(key)
        if got is None:
            got = f"{prefix}{len(self.names)}"
            self.names[key] = got
            self.ns[got] = value
            if prefix == "L":
                self.objects[got] = value
        return got

    def obj(self, obj):
        i = self.side.arg_pos.get(id(obj))
        return f"T[{i}]" if i is not None else self.name(obj, "L")

    def expr(self, tpl) -> str:
        t = type(tpl)
        if t is Ref:
            if tpl.kind == "v":
                return f"v{tpl.k}" + "".join(f"[{p}]" for p in tpl.path)
            if tpl.kind == "a":
                return f"a{tpl.k}"
            if tpl.kind == "u":
                return self.unknown_expr[tpl.k]
            return f"{self.obj(tpl.obj)}._grad._data"
        if t is Const:
            v = tpl.value
            if v is None or type(v) in (bool, int) or (type(v) is float and v == v
                                                       and v not in (float("inf"), float("-inf"))):
                return repr(v)
            return self.name(v)
        if t is tuple:
            return "(" + "".join(self.expr(x) + ", " for x in tpl) + ")"
        if t is list:
            return "[" + ", ".join(self.expr(x) for x in tpl) + "]"
        return self.name(tpl)

    def step(self, k, s):
        def add(line):
            self.lines.append((k, line))

        if s.kind == "fwd":
            args = ", ".join(self.expr(x) for x in s.args)
            kwargs = "".join(f", {key}={self.expr(v)}" for key, v in s.extra.items()) \
                if s.extra else ""
            if not args and kwargs:
                kwargs = kwargs[2:]
            add(f"v{k} = {self.name(s.fn, 'f')}({args}{kwargs})")
        elif s.kind == "vjp":
            node = self.name(s.fn, "n")
            if s.extra is not None:
                add(f"{node}.params = {self.expr(s.extra)}")
            g, saved = s.args
            add(f"v{k} = {self.name(s.fn.vjp, 'j')}({node}, {self.expr(g)}, {self.expr(saved)})")
        elif s.kind == "sum":
            parts = []
            for ref, spec in s.args:
                e = self.expr(ref)
                if spec is not None:
                    e = _conform_expr(e, spec, self)
                parts.append(e)
            add(f"v{k} = " + " + ".join(parts))
        elif s.kind == "acc":
            # _accumulate written out: the first gradient is copied into a new .grad
            # tensor, later ones go through the engine's function (in place)
            leaf, g = self.obj(s.fn), self.expr(s.args)
            add("with LOCK:")
            if type(s.args) is not Ref:  # (not an array: the engine's as_array first)
                add(f"    ACCUMULATE({leaf}, {g}, False)")
                return
            add(f"    if {leaf}._grad is None:")
            add(f"        {leaf}._grad = MK({g}.copy())")
            add("    else:")
            add(f"        ACCUMULATE({leaf}, {g}, False)")
        elif s.kind == "call":
            name, args, kwargs = s.args
            method = self.name(getattr(s.fn, name), "m")
            call = f"{method}(*{self.name(args)}, **{self.name(kwargs)})"
            inline = inline_step(self, s.fn, call) if name == "step" and not args \
                and not kwargs else None
            for line in inline or [call]:
                add(line)
        elif s.kind == "nograd":
            add(f"{self.obj(s.fn)}._grad = None")

    def output(self, tpl) -> str:
        kind = tpl[0]
        if kind == "const":
            return self.expr(Const(tpl[1]))
        if kind == "seq":
            items = [self.output(x) for x in tpl[2]]
            if tpl[1] is tuple:
                return "(" + "".join(i + ", " for i in items) + ")"
            return "[" + ", ".join(items) + "]"
        if kind == "dict":
            return "{" + ", ".join(f"{self.name(k)}: {self.output(v)}" for k, v in tpl[1]) + "}"
        if kind == "tensor":
            return self.obj(tpl[1])
        if kind == "grad":
            return f"{self.obj(tpl[1])}._grad"
        ref = tpl[1]  # "new": a fresh tensor on the replayed array
        if (ref.kind == "v" and ref.k in self.const) or (ref.kind == "u"
                                                          and ref.k in self.private):
            return f"MK({self.expr(ref)}.copy())"  # a constant: the caller's own copy
        return f"MK({self.expr(ref)})"


def _same_output(a, b, sa, sb) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "const":
        return _same_value(a[1], b[1])
    if a[0] == "seq":
        return a[1] is b[1] and len(a[2]) == len(b[2]) and all(
            _same_output(x, y, sa, sb) for x, y in zip(a[2], b[2]))
    if a[0] == "dict":
        return len(a[1]) == len(b[1]) and all(
            _same_value(ka, kb) and _same_output(va, vb, sa, sb)
            for (ka, va), (kb, vb) in zip(a[1], b[1]))
    if a[0] in ("tensor", "grad"):
        return sa.obj_key(a[1]) == sb.obj_key(b[1])
    return _same_tpl(a[1], b[1], sa, sb)


def build(first, second):
    """The replay function for two traces ``(recorder, arg tensors, output template)``;
    raises :class:`UncompilableError` when they differ or a value came from outside the ops."""
    rec1, args1, out1 = first
    rec2, args2, out2 = second
    sa, sb = _Side(rec1, args1), _Side(rec2, args2)
    for s, t in zip(rec1.steps, rec2.steps):
        if not _same_step(s, t, sa, sb):
            raise UncompilableError("two calls with the same guards did different work (Python "
                          "values other than the arguments decide what runs)", t.where)
    if len(rec1.steps) != len(rec2.steps) or len(rec1.unknowns) != len(rec2.unknowns):
        raise UncompilableError("two calls with the same guards did different work (Python values "
                      "other than the arguments decide what runs)", "the traced function")
    if not _same_output(out1, out2, sa, sb):
        raise UncompilableError("two calls returned differently built results", "the return value")
    w = _Writer(sb)
    for n, ((a1, c1, _, _), (a2, c2, where, made)) in enumerate(
            zip(rec1.unknowns, rec2.unknowns)):
        if a1 is a2:
            leaf = rec2.leaves.get(id(a2))
            if leaf is not None and leaf._data is a2:
                w.unknown_expr[n] = f"{w.obj(leaf)}._data"
            else:
                w.unknown_expr[n] = w.name(a2, "u")
        elif made is not None:
            # equal values prove nothing for an array an op's own code made (an index
            # computed from values that happened to repeat): refuse
            raise UncompilableError(
                "a value was computed outside the ops compile can trace"
                + (" (a tensor other than the arguments was replaced between calls)"
                   if made == "before the call" else f" (made at {made})"), where)
        elif _same_value(c1, c2):
            if not _same_value(a2, c2):
                raise UncompilableError("an array made inside the function is changed in "
                                        "place by a later step", where)
            c2.flags.writeable = False  # a replay step writing into it fails loudly
            w.private.add(n)
            w.unknown_expr[n] = w.name(c2, "u")
        else:
            raise UncompilableError("a value was computed outside the ops compile can trace (it "
                          "differs between calls but no recorded step produced it)", where)
    w.const = constant_steps(rec2.steps, w.private)
    ret = f"return {w.output(out2)}"
    lowering = Lowering(w, rec2, w.const, _NAME.findall(ret))
    for k, s in enumerate(rec2.steps):
        lowered = lowering.lower(k, s)
        if lowered is None:
            w.step(k, s)
        else:
            w.lines += [(k, line) for line in lowered]
    tagged = drop_unused(w.lines, rec2.steps, [ret])
    lines = free_after_last_use([line for k, line in tagged if k not in w.const], [ret],
                                {f"v{k}" for k in w.const})
    init = [line for k, line in tagged if k in w.const]
    if init:  # constant steps: computed once, their results frozen (see _optimize)
        exec(compile("\n".join(init), "<retrograd.compile constants>", "exec"), w.ns)  # noqa: S102
        for k in w.const:
            if f"v{k}" in w.ns:
                freeze(w.ns[f"v{k}"])
    n_args = len(args2)
    head = [f"a{i} = T[{i}]._data" for i in range(n_args)]
    leaves = [obj for key, obj in w.objects.items() if key.startswith("L")]
    if leaves:
        # tensors read through: their requires_grad decides what backward does, and the
        # lowered lines were written for the traced shapes and dtypes of their data
        keys = [key for key in w.objects if key.startswith("L")]
        flags = [f"{key}._requires_grad" for key in keys]
        traced = [t._requires_grad for t in leaves]
        if lowering.used:
            flags += [f"{key}._data.shape" for key in keys] + [
                f"{key}._data.dtype" for key in keys]
            traced += [t._data.shape for t in leaves] + [t._data.dtype for t in leaves]
        head.append(f"if ({', '.join(flags)}, ) != {w.name(tuple(traced))}:")
        head.append("    return RETRACE")
    w.ns["RETRACE"] = RETRACE
    body = head + lines + [ret]
    source = "def replay(T):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(source, "<retrograd.compile replay>", "exec"), w.ns)  # noqa: S102
    replay = w.ns["replay"]
    replay.source = source
    return replay
