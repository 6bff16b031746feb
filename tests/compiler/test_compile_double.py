"""retrograd.compile of double backward: ``autograd.grad(..., create_graph=True)`` records
the derivative's ops as forwards, and the second backward is recorded as any backward;
a Hessian-vector product replays bit for bit (float64)."""

from __future__ import annotations

import re
import warnings

import numpy as np

import retrograd as T
import retrograd.nn.functional as F

from .test_compile import same


def _run(cf, f, make_args, calls=5):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(calls):
            got, want = cf(*make_args(i)), f(*make_args(i))
            assert same(got, want), f"call {i}"
    assert not [x for x in w if "retrograd.compile" in str(x.message)]
    assert cf.refused is None and cf.traces == 1


def test_hvp_of_an_mlp_loss_bitwise():
    rng = np.random.default_rng(0)
    params = [T.tensor(rng.standard_normal(s), requires_grad=True)
              for s in ((6, 5), (5,), (5, 3), (3,))]
    vec = [T.tensor(rng.standard_normal(p.shape)) for p in params]
    xs = rng.standard_normal((4, 6))
    ys = rng.integers(0, 3, 4)

    def hvp(x, y):
        loss = F.cross_entropy(T.tanh(x @ params[0] + params[1]) @ params[2] + params[3], y)
        gs = T.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(gs, vec))
        return loss.detach(), list(T.autograd.grad(dot, params))

    _run(T.compile(hvp), hvp, lambda i: (T.tensor(xs * (1 + 0.1 * i)), T.tensor(ys)))


def test_hvp_of_a_pointwise_function_and_its_inputs_grad():
    def hvp(x, v):
        g, = T.autograd.grad((x.sin() * x ** 3).sum(), x, create_graph=True)
        hv, = T.autograd.grad((g * v).sum(), x)
        return hv

    a = np.array([0.5, -1.5, 2.0])
    _run(T.compile(hvp), hvp, lambda i: (T.tensor(a * (i + 1), requires_grad=True),
                                         T.tensor(a[::-1] - i)))


def test_third_order_derivative_bitwise():
    def third(x):
        g, = T.autograd.grad((x ** 4).sum(), x, create_graph=True)
        h, = T.autograd.grad(g.sum(), x, create_graph=True)
        t, = T.autograd.grad(h.sum(), x)
        return t

    a = np.array([0.25, -1.0])
    _run(T.compile(third), third, lambda i: (T.tensor(a + i, requires_grad=True),))


def test_first_order_grad_returned_without_accumulating():
    # autograd.grad's results reach only the return value: the replay keeps them
    def grads(x, w):
        return T.autograd.grad(((x @ w).tanh() ** 2).sum(), (x, w))

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    _run(T.compile(grads), grads, lambda i: (T.tensor(a * (1 + i), requires_grad=True),
                                             T.tensor(b - i, requires_grad=True)))


def test_constant_results_are_fresh_and_writable_each_call():
    # ``ones`` made inside and a value computed only from it run once, when the replay is
    # built: what is returned must still be the caller's own array on every call
    def f(x):
        c = T.ones(3) * 2
        return x + c, c, T.zeros(2)

    cf = T.compile(f)
    outs = [cf(T.tensor([1.0, 2.0, 3.0])) for _ in range(4)]
    assert cf.refused is None and cf.traces == 1
    outs[2][1].add_(1)  # in place on one call's result: later calls do not see it
    outs[2][2].add_(1)
    again = cf(T.tensor([1.0, 2.0, 3.0]))
    assert same(again, f(T.tensor([1.0, 2.0, 3.0])))
    assert outs[3][1] is not again[1]


def test_unused_forward_with_side_effects_still_runs():
    # batch norm's forward updates the running statistics in place: its result being
    # unused does not make it dead code
    rm, rv = T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64)
    rm_e, rv_e = T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64)

    def make(m, v):
        def f(x):
            F.batch_norm(x, m, v, training=True)
            return x * 2
        return f

    cf, f = T.compile(make(rm, rv)), make(rm_e, rv_e)
    rng = np.random.default_rng(3)
    for _ in range(5):
        a = rng.standard_normal((4, 3))
        assert same(cf(T.tensor(a)), f(T.tensor(a)))
    assert cf.refused is None
    assert same(rm, rm_e) and same(rv, rv_e)


def test_dead_steps_and_constants_leave_the_replay():
    def plain(x):
        x.grad = None
        (x * x).sum().backward()
        return x.grad

    def with_dead(x):
        x.grad = None
        (x * 3).exp().tanh()  # nothing reads it
        (x * x).sum().backward()
        return x.grad

    sources = []
    for f in (plain, with_dead):
        cf = T.compile(f)
        for i in range(3):
            a = T.tensor([1.0, -2.0 + i], requires_grad=True)
            assert same(cf(a), f(T.tensor([1.0, -2.0 + i], requires_grad=True)))
        sources.append(next(iter(cf._cache.values())).replay.source)
    # (steps are calls of eager's functions, or NumPy calls where compile lowers them)
    calls = [sum(bool(re.match(r"\s+v\d+ = ", line)) for line in s.splitlines())
             for s in sources]
    assert calls[0] == calls[1]  # the dead exp(tanh) is not replayed
    # left: MulBackward0 and the sum of its two gradients; the forward x * x and its sum
    # are dead (nothing reads the loss), the gradient of sum() (ones spread over x) is
    # computed once, at build
    assert calls[0] == 2, sources[0]


def test_autograd_functional_hvp_compiles():
    def f(x):
        return (x.sin() * x).sum()

    def step(x, v):
        return T.autograd.functional.hvp(f, x, v)

    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    _run(T.compile(step), step, lambda i: (T.tensor(a * (1 + i)), T.tensor(b - i)))
