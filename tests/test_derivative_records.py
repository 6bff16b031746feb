"""The first derivative of a piecewise-linear op is an op of its own, as in PyTorch
(threshold_backward, leaky_relu_backward...): under ``create_graph`` it requires grad
whenever the input does and its node has PyTorch's name and edges, so a second backward
through it gives zeros (not "does not require grad"), as torch's does."""

from __future__ import annotations

import pytest

import retrograd

torch = pytest.importorskip("torch")

OPS = {
    "relu": lambda m, x: m.relu(x),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.2),
    "leaky_relu_": lambda m, x: m.nn.functional.leaky_relu(x * 1, 0.2, inplace=True),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x, -0.5, 0.5),
    "relu6": lambda m, x: m.nn.functional.relu6(x * 4),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 0.5, 2.0),
    "hardshrink": lambda m, x: m.nn.functional.hardshrink(x, 0.5),
    "softshrink": lambda m, x: m.nn.functional.softshrink(x, 0.5),
    "rrelu_eval": lambda m, x: m.nn.functional.rrelu(x, 0.1, 0.3, training=False),
}


def _run(m, name, grad_requires_grad):
    x = m.tensor([1.0, -1.0, 0.3, -0.2], dtype=m.float64, requires_grad=True)
    w = m.tensor([2.0, 3.0, -1.0, 0.5], dtype=m.float64, requires_grad=grad_requires_grad)
    y = OPS[name](m, x)
    g, = m.autograd.grad(y, [x], w, create_graph=True)
    node = g.grad_fn
    edges = [type(f).__name__ if f is not None else None for f, _ in node.next_functions]
    (g * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum().backward()
    return (g.requires_grad, type(node).__name__, edges, g.tolist(), x.grad.tolist(),
            None if w.grad is None else w.grad.tolist())


@pytest.mark.parametrize("grad_requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(OPS))
def test_first_derivative_is_a_record_as_in_pytorch(name, grad_requires_grad):
    assert _run(retrograd, name, grad_requires_grad) == _run(torch, name, grad_requires_grad)
