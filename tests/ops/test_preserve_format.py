"""memory_format=preserve_format (issue 7): clone, the ``*_like`` factories, ``to``
copies and sort/argsort keep a non-overlapping and dense input's strides and lay out any
other input dense in its stride order, as PyTorch's empty_like; ``contiguous_format`` is
row-major, ``channels_last`` NHWC; reductions (sum, mean, amax...) are row-major.
Strides, is_contiguous(), values and gradients against PyTorch over random views
(transposed, permuted, sliced with steps, selected, expanded, 0-d)."""

from __future__ import annotations

import pickle

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

_VIEWS = [  # (name, view, the least ndim it needs)
    ("t", lambda x: x.transpose(0, -1), 2),
    ("permute", lambda x: x.permute(-1, *range(x.ndim - 1)), 2),
    ("step", lambda x: x[::2], 1),
    ("step_last", lambda x: x[..., 1::2], 1),
    ("select", lambda x: x[1], 1),
    ("expand", lambda x: x.unsqueeze(1).expand(x.shape[0], 2, *x.shape[1:]), 1),
    ("unsqueeze", lambda x: x.unsqueeze(-1), 0),
    ("slice", lambda x: x[1:], 1),
]


def _view(m, shape, plan, dtype="float64"):
    x = m.arange(float(np.prod(shape)), dtype=getattr(m, dtype)).reshape(shape)
    for i in plan:
        _, f, nd = _VIEWS[i]
        if x.ndim >= nd and (x.ndim == 0 or x.shape[0] > 1 or i in (5, 6)):
            x = f(x)
    return x


def _same_layout(r, t, rin, tin, make):
    """r (``make`` of rin) has t's (``make`` of tin) strides and contiguity.  Where the
    inputs' strides differ (only in size-1 dims: retrograd's views give them strides of
    their own, e.g. expand's 0, and they take part in PyTorch's sort), PyTorch's answer
    for an input with retrograd's strides (``empty_strided``) is the one to match.  Empty
    tensors are left out: NumPy gives empty arrays strides of its own (zeros) everywhere."""
    assert tuple(r.shape) == tuple(t.shape)
    if t.numel() == 0:
        return
    if rin.stride() != tin.stride():
        big = [d for d in range(tin.ndim) if tin.shape[d] > 1]
        assert [rin.stride(d) for d in big] == [tin.stride(d) for d in big]
        t = make(torch, torch.empty_strided(tuple(rin.shape), rin.stride(), dtype=tin.dtype))
    assert r.stride() == t.stride(), (rin.stride(), r.stride(), t.stride())
    assert r.is_contiguous() == t.is_contiguous()


_MAKERS = {
    "clone": lambda m, x: x.clone(),
    "clone_fn": lambda m, x: m.clone(x),
    "detach_clone": lambda m, x: x.detach().clone(),
    "clone_preserve": lambda m, x: x.clone(memory_format=m.preserve_format),
    "clone_contiguous": lambda m, x: x.clone(memory_format=m.contiguous_format),
    "contiguous": lambda m, x: x.contiguous(),
    "empty_like": lambda m, x: m.empty_like(x).zero_(),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x, dtype=m.float32),
    "full_like": lambda m, x: m.full_like(x, 3.0),
    "zeros_like_contiguous": lambda m, x: m.zeros_like(x, memory_format=m.contiguous_format),
    "to_float32": lambda m, x: x.to(m.float32),
    "to_copy": lambda m, x: x.to(m.float64, copy=True),
    "float": lambda m, x: x.float(),
    # sort's values and indices are allocated alike, by the same rule (argsort: sort's indices)
    "sort_values": lambda m, x: x.sort(stable=True)[0],
    "sort_indices_dim0": lambda m, x: x.sort(dim=0, stable=True)[1],
    "argsort_descending": lambda m, x: x.argsort(dim=0, descending=True, stable=True),
    "sort_desc_values": lambda m, x: m.sort(x, dim=-1, descending=True, stable=True).values,
    # reductions: PyTorch allocates a row-major result (size-1 kept dims' strides included)
    "sum_keep0": lambda m, x: x.sum(0, keepdim=True),
    "sum_last": lambda m, x: x.sum(-1),
    "mean_keep_last": lambda m, x: x.mean(-1, keepdim=True),
    "prod_keep0": lambda m, x: x.prod(0, keepdim=True),
    "amax_keep_last": lambda m, x: x.amax(-1, keepdim=True),
    "amin0": lambda m, x: x.amin(0),
    "logsumexp_keep0": lambda m, x: x.logsumexp(0, keepdim=True),
    "norm_keep_last": lambda m, x: x.norm(dim=-1, keepdim=True),
    "var_keep0": lambda m, x: x.var(0, keepdim=True, correction=0),
    "nansum_keep_last": lambda m, x: x.nansum(-1, keepdim=True),
    "any_keep0": lambda m, x: (x > 2).any(0, keepdim=True),
    "all_last": lambda m, x: (x > 2).all(-1),
    "count_nonzero0": lambda m, x: m.count_nonzero(x, 0),
}


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple),
                  plan=st.lists(st.integers(0, len(_VIEWS) - 1), max_size=4),
                  maker=st.sampled_from(sorted(_MAKERS)))
def test_layout_matches_torch(shape, plan, maker):
    r, t = _view(retrograd, shape, plan), _view(torch, shape, plan)
    try:
        to = _MAKERS[maker](torch, t)
    except (IndexError, RuntimeError) as e:  # (amax of an empty dim)
        with pytest.raises(type(e)):
            _MAKERS[maker](retrograd, r)
        return
    ro = _MAKERS[maker](retrograd, r)
    _same_layout(ro, to, r, t, _MAKERS[maker])
    np.testing.assert_allclose(ro.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    assert str(ro.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
                  plan=st.lists(st.integers(0, len(_VIEWS) - 1), max_size=4),
                  fn=st.sampled_from(["rand_like", "randn_like", "randint_like"]))
def test_random_like_layout(shape, plan, fn):
    r, t = _view(retrograd, shape, plan), _view(torch, shape, plan)
    args = (5,) if fn == "randint_like" else ()

    def make(m, x):
        return getattr(m, fn)(x, *args)

    _same_layout(make(retrograd, r), make(torch, t), r, t, make)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
                  plan=st.lists(st.integers(0, len(_VIEWS) - 1), max_size=4),
                  seed=st.integers(0, 2**31))
@hypothesis.example(shape=(3, 4), plan=[0], seed=0)  # the transposed matrix
def test_clone_grads_and_later_views(shape, plan, seed):
    """The clone's gradient, and what its layout decides later: a flatten (view or copy),
    then an in-place op and the clone's values seen through it (for inputs whose strides
    agree, size-1 dims' included: see _same_layout)."""
    hypothesis.assume(_view(retrograd, shape, plan).stride() == _view(torch, shape, plan).stride())
    outs = []
    for m in (retrograd, torch):
        x = _view(m, shape, plan).detach().requires_grad_()
        c = x.clone()
        f = c.flatten()
        g = m.tensor(np.random.default_rng(seed).standard_normal(tuple(c.shape)))
        (c * g).sum().backward()
        with m.no_grad():
            f.add_(1.0)
        outs.append((c.detach().numpy().copy(), x.grad.numpy().copy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])  # (+1 where flatten was a view)
    np.testing.assert_allclose(outs[0][1], outs[1][1])


def test_sort_of_transposed_grads_and_layout():
    """sort along each dim of a transposed tensor: values and indices transposed as the
    input, and the gradient (scattered back through the indices) as PyTorch's."""
    base = np.random.default_rng(0).standard_normal((3, 4, 5))
    for dim in (0, 1, 2):
        res = []
        for m in (retrograd, torch):
            x = m.tensor(base).requires_grad_()
            v, i = x.transpose(0, 2).sort(dim)
            (v * m.arange(float(v.numel())).reshape(v.shape)).sum().backward()
            res.append((v.stride(), i.stride(), v.detach().numpy(), x.grad.numpy()))
        assert res[0][:2] == res[1][:2] == ((1, 5, 20), (1, 5, 20))
        np.testing.assert_array_equal(res[0][2], res[1][2])
        np.testing.assert_array_equal(res[0][3], res[1][3])


def test_transposed_clone_examples():
    """The issue's example: the clone of a transposed matrix stays column-major."""
    for m in (retrograd, torch):
        x = m.arange(12.).reshape(3, 4).t()
        assert x.clone().stride() == (1, 4)
        assert not x.clone().is_contiguous()
        assert x.clone(memory_format=m.contiguous_format).stride() == (3, 1)
        assert x.contiguous().stride() == (3, 1)
        with pytest.raises(RuntimeError):
            x.clone().view(12)
        assert x.clone().t().view(12).tolist() == list(range(12))


def test_grad_fn_names():
    for m in (retrograd, torch):
        x = m.arange(6.).reshape(2, 3).t().requires_grad_()
        assert x.clone().grad_fn.name() == "CloneBackward0"
        assert x.contiguous().grad_fn.name() == "CloneBackward0"


@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4, 5)),
                                       ("channels_last_3d", (2, 3, 2, 4, 5))])
def test_channels_last(fmt, shape):
    r, t = retrograd.randn(*shape), torch.randn(*shape)
    assert r.clone(memory_format=getattr(retrograd, fmt)).stride() == \
        t.clone(memory_format=getattr(torch, fmt)).stride()
    assert retrograd.zeros_like(r, memory_format=getattr(retrograd, fmt)).stride() == \
        torch.zeros_like(t, memory_format=getattr(torch, fmt)).stride()
    with pytest.raises(RuntimeError, match="required rank"):
        retrograd.randn(2, 3).clone(memory_format=getattr(retrograd, fmt))


def test_memory_format_objects():
    for name in ("preserve_format", "contiguous_format", "channels_last", "channels_last_3d"):
        f = getattr(retrograd, name)
        # (torch's name with retrograd's prefix, as the dtypes print)
        assert repr(f) == repr(getattr(torch, name)).replace("torch.", "retrograd.")
        assert isinstance(f, retrograd.memory_format)
        assert pickle.loads(pickle.dumps(f)) is f


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 4, 3), (2, 3, 4), (1, 3), (3, 1),
                                   (2, 1, 3, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_factors_column_major(shape, mode):
    """linalg.qr's Q and R as LAPACK leaves them in PyTorch: each matrix column-major (R of
    mode 'r' too; its empty Q keeps NumPy's strides, as every empty array here)."""
    a = np.random.default_rng(0).standard_normal(shape)
    (rq, rr), (tq, tr) = retrograd.linalg.qr(retrograd.tensor(a), mode), \
        torch.linalg.qr(torch.tensor(a), mode)
    assert rr.stride() == tr.stride() and rr.is_contiguous() == tr.is_contiguous()
    if tq.numel():
        assert rq.stride() == tq.stride()
    np.testing.assert_allclose((rq @ rr).numpy() if tq.numel() else rr.abs().numpy(),
                               a if tq.numel() else tr.abs().numpy(), atol=1e-12)


@pytest.mark.parametrize("fmt,shape,perm", [
    ("channels_last", (2, 3, 4, 5), (0, 2, 3, 1)), ("channels_last", (2, 1, 4, 1), (0, 2, 3, 1)),
    ("channels_last", (2, 3, 4, 5), (0, 1, 2, 3)), ("channels_last_3d", (2, 3, 2, 4, 5),
                                                    (0, 2, 3, 4, 1))])
def test_contiguous_and_is_contiguous_in_a_format(fmt, shape, perm):
    """is_contiguous(memory_format) and contiguous(memory_format) of an NHWC-stored tensor
    (permuted back to NCHW) and of a row-major one, against PyTorch."""
    res = []
    for m in (retrograd, torch):
        f = getattr(m, fmt)
        back = [perm.index(d) for d in range(len(perm))]
        x = m.arange(float(np.prod(shape))).reshape([shape[d] for d in perm]).permute(*back)
        x.requires_grad_()
        c = x.contiguous(memory_format=f)
        res.append((x.is_contiguous(memory_format=f), x.is_contiguous(), c.stride(),
                    c is x, c.grad_fn.name() if c.grad_fn else None, c.detach().numpy()))
    assert res[0][:5] == res[1][:5]
    np.testing.assert_array_equal(res[0][5], res[1][5])
    with pytest.raises(RuntimeError, match="required rank 4"):
        retrograd.ones(2, 3).t().contiguous(memory_format=retrograd.channels_last)


_TO_CALLS = [
    lambda m, x: x.to(memory_format=m.channels_last),
    lambda m, x: x.to(m.float32, memory_format=m.channels_last),
    lambda m, x: x.to(memory_format=m.contiguous_format),
    lambda m, x: x.transpose(1, 2).to(memory_format=m.contiguous_format),  # (aliases)
    lambda m, x: x.transpose(1, 2).to(m.float32, memory_format=m.contiguous_format),
    lambda m, x: x.transpose(1, 2).to(m.float32),
    lambda m, x: x.to(memory_format=m.preserve_format, copy=True),
    lambda m, x: x.to(memory_format=m.channels_last).to(memory_format=m.channels_last),
]


@pytest.mark.parametrize("call", range(len(_TO_CALLS)))
def test_to_memory_format(call):
    """to(memory_format=...): x itself where x's suggested format is the one asked for (a
    transposed matrix passes as contiguous), else a ToCopyBackward0 copy in that format."""
    res = []
    for m in (retrograd, torch):
        x = m.arange(120.).reshape(2, 3, 4, 5).requires_grad_()
        y = _TO_CALLS[call](m, x)
        res.append((y.stride(), y is x, y.grad_fn.name() if y.grad_fn else None,
                    str(y.dtype).split(".")[-1], y.detach().numpy()))
    assert res[0][:4] == res[1][:4]
    np.testing.assert_array_equal(res[0][4], res[1][4])
