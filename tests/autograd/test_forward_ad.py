"""retrograd.autograd.forward_ad against torch.autograd.forward_ad: the API and its errors,
in-place ops and views of duals, custom Functions, forward-over-reverse and
reverse-over-forward.  (Every op's JVP: test_forward_ad_ops.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.autograd.forward_ad as fwAD
from retrograd.autograd.forward_state import fw

R = retrograd


@pytest.fixture
def th(torch):
    import torch.autograd.forward_ad as th_fwAD

    return th_fwAD


def both(torch, th):
    return [(R, fwAD), (torch, th)]


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e), str(e)
    return None, None


def arr(t):
    return np.asarray(t.detach().numpy())


# ----------------------------------------------------------------- the API and its errors
def test_levels_and_unpack(torch, th):
    for m, ad in both(torch, th):
        assert not hasattr(ad, "nothing")
        with ad.dual_level() as level:
            assert level == 0
            x = m.tensor([1.0, 2.0])
            d = ad.make_dual(x, m.tensor([3.0, 4.0]))
            assert not d.requires_grad and d.grad_fn is None
            u = ad.unpack_dual(d)
            assert isinstance(u, tuple) and u._fields == ("primal", "tangent")
            assert type(u).__name__ == "UnpackedDualTensor"
            assert arr(u.tangent).tolist() == [3.0, 4.0]
            assert arr(u.primal).tolist() == [1.0, 2.0]
            assert ad.unpack_dual(x).tangent is None
            assert ad.unpack_dual(d, level=0).tangent is not None
        assert ad.unpack_dual(d).tangent is None  # the level's tangents are gone
        assert ad.unpack_dual(m.ones(1)).tangent is None
        assert ad.enter_dual_level() == 0
        ad.exit_dual_level()
    assert not fw.active and fw.level is None


def test_dual_of_a_tensor_that_requires_grad_is_a_view(torch, th):
    for m, ad in both(torch, th):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with ad.dual_level():
            d = ad.make_dual(x, m.ones(2))
            assert d.requires_grad and type(d.grad_fn).__name__ == "ViewBackward0" or \
                d.grad_fn.name() == "ViewBackward0"
            (d * 2).sum().backward()
        assert arr(x.grad).tolist() == [2.0, 2.0]


ERRORS = {
    "make_dual outside a level": lambda m, ad: ad.make_dual(m.ones(2), m.ones(2)),
    "tangent of another size": lambda m, ad: _in_level(ad, lambda: ad.make_dual(
        m.ones(3), m.ones(2))),
    "integer tangent": lambda m, ad: _in_level(ad, lambda: ad.make_dual(
        m.ones(3), m.ones(3).int())),
    "integer primal": lambda m, ad: _in_level(ad, lambda: ad.make_dual(
        m.ones(3).int(), m.ones(3).int())),
    "number tangent": lambda m, ad: _in_level(ad, lambda: ad.make_dual(m.ones(3), 3.0)),
    "invalid level": lambda m, ad: _in_level(ad, lambda: ad.make_dual(
        m.ones(3), m.ones(3), level=5)),
    "dual of a dual": lambda m, ad: _in_level(ad, lambda: ad.make_dual(
        ad.make_dual(m.ones(3), m.ones(3)), m.ones(3))),
    "unpack at an invalid level": lambda m, ad: _in_level(ad, lambda: ad.unpack_dual(
        ad.make_dual(m.ones(3), m.ones(3)), level=3)),
    "unpack a number": lambda m, ad: _in_level(ad, lambda: ad.unpack_dual(3.0)),
    "nested levels": lambda m, ad: _in_level(ad, ad.enter_dual_level),
    "nested with": lambda m, ad: _in_level(ad, lambda: ad.dual_level().__enter__()),
    "exit with no level": lambda m, ad: ad.exit_dual_level(),
    "exit another level": lambda m, ad: _in_level(ad, lambda: ad.exit_dual_level(level=1)),
}


def _in_level(ad, fn):
    with ad.dual_level():
        return fn()


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_pytorch(name, torch, th):
    got_cls, got_msg = raised(lambda: ERRORS[name](R, fwAD))
    want_cls, want_msg = raised(lambda: ERRORS[name](torch, th))
    assert want_cls is not None and got_cls is want_cls, (got_cls, want_cls, want_msg)
    # PyTorch's text leads retrograd's (which may add what to do)
    assert got_msg.startswith(want_msg.split(" (")[0][:40]) or want_cls is AttributeError, \
        (got_msg, want_msg)
    assert not fw.active and fw.level is None  # every level was closed


def test_an_exception_inside_the_level_closes_it():
    with pytest.raises(ZeroDivisionError), fwAD.dual_level():
        raise ZeroDivisionError
    assert fw.level is None and not fw.active


# ----------------------------------------------------------------- values through programs
def _program(m):
    def f(x, w):
        h = (x @ w).tanh()
        h = m.cat([h, h.sigmoid() * 2], dim=1).softmax(-1)
        return (h.log_softmax(0) + h.relu() - h.exp()).mean(0).sum() + h[0, 1:].sum()

    return f


def _jvp_of(m, ad, f, primals, tangents, dtype="float64"):
    with ad.dual_level():
        duals = [ad.make_dual(m.tensor(p, dtype=getattr(m, dtype)),
                              m.tensor(t, dtype=getattr(m, dtype)))
                 for p, t in zip(primals, tangents)]
        out = f(*duals)
        primal, tangent = ad.unpack_dual(out)
        return arr(primal), arr(tangent), str(tangent.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_program_as_pytorch(dtype, torch, th):
    rng = np.random.default_rng(0)
    primals = [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))]
    tangents = [rng.standard_normal((3, 4)), rng.standard_normal((4, 2))]
    got = _jvp_of(R, fwAD, _program(R), primals, tangents, dtype)
    want = _jvp_of(torch, th, _program(torch), primals, tangents, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    assert got[2] == want[2] == dtype


# ----------------------------------------------------------------- in place and views
INPLACE = {
    "mul_ of a dual": lambda m, x: x.mul_(2.0),
    "add_ of a dual into a plain tensor": lambda m, x: m.ones(4).add_(x),
    "sin_ of a dual": lambda m, x: x.sin_(),
    "setitem of a dual into a plain tensor": lambda m, x: _setitem(m.zeros(6), x),
    "setitem into a dual": lambda m, x: _setitem(x, m.full((2,), 5.0)),
    "change through a view of a dual": lambda m, x: _view_mul(x),
    "copy_ into a view of a dual": lambda m, x: _view_copy(m, x),
    "unsqueeze_ of a dual": lambda m, x: x.unsqueeze_(0) * 1,
    "transpose of a dual, changed": lambda m, x: x.reshape(2, 2).t().mul_(3),
}


def _setitem(target, value):
    target[1:3] = value[:2] if value.shape[0] > 2 else value
    return target


def _view_mul(x):
    x[1:3].mul_(10.0)
    return x


def _view_copy(m, x):
    x[:2].copy_(m.tensor([7.0, 8.0]))
    return x


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_and_views_as_pytorch(name, torch, th):
    results = []
    for m, ad in both(torch, th):
        with ad.dual_level():
            x = ad.make_dual(m.tensor([1.0, 2.0, 3.0, 4.0]), m.tensor([0.5, -1.0, 2.0, 3.0]))
            out = INPLACE[name](m, x)
            p, t = ad.unpack_dual(out)
            results.append((arr(p), None if t is None else arr(t)))
            # and the dual itself (changed in place through its views)
            results.append(tuple(None if v is None else arr(v) for v in ad.unpack_dual(x)))
    (gp, gt), (gxp, gxt), (wp, wt), (wxp, wxt) = results
    for got, want in ((gp, wp), (gt, wt), (gxp, wxp), (gxt, wxt)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_the_tangent_of_a_view_is_a_view_of_the_tangent():
    with fwAD.dual_level():
        t = R.tensor([1.0, 2.0, 3.0, 4.0])
        x = fwAD.make_dual(R.zeros(4), t)
        v = x[1:3]
        tv = fwAD.unpack_dual(v).tangent
        assert np.shares_memory(tv._data, t._data)
        v.mul_(2.0)
        assert fwAD.unpack_dual(x).tangent.tolist() == [1.0, 4.0, 6.0, 4.0]


def test_make_dual_of_a_view(torch, th):
    results = []
    for m, ad in both(torch, th):
        base = m.tensor([1.0, 2.0, 3.0, 4.0])
        with ad.dual_level():
            d = ad.make_dual(base[1:3], m.tensor([1.0, -1.0]))
            results.append(arr(ad.unpack_dual(d * d).tangent))
            results.append(ad.unpack_dual(base).tangent)
    np.testing.assert_allclose(results[0], results[2])
    assert results[1] is None and results[3] is None


def test_dropout_scales_the_tangent_with_the_mask():
    R.manual_seed(0)
    with fwAD.dual_level():
        x = fwAD.make_dual(R.ones(50, dtype=R.float64), R.full((50,), 3.0, dtype=R.float64))
        y = R.nn.functional.dropout(x, 0.5)
        p, t = fwAD.unpack_dual(y)
    np.testing.assert_allclose(arr(t), 3.0 * arr(p))


def test_unpack_outside_a_level_passes_anything(torch, th):
    assert fwAD.unpack_dual(3.0) == th.unpack_dual(3.0) == (3.0, None)


def test_no_tangent_without_a_level():
    x = R.ones(3)
    y = (x * 2).exp()
    assert y._extra is None


def test_an_op_whose_backward_cannot_be_differentiated_says_so():
    with fwAD.dual_level():
        x = fwAD.make_dual(R.ones(1, 4, 2, 2), R.ones(1, 4, 2, 2))
        with pytest.raises(RuntimeError, match="forward-mode AD through"):
            R.native_channel_shuffle(x, 2)


# ----------------------------------------------------------------- custom Functions
def _functions(m):
    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k, x + y

        @staticmethod
        def backward(ctx, g, h):
            return None, None, None

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            assert tk is None
            x, y = ctx.saved_tensors
            return (tx * y + x * ty) * ctx.k, tx + ty

    class NoJvp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Scale, NoJvp


def test_custom_function_jvp(torch, th):
    results = []
    for m, ad in both(torch, th):
        scale, no_jvp = _functions(m)
        with ad.dual_level():
            x = ad.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0]))
            a, b = scale.apply(x, m.tensor([3.0, 4.0]), 2.0)
            results.append((arr(ad.unpack_dual(a).tangent), arr(ad.unpack_dual(b).tangent)))
            results.append(raised(lambda f=no_jvp, x=x: f.apply(x)))
            results.append(ad.unpack_dual(no_jvp.apply(m.ones(2))).tangent)  # no tangent in
    np.testing.assert_allclose(results[0][0], results[3][0])
    np.testing.assert_allclose(results[0][1], results[3][1])
    assert results[1] == results[4]
    assert results[2] is None and results[5] is None


# ----------------------------------------------------------------- mixing with reverse mode
def _loss(m):
    def f(x):
        return (x.tanh() ** 3 * x.exp()).sum() + (x @ x) * x.sigmoid().sum()

    return f


@pytest.mark.parametrize("create_graph", [True, False])
def test_forward_over_reverse_is_the_hvp(create_graph, torch, th):
    rng = np.random.default_rng(3)
    x0, v = rng.standard_normal(5), rng.standard_normal(5)
    got = []
    for m, ad in both(torch, th):
        x = m.tensor(x0, requires_grad=True)
        with ad.dual_level():
            d = ad.make_dual(x, m.tensor(v))
            (g,) = m.autograd.grad(_loss(m)(d), x, create_graph=create_graph)
            got.append(arr(ad.unpack_dual(g).tangent))
    _, hvp = R.autograd.functional.hvp(_loss(R), R.tensor(x0), R.tensor(v))
    np.testing.assert_allclose(got[0], arr(hvp), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-6)


def test_reverse_over_forward(torch, th):
    rng = np.random.default_rng(4)
    x0, v = rng.standard_normal(5), rng.standard_normal(5)
    grads = []
    for m, ad in both(torch, th):
        x = m.tensor(x0, requires_grad=True)
        t = m.tensor(v, requires_grad=True)
        with ad.dual_level():
            jt = ad.unpack_dual(_loss(m)(ad.make_dual(x, t))).tangent
        jt.backward()
        grads.append((arr(x.grad), arr(t.grad)))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-5, atol=1e-6)


def test_fallback_jvp_is_differentiable_in_reverse(torch, th):
    # cumprod has no hand-written JVP: its tangent comes from the VJP's transpose
    rng = np.random.default_rng(5)
    x0, v = rng.uniform(0.5, 2, 4), rng.standard_normal(4)
    grads = []
    for m, ad in both(torch, th):
        x = m.tensor(x0, requires_grad=True)
        with ad.dual_level():
            jt = ad.unpack_dual(ad.make_dual(x, m.tensor(v)).cumprod(0)).tangent
        jt.sum().backward()
        grads.append(arr(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------- autograd.functional
def _two_in_two_out(x, y):
    return x * y.sum(), (x.exp() @ x).reshape(1) * y


@pytest.mark.parametrize("inputs", ["single", "tuple"])
def test_jacobian_forward_mode_as_pytorch(inputs, torch):
    rng = np.random.default_rng(6)
    x0, y0 = rng.standard_normal(3), rng.standard_normal(2)
    results = []
    for m in (R, torch):
        x, y = m.tensor(x0), m.tensor(y0)
        if inputs == "single":
            jac = m.autograd.functional.jacobian(lambda a, y=y: _two_in_two_out(a, y)[1], x,
                                                 strategy="forward-mode", vectorize=True)
            results.append([[arr(jac)]])
        else:
            jac = m.autograd.functional.jacobian(_two_in_two_out, (x, y),
                                                 strategy="forward-mode", vectorize=True)
            results.append([[arr(b) for b in row] for row in jac])
    rev = R.autograd.functional.jacobian(_two_in_two_out, (R.tensor(x0), R.tensor(y0)))
    for got_row, want_row in zip(*results):
        for got, want in zip(got_row, want_row):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    if inputs == "tuple":
        for got_row, rev_row in zip(results[0], rev):
            for got, want in zip(got_row, rev_row):
                np.testing.assert_allclose(got, arr(want), rtol=1e-6, atol=1e-8)


def test_hessian_forward_over_reverse_as_pytorch(torch):
    x0 = np.random.default_rng(7).standard_normal(4)
    got = R.autograd.functional.hessian(_loss(R), R.tensor(x0), vectorize=True,
                                        outer_jacobian_strategy="forward-mode")
    want = torch.autograd.functional.hessian(_loss(torch), torch.tensor(x0), vectorize=True,
                                             outer_jacobian_strategy="forward-mode")
    rev = R.autograd.functional.hessian(_loss(R), R.tensor(x0))
    np.testing.assert_allclose(arr(got), arr(want), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(arr(got), arr(rev), rtol=1e-6, atol=1e-8)


def test_jacobian_forward_mode_errors_as_pytorch(torch):
    for kwargs in ({"strict": True, "vectorize": True}, {"create_graph": True},
                   {"vectorize": False}):
        got = raised(lambda kw=kwargs: R.autograd.functional.jacobian(
            lambda x: x * 2, R.ones(2), strategy="forward-mode", **kw))
        want = raised(lambda kw=kwargs: torch.autograd.functional.jacobian(
            lambda x: x * 2, torch.ones(2), strategy="forward-mode", **kw))
        assert got[0] is want[0] is not None, (kwargs, got, want)


def test_what_keeps_a_tangent_as_pytorch(torch, th):
    seen = []
    for m, ad in both(torch, th):
        with ad.dual_level():
            x = ad.make_dual(m.ones(2), m.ones(2, dtype=m.float64))  # a wider tangent is kept
            seen.append([
                str(ad.unpack_dual(x.exp()).tangent.dtype).split(".")[-1],
                ad.unpack_dual(x.detach()).tangent is None,
                ad.unpack_dual(x.data).tangent is None,
                ad.unpack_dual(x.clone()).tangent is not None,
                ad.unpack_dual(x.long()).tangent is None,
                ad.unpack_dual(x > 0).tangent is None,
            ])
    assert seen[0] == seen[1] == ["float64", True, True, True, True, True]


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(fwAD).failed == 0
