"""optim.Muon against torch.optim.Muon: parameter trajectories, state, options, errors.

PyTorch runs Muon's Newton-Schulz iteration in bfloat16; retrograd runs it in the
parameter's dtype (NumPy has no bfloat16).  So the trajectories are compared twice: against
PyTorch with its iteration patched to run in the input's dtype (the same arithmetic: float64
to 1e-12), and against PyTorch as it ships, in float32, to the precision bfloat16 leaves.
"""

from __future__ import annotations

import copy
import doctest

import numpy as np
import pytest

torch = pytest.importorskip("torch")
_muon = pytest.importorskip("torch.optim._muon")

import retrograd as T  # noqa: E402
import retrograd.optim.muon as ours_muon  # noqa: E402

from .trajectory import problem_grad  # noqa: E402

SHAPES = [(3, 4), (5, 2), (3, 3)]   # wide, tall (iterated on its transpose), square


def _same_dtype_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """torch's _zeropower_via_newtonschulz with ``grad.bfloat16()`` replaced by a copy in
    grad's dtype: everything else as PyTorch 2.13 ships it."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.clone()
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    ortho_grad.div_(ortho_grad.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = torch.addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = torch.addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    return ortho_grad


@pytest.fixture
def torch_in_same_dtype(monkeypatch):
    monkeypatch.setattr(_muon, "_zeropower_via_newtonschulz", _same_dtype_newtonschulz)


def run_both(options, dtype, steps=6, seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    ours = [T.tensor(v.copy(), requires_grad=True) for v in values]
    theirs = [torch.tensor(v.copy(), requires_grad=True) for v in values]
    opt, topt = T.optim.Muon(ours, **options), torch.optim.Muon(theirs, **options)
    traj = []
    for _ in range(steps):
        for i, (p, q) in enumerate(zip(ours, theirs)):
            g = problem_grad(p.detach().numpy(), i)
            p.grad, q.grad = T.tensor(g.copy()), torch.tensor(g.copy())
        opt.step()
        topt.step()
        traj.append(([p.detach().numpy().copy() for p in ours],
                     [q.detach().numpy().copy() for q in theirs]))
    return traj, opt, topt


OPTIONS = [
    {"lr": 0.02},
    {"lr": 0.05, "weight_decay": 0.0, "momentum": 0.9, "nesterov": False},
    {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3},
    {"lr": 0.02, "adjust_lr_fn": "original", "ns_coefficients": (2.0, -1.5, 0.5),
     "eps": 1e-5, "weight_decay": 0.3},
]


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_trajectory_matches_torch_with_the_same_dtype(torch_in_same_dtype, options, dtype,
                                                      tol):
    traj, opt, topt = run_both(options, dtype)
    for k, (mine, ref) in enumerate(traj):
        for i, (a, b) in enumerate(zip(mine, ref)):
            assert a.dtype == b.dtype == dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"step {k + 1}, #{i}")
    for p, q in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        assert sorted(opt.state[p]) == sorted(topt.state[q]) == ["momentum_buffer"]
        np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                                   topt.state[q]["momentum_buffer"].numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_float32_trajectory_is_torchs_to_bfloat16_precision(options):
    # each step moves a parameter by lr * adjust * (an update whose entries are about 1);
    # PyTorch's update comes out of 5 Newton-Schulz iterations in bfloat16 (8 significant
    # bits; each iteration's matmuls multiply by coefficients up to 4.8), which moves its
    # entries by up to about 4% (measured: at most 3.6% of a step after the first step, 6%
    # of one step after five); the bound: 5% of a step, per step taken
    traj, opt, _ = run_both(options, np.float32)
    lr = options["lr"]
    for k, (mine, ref) in enumerate(traj):
        for i, (a, b) in enumerate(zip(mine, ref)):
            step = ours_muon.adjust_lr(lr, options.get("adjust_lr_fn"), SHAPES[i])
            assert a.dtype == np.float32
            np.testing.assert_allclose(a, b, rtol=0, atol=0.05 * step * (k + 1),
                                       err_msg=f"step {k + 1}, #{i}")


def test_newton_schulz_orthogonalises():
    rng = np.random.default_rng(3)
    for shape in SHAPES:
        g = rng.standard_normal(shape)
        x = ours_muon.zeropower_via_newtonschulz(g, (ours_muon.DEFAULT_A, ours_muon.DEFAULT_B,
                                                     ours_muon.DEFAULT_C), 5, 1e-7)
        assert x.shape == g.shape and x.dtype == g.dtype
        # U S' V^T with g's singular vectors and S' in [0.5, 1.5] (not in S's order)
        u, _, vt = np.linalg.svd(g, full_matrices=False)
        s_prime = u.T @ x @ vt.T
        np.testing.assert_allclose(s_prime, np.diag(np.diag(s_prime)), atol=1e-9)
        assert ((np.diag(s_prime) > 0.5) & (np.diag(s_prime) < 1.5)).all(), s_prime


def test_resumed_run_continues_exactly():
    def run(split):
        params = [T.tensor(np.arange(12.0).reshape(3, 4) / 7, requires_grad=True)]
        opt = T.optim.Muon(params, lr=0.05)
        out = []
        for k in range(5):
            if k == split:
                saved = copy.deepcopy(opt.state_dict())
                params = [T.tensor(params[0].detach().numpy().copy(), requires_grad=True)]
                opt = T.optim.Muon(params, lr=0.05)
                opt.load_state_dict(saved)
            params[0].grad = T.tensor(problem_grad(params[0].detach().numpy(), 0))
            opt.step()
            out.append(params[0].detach().numpy().copy())
        return out
    for a, b in zip(run(split=2), run(split=None)):
        np.testing.assert_array_equal(a, b)


def test_defaults_and_state_dict_match_torch():
    p, q = T.zeros(2, 3, requires_grad=True), torch.zeros(2, 3, requires_grad=True)
    opt, topt = T.optim.Muon([p]), torch.optim.Muon([q])
    assert opt.defaults == topt.defaults
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


def _error(make):
    with pytest.raises(Exception) as info:
        make()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("options", [{"lr": -1.0}, {"momentum": -0.5},
                                     {"weight_decay": -0.1}, {"adjust_lr_fn": "sqrt"},
                                     {"lr": torch.tensor([0.1, 0.2])}])
def test_invalid_options_raise_as_torch(options):
    theirs = _error(lambda: torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)],
                                             **options))
    mine_options = {k: (T.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v)
                    for k, v in options.items()}
    assert _error(lambda: T.optim.Muon([T.zeros(2, 2, requires_grad=True)],
                                       **mine_options)) == theirs


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2), ()])
def test_only_2d_parameters_as_torch(shape):
    kind, message = _error(lambda: torch.optim.Muon([torch.zeros(shape, requires_grad=True)]))
    mine = _error(lambda: T.optim.Muon([T.zeros(shape, requires_grad=True)]))
    assert mine == (kind, message.replace("torch.Size", "retrograd.Size"))


@pytest.mark.parametrize("options", [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}])
def test_bad_iteration_settings_raise_at_step_as_torch(options):
    p, q = T.ones(2, 2, requires_grad=True), torch.ones(2, 2, requires_grad=True)
    opt, topt = T.optim.Muon([p], **options), torch.optim.Muon([q], **options)
    p.grad, q.grad = T.ones(2, 2), torch.ones(2, 2)
    assert _error(opt.step) == _error(topt.step)


def test_docstring_examples_run():
    assert doctest.testmod(ours_muon, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
