"""retrograd.utils.checkpoint: gradients equal the un-checkpointed run (and PyTorch's), the
inner values are not kept, the generator state is replayed, PyTorch's warnings and errors."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd.graph import AccumulateGrad, PackedSaved
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential

MODES = [True, False]


def _mlp(m, seed=0):
    """The same 3-layer MLP in retrograd or torch (weights from one NumPy stream)."""
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(3):
        lin = m.nn.Linear(4, 4).double()
        with m.no_grad():
            lin.weight.copy_(m.tensor(rng.standard_normal((4, 4)), dtype=m.float64))
            lin.bias.copy_(m.tensor(rng.standard_normal(4), dtype=m.float64))
        layers += [lin, m.nn.Tanh()]
    return m.nn.Sequential(*layers)


def _grads(m, model, x):
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("reentrant", MODES)
def test_gradients_equal_the_plain_run_and_torch(torch, reentrant):
    results = {}
    x0 = np.random.default_rng(1).standard_normal((2, 4))
    for m, ckpt in ((T, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        for use in (False, True):
            model = _mlp(m)
            x = m.tensor(x0, requires_grad=True)
            y = (ckpt(model, x, use_reentrant=reentrant) if use else model(x))
            (y * y).sum().backward()
            results[(m.__name__, use)] = [y.detach().numpy()] + _grads(m, model, x)
    ours, plain, theirs = (results[("retrograd", True)], results[("retrograd", False)],
                           results[("torch", True)])
    for a, b, c in zip(ours, plain, theirs):
        np.testing.assert_array_equal(a, b)  # identical to the un-checkpointed run
        np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("reentrant", MODES)
def test_inner_values_are_not_kept(reentrant):
    model = _mlp(T)
    inner = []

    def fn(a):
        h = model[0](a)
        inner.append(weakref.ref(h))
        return model[2](model[1](h))

    x = T.randn(2, 4, dtype=T.float64, requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=reentrant)
    gc.collect()
    assert inner[0]() is None  # the intermediate died with the forward
    node = y.grad_fn
    if reentrant:  # the graph from y: one checkpoint node, then leaves
        assert node.name() == "CheckpointFunctionBackward"
        assert all(isinstance(n, AccumulateGrad) for n, _ in node.next_functions)
    else:  # as PyTorch: the function's own last op, every saved value a hook's holder
        assert node.name() == "AddmmBackward0"
        assert all(type(s) is PackedSaved for s in node.saved if s is not None)
    y.sum().backward()
    assert len(inner) == 2 and x.grad is not None  # recomputed once, in backward


def test_non_reentrant_works_with_grad_and_double_backward():
    model = _mlp(T)
    x = T.randn(2, 4, dtype=T.float64, requires_grad=True)
    w = model[0].weight
    out = []
    for use in (False, True):
        y = checkpoint(model, x, use_reentrant=False) if use else model(x)
        (gx,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gw,) = T.autograd.grad((gx * gx).sum(), w)
        out.append((gx.detach().numpy(), gw.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)


@pytest.mark.parametrize("reentrant", MODES)
def test_rng_state_is_replayed_for_the_recompute(reentrant):
    x = T.randn(64, dtype=T.float64, requires_grad=True)
    drop = T.nn.Dropout(0.5)
    grads = []
    for use in (False, True):
        T.manual_seed(3)
        x.grad = None
        y = checkpoint(drop, x, use_reentrant=reentrant) if use else drop(x)
        after_forward = T.random.get_rng_state()
        y.sum().backward()
        # the recompute draws the same mask and leaves the generator where it was
        assert T.random.get_rng_state()["state"] == after_forward["state"]
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("reentrant", MODES)
def test_checkpoint_sequential(torch, reentrant):
    results = []
    x0 = np.random.default_rng(2).standard_normal((3, 4))
    for m, seq in ((T, checkpoint_sequential),
                   (torch, torch.utils.checkpoint.checkpoint_sequential)):
        model = _mlp(m)
        x = m.tensor(x0, requires_grad=True)
        y = seq(model, 2, x, use_reentrant=reentrant)
        y.sum().backward()
        results.append([y.detach().numpy()] + _grads(m, model, x))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-14)


def _warned(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


def test_warnings_as_torch(torch):
    for build in (
        lambda m, ck, seq: ck(lambda a: a * 2, m.ones(2, requires_grad=True)),
        lambda m, ck, seq: seq([m.nn.Tanh(), m.nn.Tanh()], 1, m.ones(2, requires_grad=True)),
        lambda m, ck, seq: ck(lambda a: a * 2, m.ones(2), use_reentrant=True),
    ):
        ours = _warned(lambda b=build: b(T, checkpoint, checkpoint_sequential))
        theirs = _warned(lambda b=build: b(torch, torch.utils.checkpoint.checkpoint,
                                           torch.utils.checkpoint.checkpoint_sequential))
        assert ours == theirs


def test_argument_errors_as_torch(torch):
    def ctx():
        import contextlib
        return contextlib.nullcontext(), contextlib.nullcontext()

    for build in (
        lambda m, ck: ck(lambda a: a, m.ones(1), use_reentrant=True, bogus=1),
        lambda m, ck: ck(lambda a: a, m.ones(1), use_reentrant=True, context_fn=ctx),
        lambda m, ck: ck(lambda a: a, m.ones(1, requires_grad=True), use_reentrant=False,
                         determinism_check="bogus"),
    ):
        errors = []
        for m, ck in ((T, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
            with pytest.raises(ValueError) as info:
                build(m, ck)
            errors.append(str(info.value))
        assert errors[0] == errors[1]


def test_non_reentrant_kwargs_and_context_fn():
    import contextlib

    entered = []

    @contextlib.contextmanager
    def mark(name):
        entered.append(name)
        yield

    x = T.ones(2, dtype=T.float64, requires_grad=True)
    y = checkpoint(lambda a, scale: a.sin() * scale, x, use_reentrant=False, scale=3.0,
                   context_fn=lambda: (mark("forward"), mark("recompute")))
    y.sum().backward()
    assert entered == ["forward", "recompute"]
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos(1.0) * np.ones(2))


def test_non_reentrant_captured_non_leaf_gets_its_gradient(torch):
    # PyTorch's non-reentrant checkpoint is made of saved-tensor hooks: a non-leaf captured
    # by the function is part of the ordinary graph
    grads = []
    for m, ck in ((T, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        w0 = m.tensor([0.5, -1.5], dtype=m.float64, requires_grad=True)
        w = w0 * 2
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = ck(lambda a, w=w: (a * w).sin(), x, use_reentrant=False)
        y.sum().backward()
        grads.append((y.grad_fn.name(), x.grad.numpy(), w0.grad.numpy()))
    assert grads[0][0] == grads[1][0] == "SinBackward0"
    for a, b in zip(grads[0][1:], grads[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_reentrant_refuses_grad_as_torch(torch):
    errors = []
    for m, ck in ((T, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        x = m.ones(2, requires_grad=True)
        y = ck(lambda a: a.sin(), x, use_reentrant=True).sum()
        with pytest.raises(RuntimeError) as info:
            m.autograd.grad(y, x, retain_graph=True)
        errors.append(str(info.value))
        with pytest.raises(RuntimeError) as info:
            y.backward(inputs=[x], retain_graph=True)
        errors.append(str(info.value))
        y.backward()  # a plain backward still works afterwards
        assert x.grad is not None
    assert errors[:2] == errors[2:]
