"""Narrate one backward pass: ``with retrograd.autograd.trace() as t: loss.backward()``.

(A forward-mode pass run inside the trace is narrated too: ``forward_trace.py``.)

While a :class:`Trace` is active the engine reports every step to it (``engine.tracer``,
kept per thread: a trace records the backward passes of the thread that opened it):
the gradient that arrived at each node, the gradients the node sent to its inputs, hooks
and what they returned, every accumulation into a ``.grad`` (before and after), how the
``gradient`` argument of ``backward()`` was broadcast, and each saved buffer freed.  The
engine reads ``engine.tracer`` once per backward, so when no trace is active the cost is a
few ``is not None`` checks.

The events it records and their texts are in ``trace_events.py``; each node's rule in
words (``RULES``, :func:`describe_rule`) in ``trace_rules.py``, re-exported here.
"""

from __future__ import annotations

from .grad_mode import state
from .graph import AccumulateGrad
from .trace_events import (
    Accumulation, Failure, Freed, HookCall, NodeStep, RootGradient, Send, Sent, _as_array,
    _saved_summary, _shape_text, _snap_many, format_many, format_value,
)
from .trace_rules import RULES, describe_rule, saved_slot_names

__all__ = ["trace", "Trace", "RULES", "describe_rule", "format_value"]


class Trace:
    """Records one (or several) backward passes; use through :func:`trace`.

    Attributes
    ----------
    events : list
        Every event in the order the engine produced it: :class:`RootGradient`,
        :class:`NodeStep`, :class:`HookCall`, :class:`Freed`, :class:`Accumulation`.
    """

    def __init__(self, params=None):
        self._events = []
        self._steps = {}
        self._pending = None
        self._previous = None
        self.names = {}
        if params:
            self.name(params)

    # -- naming
    def name(self, params) -> "Trace":
        """Name tensors for the table and the picture: ``{"x": x, "y": y}``."""
        for key, t in dict(params).items():
            self.names[id(t)] = (key, t)
        return self

    # -- context manager
    def __enter__(self) -> "Trace":
        self._previous = state.tracer
        state.tracer = self
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        state.tracer = self._previous
        self._settle()
        if exc is not None:
            # the backward failed: say where (the last node that started) and why
            steps = [e for e in self._events if e.kind == "node"]
            self._events.append(Failure(steps[-1].node if steps else None, exc))

    # -- the engine's calls
    def _settle(self) -> None:
        """Read ``.grad`` after an accumulation (the engine adds right after telling us)."""
        acc = self._pending
        if acc is not None:
            acc.after = _as_array(acc.tensor._grad)
            self._pending = None

    def root_grad(self, index, output, given, used) -> None:
        self._settle()
        self._events.append(RootGradient(index, output, given, used))

    def node_ready(self, node, g) -> None:
        self._settle()
        if type(node) is AccumulateGrad:
            return  # narrated by accumulate(): the leaf's .grad before and after
        arrived = None
        if g is not None:
            arrived = _snap_many(g) if node.multi_output else _as_array(g)
        step = NodeStep(node, arrived, _saved_summary(node))
        self._steps[node] = step
        self._events.append(step)

    def hook(self, where, fn, given, returned) -> None:
        self._settle()
        self._events.append(HookCall(where, fn, given, returned))

    def accumulate(self, tensor, g) -> None:
        self._settle()
        acc = Accumulation(tensor, g)
        self._events.append(acc)
        self._pending = acc

    def accumulated(self, tensor) -> None:
        """The engine finished adding into ``tensor.grad`` (before any post-accumulate hook)."""
        self._settle()

    def freed(self, node) -> None:
        self._settle()
        step = self._steps.get(node)
        slots = [s for s, _ in step.saved] if step is not None else []
        if step is not None:
            step.freed = True
        self._events.append(Freed(node, slots))

    def node_done(self, node, g, grads) -> None:
        self._settle()
        step = self._steps.get(node)
        if step is None:
            return
        for i, child in enumerate(node.next):
            value = _as_array(grads[i]) if i < len(grads) else None
            reduced = None
            if child is not None and value is not None and not child.multi_output \
                    and value.shape != tuple(child.out_shape):
                reduced = tuple(child.out_shape)
            step.sends.append(Send(i, child, value, reduced))
        self._events.append(Sent(step))

    def record(self, event) -> None:
        """Add a forward-mode event (``forward_trace.py``: make_dual, an op, unpack_dual)."""
        self._settle()
        self._events.append(event)

    # -- reading
    @property
    def forward_steps(self) -> list:
        """The ``ForwardStep`` of every op that propagated a tangent, in order."""
        return [e for e in self.events if e.kind == "forward"]

    @property
    def events(self) -> list:
        self._settle()
        return list(self._events)

    @property
    def steps(self) -> list:
        """The :class:`NodeStep` of every node run, in order."""
        return [e for e in self.events if e.kind == "node"]

    @property
    def accumulations(self) -> list:
        return [e for e in self.events if e.kind == "accumulate"]

    @property
    def freed_nodes(self) -> list:
        """Names of the nodes whose saved buffers were freed, in order."""
        return [e.name for e in self.events if e.kind == "freed"]

    @property
    def outputs(self) -> list:
        """The tensors backward started from (from the gradient events)."""
        return [e.output for e in self.events if e.kind == "gradient"]

    def step(self, name: str) -> NodeStep:
        """The first step of the node called ``name`` (e.g. ``'PowBackward0'``)."""
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"no node called {name!r} ran in this trace; ran: "
                       f"{[s.name for s in self.steps]}")

    def label(self, node) -> str:
        """A readable name for a node: the leaf's name for an AccumulateGrad."""
        if node is None:
            return "(no grad: constant)"
        if type(node) is AccumulateGrad:
            return self._tensor_label(node.variable, leaf=True)
        made = self._made_name(node)
        return type(node).__name__ + (f" (makes {made})" if made else "")

    def _made_name(self, node):
        for key, t in self.names.values():
            if getattr(t, "_grad_fn", None) is node:
                return key
        return None

    def _made_name_of(self, tensors):
        for t in tensors:
            entry = self.names.get(id(t))
            if entry is not None and entry[1] is t:
                return entry[0]
        return None

    def _tensor_label(self, t, leaf=False) -> str:
        entry = self.names.get(id(t))
        if entry is not None and entry[1] is t:
            return entry[0]
        shape = _shape_text(t._data.shape)
        return f"{'leaf' if leaf else 'tensor'} {shape} {t._data.dtype}"

    def table(self, params=None) -> "TraceTable":
        """The trace as a readable table (a ``str``; ``print(t.table())``)."""
        if params:
            self.name(params)
        rows = []
        for e in self.events:
            rows.extend(self._rows(e))
        return TraceTable(_render_table(rows))

    def _rows(self, e) -> list:
        if e.kind == "gradient":
            out = self._tensor_label(e.output)
            return [("gradient", f"output {out}", f"{e.how}; starts as {format_value(e.used)}")]
        if e.kind == "node":
            label = self.label(e.node)
            if e.skipped:
                return [("skip", label, "no gradient arrived: nothing to do")]
            detail = [f"gradient arrived: {format_many(e.arrived)}",
                      f"rule: {e.rule}"]
            if e.saved:
                detail.append("saved: " + ", ".join(f"{k}={v}" for k, v in e.saved))
            elif e.saved_gone:
                detail.append("saved: already freed by an earlier backward (it ran without "
                              "retain_graph=True)")
            if e.constants:
                detail.append("constant: " + ", ".join(f"{k}={v}" for k, v in e.constants))
            return [("run", label, detail)]
        if e.kind == "sent":
            rows = []
            step = e.step
            slots = dict(enumerate(saved_slot_names(step.node)))
            saved = dict(step.saved_inputs)
            for s in step.sends:
                if s.target is None:
                    slot = slots.get(s.index, f"input {s.index}")
                    value = saved.get(s.index)
                    const = f" = {value}" if value is not None else ""
                    rows.append(("send", f"  -> {slot}{const}",
                                 "a constant: needs no gradient, nothing sent"))
                    continue
                text = format_value(s.value)
                if s.reduced_to is not None:
                    text += (f"  (shape {_shape_text(s.value.shape)}, summed over broadcast "
                             f"dims to {_shape_text(s.reduced_to)})")
                target = self.label(s.target)
                if s.target.multi_output:
                    nrs = step.node.next_nr
                    target += f" (its output {nrs[s.index] if nrs else 0})"
                rows.append(("send", f"  -> {target}", text))
            return rows
        if e.kind == "hook":
            ret = ("None (gradient unchanged)" if e.returned is None
                   else format_many(e.returned))
            return [("hook", e.where, f"{e.fn} got {format_many(e.given)}, "
                     f"returned {ret}")]
        if e.kind == "freed":
            what = ", ".join(e.slots) if e.slots else "its saved values"
            return [("free", self.label(e.node),
                     f"freed saved {what} (no retain_graph): a 2nd backward here would fail")]
        if e.kind == "accumulate":
            who = self._tensor_label(e.tensor, leaf=e.tensor._grad_fn is None)
            return [("accumulate", f"{who}.grad",
                     [f"adds {format_value(e.grad)}",
                      f"before {format_value(e.before)} -> after {format_value(e.after)}"])]
        if e.kind == "error":
            message = str(e.error).split(". ")[0]
            return [("error", self.label(e.node) if e.node is not None else "backward",
                     f"{type(e.error).__name__}: {message}")]
        rows = getattr(e, "rows", None)  # forward-mode events narrate themselves
        return rows(self) if rows is not None else [(e.kind, "", "")]

    # draw(params=None, **kwargs): the traced graph, annotated; viz/dot.py's draw_trace,
    # attached when the package is assembled (viz is the layer above this one)

    def __repr__(self) -> str:
        return f"<retrograd trace: {len(self._events)} events>"



class TraceTable(str):
    """The table text; shows as itself (not as a quoted string) in a REPL or notebook."""

    def __repr__(self) -> str:
        return str(self)


def _render_table(rows) -> str:
    header = ("#", "event", "where", "what")
    lines = []
    w_event = max([len(header[1])] + [len(r[0]) for r in rows])
    w_where = min(44, max([len(header[2])] + [len(r[1]) for r in rows]))
    fmt = f"{{:>3}}  {{:<{w_event}}}  {{:<{w_where}}}  {{}}"
    lines.append(fmt.format(*header))
    lines.append(fmt.format("---", "-" * w_event, "-" * w_where, "-" * 40))
    for n, (event, where, what) in enumerate(rows, 1):
        parts = what if isinstance(what, list) else [what]
        lines.append(fmt.format(n, event, where, parts[0]))
        for more in parts[1:]:
            lines.append(fmt.format("", "", "", more))
    return "\n".join(lines)


def trace(params=None) -> Trace:
    """Record backward passes step by step.

    Parameters
    ----------
    params : dict, optional
        Names for tensors, used by the table and the picture: ``{"x": x}`` or
        ``dict(model.named_parameters())``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([[0.5]], requires_grad=True)
    >>> z = (2 * x) ** 3
    >>> with T.autograd.trace({"x": x, "z": z}) as t:
    ...     z.backward()
    >>> [s.name for s in t.steps]
    ['PowBackward0', 'MulBackward0']
    >>> t.accumulations[0].after
    array([[6.]], dtype=float32)
    """
    return Trace(params)
