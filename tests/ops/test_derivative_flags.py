"""First derivatives of prelu and hardsigmoid under ``create_graph``, as PyTorch's: prelu's
is its own record (PreluKernelBackwardBackward0) that requires grad whenever the input does,
with PyTorch's second derivatives (cut at x >= 0); hardsigmoid's requires grad too but has no
derivative (a node called NotImplemented whose backward raises).  Issue 7: both gave a
derivative that did not require grad, so a second backward raised in retrograd only."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _edges(node):
    return [type(f).__name__ if f is not None else None for f, _ in node.next_functions]


def _prelu_run(m, x_vals, w_vals, w_grad, g_grad):
    x = m.tensor(x_vals, dtype=m.float64, requires_grad=True)
    w = m.tensor(w_vals, dtype=m.float64, requires_grad=w_grad)
    go = m.tensor(np.linspace(1.0, 2.0, x.numel()).reshape(tuple(x.shape)).tolist(),
                  dtype=m.float64, requires_grad=g_grad)
    y = m.nn.functional.prelu(x, w)
    wrt = [x, w] if w_grad else [x]
    gs = m.autograd.grad(y, wrt, go, create_graph=True)
    flags = [(g.requires_grad, type(g.grad_fn).__name__) for g in gs]
    loss = sum((g * g).sum() for g in gs)
    targets = [x] + ([w] if w_grad else []) + ([go] if g_grad else [])
    second = m.autograd.grad(loss, targets, allow_unused=True)
    return flags, [g.tolist() for g in gs], [None if s is None else s.tolist() for s in second]


@pytest.mark.parametrize("g_grad", [False, True])
@pytest.mark.parametrize("w_grad", [False, True])
@pytest.mark.parametrize("x_vals,w_vals", [
    ([-1.0, 2.0, 0.0], [0.25]),
    (1.0, [0.25]),
    ([[[-1.0, 0.0], [2.0, -3.0]], [[0.5, -0.5], [0.0, 1.0]]], [0.25, -2.0]),
])
def test_prelu_derivative_as_pytorch(x_vals, w_vals, w_grad, g_grad):
    ours = _prelu_run(retrograd, x_vals, w_vals, w_grad, g_grad)
    theirs = _prelu_run(torch, x_vals, w_vals, w_grad, g_grad)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1] + ours[2], theirs[1] + theirs[2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_prelu_first_derivative_node_edges():
    for m in (retrograd, torch):
        x = m.tensor([-1.0, 2.0], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.prelu(x, m.tensor([0.25], dtype=m.float64)).sum(),
                             [x], create_graph=True)
        assert type(g.grad_fn).__name__ == "PreluKernelBackwardBackward0"
        assert _edges(g.grad_fn)[1] == "AccumulateGrad"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
def test_hardsigmoid_derivative_requires_grad_and_raises_as_pytorch(dtype, inplace):
    def run(m):
        x = m.tensor([-4.0, 0.5, 3.0, -3.0, 2.9], dtype=getattr(m, dtype), requires_grad=True)
        y = m.nn.functional.hardsigmoid(x * 1, inplace=inplace)
        g, = m.autograd.grad(y.sum(), [x], create_graph=True)
        try:
            m.autograd.grad(g.sum(), [x])
            raised = None
        except RuntimeError as e:
            raised = str(e).split(" is not implemented")[0]
        return g.tolist(), str(g.dtype).rsplit(".")[-1], g.requires_grad, raised

    ours, theirs = run(retrograd), run(torch)
    assert ours == theirs
    assert theirs[3] == "derivative for aten::hardsigmoid_backward"
