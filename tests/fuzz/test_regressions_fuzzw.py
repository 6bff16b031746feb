"""Fuzzer findings fixed by fuzzW (issue 7, stop 21: a leaf's shape changed in place, a
backward that raises in one library only): each program must run alike in retrograd and
PyTorch (values, dtypes, shapes, grad_fn names, gradients, hook logs, exceptions)."""

import pytest

torch = pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # PyTorch registers a tensor's Python hooks as one dict on the grad_fn it had at its
    # first hook; an in-place view op (unsqueeze_, t_, transpose_, squeeze_...) sets a new
    # grad_fn without starting a new dict, so a hook registered after it still runs on the
    # old node and sees the old shape (seed 15005694)
    "hook_after_inplace_view_op": """
v0 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v1 = v0.cosh()
h2 = v1.register_hook(lambda g: g * 2)
v1.unsqueeze_(0)
h3 = v1.register_hook(lambda g: LOG.append(('v1', g.detach().clone())))
loss = (v0 * v0.detach().tanh()).sum() + (v1 * v1.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
""",
    # ... each of the family, and after a data-changing in-place op (mul_) a new dict goes
    # to the new node
    "hook_after_inplace_view_op_family": """
v0 = T.tensor([[-2.0, 1.0], [0.5, 3.0]], dtype=T.float64, requires_grad=True)
v1 = v0.cosh()
h1 = v1.register_hook(lambda g: LOG.append(('v1a', g.detach().clone())))
v1.t_()
h2 = v1.register_hook(lambda g: LOG.append(('v1b', g.detach().clone())))
v2 = v0.sin()
h3 = v2.register_hook(lambda g: LOG.append(('v2a', g.detach().clone())))
h3.remove()
v2.transpose_(0, 1)
v2.unsqueeze_(0)
v2.squeeze_(0)
h4 = v2.register_hook(lambda g: LOG.append(('v2b', g.detach().clone())))
v3 = v0.sinh()
h5 = v3.register_hook(lambda g: LOG.append(('v3a', g.detach().clone())))
v3.unsqueeze_(0)
v3.mul_(T.tensor([[[2.0, 3.0]]], dtype=T.float64))
h6 = v3.register_hook(lambda g: LOG.append(('v3b', g.detach().clone())))
v4 = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64)
loss = (v1 * v4).sum() + (v2 * v2.detach()).sum() + (v3 * v3.detach()).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzw(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
