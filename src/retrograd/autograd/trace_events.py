"""What :class:`~retrograd.autograd.tracing.Trace` records: one event object per step
the engine reports, each holding host copies of the gradients it saw, and the short texts
(:func:`format_value`) that the table and the pictures show for them.
"""

from __future__ import annotations

import numpy as np

from .trace_rules import describe_rule, param_constants, saved_constants, saved_slot_names

__all__ = ["format_value", "format_many", "RootGradient", "NodeStep", "Send", "Sent",
           "Accumulation", "HookCall", "Failure", "Freed"]


# --------------------------------------------------------------------------- formatting
def _as_array(value):
    """A gradient as a NumPy array (raw arrays in first order, Tensors under create_graph)."""
    if value is None:
        return None
    data = getattr(value, "_data", value)
    try:
        return np.array(data, copy=True)
    except Exception:  # e.g. a CuPy array: bring it to the host first
        from ..backend import to_numpy

        return np.array(to_numpy(data), copy=True)


def format_value(a, max_elements: int = 8) -> str:
    """A short text for an array: its values when small, else shape, dtype and norm."""
    if a is None:
        return "None"
    a = np.asarray(a)
    if a.size <= max_elements:
        text = np.array2string(a, precision=4, separator=", ", suppress_small=True,
                               floatmode="maxprec")
        return " ".join(text.split())
    norm = float(np.linalg.norm(a.astype(np.float64).ravel()))
    return f"<{tuple(a.shape)} {a.dtype}, norm {norm:.4g}>"


def _shape_text(shape) -> str:
    if len(shape) == 1:
        return f"({int(shape[0])},)"
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"

def format_many(value, max_elements: int = 8) -> str:
    """An array, or a list of them (one per output of a multi-output node, or per hook arg)."""
    if isinstance(value, list):
        if len(value) == 1:
            return format_value(value[0], max_elements)
        return "; ".join(f"[{i}] {format_value(v, max_elements)}" for i, v in enumerate(value))
    return format_value(value, max_elements)



# --------------------------------------------------------------------------- events
class RootGradient:
    """How the ``gradient`` argument for output ``index`` became the starting gradient."""

    kind = "gradient"

    def __init__(self, index, output, given, used):
        self.index = index
        self.output = output
        self.given = None if given is None else (
            np.asarray(given, dtype=np.float64) if isinstance(given, (int, float))
            else _as_array(given))
        self.used = _as_array(used)
        self.how = self._how(given)

    def _how(self, given) -> str:
        shape = _shape_text(self.used.shape)
        if given is None:
            return f"default: ones{shape} (implicit, the output has one element)"
        if isinstance(given, (int, float)):
            return f"the number {given!r} filled to shape {shape}"
        gshape = self.given.shape
        if gshape == self.used.shape:
            return f"used as given, shape {shape}"
        if self.given.size == 1 and self.used.size == 1:
            return f"reshaped from {_shape_text(gshape)} to {shape} (one element)"
        return (f"broadcast from {_shape_text(gshape)} to {shape} (NumPy's rules: "
                f"{format_value(self.given)} is copied along the dims it lacks or has as 1)")


class NodeStep:
    """One node run by the engine: what arrived, the rule, what it sent to each input."""

    kind = "node"

    def __init__(self, node, arrived, saved):
        self.node = node
        self.name = type(node).__name__
        self.arrived = arrived
        self.saved = saved  # list of (slot name, text) snapshotted before the node ran
        self.saved_gone = node.saved is None
        # non-tensor inputs (the 2 of 2 * x) by input index, to name constant inputs
        self.saved_inputs = saved_constants(node)
        # numbers kept as parameters (the exponent 3 of y ** 3)
        self.constants = param_constants(node)
        self.rule = describe_rule(node)
        self.sends = []  # Send per input
        self.freed = False
        self.skipped = arrived is None

    @property
    def sent(self) -> list:
        """The gradient array sent to each input (None where the input needs none)."""
        return [s.value for s in self.sends]


class Send:
    """The gradient a node sent to its input ``index`` (before the engine conformed it)."""

    def __init__(self, index, target, value, reduced_to):
        self.index = index
        self.target = target  # the input's Node (AccumulateGrad for a leaf) or None
        self.value = value
        self.reduced_to = reduced_to  # the shape the engine sums it down to, if different


class Sent:
    """The moment a node hands its gradients on (after its hooks ran and buffers were freed)."""

    kind = "sent"

    def __init__(self, step):
        self.step = step


class Accumulation:
    """A gradient added into a tensor's ``.grad`` (a leaf, or a retain_grad() tensor)."""

    kind = "accumulate"

    def __init__(self, tensor, grad):
        self.tensor = tensor
        self.grad = _as_array(grad)
        self.before = _as_array(tensor._grad)
        self.after = None


class HookCall:
    """A hook the engine called: where, the gradient(s) it got and what it returned."""

    kind = "hook"

    def __init__(self, where, fn, given, returned):
        self.where = where
        self.fn = getattr(fn, "__qualname__", None) or repr(fn)
        self.given = _snap_many(given)
        self.returned = None if returned is None else _snap_many(returned)


class Failure:
    """The backward raised: the exception and the node that was running."""

    kind = "error"

    def __init__(self, node, error):
        self.node = node
        self.error = error


class Freed:
    """A node's saved buffers freed after it ran (backward without retain_graph)."""

    kind = "freed"

    def __init__(self, node, slots):
        self.node = node
        self.name = type(node).__name__
        self.slots = slots


def _snap_many(value):
    if isinstance(value, (tuple, list)):
        return [_as_array(v) for v in value]
    return _as_array(value)



def _saved_summary(node) -> list:
    saved = node.saved
    if not saved:
        return []
    names = saved_slot_names(node)
    out = []
    for i, s in enumerate(saved):
        if s is None:  # an input the derivative does not read was not saved (x of 2 * x)
            continue
        slot = names[i] if i < len(names) else f"saved{i}"
        data = getattr(s, "_data", None)
        if data is None:
            data = getattr(s, "data", None)  # SavedOutput
        if data is not None and hasattr(data, "shape"):
            out.append((slot, format_value(_as_array(data))))
        else:
            out.append((slot, repr(s)))
    return out
