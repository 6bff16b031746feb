"""cross_entropy with class-probability targets against PyTorch 2.13: values, grad_fn
names and both gradients, for every reduction, with and without class weights and label
smoothing, on 1-d, batched, K-dim and empty inputs.

The mean divides by numel / C (N * d1 * ... for a K-dim input), as PyTorch's
cross_entropy_loss_prob_target (retrograd divided by N alone: a silent wrong value and
gradient); an empty input's mean is PyTorch's ``-(sum).fill_(nan)`` (NegBackward0, fuzz seed
17980130)."""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

SHAPES = [(3,), (2, 3), (2, 3, 4), (2, 3, 2, 2), (0, 3), (2, 3, 0), (1, 1)]


def _run(lib, x, t, w, reduction, smoothing):
    xs, ts = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
    out = lib.nn.functional.cross_entropy(xs, ts, weight=None if w is None else lib.tensor(w),
                                          reduction=reduction, label_smoothing=smoothing)
    name = out.grad_fn.name()
    if out.numel():
        out.sum().backward()
    grads = [None if g is None else np.asarray(g) for g in (xs.grad, ts.grad)]
    return np.asarray(out.detach()), name, grads


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_probability_targets_match_torch(shape, reduction, weighted, smoothing):
    rng = np.random.default_rng(len(shape) * 7 + sum(shape))
    x, t = rng.random(shape), rng.random(shape)
    w = rng.random(shape[1] if len(shape) > 1 else shape[0]) if weighted else None
    want = _run(torch, x, t, w, reduction, smoothing)
    got = _run(R, x, t, w, reduction, smoothing)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-14, equal_nan=True)
    assert got[1] == want[1]
    for g, e in zip(got[2], want[2]):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, equal_nan=True)
