"""Custom Function extras against PyTorch: setup_context style, mark_dirty,
mark_non_differentiable, set_materialize_grads, once_differentiable, needs_input_grad,
gradients for non-tensor inputs, the legacy call, vmap attributes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd.function import once_differentiable


def _once(m):
    return once_differentiable if m is T else m.autograd.function.once_differentiable


def test_setup_context_style(torch):
    results = []
    for m in (T, torch):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.k = k
                ctx.save_for_backward(x, output)
                ctx.seen = (type(inputs).__name__, len(inputs), output.requires_grad)

            @staticmethod
            def backward(ctx, g):
                x, out = ctx.saved_tensors
                return g * ctx.k + 0 * out / (x + 10), None

        x = m.tensor([1.0, -2.0], dtype=m.float64, requires_grad=True)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        results.append((y.grad_fn.name(), y.grad_fn.seen, x.grad.tolist()))
    assert results[0] == results[1]


def test_mark_dirty_returns_the_same_tensor_one_version_on(torch):
    results = []
    for m in (T, torch):
        class AddOne(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        v = b._version
        c = AddOne.apply(b)
        (c * c).sum().backward()
        results.append((c is b, c._version - v, c.grad_fn.name(), c.tolist(), a.grad.tolist()))
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            AddOne.apply(m.ones(2, requires_grad=True))
    assert results[0] == results[1]


def test_mark_non_differentiable(torch):
    results = []
    for m in (T, torch):
        class SortWithIndex(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, idx = x.sort()
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(idx)
                return values, idx

            @staticmethod
            def backward(ctx, g, g_idx):
                (idx,) = ctx.saved_tensors
                out = m.zeros_like(g)  # noqa: B023 - called within this iteration
                out[idx] = g
                return out

        x = m.tensor([3.0, 1.0, 2.0], requires_grad=True)
        values, idx = SortWithIndex.apply(x)
        (values * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        results.append((values.requires_grad, idx.requires_grad, idx.grad_fn, x.grad.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(torch, materialize):
    results = []
    for m in (T, torch):
        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                ctx.seen = (g1 is None, g2 is None)
                total = g1 * 2 if g1 is not None else 0
                if g2 is not None:
                    total = total + g2 * 3
                return total

        x = m.ones(2, requires_grad=True)
        y1, _ = Two.apply(x)
        y1.sum().backward()
        results.append((y1.grad_fn.seen, x.grad.tolist()))
    assert results[0] == results[1]


def test_once_differentiable(torch):
    results = []
    for m in (T, torch):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            @_once(m)
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                ctx.recording = m.is_grad_enabled()  # noqa: B023 - within this iteration
                return 3 * x ** 2 * g

        x = m.tensor([2.0], dtype=m.float64, requires_grad=True)
        y = Cube.apply(x)
        (g,) = m.autograd.grad(y, x, create_graph=True)
        # the incoming gradient needs none: the result is returned as is, a constant
        first = (g.item(), y.grad_fn.recording, g.requires_grad)
        with pytest.raises(RuntimeError) as info:
            g.backward()
        message = str(info.value).split(":")[0]
        # one that needs a gradient: differentiating the result raises PyTorch's error
        v = m.tensor([1.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(Cube.apply(x), x, grad_outputs=v, create_graph=True)
        with pytest.raises(RuntimeError) as info:
            g.backward()
        results.append((first, message, g.requires_grad, str(info.value)))
    assert results[0] == results[1]


def test_needs_input_grad_and_non_tensor_gradients(torch):
    results = []
    for m in (T, torch):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                ctx.flags = ctx.needs_input_grad
                return x * k + y

            @staticmethod
            def backward(ctx, g):
                return g, g, g  # a gradient for the number k: refused

        x = m.ones(2, requires_grad=True)
        y = m.ones(2)
        out = F.apply(x, 2.0, y)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        results.append((out.grad_fn.flags, type(info.value).__name__))
    assert results[0] == results[1] == ((True, False, False), "RuntimeError")


def test_legacy_call_and_vmap_attributes(torch):
    results = []
    for m in (T, torch):
        class Id(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as info:
                Id()(m.ones(1))
        with pytest.raises(NotImplementedError) as vinfo:
            Id.vmap(None, (0,), m.ones(1))
        results.append((str(info.value), m.autograd.Function.generate_vmap_rule,
                        str(vinfo.value)))
    assert results[0] == results[1]


def test_gradients_equal_torch_for_a_two_input_function(torch):
    grads = []
    for m in (T, torch):
        class MulAdd(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b + a

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g * (b + 1), g * a

        a = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([2.0, 0.25], dtype=m.float64, requires_grad=True)
        MulAdd.apply(a, b).pow(2).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for x, y in zip(*grads):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    assert T.autograd.gradcheck(
        lambda a, b: (a * b + a), (T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True),
                                   T.tensor([2.0, 0.25], dtype=T.float64, requires_grad=True)))
