"""Graph nodes' API against PyTorch: Node.register_hook / register_prehook (arguments,
returned replacements, their errors), name(), metadata, register_multi_grad_hook ('all' and
'any', partial graphs, inputs=), increment_version."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd.graph import increment_version, register_multi_grad_hook


def _pair(m):
    a = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
    b = m.tensor([2.0, 0.25], dtype=m.float64, requires_grad=True)
    return a, b


def test_node_hooks_receive_tuples_and_may_replace_them(torch):
    results = []
    for m in (T, torch):
        a, b = _pair(m)
        y = a * b
        log = []

        def pre(grad_outputs, log=log):
            log.append(("pre", type(grad_outputs).__name__, len(grad_outputs)))
            return (grad_outputs[0] * 3,)

        def post(grad_inputs, grad_outputs, log=log):
            log.append(("post", type(grad_inputs).__name__, len(grad_inputs),
                        len(grad_outputs), grad_outputs[0].tolist()))
            return (grad_inputs[0], None)

        y.grad_fn.register_prehook(pre)
        y.grad_fn.register_hook(post)
        y.sum().backward()
        results.append((log, a.grad.tolist(), b.grad))
    assert results[0] == results[1]


BAD_HOOKS = {
    "prehook returns a tensor": ("register_prehook", lambda go: go[0] * 0),
    "prehook returns two values": ("register_prehook", lambda go: (go[0], go[0])),
    "posthook returns three values": ("register_hook", lambda gi, go: (gi[0], gi[1], gi[0])),
    "posthook changes a size": ("register_hook", lambda gi, go: (gi[0][:1], gi[1])),
}


@pytest.mark.parametrize("case", sorted(BAD_HOOKS))
def test_bad_hook_results_raise_as_torch(torch, case):
    method, hook = BAD_HOOKS[case]
    errors = []
    for m in (T, torch):
        a, b = _pair(m)
        y = a * b
        getattr(y.grad_fn, method)(hook)
        with pytest.raises(Exception) as info:
            y.sum().backward()
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_name_metadata_and_handles(torch):
    for m in (T, torch):
        a, _ = _pair(m)
        y = a.sin()
        assert y.grad_fn.name() == "SinBackward0"
        y.grad_fn.metadata["tag"] = 1
        assert y.grad_fn.metadata == {"tag": 1}  # one dict per node
        assert y.grad_fn.metadata is y.grad_fn.metadata
        assert a.cos().grad_fn.metadata == {}
        calls = []
        handle = y.grad_fn.register_prehook(lambda go, c=calls: c.append(1))
        handle.remove()
        y.sum().backward()
        assert calls == []


def _recorder(log):
    return lambda grads: log.append([None if g is None else g.tolist() for g in grads])


def test_multi_grad_hook_all_mode(torch):
    results = []
    for m in (T, torch):
        a, b = _pair(m)
        log = []
        handle = register_multi_grad_hook((a, b), _recorder(log)) if m is T else \
            m.autograd.graph.register_multi_grad_hook((a, b), _recorder(log))
        (a * 2).sum().backward()  # b is not in this graph: not waited for, None
        (a * 2 + b * 3).sum().backward()
        (a * b).sum().backward(inputs=[a])  # b not needed: None
        handle.remove()
        (a * b).sum().backward()
        results.append(log)
    assert results[0] == results[1]
    assert len(results[0]) == 3


def test_multi_grad_hook_on_non_leaves_and_any_mode(torch):
    results = []
    for m in (T, torch):
        a, b = _pair(m)
        x, y = a * 1, b * 1
        log = []
        h1 = m.autograd.graph.register_multi_grad_hook((x, y), _recorder(log))
        h2 = m.autograd.graph.register_multi_grad_hook(
            (x, y), lambda g, log=log: log.append(("any", g.tolist())), mode="any")
        (x * 2 + y).sum().backward()
        h1.remove()
        h2.remove()
        results.append(log)
    assert results[0] == results[1]


def test_multi_grad_hook_errors(torch):
    for m in (T, torch):
        a, _ = _pair(m)
        with pytest.raises(ValueError, match="Expects mode to be one of"):
            m.autograd.graph.register_multi_grad_hook((a,), lambda g: None, mode="every")
        with pytest.raises(AssertionError):
            m.autograd.graph.register_multi_grad_hook((a, m.ones(2)), lambda g: None)


def test_increment_version(torch):
    versions = []
    for m in (T, torch):
        t = m.zeros(2)
        seen = [t._version]
        m.autograd.graph.increment_version(t)
        seen.append(t._version)
        m.autograd.graph.increment_version([t, t])
        seen.append(t._version)
        versions.append(seen)
        # a saved tensor whose version moved fails the check in backward
        a = m.ones(2, requires_grad=True)
        b = a * 1
        y = b.sin()
        m.autograd.graph.increment_version(b)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    assert versions[0] == versions[1]
    assert increment_version is T.autograd.graph.increment_version


def test_hooks_fire_with_create_graph():
    a, b = _pair(T)
    y = a * b
    got = []
    y.grad_fn.register_hook(lambda gi, go: got.append(gi[0].requires_grad))
    (g,) = T.autograd.grad(y.sum(), a, create_graph=True)
    assert got == [True]
    np.testing.assert_allclose(g.detach().numpy(), b.detach().numpy())
