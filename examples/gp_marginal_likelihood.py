"""Gaussian-process regression: fit an RBF kernel's hyperparameters by maximising the log
marginal likelihood, written once for any library (``m`` is retrograd or torch).

With K = s^2 exp(-|x_i - x_j|^2 / (2 l^2)) + sigma^2 I and its Cholesky factor L,

    -log p(y | x) = 1/2 y^T K^-1 y + 1/2 log det K + n/2 log(2 pi)
                  = 1/2 |alpha|^2 + sum(log diag L) + n/2 log(2 pi),   alpha = L^-1 y

(Rasmussen and Williams, "Gaussian Processes for Machine Learning", algorithm 2.1).  The
hyperparameters are optimised in log space.  tests/test_gp_example.py checks that
retrograd's value and gradients match PyTorch's; ``python examples/gp_marginal_likelihood.py``
fits a noisy sine.
"""

import math

import numpy as np


def rbf_kernel(m, x1, x2, log_lengthscale, log_signal):
    """s^2 exp(-|x1_i - x2_j|^2 / (2 l^2)) for inputs (n1, d) and (n2, d)."""
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)) / m.exp(log_lengthscale)
    return m.exp(2 * log_signal) * m.exp(-0.5 * (diff * diff).sum(-1))


def negative_log_marginal_likelihood(m, x, y, log_lengthscale, log_signal, log_noise):
    """-log p(y | x, hyperparameters) of a zero-mean GP with an RBF kernel and Gaussian
    noise: a Cholesky factorisation, one triangular solve, the log-determinant from L's
    diagonal."""
    n = x.shape[0]
    k = rbf_kernel(m, x, x, log_lengthscale, log_signal)
    k = k + m.exp(2 * log_noise) * m.eye(n, dtype=x.dtype)
    low = m.linalg.cholesky(k)
    alpha = m.linalg.solve_triangular(low, y.unsqueeze(-1), upper=False)
    logdet_half = m.log(m.diagonal(low, 0, -2, -1)).sum(-1)
    return 0.5 * (alpha * alpha).sum() + logdet_half + 0.5 * n * math.log(2 * math.pi)


def posterior_mean(m, x, y, x_new, log_lengthscale, log_signal, log_noise):
    """The GP's predictive mean at ``x_new``: K(x_new, x) K^-1 y, via the Cholesky factor."""
    n = x.shape[0]
    k = rbf_kernel(m, x, x, log_lengthscale, log_signal)
    k = k + m.exp(2 * log_noise) * m.eye(n, dtype=x.dtype)
    low = m.linalg.cholesky(k)
    z = m.linalg.solve_triangular(low, y.unsqueeze(-1), upper=False)
    weights = m.linalg.solve_triangular(low.mT, z, upper=True)
    return (rbf_kernel(m, x_new, x, log_lengthscale, log_signal) @ weights).squeeze(-1)


def noisy_sine(n, seed=0):
    """``n`` points of sin(3 x) plus noise (sd 0.1) on [-2, 2]: (x (n, 1), y (n,))."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2, 2, n))[:, None]
    return x, np.sin(3 * x[:, 0]) + 0.1 * rng.standard_normal(n)


def fit(m, x, y, steps=100, lr=0.05):
    """Adam on the three log hyperparameters; returns them and the loss curve."""
    params = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in (0.0, 0.0, -1.0)]
    opt = m.optim.Adam(params, lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = negative_log_marginal_likelihood(m, x, y, *params)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return params, losses


if __name__ == "__main__":
    import retrograd

    xs, ys = noisy_sine(40)
    x_t, y_t = retrograd.tensor(xs), retrograd.tensor(ys)
    (ll, ls, ln), curve = fit(retrograd, x_t, y_t)
    print(f"-log p(y): {curve[0]:.3f} -> {curve[-1]:.3f}")
    print(f"lengthscale {math.exp(ll.item()):.3f}, signal {math.exp(ls.item()):.3f}, "
          f"noise {math.exp(ln.item()):.3f} (true noise 0.1)")
