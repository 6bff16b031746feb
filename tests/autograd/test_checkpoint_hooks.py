"""checkpoint(use_reentrant=False), made of saved-tensor hooks as PyTorch's, against PyTorch:
the outputs' grad_fn, recompute counts (early stop, retain_graph), double backward,
captured non-leaf tensors, determinism errors, no_grad."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd.utils.checkpoint import CheckpointError, checkpoint, set_checkpoint_early_stop


def _ck(m):
    return checkpoint if m is T else m.utils.checkpoint.checkpoint


def _x(m):
    return m.tensor([[0.3, -1.1], [0.7, 0.2]], dtype=m.float64, requires_grad=True)


def _logged(log):
    def fn(x, w):
        log.append("start")
        h = (x @ w).tanh()
        log.append("saved all")  # the ops after this one save nothing
        return h * 2 + 1
    return fn


@pytest.mark.parametrize("early_stop", [True, False])
def test_recompute_count_early_stop_and_retain_graph(torch, early_stop):
    results = []
    for m in (T, torch):
        log = []
        x = _x(m)
        w = m.tensor([[1.0, 0.5], [-0.5, 2.0]], dtype=m.float64, requires_grad=True)
        y = _ck(m)(_logged(log), x, w, use_reentrant=False, early_stop=early_stop)
        assert log == ["start", "saved all"]
        name = y.grad_fn.name()
        y.sum().backward(retain_graph=True)
        y.sum().backward()  # a second pass recomputes again
        results.append((name, list(log), x.grad.numpy(), w.grad.numpy()))
    assert results[0][:2] == results[1][:2]
    for a, b in zip(results[0][2:], results[1][2:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_double_backward_and_grad_with_captured_non_leaf(torch):
    results = []
    for m in (T, torch):
        x = _x(m)
        w0 = m.tensor([[1.0, 0.5], [-0.5, 2.0]], dtype=m.float64, requires_grad=True)
        w = w0 * 1.5  # a non-leaf the function captures

        def fn(a, w=w):
            return (a @ w).sin() * a

        out = []
        for use in (False, True):
            y = (_ck(m)(fn, x, use_reentrant=False) if use else fn(x)).sum()
            gx, gw = m.autograd.grad(y, (x, w0), create_graph=True)
            (g2,) = m.autograd.grad((gx * gx).sum() + gw.sum(), x)
            out.append([gx.detach().numpy(), gw.detach().numpy(), g2.numpy()])
        for a, b in zip(*out):
            np.testing.assert_allclose(a, b, rtol=1e-12)  # checkpointed == plain
        results.append(out[1])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)  # == PyTorch


def test_a_recompute_that_saves_fewer_tensors_raises(torch):
    errors = []
    for m in (T, torch):
        calls = []

        def fn(a, calls=calls):
            calls.append(1)
            h = a.sin()
            return h.exp() if len(calls) == 1 else h * 2  # exp saves; * 2 does not

        y = _ck(m)(fn, _x(m), use_reentrant=False)
        with pytest.raises(m.utils.checkpoint.CheckpointError if m is torch else
                           CheckpointError) as info:
            y.sum().backward()
        errors.append(str(info.value).splitlines()[:3])
    assert errors[0] == errors[1]


def test_a_recompute_with_other_shapes_raises(torch):
    errors = []
    for m in (T, torch):
        calls = []

        def fn(a, calls=calls):
            calls.append(1)
            b = a if len(calls) == 1 else a.t().reshape(4, 1)
            return b.exp().sum()

        y = _ck(m)(fn, _x(m), use_reentrant=False)
        with pytest.raises(RuntimeError) as info:
            y.backward()
        errors.append((type(info.value).__name__, str(info.value).splitlines()[0]))
        # determinism_check='none': no check (the recompute's values are used as they are)
        calls.clear()
        y = _ck(m)(fn, _x(m), use_reentrant=False, determinism_check="none")
        assert y.grad_fn.name() == "SumBackward0"
    assert errors[0] == errors[1] == (
        "CheckpointError", "torch.utils.checkpoint: Recomputed values for the following "
        "tensors have different metadata than during the forward pass.")


def test_under_no_grad_the_function_just_runs(torch):
    for m in (T, torch):
        x = _x(m)
        with m.no_grad():
            y = _ck(m)(lambda a: a.sin(), x, use_reentrant=False)
        assert not y.requires_grad


def test_user_hooks_outside_see_no_checkpointed_tensor():
    # inside the checkpoint its own hooks are innermost: an outer pack hook sees only the
    # tensors saved outside the checkpointed region
    seen = []
    x = _x(T)
    with T.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.shape) or t,
                                              lambda t: t):
        h = checkpoint(lambda a: a.exp().tanh(), x, use_reentrant=False)
        y = (h * h).sum()
    assert len(seen) == 2  # h, twice (mul saves both operands)
    y.backward()
    e = np.exp(x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.tanh(e) * (1 - np.tanh(e) ** 2) * e,
                               rtol=1e-12)


def test_set_checkpoint_early_stop_overrides_the_argument(torch):
    logs = []
    for m, setter in ((T, set_checkpoint_early_stop),
                      (torch, torch.utils.checkpoint.set_checkpoint_early_stop)):
        log = []
        w = m.eye(2, dtype=m.float64, requires_grad=True)
        with setter(False):
            y = _ck(m)(_logged(log), _x(m), w, use_reentrant=False, early_stop=True)
        y.sum().backward()
        logs.append(log)
    assert logs[0] == logs[1] == ["start", "saved all"] * 2


def test_nested_checkpoints(torch):
    results = []
    for m in (T, torch):
        x = _x(m)
        w = m.tensor([[1.0, 0.5], [-0.5, 2.0]], dtype=m.float64, requires_grad=True)

        def inner(a, w=w):
            return (a @ w).tanh().exp()

        def outer(a, m=m, inner=inner):
            return _ck(m)(inner, a.sin(), use_reentrant=False).cos() * a

        _ck(m)(outer, x, use_reentrant=False).sum().backward()
        results.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
