"""Recurrent arithmetic as single recorded nodes (speed), for nn/modules/rnn.py.

Composed from separate ops, one LSTM time step is ten nodes (sigmoid, chunk, slice, tanh,
three muls, an add...) and a GRU step thirteen, each paying dispatch and engine overhead
on small arrays.  Here:

* ``LSTMDirection``: a whole direction of an LSTM layer over a padded batch is one node
  (the loop runs on arrays; the weight gradients are one matmul over all steps);
* ``LSTMGates`` / ``GRUGates``: one time step's gate arithmetic is one node (packed input,
  whose batch shrinks from step to step, and the cells).

Each derivative has two forms:

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


# ------------------------------------------------------------------ a whole LSTM direction
class _Arrays:
    """The few array functions the LSTM recurrence needs, on NumPy/CuPy arrays."""

    def __init__(self, xp):
        self.xp = xp

    def sigmoid(self, a):
        return _sigmoid(self.xp, a)

    def tanh(self, a):
        return self.xp.tanh(a)

    def cat(self, parts, axis):
        return self.xp.concatenate(parts, axis=axis)

    def stack(self, parts):
        return self.xp.stack(parts)


class _Tensors:
    """The same functions as retrograd ops (recorded: used under create_graph)."""

    @staticmethod
    def sigmoid(a):
        return a.sigmoid()

    @staticmethod
    def tanh(a):
        return a.tanh()

    @staticmethod
    def cat(parts, axis):
        return cat(parts, axis)

    @staticmethod
    def stack(parts):
        from ...ops.shape import stack

        return stack(parts)


def _lstm_forward(lib, gi, h, c, w_hh, w_hr, steps, reverse):
    """The recurrence over ``steps`` (time, batch, 4 * hidden) slices of ``gi``; returns the
    outputs per step (in time order) and what the backward reads: eight sequences (i, f,
    g, o, c_prev, tanh(c), h_prev, h before projection), each indexed by time step."""
    hidden = c.shape[1]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    outs, acts = [None] * steps, [None] * steps
    for t in order:
        gates = gi[t] + h @ w_hh.T
        s = lib.sigmoid(gates)
        i, f, o = s[:, :hidden], s[:, hidden:2 * hidden], s[:, 3 * hidden:]
        g = lib.tanh(gates[:, 2 * hidden:3 * hidden])
        c_prev, h_prev = c, h
        c = f * c + i * g
        tc = lib.tanh(c)
        h_raw = o * tc
        h = h_raw if w_hr is None else h_raw @ w_hr.T
        outs[t] = h
        acts[t] = (i, f, g, o, c_prev, tc, h_prev, h_raw)
    return outs, tuple(zip(*acts)), h, c


def _lstm_backward(lib, acts, grad_out, grad_h, grad_c, w_hh, w_hr, reverse):
    """Backpropagation through time; the weight gradients are one matmul each over all
    steps, not one per step."""
    steps = len(acts[0])
    order = range(steps) if reverse else range(steps - 1, -1, -1)
    i_s, f_s, g_s, o_s, c_s, tc_s = acts[:6]
    dh_next, dc_next = grad_h, grad_c
    d_gates, d_proj = [None] * steps, [None] * steps
    for t in order:
        i, f, g, o, c_prev, tc = i_s[t], f_s[t], g_s[t], o_s[t], c_s[t], tc_s[t]
        dh = grad_out[t] + dh_next
        d_proj[t] = dh
        d_raw = dh if w_hr is None else dh @ w_hr
        dc = dc_next + d_raw * o * (1 - tc * tc)
        dg = lib.cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                      d_raw * tc * o * (1 - o)], 1)
        d_gates[t] = dg
        dh_next, dc_next = dg @ w_hh, dc * f
    dG = lib.cat(d_gates, 0)  # (time * batch, 4 * hidden)
    d_w_hh = dG.T @ lib.cat(acts[6], 0)
    d_w_hr = None
    if w_hr is not None:
        d_w_hr = lib.cat(d_proj, 0).T @ lib.cat(acts[7], 0)
    return dG, dh_next, dc_next, d_w_hh, d_w_hr


class LSTMDirection(Function):
    """One direction of one LSTM layer over a padded batch as ONE node:
    ``(gi (time * batch, 4 * hidden), h0, c0, w_hh[, w_hr]) -> (out, h_n, c_n)``.

    Forward and first-order backward are array loops (no node per step; the weight
    gradients are one matmul over all steps); under ``create_graph`` the backward runs the
    same code on retrograd ops, so higher orders work."""

    @staticmethod
    def forward(ctx, gi, h0, c0, w_hh, w_hr, reverse):
        steps = gi.shape[0] // h0.shape[0]
        lib = _Arrays(namespace(gi._data))
        gi_steps = gi._data.reshape(steps, h0.shape[0], -1)
        outs, acts, h, c = _lstm_forward(lib, gi_steps, h0._data, c0._data, w_hh._data,
                                         None if w_hr is None else w_hr._data, steps, reverse)
        ctx.reverse = reverse
        ctx.has_proj = w_hr is not None
        # the activations too, one (time, batch, n) array per kind (as tensors: freed with
        # the rest after a backward without retain_graph)
        ctx.save_for_backward(gi, h0, c0, w_hh, w_hr,
                              *[make_tensor(lib.stack(kind)) for kind in acts])
        return make_tensor(lib.cat(outs, 0)), make_tensor(h), make_tensor(c)

    @staticmethod
    def backward(ctx, grad_out, grad_h, grad_c):
        saved = ctx.saved_tensors
        gi, h0, c0, w_hh, w_hr = saved[:5]
        steps = gi.shape[0] // h0.shape[0]
        if state.enabled:  # create_graph: recompute the activations as recorded tensors
            lib = _Tensors()
            _, acts, _, _ = _lstm_forward(lib, gi.reshape(steps, h0.shape[0], -1), h0, c0,
                                          w_hh, w_hr, steps, ctx.reverse)
            g_out = grad_out.reshape(steps, h0.shape[0], -1)
            d = _lstm_backward(lib, acts, g_out, grad_h, grad_c, w_hh, w_hr, ctx.reverse)
            return (*d, None)
        lib = _Arrays(namespace(grad_out._data))
        acts = tuple(v._data for v in saved[5:])
        g_out = grad_out._data.reshape(steps, h0.shape[0], -1)
        d = _lstm_backward(lib, acts, g_out, grad_h._data, grad_c._data, w_hh._data,
                           None if w_hr is None else w_hr._data, ctx.reverse)
        return (*[None if v is None else make_tensor(v) for v in d], None)
