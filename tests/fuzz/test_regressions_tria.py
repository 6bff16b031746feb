"""Fuzzer findings fixed by triA (issue 7, the final 30-minute run's raise findings): each
program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions)."""

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # an EMPTY leaf squeeze_d under no_grad after use: PyTorch's AccumulateGrad steals the
    # (0, 1) gradient (its contiguous strides obey the leaf's), retrograd judged NumPy's
    # arbitrary strides of an empty array and raised copying it into (0,) (seed 17039749)
    "empty_leaf_squeezed_after_use": """
v1 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
v4 = v1.float()
with T.no_grad():
    v1.squeeze_(-1)
loss = (v4 * v4.detach().tanh()).sum()
loss.backward(inputs=[v1])
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_tria(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _grad_shape_or_error(lib, shape, change):
    """An empty float64 leaf, used through ``.float()``, then its shape changed in place
    under no_grad: the shape of its first .grad, or the error class."""
    leaf = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
    used = leaf.float()
    with lib.no_grad():
        change(leaf)
    try:
        (used * used.detach().tanh()).sum().backward(inputs=[leaf])
    except RuntimeError:
        return "RuntimeError"
    return tuple(leaf.grad.shape)


@pytest.mark.parametrize("shape,change", [
    ((0, 1), lambda t: t.squeeze_(-1)), ((1, 0), lambda t: t.squeeze_(0)),
    ((2, 0, 1), lambda t: t.squeeze_(-1)), ((0,), lambda t: t.unsqueeze_(0)),
    ((0, 2), lambda t: t.unsqueeze_(2)), ((2, 0), lambda t: t.t_()),
    ((0, 3), lambda t: t.t_()), ((2, 0, 3), lambda t: t.transpose_(0, 2)),
])
def test_empty_leaf_reshaped_in_place_like_pytorch(shape, change):
    """PyTorch's layout contract on an empty leaf whose shape squeeze_/unsqueeze_/t_
    changed: the gradient is stolen or copied (broadcast, or raising) as in PyTorch."""
    assert _grad_shape_or_error(retrograd, shape, change) == _grad_shape_or_error(
        torch, shape, change)


_EINSUM_LATE_REQUIRES_GRAD = """
v0 = T.tensor([[0.0]], dtype=T.float64)
v1 = T.tensor([[0.0]], dtype=T.float64, requires_grad=True)
v2 = T.einsum('ij,jk->ki', v0, v1)
v0.requires_grad_()
loss = (v0 * v0.detach().tanh()).sum() + (v2 * v2.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v1], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
"""


def test_einsum_operand_requiring_grad_after_is_accepted():
    """Seeds 17008240, 17043197: the one difference is the accepted raise at backward2
    (known_bugs._einsum_operand_requires_grad_after); PyTorch's second backward gives no
    leaf a gradient, so nothing numeric is lost."""
    from .known_bugs import which_known

    prog = program_from_text(_EINSUM_LATE_REQUIRES_GRAD)
    for st in prog.steps:  # (the op names the generator gives these steps)
        st.op = "einsum" if "einsum(" in st.text else \
            "backward2" if st.text.startswith("loss2.backward") else st.op
    failure = compare(prog)
    assert failure is not None and failure.op == "backward2"
    assert which_known(prog, failure) is not None, reproducer(prog, failure)
    ns = {"T": torch}
    exec(_EINSUM_LATE_REQUIRES_GRAD, ns)
    assert ns["v0"].grad is None and ns["v1"].grad is None
