"""The LSTM's gate arithmetic as one recorded node (speed), for nn/modules/rnn.py.

Composed from separate ops, one LSTM time step is ten nodes (sigmoid, chunk, slice, tanh,
three muls, an add...), each paying dispatch and engine overhead on small arrays; this is
one node.  Its derivative has two forms:

* first order (the engine runs without recording): NumPy/CuPy arithmetic on the arrays the
  forward kept, no re-computation;
* ``create_graph=True``: the same formulas written with retrograd ops on the saved inputs, so
  double backward and every higher order work (tested by gradgradcheck in tests/nn).
"""

from __future__ import annotations

from ...autograd.function import Function
from ...autograd.grad_mode import state
from ...backend import namespace
from ...ops.shape import cat
from ...tensor import make_tensor


def _sigmoid(xp, a):
    # tanh form: no overflow warning for large negative inputs, as accurate as 1/(1+e^-a);
    # in place on one new array (these arrays are small: passes and allocations dominate)
    s = xp.multiply(a, 0.5)
    xp.tanh(s, out=s)
    s *= 0.5
    s += 0.5
    return s


class LSTMGates(Function):
    """``(gates, c) -> (h, c')`` with gates (batch, 4 * hidden) in PyTorch's order i, f, g, o:
    ``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)``, ``h = sigmoid(o) * tanh(c')``."""

    @staticmethod
    def forward(ctx, gates, c):
        a, cd = gates._data, c._data
        xp = namespace(a)
        hidden = cd.shape[1]
        s = _sigmoid(xp, a)  # all four gates in one pass; g's quarter is not used
        i, f, o = s[:, :hidden], s[:, hidden:2 * hidden], s[:, 3 * hidden:]
        g = xp.tanh(a[:, 2 * hidden:3 * hidden])
        c_new = f * cd + i * g
        tc = xp.tanh(c_new)
        ctx.save_for_backward(gates, c)
        ctx.activations = (i, f, g, o, cd, tc)
        return make_tensor(o * tc), make_tensor(c_new)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        if state.enabled:  # create_graph: differentiable formulas on the saved tensors
            return _backward_recorded(ctx, grad_h, grad_c)
        ctx.saved_tensors  # noqa: B018 - raises as PyTorch if freed or modified in place
        i, f, g, o, c, tc = ctx.activations
        gh, gc = grad_h._data, grad_c._data
        xp = namespace(gh)
        dc = gc + gh * o * (1 - tc * tc)
        d_gates = xp.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f),
                                  dc * i * (1 - g * g), gh * tc * o * (1 - o)], axis=1)
        return make_tensor(d_gates), make_tensor(dc * f)


def _backward_recorded(ctx, grad_h, grad_c):
    gates, c = ctx.saved_tensors
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    tc = (f * c + i * g).tanh()
    dc = grad_c + grad_h * o * (1 - tc * tc)
    d_gates = cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g),
                   grad_h * tc * o * (1 - o)], 1)
    return d_gates, dc * f
