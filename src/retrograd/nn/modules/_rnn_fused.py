"""The LSTM's and GRU's gate arithmetic as one recorded node each (speed), for
nn/modules/rnn.py.

Composed from separate ops, one LSTM time step is ten nodes (sigmoid, chunk, slice, tanh,
three muls, an add...) and a GRU step thirteen, each paying dispatch and engine overhead
on small arrays; here each is one node.  Each derivative has two forms:

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
        # the activations are saved too (as tensors, so the engine frees them with the
        # rest once backward has run without retain_graph)
        ctx.save_for_backward(gates, c, *[make_tensor(v) for v in (i, f, g, o, tc)])
        return make_tensor(o * tc), make_tensor(c_new)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        if state.enabled:  # create_graph: differentiable formulas on the saved tensors
            return _backward_recorded(ctx, grad_h, grad_c)
        _, c, i, f, g, o, tc = [t._data for t in ctx.saved_tensors]
        gh, gc = grad_h._data, grad_c._data
        xp = namespace(gh)
        dc = gc + gh * o * (1 - tc * tc)
        d_gates = xp.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f),
                                  dc * i * (1 - g * g), gh * tc * o * (1 - o)], axis=1)
        return make_tensor(d_gates), make_tensor(dc * f)


def _backward_recorded(ctx, grad_h, grad_c):
    gates, c = ctx.saved_tensors[:2]
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    tc = (f * c + i * g).tanh()
    dc = grad_c + grad_h * o * (1 - tc * tc)
    d_gates = cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g),
                   grad_h * tc * o * (1 - o)], 1)
    return d_gates, dc * f


class GRUGates(Function):
    """``(gi, gh, h) -> h'`` with gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh (batch,
    3 * hidden) in PyTorch's order r, z, n: ``r, z = sigmoid(gi + gh)``,
    ``n = tanh(gi_n + r * gh_n)``, ``h' = (1 - z) * n + z * h``."""

    @staticmethod
    def forward(ctx, gi, gh, h):
        a, b, hd = gi._data, gh._data, h._data
        xp = namespace(a)
        hidden = hd.shape[1]
        rz = _sigmoid(xp, a[:, :2 * hidden] + b[:, :2 * hidden])
        r, z = rz[:, :hidden], rz[:, hidden:]
        gh_n = b[:, 2 * hidden:]
        n = xp.tanh(a[:, 2 * hidden:] + r * gh_n)
        ctx.save_for_backward(gi, gh, h, *[make_tensor(v) for v in (r, z, n)])
        return make_tensor(n + z * (hd - n))

    @staticmethod
    def backward(ctx, grad):
        if state.enabled:  # create_graph: differentiable formulas on the saved tensors
            return _gru_backward_recorded(ctx, grad)
        _, gh, h, r, z, n = [t._data for t in ctx.saved_tensors]
        gh_n = gh[:, 2 * h.shape[1]:]
        g = grad._data
        xp = namespace(g)
        dn = g * (1 - z) * (1 - n * n)
        dr = dn * gh_n * r * (1 - r)
        dz = g * (h - n) * z * (1 - z)
        return (make_tensor(xp.concatenate([dr, dz, dn], axis=1)),
                make_tensor(xp.concatenate([dr, dz, dn * r], axis=1)), make_tensor(g * z))


def _gru_backward_recorded(ctx, grad):
    gi, gh, h = ctx.saved_tensors[:3]
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    dn = grad * (1 - z) * (1 - n * n)
    dr = dn * h_n * r * (1 - r)
    dz = grad * (h - n) * z * (1 - z)
    return cat([dr, dz, dn], 1), cat([dr, dz, dn * r], 1), grad * z
