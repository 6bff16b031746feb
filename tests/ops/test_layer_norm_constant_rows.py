"""layer_norm and group_norm of a float64 row of equal values normalize to exactly 0, as
PyTorch's row moments give: NumPy's sum / n is not exactly the value (1.56 x 3 gives
1.5600000000000003), and that residue, times rstd = 1/sqrt(eps), met abs's kink downstream
(fuzz seed 20722360: a leaf gradient of 463 where PyTorch's is 0)."""

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

ROWS = [[1.56] * 3, [0.1] * 7, [-2.3e-7] * 5, [1e10 + 0.3] * 4, [0.7] * 2]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r[0]}x{len(r)}")
def test_constant_row_normalizes_to_zero(row):
    for lib in (retrograd, torch):
        x = lib.tensor([row, row], dtype=lib.float64)
        y = lib.nn.functional.layer_norm(x, (len(row),))
        g = lib.nn.functional.group_norm(x[None], 1)
        assert not y.detach().numpy().any(), (lib.__name__, y)
        assert not g.detach().numpy().any(), (lib.__name__, g)


def test_seed_20722360_gradient_as_torch():
    def grad(lib):
        v0 = lib.tensor([[1.56, 1.56, 1.56]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[1.0, -0.0, -1.0]], dtype=lib.float64)
        v4 = lib.nn.functional.layer_norm(v0, (1, 3), weight=w)
        v6 = (v4.abs().add(0.5)).log2()
        (v6 * v6.detach().tanh()).sum().backward()
        return v0.grad.numpy()

    np.testing.assert_array_equal(grad(retrograd), grad(torch))


def test_other_rows_still_agree_with_torch():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 9)) * 10.0 ** rng.integers(-3, 4, size=(6, 1))
    r = retrograd.nn.functional.layer_norm(retrograd.tensor(x), (9,)).numpy()
    t = torch.nn.functional.layer_norm(torch.tensor(x), (9,)).numpy()
    np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)
