"""The seed post's notebook, verbatim with ``import retrograd as T``, gives the post's results.

z = (2x)^3, so dz/dx = 24 x^2; every cell's x.grad is checked against that formula.
"""

import warnings

import numpy as np
import pytest
from seed_notebook import run_cell

import retrograd as T


def _grad(ns):
    return ns["x"].grad.numpy()


def _x(ns):
    return ns["x"].detach().numpy()


@pytest.fixture
def ns():
    namespace = {}
    run_cell("1", namespace)
    return namespace


def test_cells_2_to_4_default_gradient(ns, capsys):
    run_cell("2", ns)
    run_cell("3", ns)
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        run_cell("4", ns)
    out = capsys.readouterr().out
    assert "z gradient None" in out and "y gradient None" in out
    assert ns["x"].grad_fn is None and ns["y"].grad_fn.name() == "MulBackward0"
    assert ns["z"].grad_fn.name() == "PowBackward0"
    np.testing.assert_allclose(_grad(ns), 24 * _x(ns) ** 2, rtol=1e-5)
    assert isinstance(ns["x"].grad, T.autograd.Variable)


def test_cells_5_6_one_element_gradient_and_scaling(ns):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_cell("5", ns)
        np.testing.assert_allclose(_grad(ns), 24 * _x(ns) ** 2, rtol=1e-5)
        run_cell("6", ns)
    np.testing.assert_allclose(_grad(ns), 2.4 * _x(ns) ** 2, rtol=1e-5)


def test_cell_24_broadcast_gradient_selects_columns(ns, capsys):
    run_cell("24", ns)
    x = _x(ns)
    # the last backward used [1, 1]: every element gets 24 x^2
    np.testing.assert_allclose(_grad(ns), 24 * x ** 2, rtol=1e-5)
    z, xt = ns["z"], ns["x"]
    for weights, column in (([1, 0], 0), ([0, 1], 1)):
        xt.grad.data.zero_()
        z.backward(T.FloatTensor(weights), retain_graph=True)
        expected = np.zeros_like(x)
        expected[:, column] = 24 * x[:, column] ** 2
        np.testing.assert_allclose(_grad(ns), expected, rtol=1e-5)
    assert "z shape: retrograd.Size([2, 2])" in capsys.readouterr().out


def test_cell_25_mean(ns):
    run_cell("25", ns)
    # out = mean((2x)^3): d out/dx = 24 x^2 / 4, then scaled by 0.1
    np.testing.assert_allclose(_grad(ns), 0.1 * 6 * _x(ns) ** 2, rtol=1e-5)


def test_cell_27_second_backward_without_retain_graph_raises(ns):
    with pytest.raises(RuntimeError, match="retain_graph=True") as info:
        run_cell("27", ns)
    assert "second time" in str(info.value)
    # the first backward did run: 6 x^2
    np.testing.assert_allclose(_grad(ns), 0, atol=0)  # zeroed by the cell before the error


def test_legacy_keywords_grad_variables_and_retain_variables():
    x = T.randn(2, 2, requires_grad=True)
    z = (2 * x) ** 3
    with pytest.warns(DeprecationWarning, match="grad_variables"):
        z.backward(grad_variables=T.FloatTensor([1, 0]), retain_variables=True)
    expected = np.zeros((2, 2), np.float32)
    expected[:, 0] = 24 * x.detach().numpy()[:, 0] ** 2
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)
    with pytest.warns(DeprecationWarning, match="retain_variables"):
        T.autograd.backward([z], grad_variables=[T.ones(2, 2)], retain_variables=True)
    z.backward(T.ones(2, 2))  # the graph was retained by retain_variables=True


def test_gradient_shape_mismatch_names_both_shapes():
    x = T.randn(2, 2, requires_grad=True)
    z = (2 * x) ** 3
    with pytest.raises(RuntimeError, match=r"\[3\].*\[2, 2\]"):
        z.backward(T.FloatTensor([1, 0, 1]))
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        z.backward()
