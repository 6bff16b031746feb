"""Fuzzer findings fixed by leafA (issue 7, stop 22): a leaf whose shape an in-place view op
(t_, transpose_, swapaxes_, squeeze_, unsqueeze_) changed under no_grad after a graph used
it.  PyTorch's AccumulateGrad steals or copies the gradient by strides (its layout
contract), so the leaf's strides must be PyTorch's (recorded by the in-place view ops) and
the gradient's modelled as PyTorch's (a flip's copy is contiguous); and the leaf's
AccumulateGrad, kept alive by a split/unbind output whose grad_fn PyTorch never replaces,
keeps the shape it was made with.  Each program must run alike in retrograd and PyTorch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .known_bugs import (  # noqa: E402
    ACCEPTED_DIFFERENCES, which_known,
    _sgn_zero_tensor as _sgn_zero_tensor_into_reshaped_leaf,  # (numC2: one sgn entry)
)
from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # cumsum's derivative of sgn's gradient: retrograd's is a flip view (negative strides),
    # judged against the (1, 3, 1) leaf's strides it looked foreign and was copied, which
    # cannot broadcast; PyTorch's flip copies contiguously, obeys, and is stolen (17211184)
    "sgn_of_cumsum_into_unsqueezed_leaf": """
v0 = T.tensor([[0.0, 0.0, -2.0]], dtype=T.float64, requires_grad=True)
v2 = v0.cumsum(dim=1)
v4 = T.sgn(v2)
with T.no_grad():
    v0.unsqueeze_(-1)
loss = (v4 * v4.detach().tanh()).sum()
loss.backward()
""",
    "sign_of_flip_into_unsqueezed_leaf": """
v0 = T.tensor([[0.5, 1.0, -2.0]], dtype=T.float64, requires_grad=True)
v2 = v0.flip(1).mul(2)
with T.no_grad():
    v0.unsqueeze_(-1)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward()
""",
    # a split output refused after its base changed keeps PyTorch's SplitBackward0, and
    # with it the leaf's AccumulateGrad of shape (2, 0): the new graph's (0, 2) gradient
    # does not fit it (probe seed 219); retrograd dropped the node and made a new one
    "split_keeps_leaf_accumulator": """
v0 = T.zeros((2, 0), dtype=T.float64, requires_grad=True)
v1 = v0.split(1, dim=0)[0]
with T.no_grad():
    v0.t_()
loss = (v0 * v0.detach().tanh()).sum()
loss.backward()
""",
    "unbind_keeps_leaf_accumulator": """
v0 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
v1 = v0.unbind(0)[1]
with T.no_grad():
    v0.t_()
loss = (v0 * v0.detach().tanh()).sum()
loss.backward()
""",
    # ... and what autograd.grad returns is reduced to that accumulator's shape (395)
    "chunk_keeps_grad_shape": """
v0 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v1 = v0.chunk(3, dim=0)[0]
with T.no_grad():
    v0.unsqueeze_(0)
loss = (v0 * v0.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # unsqueeze_(-2) of a (1, 0) leaf gives its new dimension stride 0 (size 0 times 1):
    # the (1, 0) gradient does not obey it and is copied into (1, 1, 0) (probe seed 542)
    "empty_leaf_unsqueezed_beside_empty_dim": """
v0 = T.zeros((1, 0), dtype=T.float64, requires_grad=True)
v3 = v0 * 2
with T.no_grad():
    v0.unsqueeze_(-2)
loss = (v0 * v0.detach().tanh()).sum()
loss.backward()
""",
    "empty_leaf_unsqueezed_inputs": """
v0 = T.zeros((1, 0, 0), dtype=T.float64, requires_grad=True)
v2 = T.ceil(v0).trunc()
with T.no_grad():
    v0.unsqueeze_(1)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward(inputs=[v0])
""",
    # two in-place view ops in a row: the second starts from the strides the first left
    "leaf_unsqueezed_then_transposed": """
v0 = T.tensor([[0.5, 1.0, -2.0]], dtype=T.float64, requires_grad=True)
v2 = v0.exp()
with T.no_grad():
    v0.unsqueeze_(0)
    v0.transpose_(0, 2)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward()
""",
    # under create_graph PyTorch never steals: the (1, 3) gradient is copied (CopyBackwards)
    # into the (1, 1, 3) leaf, and differentiates through the copy; retrograd kept (1, 3)
    "create_graph_copies_into_reshaped_leaf": """
v0 = T.tensor([[0.5, 1.0, -2.0]], dtype=T.float64, requires_grad=True)
v1 = v0 * 2
v2 = v1 * v1
with T.no_grad():
    v0.unsqueeze_(0)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward(create_graph=True)
v3 = v0.grad * 1
loss2 = (v3 * v3.detach().tanh()).sum()
loss2.backward()
""",
    "create_graph_into_reshaped_leaf_raises": """
v0 = T.tensor([[0.5, 1.0, -2.0]], dtype=T.float64, requires_grad=True)
v2 = v0.exp()
with T.no_grad():
    v0.unsqueeze_(-1)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward(create_graph=True)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_leafa(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


_FIRST = {
    "add": lambda v: v + 1, "cumsum": lambda v: v.cumsum(-1), "flip": lambda v: v.flip(-1),
    "mT": lambda v: v.mT, "sum_keepdim": lambda v: v.sum(-1, keepdim=True),
    "expand": lambda v: v.expand(2, *v.shape), "mul": lambda v: v * 2,
}


def _changes(ndim):
    out = [("t_", ())] if ndim <= 2 else []
    out += [("unsqueeze_", (d,)) for d in range(-ndim - 1, ndim + 1)]
    out += [("squeeze_", (d,)) for d in range(-ndim, ndim)]
    return out + [("transpose_", (0, ndim - 1))]


def _outcome(lib, shape, first, second, change, args):
    v0 = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).sub(1.5)
    v0.requires_grad_()
    y = getattr(_FIRST[first](v0), second)()
    with lib.no_grad():
        getattr(v0, change)(*args)
    try:
        (y * y.detach().tanh()).sum().backward()
    except RuntimeError:
        return "RuntimeError"
    return tuple(v0.grad.shape), np.asarray(v0.grad.detach()).round(9).tolist()


@pytest.mark.parametrize("second", ["sign", "round", "tanh"])
@pytest.mark.parametrize("first", sorted(_FIRST))
def test_reshaped_leaf_gets_pytorchs_grad(first, second):
    """Zero derivatives (sign, round: real zeros in PyTorch) and a smooth one, behind ops
    whose derivatives have different layouts, into a non-empty leaf reshaped in place
    every way: the .grad's shape and values, or the error class, as PyTorch's."""
    for shape in [(1, 3), (3, 1), (2, 3), (2, 1, 3)]:
        for change, args in _changes(len(shape)):
            want = _outcome(torch, shape, first, second, change, args)
            got = _outcome(retrograd, shape, first, second, change, args)
            assert got == want, (shape, first, second, change, args)


def test_leaf_strides_recorded_as_pytorchs():
    """The in-place view ops leave a leaf the strides PyTorch's has (NumPy's differ for
    length-1 and empty dimensions): unsqueeze_ inserts sizes[d] * strides[d]."""
    from retrograd.autograd.leaf_layout import _storage_of

    for shape, ops in [((1, 0), [("unsqueeze_", (-2,))]), ((2, 3), [("unsqueeze_", (1,))]),
                       ((2, 0, 3), [("transpose_", (0, 2))]),
                       ((1, 3), [("unsqueeze_", (0,)), ("transpose_", (0, 2)),
                                 ("squeeze_", (1,))])]:
        t, r = torch.zeros(shape), retrograd.zeros(shape)
        for name, args in ops:
            getattr(t, name)(*args)
            getattr(r, name)(*args)
        assert _storage_of(r, r._data)[:r.ndim] == list(t.stride()), (shape, ops)


_SGN_INTO_TRANSPOSED = """
v0 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
v2 = T.sgn(v0 + 1)
with T.no_grad():
    v0.t_()
loss = (v2 * v2.detach().tanh()).sum()
loss.backward()
"""


def test_sgn_zero_tensor_into_reshaped_leaf_is_accepted():
    """PyTorch's sgn gradient is a ZeroTensor, and copy_ from one zero-fills the (3, 2) leaf
    without a broadcast check; a real (2, 3) zero gradient (retrograd's, or PyTorch's sign)
    raises.  The one difference is that raise, and PyTorch's .grad is zeros."""
    prog = program_from_text(_SGN_INTO_TRANSPOSED)
    failure = compare(prog)
    assert failure is not None and failure.kind == "raise"
    assert which_known(prog, failure) == next(
        name for name, pred in ACCEPTED_DIFFERENCES
        if pred is _sgn_zero_tensor_into_reshaped_leaf)
    ns = {"T": torch}
    exec(_SGN_INTO_TRANSPOSED, ns)
    assert tuple(ns["v0"].grad.shape) == (3, 2) and not ns["v0"].grad.any()
    # refused: the same failure without sgn (numC2: the entry now covers any program whose
    # failure sgn -> sign removes, so an in-place view op is no longer required), or another
    # failure kind
    plain = program_from_text(_SGN_INTO_TRANSPOSED.replace("T.sgn(", "T.sign("))
    assert not _sgn_zero_tensor_into_reshaped_leaf(plain, failure)
    value = type(failure)("value", failure.op, failure.message)
    assert not _sgn_zero_tensor_into_reshaped_leaf(prog, value)


@pytest.mark.parametrize("reduce", ["sum(-1, keepdim=True)", "sum(0)", "sum()"])
def test_empty_leaf_reshaped_after_a_sum(reduce):
    """A sum's derivative is an expanded gradient (stride 0 where it broadcasts), which
    PyTorch's contract refuses beside a leaf dimension of another stride: the empty (1, 0)
    gradient is copied into the reshaped leaf (or raises), as PyTorch's."""
    for change in ["unsqueeze_(0)", "unsqueeze_(1)", "unsqueeze_(2)", "t_()", "squeeze_(0)"]:
        text = f"""
v0 = T.zeros((1, 0), dtype=T.float64, requires_grad=True)
v1 = v0.{reduce}.tanh()
with T.no_grad():
    v0.{change}
loss = (v1 * v1.detach().tanh()).sum()
loss.backward()
"""
        prog = program_from_text(text)
        failure = compare(prog)
        assert failure is None, reproducer(prog, failure)
