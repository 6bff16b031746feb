"""The lowering pass (``compiler/_lower.py``): the steps of a training step written as NumPy
calls in the replay stay bit-identical to eager (float64 and float32, special values), and
step aside where a rewrite would not be eager's: a value read after the step that would
write over it, a view of it, a returned intermediate, parameters of another shape, addmm's
beta/alpha, a gradient accumulated into an existing ``.grad``."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import retrograd as T
import retrograd.nn.functional as F
from retrograd import nn

from .test_compile import same


def _source(cf):
    return "\n".join(e.replay.source for e in cf._cache.values() if e.replay is not None)


def _twins(make, seed=0):
    out = []
    for _ in range(2):
        T.manual_seed(seed)
        out.append(make())
    return out


def _run(eager, compiled, args_for, calls=5, tensors=()):
    """Call both ``calls`` times with the same fresh arguments; results and the given
    tensors (and their .grad) must match bit for bit, .grad's strides too."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(calls):
            got, want = compiled(*args_for(i)), eager(*args_for(i))
            assert same(got, want), f"call {i}"
            for tc, te in tensors:
                assert same(tc, te), f"call {i}"
                assert same(tc.grad, te.grad) if te.grad is not None else tc.grad is None
                if te.grad is not None and te.grad.is_contiguous():
                    # (eager may keep a summed gradient's F order as .grad, which the
                    # replay's copy makes C-ordered: values only then)
                    assert tc.grad.stride() == te.grad.stride()
    assert not [x for x in w if "retrograd.compile" in str(x.message)]
    assert compiled.refused is None


def _mlp(dtype):
    return nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 6), nn.ReLU(),
                         nn.Linear(6, 3)).to(dtype)


@pytest.mark.parametrize("dtype", [T.float64, T.float32])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_training_step_is_lowered_and_bitwise(dtype, reduction):
    models = _twins(lambda: _mlp(dtype))
    opts = [T.optim.SGD(m.parameters(), lr=0.1) for m in models]

    def make(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y, reduction=reduction)
            loss.backward()
            opt.step()
            return loss
        return step

    eager, compiled = make(models[0], opts[0]), T.compile(make(models[1], opts[1]))
    rng = np.random.default_rng(0)
    data = [(T.tensor(rng.standard_normal((4, 5)), dtype=dtype),
             T.tensor(rng.integers(0, 3, 4))) for _ in range(6)]
    pairs = list(zip(models[1].parameters(), models[0].parameters()))
    _run(eager, compiled, lambda i: data[i], 6, pairs)
    source = _source(compiled)
    # the linear layers, relu, log_softmax and nll are NumPy calls, no derivative call left
    assert "MATMUL(" in source and "MAXIMUM(0" in source and "LESS_EQUAL(" in source
    assert " = j" not in source and " = f" not in source
    # bias gradients are reductions that become .grad without a copy
    assert "MK(v" in source and ".flags.c_contiguous" in source


def test_special_values_take_eager_branches():
    # an inf gradient reaches relu's derivative (its where() branch), a nan pre-activation
    # passes its gradient, -0.0 gradients turn +0.0 where eager adds 0.0
    def make():
        return nn.Linear(3, 4).double()

    lins = _twins(make)

    def make_step(lin):
        def step(x, c):
            lin.zero_grad()
            y = F.relu(lin(x))
            (y * c).sum().backward()
            return y
        return step

    eager, compiled = make_step(lins[0]), T.compile(make_step(lins[1]))
    cs = [np.array([[1.0, -0.0, 2.0, -1.0], [0.5, 1.0, -0.0, 3.0]]),
          np.array([[np.inf, 1.0, -0.0, 1.0], [1.0, -np.inf, 1.0, 0.0]]),
          np.array([[np.nan, 1.0, 1.0, -0.0], [1.0, 1.0, 1.0, 1.0]])]
    xs = [np.array([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]]),
          np.array([[np.nan, 1.0, 0.5], [-0.0, 0.0, -1.0]])]

    def args(i):
        return T.tensor(xs[i % 2]), T.tensor(cs[i % 3])

    pairs = [(lins[1].weight, lins[0].weight), (lins[1].bias, lins[0].bias)]
    _run(eager, compiled, args, 7, pairs)
    assert "WHERE(" in _source(compiled)


def test_a_value_read_later_is_not_written_over():
    # z (relu's input) is returned and read after relu: relu must not write into it; h is
    # read by a second branch after its derivative would reuse it
    lins = _twins(lambda: nn.Linear(3, 4).double())

    def make_step(lin):
        def step(x):
            lin.zero_grad()
            z = lin(x)
            h = F.relu(z)
            loss = (h * h).sum() + F.log_softmax(z, 1).sum()
            loss.backward()
            return z.detach(), h.detach(), loss
        return step

    eager, compiled = make_step(lins[0]), T.compile(make_step(lins[1]))
    rng = np.random.default_rng(1)
    data = [T.tensor(rng.standard_normal((2, 3))) for _ in range(5)]
    _run(eager, compiled, lambda i: (data[i],), 5,
         [(lins[1].weight, lins[0].weight), (lins[1].bias, lins[0].bias)])
    source = _source(compiled)
    assert "MAXIMUM(0" in source and "MAXIMUM(0, v1, out=" not in source


def test_a_view_of_a_fresh_value_keeps_it():
    # a view of the linear layer's output is alive after relu: no in-place relu
    lins = _twins(lambda: nn.Linear(3, 4).double())

    def make_step(lin):
        def step(x):
            lin.zero_grad()
            z = lin(x)
            first = z[0]
            h = F.relu(z)
            (h.sum() + (first * first).sum()).backward()
            return first.detach() * 1, h.detach()
        return step

    eager, compiled = make_step(lins[0]), T.compile(make_step(lins[1]))
    rng = np.random.default_rng(2)
    data = [T.tensor(rng.standard_normal((2, 3))) for _ in range(5)]
    _run(eager, compiled, lambda i: (data[i],), 5,
         [(lins[1].weight, lins[0].weight), (lins[1].bias, lins[0].bias)])
    assert ", out=v" not in _source(compiled).split("MAXIMUM(0")[1].split("\n")[0]


def test_grad_accumulates_into_existing_grad_and_shared_weight_sums():
    # no zero_grad: every call adds into .grad (the engine's in-place path); the weight is
    # used by two layers (its gradients are summed), the bias broadcasts from (1, 4)
    ws = [T.tensor(np.random.default_rng(3).standard_normal((4, 4)), requires_grad=True)
          for _ in range(2)]
    bs = [T.tensor(np.linspace(-1, 1, 4).reshape(1, 4), requires_grad=True) for _ in range(2)]

    def make_step(w, b):
        def step(x):
            h = F.relu(F.linear(x, w))
            out = F.linear(h, w) + b
            out.pow(2).sum().backward()
            return out
        return step

    eager, compiled = make_step(ws[0], bs[0]), T.compile(make_step(ws[1], bs[1]))
    rng = np.random.default_rng(4)
    data = [T.tensor(rng.standard_normal((3, 4))) for _ in range(5)]
    _run(eager, compiled, lambda i: (data[i],), 5, [(ws[1], ws[0]), (bs[1], bs[0])])


def test_non_contiguous_weight_and_addmm_scaling():
    # a transposed (non-contiguous) weight, and addmm with beta/alpha (not lowered)
    base = np.random.default_rng(5).standard_normal((3, 4))
    ws = [T.tensor(base, requires_grad=True) for _ in range(2)]
    bs = [T.tensor(np.arange(4.0), requires_grad=True) for _ in range(2)]

    def make_step(w, b):
        def step(x):
            w.grad = None
            b.grad = None
            y = F.linear(x, w.t(), b)
            z = T.addmm(b, x, w, beta=0.5, alpha=2.0)
            (y * z).sum().backward()
            return y, z
        return step

    eager, compiled = make_step(ws[0], bs[0]), T.compile(make_step(ws[1], bs[1]))
    rng = np.random.default_rng(6)
    data = [T.tensor(rng.standard_normal((2, 3))) for _ in range(5)]
    _run(eager, compiled, lambda i: (data[i],), 5, [(ws[1], ws[0]), (bs[1], bs[0])])
    assert "MATMUL(" in _source(compiled)


def test_parameter_of_another_shape_retraces():
    lins = _twins(lambda: nn.Linear(3, 4).double())

    def make_step(lin):
        def step(x):
            lin.zero_grad()
            F.relu(lin(x)).sum().backward()
            return lin.weight.grad
        return step

    eager, compiled = make_step(lins[0]), T.compile(make_step(lins[1]))
    x = T.tensor(np.random.default_rng(7).standard_normal((2, 3)))
    for i in range(8):
        if i == 4:  # a new weight of another shape (and an input that fits it)
            for lin in lins:
                lin.weight.data = T.tensor(np.ones((4, 2)))
            x = T.tensor(np.random.default_rng(8).standard_normal((2, 2)))
        assert same(compiled(x), eager(x))
    assert compiled.refused is None


@pytest.mark.parametrize("dtype", [T.float64, T.float32])
def test_pointwise_steps_with_special_values(dtype):
    # sin/tanh/exp forwards, mul/add/sub by numbers and arrays, a matmul, and their
    # derivatives, through inf, nan, -0.0 and exp's overflow
    ws = [T.tensor(np.array([[0.5, -1.0], [2.0, 0.25], [-0.0, 1.5]]), dtype=dtype,
                   requires_grad=True) for _ in range(2)]

    def make_step(w):
        def step(x):
            w.grad = None
            h = T.exp(T.tanh(T.sin(x)) * 3.0) - x
            y = (h * x + 0.5) @ w
            (y * y).sum().backward()
            return y, h, x.grad
        return step

    eager, compiled = make_step(ws[0]), T.compile(make_step(ws[1]))
    xs = [np.array([[0.1, -0.0, 2.0], [1.0, -3.0, 0.5]]),
          np.array([[np.inf, 1.0, -0.0], [np.nan, 0.0, 800.0]]),
          np.array([[-np.inf, 1e-300, -2.0], [0.0, -0.0, 1.0]])]
    _run(eager, compiled, lambda i: (T.tensor(xs[i % 3], dtype=dtype, requires_grad=True),),
         6, [(ws[1], ws[0])])
    source = _source(compiled)
    # (float32's tanh is the op's saturation-corrected _tanh_f32, ops/elementary)
    tanh = "TANH_F32(" if dtype == T.float32 else "NP_TANH("
    assert "NP_SIN(" in source and "NP_COS(" in source and tanh in source
    assert " = f" not in source


@pytest.mark.parametrize("dtype", [T.float64, T.float32])
@pytest.mark.parametrize("no_grad", [False, True])
def test_tanh_saturation_is_eagers(dtype, no_grad):
    # float32: NumPy's tanh never reaches 1 below |x| = 10, PyTorch's (and eager's) does
    # from 9.0109 on, and its derivative is then 0: the replay corrects it as eager, into
    # a dying input (tanh(x * 2)) and into a new buffer (tanh(x), x read again later)
    def step(x):
        if no_grad:
            with T.no_grad():
                return T.tanh(x * 2.0), T.tanh(x) * x
        x.grad = None
        y, z = T.tanh(x * 2.0), T.tanh(x)
        (y * 3.0 + z * x).sum().backward()
        return y, z, x.grad

    xs = [np.array([[4.6, -4.51, 9.5], [-9.0109, 0.25, np.nan]]),
          np.array([[-20.0, 4.5, 9.0109], [np.inf, -np.inf, -0.0]]),
          np.array([[0.5, -1.0, 2.0], [3.0, -0.0, 1e-30]])]
    xs = [T.tensor(xs[i % 3], dtype=dtype, requires_grad=not no_grad) for i in range(6)]
    xe = [T.tensor(x.detach().numpy(), requires_grad=not no_grad) for x in xs]
    compiled = T.compile(step)
    for i in range(6):
        got, want = compiled(xs[i]), step(xe[i])
        assert same(got, want), f"call {i}"
        if dtype == T.float32 and i % 3 != 2:
            assert want[0].detach().numpy()[0, 2] == 1.0  # (eager's correction is there to keep)
    source = _source(compiled)
    tanh = "TANH_F32(" if dtype == T.float32 else "NP_TANH("
    assert source.count(tanh) == 2 and ", out=v" in source[source.index(tanh):]


def test_a_pointwise_value_read_later_keeps_its_buffer():
    # y = sin(x) is read after tanh(y) and exp's derivative: neither may write into it
    def step(x):
        x.grad = None
        y = T.sin(x)
        z = T.tanh(y)
        w = T.exp(z) * y
        (w.sum() + y.sum()).backward()
        return y, z, w, x.grad

    xs = [T.tensor(np.linspace(-2, 2, 6).reshape(2, 3) + i, requires_grad=True)
          for i in range(5)]
    xe = [T.tensor(x.detach().numpy(), requires_grad=True) for x in xs]
    compiled = T.compile(step)
    for i in range(5):
        assert same(compiled(xs[i]), step(xe[i]))
    source = _source(compiled)
    assert "NP_SIN(" in source and not re.search(r"out=v1\b", source)
