"""A small multilayer perceptron on scikit-learn's digits, written once for any library.

Shared by the benchmark (bench/run.py) and the training tests (tests/test_training.py), which
run the same model in retrograd, PyTorch and NumPy: parameters are plain NumPy arrays that each
caller wraps in its own tensors, and ``act`` is that library's activation.
"""

import numpy as np


def load_digits_standardized():
    """The 1797 8x8 digits as (float64 x of shape (1797, 64), int64 labels), each pixel
    standardized; pixels that are constant stay 0."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = (x - x.mean(0)) / (x.std(0) + 1e-8)
    return x, y.astype(np.int64)


def init_mlp(sizes, seed, dtype=np.float32):
    """PyTorch's Linear init (uniform +-1/sqrt(fan_in)): ``[w0, b0, w1, b1, ...]`` with
    weights stored (in, out), so a layer is ``h @ w + b``."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(dtype))
        params.append(rng.uniform(-bound, bound, (fan_out,)).astype(dtype))
    return params


def mlp_forward(params, x, act):
    """The logits: ``act`` after every layer but the last."""
    h = x
    n = len(params) // 2
    for i in range(n):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n - 1:
            h = act(h)
    return h
