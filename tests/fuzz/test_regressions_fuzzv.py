"""Fuzzer findings fixed by fuzzV (issue 7, stop 21: float32 rounding and matmul's signed
zero): each program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn
names, gradients, exceptions); and the accepted differences fuzzV added stay narrow."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # PyTorch's mm of an (m, 1) by a (1, n) matrix (m, n > 1) gives the exact products, so
    # 0.0 * -0.0 stays -0.0 and atan2 reads pi; NumPy's matmul added them to +0.0 (seed
    # 12588405)
    "mm_outer_signed_zero": """
v0 = T.tensor([[0.0], [-2.0], [-2.0]], dtype=T.float64)
v2 = T.tensor([[-0.0, -0.0]], dtype=T.float64)
v3 = v0 @ v2
v5 = (v0).atan2(v3)
""",
    # the same through a matmul PyTorch folds into one mm (a 2-D by a 3-D operand, the small
    # one requiring grad): 1 / -0.0 is -inf there (seed 12602253)
    "folded_mm_outer_signed_zero": """
v2 = T.tensor([[-1.0], [-0.0], [1.0]], dtype=T.float64, requires_grad=True)
v3 = v2.topk(1, dim=1).values
v4 = T.tensor([[[1.0]], [[0.0]]], dtype=T.float64)
v5 = T.matmul(v3, v4)
v8 = v5.detach()
v8.pow_(-1)
v8.exp_()
""",
    # instance_norm of instances of equal values: PyTorch's batch_norm kernel (instance_norm
    # runs it on (1, N * C, ...)) leaves an FMA residue, retrograd the exact 0; the accepted
    # entry's groups are the instances, not the channels (seed 15124570)
    "instance_norm_equal_values_residue": """
v2 = T.tensor([[[0.0, -0.0]], [[-0.0, -0.0]], [[1.0, 1.0]]], dtype=T.float32)
v4 = (v2) + 0.25
v6 = (v4.abs().add(0.5)) ** (v4)
v8 = T.nn.functional.instance_norm(v6)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzv(name):
    prog = program_from_text(CASES[name])
    for st in prog.steps:  # (the op names the generator gives: matmul's grad_fn is one node)
        st.op = "matmul" if "matmul(" in st.text or " @ " in st.text else \
            "normalization" if "_norm(" in st.text else st.op
    failure = compare(prog)
    if failure is not None:
        from .known_bugs import which_known

        assert which_known(prog, failure) is not None, reproducer(prog, failure)


_SHAPES = [((3, 1), (1, 2)), ((2, 1), (1, 1)), ((1, 1), (1, 4)), ((4, 2, 1), (1, 3)),
           ((2, 1), (4, 1, 3)), ((4, 2, 1), (4, 1, 3)), ((1, 2, 1), (4, 1, 3)),
           ((4, 2, 1), (1, 1, 3)), ((2, 4, 2, 1), (1, 3)), ((4, 1, 1), (1, 3)),
           ((3, 1), (2, 1, 1)), ((4, 2, 1), (1,)), ((1,), (4, 1, 3)), ((1,), (1, 3))]


@pytest.mark.parametrize("sa,sb", _SHAPES)
def test_matmul_inner_size_one_signed_zeros_like_pytorch(sa, sb):
    """Which zeros of a product with inner size 1 are -0.0 follows PyTorch for every rank,
    flag and dtype: exact products where PyTorch lands in one mm of more than one row and
    column, +0.0 where it lands in bmm, mv or dot."""
    rng = np.random.default_rng(0)
    for a_grad, b_grad, dt in itertools.product((False, True), (False, True),
                                                ("float32", "float64")):
        a = rng.choice([-0.0, 0.0, -1.0, 2.0], sa)
        b = rng.choice([-0.0, 0.0, 1.0, -3.0], sb)
        got = []
        for lib in (torch, retrograd):
            x = lib.tensor(a.tolist(), dtype=getattr(lib, dt), requires_grad=a_grad)
            y = lib.tensor(b.tolist(), dtype=getattr(lib, dt), requires_grad=b_grad)
            for grad_mode in (True, False):
                with lib.set_grad_enabled(grad_mode):
                    out = np.asarray(lib.matmul(x, y).detach().tolist())
                got.append((out.tolist(), np.signbit(out).tolist()))
        assert got[2:] == got[:2], (sa, sb, a_grad, b_grad, dt)
