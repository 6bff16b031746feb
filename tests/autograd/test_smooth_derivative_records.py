"""tanh's and log_softmax's first derivatives are records of their own under create_graph,
as PyTorch's (TanhBackwardBackward0, LogSoftmaxBackwardDataBackward0) instead of the three or
four nodes that composing their formulas recorded: the node names and edges are PyTorch's,
second-order gradients (through the incoming gradient and through the op's output) match
torch's, and the records are differentiable again (gradcheck of the derivative, and
gradgradcheck: third order)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

OPS = {
    "tanh": lambda m, x: m.tanh(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "log_softmax_1": lambda m, x: m.log_softmax(x, 1),
    "log_softmax_0": lambda m, x: m.nn.functional.log_softmax(x, dim=0),
    "log_softmax_neg": lambda m, x: m.log_softmax(x, -1),
}

_rng = np.random.default_rng(0)
X, W, GG = (_rng.standard_normal((2, 3)) for _ in range(3))


def _names(node):
    return [type(f).__name__ if f is not None else None for f, _ in node.next_functions]


def _run(m, name, w_requires_grad):
    x = m.tensor(X, dtype=m.float64, requires_grad=True)
    w = m.tensor(W, dtype=m.float64, requires_grad=w_requires_grad)
    g, = m.autograd.grad(OPS[name](m, x), [x], w, create_graph=True)
    node = g.grad_fn
    wanted = [x, w] if w_requires_grad else [x]
    second = m.autograd.grad(g, wanted, m.tensor(GG, dtype=m.float64), create_graph=True)
    return (type(node).__name__.replace("torch::autograd::", ""),
            [n.replace("torch::autograd::", "") if n else n for n in _names(node)],
            g.detach().numpy(), [s.detach().numpy() for s in second],
            [type(s.grad_fn).__name__ for s in second])


@pytest.mark.parametrize("w_requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(OPS))
def test_derivative_record_as_in_pytorch(name, w_requires_grad):
    got, want = _run(retrograd, name, w_requires_grad), _run(torch, name, w_requires_grad)
    assert got[0] == want[0] and got[1] == want[1] and got[4] == want[4]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)
    for a, b in zip(got[3], want[3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(OPS))
def test_derivative_record_is_differentiable(name):
    def first(x, w):
        with retrograd.enable_grad():  # (gradcheck evaluates its differences under no_grad)
            x = x if x.requires_grad else x.detach().requires_grad_()
            g, = retrograd.autograd.grad(OPS[name](retrograd, x), [x], w, create_graph=True)
        return g

    x = retrograd.tensor(X, dtype=retrograd.float64, requires_grad=True)
    w = retrograd.tensor(W, dtype=retrograd.float64, requires_grad=True)
    assert gradcheck(first, (x, w))
    assert gradgradcheck(first, (x, w))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_first_order_values_unchanged(name, dtype):
    # the record's forward and the first-order array path compute the same expression
    x = retrograd.tensor(X, dtype=getattr(retrograd, dtype), requires_grad=True)
    w = retrograd.tensor(W, dtype=getattr(retrograd, dtype))
    plain, = retrograd.autograd.grad(OPS[name](retrograd, x), [x], w)
    recorded, = retrograd.autograd.grad(OPS[name](retrograd, x), [x], w, create_graph=True)
    assert plain.dtype == recorded.dtype
    assert np.array_equal(plain.numpy(), recorded.detach().numpy())


def _batched(m, name):
    x = m.tensor(X, dtype=m.float64, requires_grad=True)
    w = m.tensor(W, dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(OPS[name](m, x), [x], w, create_graph=True)
    gg = m.tensor(np.stack([GG, 2 * GG + 1]), dtype=m.float64)
    return [t.detach().numpy() for t in m.autograd.grad(g, [x, w], gg, is_grads_batched=True)]


@pytest.mark.filterwarnings("error")  # (no per-sample fallback: each record has its rule)
@pytest.mark.parametrize("name", sorted(OPS))
def test_batched_gradients_through_the_records(name):
    for a, b in zip(_batched(retrograd, name), _batched(torch, name)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
