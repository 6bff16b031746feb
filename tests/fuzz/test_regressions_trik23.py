"""Fuzzer findings handled by triK (issue 7, stop 23: raise seeds 19619582, 19670971,
19671202): fixed ones are programs that must run alike in retrograd and PyTorch, accepted
ones test that their predicate matches the seed and refuses a variant."""

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # a non-leaf squeezed in place under no_grad keeps the grad_fn (and shape) it had; the
    # matmul's gradient for it, reduced by PyTorch to its new shape (0,), does not fit that
    # grad_fn's (1, 0): PyTorch raises 'invalid gradient', retrograd summed its (1, 0)
    # gradient straight to the old shape (seed 19619582)
    "matmul_of_an_operand_squeezed_under_no_grad": """
v1 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
v2 = v1.mT
v3 = v2.masked_fill(v2 > 0, 3)
with T.no_grad():
    v3.squeeze_(-2)
v7 = T.zeros((1, 0, 1), dtype=T.float64, requires_grad=True)
v8 = v3 @ v7
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
loss.backward(inputs=[v1, v7])
""",
    # einsum 'ij,jk->j': PyTorch sums the first operand over i (in it alone) before the
    # product, which saves that sum, a fresh tensor; a later in-place change through an alias
    # of the operand is then no error there (seed 19671202)
    "einsum_operand_summed_first_changed_later": """
v0 = T.tensor([[-1.0], [1.0]], dtype=T.float64)
v1 = v0.trunc()
v2 = v1.detach()
v3 = v1.tensor_split(3, dim=-1)[0]
v5 = T.tensor([[-0.0]], dtype=T.float64, requires_grad=True)
v6 = T.einsum('ij,jk->j', v2, v5)
v3.pow_(3)
loss = (v6 * v6.detach().tanh()).sum()
loss.backward()
""",
    # PyTorch's solve_triangular result is column-major, an (m, 1) one with strides (1, m);
    # kron's product of it follows that layout, and kron's closing view of the product then
    # fails in PyTorch; retrograd's (m, 1) result had NumPy's strides (1, 1) and kron
    # reshaped any layout (seed 19670971)
    "kron_of_a_solve_triangular_result": """
v0 = T.tensor(1.0, dtype=T.float64)
v4 = v0.sinh()
v7 = T.tensor([[-1.0], [-1.0]], dtype=T.float64)
v5 = (v4 + 3 * T.eye(2, dtype=v4.dtype)).triu()
v8 = T.linalg.solve_triangular(v5, v7, upper=True, unitriangular=False)
v11 = T.tensor([[1.0], [1.0]], dtype=T.float64)
v12 = T.kron(v8, v11)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_trik23(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _matmul_after_shape_change(lib, a_shape, change, b_shape):
    x = lib.ones(a_shape, dtype=lib.float64, requires_grad=True)
    a = x * 2
    with lib.no_grad():
        getattr(a, change[0])(*change[1:])
    b = lib.ones(b_shape, dtype=lib.float64, requires_grad=True)
    try:
        (a @ b).sum().backward()
    except RuntimeError as e:
        assert "returned an invalid gradient" in str(e)
        return "raised"
    return tuple(x.grad.shape), tuple(b.grad.shape), x.grad.sum().item()


@pytest.mark.parametrize("a_shape, change, b_shape", [
    ((1, 2, 3), ("squeeze_", 0), (4, 3, 5)),   # PyTorch raises (the (2, 3) gradient)
    ((2, 3), ("unsqueeze_", 0), (4, 3, 5)),    # a (1, 2, 3) gradient sums to (2, 3)
    ((1, 3), ("squeeze_", 0), (4, 3, 5)),      # 1-D @ 3-D: raises
    ((3,), ("unsqueeze_", 0), (4, 3, 5)),
    ((2, 3), ("unsqueeze_", 0), (3, 5)),
    ((1, 3, 2), ("transpose_", 1, 2), (4, 3, 5)),
])
def test_matmul_gradient_checked_against_the_grad_fn_shape(a_shape, change, b_shape):
    # the matmul's gradients take the operands' shapes at the product, as PyTorch's, and the
    # engine then checks them against the operand's (older) grad_fn shape
    ours = _matmul_after_shape_change(retrograd, a_shape, change, b_shape)
    theirs = _matmul_after_shape_change(torch, a_shape, change, b_shape)
    assert ours == theirs


def _einsum_then_change(lib, eq, sa, sb, changed, grad_of_changed):
    ops = [lib.arange(1, 1 + _size(sa), dtype=lib.float64).reshape(sa),
           lib.arange(2, 2 + _size(sb), dtype=lib.float64).reshape(sb)]
    leaves = [o.requires_grad_() if i != changed or grad_of_changed else o
              for i, o in enumerate(ops)]
    used = [o * 1 if o.requires_grad else o for o in leaves]
    y = lib.einsum(eq, *used)
    used[changed].mul_(2)
    wrt = [o for o in leaves if o.requires_grad]
    try:
        grads = lib.autograd.grad(y.pow(2).sum(), wrt, create_graph=True)
        second = lib.autograd.grad(sum(g.sum() for g in grads), wrt, allow_unused=True)
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        return "raised"
    return [g.tolist() for g in grads], [None if g is None else g.tolist() for g in second]


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


@pytest.mark.parametrize("eq, sa, sb", [
    ("ij,jk->j", (2, 1), (1, 1)),    # i in the first alone: summed first
    ("ij,jk->j", (1, 3), (3, 2)),    # i of size 1: squeezed (a view), saved as is
    ("ij,jk->j", (2, 3), (3, 2)),
    ("ij,jk->ik", (2, 3), (3, 2)),   # no label in one operand alone: bmm of views
    ("ij,jk->jk", (2, 3), (3, 2)),
    ("ij,jk->ij", (2, 3), (3, 2)),
    ("ij,jk->", (2, 3), (3, 2)),
    ("ijk,jk->j", (2, 3, 4), (3, 4)),
    ("ij,k->jk", (2, 3), (4,)),
])
@pytest.mark.parametrize("changed", [0, 1])
@pytest.mark.parametrize("grad_of_changed", [False, True])
def test_einsum_saves_what_pytorch_saves(eq, sa, sb, changed, grad_of_changed):
    # which operands PyTorch's einsum saves as fresh sums (no version error after an
    # in-place change, old values in the backward, double backward through the sum)
    args = (eq, sa, sb, changed, grad_of_changed)
    assert _einsum_then_change(retrograd, *args) == _einsum_then_change(torch, *args)


def _kron_of(lib, make, x_shape, y_shape, x_first):
    x = make(lib, x_shape)
    y = lib.arange(1, 1 + _size(y_shape), dtype=lib.float64).reshape(y_shape)
    try:
        k = lib.kron(x, y) if x_first else lib.kron(y, x)
    except RuntimeError as e:
        assert "view size is not compatible" in str(e)
        return "raised"
    return k.tolist()


def _solved(lib, shape):
    a = (lib.eye(shape[-2], dtype=lib.float64) * 3).triu() + 1
    return lib.linalg.solve_triangular(a.triu(), lib.ones(shape, dtype=lib.float64), upper=True)


def _transposed(lib, shape):
    return lib.arange(1, 1 + _size(shape), dtype=lib.float64).reshape(shape[::-1]).mT \
        if len(shape) == 2 else lib.ones(shape, dtype=lib.float64)


@pytest.mark.parametrize("make", [_solved, _transposed])
@pytest.mark.parametrize("x_shape", [(2, 1), (2, 3), (4, 2, 1), (1, 2, 1), (2, 2, 3)])
@pytest.mark.parametrize("y_shape", [(2, 1), (1, 2), (3,), (1,)])
@pytest.mark.parametrize("x_first", [True, False])
def test_kron_refuses_the_layouts_pytorch_refuses(make, x_shape, y_shape, x_first):
    args = (make, x_shape, y_shape, x_first)
    assert _kron_of(retrograd, *args) == _kron_of(torch, *args)


@pytest.mark.parametrize("shape", [(2, 1), (1, 2), (2, 3), (3, 2, 1), (2, 1, 1)])
def test_solve_triangular_result_strides(shape):
    assert _solved(retrograd, shape).stride() == _solved(torch, shape).stride()


@pytest.mark.parametrize("x_shape", [(0,), (0, 2), (2, 0), (), (1,), (2, 3)])
@pytest.mark.parametrize("y_shape", [(0,), (2, 0), (), (3,)])
@pytest.mark.parametrize("transposed", [False, True])
def test_kron_of_empty_and_0d_operands_views_as_pytorch(x_shape, y_shape, transposed):
    """PyTorch's computeStride views a 0-d tensor as any one-element shape and an empty one
    as any empty shape (contiguous strides); kron's view raised for them (final run's seed
    20007959: kron of a (0,) and a 0-d tensor)."""
    def run(lib):
        x = lib.arange(float(max(1, int(torch.tensor(x_shape).prod())))).reshape(x_shape) \
            if 0 not in x_shape else lib.zeros(x_shape)
        x = x.t() if transposed and x.dim() == 2 else x
        y = lib.full(y_shape, -2.0)
        try:
            r = lib.kron(x, y)
        except RuntimeError:
            return "RuntimeError"
        return tuple(r.shape), r.numpy().tolist()
    assert run(retrograd) == run(torch)
