"""Draw a traced forward-mode pass: the ops from each ``make_dual`` to each ``unpack_dual``,
with the tangent carried along every edge (DOT text, as ``viz.draw``).

A forward pass of duals that do not require grad records no autograd graph, so the picture
is built from the trace's own events (``autograd.forward_trace``): a :class:`DualMade` is an
input box, a :class:`ForwardStep` an op box (its JVP rule in words), an ``unpack_dual`` an
output box; an edge goes from the op (or dual) that made a tensor to each op that used it.
"""

from __future__ import annotations

from ..autograd.trace_events import format_value
from ..autograd.trace_rules import describe_forward
from . import dot
from .dot import LEAF_COLOR, OP_COLOR, OUTPUT_COLOR, Graph, _q, _shape, _wrap

__all__ = ["draw", "draw_trace", "draw_forward", "has_forward"]


def draw(outputs, params=None, show_saved: bool = True, show_grads: bool = False,
         max_nodes: int | None = None, trace=None, title: str | None = None) -> Graph:
    """``viz.draw``: :func:`retrograd.viz.dot.draw`, except that a ``trace`` of a
    forward-mode pass (and no backward one) draws that pass, tangents along the edges."""
    if trace is not None and not trace.steps and has_forward(trace):
        return draw_forward(trace, outputs, params, title)
    return dot.draw(outputs, params=params, show_saved=show_saved, show_grads=show_grads,
                    max_nodes=max_nodes, trace=trace, title=title)


draw.__doc__ = (draw.__doc__ or "") + "\n" + (dot.draw.__doc__ or "")


def draw_trace(self, params=None, **kwargs):
    """``Trace.draw()``: the traced backward pass (``viz.dot.draw_trace``), or, for a trace
    that recorded only a forward-mode pass, that pass with its tangents."""
    if not self.outputs and has_forward(self):
        if params:
            self.name(params)
        return draw_forward(self, title=kwargs.get("title"))
    return dot.draw_trace(self, params, **kwargs)

CONSTANT_COLOR = "white"


def has_forward(trace) -> bool:
    """Did ``trace`` record a forward-mode pass?"""
    return trace is not None and any(e.kind in ("dual", "forward") for e in trace.events)


def draw_forward(trace, outputs=None, params=None, title=None) -> Graph:
    """The forward-mode pass recorded by ``trace``, tangents on the edges.

    ``outputs`` (tensors, or a dict name -> tensor) keeps only what they depend on; by
    default every op the trace saw is drawn.  ``params`` names tensors as in ``draw``.
    """
    if params:
        trace.name(params)
    events = [e for e in trace.events if e.kind in ("dual", "forward", "unpack")]
    if not any(e.kind in ("dual", "forward") for e in events):
        raise RuntimeError("this trace recorded no forward-mode pass: make duals with "
                           "forward_ad.make_dual inside 'with retrograd.autograd.trace() as t:' "
                           "and a dual_level first")
    # in the order they ran: an in-place op's output is its input, so each use reads the
    # box that made the tensor's value at that moment
    made = {}  # id(tensor) -> (box id, output index), for the op or dual that made it
    boxes = []  # (box id, event)
    sources = {}  # box id -> the (box id, output index) or None of each input
    for k, e in enumerate(events):
        if e.kind == "dual":
            made[id(e.dual)] = (f"d{k}", 0)
            boxes.append((f"d{k}", e))
        elif e.kind == "forward":
            sources[f"f{k}"] = [made.get(id(x)) for x in e.inputs]
            for i, o in enumerate(e.outputs):
                made[id(o)] = (f"f{k}", i)
            boxes.append((f"f{k}", e))
    keep = _needed(boxes, sources, made, outputs)
    lines = [
        "digraph retrograd_forward {",
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, labelloc=b, '
        'nodesep=0.3, ranksep=0.35];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
        'margin="0.12,0.06"];',
        '  edge [fontname="Helvetica", fontsize=9, color="#1f4e9c", fontcolor="#1f4e9c"];',
    ]
    emit = lines.append
    constants = 0
    for box, e in boxes:
        if box not in keep:
            continue
        if e.kind == "dual":
            emit(f"  {box} [label={_q(_dual_label(trace, e))}, fillcolor={LEAF_COLOR}];")
            continue
        emit(f"  {box} [label={_q(_step_label(trace, e))}, fillcolor={OP_COLOR}];")
        for x, t, src in zip(e.inputs, e.in_tangents, sources[box]):
            if src is None:
                if not hasattr(x, "_data"):
                    continue  # a number operand: its constant shows in the rule
                emit(f"  c{constants} [label={_q(_constant_label(trace, x))}, "
                     f'fillcolor={CONSTANT_COLOR}, style="rounded,dashed"];')
                emit(f"  c{constants} -> {box} [style=dashed, color=grey, "
                     f"label={_q('no tangent (constant)')}];")
                constants += 1
                continue
            emit(f"  {src[0]} -> {box} [label={_q(_edge_label(src, t))}];")
    outs = _output_items(trace, events, outputs)
    for k, (name, tensor, tangent) in enumerate(outs):
        src = made.get(id(tensor))
        label = [name, f"output {_shape(tensor._data.shape)} {tensor._data.dtype}"]
        if tangent is not None:
            label.append(f"tangent: {format_value(tangent, 6)}")
        emit(f"  o{k} [label={_q(chr(10).join(label))}, fillcolor={OUTPUT_COLOR}];")
        if src is not None:
            emit(f"  {src[0]} -> o{k} [label={_q(_edge_label(src, tangent))}];")
    legend = [title] if title else []
    legend.append("Forward-mode AD: arrows run from the duals (top) to the outputs (bottom), "
                  "as the computation does.")
    legend.append("Each edge carries the tangent (the directional derivative J t) that "
                  "flowed along it; each op box says how it made its output's tangent.")
    emit(f"  label={_q(chr(10).join(legend))};")
    emit("}")
    n = len(boxes)
    return Graph("\n".join(lines) + "\n", n, len([b for b, _ in boxes if b in keep]))


def _needed(boxes, sources, made, outputs) -> set:
    """The boxes ``outputs`` depend on (all of them when ``outputs`` is None)."""
    if outputs is None:
        return {box for box, _ in boxes}
    tensors = list(outputs.values()) if isinstance(outputs, dict) else (
        [outputs] if hasattr(outputs, "_data") else list(outputs))
    todo = [made[id(t)][0] for t in tensors if id(t) in made]
    keep = set()
    while todo:
        box = todo.pop()
        if box not in keep:
            keep.add(box)
            todo.extend(src[0] for src in sources.get(box, ()) if src is not None)
    return keep


def _output_items(trace, events, outputs):
    """``[(name, tensor, tangent)]``: the given outputs, else every unpack_dual's tensor."""
    if outputs is None:
        seen, items = set(), []
        for e in events:
            if e.kind == "unpack" and id(e.tensor) not in seen:
                seen.add(id(e.tensor))
                items.append((trace._tensor_label(e.tensor), e.tensor, e.tangent))
        return items
    if isinstance(outputs, dict):
        pairs = list(outputs.items())
    else:
        seq = [outputs] if hasattr(outputs, "_data") else list(outputs)
        pairs = [(trace._tensor_label(t), t) for t in seq]
    last = {}
    for e in events:
        if e.kind == "forward":
            for o, t in zip(e.outputs, e.out_tangents):
                last[id(o)] = t
        elif e.kind == "dual":
            last[id(e.dual)] = e.tangent
    return [(name, t, last.get(id(t))) for name, t in pairs]


def _dual_label(trace, e) -> str:
    who = trace._tensor_label(e.primal, leaf=e.primal._grad_fn is None)
    data = e.primal._data
    return "\n".join([f"make_dual({who})", f"primal {_shape(data.shape)} {data.dtype}",
                      f"tangent: {format_value(e.tangent, 6)}"])


def _step_label(trace, e) -> str:
    lines = [e.op + (f" ({e.name})" if e.name else "")]
    made = trace._made_name_of(e.outputs)
    if made:
        lines[0] += f" -> {made}"
    forward = describe_forward(e.name) if e.name else None
    if forward is not None:
        lines.append(f"forward: {forward}")
    lines.append(_wrap("tangent: " + e.rule))
    return "\n".join(lines)


def _constant_label(trace, x) -> str:
    return "\n".join([trace._tensor_label(x), "no tangent"])


def _edge_label(src, tangent) -> str:
    box, nr = src
    text = f"tangent: {format_value(tangent, 6)}" if tangent is not None else "no tangent"
    return (f"[{nr}] " if nr else "") + text
