"""retrograd.compile: a compiled step gives what eager gives, bit for bit (float64), and
refuses (eager, one warning naming the reason and the line) what it cannot replay."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
import retrograd.nn.functional as F
from retrograd import nn


def same(a, b):
    """Bit-for-bit equality of (nested) tensors / numbers."""
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, T.Tensor):
        return (isinstance(b, T.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True))
    return a == b


def no_warnings():
    return warnings.catch_warnings(record=True)


def test_seed_graph_bitwise():
    def f(x):
        x.grad = None
        z = (2 * x) ** 3
        z.backward()
        return z, x.grad

    cf = T.compile(f)
    rng = np.random.default_rng(0)
    with no_warnings() as w:
        warnings.simplefilter("always")
        for _ in range(5):
            a = rng.standard_normal((1, 1))
            xc, xe = T.tensor(a, requires_grad=True), T.tensor(a, requires_grad=True)
            rc, re_ = cf(xc), f(xe)
            assert same(rc, re_)
            assert rc[1] is xc.grad  # .grad is the caller's tensor's, as eager
    assert not w
    assert cf.refused is None and cf.traces == 1


def _mlp(seed):
    T.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 4)).double()


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_mlp_training_step_bitwise(opt_name):
    models = [_mlp(0), _mlp(0)]
    opts = [getattr(T.optim, opt_name)(m.parameters(), lr=0.05) for m in models]

    def make_step(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    eager = make_step(models[0], opts[0])
    compiled = T.compile(make_step(models[1], opts[1]))
    rng = np.random.default_rng(1)
    with no_warnings() as w:
        warnings.simplefilter("always")
        for _ in range(6):
            x = T.tensor(rng.standard_normal((5, 8)))
            y = T.tensor(rng.integers(0, 4, 5))
            assert same(compiled(x, y), eager(x, y))
            for pc, pe in zip(models[1].parameters(), models[0].parameters()):
                assert same(pc, pe) and same(pc.grad, pe.grad)
    assert not w
    assert compiled.refused is None and compiled.traces == 1


def test_freezing_a_layer_retraces():
    models = [_mlp(5), _mlp(5)]
    opts = [T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]

    def make_step(model, opt):
        def step(x):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        return step

    eager = make_step(models[0], opts[0])
    compiled = T.compile(make_step(models[1], opts[1]))
    x = T.tensor(np.random.default_rng(5).standard_normal((4, 8)))
    for i in range(8):
        if i == 4:
            for m in models:
                m[0].weight.requires_grad_(False)
        eager(x)
        compiled(x)
        for pc, pe in zip(models[1].parameters(), models[0].parameters()):
            assert same(pc, pe)
            assert (pc.grad is None) == (pe.grad is None)
    assert compiled.refused is None and compiled.traces == 1


def test_scheduler_step_inside_is_replayed():
    ws = [T.tensor([1.0, -2.0], requires_grad=True) for _ in range(2)]
    opts = [T.optim.SGD([w], lr=0.5) for w in ws]
    scheds = [T.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5) for o in opts]

    def make_step(w, opt, sched):
        def step(x):
            opt.zero_grad()
            (w * w * x).sum().backward()
            opt.step()
            sched.step()
        return step

    eager, compiled = make_step(ws[0], opts[0], scheds[0]), T.compile(make_step(
        ws[1], opts[1], scheds[1]))
    x = T.tensor([1.0, 0.5], dtype=T.float64).float()
    for _ in range(7):
        eager(x)
        compiled(x)
        assert same(ws[1], ws[0]) and opts[1].param_groups[0]["lr"] == opts[0].param_groups[
            0]["lr"]
    assert compiled.traces == 1


def test_500_op_chain_and_grad_accumulating_over_calls():
    # .grad is not reset: every call adds into it, as eager does
    def f(h):
        x = h
        for _ in range(125):  # 4 ops a cycle
            x = x + T.exp(T.tanh(T.sin(x))) * 0.1
        x.sum().backward()
        return x

    a = np.random.default_rng(2).standard_normal(16)
    hc, he = T.tensor(a, requires_grad=True), T.tensor(a, requires_grad=True)
    cf = T.compile(f)
    for _ in range(4):
        assert same(cf(hc), f(he))
        assert same(hc.grad, he.grad)
    assert cf.traces == 1


def test_returned_tensors_are_fresh_each_call():
    cf = T.compile(lambda x: (x * 2).sum())
    x = T.tensor([1.0, 2.0])
    results = [cf(x) for _ in range(4)]
    x._data[...] = 10.0
    assert cf(x).item() == 40.0
    assert [r.item() for r in results] == [6.0] * 4


def test_inference_module():
    model = _mlp(3)
    model.eval()
    cm = T.compile(model)
    assert cm.training is False and cm._orig_mod is model
    x = T.tensor(np.random.default_rng(3).standard_normal((2, 8)))
    with T.no_grad():
        for _ in range(4):
            assert same(cm(x), model(x))
    assert cm._compiled.traces == 1


def test_guards_retrace():
    calls = []

    def f(x, scale):
        calls.append(1)
        return x * scale

    cf = T.compile(f)
    for shape, scale in [((2,), 2.0), ((3,), 2.0), ((2,), 3.0), ((2,), 2.0)] * 3:
        x = T.ones(shape)
        assert same(cf(x, scale), f(x, scale))
        x64 = T.ones(shape, dtype=T.float64)
        assert same(cf(x64, scale), f(x64, scale))
    assert cf.traces == 6


def test_the_same_tensor_twice_is_guarded():
    cf = T.compile(lambda a, b: a * 2 + b)
    x, y = T.tensor([1.0]), T.tensor([5.0])
    for _ in range(3):
        assert cf(x, x).item() == 3.0
    assert cf(x, y).item() == 7.0
    assert cf(x, y).item() == 7.0


def test_closure_scalar_is_guarded():
    scale = 2.0

    def f(x):
        return x * scale

    cf = T.compile(f)
    x = T.tensor([1.0])
    for _ in range(3):
        assert cf(x).item() == 2.0
    scale = 5.0
    assert cf(x).item() == 5.0
    assert cf(x).item() == 5.0


def test_grad_mode_is_guarded():
    w = T.tensor([1.0, 2.0], requires_grad=True)
    cf = T.compile(lambda x: (w * x).sum())
    x = T.tensor([3.0, 4.0])
    with T.no_grad():
        for _ in range(3):
            assert cf(x).item() == 11.0
    with pytest.warns(UserWarning, match="requires grad"):
        out = cf(x)  # grad mode: the caller needs the graph, so eager
    assert out.requires_grad
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cf(x).backward()  # these guards stay eager, without another warning
        with T.no_grad():
            assert cf(x).item() == 11.0  # and no_grad calls still replay
    assert not caught
    assert w.grad.tolist() == [3.0, 4.0]
    assert cf.refused is None and cf.traces == 1 and cf.eager_guards == 1


def test_compiled_module_in_a_training_step():
    # the module's forward runs eagerly under grad mode (its graph is needed outside), and
    # replays under no_grad; a compiled training step around it replays everything
    model = _mlp(4)
    cm = T.compile(model)
    x = T.tensor(np.random.default_rng(4).standard_normal((3, 8)))
    with pytest.warns(UserWarning, match="grad mode"):
        cm(x).sum().backward()
    assert model[0].weight.grad is not None
    with T.no_grad():
        for _ in range(3):
            assert same(cm(x), model(x))


def test_too_many_guard_combinations_fall_back():
    cf = T.compile(lambda x: x + 1)
    for n in range(1, 9):
        cf(T.ones(n))
    with pytest.warns(UserWarning, match="more than 8"):
        cf(T.ones(9))
    assert same(cf(T.ones(2)), T.ones(2) + 1)


def _item(x):
    return x * x.sum().item()


def _branch(x):
    if x.sum() > 0:
        return x * 2
    return x * 3


def _hooked(x):
    x.grad = None
    y = x * 2
    y.register_hook(lambda g: g * 3)
    y.sum().backward()
    return x.grad


def _dropout(x):
    return F.dropout(x, 0.5, training=True).detach()


def _inplace(x):
    y = x * 1
    y.add_(1)
    return y


def _retain(x):
    x.grad = None
    (x * x).sum().backward(retain_graph=True)
    return x.grad


def _hvp_into_grad(x):
    # (autograd.grad(create_graph=True) compiles: tests/compiler/test_compile_double.py)
    x.grad = None
    (x ** 3).sum().backward(create_graph=True)
    return x.grad.detach()


@pytest.mark.parametrize("fn, reason", [
    (_item, "item"), (_branch, "__bool__"), (_hooked, "hook"), (_dropout, "random"),
    (_inplace, "in-place"), (_retain, "retain_graph"), (_hvp_into_grad, "create_graph"),
])
def test_refused_functions_run_eagerly_with_one_warning(fn, reason):
    cf = T.compile(fn)
    a = np.array([0.5, -1.5])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(4):
            T.manual_seed(i)
            rc = cf(T.tensor(a * (i + 1), requires_grad=True))
            T.manual_seed(i)
            re_ = fn(T.tensor(a * (i + 1), requires_grad=True))
            assert same(rc, re_)
    ours = [str(x.message) for x in w if "retrograd.compile" in str(x.message)]
    assert len(ours) == 1, ours
    assert reason in ours[0] and "test_compile.py" in ours[0]
    assert cf.refused is not None


def test_fullgraph_raises():
    cf = T.compile(_item, fullgraph=True)
    with pytest.raises(RuntimeError, match="fullgraph"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(T.tensor([1.0]))


def test_decorator_forms_and_disable():
    @T.compile(mode="max-autotune", dynamic=False)
    def f(x):
        return x + 1

    assert isinstance(f, T.compiler.CompiledFunction)
    for _ in range(3):
        assert f(T.tensor([1.0])).item() == 2.0
    g = lambda x: x  # noqa: E731
    assert T.compile(g, disable=True) is g
    with pytest.raises(TypeError, match="function or an nn.Module"):
        T.compile(3)


def test_value_computed_outside_ops_is_refused():
    # cummax computes its indices between ops (from the values): equal in the first two
    # calls here, so only where they were made tells that a replay would reuse them stale
    def f(x):
        return x.round().cummax(0).values

    cf = T.compile(f)
    with pytest.warns(UserWarning, match="outside the ops"):
        for i in range(4):
            x = T.tensor([0.1, 0.2, 0.3]) * (1 + i)
            assert same(cf(x), f(x))


def test_tracing_leaves_no_observer_behind():
    from retrograd.autograd.grad_mode import state
    from retrograd.compiler import _hooks

    before = (T.Tensor.item, T.Tensor._bump_version, T.optim.SGD.step)
    cf = T.compile(_item)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(T.tensor([1.0]))
    assert (T.Tensor.item, T.Tensor._bump_version, T.optim.SGD.step) == before
    assert state.tracer is None and _hooks.active is None
