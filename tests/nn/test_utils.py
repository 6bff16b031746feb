"""nn.utils against PyTorch: gradient clipping (every norm type, nonfinite checks, the
returned total norm) and parameters <-> vector."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.nn import utils

from .helpers import close, copy_weights


def grads_pair(torch, scale=1.0, dtype="float32"):
    rng = np.random.default_rng(5)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    arrays = [(rng.standard_normal(s) * scale).astype(dtype) for s in shapes]
    ours, theirs = [], []
    for a in arrays:
        p = nn.Parameter(T.zeros(*a.shape, dtype=getattr(T, dtype)))
        p.grad = T.tensor(a)
        tp = torch.nn.Parameter(torch.zeros(*a.shape, dtype=getattr(torch, dtype)))
        tp.grad = torch.tensor(a)
        ours.append(p)
        theirs.append(tp)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf", 0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    ours, theirs = grads_pair(torch)
    total = utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.dtype == T.float32 and total.shape == ()
    close(total, ttotal, 1e-5)
    for p, tp in zip(ours, theirs):
        close(p.grad, tp.grad, 1e-5)


def test_clip_grad_norm_float64_single_tensor_and_generator(torch):
    ours, theirs = grads_pair(torch, dtype="float64")
    total = utils.clip_grad_norm_(ours[0], 0.1)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs[0], 0.1)
    assert total.dtype == T.float64
    close(total, ttotal, 1e-12)
    close(ours[0].grad, theirs[0].grad, 1e-12)
    close(utils.clip_grad_norm_((p for p in ours), 0.1, foreach=True),
          torch.nn.utils.clip_grad_norm_((p for p in theirs), 0.1, foreach=True), 1e-12)
    with pytest.warns(UserWarning, match="empty generator"):
        assert utils.clip_grad_norm_((p for p in []), 1.0).item() == 0.0


def test_clip_grad_norm_skips_missing_grads_and_returns_zero_for_none(torch):
    p, q = nn.Parameter(T.zeros(2)), nn.Parameter(T.zeros(2))
    q.grad = T.tensor([3.0, 4.0])
    assert utils.clip_grad_norm_([p, q], 1.0).item() == pytest.approx(5.0)
    assert p.grad is None
    np.testing.assert_allclose(q.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    assert utils.clip_grad_norm_([p], 1.0).item() == 0.0


def test_nonfinite_norm(torch):
    ours, theirs = grads_pair(torch)
    ours[0].grad[0, 0] = float("nan")
    theirs[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError) as mine:
        utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ref:
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    assert str(mine.value) == str(ref.value)
    assert np.isnan(utils.clip_grad_norm_(ours, 1.0).item())


def test_get_total_norm_and_clip_with_norm(torch):
    ours, theirs = grads_pair(torch, scale=3.0)
    total = utils.get_total_norm([p.grad for p in ours], 3.0)
    ttotal = torch.nn.utils.get_total_norm([p.grad for p in theirs], 3.0)
    close(total, ttotal, 1e-5)
    utils.clip_grads_with_norm_(ours, 1.0, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0, ttotal)
    for p, tp in zip(ours, theirs):
        close(p.grad, tp.grad, 1e-5)


def test_clip_grad_value(torch):
    ours, theirs = grads_pair(torch)
    utils.clip_grad_value_(ours, 0.4)
    torch.nn.utils.clip_grad_value_(theirs, 0.4)
    for p, tp in zip(ours, theirs):
        close(p.grad, tp.grad, 0)
    v = ours[1].grad._version
    utils.clip_grad_value_(ours[1], 0.1, foreach=False)
    assert ours[1].grad._version > v


def test_clipping_is_not_recorded():
    p = nn.Parameter(T.ones(3))
    (p * p).sum().backward(create_graph=True)
    utils.clip_grad_norm_([p], 0.1)
    assert p.grad.requires_grad  # clipping ran under no_grad: the grad's graph is untouched


def test_parameters_to_vector_and_back(torch):
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    copy_weights(ours, theirs)
    vec = utils.parameters_to_vector(ours.parameters())
    tvec = torch.nn.utils.parameters_to_vector(theirs.parameters())
    close(vec, tvec, 0)
    assert vec.grad_fn is not None  # differentiable, as PyTorch's cat
    vec.sum().backward()
    assert np.array_equal(ours.weight.grad.numpy(), np.ones((2, 3)))
    new = T.arange(8, dtype=T.float32)
    weight = ours.weight
    utils.vector_to_parameters(new, ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.arange(8, dtype=torch.float32),
                                        theirs.parameters())
    assert ours.weight is weight
    close(ours.weight, theirs.weight, 0)
    close(ours.bias, theirs.bias, 0)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        utils.vector_to_parameters([1.0], ours.parameters())
