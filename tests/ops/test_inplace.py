"""In-place ops (``add_``, ``x[i] = v``, ``F.relu(inplace=True)``...) on non-leaves and on
views: values, gradients, version counters and grad_fn names as PyTorch's.
"""

from __future__ import annotations

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

import retrograd

from .helpers import check_same, MASK, nnf, TOL


# (name, call on the non-leaf y with the other leaf b, shape of b)
INPLACE_CASES = [
    ("add_", lambda m, y, b: y.add_(b), (4,)),
    ("add_alpha", lambda m, y, b: y.add_(b, alpha=2.0), (3, 4)),
    ("add_scalar", lambda m, y, b: y.add_(1.5), None),
    ("iadd", lambda m, y, b: y.__iadd__(b), (1, 4)),
    ("sub_", lambda m, y, b: y.sub_(b), (3, 1)),
    ("sub_alpha", lambda m, y, b: y.sub_(b, alpha=0.5), ()),
    ("isub_scalar", lambda m, y, b: y.__isub__(2), None),
    ("mul_", lambda m, y, b: y.mul_(b), (4,)),
    ("mul_scalar", lambda m, y, b: y.mul_(3.0), None),
    ("imul", lambda m, y, b: y.__imul__(b), (3, 4)),
    ("div_", lambda m, y, b: y.div_(b.exp()), (4,)),
    ("div_scalar", lambda m, y, b: y.div_(4), None),
    ("itruediv", lambda m, y, b: y.__itruediv__(b.exp()), (3, 1)),
    ("zero_", lambda m, y, b: y.zero_(), None),
    ("fill_", lambda m, y, b: y.fill_(2.5), None),
    ("fill_tensor", lambda m, y, b: y.fill_(b), ()),
    ("copy_", lambda m, y, b: y.copy_(b), (3, 4)),
    ("copy_bcast", lambda m, y, b: y.copy_(b), (4,)),
    ("clamp_", lambda m, y, b: y.clamp_(-0.5, 0.5), None),
    ("relu_", lambda m, y, b: y.relu_(), None),
    ("pow_", lambda m, y, b: y.pow_(2), None),
    ("neg_", lambda m, y, b: y.neg_(), None),
    ("exp_", lambda m, y, b: y.exp_(), None),
    ("twice", lambda m, y, b: y.mul_(b).add_(b), (4,)),
    ("abs_", lambda m, y, b: y.abs_(), None),
    ("sqrt_", lambda m, y, b: y.abs_().add_(0.5).sqrt_(), None),
    ("log_", lambda m, y, b: y.abs_().add_(0.5).log_(), None),
    ("sin_", lambda m, y, b: y.sin_(), None),
    ("cos_", lambda m, y, b: y.cos_(), None),
    ("tanh_", lambda m, y, b: y.tanh_(), None),
    ("sigmoid_", lambda m, y, b: y.sigmoid_(), None),
    ("sign_", lambda m, y, b: y.sign_(), None),
    ("reciprocal_", lambda m, y, b: y.reciprocal_(), None),
    ("log1p_", lambda m, y, b: y.abs_().log1p_(), None),
    ("expm1_", lambda m, y, b: y.expm1_(), None),
    ("rsqrt_", lambda m, y, b: y.abs_().add_(0.5).rsqrt_(), None),
    ("square_", lambda m, y, b: y.square_(), None),
    ("floor_", lambda m, y, b: y.floor_(), None),
    ("ceil_", lambda m, y, b: y.ceil_(), None),
    ("round_", lambda m, y, b: y.round_(), None),
    ("trunc_", lambda m, y, b: y.trunc_(), None),
    ("remainder_", lambda m, y, b: y.remainder_(1.5), None),
    ("masked_fill_", lambda m, y, b: y.masked_fill_(m.tensor(MASK), 0.5), None),
    ("masked_fill_tensor", lambda m, y, b: y.masked_fill_(m.tensor(MASK[0]), b), ()),
    ("addcmul_", lambda m, y, b: y.addcmul_(b, b, value=0.5), (4,)),
    ("addcdiv_", lambda m, y, b: y.addcdiv_(b, b.exp(), value=-1), (3, 4)),
    ("lerp_", lambda m, y, b: y.lerp_(b, 0.25), (4,)),
    ("lerp_tensor_", lambda m, y, b: y.lerp_(b.exp(), b), (3, 4)),
    ("clamp_min_", lambda m, y, b: y.clamp_min_(0.0), None),
    ("clamp_max_", lambda m, y, b: y.clamp_max_(0.2), None),
    ("F.relu_inplace", lambda m, y, b: nnf(m).relu(y, inplace=True), None),
    ("F.leaky_relu_inplace", lambda m, y, b: nnf(m).leaky_relu(y, 0.1, inplace=True), None),
    ("F.elu_inplace", lambda m, y, b: nnf(m).elu(y, 0.5, inplace=True), None),
    ("F.hardtanh_inplace", lambda m, y, b: nnf(m).hardtanh(y, -0.5, 0.5, inplace=True), None),
    ("F.relu6_inplace", lambda m, y, b: nnf(m).relu6(y.mul_(4), inplace=True), None),
    ("F.silu_inplace", lambda m, y, b: nnf(m).silu(y, inplace=True), None),
    ("setitem_row", lambda m, y, b: y.__setitem__(1, b), (4,)),
    ("setitem_col_number", lambda m, y, b: y.__setitem__((slice(None), 2), 7.0), None),
    ("setitem_adv", lambda m, y, b: y.__setitem__(m.tensor([0, 2]), b), (2, 4)),
    ("setitem_mask", lambda m, y, b: y.__setitem__(m.tensor(MASK), b), ()),
    # ops/inplace_forms.py: comparisons (zero gradients), the other elementwise ops...
    ("eq_", lambda m, y, b: y.eq_(b), (4,)),
    ("eq_scalar", lambda m, y, b: y.eq_(0.0), None),
    ("ne_", lambda m, y, b: y.ne_(b), (3, 1)),
    ("lt_", lambda m, y, b: y.lt_(b), (4,)),
    ("le_scalar", lambda m, y, b: y.le_(0.1), None),
    ("gt_", lambda m, y, b: y.gt_(b), ()),
    ("ge_", lambda m, y, b: y.ge_(b), (3, 4)),
    ("logical_not_", lambda m, y, b: y.logical_not_(), None),  # not recorded, as PyTorch
    ("log2_", lambda m, y, b: y.abs_().add_(0.5).log2_(), None),
    ("log10_", lambda m, y, b: y.abs_().add_(0.5).log10_(), None),
    ("exp2_", lambda m, y, b: y.exp2_(), None),
    ("tan_", lambda m, y, b: y.clamp_(-1, 1).tan_(), None),
    ("atan_", lambda m, y, b: y.atan_(), None),
    ("arctan_", lambda m, y, b: y.arctan_(), None),
    ("asin_", lambda m, y, b: y.clamp_(-0.8, 0.8).asin_(), None),
    ("arcsin_", lambda m, y, b: y.mul_(0.3).arcsin_(), None),
    ("acos_", lambda m, y, b: y.clamp_(-0.8, 0.8).acos_(), None),
    ("arccos_", lambda m, y, b: y.mul_(0.3).arccos_(), None),
    ("sinh_", lambda m, y, b: y.sinh_(), None),
    ("cosh_", lambda m, y, b: y.cosh_(), None),
    ("frac_", lambda m, y, b: y.frac_(), None),
    ("erf_", lambda m, y, b: y.erf_(), None),
    ("erfc_", lambda m, y, b: y.erfc_(), None),
    ("atan2_", lambda m, y, b: y.atan2_(b), (4,)),
    ("hypot_", lambda m, y, b: y.hypot_(b), (3, 1)),
    ("xlogy_", lambda m, y, b: y.xlogy_(b.exp()), (3, 4)),
    ("tril_", lambda m, y, b: y.tril_(), None),
    ("triu_", lambda m, y, b: y.triu_(-1), None),
    ("cumsum_", lambda m, y, b: y.cumsum_(1), None),
    ("addmm_", lambda m, y, b: y.addmm_(b, m.ones(3, 4, dtype=m.float64), beta=0.5, alpha=2),
     (3, 3)),
    ("clip_", lambda m, y, b: y.clip_(-0.5, 0.5), None),
    ("ipow", lambda m, y, b: y.__ipow__(2), None),
    ("ipow_tensor", lambda m, y, b: y.abs_().add_(0.5).__ipow__(b), (4,)),
    ("imod", lambda m, y, b: y.__imod__(1.5), None),
    # the integer ones (and floor_divide_, whose gradient PyTorch refuses), on a copy
    ("ifloordiv", lambda m, y, b: y.copy_(y.detach().__ifloordiv__(0.5)), None),
    ("iand", lambda m, y, b: y.copy_((y.detach() * 9).long().__iand__(6)), None),
    ("ior", lambda m, y, b: y.copy_((y.detach() * 9).long().__ior__(5)), None),
    ("ixor", lambda m, y, b: y.copy_((y.detach() * 9).long().__ixor__(3)), None),
    ("bitwise_xor_", lambda m, y, b: y.copy_((y.detach() * 9).long().bitwise_xor_(
        m.tensor([1, 2, 3, 4]))), None),
    ("bitwise_not_", lambda m, y, b: y.copy_((y.detach() * 9).long().bitwise_not_()), None),
    ("ilshift", lambda m, y, b: y.copy_((y.detach() * 9).long().__ilshift__(2)), None),
    ("irshift", lambda m, y, b: y.copy_((y.detach() * 90).long().__irshift__(3)), None),
    # the in-place view ops, each undone so that y keeps its shape
    ("t_", lambda m, y, b: y.t_().mul_(b).t_(), (3,)),
    ("transpose_", lambda m, y, b: y.transpose_(0, 1).transpose_(-1, 0), None),
    ("swapaxes_", lambda m, y, b: y.swapaxes_(0, 1).mul_(2).swapaxes_(0, 1), None),
    ("swapdims_", lambda m, y, b: y.swapdims_(1, 0).swapdims_(0, 1), None),
    ("squeeze_", lambda m, y, b: y.unsqueeze_(1).squeeze_(), None),
    ("squeeze_dim", lambda m, y, b: y.unsqueeze_(0).squeeze_(0), None),
    ("unsqueeze_", lambda m, y, b: y.unsqueeze_(2).mul_(b).squeeze_((2,)), (3, 4, 1)),
    # the random fills, where the distribution is degenerate (their values can be compared
    # with PyTorch's; tests/ops/test_random_ops.py checks the rest)
    ("normal_", lambda m, y, b: y.normal_(1.5, 0.0), None),
    ("uniform_", lambda m, y, b: y.uniform_(0.5, 0.5), None),
    ("exponential_", lambda m, y, b: y.exponential_(1e30), None),  # ~1e-30
    ("geometric_", lambda m, y, b: y.geometric_(1 - 1e-12), None),  # 1 (but for p 1e-12)
    ("log_normal_", lambda m, y, b: y.log_normal_(0.0, 1e-30), None),
    ("cauchy_", lambda m, y, b: y.cauchy_(0.5, 1e-30), None),
    ("random_", lambda m, y, b: y.random_(3, 4), None),
    ("random_to", lambda m, y, b: y.random_(1), None),
    ("bernoulli_", lambda m, y, b: y.bernoulli_(1.0), None),
    ("bernoulli_tensor", lambda m, y, b: y.bernoulli_(b * 0 + 1), (4,)),
]


def _inplace_run(m, fn, a_np, b_np, g_np):
    a = m.tensor(a_np).requires_grad_(True)
    b = None if b_np is None else m.tensor(b_np).requires_grad_(True)
    y = a * 1  # a non-leaf: PyTorch forbids in-place ops on leaves that require grad
    view = y[1:]  # shares y's memory and version counter
    before = y._version
    out = fn(m, y, b)
    record = {
        "same_object": out is y,
        "version_step": y._version - before,
        "view_version": view._version == y._version,
        "view_sees_change": bool((view.detach() == y.detach()[1:]).all()),
        "grad_fn": y.grad_fn.name(),
        "requires_grad": y.requires_grad,
        "value": y.detach(),
    }
    (y * m.tensor(g_np)).sum().backward()
    record["a.grad"] = a.grad
    record["b.grad"] = None if b is None else b.grad
    return record


@pytest.mark.parametrize("fn,b_shape", [pytest.param(f, s, id=n) for n, f, s in INPLACE_CASES])
def test_inplace_vs_torch(fn, b_shape, torch):
    rng = np.random.default_rng(7)
    a_np, g_np = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    b_np = None if b_shape is None else rng.standard_normal(b_shape)
    rg = _inplace_run(retrograd, fn, a_np, b_np, g_np)
    th = _inplace_run(torch, fn, a_np, b_np, g_np)
    for key in ("same_object", "version_step", "view_version", "view_sees_change",
                "requires_grad"):
        assert rg[key] == th[key], key
    assert rg["version_step"] >= 1
    check_same(rg["value"], th["value"], TOL["float64"], "value")
    for key in ("a.grad", "b.grad"):
        if th[key] is None:
            assert rg[key] is None, key
        else:
            check_same(rg[key], th[key], TOL["float64"], key)


# PyTorch 2.13 names the scalar fill_ FillBackward2 and zero_ ZeroBackward0
@pytest.mark.parametrize("fn,b_shape", [pytest.param(f, s, id=n) for n, f, s in INPLACE_CASES])
def test_inplace_grad_fn_vs_torch(fn, b_shape, torch):
    rng = np.random.default_rng(7)
    a_np, g_np = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    b_np = None if b_shape is None else rng.standard_normal(b_shape)
    assert (_inplace_run(retrograd, fn, a_np, b_np, g_np)["grad_fn"]
            == _inplace_run(torch, fn, a_np, b_np, g_np)["grad_fn"])


def test_inplace_on_saved_tensor_raises_like_torch(torch):
    """A value saved for backward and then modified in place: backward refuses, naming it."""
    for m in (retrograd, torch):
        a = m.tensor([1.0, 2.0]).requires_grad_(True)
        y = a * 1
        z = y * y  # saves y
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_inplace_leaf_and_no_grad_like_torch(torch):
    for m in (retrograd, torch):
        a = m.tensor([1.0, 2.0]).requires_grad_(True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            a.mul_(2)
        with m.no_grad():
            a.mul_(2)  # allowed: e.g. an optimizer step
        assert a._version == 1 and a.grad_fn is None and a.requires_grad
        assert a.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("fn,b_shape", [pytest.param(f, s, id=n) for n, f, s in INPLACE_CASES
                                        if s is not None])
def test_inplace_grad_through_earlier_view_vs_torch(fn, b_shape, torch):
    """A view taken before an in-place change of its base sees the change in its gradient
    too (PyTorch regenerates the view's grad_fn from the base's new one)."""
    rng = np.random.default_rng(3)
    a_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal(b_shape)
    grads = []
    for m in (retrograd, torch):
        a, b = m.tensor(a_np).requires_grad_(True), m.tensor(b_np).requires_grad_(True)
        y = a * 1
        view = y[1:]
        fn(m, y, b)
        (view * m.tensor(a_np[1:])).sum().backward()
        grads.append((a.grad, b.grad))
    for r, t in zip(*grads):
        check_same(r, t, TOL["float64"], "grad through the view")


# in-place changes made through a view: the base's graph must follow
VIEW_INPLACE_CASES = [
    ("row_mul_", lambda m, y, b: y[1].mul_(b[0])),
    ("slice_add_", lambda m, y, b: y[1:].add_(b[1:])),
    ("col_copy_", lambda m, y, b: y[:, 2].copy_(b[:, 0])),
    ("transposed_div_", lambda m, y, b: y.t().div_(b.exp()[:, 0])),
    ("view_of_view_sub_", lambda m, y, b: y.view(12)[3:7].sub_(b[0, :4] * 2)),
    ("unsqueezed_zero_", lambda m, y, b: y.unsqueeze(0)[:, 1:].zero_()),
    ("setitem_on_view", lambda m, y, b: y[1:].__setitem__(0, b[0])),
    ("diagonal_mul_", lambda m, y, b: y.diagonal(1).mul_(b[0, :3])),
    ("then_base_inplace", lambda m, y, b: (y[0].mul_(b[1]), y.add_(b))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in VIEW_INPLACE_CASES])
def test_inplace_through_view_vs_torch(fn, torch):
    rng = np.random.default_rng(5)
    a_np, b_np, g_np = (rng.standard_normal((3, 4)) for _ in range(3))
    results = []
    for m in (retrograd, torch):
        a, b = m.tensor(a_np).requires_grad_(True), m.tensor(b_np).requires_grad_(True)
        y = a * 1
        early = y[2]  # a view taken before the change
        fn(m, y, b)
        ((y * m.tensor(g_np)).sum() + (early * early).sum()).backward()
        results.append((y.detach(), a.grad, b.grad, y.grad_fn is not None, y._version))
    (ry, ra, rb, rfn, rv), (ty, ta, tb, tfn, tv) = results
    check_same(ry, ty, TOL["float64"], "value")
    check_same(ra, ta, TOL["float64"], "a.grad")
    assert (rb is None) == (tb is None)
    if tb is not None:
        check_same(rb, tb, TOL["float64"], "b.grad")
    assert (rfn, rv) == (tfn, tv)


def test_inplace_on_view_of_leaf_raises_like_torch(torch):
    for m in (retrograd, torch):
        a = m.tensor([1.0, 2.0]).requires_grad_(True)
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            a[0].mul_(2)


def test_inplace_through_view_second_order_vs_torch(torch):
    """create_graph through CopySlices/AsStrided: the Hessian-vector product matches."""
    rng = np.random.default_rng(9)
    a_np, b_np = rng.standard_normal((2, 3)), rng.standard_normal(3)
    hvps = []
    for m in (retrograd, torch):
        a, b = m.tensor(a_np).requires_grad_(True), m.tensor(b_np).requires_grad_(True)
        y = a * a
        early = y[0]
        y[1].mul_(b)
        loss = (y * y).sum() + (early ** 3).sum()
        (ga,) = m.autograd.grad(loss, [a], create_graph=True)
        (ga * m.tensor(a_np)).sum().backward()
        hvps.append((a.grad, b.grad))
    for r, t in zip(*hvps):
        check_same(r, t, TOL["float64"], "second order")


def test_inplace_result_saved_then_changed_raises_like_torch(torch):
    """exp_ saves its result, which is the tensor itself: changing it again is an error at
    backward (as PyTorch), not a silent use of an old copy."""
    for m in (retrograd, torch):
        y = m.tensor([0.5, 1.0]).requires_grad_(True) * 1
        y.exp_()
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


_VIEWS = [lambda y: y[1], lambda y: y[:, 1:], lambda y: y.t(), lambda y: y.view(-1)[2:6],
          lambda y: y[0:2, ::2], lambda y: y.unsqueeze(0)[0], lambda y: y.diagonal(),
          lambda y: y.transpose(0, 1)[1:], lambda y: y.narrow(0, 1, 2)]
_CHANGES = [lambda v, b: v.mul_(2), lambda v, b: v.add_(1.5), lambda v, b: v.zero_(),
            lambda v, b: v.mul_(b.reshape(-1)[: v.shape[-1]]), lambda v, b: v.sigmoid_(),
            lambda v, b: v.copy_(b.reshape(-1)[: v.numel()].reshape(v.shape)),
            lambda v, b: v.clamp_(-0.3, 0.3), lambda v, b: v.exp_()]


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(plan=st.lists(st.tuples(st.integers(0, len(_VIEWS) - 1),
                                          st.integers(0, len(_CHANGES) - 1), st.booleans()),
                                min_size=1, max_size=3),
                  seed=st.integers(0, 2**16))
def test_views_and_inplace_changes_vs_torch_hypothesis(plan, seed):
    """Views taken, then in-place changes of the base or of a view, in any order: the loss,
    both gradients and the version counter as PyTorch, or the same exception class."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    a_np, b_np, g_np = (rng.standard_normal((3, 4)) for _ in range(3))
    results = []
    for m in (retrograd, torch):
        try:
            a, b = m.tensor(a_np).requires_grad_(True), m.tensor(b_np).requires_grad_(True)
            y = a * 1
            kept = []
            for view, change, on_base in plan:
                v = _VIEWS[view](y)
                kept.append(v)
                _CHANGES[change](y if on_base else v, b)
            loss = (y * m.tensor(g_np)).sum() + sum((k * k).sum() for k in kept)
            loss.backward()
            results.append((loss.detach(), a.grad, b.grad, y._version))
        except RuntimeError as e:
            results.append(type(e))
    rg, th = results
    if not isinstance(th, tuple):
        assert rg is th, f"torch raised {th.__name__}, retrograd gave {rg!r}"
        return
    assert isinstance(rg, tuple), rg
    assert rg[3] == th[3], "version"
    for r, t in zip(rg[:3], th[:3]):
        assert (r is None) == (t is None)
        if t is not None:
            check_same(r, t, TOL["float64"], "loss / grads")
