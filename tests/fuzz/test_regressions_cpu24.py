"""Fuzzer findings handled by cpu24 (stop 24: main red on an AMD EPYC with AVX-512).

- 19734708: det(v0 @ v0.mT) of a 3x3 rank-1 matrix, autograd.grad create_graph, second
  backward: PyTorch's v0.grad is NaN (its det singular path through MKL's SVD, whose zero
  singular values come out exactly equal), retrograd's 0, the exact value.  On this CPU
  NumPy's OpenBLAS (SkylakeX kernels) gives distinct zero singular values, so retrograd's
  same formula stays finite; with the Haswell kernels both are NaN and the seed replays
  clean.  Accepted (known_bugs._det_double_backward_nan_at_rank_deficit); either outcome is
  checked here.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import known_bugs as kb  # noqa: E402
from .program import program_from_text  # noqa: E402
from .runner import Failure, compare  # noqa: E402

_ENTRY = kb._det_double_backward_nan_at_rank_deficit

# the seed's program as the shrinker printed it on the AVX-512 machine
_SEED = """
v0 = T.tensor([[0.01], [0.0], [-0.52]], dtype=T.float64, requires_grad=True)
v7 = T.linalg.det((v0 @ v0.mT))
loss = (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
"""
_FAKE = Failure("grad", "", "v0.grad: values differ\n  torch     [[nan], [nan], [nan]]\n"
                            "  retrograd [[0.0], [0.0], [0.0]]")


# the seed's whole program as generated when the entry was written (commit 937b9fd; it failed,
# unmatched, before it), not replayed from the seed: what a seed generates changes when the
# op tables grow
_WHOLE = """
v0 = T.tensor([[0.01], [0.0], [-0.52]], dtype=T.float64, requires_grad=True)
v1 = T.tensor(-1.45, dtype=T.float32)
h2 = v0.register_hook(lambda g: LOG.append(('v0', g.detach().clone())))
v3 = T.acos(v0.tanh().mul(0.9))
v4 = (v1.abs().add(0.5)).lgamma()
v5 = (v4.abs().add(0.5)).sqrt()
v6 = v1.var()
v4.lerp_(v5, 0.25)
v7 = T.linalg.det((v0 @ v0.mT))
v8 = v6.norm(p=1, dim=0, keepdim=True)
v8.floor_()
h9 = v3.register_hook(lambda g: LOG.append(('v3', g.detach().clone())))
loss = (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
"""  # noqa: E501 - the program as printed


def _entry_name():
    return next(name for name, pred in kb.ACCEPTED_DIFFERENCES if pred is _ENTRY)


def test_seed_19734708_accepted_or_clean():
    """Accepted where retrograd's SVD separates the zero singular values (finite, exact 0)
    and PyTorch's does not (NaN); clean where both LAPACKs return them equal (NaN in both:
    OpenBLAS's Haswell kernels, the CPU before).  Both outcomes are PyTorch's bug or its
    faithful copy; any other failure is not."""
    whole = program_from_text(_WHOLE, 19734708)
    failure = compare(whole)
    if failure is not None:
        assert kb.which_known(whole, failure) == _entry_name(), failure
    prog = program_from_text(_SEED, 19734708)
    failure = compare(prog)
    if failure is None:  # (both NaN: this CPU's NumPy SVD gives the zeros equal too)
        return
    assert failure.kind == "grad" and failure.message.startswith("v0.grad"), failure
    assert _ENTRY(prog, failure)
    assert kb.which_known(prog, failure) == _entry_name()


def test_det_of_rank_deficit_gradient_is_exactly_zero():
    """The excuse holds: det(v v^T) of a 3x3 is identically 0, so its derivatives of every
    order are 0; PyTorch's Leibniz-polynomial det gives that, and retrograd's det double
    backward is 0 or (where its SVD returns equal zeros, as PyTorch's always does) NaN."""
    def grad_of(lib, det):
        v0 = lib.tensor([[0.01], [0.0], [-0.52]], dtype=lib.float64, requires_grad=True)
        d = det(v0 @ v0.mT)
        (g,) = lib.autograd.grad(d * 1.5, [v0], create_graph=True)
        (gg,) = lib.autograd.grad((g * 2.0).sum(), [v0])
        return g.detach().numpy(), gg.detach().numpy()

    leibniz = eval(f"lambda a: {kb._leibniz_text('a', 3)}")  # noqa: S307 - our own text
    g, gg = grad_of(torch, leibniz)
    assert np.abs(g).max() < 1e-15 and np.abs(gg).max() < 1e-15  # (0 up to rounding)
    g_t, gg_t = grad_of(torch, torch.linalg.det)
    assert np.abs(g_t).max() < 1e-15 and np.isnan(gg_t).all()  # (PyTorch 2.13's bug)
    g_r, gg_r = grad_of(retrograd, retrograd.linalg.det)
    assert np.abs(g_r).max() < 1e-15
    assert np.isnan(gg_r).all() or np.abs(gg_r).max() < 1e-15


@pytest.mark.parametrize("n", [2, 3, 4])
def test_leibniz_text_is_the_det(n):
    a = torch.randn(2, n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(n))
    got = eval(kb._leibniz_text("a", n), {"a": a})  # noqa: S307 - our own text
    np.testing.assert_allclose(got.numpy(), torch.linalg.det(a).numpy(), rtol=1e-12)


def test_entry_refuses_a_full_rank_matrix():
    """A fabricated NaN failure of a det of full rank: its adjugate is not 0, no excuse."""
    full = _SEED.replace("[[0.01], [0.0], [-0.52]]",
                         "[[1.0, 0.5, 0.0], [0.0, 2.0, 0.3], [0.2, 0.0, 1.0]]")
    prog = program_from_text(full, 19734708)
    assert compare(prog) is None
    assert not _ENTRY(prog, _FAKE)
    assert not _ENTRY(prog, Failure("value", "", _FAKE.message))


def test_entry_refuses_where_pytorch_is_not_nan():
    """Rank 1, but a single backward (no SVD path): PyTorch's gradient is a finite 0."""
    once = _SEED.split("gs = ", 1)[0] + "loss.backward()\n"
    prog = program_from_text(once, 19734708)
    assert compare(prog) is None
    assert not _ENTRY(prog, _FAKE)


def test_entry_refuses_a_wrong_finite_gradient(monkeypatch):
    """retrograd's det double backward made finite but wrong (cofactors of value 0, right,
    whose own derivative is the identity's, wrong): PyTorch is NaN, retrograd finite, rank
    1, yet the Leibniz rerun's exact gradient (0) is not retrograd's, so the entry
    refuses."""
    from retrograd.ops import linalg_scalars

    text = _SEED.replace("loss = (v7 * v7.detach().tanh()).sum()", "loss = (v7 * 1.5).sum()")
    text = text.replace("loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not "
                         "None)", "loss2 = sum((g * 2.0).sum() for g in gs)")
    monkeypatch.setattr(linalg_scalars, "_det_cofactors",
                        lambda a, g: (a - a.detach()) * g.unsqueeze(-1).unsqueeze(-1))
    prog = program_from_text(text, 19734708)
    failure = compare(prog)
    assert failure is not None and failure.kind == "grad", failure
    assert failure.message.startswith("v0.grad") and "torch     [[nan]" in failure.message
    assert not _ENTRY(prog, failure)
    assert kb.which_known(prog, failure) is None
