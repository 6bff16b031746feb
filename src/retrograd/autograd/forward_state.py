"""Forward-mode AD's state, below the Tensor class: is a dual level open, and the hooks.

Every op reads ``fw.active`` once per call (a slot of one shared object): with no dual level
open nothing else of forward mode runs, so the hot path pays one attribute read.  The
propagation itself lives in ``retrograd.ops._jvp`` (above the ops), which installs its
functions here when the ops are assembled; the user API is ``autograd.forward_ad``.

A tangent lives on its tensor, in ``tensor._extra.fw_grad`` as ``(level, tangent)``: the
level is a token object, so a tangent left from a level that was exited is never read.
"""

from __future__ import annotations

__all__ = ["fw", "tangent_of", "set_tangent", "refuse_forward"]


class _ForwardState:
    __slots__ = ("active", "level", "index", "duals", "prune_at", "propagate",
                 "propagate_node", "propagate_multi", "propagate_outputs", "report",
                 "report_inplace")

    def __init__(self):
        self.active = False  # a level is open and propagation is not suspended
        self.level = None    # the open level's token (None: none open)
        self.index = 0       # its number (PyTorch's: 0, as levels do not nest)
        self.duals = []      # weak references to the tensors given a tangent at this level
        self.prune_at = 1024  # drop the dead ones when there are this many (a long loop)
        # installed by retrograd.ops._jvp
        self.propagate = None       # (op, inputs, out, params, extras)
        self.propagate_node = None  # (node_cls, inputs, out, params, extras)
        self.propagate_multi = None  # (node_cls, x, outs, params, saved)
        self.propagate_outputs = None  # (node_cls, inputs, outs, params, saved)
        # installed by retrograd.autograd.forward_trace: tells an active autograd.trace()
        # about one op's tangents (op, grad_fn, inputs, tangents, outputs, out_tangents, how)
        self.report = None
        self.report_inplace = None  # (x): x took the last reported op's result in place


fw = _ForwardState()


def tangent_of(t):
    """``t``'s tangent at the open level, or None."""
    extra = t._extra
    if extra is None:
        return None
    entry = extra.fw_grad
    if entry is None or entry[0] is not fw.level or fw.level is None:
        return None
    return entry[1]


def set_tangent(t, tangent) -> None:
    """Give ``t`` the tangent ``tangent`` at the open level (None removes it)."""
    import weakref

    extra = t._extra_state()
    if tangent is None:
        extra.fw_grad = None
        return
    if extra.fw_grad is None or extra.fw_grad[0] is not fw.level:
        fw.duals.append(weakref.ref(t))
        if len(fw.duals) >= fw.prune_at:
            fw.duals = [r for r in fw.duals if r() is not None]
            fw.prune_at = 2 * len(fw.duals) + 1024
    extra.fw_grad = (fw.level, tangent)


def refuse_forward(op, *tensors, not_yet=False) -> None:
    """Raise PyTorch's NotImplementedError when one of ``tensors`` (None allowed) carries a
    tangent: ops whose forward derivative PyTorch does not define (histogram, bincount's
    weights, unique...) refuse a dual rather than give an output with no tangent.  Callers
    check ``fw.active`` first, so outside a dual level this costs nothing."""
    if not any(t is not None and getattr(t, "_extra", None) is not None
               and tangent_of(t) is not None for t in tensors):
        return
    if not_yet:
        raise NotImplementedError(
            f"Trying to use forward AD with {op} that does not support it because it has not "
            "been implemented yet. (Its input is a dual tensor: take its primal with "
            "forward_ad.unpack_dual(x).primal, or differentiate in reverse mode.)")
    raise NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it. (Its input is a dual "
        "tensor: take its primal with forward_ad.unpack_dual(x).primal.)")
