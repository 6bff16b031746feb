"""In-place changes through views, differentially against PyTorch 2.13.

Every kind of view (indexing, select, narrow, diagonal, split/chunk/unbind pieces, the
layout views, views of views) crossed with every in-place op: the values of base and view,
their grad_fn names, the gradients of every leaf, and the exception class wherever PyTorch
raises.  Then random chains of views and in-place steps (hypothesis).  The ops that pick
values along a dim, on view pieces, are in test_view_pieces.py.
"""

import operator
import warnings

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


# ----------------------------------------------------------------------------- the tables

# name -> (base shape, view of the base); ``m`` is the library (retrograd or torch)
VIEWS = {
    "int": ((3,), lambda m, b: b[2]),
    "neg_int": ((3, 4), lambda m, b: b[-1]),
    "int_int": ((3, 4), lambda m, b: b[1, 2]),
    "neg_int_int": ((3, 4), lambda m, b: b[-2, -1]),
    "int_then_int": ((3, 4), lambda m, b: b[1][2]),
    "slice": ((5,), lambda m, b: b[1:4]),
    "slice_step": ((6,), lambda m, b: b[::2]),
    "neg_slice": ((6,), lambda m, b: b[-3:-1]),
    "col_slice": ((3, 4), lambda m, b: b[:, 1:3]),
    "none": ((3,), lambda m, b: b[None]),
    "ellipsis": ((2, 3, 4), lambda m, b: b[..., 1]),
    "ellipsis_only": ((2, 3), lambda m, b: b[...]),
    "empty_tuple": ((2, 3), lambda m, b: b[()]),
    "combined": ((3, 4, 5), lambda m, b: b[1:, None, ..., -2]),
    "int_slice": ((3, 4), lambda m, b: b[1, 1:3]),
    "slice_int_none": ((3, 4), lambda m, b: b[0:2, -1, None]),
    "0d_ellipsis": ((), lambda m, b: b[...]),
    "select": ((3, 4), lambda m, b: b.select(1, 2)),
    "select_neg": ((3, 4), lambda m, b: b.select(-2, -1)),
    "narrow": ((4, 5), lambda m, b: b.narrow(1, 1, 3)),
    "narrow_neg_start": ((4, 5), lambda m, b: b.narrow(0, -3, 2)),
    "diagonal": ((3, 3), lambda m, b: b.diagonal()),
    "diagonal_offset": ((3, 4), lambda m, b: b.diagonal(1)),
    "diagonal_below": ((4, 3), lambda m, b: b.diagonal(-1)),
    "diagonal_3d": ((2, 3, 3), lambda m, b: b.diagonal(0, 1, 2)),
    "transpose": ((3, 4), lambda m, b: b.transpose(0, 1)),
    "permute": ((2, 3, 4), lambda m, b: b.permute(2, 0, 1)),
    "t": ((3, 4), lambda m, b: b.t()),
    "T": ((3, 4), lambda m, b: b.T),
    "mT": ((2, 3, 4), lambda m, b: b.mT),
    "view": ((3, 4), lambda m, b: b.view(2, 6)),
    "view_flat": ((3, 4), lambda m, b: b.view(-1)),
    "reshape": ((3, 4), lambda m, b: b.reshape(4, 3)),
    "flatten": ((2, 3, 2), lambda m, b: b.flatten(1)),
    "unflatten": ((2, 6), lambda m, b: b.unflatten(1, (3, 2))),
    "view_as": ((2, 6), lambda m, b: b.view_as(b.detach().reshape(3, 4))),
    "movedim": ((2, 3, 4), lambda m, b: b.movedim(0, 2)),
    "swapaxes": ((2, 3, 4), lambda m, b: b.swapaxes(0, 2)),
    "expand": ((3, 1), lambda m, b: b.expand(3, 4)),
    "expand_new_dim": ((3,), lambda m, b: b.expand(2, 3)),
    "squeeze": ((3, 1, 4), lambda m, b: b.squeeze()),
    "squeeze_dim": ((3, 1, 4), lambda m, b: b.squeeze(1)),
    "unsqueeze": ((3, 4), lambda m, b: b.unsqueeze(1)),
    "unsqueeze_neg": ((3, 4), lambda m, b: b.unsqueeze(-1)),
    # views of views
    "t_then_int": ((3, 4), lambda m, b: b.t()[1]),
    "slice_then_diagonal": ((4, 4), lambda m, b: b[1:, :3].diagonal()),
    "view_slice_t_int": ((4, 6), lambda m, b: b.view(6, 4)[1:5].t()[2]),
    "narrow_unsqueeze_transpose": ((4, 3), lambda m, b: b.narrow(0, 1, 2).unsqueeze(0)
                                   .transpose(0, 2)),
    "permute_select_slice": ((2, 3, 4), lambda m, b: b.permute(1, 2, 0).select(0, 1)[1:]),
    "int_int_then_unsqueeze": ((3, 4), lambda m, b: b[2][1].unsqueeze(0)),
    # the outputs of functions that return several views
    "unbind": ((3, 4), lambda m, b: b.unbind(0)[1]),
    "unbind_1d": ((3,), lambda m, b: b.unbind()[2]),
    "iter": ((3, 2), lambda m, b: list(b)[1]),
    "split": ((4, 3), lambda m, b: b.split(2)[1]),
    "split_sizes": ((5, 3), lambda m, b: b.split([2, 3])[0]),
    "chunk": ((4, 3), lambda m, b: b.chunk(2, 1)[0]),
    "split_then_int": ((4, 3), lambda m, b: b.split(2)[1][0]),
    "chunk_then_t": ((4, 3), lambda m, b: b.chunk(2)[0].t()),
    "slice_then_unbind": ((4, 3), lambda m, b: b[1:].unbind(1)[0]),
}


def _iadd(v, w):
    v += w


def _setitem(index):
    def change(v, w):
        v[index] = w[index] if w.ndim else w

    return change


# name -> (in-place change of ``v``; ``w`` has ``v``'s shape, ``s`` is 0-d, both need grad)
OPS = {
    "add_": lambda m, v, w, s: v.add_(w),
    "add_alpha": lambda m, v, w, s: v.add_(w, alpha=2.0),
    "add_number": lambda m, v, w, s: v.add_(1.5),
    "add_0d": lambda m, v, w, s: v.add_(s),
    "iadd": lambda m, v, w, s: _iadd(v, w),
    "sub_": lambda m, v, w, s: v.sub_(w),
    "mul_": lambda m, v, w, s: v.mul_(w),
    "mul_number": lambda m, v, w, s: v.mul_(3.0),
    "imul": lambda m, v, w, s: operator.imul(v, w),
    "div_": lambda m, v, w, s: v.div_(w),
    "itruediv": lambda m, v, w, s: operator.itruediv(v, 2.0),
    "pow_": lambda m, v, w, s: v.pow_(2.0),
    "pow_tensor": lambda m, v, w, s: v.pow_(w),
    "clamp_": lambda m, v, w, s: v.clamp_(1.4, 2.4),
    "clamp_min_": lambda m, v, w, s: v.clamp_min_(1.6),
    "clamp_max_": lambda m, v, w, s: v.clamp_max_(2.2),
    "relu_": lambda m, v, w, s: v.relu_(),
    "neg_": lambda m, v, w, s: v.neg_(),
    "exp_": lambda m, v, w, s: v.exp_(),
    "abs_": lambda m, v, w, s: v.abs_(),
    "sqrt_": lambda m, v, w, s: v.sqrt_(),
    "log_": lambda m, v, w, s: v.log_(),
    "sin_": lambda m, v, w, s: v.sin_(),
    "cos_": lambda m, v, w, s: v.cos_(),
    "tanh_": lambda m, v, w, s: v.tanh_(),
    "sigmoid_": lambda m, v, w, s: v.sigmoid_(),
    "sign_": lambda m, v, w, s: v.sign_(),
    "reciprocal_": lambda m, v, w, s: v.reciprocal_(),
    "log1p_": lambda m, v, w, s: v.log1p_(),
    "expm1_": lambda m, v, w, s: v.expm1_(),
    "rsqrt_": lambda m, v, w, s: v.rsqrt_(),
    "square_": lambda m, v, w, s: v.square_(),
    "floor_": lambda m, v, w, s: v.floor_(),
    "ceil_": lambda m, v, w, s: v.ceil_(),
    "round_": lambda m, v, w, s: v.round_(),
    "trunc_": lambda m, v, w, s: v.trunc_(),
    "remainder_": lambda m, v, w, s: v.remainder_(1.7),
    "addcmul_": lambda m, v, w, s: v.addcmul_(w, w, value=0.5),
    "addcdiv_": lambda m, v, w, s: v.addcdiv_(w, w + 1, value=0.5),
    "lerp_": lambda m, v, w, s: v.lerp_(w, 0.3),
    "lerp_tensor": lambda m, v, w, s: v.lerp_(w, w * 0.25),
    "zero_": lambda m, v, w, s: v.zero_(),
    "fill_": lambda m, v, w, s: v.fill_(0.5),
    "fill_0d": lambda m, v, w, s: v.fill_(s),
    "copy_": lambda m, v, w, s: v.copy_(w),
    "copy_0d": lambda m, v, w, s: v.copy_(s),
    "masked_fill_": lambda m, v, w, s: v.masked_fill_(v.detach() > 2.0, 0.25),
    "masked_fill_0d": lambda m, v, w, s: v.masked_fill_(v.detach() > 2.0, s),
    "setitem_all": lambda m, v, w, s: _setitem(Ellipsis)(v, w),
    "setitem_number": lambda m, v, w, s: v.__setitem__(Ellipsis, 0.75),
    "setitem_mask": lambda m, v, w, s: v.__setitem__(v.detach() > 2.0, s),
}

# a few representative ops for the scenarios that do not need every op
SOME_OPS = ["add_", "mul_", "mul_number", "exp_", "zero_", "copy_", "setitem_all"]


def _arrays(shape, seed):
    """Base values in [0.5, 1.5) (so y = 2 * x is in [1, 3): sqrt, log... are defined and
    the comparisons of masked_fill_ split it), plus weights for the loss."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape), rng.uniform(0.5, 1.5, shape), rng.standard_normal(shape)


def _name(fn):
    # torch's CopySlices calls itself "torch::autograd::CopySlices"
    return None if fn is None else fn.name().replace("torch::autograd::", "")


def _run(m, scenario, view_name, op_name, seed=0):
    """Run one scenario in library ``m``; return what can be observed, in plain Python.

    scenarios: ``view`` changes the view of a non-leaf base; ``base`` changes the base after
    the view was taken; ``plain_base`` takes the view of a tensor that needs no gradient and
    changes it with operands that do; ``leaf`` takes the view of a leaf that requires grad.
    """
    shape, view_fn = VIEWS[view_name]
    op = OPS[op_name]
    x_np, w_np, g_np = _arrays(shape, seed)
    obs = {}
    stage = "view"
    try:
        x = m.tensor(x_np, requires_grad=True)
        if scenario == "plain_base":
            y = m.tensor(x_np * 2)
        elif scenario == "strided_base":
            # the base of the views is the product: a column-major array (NumPy keeps the
            # layout of x.mT), and y a transposed view of it
            y = (x.mT * 2).mT if x.ndim >= 2 else x * 2
        elif scenario == "leaf":
            y = x
        else:
            y = x * 2
        v = view_fn(m, y)
        vshape = tuple(v.shape)
        target = y if scenario == "base" else v
        w = m.tensor(np.resize(w_np, tuple(target.shape)) * 2, requires_grad=True)
        s = m.tensor(0.625, dtype=m.float64, requires_grad=True)
        stage = "inplace"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op(m, target, w, s)
        obs["base"] = np.array(y.detach().tolist())
        obs["view"] = np.array(v.detach().tolist())
        obs["base_fn"] = _name(y.grad_fn)
        obs["view_fn"] = _name(v.grad_fn)
        obs["requires_grad"] = (y.requires_grad, v.requires_grad)
        obs["version"] = (y._version, v._version)
        stage = "backward"
        rng = np.random.default_rng(seed + 1)
        gv = m.tensor(rng.standard_normal(vshape))
        loss = (y * m.tensor(g_np)).sum() + (v * gv).sum() + (v * v).sum()
        if loss.requires_grad:
            loss.backward()
        obs["loss"] = loss.item()
        for leaf_name, leaf in (("x", x), ("w", w), ("s", s)):
            obs[leaf_name + ".grad"] = None if leaf.grad is None else np.array(leaf.grad.tolist())
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        obs["raised"] = (stage, type(e).__name__)
    return obs


def _compare(view_name, op_name, scenario, seed=0):
    rg = _run(R, scenario, view_name, op_name, seed)
    th = _run(torch, scenario, view_name, op_name, seed)
    assert rg.get("raised") == th.get("raised"), (rg.get("raised"), th.get("raised"))
    assert rg.keys() == th.keys()
    for key, want in th.items():
        got = rg[key]
        if isinstance(want, np.ndarray):
            assert got is not None, key
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=key)
        elif isinstance(want, float):
            assert got == pytest.approx(want, rel=1e-10, abs=1e-12), key
        else:
            assert got == want, key


# ----------------------------------------------------------------------------- the tests

def _mismatches(view_name, ops, scenario):
    """Run every op of ``ops`` on the view; return a description of each mismatch."""
    bad = []
    for op_name in ops:
        try:
            _compare(view_name, op_name, scenario)
        except AssertionError as e:
            bad.append(f"{op_name}: {str(e).splitlines()[0][:300]}")
    return bad


# one test per view, every op inside it (a test per pair costs more in pytest than the pair)
@pytest.mark.parametrize("view_name", list(VIEWS))
def test_inplace_on_view_vs_torch(view_name):
    """Change a view of a non-leaf in place with every op, then use the base and the view."""
    assert _mismatches(view_name, OPS, "view") == []


@pytest.mark.parametrize("view_name", list(VIEWS))
def test_inplace_on_base_then_use_view_vs_torch(view_name):
    """Change the base in place after taking the view; the view sees it, values and grads."""
    assert _mismatches(view_name, SOME_OPS, "base") == []


@pytest.mark.parametrize("view_name", list(VIEWS))
def test_inplace_on_view_of_plain_tensor_vs_torch(view_name):
    """A view of a tensor that needs no gradient, changed with operands that do: the base
    then records the change (CopySlices) and its gradient reaches the operands."""
    assert _mismatches(view_name, SOME_OPS, "plain_base") == []


@pytest.mark.parametrize("view_name", list(VIEWS))
def test_inplace_on_view_of_a_strided_base_vs_torch(view_name):
    """The same when the memory's base is not row-major (a transposed product)."""
    assert _mismatches(view_name, SOME_OPS, "strided_base") == []


@pytest.mark.parametrize("view_name", list(VIEWS))
def test_inplace_on_view_of_leaf_vs_torch(view_name):
    """A view of a leaf that requires grad refuses an in-place change (as PyTorch)."""
    assert _mismatches(view_name, ["mul_", "zero_", "setitem_all"], "leaf") == []


def test_issue_7_integer_index_view_regression():
    """y[2] of a 1-D tensor is a view: mul_ on it changes y and its gradient."""
    outs = []
    for m in (R, torch):
        x = m.tensor([-1., -.5, 1.], requires_grad=True)
        y = x * 2
        y[2].mul_(3.0)
        (y * m.tensor([1., 2., .5])).sum().backward()
        outs.append((y.tolist(), x.grad.tolist()))
    assert outs[0] == outs[1]


def test_changed_view_keeps_its_own_gradient_hooks_and_retain_grad():
    """The changed view's grad_fn is re-derived, and retain_grad follows it (PyTorch)."""
    grads = []
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        v = y[1:]
        v.retain_grad()
        v.mul_(3.0)
        (v * m.tensor([1.0, 2.0])).sum().backward()
        grads.append((v.grad.tolist(), x.grad.tolist(), v.grad_fn.name().split("::")[-1]))
    assert grads[0] == grads[1]


def test_view_outlives_its_base():
    """The base is kept alive by its views (as PyTorch's view._base): an in-place change of
    one view after the base's last name is gone still reaches the other views."""
    grads = []
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 2
        a, b = y[:3], y[1:]
        del y
        a.mul_(m.tensor([5.0, 6.0, 7.0]))
        (b * m.tensor([1.0, 10.0, 100.0])).sum().backward()
        grads.append((b.tolist(), x.grad.tolist()))
    assert grads[0] == grads[1]


def test_views_of_a_detached_alias_are_not_views_of_the_original():
    """detach() shares memory and version counter, but the views of the detached tensor
    have it as base: changing them does not rewrite the original's grad_fn."""
    outs = []
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor([4.0, 5.0], requires_grad=True)
        y = x * 2
        early = y[1:]
        d = y.detach()
        d[:2].mul_(w)
        loss = (y * m.tensor([1.0, 2.0, 3.0])).sum() + (d * d).sum() + (early * early).sum()
        loss.backward()
        # (``early`` is re-derived, AsStridedBackward0 of y's unchanged grad_fn, as after any
        # change of the version of its memory)
        outs.append((y.tolist(), y.grad_fn.name(), _name(early.grad_fn), x.grad.tolist(),
                     w.grad.tolist(), _name(d.grad_fn)))
    assert outs[0] == outs[1]


def test_view_made_under_no_grad_refuses_as_torch():
    raised = []
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        with m.no_grad():
            v = y[:2]
        with pytest.raises(RuntimeError, match="no_grad mode") as info:
            v.mul_(2.0)
        raised.append(type(info.value))
        y.mul_(2.0)  # the base changed: reading the view's grad_fn refuses too
        with pytest.raises(RuntimeError, match="no_grad mode"):
            v.grad_fn  # noqa: B018
    assert raised[0] is raised[1]


def test_split_piece_whose_base_changed_refuses_as_torch():
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 2
        pieces = y.split(2)
        y.mul_(2.0)
        assert pieces[0].requires_grad
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base"):
            pieces[0].grad_fn  # noqa: B018
    # using it in backward raises too (PyTorch raises as soon as the op is recorded)
    y = R.tensor([1.0, 2.0], requires_grad=True) * 1
    piece = y.unbind()[1]
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="Output 1 of Unbind"):
        (piece * 2).backward()


def test_setitem_of_the_whole_tensor_copies_as_torch():
    """x[...] = v, x[:] = v and x[()] = v write into x itself: CopyBackwards or
    FillBackward3, as PyTorch (not CopySlices)."""
    for index in (Ellipsis, slice(None), (), (slice(None), Ellipsis), slice(0, 3)):
        for value in ("tensor", "number", "0d"):
            names = []
            for m in (R, torch):
                x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
                w = m.tensor([4.0, 5.0, 6.0], requires_grad=True)
                y = x * 2
                y[index] = {"tensor": w, "number": 7.0, "0d": w[0]}[value]
                (y * m.tensor([1.0, 2.0, 3.0])).sum().backward()
                names.append((_name(y.grad_fn), y._version, x.grad.tolist(),
                              None if w.grad is None else w.grad.tolist()))
            assert names[0] == names[1], (index, value)


def test_select_method_as_torch():
    x_np = np.arange(12.0).reshape(3, 4)
    outs = []
    for m in (R, torch):
        x = m.tensor(x_np, requires_grad=True)
        v = x.select(1, -1)
        (v * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        outs.append((v.tolist(), v.grad_fn.name(), x.grad.tolist()))
        with pytest.raises(IndexError):
            x.select(0, 3)
    assert outs[0] == outs[1]


def test_setitem_of_a_whole_0d_tensor_copies_as_torch():
    for value in ("number", "0d"):
        names = []
        for m in (R, torch):
            x = m.tensor(1.5, requires_grad=True)
            w = m.tensor(4.0, requires_grad=True)
            y = x * 2
            y[...] = 7.0 if value == "number" else w
            (y * 3).backward()
            names.append((_name(y.grad_fn), y.item(), x.grad.item(),
                          None if w.grad is None else w.grad.item()))
        assert names[0] == names[1], value


# ----------------------------------------------------------------------------- random chains


def _chain_view(kind, t, a):
    """A view of ``t`` of the given kind (``a`` picks dims and indices), or None if it does
    not apply to ``t``'s shape (the same in both libraries)."""
    n, shape = t.ndim, tuple(t.shape)
    if kind == "select" and n and shape[a % n]:
        return t.select(a % n, (a // 7) % shape[a % n] - (a % 2) * shape[a % n])
    if kind == "int" and n and shape[0]:
        return t[a % shape[0]]
    if kind == "slice" and n:
        d = a % n
        lo, step = (a // 3) % 2, 1 + (a // 5) % 2
        return t[(slice(None),) * d + (slice(lo, None, step),)]
    if kind == "narrow" and n and shape[a % n] >= 2:
        return t.narrow(a % n, 1, shape[a % n] - 1)
    if kind == "transpose" and n >= 2:
        return t.transpose(0, -1)
    if kind == "t" and n <= 2:
        return t.t()
    if kind == "unsqueeze":
        return t.unsqueeze(a % (n + 1))
    if kind == "squeeze":
        return t.squeeze()
    if kind == "view_flat":
        return t.view(-1)
    if kind == "diagonal" and n >= 2:
        return t.diagonal(a % 2 - (a // 2) % 2)
    if kind == "split" and n and shape[0]:
        return t.split(1)[a % shape[0]]
    if kind == "unbind" and n and shape[-1]:
        return t.unbind(-1)[a % shape[-1]]
    if kind == "detach":
        return t.detach()
    if kind == "permute" and n >= 2:
        return t.permute(*range(n - 1, -1, -1))
    if kind == "expand":
        return t.unsqueeze(0).expand(2, *shape)
    return None


_CHAIN_VIEWS = ["select", "int", "slice", "narrow", "transpose", "t", "unsqueeze", "squeeze",
                "view_flat", "diagonal", "split", "unbind", "detach", "permute", "expand"]
_CHAIN_OPS = ["mul_number", "add_", "mul_", "sigmoid_", "copy_", "setitem_first", "clamp_",
              "zero_", "no_grad_mul", "fill_0d", "addcmul_", "masked_fill_"]


def _chain_op(m, kind, t, w, s):
    if kind == "mul_number":
        t.mul_(1.5)
    elif kind == "add_":
        t.add_(w)
    elif kind == "mul_":
        t.mul_(w)
    elif kind == "sigmoid_":
        t.sigmoid_()
    elif kind == "copy_":
        t.copy_(w)
    elif kind == "setitem_first":
        if t.ndim:
            t[0] = w[0]
        else:
            t[...] = w
    elif kind == "clamp_":
        t.clamp_(0.5, 2.5)
    elif kind == "zero_":
        t.zero_()
    elif kind == "no_grad_mul":
        with m.no_grad():
            t.mul_(2.0)
    elif kind == "fill_0d":
        t.fill_(s)
    elif kind == "addcmul_":
        t.addcmul_(w, w, value=0.25)
    elif kind == "masked_fill_":
        t.masked_fill_(t.detach() > 2.0, 0.5)


# torch raises these when the refused view is next *used* (its grad_fn is read while
# recording); retrograd raises at backward: the same class, a later step
_REFUSED = "base or another view of its base has been modified inplace"


def _run_chain(m, plain, steps, seed):
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.uniform(0.5, 1.5, (3, 4)), requires_grad=True)
    y = m.tensor(rng.uniform(1.0, 3.0, (3, 4))) if plain else x * 2
    tensors, leaves = [y], [x]
    out = {"steps": []}
    stage = 0
    try:
        for stage, (is_view, kind, pick, a) in enumerate(steps):  # noqa: B007 - see except
            t = tensors[pick % len(tensors)]
            if is_view:
                v = _chain_view(_CHAIN_VIEWS[kind % len(_CHAIN_VIEWS)], t, a)
                if v is not None:
                    tensors.append(v)
                out["steps"].append(None if v is None else tuple(v.shape))
                continue
            w = m.tensor(rng.uniform(0.5, 1.5, tuple(t.shape)), requires_grad=True)
            s = m.tensor(0.75, dtype=m.float64, requires_grad=True)
            leaves += [w, s]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _chain_op(m, _CHAIN_OPS[kind % len(_CHAIN_OPS)], t, w, s)
            out["steps"].append([tt._version for tt in tensors])
            # read every grad_fn: PyTorch re-derives a view's grad_fn lazily, on this read,
            # and an in-place change of a view whose re-derivation was never read can see
            # it as a leaf; reading also raises for a view it refuses to re-derive
            for tt in tensors:
                tt.grad_fn  # noqa: B018
        stage = "final"
        loss = sum((t * m.tensor(np.random.default_rng(k).standard_normal(tuple(t.shape))))
                   .sum() for k, t in enumerate(tensors))
        out["values"] = [np.array(t.detach().tolist()) for t in tensors]
        out["requires_grad"] = [t.requires_grad for t in tensors]
        if loss.requires_grad:
            loss.backward()
        out["loss"] = loss.item()
        out["grads"] = [None if v.grad is None else np.array(v.grad.tolist()) for v in leaves]
    except (RuntimeError, IndexError) as e:
        out["raised"] = (stage, type(e).__name__, _REFUSED in str(e))
    return out


_step = st.tuples(st.booleans(), st.integers(0, 50), st.integers(0, 50), st.integers(0, 1000))


@hypothesis.settings(max_examples=100, deadline=None)
@hypothesis.given(plain=st.booleans(), steps=st.lists(_step, min_size=1, max_size=7),
                  seed=st.integers(0, 2**16))
def test_random_chains_of_views_and_inplace_changes_vs_torch(plain, steps, seed):
    """Views of views and in-place changes of any of them, in any order: the same
    exceptions, versions, values, requires_grad, loss and gradients as PyTorch."""
    rg = _run_chain(R, plain, steps, seed)
    th = _run_chain(torch, plain, steps, seed)
    if "raised" in th or "raised" in rg:
        assert "raised" in rg and "raised" in th, (rg.get("raised"), th.get("raised"))
        (ri, rname, _), (ti, tname, refused) = rg["raised"], th["raised"]
        assert rname == tname
        if refused:  # torch: at the next use of the refused view; retrograd: by backward
            assert ri == "final" or ri >= ti
        else:
            assert ri == ti
        return
    assert rg["steps"] == th["steps"]
    assert rg["requires_grad"] == th["requires_grad"]
    for key in ("values", "grads"):
        for r, t in zip(rg[key], th[key]):
            assert (r is None) == (t is None), key
            if t is not None:
                np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-12, err_msg=key)
    assert rg["loss"] == pytest.approx(th["loss"], rel=1e-10, abs=1e-12)


def test_custom_function_marking_a_view_dirty_vs_torch():
    """A custom Function that changes a view in place (ctx.mark_dirty): the base gets
    CopySlices and the other views see the change, as with the built-in in-place ops."""
    outs = []
    for m in (R, torch):
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        early = y[:2]
        v = y[1:]
        out = Double.apply(v)
        ((y * m.tensor([1.0, 10.0, 100.0])).sum() + (early * early).sum()).backward()
        outs.append((out is v, _name(y.grad_fn), _name(v.grad_fn), _name(early.grad_fn),
                     y.tolist(), x.grad.tolist()))
    assert outs[0] == outs[1]


def test_fills_write_through_an_expanded_tensor_as_torch():
    """PyTorch lets fill_/zero_/masked_fill_/x[mask] = v write through an expanded tensor
    (its elements share memory) and refuses the other in-place ops; recorded on a view of a
    tensor that needs a gradient, backward refuses (CopySlices cannot copy into it)."""
    for change in (lambda e: e.zero_(), lambda e: e.fill_(2.5),
                   lambda e: e.masked_fill_(e > 1.5, -1.0), lambda e: e.mul_(2.0),
                   lambda e: e.copy_(e * 0 + 1)):
        outs = []
        for m in (R, torch):
            base = m.tensor([[1.0], [2.0]])
            try:
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    change(base.expand(2, 3))
                outs.append((base.tolist(), [str(w.message).split(" (Triggered")[0]
                                             for w in seen]))
            except RuntimeError as e:
                outs.append(type(e))
        assert outs[0] == outs[1]
    seen_by = []
    for m in (R, torch):  # x[mask] = v: PyTorch's index_put_ warns the same way
        e = m.tensor([[1.0], [2.0]]).expand(2, 3)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            e[e > 1.5] = m.tensor(3.0)
            e[e < 1.5] = m.tensor([[5.0] * 3])[e[:1] < 1.5]
        seen_by.append((e.tolist(), [str(w.message).split(" (Triggered")[0] for w in seen]))
    assert seen_by[0] == seen_by[1]
    outs = []
    for m in (R, torch):
        x = m.tensor([[1.0], [2.0]], requires_grad=True)
        e = (x * 1).expand(2, 3)
        e.zero_()
        with pytest.raises(RuntimeError, match="single memory location"):
            e.sum().backward()


def _second_order(m, view_name, op_name):
    """Gradients of a gradient (create_graph=True) through CopySlices / AsStridedBackward0."""
    shape, view_fn = VIEWS[view_name]
    x_np, w_np, g_np = _arrays(shape, 0)
    try:
        x = m.tensor(x_np, requires_grad=True)
        y = x * x
        v = view_fn(m, y)
        w = m.tensor(np.resize(w_np, tuple(v.shape)) * 2, requires_grad=True)
        s = m.tensor(0.625, dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            OPS[op_name](m, v, w, s)
        loss = (y * y * m.tensor(g_np)).sum() + (v * v * v).sum()
        gx, gw = m.autograd.grad(loss, [x, w], create_graph=True, allow_unused=True)
        total = (gx * m.tensor(x_np)).sum() + (0 if gw is None else (gw * gw).sum())
        total.backward()
        return [None if a.grad is None else np.array(a.grad.tolist()) for a in (x, w, s)]
    except RuntimeError as e:
        return type(e).__name__


@pytest.mark.parametrize("view_name", list(VIEWS))
def test_second_order_through_changed_views_vs_torch(view_name):
    bad = []
    for op_name in ["mul_", "exp_", "copy_", "pow_tensor", "masked_fill_0d", "setitem_all"]:
        rg, th = _second_order(R, view_name, op_name), _second_order(torch, view_name, op_name)
        if isinstance(th, str) or isinstance(rg, str):
            if rg != th:
                bad.append((op_name, rg, th))
            continue
        for r, t in zip(rg, th):
            if (r is None) != (t is None) or (t is not None and not np.allclose(r, t)):
                bad.append(op_name)
                break
    assert bad == []


def test_retain_grad_of_base_and_other_views_follows_the_change_vs_torch():
    """retain_grad on the base and on another view: after a view is changed in place, their
    .grad is the gradient of their latest value (the retained node moves with the grad_fn)."""
    outs = []
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        a = y[:2]
        a.retain_grad()
        y[1:].mul_(m.tensor([3.0, 4.0]))
        ((y * m.tensor([1.0, 10.0, 100.0])).sum() + (a * a).sum()).backward()
        z = x * 2
        c = z[:2]
        c.retain_grad()
        with m.no_grad():
            z.mul_(2)
        (c * c).sum().backward()
        outs.append((y.grad.tolist(), a.grad.tolist(), c.grad.tolist(), x.grad.tolist()))
    assert outs[0] == outs[1]


def test_setitem_into_an_expanded_view_vs_torch():
    """e[0] = w on an expanded view writes the one row of memory all of e shares: the base's
    CopySlices covers that row only (found by the random chains)."""
    outs = []
    for m in (R, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor([4.0, 5.0, 6.0], requires_grad=True)
        y = x * 2
        e = y[None].expand(2, 3)
        e[0] = w
        d = y[None].expand(3, 3).diagonal()
        d.mul_(m.tensor([1.0, 2.0, 3.0]))
        ((y * m.tensor([1.0, 10.0, 100.0])).sum() + (e * e).sum()).backward()
        outs.append((y.tolist(), e.tolist(), _name(y.grad_fn), x.grad.tolist(),
                     w.grad.tolist()))
    assert outs[0] == outs[1]
