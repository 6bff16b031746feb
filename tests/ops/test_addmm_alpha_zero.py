"""addmm / addmv / addbmm with alpha == 0, as PyTorch 2.13: its BLAS call scales the input
and skips the product, so nan and inf in the matrices do not reach the result (fuzz seed
20807063: retrograd gave nan * 0 = nan); baddbmm and addr do propagate them, in both
libraries.  Values (signed zeros and nans included), dtypes, shapes and gradients."""

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _calls(T, beta, inp):  # noqa: N803 - the library, as the fuzzer's programs name it
    f64 = T.float64
    mat = T.tensor([[NAN, 1.0], [INF, -2.0]], dtype=f64)
    vec = T.tensor([1.0, -INF], dtype=f64)
    i1 = T.tensor(inp, dtype=f64)
    return {
        "addmv": lambda: T.addmv(i1, mat, vec, beta=beta, alpha=0.0),
        "addmm": lambda: T.addmm(i1, mat, mat, beta=beta, alpha=0.0),
        "addbmm": lambda: T.addbmm(i1, mat[None], mat[None], beta=beta, alpha=0.0),
        "baddbmm": lambda: T.baddbmm(i1, mat[None], mat[None], beta=beta, alpha=0.0),
        "addr": lambda: T.addr(i1, vec, vec, beta=beta, alpha=0.0),
        "addmm_": lambda: T.zeros(2, 2, dtype=f64).add_(i1).addmm_(mat, mat, beta=beta,
                                                                    alpha=0.0),
    }


@pytest.mark.parametrize("name", ["addmv", "addmm", "addbmm", "baddbmm", "addr", "addmm_"])
@pytest.mark.parametrize("beta", [0.0, 1.0, 2.5])
@pytest.mark.parametrize("inp", [-0.0, 3.0, NAN])
def test_alpha_zero_values_as_torch(name, beta, inp):
    r = _calls(retrograd, beta, inp)[name]()
    t = _calls(torch, beta, inp)[name]()
    assert tuple(r.shape) == tuple(t.shape)
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    rv, tv = r.numpy(), t.numpy()
    np.testing.assert_array_equal(rv, tv)  # (nan == nan here)
    # signed zeros as PyTorch's (a NaN's sign bit is the libraries' own: not compared)
    np.testing.assert_array_equal(np.signbit(rv[rv == rv]), np.signbit(tv[tv == tv]))


@pytest.mark.parametrize("name", ["addmv", "addmm", "addbmm"])
def test_alpha_zero_gradients_as_torch(name):
    def run(T):  # noqa: N803 - the library
        f64 = T.float64
        mat = T.tensor([[NAN, 1.0], [2.0, -2.0]], dtype=f64, requires_grad=True)
        vec = T.tensor([1.0, 3.0], dtype=f64, requires_grad=True)
        inp = T.tensor([0.5, -1.0], dtype=f64, requires_grad=True)
        out = {"addmv": lambda: T.addmv(inp, mat, vec, beta=2.0, alpha=0.0),
               "addmm": lambda: T.addmm(inp, mat, mat, beta=2.0, alpha=0.0),
               "addbmm": lambda: T.addbmm(inp, mat[None], mat[None], beta=2.0,
                                          alpha=0.0)}[name]()
        out.sum().backward()
        return [t.grad.numpy() for t in (mat, vec, inp) if t.grad is not None]

    for r, t in zip(run(retrograd), run(torch), strict=True):
        np.testing.assert_array_equal(r, t)
