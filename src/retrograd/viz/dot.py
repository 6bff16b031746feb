"""Draw the recorded graph as Graphviz DOT text; render it with Graphviz's ``dot``.

Producing the DOT text needs nothing but retrograd.  Rendering it (SVG, PNG, PDF) needs the
``dot`` program from Graphviz; the ``graphviz`` Python package (``pip install
'retrograd[viz]'``) is used when installed, else ``dot`` is run directly.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..autograd.graph import AccumulateGrad, accumulator_of
from ..autograd.trace_events import format_many, format_value
from ..autograd.trace_rules import (
    describe_forward, describe_rule, param_constants, saved_constants, saved_slot_names,
)
from ..tensor import Tensor

__all__ = ["draw", "Graph", "GraphvizNotFoundError"]

FORMATS = ("svg", "png", "pdf")

# Colours follow torchviz's conventions, which many PyTorch users already know.
LEAF_COLOR = "lightblue"
OP_COLOR = "lightgrey"
OUTPUT_COLOR = "darkolivegreen1"
SAVED_COLOR = "orange"
FREED_COLOR = "mistyrose"
HOOK_COLOR = "red"

INSTALL_HINT = (
    "Install Graphviz's dot program (Debian/Ubuntu: apt-get install graphviz; macOS: brew "
    "install graphviz; conda: conda install graphviz) and, optionally, the Python package "
    "with pip install 'retrograd[viz]'. Without them the DOT text is still available: "
    "graph.source, or graph.save('graph.dot')."
)


class GraphvizNotFoundError(RuntimeError):
    """Rendering needs Graphviz's ``dot`` program, which is not installed."""


def _find_dot():
    return shutil.which("dot")


def _pipe(source: str, fmt: str) -> bytes:
    """Run ``dot -T<fmt>`` on ``source``: through the graphviz package if installed."""
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.Source(source).pipe(format=fmt)
        except graphviz.ExecutableNotFound as e:
            raise GraphvizNotFoundError(
                f"rendering the graph as {fmt} needs Graphviz's 'dot' program, which the "
                f"graphviz Python package could not find on PATH. {INSTALL_HINT}"
            ) from e
    exe = _find_dot()
    if exe is None:
        raise GraphvizNotFoundError(
            f"rendering the graph as {fmt} needs Graphviz's 'dot' program, which is not on "
            f"PATH (and the graphviz Python package is not installed). {INSTALL_HINT}"
        )
    proc = subprocess.run([exe, f"-T{fmt}"], input=source.encode("utf-8"),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"dot -T{fmt} failed with exit code {proc.returncode}: "
            f"{proc.stderr.decode('utf-8', 'replace').strip()}"
        )
    return proc.stdout


class Graph:
    """A drawn graph: ``.source`` is its DOT text; ``.render()`` makes a picture.

    Attributes
    ----------
    source : str
        The Graphviz DOT text.
    node_count : int
        How many graph nodes (grad_fns and leaves) the autograd graph has, drawn or not.
    """

    def __init__(self, source: str, node_count: int, drawn: int):
        self.source = source
        self.node_count = node_count
        self.drawn = drawn

    def pipe(self, format: str = "svg") -> bytes:
        """The picture as bytes (``dot -T<format>``)."""
        fmt = _check_format(format)
        return _pipe(self.source, fmt)

    def render(self, path, format: str | None = None) -> str:
        """Write the picture to ``path`` and return the path written.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write; ``.<format>`` is appended unless it already ends so.
        format : {"svg", "png", "pdf"}, optional
            Default: the suffix of ``path`` if it is one of these, else ``"svg"``.

        Raises
        ------
        GraphvizNotFoundError
            When Graphviz's ``dot`` program is not installed (says what to install).
        """
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lstrip(".").lower()
        fmt = _check_format(format if format is not None else
                            suffix if suffix in FORMATS else "svg")
        if suffix != fmt:
            path = f"{path}.{fmt}"
        data = _pipe(self.source, fmt)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def save(self, path) -> str:
        """Write the DOT text to ``path`` (no Graphviz needed); return the path."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return path

    def _repr_svg_(self):
        # Jupyter calls this to show the graph inline; without dot it falls back to text.
        try:
            return self.pipe("svg").decode("utf-8")
        except GraphvizNotFoundError as e:
            import warnings

            warnings.warn(str(e), RuntimeWarning, stacklevel=2)
            return None

    def __repr__(self) -> str:
        return (f"<retrograd.viz.Graph: {self.drawn} of {self.node_count} nodes drawn; "
                ".source is the DOT text, .render(path) draws it>")


def _check_format(format: str) -> str:
    fmt = str(format).lower()
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    return fmt


# --------------------------------------------------------------------------- DOT text
def _q(text: str) -> str:
    """A DOT string literal (lines centred)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(shape) -> str:
    shape = tuple(int(s) for s in shape)
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _wrap(text: str, width: int = 44) -> str:
    """Break a long rule onto lines so that boxes stay narrow."""
    words = text.split(" ")
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(lines)


def _data_of(saved):
    """The array of a saved entry (a Tensor or a SavedOutput), or None for a constant."""
    data = getattr(saved, "_data", None)
    if data is None and type(saved).__name__ == "SavedOutput":
        data = saved.data
    return data


def _outputs(outputs, names):
    """``[(label, Tensor or Node)]`` from a tensor, a node, a sequence or a dict."""
    if isinstance(outputs, dict):
        return list(outputs.items())
    if isinstance(outputs, (Tensor,)) or hasattr(outputs, "next"):
        outputs = [outputs]
    items = list(outputs)
    result = []
    for i, t in enumerate(items):
        name = names.get(id(t))
        if name is None:
            name = "output" if len(items) == 1 else f"output {i}"
        result.append((name, t))
    return result


def _root_of(obj):
    if isinstance(obj, Tensor):
        if obj._grad_fn is not None:
            return obj._grad_fn
        if obj._requires_grad:
            return accumulator_of(obj)
        return None
    return obj  # a Node


def draw(outputs, params=None, show_saved: bool = True, show_grads: bool = False,
         max_nodes: int | None = None, trace=None, title: str | None = None) -> Graph:
    """Draw the graph that produced ``outputs``.

    Parameters
    ----------
    outputs : Tensor, Node, sequence of them, or dict name -> Tensor
        Where the graph ends (usually the loss).
    params : dict, optional
        Names for tensors, e.g. ``dict(model.named_parameters())`` or ``{"x": x, "y": y}``.
        Leaves are labelled with them (else with shape and dtype); a named non-leaf tensor
        labels the edge that carries it.
    show_saved : bool
        Draw the values each node saved for backward (orange), or mark them freed.
    show_grads : bool
        Annotate each leaf (and each retain_grad() tensor) with its ``.grad``.
    max_nodes : int, optional
        Draw at most this many nodes (nearest the outputs first); the rest collapse into one
        summary node.
    trace : retrograd.autograd.tracing.Trace, optional
        Annotate with the traced values: the gradient that arrived at each node and the one
        sent along each edge (``Trace.draw()`` passes it).
    title : str, optional
        A caption above the legend.

    Returns
    -------
    Graph
        ``.source`` is DOT text; ``.render(path, format)`` and ``_repr_svg_()`` draw it.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.randn(1, 1, requires_grad=True)
    >>> z = (2 * x) ** 3
    >>> g = T.viz.draw({"z": z}, params={"x": x})
    >>> "PowBackward0" in g.source and "MulBackward0" in g.source
    True
    """
    names = {}  # id(tensor) -> name
    made = {}  # (grad_fn, output_nr) -> name of the non-leaf tensor it made
    keep = []  # keeps named tensors alive while ids are used as keys
    for key, t in (params or {}).items():
        if isinstance(t, Tensor):
            keep.append(t)
            names[id(t)] = key
            if t._grad_fn is not None:
                made[(t._grad_fn, t._nr)] = key
    outs = _outputs(outputs, names)

    # Breadth-first from the outputs, so max_nodes keeps the part nearest the loss.
    ids = {}
    order = []
    for _, obj in outs:
        root = _root_of(obj)
        if root is not None and root not in ids:
            ids[root] = len(order)
            order.append(root)
    i = 0
    while i < len(order):
        for child in order[i].next:
            if child is not None and child not in ids:
                ids[child] = len(order)
                order.append(child)
        i += 1
    total = len(order)
    limit = total if max_nodes is None else max(1, int(max_nodes))
    visible = order[:limit]

    steps, accs = _trace_index(trace)
    lines = [
        "digraph retrograd {",
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, labelloc=b, '
        'nodesep=0.3, ranksep=0.35];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
        'margin="0.12,0.06"];',
        '  edge [fontname="Helvetica", fontsize=9, color="#444444", fontcolor="#222222"];',
    ]
    emit = lines.append
    saved_count = 0
    small = total <= 200  # values and edge names only where they stay readable

    for n, node in enumerate(visible):
        nid = f"n{n}"
        if type(node) is AccumulateGrad:
            emit(f"  {nid} [label={_q(_leaf_label(node, names, show_grads, accs))}, "
                 f"fillcolor={LEAF_COLOR}{_hook_style_leaf(node)}];")
            continue
        emit(f"  {nid} [label={_q(_op_label(node, made, steps, show_grads, small))}, "
             f"fillcolor={OP_COLOR}{_hook_style_op(node)}];")
        if show_saved:
            saved = node.saved
            if saved is None:
                step = steps.get(node)
                what = ", ".join(k for k, _ in step.saved) if step is not None else ""
                freed = (f"saved {what} freed" if what else "saved values freed") + \
                    "\n(backward ran without retain_graph=True)"
                emit(f"  s{saved_count} [label={_q(freed)}, "
                     f'shape=note, style="filled,dashed", fillcolor={FREED_COLOR}, '
                     "fontsize=9];")
                emit(f"  s{saved_count} -> {nid} [style=dashed, arrowhead=none, "
                     "color=orange3];")
                saved_count += 1
            elif saved:
                slots = saved_slot_names(node)
                for k, s in enumerate(saved):
                    data = _data_of(s)
                    if data is None:
                        continue
                    slot = slots[k] if k < len(slots) else f"saved{k}"
                    label = _saved_label(slot, s, data, names, small)
                    emit(f"  s{saved_count} [label={_q(label)}, shape=box, "
                         f'style="filled", fillcolor={SAVED_COLOR}, fontsize=9];')
                    emit(f"  s{saved_count} -> {nid} [style=dashed, arrowhead=none, "
                         "color=orange3];")
                    saved_count += 1
        nrs = node.next_nr
        for k, child in enumerate(node.next):
            if child is None:
                continue
            c = ids[child]
            nr = nrs[k] if nrs else 0
            if c >= limit:
                continue  # drawn from the summary node below
            label = _edge_label(child, nr, made, names, steps.get(node), k, small)
            emit(f"  n{c} -> {nid}" + (f" [label={_q(label)}]" if label else "") + ";")

    if total > limit:
        hidden_into = []
        for n, node in enumerate(visible):
            if any(child is not None and ids[child] >= limit for child in node.next):
                hidden_into.append(n)
        emit(f"  more [label={_q(f'... {total - limit:,} more nodes not drawn' + chr(10) + f'(max_nodes={limit}; max_nodes=None draws all)')}, "  # noqa: E501
             'shape=box, style="dashed"];')
        for n in hidden_into:
            emit(f"  more -> n{n} [style=dashed];")

    for k, (name, obj) in enumerate(outs):
        root = _root_of(obj)
        label = _output_label(name, obj, show_grads, trace)
        emit(f"  o{k} [label={_q(label)}, fillcolor={OUTPUT_COLOR}];")
        if root is not None and ids[root] < limit:
            emit(f"  n{ids[root]} -> o{k};")

    legend = [title] if title else []
    legend.append("Arrows: the forward computation, from the inputs (top) to the output "
                  "(bottom).")
    legend.append("backward() walks them in reverse: from the output's gradient back to "
                  "each leaf's .grad.")
    if "penwidth=2" in "".join(lines):
        legend.append("Red border: hooks or retain_grad() registered there.")
    legend.append("In each derivative, g is the gradient arriving from the output side; a, b "
                  "are the op's inputs.")
    if show_saved:
        legend.append("Orange: values an op saved for its derivative; pink notes: saved values "
                      "that backward() freed (it keeps them only with retain_graph=True).")
    if trace is not None:
        legend.append("Traced backward: 'grad in' arrived at a node, 'grad back' was sent along "
                      "an edge towards the inputs.")
    emit(f"  label={_q(chr(10).join(legend))};")
    emit("}")
    return Graph("\n".join(lines) + "\n", total, len(visible))


# --------------------------------------------------------------------------- labels
def _trace_index(trace):
    if trace is None:
        return {}, {}
    steps = {}
    accs = {}
    for e in trace.events:
        if e.kind == "node" and e.node not in steps:
            steps[e.node] = e
        elif e.kind == "accumulate":
            first = accs.get(id(e.tensor))
            accs[id(e.tensor)] = (first[0] if first else e.before, e.after)
    return steps, accs


def _leaf_label(node, names, show_grads, accs) -> str:
    t = node.variable
    data = t._data
    name = names.get(id(t))
    lines = [name if name is not None else "leaf tensor",
             f"leaf {_shape(data.shape)} {data.dtype}, requires_grad",
             "AccumulateGrad: adds gradients into .grad"]
    extra = t._extra
    if extra is not None and extra.hooks:
        lines.append(f"hooks on this tensor: {len(extra.hooks)}")
    if id(t) in accs:
        before, after = accs[id(t)]
        lines.append(f".grad before: {format_value(before, 6)}")
        lines.append(f".grad after: {format_value(after, 6)}")
    elif show_grads:
        lines.append(_grad_text(t))
    return "\n".join(lines)


def _grad_text(t, who: str = "") -> str:
    g = t._grad
    if g is None:
        return f"{who}.grad = None"
    data = g._data
    import numpy as np

    norm = float(np.linalg.norm(np.asarray(data, dtype=np.float64).ravel()))
    text = f"{who}.grad {_shape(data.shape)}, norm {norm:.4g}"
    if data.size <= 6:
        text += f"\n= {format_value(data, 6)}"
    return text


def _op_label(node, made, steps, show_grads, small) -> str:
    name = type(node).__name__
    lines = [name]
    forward = describe_forward(name)
    if forward is not None:
        lines.append(f"forward: {forward}")
    if small:
        lines.append(_wrap("derivative: " + describe_rule(node)))
        constants = _constants(node, steps.get(node))
        if constants:
            lines.append(constants)
    hooks = node.hooks
    if hooks is not None:
        marks = []
        if hooks.pre:
            marks.append(f"{len(hooks.pre)} pre-hook(s)")
        if hooks.post:
            marks.append(f"{len(hooks.post)} post-hook(s)")
        n_tensor = sum(len(t) for t in hooks.tensor.values())
        if n_tensor:
            marks.append(f"{n_tensor} hook(s) on its output")
        if marks:
            lines.append("hooks: " + ", ".join(marks))
        for nr, ref in hooks.retain.items():
            t = ref()
            if t is not None:
                who = made.get((node, nr), "its output")
                lines.append(f"retain_grad(): {who} keeps .grad")
                if show_grads:
                    lines.append(_grad_text(t, who if who != "its output" else "output"))
    step = steps.get(node)
    if step is not None:
        lines.append(f"grad in: {format_many(step.arrived, 6)}")
    return "\n".join(lines)


def _constants(node, step) -> str:
    """Non-tensor inputs the node saved (the 2 of 2 * x, the 3 of y ** 3)."""
    slots = saved_slot_names(node)
    saved = node.saved
    if saved is None:  # freed by backward: the trace remembers them
        pairs = step.saved_inputs if step is not None else []
    else:
        pairs = saved_constants(node)
    parts = []
    for k, value in pairs:
        slot = slots[k] if k < len(slots) else f"saved{k}"
        parts.append(f"{slot} = {value}")
    parts += [f"{name} = {value}" for name, value in param_constants(node)]
    return ("constant " + ", ".join(parts)) if parts else ""


def _saved_label(slot, s, data, names, small) -> str:
    who = names.get(id(s)) if isinstance(s, Tensor) else None
    head = f"saved {slot}" + (f" = {who}" if who and who != slot else "")
    lines = [head, f"{_shape(data.shape)} {data.dtype}"]
    if small and data.size <= 4:
        lines.append(format_value(data, 4))
    return "\n".join(lines)


def _edge_label(child, nr, made, names, step, k, small) -> str:
    if not small:
        return ""
    if type(child) is AccumulateGrad:
        shape = child.out_shape
        name = names.get(id(child.variable))
    else:
        shape = child.out_shape[nr] if child.multi_output else child.out_shape
        name = made.get((child, nr))
        if name is None and child.multi_output:
            name = f"its output {nr}"
    text = (f"{name} " if name else "") + _shape(shape)
    if step is not None and k < len(step.sends):
        sent = step.sends[k].value
        if sent is not None:
            text += f"\ngrad back: {format_value(sent, 6)}"
    return text


def _output_label(name, obj, show_grads, trace) -> str:
    if not isinstance(obj, Tensor):
        return f"{name}\n(output of {type(obj).__name__})"
    data = obj._data
    lines = [name, f"output {_shape(data.shape)} {data.dtype}"]
    if obj._grad_fn is None and not obj._requires_grad:
        lines.append("does not require grad: nothing to draw")
    if trace is not None:
        for e in trace.events:
            if e.kind == "gradient" and e.output is obj:
                lines.append(f"backward gradient: {format_value(e.used, 6)}")
                break
    if show_grads and obj.retains_grad:
        lines.append(_grad_text(obj))
    return "\n".join(lines)


def _hook_style_leaf(node) -> str:
    extra = node.variable._extra
    if extra is not None and extra.hooks:
        return f", color={HOOK_COLOR}, penwidth=2"
    return ""


def _hook_style_op(node) -> str:
    hooks = node.hooks
    if hooks is not None and (hooks.pre or hooks.post or any(hooks.tensor.values())
                              or hooks.retain):
        return f", color={HOOK_COLOR}, penwidth=2"
    return ""


def draw_trace(self, params=None, **kwargs):
    """``Trace.draw()``: the graph of the traced backward (:func:`draw`), annotated.

    Edges carry the gradient sent along them, nodes the gradient that arrived,
    leaves their ``.grad``.  ``params`` names tensors as in ``draw``.
    """
    if params:
        self.name(params)
    outputs = self.outputs
    if not outputs:
        outputs = [s.node for s in self.steps[:1]]
    if not outputs:
        raise RuntimeError("this trace recorded no backward pass: run backward() inside "
                           "'with retrograd.autograd.trace() as t:' first")
    names = {key: t for key, t in self.names.values()}
    outs = {}
    unique = list({id(t): t for t in outputs}.values())  # backward twice: one output
    for t in unique:
        entry = self.names.get(id(t))
        unnamed = "output" if len(unique) == 1 else f"output {len(outs)}"
        outs[entry[0] if entry is not None else unnamed] = t
    kwargs.setdefault("show_grads", True)
    return draw(outs, params=names, trace=self, **kwargs)
