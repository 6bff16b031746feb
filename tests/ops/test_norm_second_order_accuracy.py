"""float32 second derivatives through batch_norm / layer_norm / group_norm / instance_norm:
the create_graph derivative runs in float64 and is rounded once (ops/normalization.py,
_norm_vjp), so its Hessian-vector products are as near a float64 run as PyTorch's.

The cases are bench/norm_second_order.py's (its case seeds; that script prints the
distribution over many).  Before the change (float32 reductions and float32 broadcast sums
in the derivative) each failed its bound below.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

_BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "norm_second_order.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("norm_second_order", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# (norm, case seed, bound on retrograd's error as a multiple of PyTorch's; the ratio before
# -> after the change, on NumPy 2 / PyTorch 2.13 CPU)
_CASES = [
    ("batch_norm", 278, 2.0),  # 4.24 -> 1.26 (ulp-level: 7.2e-07 -> 2.1e-07, torch 1.7e-07)
    ("layer_norm", 120, 2.0),  # 4.08 -> 1.13
    ("layer_norm", 103, 0.05),  # 0.12 -> 0.01 (cancelling: 2.8e-05 -> 2.3e-06, torch 2.4e-04)
    ("group_norm", 182, 1.0),  # 2.04 -> 0.62 (1.5e-03 -> 4.5e-04, torch 7.3e-04)
    ("group_norm", 246, 2.0),  # 3.41 -> 0.35
    ("group_norm", 168, 0.2),  # 0.51 -> 0.04 (1.3e-04 -> 1.0e-05, torch 2.5e-04)
    ("instance_norm", 137, 2.0),  # 4.66 -> 1.61
    ("instance_norm", 168, 0.1),  # 0.36 -> 0.02 (2.7e-04 -> 1.7e-05, torch 7.4e-04)
]


@pytest.mark.parametrize("kind, case_seed, bound", _CASES)
def test_hessian_vector_product_near_float64(bench, kind, case_seed, bound):
    case = bench.draw(kind, np.random.default_rng(case_seed))
    rg, pt = bench.errors(kind, case)
    assert rg <= bound * pt, (rg, pt)


@pytest.mark.parametrize("kind", ["batch_norm", "layer_norm", "group_norm", "instance_norm"])
def test_second_order_results_keep_dtype_and_names(bench, kind):
    """The float64 detour is invisible: the create_graph gradients and the second-order
    ones are float32, as PyTorch's, and the gradients' grad_fn names are what they were
    (the casts back come before the last reshape)."""
    case = bench.draw(kind, np.random.default_rng(7))
    case["w"] = case["w"] if case["w"] is not None else np.ones(
        (case["x"].shape[-1],) if kind == "layer_norm" else (case["x"].shape[1],))
    case["b"] = case["b"] if case["b"] is not None else np.zeros_like(case["w"])
    for lib in (torch, retrograd):
        t = [lib.tensor(case[k].astype(np.float32), requires_grad=True) for k in "xwb"]
        y = bench._norm(lib, kind, *t, case["groups"])
        gs = lib.autograd.grad((y * y).sum(), t, create_graph=True)
        assert all(g.dtype == lib.float32 for g in gs)
        if lib is retrograd:
            assert [g.grad_fn.name() for g in gs] == ["ViewBackward0"] * 3
        hs = lib.autograd.grad(sum((g * g).sum() for g in gs), t, allow_unused=True)
        assert all(h is None or h.dtype == lib.float32 for h in hs)


@pytest.mark.parametrize("kind", ["batch_norm", "layer_norm", "group_norm", "instance_norm"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_create_graph_gradient_matches_torch(kind, dtype):
    """The first derivative made under create_graph (the float64 path for float32) agrees
    with PyTorch's, and the second derivative too (float32: within float32 rounding of a
    non-cancelling case)."""
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((4, 4, 6))
    w0, b0 = rng.standard_normal(6 if kind == "layer_norm" else 4), rng.standard_normal(
        6 if kind == "layer_norm" else 4)
    c0 = rng.standard_normal((4, 4, 6))
    got = {}
    for lib in (torch, retrograd):
        d = getattr(lib, dtype)
        x, w, b = (lib.tensor(a, dtype=d, requires_grad=True) for a in (x0, w0, b0))
        y = _norm(lib, kind, x, w, b)
        gs = lib.autograd.grad((y * y * lib.tensor(c0, dtype=d)).sum(), (x, w, b),
                               create_graph=True)
        hs = lib.autograd.grad(sum((g * g).sum() for g in gs), (x, w, b), allow_unused=True)
        got[lib] = [a.detach().double().numpy() for a in gs + hs if a is not None]
    tol = 1e-4 if dtype == "float32" else 1e-10
    assert len(got[torch]) == len(got[retrograd])
    for a, b in zip(got[torch], got[retrograd]):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * np.abs(a).max())


def _norm(lib, kind, x, w, b):
    f = lib.nn.functional
    if kind == "batch_norm":
        return f.batch_norm(x, None, None, w, b, training=True)
    if kind == "layer_norm":
        return f.layer_norm(x, (x.shape[-1],), w, b)
    if kind == "group_norm":
        return f.group_norm(x, 2, w, b)
    return f.instance_norm(x, weight=w, bias=b)


@pytest.mark.parametrize("kind", ["batch_norm", "layer_norm", "group_norm", "instance_norm"])
def test_gradgradcheck_float64(kind):
    rng = np.random.default_rng(2)
    n = 3 if kind == "layer_norm" else 4
    x = retrograd.tensor(rng.standard_normal((3, 4, 3)), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal(n), requires_grad=True)
    b = retrograd.tensor(rng.standard_normal(n), requires_grad=True)
    fn = lambda x, w, b: _norm(retrograd, kind, x, w, b)  # noqa: E731
    assert retrograd.autograd.gradcheck(fn, (x, w, b))
    assert retrograd.autograd.gradgradcheck(fn, (x, w, b))
