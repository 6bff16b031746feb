"""No NumPy RuntimeWarning leaks out of an op where PyTorch computes inf, nan or an empty
result silently; the values stay PyTorch's.

Each case runs forward and a first-order backward on retrograd with RuntimeWarning turned
into an error, and on torch 2.13; outputs and input gradients must match (nan where
torch's is nan).  The cases were found by running every op table's case (tests/ops/) on
edge inputs (inf, -inf, nan, 1e300, 0, empty) and keeping those where NumPy warned and
PyTorch did not.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

INF, NAN = np.inf, np.nan


def nnf(m):
    return m.nn.functional


def row(*values):
    return np.array(values, dtype=np.float64)


# (id, call(m, *inputs), input arrays, whether to run backward)
CASES = [
    # ---- backward passes: one errstate for the whole pass (autograd/engine.py)
    ("silu backward at inf", lambda m, a: nnf(m).silu(a), [row(INF, 1.0, -2.0)], True),
    ("gelu backward at 1e300", lambda m, a: nnf(m).gelu(a), [row(1e300, 0.5)], True),
    ("log backward at 1e-310", lambda m, a: m.log(a), [row(1e-310, 2.0)], True),
    ("sqrt backward at 0", lambda m, a: m.sqrt(a), [row(0.0, 4.0)], True),
    ("glu backward at inf", lambda m, a: nnf(m).glu(a), [row(INF, 1.0, INF, -3.0)], True),
    # ---- composite forwards (ops/quiet_fp.py)
    ("silu at -inf", lambda m, a: nnf(m).silu(a), [row(-INF, 1.0, -1e300)], False),
    ("gelu at -inf", lambda m, a: nnf(m).gelu(a), [row(-INF, 1.0)], False),
    ("gelu tanh at 1e300", lambda m, a: nnf(m).gelu(a, approximate="tanh"),
     [row(1e300, -INF, 1.0)], False),
    ("glu, exp overflow", lambda m, a: nnf(m).glu(a), [row(2.0, 1.0, -1e300, -INF)], False),
    ("prelu overflow", lambda m, a, w: nnf(m).prelu(a, w), [row(-1e300, 2.0), row(1e300)],
     False),
    ("hardswish at -inf", lambda m, a: nnf(m).hardswish(a), [row(-INF, 1.0)], False),
    ("mish at -inf", lambda m, a: nnf(m).mish(a), [row(-INF, 1.0)], False),
    ("softshrink at inf", lambda m, a: nnf(m).softshrink(a), [row(INF, -INF, 0.1)], False),
    ("softsign at inf", lambda m, a: nnf(m).softsign(a), [row(INF, -2.0)], False),
    ("softmax of an inf row", lambda m, a: m.softmax(a, 0), [row(INF, INF, 1.0)], False),
    ("softmin of a -inf row", lambda m, a: nnf(m).softmin(a, 0), [row(-INF, 1.0)], False),
    ("log_softmax of an inf row", lambda m, a: m.log_softmax(a, 0), [row(INF, 1.0)], False),
    # ---- losses on inf (quiet_fp) and means of nothing (quiet_fp.mean_of: nan, as torch)
    ("mse_loss at inf", lambda m, a, b: nnf(m).mse_loss(a, b), [row(INF, 1.0), row(INF, 2.0)],
     False),
    ("smooth_l1_loss at inf", lambda m, a, b: nnf(m).smooth_l1_loss(a, b),
     [row(INF, 1.0), row(INF, 2.0)], False),
    ("huber_loss at inf", lambda m, a, b: nnf(m).huber_loss(a, b),
     [row(INF, 1.0), row(INF, 2.0)], False),
    ("bce_with_logits at inf", lambda m, a, b: nnf(m).binary_cross_entropy_with_logits(a, b),
     [row(INF, -INF, 1.0), row(0.0, 1.0, 0.5)], False),
    ("soft_margin_loss overflow", lambda m, a: nnf(m).soft_margin_loss(
        a, m.tensor([1.0, -1.0], dtype=m.float64)), [row(-1e300, 1.0)], False),
    ("multi_margin_loss at inf", lambda m, a: nnf(m).multi_margin_loss(
        a, m.tensor([0, 1])), [np.array([[INF, 1.0], [-INF, INF]])], False),
    ("mean of an empty tensor", lambda m, a: m.mean(a), [np.zeros((0, 3))], True),
    ("mean over an empty dim", lambda m, a: a.mean(0), [np.zeros((0, 3))], True),
    ("mse_loss of nothing", lambda m, a, b: nnf(m).mse_loss(a, b),
     [np.zeros((0, 3)), np.zeros((0, 3))], True),
    ("l1_loss of nothing", lambda m, a, b: nnf(m).l1_loss(a, b),
     [np.zeros((0, 3)), np.zeros((0, 3))], True),
    ("smooth_l1_loss of nothing", lambda m, a, b: nnf(m).smooth_l1_loss(a, b),
     [np.zeros((2, 0)), np.zeros((2, 0))], True),
    ("huber_loss of nothing", lambda m, a, b: nnf(m).huber_loss(a, b),
     [np.zeros(0), np.zeros(0)], True),
    ("bce_with_logits of nothing", lambda m, a, b: nnf(m).binary_cross_entropy_with_logits(
        a, b), [np.zeros((0, 2)), np.zeros((0, 2))], True),
    ("soft_margin_loss of nothing", lambda m, a: nnf(m).soft_margin_loss(
        a, m.zeros(0, dtype=m.float64)), [np.zeros(0)], True),
    ("gaussian_nll_loss of nothing", lambda m, a, b, v: nnf(m).gaussian_nll_loss(a, b, v),
     [np.zeros((0, 2)), np.zeros((0, 2)), np.ones((0, 2))], True),
    # ---- heavier kernels (quiet_fp around the op's forward: its cost is noise there)
    ("conv1d at inf", lambda m, x, w: nnf(m).conv1d(x, w),
     [row(INF, -INF, 1.0, 2.0).reshape(1, 1, 4), row(1.0, 1.0).reshape(1, 1, 2)], True),
    ("conv_transpose1d at inf", lambda m, x, w: nnf(m).conv_transpose1d(x, w),
     [row(INF, -INF, 1.0).reshape(1, 1, 3), row(1.0, 1.0).reshape(1, 1, 2)], True),
    ("conv2d overflow", lambda m, x, w: nnf(m).conv2d(x, w),
     [np.full((1, 1, 2, 2), 1e300), np.full((1, 1, 2, 2), 1e300)], False),
    ("vector_norm overflow", lambda m, a: m.linalg.vector_norm(a), [row(1e300, 1e300)], True),
    ("vector_norm ord -1.5 at 0", lambda m, a: m.linalg.vector_norm(a, -1.5),
     [row(0.0, 1.0)], False),
    ("native_layer_norm at inf", lambda m, a: m.native_layer_norm(a, [3], None, None, 1e-5),
     [np.array([[INF, -INF, 1.0]])], False),
    ("native_batch_norm at inf", lambda m, a: m.native_batch_norm(
        a, None, None, None, None, True, 0.1, 1e-5), [np.array([[INF, 1.0], [2.0, 3.0]])],
     False),
    ("batch_norm eval overflow", lambda m, x, w: nnf(m).batch_norm(
        x, m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64), w, None, training=False),
     [np.full((2, 2), 1e300), row(1e300, 1.0)], True),
    ("instance_norm of an empty batch", lambda m, x: nnf(m).instance_norm(
        x, m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)), [np.zeros((0, 3, 2))],
     False),
    ("cdist at inf", lambda m, a, b: m.cdist(a, b),
     [np.array([[INF, 1.0]]), np.array([[INF, 2.0], [0.0, 0.0]])], False),
    ("cdist mm overflow", lambda m, a, b: m.cdist(a, b, compute_mode=(
        "use_mm_for_euclid_dist")), [np.full((2, 2), 1e300), np.full((2, 2), 1e300)], False),
    ("pdist at inf", lambda m, a: nnf(m).pdist(a), [np.full((3, 2), INF)], False),
    ("cumprod overflow", lambda m, a: m.cumprod(a, 0), [row(1e300, 1e300, 2.0)], False),
    ("histogram density of nothing", lambda m, a: a.detach().histogram(
        bins=4, range=(-1.0, 1.5), density=True), [np.zeros(0)], False),
    ("bilinear at inf", lambda m, a, b, w: nnf(m).bilinear(a, b, w),
     [row(INF, 1.0).reshape(1, 2), row(-INF, 1.0).reshape(1, 2), np.ones((1, 2, 2))], False),
    ("embedding max_norm at inf", lambda m, w: nnf(m).embedding(
        m.tensor([0, 1]), w.detach().clone(), max_norm=1.0),
     [np.array([[INF, 1.0], [1e300, 1e300]])], False),
    ("det of inf", lambda m, a: m.linalg.det(a), [np.full((2, 2), INF)], False),
    ("lu of inf", lambda m, a: m.linalg.lu(a), [np.full((3, 3), INF)], False),
    ("cholesky_solve at inf", lambda m, b, c: m.cholesky_solve(b, c),
     [np.full((2, 1), INF), np.array([[1.0, 0.0], [0.5, 1.0]])], False),
    ("cross at inf", lambda m, a, b: m.linalg.cross(a, b), [row(INF, 1.0, 2.0), row(INF, INF, 1.0)],
     False),
    ("addr at inf", lambda m, c, u, v: m.addr(c, u, v),
     [np.array([[-INF, 0.0], [0.0, 0.0]]), row(1.0, 1.0), row(INF, 1.0)], False),
    ("baddbmm at inf", lambda m, c, a, b: m.baddbmm(c, a, b),
     [np.full((1, 2, 2), INF), np.ones((1, 2, 2)), np.full((1, 2, 2), -INF)], False),
    ("addbmm at inf", lambda m, c, a, b: m.addbmm(c, a, b),
     [np.full((2, 2), INF), np.ones((1, 2, 2)), np.full((1, 2, 2), -INF)], False),
    ("addmv at inf", lambda m, c, a, v: m.addmv(c, a, v),
     [row(INF, 1.0), np.ones((2, 2)), row(-INF, 1.0)], False),
    ("scaled_dot_product_attention at inf", lambda m, q, k, v: (
        nnf(m).scaled_dot_product_attention(q, k, v)),
     [np.full((1, 2, 2), INF), np.ones((1, 2, 2)), np.ones((1, 2, 2))], False),
    ("lstm_cell at inf", lambda m, x, h, c, wi, wh: m.lstm_cell(x, (h, c), wi, wh),
     [np.array([[INF, -INF]]), np.zeros((1, 1)), np.zeros((1, 1)), np.ones((4, 2)),
      np.ones((4, 1))], False),
    ("multi_head_attention_forward at inf", lambda m, q, w, wo: nnf(
        m).multi_head_attention_forward(q, q, q, 2, 1, w, None, None, None, False, 0.0, wo,
                                        None, training=False, need_weights=False)[0],
     [np.array([[[INF, -INF]], [[1.0, 2.0]]]), np.ones((6, 2)), np.ones((2, 2))], False),
    # ---- composites of elementwise ops (one quiet_fp around the whole function)
    ("rms_norm at inf", lambda m, a: nnf(m).rms_norm(a, [2]), [np.array([[INF, 1.0]])], False),
    ("local_response_norm at inf", lambda m, a: nnf(m).local_response_norm(a, 2),
     [np.full((1, 2, 2), INF)], False),
    ("lp_pool1d overflow", lambda m, a: nnf(m).lp_pool1d(a, 2, 2),
     [np.full((1, 1, 4), 1e300)], False),
    ("kl_div at -inf", lambda m, a, t: nnf(m).kl_div(a, t, reduction="sum"),
     [row(-INF, -1.0), row(0.0, 0.5)], False),
    ("poisson_nll_loss full at 0", lambda m, a, t: nnf(m).poisson_nll_loss(a, t, full=True),
     [row(0.5, 1.0), row(0.0, 0.0)], False),
    ("cosine_embedding_loss at inf", lambda m, a, b: nnf(m).cosine_embedding_loss(
        a, b, m.tensor([1.0], dtype=m.float64)), [np.full((1, 2), INF), np.ones((1, 2))],
     False),
    ("gaussian_nll_loss at inf", lambda m, a, t, v: nnf(m).gaussian_nll_loss(a, t, v),
     [row(INF, 1.0), row(INF, 2.0), row(1.0, 1.0)], False),
    ("quantile at inf", lambda m, a: m.quantile(a, 0.5), [row(INF, INF, 1.0, -INF)], False),
    ("trapezoid at inf", lambda m, a: m.trapezoid(a), [row(INF, -INF, 1.0)], False),
    ("interpolate bilinear at inf", lambda m, a: nnf(m).interpolate(
        a, size=(3, 3), mode="bilinear", align_corners=False),
     [np.array([[[[INF, -INF], [1.0, 2.0]]]])], False),
    ("ctc_loss at nan", lambda m, lp: nnf(m).ctc_loss(
        lp, m.tensor([[1]]), m.tensor([3]), m.tensor([1])),
     [np.array([[[NAN, 0.0]], [[0.0, 0.0]], [[0.0, 0.0]]])], False),
    ("l1_loss at inf", lambda m, a, b: nnf(m).l1_loss(a, b), [row(INF, 1.0), row(INF, 2.0)],
     False),
    ("margin_ranking_loss at inf", lambda m, a, b: nnf(m).margin_ranking_loss(
        a, b, m.tensor([1.0, -1.0], dtype=m.float64)), [row(INF, 1.0), row(INF, 2.0)], False),
    ("multilabel_soft_margin_loss at inf", lambda m, a: nnf(m).multilabel_soft_margin_loss(
        a, m.tensor([[1.0, 0.0]], dtype=m.float64)), [np.array([[INF, -INF]])], False),
    ("cross_entropy with probabilities at -inf", lambda m, a: nnf(m).cross_entropy(
        a, m.tensor([[0.0, 1.0]], dtype=m.float64)), [np.array([[-INF, 1.0]])], False),
]

# torch 2.13's mean of an empty multi_margin/multilabel_margin loss is uninitialized memory
# (known_bugs.py, seed 20856220): only retrograd's nan and the missing warning are checked
EMPTY_MARGIN = [
    ("multi_margin_loss", lambda m, a: nnf(m).multi_margin_loss(
        a, m.zeros(0, dtype=m.int64))),
    ("multilabel_margin_loss", lambda m, a: nnf(m).multilabel_margin_loss(
        a, m.zeros((0, 3), dtype=m.int64))),
]


def _run(m, call, arrays, backward, strict):
    xs = [m.tensor(a).requires_grad_(True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if strict:
            warnings.simplefilter("error", RuntimeWarning)
        out = call(m, *xs)
        outs = list(out) if isinstance(out, tuple) else [out]
        grads = []
        if backward:
            roots = [o for o in outs if o.requires_grad]
            m.autograd.backward(roots, [m.ones_like(o) * 1.5 for o in roots])
            grads = [x.grad for x in xs]
    return outs, grads


def _same(r, t, what):
    assert tuple(r.shape) == tuple(t.shape), what
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-12,
                               atol=1e-300, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name, call, arrays, backward", CASES, ids=[c[0] for c in CASES])
def test_no_runtime_warning_and_torch_values(name, call, arrays, backward, torch):
    rg_out, rg_grads = _run(retrograd, call, arrays, backward, strict=True)
    th_out, th_grads = _run(torch, call, arrays, backward, strict=False)
    assert len(rg_out) == len(th_out)
    for i, (r, t) in enumerate(zip(rg_out, th_out)):
        _same(r, t, f"{name}: output {i}")
    for i, (r, t) in enumerate(zip(rg_grads, th_grads)):
        assert (r is None) == (t is None)
        if t is not None:
            _same(r, t, f"{name}: gradient {i}")


@pytest.mark.parametrize("name, call", EMPTY_MARGIN, ids=[c[0] for c in EMPTY_MARGIN])
def test_empty_margin_losses_are_nan_without_a_warning(name, call):
    (out,), (grad,) = _run(retrograd, call, [np.zeros((0, 3))], True, strict=True)
    assert out.shape == () and np.isnan(out.item())
    assert grad.shape == (0, 3)


def test_warnings_of_the_callers_own_numpy_stay():
    # the quiet state is the op's alone: NumPy's own warning reaches the caller after it,
    # after a backward pass, and after an op that raised inside it
    before = np.geterr()
    retrograd.softmax(retrograd.tensor(row(INF, INF)), 0)
    x = retrograd.tensor(row(0.0, 1.0)).requires_grad_(True)
    retrograd.sqrt(x).sum().backward()
    with pytest.raises(IndexError):
        retrograd.trapezoid(retrograd.tensor(row(1.0, 2.0)), dim=3)
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning):
        np.subtract(row(INF), row(INF))
