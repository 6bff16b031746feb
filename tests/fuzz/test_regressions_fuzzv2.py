"""float32 accuracy of batch_norm and instance_norm (issue 7, fuzzV2): over fixed random
inputs, retrograd's float32 values and input/weight/bias gradients must be at least as close
to a float64 reference (PyTorch's float64 run on the same float32 inputs) as PyTorch's own
float32 run.  NumPy's float32 sum over the strided batch axis is naive, and retrograd was
2-5x further off than PyTorch (whose CPU kernel accumulates in double) before its sums
accumulated in float64 (fuzz seed 16220117)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402


def _run(lib, dtype, x, w, b, g, kind):
    xt = lib.tensor(x, dtype=dtype, requires_grad=True)
    wt = lib.tensor(w, dtype=dtype, requires_grad=True)
    bt = lib.tensor(b, dtype=dtype, requires_grad=True)
    f = lib.nn.functional
    if kind == "batch_norm":
        y = f.batch_norm(xt, None, None, wt, bt, training=True)
    else:
        y = f.instance_norm(xt, weight=wt, bias=bt)
    (y * lib.tensor(g, dtype=dtype)).sum().backward()
    return [np.array(t.tolist(), dtype=np.float64) for t in (y, xt.grad, wt.grad, bt.grad)]


def _shapes(kind, rng, count):
    for _ in range(count):
        if kind == "batch_norm":
            n = int(rng.choice([3, 8, 64, 300]))
            yield (n, int(rng.integers(1, 4)), int(rng.choice([1, 2, 7])))
        else:
            yield (int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.choice([3, 5, 40])))


def _total_errors(kind, seed, count):
    """Summed max-abs errors (value, input, weight and bias gradients) against float64, of
    PyTorch's and retrograd's float32 runs, over ``count`` inputs offset from zero (where
    the mean's rounding matters)."""
    rng = np.random.default_rng(seed)
    ours, theirs = np.zeros(4), np.zeros(4)
    for shape in _shapes(kind, rng, count):
        c = shape[1]
        x = (rng.choice([0.0, 1.0, 5.0]) + rng.choice([0.01, 1.0]) * rng.standard_normal(shape))
        x = x.astype(np.float32)
        w, b = (rng.standard_normal(c).astype(np.float32) for _ in range(2))
        g = rng.standard_normal(shape).astype(np.float32)
        ref = _run(torch, torch.float64, x, w, b, g, kind)
        theirs += [np.abs(a - r).max() for a, r in zip(
            _run(torch, torch.float32, x, w, b, g, kind), ref)]
        ours += [np.abs(a - r).max() for a, r in zip(
            _run(retrograd, retrograd.float32, x, w, b, g, kind), ref)]
    return ours, theirs


@pytest.fixture
def torch_one_thread():
    """PyTorch's float32 norms round per its thread count: one thread, restored after (a
    leaked setting changed another file's comparison with PyTorch)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_batch_norm_float32_at_least_as_accurate_as_torch(torch_one_thread):
    ours, theirs = _total_errors("batch_norm", 7, 40)
    assert (ours <= theirs).all(), (ours, theirs)


def test_instance_norm_float32_as_accurate_as_torch(torch_one_thread):
    # (its weight and bias gradients also sum the per-instance ones in float32, as PyTorch's
    # repeat backward does: ulp-level noise either way, hence the 10 % allowance)
    ours, theirs = _total_errors("instance_norm", 8, 40)
    assert (ours <= 1.1 * theirs).all(), (ours, theirs)


def test_instance_norm_seed_16220117_gradient():
    """A channel of 3 values, two equal ([-1.53, -1.76, -1.76]): a small variance, so the
    mean's rounding dominates; retrograd's gradient was 2.2x PyTorch's error (5.4e-6)."""
    data = [[[0.0, 1.92, 1.59], [0.68, 0.03, -0.28], [-1.53, -1.76, -1.76],
             [1.55, -2.37, 0.4]]]

    def grad(lib, dtype):
        v0 = lib.tensor(data, dtype=dtype, requires_grad=True)
        v5 = lib.nn.functional.instance_norm(v0)
        (v5 * v5.detach().tanh()).sum().backward()
        return np.array(v0.grad.tolist(), dtype=np.float64)

    ref = grad(torch, torch.float64)
    theirs = np.abs(grad(torch, torch.float32) - ref).max()
    ours = np.abs(grad(retrograd, retrograd.float32) - ref).max()
    assert ours <= 1.5 * theirs, (ours, theirs)
