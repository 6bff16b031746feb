"""Fuzzer findings handled by fuzzV (issue 7, stop 23, seeds 19700000+ and the raise hunt
from 19750000).

An op whose derivative needs its input's shape took it from the node that made the input
(its recorded output shape).  An in-place shape change under no_grad (unsqueeze_, squeeze_,
t_, transpose_) between the two makes those differ: PyTorch's derivatives use the shape the
op saw (self_sym_sizes), and its engine then sums the gradient to the producer's shape
(unsqueeze_) or refuses it with "returned an invalid gradient" (t_).  retrograd built the
gradient in the producer's shape: diagonal's raised IndexError from diag_embed (seed
19735467), max/sort/topk/kthvalue raised where PyTorch runs, and under t_ several ran or
raised NumPy's ValueError/IndexError where PyTorch raises RuntimeError.

linalg: eigh/eigvalsh that do not converge raise PyTorch's LinAlgError, not NumPy's (seed
19759501), and an SVD with vectors of a matrix holding an infinite entry no longer hangs in
OpenBLAS (an accepted difference where PyTorch's MKL returns instead of raising)."""

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


# seed 19759501 (tests/fuzz/hunt_raises.py), shrunk: eigvalsh of a 3x3 matrix of NaNs, where
# LAPACK's syevd does not converge: NumPy's LinAlgError (a ValueError) leaked, PyTorch raises
# its LinAlgError, a RuntimeError
_SEED_19759501 = """
v0 = T.tensor([[[1.0]], [[1.0]], [[0.0]]], dtype=T.float64)
v1 = v0.std(dim=1, correction=2)
v3 = T.linalg.eigvalsh((v1 @ v1.mT) + (v1 @ v1.mT).mT)
"""


def test_seed_19759501_agrees():
    assert compare(program_from_text(_SEED_19759501)) is None


@pytest.mark.parametrize("fn", ["eigh", "eigvalsh"])
def test_eigh_that_does_not_converge_raises_linalg_error(fn):
    a = retrograd.full((3, 3), float("nan"), dtype=retrograd.float64)
    with pytest.raises(retrograd.linalg.LinAlgError, match=r"linalg\.eigh: The algorithm "
                       "failed to converge"):
        getattr(retrograd.linalg, fn)(a)
    with pytest.raises(RuntimeError):  # (PyTorch's class, checked against it)
        getattr(torch.linalg, fn)(torch.full((3, 3), float("nan"), dtype=torch.float64))


_HANGS_OPENBLAS = """
import sys
import retrograd as T
a = T.ones(3, 3, dtype=T.float64) + T.eye(3, dtype=T.float64)
a[0, 0] = -float("inf")
for call in (lambda: T.linalg.svd(a), lambda: T.linalg.pinv(a),
             lambda: T.linalg.lstsq(a, a), lambda: T.linalg.svd(a.expand(2, 3, 3))):
    try:
        call()
        sys.exit("no error")
    except T.linalg.LinAlgError as e:
        assert "infinite entry" in str(e), e
print(T.linalg.svdvals(a).tolist())
"""


def test_svd_of_an_infinite_matrix_returns():
    """OpenBLAS's gesdd never returns on this matrix (NumPy hangs): retrograd raises
    LinAlgError at once, as PyTorch mostly does; svdvals gives NaN, as PyTorch's."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _HANGS_OPENBLAS], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    a = torch.ones(3, 3, dtype=torch.float64) + torch.eye(3, dtype=torch.float64)
    a[0, 0] = -float("inf")
    assert out.stdout.strip() == str(torch.linalg.svdvals(a).tolist())


def test_svd_of_a_small_infinite_matrix_is_lapacks():
    """With a side of 2 or less LAPACK returns (NaN values; vectors as PyTorch's here)."""
    m = [[float("inf"), 1.0], [1.0, 2.0]]
    got = retrograd.linalg.svd(retrograd.tensor(m, dtype=retrograd.float64))
    want = torch.linalg.svd(torch.tensor(m, dtype=torch.float64))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.array(g.tolist()), w.numpy())


# PyTorch runs here (NaN singular values, unspecified vectors); retrograd raises
_SVD_INFINITE_PROGRAM = """
v0 = T.tensor([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 2.0]], dtype=T.float64)
v1 = (v0 - 2.0).reciprocal()
v2 = T.linalg.svd(v1).U
"""


def test_svd_of_an_infinite_matrix_entry_matches_only_it():
    from . import known_bugs
    from .runner import Failure

    failure = compare(program_from_text(_SVD_INFINITE_PROGRAM))
    assert failure is not None and failure.kind == "raise"
    assert known_bugs._svd_of_an_infinite_matrix(None, failure)
    # refused: NumPy's own refusal (a NaN), PyTorch raising too, another message
    nan_message = failure.message.replace(known_bugs._SVD_OF_INFINITE, "contained non-finite")
    for variant in (Failure("raise", failure.op, nan_message, failure.chunk, "", "RuntimeError"),
                    Failure("raise", failure.op, failure.message, failure.chunk, "RuntimeError",
                            "ValueError"),
                    Failure("value", failure.op, failure.message)):
        assert not known_bugs._svd_of_an_infinite_matrix(None, variant)
