"""as_strided_scatter on views (issue 7): PyTorch's result is clone_preserve_strides(input)
with src copied into ``as_strided(size, stride, storage_offset)`` of it, so the positions
address the input's storage (its strides and storage offset), not its values in row-major
order, and the result keeps the input's strides.  Values, strides, offsets and the whole
storage against PyTorch over random views (transposed, sliced, stepped, diagonal, selected,
expanded); gradients by gradcheck and gradgradcheck (PyTorch's own formulas assume a
contiguous input at offset 0: where they differ its gradcheck fails, shown below)."""

from __future__ import annotations

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

_VIEWS = [
    ("t", lambda x: x.transpose(0, -1), 2),
    ("slice", lambda x: x[1:], 1),
    ("step", lambda x: x[::2], 1),
    ("diagonal", lambda x: x.diagonal(), 2),
    ("select", lambda x: x[1], 2),
    ("expand", lambda x: x.unsqueeze(0).expand(2, *x.shape), 0),
    ("permute", lambda x: x.permute(2, 0, 1), 3),
]


def _view(m, shape, plan, dtype="float64"):
    x = m.arange(float(np.prod(shape)), dtype=getattr(m, dtype)).reshape(shape)
    for i in plan:
        _, f, nd = _VIEWS[i]
        if x.ndim >= nd and (x.ndim == 0 or min(x.shape) > 1 or i == 5):
            x = f(x)
    return x


def _strides(t):
    """The strides of the dims over more than one element (size-1 dims' strides differ:
    retrograd's expand gives them 0, seen and left alone here)."""
    return tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))


def _storage_size(tx):
    """The elements of PyTorch's result storage: the input's own, or numel for an input
    that overlaps itself (cloned dense)."""
    if any(s == 0 and n > 1 for s, n in zip(tx.stride(), tx.shape)):
        return tx.numel()
    return tx.untyped_storage().nbytes() // tx.element_size()


def _window(rng, storage, default_offset):
    """A random written-to view (size, stride, offset or None) inside ``storage``
    elements whose elements are all at different places (PyTorch refuses a stride 0 over
    more than one element; which of two writes to one place lands is unspecified)."""
    for _ in range(20):
        k = rng.integers(0, 3)
        size = tuple(int(n) for n in rng.integers(1, 4, k))
        stride = tuple(int(s) if s or n == 1 else 1 for s, n in
                       zip(rng.integers(0, 4, k), size))
        span = sum((n - 1) * s for n, s in zip(size, stride)) + 1
        places = {sum(i * s for i, s in zip(ix, stride)) for ix in np.ndindex(*size)}
        if span <= storage and len(places) == int(np.prod(size)):
            if rng.random() < 0.3 and default_offset + span <= storage:
                return size, stride, None
            return size, stride, int(rng.integers(0, storage - span + 1))
    return (), (), 0


def _case(torch, shape, plan, seed):
    rng = np.random.default_rng(seed)
    tx = _view(torch, shape, plan)
    size, stride, offset = _window(rng, _storage_size(tx), tx.storage_offset())
    src = rng.standard_normal(size)
    return tx, src, size, stride, offset


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
                  plan=st.lists(st.integers(0, len(_VIEWS) - 1), max_size=3),
                  seed=st.integers(0, 2**31 - 1))
def test_values_strides_storage_vs_torch(shape, plan, seed):
    torch = pytest.importorskip("torch")
    tx, src, size, stride, offset = _case(torch, shape, plan, seed)
    rx = _view(retrograd, shape, plan)
    assert _strides(rx) == _strides(tx) and rx.storage_offset() == tx.storage_offset()
    tr = torch.as_strided_scatter(tx, torch.tensor(src), size, stride, offset)
    rr = retrograd.as_strided_scatter(rx, retrograd.tensor(src), size, stride, offset)
    np.testing.assert_array_equal(rr.numpy(), tr.numpy())
    assert _strides(rr) == _strides(tr) and rr.storage_offset() == tr.storage_offset()
    n = tr.untyped_storage().nbytes() // tr.element_size()  # the whole result storage
    np.testing.assert_array_equal(retrograd.as_strided(rr, (n,), (1,), 0).numpy(),
                                  torch.as_strided(tr, (n,), (1,), 0).numpy())
    assert _strides(rr.contiguous()) == _strides(tr.contiguous())


@hypothesis.settings(max_examples=25, deadline=None)
@hypothesis.given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
                  plan=st.lists(st.integers(0, len(_VIEWS) - 1), max_size=3),
                  seed=st.integers(0, 2**31 - 1))
def test_gradients_gradcheck(shape, plan, seed):
    """src's gradient on any view; the input's too where PyTorch allows it (contiguous)."""
    torch = pytest.importorskip("torch")
    tx, src, size, stride, offset = _case(torch, shape, plan, seed)
    rx = _view(retrograd, shape, plan).detach()
    s = retrograd.tensor(src, requires_grad=True)
    assert gradcheck(lambda s: retrograd.as_strided_scatter(rx, s, size, stride, offset), (s,))
    assert gradgradcheck(lambda s: retrograd.as_strided_scatter(rx, s, size, stride, offset),
                         (s,))
    if rx.is_contiguous():  # the input's gradient too, in a window of its own storage
        x = rx.clone().requires_grad_()  # (offset 0, numel elements)
        size, stride, offset = _window(np.random.default_rng(seed + 1), x.numel(), 0)
        s = retrograd.tensor(np.ones(size), requires_grad=True)

        def f(x, s):
            return retrograd.as_strided_scatter(x, s, size, stride, offset)
        assert gradcheck(f, (x, s)) and gradgradcheck(f, (x, s))


def test_sliced_contiguous_input_gradients():
    """An input at a storage offset (a contiguous slice of its leaf) requires grad: the
    positions count from the storage's start, the default offset is the input's."""
    leaf = retrograd.arange(12.0, dtype=retrograd.float64, requires_grad=True)
    s = retrograd.tensor([100.0, 200.0], dtype=retrograd.float64, requires_grad=True)
    for offset in (None, 3, 0, 10):
        def f(leaf, s, offset=offset):
            return retrograd.as_strided_scatter(leaf[2:8], s, (2,), (1,), offset)
        assert gradcheck(f, (leaf, s)) and gradgradcheck(f, (leaf, s))
    out = retrograd.as_strided_scatter(leaf[2:8], s, (2,), (1,), 3)
    assert out.tolist() == [2.0, 100.0, 200.0, 5.0, 6.0, 7.0]
    gl, gs = retrograd.autograd.grad(out, (leaf, s), retrograd.arange(6.0,
                                                                     dtype=retrograd.float64))
    assert gl.tolist() == [0, 0, 0, 0, 0, 3, 4, 5, 0, 0, 0, 0] and gs.tolist() == [1, 2]


def test_src_gradient_on_a_transposed_input_where_torch_is_wrong(torch):
    """PyTorch reads src's gradient as grad.contiguous().as_strided(...): right for a
    contiguous input at offset 0 only; on a transposed input its gradcheck fails, ours is
    the derivative (src lands in column 0, rows 1 and 2)."""
    g = np.arange(12.0).reshape(4, 3) * 10
    grads = {}
    for m in (retrograd, torch):
        x = m.arange(12.0, dtype=m.float64).reshape(3, 4).t()
        s = m.tensor([100.0, 200.0], dtype=m.float64, requires_grad=True)
        out = m.as_strided_scatter(x, s, (2,), (1,), 1)
        assert out[1:3, 0].tolist() == [100.0, 200.0]
        grads[m.__name__] = m.autograd.grad(out, s, m.tensor(g))[0].tolist()
        ok = m.autograd.gradcheck(lambda s, m=m, x=x: m.as_strided_scatter(x, s, (2,), (1,), 1),
                                  (s,),
                                  raise_exception=False)
        assert ok == (m is retrograd)
    assert grads["retrograd"] == [30.0, 60.0] and grads["torch"] == [10.0, 20.0]


def test_src_gradient_as_torch_on_contiguous_inputs(torch):
    rng = np.random.default_rng(0)
    for shape, size, stride, offset in [((3, 4), (2, 2), (4, 1), 5), ((6,), (3,), (2,), None),
                                        ((2, 3), (3, 2), (1, 3), 0), ((4,), (), (), 2)]:
        x, src, g = (rng.standard_normal(shape), rng.standard_normal(size),
                     rng.standard_normal(shape))
        got = []
        for m in (retrograd, torch):
            s = m.tensor(src, requires_grad=True)
            out = m.as_strided_scatter(m.tensor(x), s, size, stride, offset)
            got.append(m.autograd.grad(out, s, m.tensor(g))[0].numpy())
        np.testing.assert_array_equal(got[0], got[1])


ERRORS = {
    # PyTorch asserts a contiguous input when it requires grad, in any grad mode
    "requires_grad_transposed": lambda m: m.as_strided_scatter(
        m.zeros(4, 3).t().requires_grad_(), m.zeros(2), (2,), (1,), 0),
    "requires_grad_view": lambda m: m.as_strided_scatter(
        m.zeros(4, 3, requires_grad=True)[:, 1], m.zeros(2), (2,), (1,)),
    # copy_ into a view with a stride 0 over more than one element
    "overlapping_window": lambda m: m.as_strided_scatter(m.zeros(4), m.zeros(3), (3,), (0,)),
    # bounds are the storage's (12 elements), not the view's (4)
    "beyond_storage": lambda m: m.as_strided_scatter(m.arange(12.0)[:4], m.ones(2), (2,),
                                                     (1,), 11),
    # an expanded input's storage is its dense clone (6 elements)
    "expanded_beyond_clone": lambda m: m.as_strided_scatter(
        m.arange(3.0).expand(2, 3), m.ones(2), (2,), (1,), 5),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name, torch):
    for m in (retrograd, torch):
        with pytest.raises(RuntimeError):
            ERRORS[name](m)
    with retrograd.no_grad():
        if name.startswith("requires_grad"):
            with pytest.raises(RuntimeError):
                ERRORS[name](retrograd)


def test_within_storage_beyond_view_as_torch(torch):
    """Positions past the view but inside its storage are written to the storage only."""
    for m in (retrograd, torch):
        out = m.as_strided_scatter(m.arange(12.0)[:4], m.ones(2), (2,), (1,), 8)
        assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
        assert m.as_strided(out, (2,), (1,), 8).tolist() == [1.0, 1.0]


def test_as_strided_of_a_diagonal_reads_its_storage(torch):
    """retrograd's diagonal is a NumPy as_strided view (its base a DummyArray): as_strided
    of it addresses the matrix's storage, as PyTorch's."""
    got = [m.as_strided(m.arange(9.0).reshape(3, 3).diagonal(), (2, 2), (1, 3), 1).tolist()
           for m in (retrograd, torch)]
    assert got[0] == got[1]


def test_result_is_a_view_of_its_own_storage():
    """Writing to the result never reaches the input's storage."""
    base = retrograd.arange(12.0)
    out = retrograd.as_strided_scatter(base.reshape(3, 4).t(), retrograd.ones(2), (2,), (1,))
    out.add_(1.0)
    assert base.tolist() == list(map(float, range(12)))


def test_src_of_another_dtype_is_cast_as_torch(torch):
    """copy_ casts src to the input's dtype (retrograd used to refuse): values, the result's
    dtype, src's gradient in src's dtype; an integer result of a src requiring grad is
    refused as PyTorch's autograd does."""
    got = []
    for m in (retrograd, torch):
        s = m.tensor([1.5, -2.5], dtype=m.float64, requires_grad=True)
        out = m.as_strided_scatter(m.zeros(2, 4), s, (2,), (2,), 1)
        out.backward(m.arange(8.0).reshape(2, 4))
        got.append((out.tolist(), str(out.dtype).split(".")[-1], s.grad.tolist(),
                    str(s.grad.dtype).split(".")[-1],
                    m.as_strided_scatter(m.zeros(3, dtype=m.int64), m.tensor([1.7, -2.7]),
                                         (2,), (1,)).tolist(),
                    m.as_strided_scatter(m.zeros(2), m.tensor([True]), (1,), (1,)).tolist()))
        with pytest.raises(RuntimeError):
            m.as_strided_scatter(m.zeros(4, dtype=m.int64), m.ones(2, requires_grad=True),
                                 (2,), (1,))
    assert got[0] == got[1]


@pytest.mark.parametrize("in_dim, offset", [(0, 1), (0, None), (1, 2), (2, 0)])
def test_vmap_as_strided_offsets_per_sample_as_torch(torch, in_dim, offset):
    """torch.vmap's as_strided views sample i at the offset plus i batch strides; the loop
    fallback read sample 0's storage for every sample."""
    got = []
    for m in (retrograd, torch):
        xs = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4)
        out = m.func.vmap(lambda x, m=m: m.as_strided(x, (2, 2), (1, 2), offset),
                          in_dims=in_dim)(xs)
        got.append(out.tolist())
    assert got[0] == got[1]


def test_vmap_as_strided_scatter_refused_as_torch(torch):
    for m in (retrograd, torch):
        xs, ss = m.zeros(2, 3, 4), m.ones(2, 2)
        with pytest.raises(RuntimeError, match="batching rule"):
            m.func.vmap(lambda x, s, m=m: m.as_strided_scatter(x, s, (2,), (1,), 1))(xs, ss)


# ----------------------------------------------------------------- other storage readers
def _resized(m, case):
    b = m.arange(12.0).reshape(3, 4)
    views = {"t": b.t(), "slice": b[1:], "tail": b[2:], "diagonal": b.diagonal(),
             "expand": m.arange(3.0).expand(2, 3), "unfold": m.arange(8.0).unfold(0, 3, 2)}
    name, sizes, write = case
    y = views[name]
    y.resize_(*sizes)
    if write:
        y.fill_(-1.0)  # within its storage a resized tensor still shares it
    n = min(y.numel(), 12 - y.storage_offset())  # (grown places: PyTorch's are garbage)
    return (y.reshape(-1)[:n].tolist(), y.stride(), y.storage_offset(), b.tolist())


@pytest.mark.parametrize("case", [("t", (2, 3), True), ("t", (12,), False),
                                  ("slice", (5,), True), ("tail", (3, 2), False),
                                  ("diagonal", (4,), False), ("expand", (3,), False),
                                  ("unfold", (2, 2), True), ("t", (13,), False)],
                         ids=lambda c: f"{c[0]}-{c[1]}")
def test_resize_keeps_storage_and_offset_as_torch(case, torch):
    """resize_ keeps the tensor's storage and offset with row-major strides: its elements
    are the storage's in memory order (retrograd took a transposed tensor's row-major
    values and dropped the offset)."""
    assert _resized(retrograd, case) == _resized(torch, case)


def test_overlapping_input_keeps_its_strides_as_torch(torch):
    """An input whose elements share places without a stride 0 (PyTorch's TooHard overlap)
    is not cloned dense: its storage and strides are kept, and src's gradient sums over the
    outputs that read one place."""
    got = []
    for m in (retrograd, torch):
        x = m.arange(6.0, dtype=m.float64).as_strided((3, 2), (1, 1))
        out = m.as_strided_scatter(x, m.tensor([-1.0, -2.0], dtype=m.float64), (2,), (2,), 1)
        got.append((out.tolist(), out.stride(), out.storage_offset()))
    assert got[0] == got[1]
    x = retrograd.arange(6.0, dtype=retrograd.float64).as_strided((3, 2), (1, 1))
    s = retrograd.tensor([-1.0, -2.0], dtype=retrograd.float64, requires_grad=True)
    out = retrograd.as_strided_scatter(x, s, (2,), (2,), 1)
    assert retrograd.autograd.grad(out.sum(), s)[0].tolist() == [2.0, 1.0]
    assert gradgradcheck(lambda s: retrograd.as_strided_scatter(x, s, (2,), (2,), 1), (s,))


def test_forward_mode_on_a_transposed_input(torch):
    """The op is linear: with x's tangent 0 the tangent is src's tangent scattered into
    zeros laid out as x.  PyTorch scatters it into a contiguous zero tangent instead (its
    tangent puts src's tangent where its primal does not put src)."""
    def f(m, s):
        x = m.arange(12.0, dtype=m.float64).reshape(3, 4).t()
        return m.as_strided_scatter(x, s, (2, 2), (1, 4), 1)

    s = retrograd.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=retrograd.float64)
    ts = retrograd.tensor([[10.0, 20.0], [30.0, 40.0]], dtype=retrograd.float64)
    out, tan = retrograd.func.jvp(lambda s: f(retrograd, s), (s,), (ts,))
    zeros = retrograd.zeros(3, 4, dtype=retrograd.float64).t()
    want = retrograd.as_strided_scatter(zeros, ts, (2, 2), (1, 4), 1)
    assert tan.tolist() == want.tolist() and tan.tolist() == (f(retrograd, s + ts) - out).tolist()
    t_out, t_tan = torch.func.jvp(lambda s: f(torch, s), (torch.tensor(s.numpy()),),
                                  (torch.tensor(ts.numpy()),))
    assert t_out.tolist() == out.tolist() and t_tan.tolist() != tan.tolist()


@pytest.mark.parametrize("name", ["select_scatter", "slice_scatter", "diagonal_scatter",
                                  "as_strided_scatter"])
def test_integer_result_of_src_requiring_grad_refused_as_torch(name, torch):
    """The *_scatter family casts src to the input's dtype; an integer result of a src that
    requires grad is refused by PyTorch's autograd (retrograd returned it); under no_grad
    both compute it."""
    calls = {"select_scatter": lambda m, x, s: m.select_scatter(x, s[0], 0, 0),
             "slice_scatter": lambda m, x, s: m.slice_scatter(x, s, 0, 0, 1),
             "diagonal_scatter": lambda m, x, s: m.diagonal_scatter(x, s[0, :2]),
             "as_strided_scatter": lambda m, x, s: m.as_strided_scatter(x, s, (1, 3), (3, 1))}
    got = []
    for m in (retrograd, torch):
        x, s = m.zeros(2, 3, dtype=m.int64), m.full((1, 3), 1.7, requires_grad=True)
        with pytest.raises(RuntimeError, match="Autograd not support dtype"):
            calls[name](m, x, s)
        with m.no_grad():
            got.append(calls[name](m, x, s).tolist())
    assert got[0] == got[1]


@pytest.mark.parametrize("view", ["expand", "windows", "t"])
def test_as_strided_gradient_of_an_input_sharing_places_as_torch(view, torch):
    """as_strided of an input whose elements share storage places (expanded, overlapping
    windows): each place's gradient is split among its readers (PyTorch's as_strided_backward
    divides by their count), so the input's own backward adds it up once; retrograd's was
    counted once per reader (twice for an expand of 2)."""
    views = {"expand": lambda x: x[0].expand(2, 4),
             "windows": lambda x: x.reshape(-1).as_strided((3, 4), (2, 1)),
             "t": lambda x: x.t()}
    got = []
    for m in (retrograd, torch):
        leaf = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_()
        out = m.as_strided(views[view](leaf * 1), (2, 2), (1, 1), 1)
        out.backward(m.arange(4.0, dtype=m.float64).reshape(2, 2) + 1)
        got.append(leaf.grad.tolist())
    assert got[0] == got[1]
    leaf = retrograd.arange(12.0, dtype=retrograd.float64).reshape(3, 4).requires_grad_()
    # (places inside the input's view only: beyond it no backward can reach the storage)
    assert gradcheck(lambda x: retrograd.as_strided(views[view](x * 1), (2, 2), (1, 1), 1),
                     (leaf,))
    assert gradgradcheck(lambda x: retrograd.as_strided(views[view](x * 1), (2, 2), (1, 1), 1),
                         (leaf,))
