"""Fuzzer findings of the final 30-minute run handled by triB (issue 7): each program must
run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions); accepted differences must match their seed and refuse variants."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # PyTorch's rot90 by an odd k is a transposed view of a flip: not contiguous, so rms_norm
    # of it clones (CloneBackward0); retrograd's rot90 was a contiguous copy (seed 17036254)
    "rms_norm_of_rot90": """
v3 = T.tensor([[0.0, 1.0, -1.0], [-1.0, 0.0, -0.0]], dtype=T.float64)
v8 = T.rot90(v3, 1, [0, 1])
v9 = T.tensor([[1.0, -0.0], [0.0, 1.0], [-2.0, 0.0]], dtype=T.float64, requires_grad=True)
v10 = T.nn.functional.rms_norm(v8, (3, 2), weight=v9)
v11 = T.nn.functional.rms_norm(v8.t(), (2, 3), weight=v9.t())
""",
    # float32 sigmoid(-2) was 1 ulp above the correctly rounded value (PyTorch's), so
    # logit of it was not -2 and digamma missed its pole: -8388607 for nan (seed 17049821)
    "digamma_of_logit_sigmoid_at_pole": """
v0 = T.tensor([[2, -2]], dtype=T.int64)
v1 = T.tensor([[-2, -2]], dtype=T.int64)
v2 = T.slice_scatter(v0, v1, dim=0, start=0, end=1, step=1)
v3 = T.logit(v2.sigmoid())
v4 = v3.digamma()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_trib(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _layouts(lib, x):
    """Strides of rot90 (every k, every plane) and flip of ``x`` built in ``lib``."""
    out = []
    for k in range(-1, 5):
        for dims in [(0, 1), (1, 2), (2, 0), (0, 2)]:
            out.append(lib.rot90(x, k, dims).stride())
    for dims in [(0,), (1,), (0, 2), (0, 1, 2)]:
        out.append(lib.flip(x, dims).stride())
    return out


@pytest.mark.parametrize("view", ["plain", "transposed", "strided", "permuted", "expanded"])
def test_rot90_and_flip_layout_like_pytorch(view):
    def make(lib):
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4).tolist())
        return {"plain": x, "transposed": x.transpose(0, 2), "strided": x[:, ::2],
                "permuted": x.permute(1, 2, 0), "expanded": x[:1].expand(3, 3, 4)}[view]
    assert _layouts(retrograd, make(retrograd)) == _layouts(torch, make(torch))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_sigmoid_correctly_rounded_and_zero_where_pytorch_is(dtype):
    """float32/16 sigmoid is the float64 one rounded once (never farther from it than
    PyTorch's), and 0 where PyTorch's float32 exp(-x) overflows (x < -88.7228)."""
    x = np.concatenate([np.linspace(-95, 20, 4001), np.arange(-20.0, 21.0),
                        [-1e30, 1e30, 0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    with np.errstate(over="ignore"):
        truth = 1 / (1 + np.exp(-x.astype(np.float64)))
    ours = retrograd.tensor(x).sigmoid().numpy()
    theirs = torch.sigmoid(torch.from_numpy(x)).numpy()
    assert ours.dtype == x.dtype
    assert np.array_equal(ours == 0, theirs == 0)
    off = ours != 0
    assert np.array_equal(ours[off], truth[off].astype(dtype), equal_nan=True)
    assert not (abs(ours.astype(np.float64) - truth) > abs(theirs.astype(np.float64) - truth)).any()
