"""Op tests, factories and storage methods (ops/factories.py, ops/tensor_extras.py):
randperm, multinomial, poisson, binomial, logspace, range, scalar_tensor, the window
functions; Tensor.new, storage_offset, output_nr, resize_, resize_as_, narrow_copy.

``CASES`` (the registry's coverage check runs it) holds deterministic calls compared with
PyTorch by ``test_values_vs_torch``; random ops appear there only where the distribution is
degenerate (one category, rate 0, probability 0 or 1).  Their distributions are tested
statistically below with fixed seeds and bounds many standard errors wide; the differentiable
ones (poisson, narrow_copy) run every check of ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []
GRAD_CASES: list[Case] = []


def case(*args, grad=False, **kwargs):
    c = Case(*args, **kwargs)
    CASES.append(c)
    if grad:
        GRAD_CASES.append(c)


ONE_HOT = np.array([[0.0, 2.0, 0.0], [0.5, 0.0, 0.0]])

case("randperm_degenerate", lambda m, x: (m.randperm(1), m.randperm(0),
                                          m.randperm(1, dtype=m.float64)), ((1,),))
case("multinomial_one_hot", lambda m, x: (m.multinomial(m.tensor(ONE_HOT, dtype=x.dtype), 1),
                                          m.tensor(ONE_HOT[0], dtype=x.dtype).multinomial(
                                              3, replacement=True)), ((1,),))
case("poisson_rate_0", lambda m, x: m.poisson(x * 0), ((2, 3),), grad=True)
case("binomial_p01", lambda m, x: m.binomial(x.detach().abs().round(),
                                             (x.detach() > 0).to(x.dtype)), ((2, 3),))
case("binomial_grad_node", lambda m, x: m.binomial(x * 0 + 3, (x.detach() > 0).to(x.dtype)),
     ((4,),))
case("logspace", lambda m, x: (m.logspace(0, 2, 3), m.logspace(-1, 1, 5, base=2.0,
                                                               dtype=m.float64),
                               m.logspace(0, 3, 4, dtype=m.int64), m.logspace(0, 1, 0),
                               m.logspace(x[0].detach(), 1.0, 3, dtype=x.dtype)), ((2,),))
case("range", lambda m, x: (m.range(1, 4), m.range(0, 1, 0.25), m.range(3, 1, -1),
                            m.range(1, 3, dtype=m.int64), m.range(0, 0.3, 0.1, dtype=m.float64)),
     ((1,),))
case("scalar_tensor", lambda m, x: (m.scalar_tensor(3), m.scalar_tensor(True),
                                    m.scalar_tensor(2.5, dtype=m.float64),
                                    m.scalar_tensor(2, dtype=m.int64)), ((1,),))
for _w in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"):
    case(_w, lambda m, x, w=_w: (getattr(m, w)(5), getattr(m, w)(6, periodic=False),
                                 getattr(m, w)(1), getattr(m, w)(0),
                                 getattr(m, w)(4, dtype=m.float64)), ((1,),))
case("window_params", lambda m, x: (m.hamming_window(6, True, 0.5, 0.5),
                                    m.hamming_window(5, False, alpha=0.6),
                                    m.kaiser_window(7, False, 5.0), m.kaiser_window(6, True, 2.0)),
     ((1,),))
case("new", lambda m, x: (x.new(2, 3).zero_(), x.new([1, 2]), x.new(), x.new((2,)).zero_()),
     ((3,),))
case("storage_offset_output_nr", lambda m, x: m.tensor([
    x.storage_offset(), x[1:].storage_offset(), x.t()[1].storage_offset(), x.output_nr,
    x.max(0)[1].output_nr, m.tensor(3.0).output_nr]), ((3, 4),))
case("resize_", lambda m, x: (x.detach().clone().resize_(2, 2), x.detach().clone().resize_((5,)),
                              x.detach().clone().resize_(3, 4).resize_(1, 2)), ((3, 4),))
case("resize_as_", lambda m, x: x.detach().clone().resize_as_(m.ones(2, 5)), ((3, 4),))
case("narrow_copy", lambda m, x: m.narrow_copy(x, 1, 1, 2), ((3, 4),), grad=True)
case("narrow_copy_neg", lambda m, x: x.narrow_copy(-1, -3, 3), ((2, 4),), grad=True,
     xfail={"grads": "PyTorch 2.13's NarrowCopyBackward0 raises for a negative start (a size "
                     "mismatch inside torch); retrograd's gradient passes gradcheck"})
case("narrow_copy_dim0", lambda m, x: x.narrow_copy(0, 0, 0), ((2, 3),), grad=True)

(test_gradcheck, test_gradgradcheck, test_values_and_grads_vs_torch_f32_f64,
 test_grads_vs_torch, test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = \
    case_checks(GRAD_CASES)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [out]


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    assert a.requires_grad == b.requires_grad
    ra = None if a.grad_fn is None else a.grad_fn.name()
    rb = None if b.grad_fn is None else b.grad_fn.name()
    assert ra == rb
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_vs_torch(case, dtype, torch):
    outs = []
    for m in (retrograd, torch):
        xs = [m.tensor(a, dtype=getattr(m, dtype)).requires_grad_(True) for a in case.arrays()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            outs.append(_flat(case.call(m, *xs)))
    assert len(outs[0]) == len(outs[1])
    for a, b in zip(*outs):
        _same(a, b)


# ----------------------------------------------------------------- random: repeatable


@pytest.mark.parametrize("draw", [
    lambda m: m.randperm(10), lambda m: m.multinomial(m.tensor([0.2, 0.3, 0.5]), 2),
    lambda m: m.multinomial(m.ones(2, 4), 6, replacement=True),
    lambda m: m.poisson(m.full((5,), 3.0)), lambda m: m.binomial(m.full((4,), 10.0),
                                                                 m.full((4,), 0.3)),
], ids=["randperm", "multinomial", "multinomial_replacement", "poisson", "binomial"])
def test_repeatable_under_manual_seed_and_generator(draw):
    m = retrograd
    m.manual_seed(123)
    first = draw(m)
    m.manual_seed(123)
    assert (draw(m) == first).all()
    g = m.Generator().manual_seed(7)
    kw_draw = {"randperm": lambda: m.randperm(10, generator=g)}
    assert kw_draw["randperm"]().shape == (10,)


def test_randperm_is_a_permutation():
    retrograd.manual_seed(0)
    for n in (1, 2, 17):
        p = retrograd.randperm(n)
        assert p.dtype == retrograd.int64 and sorted(p.tolist()) == list(range(n))
    assert retrograd.randperm(5, dtype=retrograd.int32).dtype == retrograd.int32


def test_randperm_is_uniform():
    # first element of randperm(4) over 4000 draws: each value ~1000 (sd ~27); bounds 850/1150
    retrograd.manual_seed(1)
    counts = np.bincount([retrograd.randperm(4)[0].item() for _ in range(4000)], minlength=4)
    assert counts.min() > 850 and counts.max() < 1150, counts


def test_multinomial_frequencies():
    retrograd.manual_seed(2)
    p = retrograd.tensor([1.0, 3.0, 0.0, 6.0])
    draws = retrograd.multinomial(p, 20000, replacement=True)
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    # sd of each frequency <= 0.0036: bounds of 0.02 are > 5 sd
    np.testing.assert_allclose(freq, [0.1, 0.3, 0.0, 0.6], atol=0.02)
    assert freq[2] == 0  # a zero probability is never drawn


def test_multinomial_without_replacement():
    retrograd.manual_seed(3)
    draws = retrograd.multinomial(retrograd.ones(500, 5), 5)
    assert draws.shape == (500, 5)
    assert all(sorted(r) == list(range(5)) for r in draws.tolist())
    # first pick with weights 1:3 over 4000 rows: P(1) = 0.75, sd 0.007
    w = retrograd.tensor([1.0, 3.0]).expand(4000, 2)
    first = retrograd.multinomial(w, 2)[:, 0].numpy()
    assert abs(first.mean() - 0.75) < 0.04
    # zero-probability categories come last
    z = retrograd.multinomial(retrograd.tensor([0.0, 1.0, 0.0, 1.0]), 4)
    assert sorted(z[:2].tolist()) == [1, 3]


def test_poisson_and_binomial_moments():
    retrograd.manual_seed(4)
    rates = retrograd.full((20000,), 4.0)
    s = retrograd.poisson(rates).numpy()
    assert s.dtype == np.float32
    assert abs(s.mean() - 4.0) < 0.1 and abs(s.var() - 4.0) < 0.3  # sd(mean) 0.014
    b = retrograd.binomial(retrograd.full((20000,), 10.0, dtype=retrograd.float64),
                           retrograd.full((20000,), 0.3, dtype=retrograd.float64)).numpy()
    assert b.dtype == np.float64 and b.min() >= 0 and b.max() <= 10
    assert abs(b.mean() - 3.0) < 0.1 and abs(b.var() - 2.1) < 0.2  # sd(mean) 0.01


def test_binomial_and_poisson_gradients_as_torch(torch):
    for m in (retrograd, torch):
        rate = m.tensor([0.0, 0.0], requires_grad=True)
        m.poisson(rate).sum().backward()
        assert rate.grad.tolist() == [0.0, 0.0]
        count = m.tensor([2.0], requires_grad=True)
        out = m.binomial(count, m.tensor([1.0]))
        with pytest.raises(RuntimeError, match="derivative for aten::binomial"):
            out.sum().backward()


def test_range_warns_as_torch():
    with pytest.warns(UserWarning, match="deprecated"):
        retrograd.range(0, 2)


def test_resize_refuses_a_tensor_that_requires_grad(torch):
    for m in (retrograd, torch):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            m.ones(2, requires_grad=True).resize_(3)
    x = retrograd.ones(2)
    v = x._version
    x.resize_(3)
    assert x._version == v + 1 and x.tolist() == [1.0, 1.0, 0.0]


def test_narrow_copy_is_a_copy():
    x = retrograd.arange(6.0).reshape(2, 3)
    y = x.narrow_copy(1, 0, 2)
    y[0, 0] = 9.0
    assert x[0, 0].item() == 0.0


ERRORS = {
    "randperm_negative": (lambda m: m.randperm(-1), RuntimeError),
    "multinomial_negative": (lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1), RuntimeError),
    "multinomial_zero_sum": (lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1), RuntimeError),
    "multinomial_3d": (lambda m: m.multinomial(m.ones(2, 2, 2), 1), RuntimeError),
    "multinomial_too_many": (lambda m: m.multinomial(m.ones(3), 4), RuntimeError),
    "multinomial_int": (lambda m: m.multinomial(m.tensor([1, 2]), 1), RuntimeError),
    "poisson_negative": (lambda m: m.poisson(m.tensor([-1.0])), RuntimeError),
    "window_negative": (lambda m: m.hann_window(-1), RuntimeError),
    "window_int_dtype": (lambda m: m.hann_window(3, dtype=m.int64), RuntimeError),
    "logspace_negative_steps": (lambda m: m.logspace(0, 1, -1), RuntimeError),
    "range_step_zero": (lambda m: m.range(0, 1, 0), RuntimeError),
    "range_wrong_sign": (lambda m: m.range(0, 1, -1), RuntimeError),
    "narrow_copy_oob": (lambda m: m.narrow_copy(m.ones(2, 3), 1, 2, 2), RuntimeError),
    "narrow_copy_dim": (lambda m: m.ones(2, 3).narrow_copy(2, 0, 1), RuntimeError),
    "narrow_copy_0d": (lambda m: m.narrow_copy(m.tensor(1.0), 0, 0, 1), RuntimeError),
    "resize_negative": (lambda m: m.ones(2).resize_(-1), RuntimeError),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name, torch):
    fn, cls = ERRORS[name]
    for m in (retrograd, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            with pytest.raises(cls):
                fn(m)
