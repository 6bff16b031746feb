"""Result layouts that differed from PyTorch's (issue 7, stop 24, helper lay24).

einsum's result strides are PyTorch's (ops/einsum_layout.py): its result is a permuted view
of a ``bmm`` (or a ``mul``, a ``sum``, a permute), so ``'ij,jk->ki'`` can be non-contiguous
and a later ``contiguous()`` copies (CloneBackward0) in PyTorch only, or a pointwise op
carries the layout on (seeds 20047317, 20118121).  Checked against PyTorch over random
equations (one to three operands, sums, broadcast size-1 dims, ellipses, implicit outputs,
upper-case labels) and operand layouts.

slice_scatter, select_scatter and diagonal_scatter keep ``input``'s strides, as PyTorch's
``clone_preserve_strides`` (a diagonal view's gaps too; an expanded input is cloned
row-major): retrograd's were row-major, so contiguous() of one was a CloneBackward0 in
PyTorch only (seed 20093986)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")

import retrograd  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # 'ij,jk->ki' with j of size 1: PyTorch multiplies the (k, i) broadcast views, whose
    # TensorIterator layout is column-major for the output (strides (1, 2)); NumPy's einsum
    # gave a row-major result, so exp_ then contiguous() was ExpBackward0 in retrograd and
    # CloneBackward0 in PyTorch (seed 20047317)
    "einsum_outer_product_transposed": """
v1 = T.tensor([[-1.0], [-1.0]], dtype=T.float64)
v2 = T.tensor([[0.0, 0.0], [1.0, -1.0]], dtype=T.float64, requires_grad=True)
v3 = T.einsum('ij,jk->ki', v1, v2)
v4 = (v3.abs().add(0.5)).log1p()
v4.exp_()
v12 = v4.contiguous()
loss = v12.sum()
loss.backward()
""",
    # the same layout carried through lgamma into rms_norm, which then copies the input
    # (CloneBackward0 in PyTorch) where retrograd's row-major one did not (seed 20118121)
    "einsum_layout_into_rms_norm": """
v0 = T.tensor([[-1.0], [2.0], [-1.0]], dtype=T.float64)
v3 = T.tensor([[0.0, 1.0]], dtype=T.float64)
v4 = T.einsum('ij,jk->ki', v0, v3)
v6 = (v4.abs().add(0.5)).lgamma()
v8 = T.tensor([-3.0, 1.0, 0.0], dtype=T.float64, requires_grad=True)
v9 = T.nn.functional.rms_norm(v6, (3,), weight=v8, eps=0.1)
loss = v9.sum()
loss.backward()
""",
    # a contraction whose output lists the right operand's dims first: PyTorch swaps the
    # bmm's operands so its result is row-major in output order and view(-1) works; NumPy's
    # einsum gave strides (1, 2) and view raised in retrograd only
    "einsum_bmm_operands_swapped": """
v0 = T.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 1.5], [-2.0, 0.25, 1.0, 3.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([[1.0, -1.0], [0.5, 3.0], [-2.0, 2.0], [1.0, 0.0]], dtype=T.float64, requires_grad=True)
v2 = T.einsum('ij,jk->ki', v0, v1)
v3 = v2.view(-1)
loss = (v3 * v3).sum()
loss.backward()
""",  # noqa: E501
    # 'aij,bjk->kaib': the right-only dims (k, b) and the left-only ones (a, i) interleave:
    # no swap, the result is a permuted (non-contiguous) view, so reshape copies
    "einsum_bmm_permuted_then_reshape": """
v0 = T.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[0.5, -1.0], [2.0, 1.5], [-2.0, 0.25]]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([[[1.0, -1.0, 2.0], [0.5, 3.0, -2.0]]], dtype=T.float64, requires_grad=True)
v2 = T.einsum('aij,bjk->kaib', v0, v1)
v3 = v2.reshape(-1)
v4 = v2.contiguous()
loss = (v3 * v3).sum() + v4.sum()
loss.backward()
""",  # noqa: E501
    # slice_scatter of an empty src into a diagonal view (strides (4, 3)): PyTorch's result
    # keeps those strides, so contiguous() copies (CloneBackward0) (seed 20093986)
    "slice_scatter_keeps_diagonal_strides": """
v2 = T.tensor([[[-0.0, -0.0], [-1.0, -0.0]]], dtype=T.float64)
v8 = v2.diagonal(0, 1, 2)
v9 = T.zeros((0, 2), dtype=T.float64, requires_grad=True)
v10 = T.slice_scatter(v8, v9, dim=-2, start=4, end=4, step=2)
v11 = v10.contiguous()
""",
    # the same for a transposed input of select_scatter / diagonal_scatter: view(-1) of the
    # result is refused in both libraries (it keeps the transposed strides)
    "select_and_diagonal_scatter_keep_strides": """
v0 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
v2 = T.select_scatter(v0.t(), v1, 0, 1)
v3 = v2.contiguous()
v4 = T.diagonal_scatter(v0.t(), v1)
v5 = v4.view(-1)
v6 = v4.reshape(-1)
loss = (v3 * v3).sum() + v6.sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_lay24(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


_LABELS = "ijkAZ"


@st.composite
def equations(draw):
    """(equation, operand shapes, operand layouts: (permutation, steps)) for einsum."""
    size = {c: draw(st.sampled_from([0, 1, 2, 3])) for c in _LABELS}
    n_ell = draw(st.integers(0, 2))
    ell_sizes = [draw(st.sampled_from([1, 2, 3])) for _ in range(n_ell)]
    n_ops = draw(st.integers(1, 3))
    terms, shapes, layouts, with_ell = [], [], [], False
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from(_LABELS), unique=True, max_size=3))
        shape = [size[c] if draw(st.integers(0, 4)) else 1 for c in labels]  # broadcast
        term = "".join(labels)
        if n_ell and draw(st.booleans()):
            k = draw(st.integers(0, n_ell))  # this operand's ellipsis dims (right-aligned)
            at = draw(st.integers(0, len(labels)))
            dims = [s if draw(st.integers(0, 3)) else 1 for s in ell_sizes[n_ell - k:]]
            term = term[:at] + "..." + term[at:]
            shape = shape[:at] + dims + shape[at:]
            with_ell = True
        ndim = len(shape)
        layouts.append((tuple(draw(st.permutations(range(ndim)))),
                        tuple(draw(st.sampled_from([1, 1, 2])) for _ in range(ndim))))
        terms.append(term)
        shapes.append(tuple(shape))
    eq = ",".join(terms)
    if draw(st.booleans()):  # explicit output: some of the labels, in any order
        used = sorted(set("".join(terms)) - set("."))
        out = draw(st.permutations(used))[:draw(st.integers(0, len(used)))]
        out = "".join(out)
        if with_ell and draw(st.integers(0, 3)):
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        eq += "->" + out
    return eq, shapes, layouts


def _operand(lib, shape, layout, k, grad):
    """A tensor of ``shape`` laid out as a permuted view of a sliced (step) base."""
    perm, steps = layout
    inverse = np.argsort(perm)
    base = [shape[p] * steps[i] for i, p in enumerate(perm)]
    n = int(np.prod(base))
    x = ((lib.arange(n, dtype=lib.float64) * 0.37 + k) % 3 - 1).reshape(base)
    if grad:
        x.requires_grad_()
    x = x[tuple(slice(None, None, s) for s in steps)]
    return x.permute(tuple(int(i) for i in inverse))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(case=equations(), grad=st.booleans())
def test_einsum_strides_like_pytorch(case, grad):
    """retrograd's einsum result has PyTorch's strides (every dim's, size-1 dims too)."""
    eq, shapes, layouts = case
    want_ops = [_operand(torch, s, lay, k, grad) for k, (s, lay) in enumerate(zip(shapes, layouts))]
    try:
        want = torch.einsum(eq, *want_ops)
    except RuntimeError:
        return  # (an equation PyTorch refuses: the op's own tests cover the errors)
    got_ops = [_operand(retrograd, s, lay, k, grad)
               for k, (s, lay) in enumerate(zip(shapes, layouts))]
    got = retrograd.einsum(eq, *got_ops)
    assert tuple(got.shape) == tuple(want.shape), eq
    if not any(0 in s for s in shapes):
        # (an empty tensor's strides are all 0 in retrograd, as NumPy's, not PyTorch's: the
        # operands differ already, so only the values are compared then)
        assert [o.stride() for o in got_ops] == [o.stride() for o in want_ops]
        assert got.stride() == want.stride(), (eq, shapes, layouts)
        assert got.is_contiguous() == want.is_contiguous(), (eq, shapes, layouts)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                               atol=1e-12, err_msg=eq)


@st.composite
def scatter_inputs(draw):
    """(shape, layout, expanded dim or None) of a 2-d or 3-d input to the *_scatter ops."""
    ndim = draw(st.integers(2, 3))
    shape = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    layout = (tuple(draw(st.permutations(range(ndim)))),
              tuple(draw(st.sampled_from([1, 1, 2])) for _ in range(ndim)))
    return shape, layout, draw(st.one_of(st.none(), st.integers(0, ndim - 1)))


def _scatter_input(lib, case):
    shape, layout, expanded = case
    x = _operand(lib, shape, layout, 0, False)
    if expanded is not None:  # a stride-0 dim (an input that overlaps itself)
        x = x.narrow(expanded, 0, 1).expand(*shape)
    return x.diagonal(0, 0, 1) if len(shape) == 3 and shape[2] == 2 else x


_SCATTERS = {
    "slice_scatter": lambda lib, x: lib.slice_scatter(x, x[:, ::2].clone() + 1, 1, 0, None, 2),
    "select_scatter": lambda lib, x: lib.select_scatter(x, x.select(0, -1).clone() + 1, 0, -1),
    "diagonal_scatter": lambda lib, x: lib.diagonal_scatter(x, x.diagonal().clone() + 1),
}


@pytest.mark.parametrize("name", sorted(_SCATTERS))
@settings(max_examples=60, deadline=None, derandomize=True)
@given(case=scatter_inputs())
def test_scatter_keeps_input_strides_like_pytorch(case, name):
    want_x, got_x = _scatter_input(torch, case), _scatter_input(retrograd, case)
    assert got_x.stride() == want_x.stride()
    want, got = _SCATTERS[name](torch, want_x), _SCATTERS[name](retrograd, got_x)
    assert got.stride() == want.stride(), (name, case)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
