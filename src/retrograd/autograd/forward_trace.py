"""The forward-mode pass in ``autograd.trace()``: tangents along each edge.

While a :class:`~retrograd.autograd.tracing.Trace` is active and a dual level is open, the
forward-mode machinery reports to it: ``make_dual`` (a :class:`DualMade`: the input and its
tangent), every op that propagated a tangent (a :class:`ForwardStep`: the tangent of each
input, the tangent it gave each output, and how: a hand-written rule or the transpose of
the op's VJP) and every ``unpack_dual`` that read a tangent (an :class:`Unpacked`).  The
table narrates them and ``Trace.draw()`` / ``viz.draw(..., trace=t)`` draw the forward graph
with the tangent on each edge (``viz.forward.draw_forward``).

Nothing here runs unless a trace is active: the reporters read ``state.tracer`` once.
"""

from __future__ import annotations

from .forward_state import fw, tangent_of
from .grad_mode import state
from .trace_events import _as_array, _shape_text, format_value
from .trace_rules import RULES

__all__ = ["DualMade", "ForwardStep", "Unpacked", "FORWARD_RULES", "describe_jvp",
           "report_dual", "report_step", "report_unpack", "report_inplace"]

#: grad_fn name -> the JVP in words (t_a, t_b: the tangents of the inputs a, b; y: the
#: output).  Ops not listed say how their tangent was derived (see :func:`describe_jvp`).
FORWARD_RULES: dict[str, str] = {
    "AddBackward0": "t_y = t_a + alpha*t_b",
    "AddBackward1": "t_y = t_a",
    "SubBackward0": "t_y = t_a - alpha*t_b",
    "SubBackward1": "t_y = t_a",
    "NegBackward0": "t_y = -t_a",
    "MulBackward0": "t_y = t_a*b + a*t_b (product rule)",
    "MulBackward1": "t_y = c*t_a",
    "DivBackward0": "t_y = t_a/b - a*t_b/b**2",
    "PowBackward0": "t_y = p*a**(p-1) * t_a",
    "ExpBackward0": "t_y = y * t_a",
    "LogBackward0": "t_y = t_a / a",
    "SqrtBackward0": "t_y = t_a / (2*y)",
    "SinBackward0": "t_y = cos(a) * t_a",
    "CosBackward0": "t_y = -sin(a) * t_a",
    "TanhBackward0": "t_y = (1 - y**2) * t_a",
    "SigmoidBackward0": "t_y = y*(1 - y) * t_a",
    "ReluBackward0": "t_y = t_a where y > 0, else 0",
    "SumBackward0": "t_y = sum(t_a)",
    "SumBackward1": "t_y = sum(t_a, dim)",
    "MeanBackward0": "t_y = mean(t_a)",
    "MeanBackward1": "t_y = mean(t_a, dim)",
    "MmBackward0": "t_y = t_a @ b + a @ t_b",
    "MvBackward0": "t_y = t_A @ v + A @ t_v",
    "DotBackward0": "t_y = dot(t_a, b) + dot(a, t_b)",
    "SoftmaxBackward0": "t_y = y * (t_a - sum(y * t_a, dim))",
    "LogSoftmaxBackward0": "t_y = t_a - sum(softmax(a) * t_a, dim)",
    "CatBackward0": "t_y = cat(t_a, t_b, ...)",
    "StackBackward0": "t_y = stack(t_a, t_b, ...)",
}


def describe_jvp(grad_fn_name: str, how: str) -> str:
    """The JVP of an op in words; ``how`` is "rule" (hand-written) or "transpose"."""
    text = FORWARD_RULES.get(grad_fn_name)
    if text is not None:
        return text
    if how == "view":
        return "a view: t_y is the same view of t_a"
    if how == "transpose":
        return ("t_y = J t: the transpose of its backward rule, d<vjp(g), t>/dg "
                f"({RULES[grad_fn_name][1]})" if grad_fn_name in RULES else
                "t_y = J t: the transpose of its backward rule, d<vjp(g), t>/dg")
    return "t_y = J t (a hand-written rule in retrograd.ops._jvp)"


class DualMade:
    """``make_dual(primal, tangent)``: where a tangent enters the forward pass."""

    kind = "dual"

    def __init__(self, primal, dual, tangent):
        self.primal = primal
        self.dual = dual
        self.tangent = _as_array(tangent)

    def rows(self, trace) -> list:
        who = trace._tensor_label(self.primal, leaf=self.primal._grad_fn is None)
        return [("dual", f"make_dual({who})",
                 f"tangent {format_value(self.tangent)} (shape "
                 f"{_shape_text(self.tangent.shape)})")]


class ForwardStep:
    """One op that propagated tangents: what each input brought, what each output got."""

    kind = "forward"

    def __init__(self, op_name, grad_fn_name, inputs, in_tangents, outputs, out_tangents, how):
        self.op = op_name
        self.name = grad_fn_name
        self.inputs = list(inputs)
        self.in_tangents = [_as_array(t) for t in in_tangents]
        self.outputs = list(outputs)
        self.out_tangents = [_as_array(t) for t in out_tangents]
        self.how = how
        self.rule = describe_jvp(grad_fn_name, how)

    @property
    def tangent(self):
        """The output's tangent (the first output's, for a multi-output op)."""
        return self.out_tangents[0]

    def rows(self, trace) -> list:
        label = self.op + (f" ({self.name})" if self.name else "")
        made = trace._made_name_of(self.outputs)
        if made:
            label += f" makes {made}"
        detail = []
        for i, (x, t) in enumerate(zip(self.inputs, self.in_tangents)):
            if t is None:
                continue
            who = trace._tensor_label(x) if hasattr(x, "_data") else f"input {i}"
            detail.append(f"tangent in from {who}: {format_value(t)}")
        detail.append(f"rule: {self.rule}")
        for i, t in enumerate(self.out_tangents):
            if t is None:
                continue
            which = "" if len(self.out_tangents) == 1 else f" [{i}]"
            detail.append(f"tangent out{which}: {format_value(t)}")
        return [("forward", label, detail)]


class Unpacked:
    """``unpack_dual(y)`` read a tangent: where the forward pass ends."""

    kind = "unpack"

    def __init__(self, tensor, tangent):
        self.tensor = tensor
        self.tangent = _as_array(tangent)

    def rows(self, trace) -> list:
        return [("unpack", f"unpack_dual({trace._tensor_label(self.tensor)})",
                 f"tangent {format_value(self.tangent)}")]


# ------------------------------------------------------------------------ the reporters
def report_dual(primal, dual, tangent) -> None:
    tracer = state.tracer
    if tracer is not None:
        tracer.record(DualMade(primal, dual, tangent))


def report_step(op_name, grad_fn_name, inputs, in_tangents, outputs, out_tangents,
                how) -> None:
    tracer = state.tracer
    if tracer is not None:
        tracer.record(ForwardStep(op_name, grad_fn_name, inputs, in_tangents, outputs,
                                  out_tangents, how))


def report_unpack(tensor, tangent) -> None:
    tracer = state.tracer
    if tracer is not None:
        tracer.record(Unpacked(tensor, tangent))


def report_inplace(x) -> None:
    """``x`` took the result of the last op reported (an in-place op on a dual computes out
    of place, then writes): that step's output is ``x`` itself, named with a ``_``."""
    tracer = state.tracer
    if tracer is None:
        return
    for e in reversed(tracer._events):
        if e.kind == "forward":
            e.outputs = [x]
            e.op = e.op if e.op.endswith("_") else e.op + "_"
            t = tangent_of(x)
            e.out_tangents = [_as_array(t) if t is not None else None]
            return


fw.report = report_step  # the op machinery (ops/_jvp.py, a layer below) calls it
fw.report_inplace = report_inplace  # ... and ops/inplace.py
