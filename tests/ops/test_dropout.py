"""Op tests, dropout (ops/dropout.py): dropout1d/2d/3d, alpha_dropout,
feature_alpha_dropout and PyTorch's top-level forms.

Random masks come from retrograd's generator, so values cannot equal PyTorch's.  The table
holds the calls whose values are certain (p = 1, p = 0, evaluation), compared with PyTorch
like every op; the tests below check the random ones by their statistics and structure
(whole channels dropped, the scale, alpha dropout's mean and variance), their repeatability
under ``manual_seed``, and exact gradients given the mask.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


case("F.dropout1d_all", lambda m, a: nnf(m).dropout1d(a, 1.0), ((2, 3, 4),))
case("F.dropout1d_unbatched_eval", lambda m, a: nnf(m).dropout1d(a, 0.5, False), ((3, 4),))
case("F.dropout1d_unbatched_all", lambda m, a: nnf(m).dropout1d(a * 1, 1.0, inplace=True),
     ((3, 4),))
case("F.dropout2d_all", lambda m, a: nnf(m).dropout2d(a, p=1.0), ((2, 3, 2, 2),))
case("F.dropout2d_none", lambda m, a: nnf(m).dropout2d(a * 2, p=0.0), ((2, 3, 2, 2),))
case("F.dropout3d_all", lambda m, a: nnf(m).dropout3d(a * 1, 1.0, inplace=True),
     ((2, 3, 2, 1, 2),))
case("F.dropout3d_unbatched_eval", lambda m, a: nnf(m).dropout3d(a, training=False),
     ((3, 2, 1, 2),))
case("F.alpha_dropout_all", lambda m, a: nnf(m).alpha_dropout(a, 1.0, True), ((3, 4),))
case("F.alpha_dropout_eval", lambda m, a: nnf(m).alpha_dropout(a * 3), ((3, 4),))
case("F.feature_alpha_dropout_all", lambda m, a: nnf(m).feature_alpha_dropout(
    a * 1, 1.0, True, True), ((2, 3, 2),))
case("dropout", lambda m, a: m.dropout(a, 1.0, True), ((3, 4),))
case("dropout_", lambda m, a: m.dropout_(a * 1, 1.0, True), ((3, 4),))
case("feature_dropout", lambda m, a: m.feature_dropout(a, 1.0, True), ((2, 3, 2),))
case("feature_dropout_", lambda m, a: m.feature_dropout_(a * 1, 1.0, True), ((2, 3, 2),))
case("alpha_dropout", lambda m, a: m.alpha_dropout(a, 1.0, True), ((3, 4),))
case("alpha_dropout_", lambda m, a: m.alpha_dropout_(a * 1, 0.3, False), ((3, 4),))
case("feature_alpha_dropout", lambda m, a: m.feature_alpha_dropout(a, 1.0, True), ((2, 3, 2),))
case("feature_alpha_dropout_", lambda m, a: m.feature_alpha_dropout_(a * 1, 1.0, True),
     ((2, 3, 2),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)

F = nnf(retrograd)
CHANNEL_DROPOUTS = [("dropout1d", (40, 50, 3)), ("dropout2d", (40, 50, 2, 2)),
                    ("dropout3d", (40, 50, 2, 1, 2)), ("feature_alpha_dropout", (40, 50, 3))]


def _x(shape):
    """Inputs with no zeros, so a dropped element is told apart by its value."""
    rng = np.random.default_rng(0)
    return retrograd.tensor(rng.uniform(0.5, 2.0, shape), requires_grad=True)


@pytest.mark.parametrize("name,shape", CHANNEL_DROPOUTS, ids=[c[0] for c in CHANNEL_DROPOUTS])
def test_channel_dropout_drops_whole_channels_at_rate_p(name, shape):
    p = 0.3
    x = _x(shape)
    y = getattr(F, name)(x, p, True)
    xd = x.detach().numpy().reshape(shape[0], shape[1], -1)
    yd = y.detach().numpy().reshape(shape[0], shape[1], -1)
    if name == "feature_alpha_dropout":  # kept: a * x + alpha * a * p; dropped: a constant
        a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
        kept = np.isclose(yd, a * xd + 1.7580993408473766 * a * p, rtol=1e-12)
        dropped = np.isclose(yd, -1.7580993408473766 * a * (1 - p), rtol=1e-12)
    else:
        kept = np.isclose(yd, xd / (1 - p), rtol=1e-12)
        dropped = yd == 0
    # one decision per (sample, channel): every spatial element shares it
    assert np.all(kept | dropped)
    assert np.all(kept.all(axis=2) | dropped.all(axis=2))
    rate = np.mean(dropped[:, :, 0])
    assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / (shape[0] * shape[1]))


@pytest.mark.parametrize("name,shape", CHANNEL_DROPOUTS[:3] + [("alpha_dropout", (30, 40))],
                         ids=["dropout1d", "dropout2d", "dropout3d", "alpha_dropout"])
def test_backward_uses_the_forward_mask(name, shape):
    x = _x(shape)
    y = getattr(F, name)(x, 0.4, True)
    g = np.random.default_rng(1).standard_normal(shape)
    y.backward(retrograd.tensor(g))
    xd, yd = x.detach().numpy(), y.detach().numpy()
    if name == "alpha_dropout":  # y = x * noise + b: the gradient is the noise
        a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.4 + 1) * 0.6)
        noise = np.where(np.isclose(yd, a * xd + 1.7580993408473766 * a * 0.4), a, 0.0)
        np.testing.assert_allclose(x.grad.numpy(), g * noise, rtol=1e-12)
        assert 0 < np.mean(noise == 0) < 1
    else:
        np.testing.assert_allclose(x.grad.numpy(), g * yd / xd, rtol=1e-12)


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_gradcheck_given_the_mask(name):
    shapes = {"dropout1d": (2, 3, 2), "dropout2d": (2, 3, 2, 2), "dropout3d": (2, 3, 1, 2, 2),
              "alpha_dropout": (3, 4), "feature_alpha_dropout": (2, 3, 2)}

    def fn(a):
        retrograd.manual_seed(11)  # the same mask on every call
        return getattr(F, name)(a, 0.5, True)

    x = _x(shapes[name])
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_repeatable_under_manual_seed(name):
    x = _x({"dropout3d": (4, 6, 2, 2, 2), "dropout2d": (4, 6, 2, 2)}.get(name, (4, 6, 3)))
    outs = []
    for _ in range(2):
        retrograd.manual_seed(123)
        outs.append(getattr(F, name)(x, 0.5, True).detach().numpy())
    np.testing.assert_array_equal(*outs)
    assert not np.array_equal(outs[0], getattr(F, name)(x, 0.5, True).detach().numpy())


def test_alpha_dropout_keeps_mean_and_variance():
    retrograd.manual_seed(0)
    x = retrograd.randn(400_000, dtype=retrograd.float64)
    for p in (0.1, 0.5):
        y = F.alpha_dropout(x, p, True).numpy()
        assert abs(y.mean()) < 0.01
        assert abs(y.var() - 1) < 0.02
        dropped = np.isclose(y, -1.7580993408473766 * (1 - p) / np.sqrt(
            (1.7580993408473766 ** 2 * p + 1) * (1 - p)))
        assert abs(dropped.mean() - p) < 0.01


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_eval_and_p0_return_the_input(name):
    x = _x({"dropout1d": (2, 3, 2), "dropout3d": (2, 3, 2, 1, 2)}.get(name, (2, 3, 2, 2)))
    assert getattr(F, name)(x, 0.5, False) is x
    assert getattr(F, name)(x, 0.0, True) is x


@pytest.mark.parametrize("name", ["dropout2d", "alpha_dropout"])
def test_inplace_changes_the_input(name):
    y = _x((3, 4, 2, 2)) * 1
    before = y.detach().numpy().copy()
    version = y._version
    out = getattr(F, name)(y, 0.5, True, inplace=True)
    assert out is y and y._version > version
    assert not np.array_equal(y.detach().numpy(), before)


def test_float32_stays_float32():
    x = retrograd.ones(4, 5, 3)
    for fn in (F.dropout1d, F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5, True).dtype == retrograd.float32


def test_dropout2d_warns_about_3d_input_as_torch(torch):
    for m in (torch, retrograd):
        with pytest.warns(UserWarning, match="channel-wise 1D dropout"):
            nnf(m).dropout2d(m.ones(2, 3, 4), 0.5)
        with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
            nnf(m).dropout2d(m.ones(2, 3, 4, 1, 1), 0.5)


def test_docstring_examples_run():
    import doctest

    from retrograd.ops import dropout

    assert doctest.testmod(dropout, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
