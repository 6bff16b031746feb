"""Second derivatives of every op of two (or more) tensors, against PyTorch 2.13.

One table: each case is an expression in the library ``lib`` (``torch`` or ``retrograd``), the
input shapes (broadcasting pairs included) and a map of the random inputs into the op's
smooth region.  For each case the first gradients and every second derivative -- d2/da2,
d2/db2, d2/da db, d2/db da -- must agree with torch's (``autograd.grad`` with
``create_graph=True``), and ``retrograd.autograd.gradgradcheck`` must pass in float64.
"""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _ident(x):
    return x


def _pos(x):
    return np.abs(x) + 0.5


def _away0(x):
    return np.sign(x) * (np.abs(x) + 0.5) + (x == 0)


def _spread(x):
    # distinct values, no ties between the operands of maximum/minimum/clamp
    return x + np.arange(x.size).reshape(x.shape) * 0.37


def _mod_safe(x):
    return np.abs(x) * 3 + 0.3


def _mask(lib, shape):
    m = (np.arange(int(np.prod(shape))).reshape(shape) % 3) == 0
    return lib.tensor(m)


# name -> (fn(lib, *tensors), shapes, maps of the random inputs)
OPS = {
    "add": (lambda lib, a, b: lib.add(a, b, alpha=2.5), [(3,), (2, 1)], [_ident, _ident]),
    "sub": (lambda lib, a, b: lib.sub(a, b, alpha=1.5), [(2, 3), (3,)], [_ident, _ident]),
    "mul": (lambda lib, a, b: a * b, [(3,), (2, 1)], [_ident, _ident]),
    "mul_self": (lambda lib, a: a * a, [(3,)], [_ident]),
    "div": (lambda lib, a, b: a / b, [(2, 3), (3,)], [_ident, _away0]),
    "rdiv": (lambda lib, a: 2.5 / a, [(3,)], [_away0]),
    "pow": (lambda lib, a, b: a ** b, [(3,), (2, 1)], [_pos, _ident]),
    "pow_0d_base": (lambda lib, a, b: a ** b, [(), (3,)], [_pos, _ident]),
    "pow_0d_exp": (lambda lib, a, b: a ** b, [(2, 3), ()], [_pos, _ident]),
    "pow_neg_base_int_exp": (lambda lib, a, b: a ** b.round(), [(3,), (2, 1)],
                             [lambda x: -_pos(x), lambda x: x * 3]),
    "pow_number_exp": (lambda lib, a: a ** 3, [(3,)], [_ident]),
    "pow_number_base": (lambda lib, b: 2.5 ** b, [(3,)], [_ident]),
    "pow_same": (lambda lib, a: a ** a, [(3,)], [_pos]),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), [(3,), (2, 1)], [_ident, _ident]),
    "hypot": (lambda lib, a, b: lib.hypot(a, b), [(3,), (2, 1)], [_away0, _away0]),
    "maximum": (lambda lib, a, b: lib.maximum(a * a, b * b), [(2, 3), (3,)], [_spread, _ident]),
    "minimum": (lambda lib, a, b: lib.minimum(a * a, b * b), [(3,), (2, 3)], [_ident, _spread]),
    "remainder": (lambda lib, a, b: lib.remainder(a * a, b), [(3,), (2, 1)], [_ident, _mod_safe]),
    "lerp_number": (lambda lib, a, b: lib.lerp(a * a, b * b, 0.3), [(3,), (2, 3)],
                    [_ident, _ident]),
    "lerp_tensor": (lambda lib, a, b, w: lib.lerp(a, b, w), [(3,), (2, 1), (2, 3)],
                    [_ident, _ident, _ident]),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.7), [(3,), (2, 1), (2, 3)],
                [_ident, _ident, _ident]),
    "addcdiv": (lambda lib, a, b, c: lib.addcdiv(a, b, c, value=0.7), [(3,), (2, 1), (2, 3)],
                [_ident, _ident, _away0]),
    "xlogy": (lambda lib, a, b: lib.xlogy(a, b), [(3,), (2, 1)], [_ident, _pos]),
    "logaddexp": (lambda lib, a, b: lib.logaddexp(a, b), [(3,), (2, 1)], [_ident, _ident]),
    "clamp_tensor": (lambda lib, x, lo, hi: lib.clamp(x * x, lo, hi), [(2, 3), (3,), (2, 1)],
                     [_ident, lambda x: x * 0.2 + 0.5, lambda x: x * 0.2 + 1.5]),
    "clamp_min_tensor": (lambda lib, x, lo: lib.clamp_min(x * x, lo), [(2, 3), (3,)],
                         [_ident, lambda x: x * 0.2 + 0.5]),
    "matmul": (lambda lib, a, b: (a @ b) ** 2, [(2, 3), (3, 4)], [_ident, _ident]),
    "matmul_batched": (lambda lib, a, b: (a @ b) ** 2, [(2, 2, 3), (3,)], [_ident, _ident]),
    "outer": (lambda lib, a, b: lib.outer(a, b) ** 2, [(3,), (2,)], [_ident, _ident]),
    "where": (lambda lib, a, b: lib.where(a > 0, a * a, b * b * b), [(3,), (2, 3)],
              [_away0, _ident]),
    "masked_fill": (lambda lib, a, v: (a * a).masked_fill(_mask(lib, (2, 3)), v * v), [(2, 3), ()],
                    [_ident, _ident]),
    "mse_loss": (lambda lib, a, b: lib.nn.functional.mse_loss(a, b), [(2, 3), (2, 3)],
                 [_ident, _ident]),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b) ** 2, [(2, 3), (4, 3), (4,)],
               [_ident, _ident, _ident]),
}


def _inputs(lib, case, seed=0):
    _, shapes, maps = OPS[case]
    rng = np.random.default_rng(seed)
    arrays = [m(rng.standard_normal(s)) for s, m in zip(shapes, maps)]
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]


def _all_second(lib, case):
    """The output, first gradients and the matrix of second derivatives (rows: which
    first gradient, columns: which input), each weighted by fixed cotangents."""
    fn = OPS[case][0]
    xs = _inputs(lib, case)
    out = fn(lib, *xs)
    w = lib.tensor(np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape)))
    first = lib.autograd.grad((out * w).sum(), xs, create_graph=True, allow_unused=True)
    second = []
    for g in first:
        if g is None or not g.requires_grad:  # linear in that input: its derivative is zero
            second.append([None] * len(xs))
            continue
        v = lib.tensor(np.linspace(-1.1, 0.9, g.numel()).reshape(tuple(g.shape)))
        row = lib.autograd.grad((g * v).sum(), xs, retain_graph=True, allow_unused=True)
        second.append(list(row))
    return out, first, second


def _arr(t, like):
    return np.zeros(tuple(like.shape)) if t is None else t.detach().numpy()


@pytest.mark.parametrize("case", sorted(OPS))
def test_second_derivatives_match_torch(case):
    out_r, first_r, second_r = _all_second(R, case)
    out_t, first_t, second_t = _all_second(torch, case)
    xs = _inputs(torch, case)
    np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), rtol=1e-10)
    for i, x in enumerate(xs):
        np.testing.assert_allclose(_arr(first_r[i], x), _arr(first_t[i], x), rtol=1e-9,
                                   atol=1e-12, err_msg=f"{case}: d/dx{i}")
        for j, y in enumerate(xs):
            np.testing.assert_allclose(
                _arr(second_r[i][j], y), _arr(second_t[i][j], y), rtol=1e-9, atol=1e-12,
                err_msg=f"{case}: d2/dx{i}dx{j}")


@pytest.mark.parametrize("case", sorted(OPS))
def test_gradgradcheck(case):
    fn = OPS[case][0]
    xs = _inputs(R, case, seed=1)
    assert R.autograd.gradgradcheck(lambda *a: fn(R, *a), xs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_tensor_exponent_hessian_in_both_dtypes(dtype):
    # issue 7: the Hessian of a ** b when a and b are both tensors that require grad
    def hessian(lib):
        a = lib.tensor([1.5, 0.7, 3.0], dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor([2.0, -1.5, 2.5], dtype=getattr(lib, dtype), requires_grad=True)
        ga, gb = lib.autograd.grad((a ** b).sum(), (a, b), create_graph=True)
        return [[t.detach().numpy() for t in lib.autograd.grad(g.sum(), (a, b),
                                                               retain_graph=True)]
                for g in (ga, gb)]

    for row_r, row_t in zip(hessian(R), hessian(torch)):
        for r, t in zip(row_r, row_t):
            np.testing.assert_allclose(r, t, rtol=1e-5)


def test_inplace_pow_second_derivative():
    def run(lib):
        a = lib.tensor([1.5, 0.7, 3.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[2.0], [-1.5]], dtype=lib.float64, requires_grad=True)
        c = (a * 1).expand(2, 3).clone()
        c.pow_(b)
        ga, gb = lib.autograd.grad(c.sum(), (a, b), create_graph=True)
        return [t.detach().numpy() for t in lib.autograd.grad((ga * gb.sum()).sum(), (a, b))]

    for r, t in zip(run(R), run(torch)):
        np.testing.assert_allclose(r, t, rtol=1e-9)
