"""Fuzzer findings handled by fuzzV (issue 7, stop 23, seeds 19700000+ and the raise hunt
from 19750000).

An op whose derivative needs its input's shape took it from the node that made the input
(its recorded output shape).  An in-place shape change under no_grad (unsqueeze_, squeeze_,
t_, transpose_) between the two makes those differ: PyTorch's derivatives use the shape the
op saw (self_sym_sizes), and its engine then sums the gradient to the producer's shape
(unsqueeze_) or refuses it with "returned an invalid gradient" (t_).  retrograd built the
gradient in the producer's shape: diagonal's raised IndexError from diag_embed (seed
19735467), max/sort/topk/kthvalue raised where PyTorch runs, and under t_ several ran or
raised NumPy's ValueError/IndexError where PyTorch raises RuntimeError."""

import pytest

torch = pytest.importorskip("torch")

import numpy as np  # noqa: E402

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

# seed 19735467, shrunk: the gradient of a (1, 0) diagonal of a (1, 1, 0) tensor made so by
# unsqueeze_ under no_grad after ceil recorded it as (1, 0)
_SEED_19735467 = """
v0 = T.zeros((1, 0), dtype=T.float64, requires_grad=True)
v2 = v0.ceil()
with T.set_grad_enabled(False):
    v2.unsqueeze_(-3)
v3 = v2.diagonal(-1, 1, 2)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
"""


def test_seed_19735467_agrees():
    assert compare(program_from_text(_SEED_19735467)) is None


def _nll(lib, y):
    return lib.nn.functional.nll_loss(y, lib.zeros(y.shape[0], dtype=lib.int64))


def _cross_entropy(lib, y):
    return lib.nn.functional.cross_entropy(y, lib.zeros(y.shape[0], dtype=lib.int64))


# every op whose derivative builds a gradient of its input's shape
_OPS = {
    "diagonal": lambda lib, y: y.diagonal(),
    "diagonal_offset": lambda lib, y: y.diagonal(-1, 0, 1),
    "diag": lambda lib, y: y.diag(),
    "trace": lambda lib, y: y.trace(),
    "unfold": lambda lib, y: y.unfold(0, 1, 1),
    "max_dim": lambda lib, y: y.max(0)[0],
    "min_dim_last": lambda lib, y: y.min(-1, keepdim=True)[0],
    "sort": lambda lib, y: y.sort(0)[0],
    "topk": lambda lib, y: y.topk(1, 0)[0],
    "kthvalue": lambda lib, y: y.kthvalue(1, 0)[0],
    "median_dim": lambda lib, y: y.median(0)[0],
    "nanmedian_dim": lambda lib, y: y.nanmedian(-1)[0],
    "mode": lambda lib, y: y.mode(0)[0],
    "cummax": lambda lib, y: y.cummax(0)[0],
    "cummin": lambda lib, y: y.cummin(-1)[0],
    "nll_loss": _nll,
    "cross_entropy": _cross_entropy,
}
_CHANGES = {  # the in-place change under no_grad, and the input's shape before it
    "t_": (lambda y: y.t_(), (2, 3)),
    "transpose_": (lambda y: y.transpose_(0, 1), (2, 3)),
    "unsqueeze_": (lambda y: y.unsqueeze_(0), (2, 3)),
    "squeeze_": (lambda y: y.squeeze_(0), (1, 3)),
}


def _outcome(lib, op, change, create_graph):
    mutate, shape = _CHANGES[change]
    x = lib.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) * [1, -1, 1][:shape[1]],
                   dtype=lib.float64, requires_grad=True)
    y = x + 0.0  # (a node that saves nothing: no version check fires first)
    with lib.no_grad():
        mutate(y)
    try:
        z = _OPS[op](lib, y)
    except Exception as e:  # both refuse the op itself (a 1-d input to diag's 2-d form...)
        return ("forward", type(e))
    try:
        (g,) = lib.autograd.grad(z.sum(), [x], create_graph=create_graph)
    except Exception as e:
        return ("backward", type(e))
    return ("ok", np.array(g.detach().tolist()))


@pytest.mark.parametrize("change", sorted(_CHANGES))
@pytest.mark.parametrize("op", sorted(_OPS))
def test_gradient_uses_the_shape_the_op_saw(op, change):
    """Whether backward raises, its exception class, and the gradient, as PyTorch's."""
    for create_graph in (False, True):
        want = _outcome(torch, op, change, create_graph)
        got = _outcome(retrograd, op, change, create_graph)
        assert got[0] == want[0], (create_graph, got, want)
        if want[0] == "ok":
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=0)
        else:
            assert got[1].__name__ == want[1].__name__, (create_graph, got, want)
