"""nn.init: distributions and bounds (values come from retrograd's generator, so the tests
check statistics, not PyTorch's numbers), deterministic initializers exactly, and errors
as PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.nn import init


def values(t):
    return t.detach().numpy().astype(np.float64)


@pytest.fixture(autouse=True)
def seeded():
    T.manual_seed(1234)


def test_calculate_gain_matches_torch(torch):
    for name, param in (("linear", None), ("conv2d", None), ("sigmoid", None),
                        ("tanh", None), ("relu", None), ("leaky_relu", None),
                        ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None)):
        assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for name, param in (("softsign", None), ("leaky_relu", "a"), ("leaky_relu", True)):
        with pytest.raises(ValueError) as ours:
            init.calculate_gain(name, param)
        with pytest.raises(ValueError) as theirs:
            torch.nn.init.calculate_gain(name, param)
        assert str(ours.value) == str(theirs.value)


def test_fans_match_torch(torch):
    for shape in ((3, 5), (4, 2, 3), (6, 2, 3, 3), (2, 3, 1, 2, 2)):
        assert init._calculate_fan_in_and_fan_out(T.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_uniform_and_normal_statistics():
    t = T.empty(200, 100)
    assert init.uniform_(t, -2.0, 3.0) is t
    v = values(t)
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.mean() - 0.5) < 0.05 and abs(v.var() - 25 / 12) < 0.1
    init.normal_(t, 1.5, 0.5)
    v = values(t)
    assert abs(v.mean() - 1.5) < 0.01 and abs(v.std() - 0.5) < 0.01


def test_trunc_normal_stays_in_bounds_with_right_moments():
    t = T.empty(300, 100)
    init.trunc_normal_(t, mean=0.0, std=1.0, a=-1.0, b=2.0)
    v = values(t)
    assert v.min() >= -1.0 and v.max() <= 2.0
    # moments of N(0, 1) truncated to [-1, 2]
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(2.0) - cdf(-1.0)
    mean = (phi(-1.0) - phi(2.0)) / z
    var = 1 + (-1.0 * phi(-1.0) - 2.0 * phi(2.0)) / z - mean ** 2
    assert abs(v.mean() - mean) < 0.01 and abs(v.var() - var) < 0.01
    with pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(T.empty(3), mean=10.0)


def test_constant_ones_zeros_eye_dirac_exactly(torch):
    t = T.empty(3, 4)
    np.testing.assert_array_equal(values(init.constant_(t, 2.5)), np.full((3, 4), 2.5))
    np.testing.assert_array_equal(values(init.ones_(t)), np.ones((3, 4)))
    np.testing.assert_array_equal(values(init.zeros_(t)), np.zeros((3, 4)))
    np.testing.assert_array_equal(values(init.eye_(t)), np.eye(3, 4))
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((2, 2, 1, 3, 3), 1)):
        ours = values(init.dirac_(T.empty(*shape), groups))
        theirs = torch.nn.init.dirac_(torch.empty(*shape), groups).numpy()
        np.testing.assert_array_equal(ours, theirs)


def test_xavier_and_kaiming_bounds_and_std():
    t = T.empty(400, 300)
    fan_in, fan_out = 300, 400
    init.xavier_uniform_(t, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    v = values(t)
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.99 * bound
    init.xavier_normal_(t)
    assert abs(values(t).std() - math.sqrt(2.0 / (fan_in + fan_out))) < 0.002
    init.kaiming_uniform_(t, a=0, nonlinearity="relu")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_in)
    v = values(t)
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.99 * bound
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(values(t).std() - math.sqrt(2.0 / fan_out)) < 0.002


def test_orthogonal_is_orthogonal():
    for shape in ((5, 3), (3, 5), (4, 2, 3)):
        t = init.orthogonal_(T.empty(*shape), gain=2.0)
        flat = values(t).reshape(shape[0], -1)
        small = min(flat.shape)
        gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
        np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_sparse_zeroes_a_fraction_per_column():
    t = init.sparse_(T.empty(10, 6), sparsity=0.3, std=0.5)
    v = values(t)
    assert ((v == 0).sum(axis=0) >= 3).all()


def test_initializers_do_not_record_and_bump_versions():
    w = nn.Parameter(T.empty(3, 3))
    v0 = w._version
    init.normal_(w)
    init.xavier_uniform_(w)
    assert w.is_leaf and w.grad_fn is None and w._version > v0


def test_generator_repeats_values():
    g = T.Generator().manual_seed(3)
    a = values(init.kaiming_uniform_(T.empty(3, 4), generator=g))
    g.manual_seed(3)
    b = values(init.kaiming_uniform_(T.empty(3, 4), generator=g))
    np.testing.assert_array_equal(a, b)


def test_errors_match_torch(torch):
    cases = [
        lambda m: m.nn.init.eye_(m.empty(2, 2, 2)),
        lambda m: m.nn.init.dirac_(m.empty(2, 2)),
        lambda m: m.nn.init.dirac_(m.empty(3, 2, 2), groups=2),
        lambda m: m.nn.init.xavier_uniform_(m.empty(3)),
        lambda m: m.nn.init.kaiming_normal_(m.empty(3, 2), mode="fan_avg"),
        lambda m: m.nn.init.orthogonal_(m.empty(3)),
        lambda m: m.nn.init.sparse_(m.empty(3, 2, 2), 0.1),
    ]
    for case in cases:
        with pytest.raises(ValueError) as ours:
            case(T)
        with pytest.raises(ValueError) as theirs:
            case(torch)
        assert str(ours.value) == str(theirs.value)
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(T.empty(0, 3))


def test_deprecated_names_warn():
    with pytest.warns(FutureWarning, match="nn.init.normal_"):
        init.normal(T.empty(2))


def test_linear_default_init_distribution():
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = values(m.weight), values(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.var() - bound ** 2 / 3) < 0.02 * bound ** 2
    assert np.abs(b).max() <= bound
    bl = nn.Bilinear(50, 3, 200)
    bound = 1 / math.sqrt(50)
    assert np.abs(values(bl.weight)).max() <= bound
    assert abs(values(bl.weight).var() - bound ** 2 / 3) < 0.05 * bound ** 2
