"""Fuzzer findings about views, no_grad views, requires_grad_ flags and overlapping memory
(issue 7, fuzzA): each program must run alike in retrograd and PyTorch (values, dtypes,
shapes, flags, grad_fn names, gradients, exceptions), as in test_regressions.py."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # swapaxes of two size-1 dims is the same block with other strides: PyTorch's partial
    # overlap (it compares every stride), so an in-place op with it as operand raises
    "partial_overlap_size1_strides": """
v8 = T.tensor([[[[0.0]], [[1.0]], [[-1.0]]]], dtype=T.float64)
v9 = v8.swapaxes(0, -2)
try:
    v8.mul_(v9)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v1 = T.arange(3.0)
v2 = v1[None]
v2.mul_(v1.unsqueeze(0))
v3 = v1.view(3, 1)
v3.add_(v1[:, None])
""",
    # a view made to require grad itself, then its base: the view stays a leaf of its own
    # whose .grad backward fills (not a view whose gradient goes nowhere)
    "view_requires_grad_before_base": """
v1 = T.tensor([[-0.5]], dtype=T.float64)
v2 = v1.mT
v2.requires_grad_()
v1.requires_grad_()
loss = (v1 * v1.detach().tanh()).sum() + (v2 * v2.detach().tanh()).sum()
loss.backward()
""",
    # backward(inputs=): an edge that leads to no input gets no gradient (PyTorch's
    # should_compute_output), so a retain_grad on that branch stays None
    "inputs_unneeded_branch_retain_grad": """
v1 = T.tensor([[[-0.0]], [[1.0]], [[-1.0]]], dtype=T.float64, requires_grad=True)
with T.no_grad():
    v2 = v1.chunk(3, dim=-3)[1]
v3 = v1.addcdiv(v1, v1.abs().add(0.5), value=3)
v7 = T.asin(v2.tanh().mul(0.9))
v9 = (v7.abs().add(0.5)).log1p()
v9.retain_grad()
v11 = T.clamp_max(v9, v3)
loss = (v11 * v11.detach().tanh()).sum()
loss.backward(inputs=[v1, v2])
""",
    # retain_grad() on a view taken as a leaf, whose base then changed in place: PyTorch has
    # not re-derived its grad_fn yet (a leaf there), so retain_grad does nothing
    "retain_grad_on_rederived_view": """
v0 = T.zeros((1, 2), dtype=T.float64)
v1 = v0.sgn()
v2 = v1.tensor_split([0, 2], dim=1)[1]
v3 = v1[:, 1]
v5 = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
v1.sub_(v5)
v2.retain_grad()
loss = (v2 * v2.detach().tanh()).sum()
loss.backward()
v6 = T.zeros((1, 2), dtype=T.float64)
v7 = v6[:, 1]
v6.mul_(2)
v6.requires_grad_()
v7.retain_grad()
try:
    v7.mul_(2)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # a view taken of a view made to require grad (so it has a grad_fn) whose memory changes
    # while its base does not require grad: PyTorch re-derives it from that base
    # (AsStridedBackward0, its gradient going nowhere), or refuses it (an unbind piece's)
    "rederive_view_of_requires_grad_view": """
v1 = T.tensor([[[0]]], dtype=T.int64)
v2 = v1.exp2()
v6 = v2.squeeze()
v7 = v2.unbind(-3)[0]
v7.requires_grad_()
v8 = v7.ravel()
v6.pow_(2)
v11 = T.zeros((1, 1, 2), dtype=T.float64)
v12 = v11.squeeze(0)
v13 = v11[0]
v13.requires_grad_()
v14 = v13.ravel()
v15 = v13 * 2
v12.pow_(2)
loss = v14.sum() + v15.sum()
loss.backward()
""",
    "rederive_expanded_view_written_under_no_grad": """
v1 = T.tensor(0.0, dtype=T.float64)
v2 = v1[..., None]
v2.requires_grad_()
v3 = v2.expand(1, 4, 1, 3)
with T.no_grad():
    v3.zero_()
loss = v3.sum()
loss.backward()
""",
    # an in-place op on a view that requires grad (made to, or a view of one) whose base is
    # a leaf that does not: PyTorch's "a view of a leaf Variable" error
    "inplace_on_view_of_leaf_base": """
v2 = T.zeros((1, 1, 2), dtype=T.float64)
v7 = v2[0]
v7.requires_grad_()
v8 = v7.ravel()
try:
    v8.mul_(2)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v7.mul_(2)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v9 = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
v10 = v2[0, 0]
v10.mul_(v9)
loss = v10.sum() + v2.sum()
loss.backward()
""",
    # a view made under no_grad requires grad as its root base does (PyTorch's view
    # autograd meta): not a view made to require grad itself
    "no_grad_view_of_requires_grad_view": """
v0 = T.tensor([[0.0], [1.0], [0.0], [-1.0]], dtype=T.float64)
v1 = v0.narrow(-1, 1, 0)
v1.requires_grad_()
v2 = v0.narrow(-1, 0, 1)
v2.requires_grad_()
v3 = v0 * 1
v3.requires_grad_()
with T.no_grad():
    v5 = v1[3, 0:0:2]
    v6 = v2[3]
    v7 = v2.view(-1)
    v8 = v3[3, 0:1]
loss = (v2 * 2).sum()
loss.backward()
""",
    # a view adopted into its base's graph (taken before the base came to require grad)
    # counts as a leaf in PyTorch only until its grad_fn is read, also by an op that records
    # a graph on it: an in-place op on it then passes
    "adopted_view_used_in_op": """
v1 = T.tensor([1.0, 2.0], dtype=T.float64)
v3 = v1[0:1]
v8 = v1[1:2]
v4 = T.tensor(-0.5, dtype=T.float64, requires_grad=True)
v1.mul_(v4)
v6 = v3 * 2
v3.masked_fill_(v4 > 0, 0.5)
v9 = v8.view(1)
v8.mul_(3)
loss = (v6 * 2).sum() + (v1 * 2).sum() + v9.sum()
loss.backward()
""",
    # PyTorch's product is a view (a transpose/permute of its mm/bmm result) for these
    # operands: made under no_grad, an in-place change of it that records a graph raises
    "no_grad_product_view_inplace": """
v0 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v1 = T.tensor([[-0.0]], dtype=T.float64, requires_grad=True)
v3 = T.tensor([[[-0.5]]], dtype=T.float64)
v4 = T.tensor([[-1.0]], dtype=T.float64)
with T.set_grad_enabled(False):
    v5 = T.einsum('ij,jk->ki', v3[0].exp2(), v4)
    v6 = T.matmul(v1, v3)
    v7 = T.einsum('ij->j', v4)
    v8 = T.einsum('ij,jk->ik', v4, v4)
try:
    v5.copy_(v0)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v6.add_(v0)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v7.add_(v0)
v8.requires_grad_()
with T.no_grad():
    v8.mul_(2)
loss = (v7 * 2).sum() + (v8 * 3).sum()
loss.backward()
""",
    # requires_grad_() on a view of a leaf and then on the leaf: the view keeps its own
    # gradient, also in a second derivative (KNOWN_BUGS' _requires_grad_view_second_order)
    "view_requires_grad_second_order": """
v1 = T.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=T.float64)
v2 = v1[0:1]
v2.requires_grad_()
v1.requires_grad_()
v3 = v2.exp() * v1
loss = (v1 * v1.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum() + (v2 ** 3).sum()
gs = T.autograd.grad(loss, [v1, v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # an in-place op on an expanded tensor: PyTorch's overlap error comes before the
    # kernel's dtype check (floor_ of a bool) and the shape check
    "expanded_inplace_overlap_first": """
v0 = T.tensor(False, dtype=T.bool)
v1 = v0.broadcast_to((2, 4))
v2 = v1.permute(0, 1)
try:
    v2.floor_()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v3 = T.tensor([1, 2], dtype=T.int64).expand(2, 2)
try:
    v3.sqrt_()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v4 = T.tensor(1.0, dtype=T.float64).sinc().broadcast_to((2, 2, 3))
v4.copy_(v4)
v5 = T.tensor([1.0], dtype=T.float64, requires_grad=True)
v6 = (v5 * 2).expand(2, 3)
v6.copy_(v6)
loss = (v6 * 2).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
