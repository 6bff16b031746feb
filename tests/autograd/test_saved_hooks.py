"""Saved-tensor hooks (``retrograd.autograd.graph``) against PyTorch: which tensors pack
sees and in what order, unpack calls, nesting, disabling, errors, Function's
save_for_backward, save_on_cpu, ``_saved_<name>`` / ``_raw_saved_<name>``."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd import grad_mode
from retrograd.autograd.graph import (
    disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks,
)


def _graph(m):
    return m.autograd.graph


def _run(m, build, pack=None, unpack=None):
    """Build a graph under recording hooks; return the log and the built values."""
    log = []
    a = m.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=m.float64, requires_grad=True)
    b = (m.tensor([[1.5, 0.5], [-0.5, 1.0]], dtype=m.float64, requires_grad=True) * 1)
    names = {id(a): "a", id(b): "b"}

    def pack_hook(x):
        log.append(("pack", names.get(id(x), "out" if x.grad_fn is not None else "?")))
        return x if pack is None else pack(x)

    def unpack_hook(x):
        log.append(("unpack",))
        return x if unpack is None else unpack(x)

    with _graph(m).saved_tensors_hooks(pack_hook, unpack_hook):
        out = build(m, a, b)
        names[id(out)] = "out"
    log[:] = [(e[0], "out") if e[0] == "pack" and e[1] == "?" else e for e in log]
    return log, a, b, out


BUILDS = {
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "mm": lambda m, a, b: a @ b,
    "exp": lambda m, a, b: a.exp(),
    "pow": lambda m, a, b: a.abs() ** b,
    "atan2": lambda m, a, b: m.atan2(a, b),
    "sin_then_mul": lambda m, a, b: a.sin() * b,
    "tanh": lambda m, a, b: m.tanh(a),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_pack_sees_the_tensors_torch_saves_in_its_order(torch, name):
    ours, theirs = (_run(m, BUILDS[name]) for m in (T, torch))
    assert ours[0] == theirs[0]
    # gradients through the hooks equal PyTorch's; each packed value unpacked once
    for (log, _, _, out) in (ours, theirs):
        out.sum().backward()
        n_pack = sum(e[0] == "pack" for e in log)
        assert sum(e[0] == "unpack" for e in log) == n_pack
    np.testing.assert_allclose(ours[1].grad.numpy(), theirs[1].grad.numpy(), rtol=1e-12)


def test_pack_receives_the_very_tensors_and_unpack_replaces_them(torch):
    for m in (T, torch):
        seen = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        with _graph(m).saved_tensors_hooks(lambda x, seen=seen: seen.append(x) or "token",
                                          lambda p, m=m: m.full((2,), 3.0)):
            y = a.exp()
            z = y * a
        assert seen[0] is y and any(s is a for s in seen)
        z.sum().backward()
        # d(exp(a) * a)/da with every saved tensor replaced by 3s: 3 * 3 + 3
        np.testing.assert_allclose(a.grad.numpy(), [12.0, 12.0])


def test_unpack_count_with_retain_graph_and_grad_mode_inside_hooks(torch):
    results = []
    for m in (T, torch):
        log = []
        a = m.tensor([1.0, 2.0], requires_grad=True)

        def pack(x, m=m, log=log):
            log.append(("pack", m.is_grad_enabled()))
            return x

        def unpack(x, m=m, log=log):
            log.append(("unpack", m.is_grad_enabled()))
            return x

        with _graph(m).saved_tensors_hooks(pack, unpack):
            y = (a * a).sum()
        y.backward(retain_graph=True)
        m.autograd.grad(y, a, create_graph=True)
        results.append(log)
    assert results[0] == results[1]


def test_nested_hooks_the_innermost_applies(torch):
    for m in (T, torch):
        order = []
        a = m.ones(2, requires_grad=True)
        with _graph(m).saved_tensors_hooks(lambda x, o=order: o.append("outer") or x,
                                           lambda x: x):
            with _graph(m).saved_tensors_hooks(lambda x, o=order: o.append("inner") or x,
                                               lambda x: x):
                (a * 1).sin()
            (a * 1).cos()
        assert order == ["inner", "outer"]


def test_disable_saved_tensors_hooks_both_orders(torch):
    for m in (T, torch):
        g = _graph(m)
        with g.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="^no hooks here$"):
                with g.saved_tensors_hooks(lambda x: x, lambda x: x):
                    pass
        with g.saved_tensors_hooks(lambda x: x, lambda x: x):
            with pytest.raises(RuntimeError, match="^not now$"):
                with g.disable_saved_tensors_hooks("not now"):
                    pass
        with g.saved_tensors_hooks(lambda x: x, lambda x: x):  # usable again after both
            pass


def test_unpack_must_return_a_tensor(torch):
    messages = []
    for m in (T, torch):
        a = m.ones(2, requires_grad=True)
        with _graph(m).saved_tensors_hooks(lambda x: x, lambda x: 3):
            y = (a * 1).sin().sum()
        with pytest.raises(TypeError) as info:
            y.backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_hooked_values_skip_the_version_check_as_torch(torch):
    grads = []
    for m in (T, torch):
        a = m.tensor([0.5, 1.0], dtype=m.float64, requires_grad=True)
        b = a * 1
        with _graph(m).saved_tensors_hooks(lambda x: x, lambda x: x):
            y = b.sin()
        with m.no_grad():
            b.add_(1)
        y.sum().backward()  # no "modified by an inplace operation" error
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])


def test_double_backward_through_unpacked_values(torch):
    out = []
    for m in (T, torch):
        a = m.tensor([0.3, -1.2], dtype=m.float64, requires_grad=True)
        with _graph(m).saved_tensors_hooks(lambda x: x.detach().clone(), lambda x: x):
            y = (a.sin() * a).sum()
        (g,) = m.autograd.grad(y, a, create_graph=True)
        (g2,) = m.autograd.grad(g.sum(), a)
        out.append((g.detach().numpy(), g2.numpy()))
    for x, y in zip(out[0], out[1]):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_custom_function_save_for_backward_is_packed(torch):
    logs = []
    for m in (T, torch):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y / x

        a = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        log = []
        with _graph(m).saved_tensors_hooks(lambda t, log=log: log.append(t) or t,
                                           lambda t, log=log: log.append("u") or t):
            out = Twice.apply(a)
        assert log[0] is a and log[1] is out
        out.sum().backward()
        logs.append((len(log), log[2:], a.grad.numpy()))
    assert logs[0][:2] == logs[1][:2]
    np.testing.assert_allclose(logs[0][2], logs[1][2])


def test_save_on_cpu_gives_the_same_gradients(torch):
    grads = []
    for m in (T, torch):
        a = m.tensor([[0.2, -0.7], [1.1, 0.4]], dtype=m.float64, requires_grad=True)
        with _graph(m).save_on_cpu(pin_memory=False):
            y = (a.tanh() @ a).exp().sum()
        y.backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
    assert issubclass(save_on_cpu, saved_tensors_hooks)


def test_saved_and_raw_saved_attributes(torch):
    results = []
    for m in (T, torch):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        with _graph(m).saved_tensors_hooks(lambda x: x * 0 + 7, lambda x: x + 1):
            y = a.sin()
        seen = y.grad_fn._saved_self
        results.append((seen.tolist(), seen.requires_grad))
        # register_hooks on a raw saved tensor: pack runs now, unpack in backward
        calls = []
        y = a.sin()
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(lambda x, c=calls: c.append("pack") or x,
                           lambda x, c=calls: c.append("unpack") or x * 0)
        assert calls == ["pack"]
        a.grad = None
        y.sum().backward(retain_graph=True)
        results.append((calls, a.grad.tolist()))
        errors = []
        with pytest.raises(RuntimeError) as info:
            raw.register_hooks(lambda x: x, lambda x: x)
        errors.append(str(info.value))
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        errors.append(str(info.value))
        with pytest.raises(TypeError):
            a.cos().grad_fn._raw_saved_self.register_hooks(1, lambda x: x)
        results.append(errors)
    assert results[:3] == results[3:]


def test_hooks_are_per_thread():
    seen = []
    a = T.ones(2, requires_grad=True)

    def other():
        (a * 1).sin()  # recorded while the main thread's hooks are active

    with saved_tensors_hooks(lambda x: seen.append(threading.current_thread()) or x,
                             lambda x: x):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        (a * 1).sin()
    assert seen == [threading.current_thread()]


def test_no_hook_left_active_after_the_blocks():
    # the op machinery's only cost without hooks is one check of this list
    with saved_tensors_hooks(lambda x: x, lambda x: x):
        with save_on_cpu():
            assert len(grad_mode.record_extras) == 2
    with disable_saved_tensors_hooks("x"):
        pass
    assert grad_mode.record_extras == []
    with pytest.raises(ValueError):
        with saved_tensors_hooks(lambda x: x, lambda x: x):
            raise ValueError
    assert grad_mode.record_extras == []


def test_allow_mutation_on_saved_tensors(torch):
    results = []
    for m in (T, torch):
        graph = _graph(m)
        a = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        with graph.allow_mutation_on_saved_tensors():
            b = a.clone()
            y = b.sin()
            with m.no_grad():
                b.mul_(10)  # after sin saved it: backward still uses the old value
            y.sum().backward()
            with pytest.raises(RuntimeError, match="cannot be nested"):
                with graph.allow_mutation_on_saved_tensors():
                    pass
            y = (a * 1).sin()
        with pytest.raises(AssertionError) as info:
            y.sum().backward()
        results.append((a.grad.numpy(), str(info.value)))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


DECOMPOSITIONS = {
    "cholesky": lambda m, a: m.linalg.cholesky(a),
    "qr": lambda m, a: m.linalg.qr(a)[1],
    "eigh": lambda m, a: m.linalg.eigh(a)[0],
    "svdvals": lambda m, a: m.linalg.svdvals(a),
}


@pytest.mark.parametrize("name", sorted(DECOMPOSITIONS))
def test_decompositions_pack_what_they_save(name):
    # the decompositions record their own nodes (ops/linalg_decomp.py): their saved values
    # go through the hooks too, as many as torch packs, and backward uses the unpacked ones
    torch = pytest.importorskip("torch")
    results = []
    for m in (T, torch):
        packed, unpacked = [], []
        a = m.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=m.float64, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(
                lambda t, packed=packed: (packed.append(1), t * 1)[1],
                lambda t, unpacked=unpacked: (unpacked.append(1), t)[1]):
            out = DECOMPOSITIONS[name](m, a)
        out.sum().backward()
        results.append((len(packed), len(unpacked) > 0,
                        np.round(a.grad.numpy(), 10).tolist()))
    assert results[0] == results[1]
