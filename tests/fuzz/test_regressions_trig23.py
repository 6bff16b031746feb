"""Fuzzer findings handled by triG (issue 7, stop 23: stop 22's final-run seeds).

- 19570739: a leaf reshaped in place under no_grad whose gradient is SHARED (an add/add_
  sends one tensor to the leaf and to a node still waiting): PyTorch's AccumulateGrad steals
  a gradient only when its use count says no one else holds it, and otherwise copies it into
  the leaf's new layout, which broadcasts or raises.  retrograd stole it whenever the strides
  obeyed the layout contract.
"""

import pytest

torch = pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

# seed 19570739, shrunk: PyTorch raises "output with shape [] doesn't match the broadcast
# shape [1]" (its AccumulateGrad copies the shared [1] gradient into the [] leaf)
_SEED_19570739 = """
v0 = T.tensor([1.0], dtype=T.float64, requires_grad=True)
v1 = T.neg(v0)
v2 = T.tensor([1.0], dtype=T.float64, requires_grad=True)
v1.add_(v2)
with T.no_grad():
    v2.squeeze_(0)
loss = (v1 * v1.detach().tanh()).sum()
loss.backward()
"""


def _reshaped_leaf_program(make, reshape, shape, ending="loss.backward()", hook=None):
    data = repr([[1.0] * shape[1]] * shape[0]) if len(shape) == 2 else repr([1.0] * shape[0])
    lines = [f"v0 = T.tensor({data}, dtype=T.float64, requires_grad=True)",
             f"v2 = T.tensor({data}, dtype=T.float64, requires_grad=True)"]
    if hook:
        lines.append(f"h0 = v2.register_hook({hook})")
    lines += [make, "with T.no_grad():", f"    v2.{reshape}",
              "loss = (v1 * v1.detach().tanh()).sum()", ending]
    return "\n".join(lines)


# how the leaf's gradient is made: shared with a waiting node (add_, an add with a node
# beside it) or not (sub_'s negation, alpha's product, a unary op, an add of two leaves:
# the second leaf to run holds the gradient alone)
_MAKES = [
    "v1 = T.neg(v0)\nv1.add_(v2)",
    "v1 = T.neg(v0)\nv1.sub_(v2)",
    "v1 = T.neg(v0)\nv1.add_(v2, alpha=2)",
    "v1 = v2 + v0 * 0",
    "v1 = v0 + v2",
    "v1 = v2.clone()",
    "v1 = -v2",
]


@pytest.mark.parametrize("make", _MAKES)
@pytest.mark.parametrize("reshape, shape", [
    ("squeeze_(0)", (1,)), ("unsqueeze_(0)", (1,)), ("unsqueeze_(-1)", (1,)),
    ("squeeze_(0)", (1, 3)), ("squeeze_(1)", (3, 1)), ("unsqueeze_(0)", (2, 1)),
])
def test_reshaped_leaf_steals_only_an_unshared_gradient(make, reshape, shape):
    assert compare(program_from_text(_reshaped_leaf_program(make, reshape, shape))) is None


@pytest.mark.parametrize("make", [_MAKES[0], _MAKES[6]])
@pytest.mark.parametrize("ending", ["loss.backward(inputs=[v2])",
                                    "loss.backward(create_graph=True)"])
@pytest.mark.parametrize("hook", [None, "lambda g: g * 2", "lambda g: None",
                                  "lambda g: LOG.append(('v2', g.detach().clone()))"])
def test_reshaped_leaf_with_inputs_hooks_create_graph(make, ending, hook):
    """backward(inputs=) computes no gradient for the add_'s other edge, so the leaf's is
    held alone and stolen; under create_graph PyTorch always copies; a hook's result is
    fresh (and the engine's own holders, a capture or the last node's input, do not count)."""
    text = _reshaped_leaf_program(make, "squeeze_(0)", (1,), ending, hook)
    assert compare(program_from_text(text)) is None


def test_seed_19570739():
    from .generator import generate

    assert compare(program_from_text(_SEED_19570739)) is None
    assert compare(generate(19570739, torch, 14)) is None


# seed 19552727, shrunk: topk over a column holding two NaNs (sqrt of -1): which NaN comes
# first is unspecified (PyTorch [1, 0, 2], retrograd [0, 1, 2])
_SEED_19552727 = """
v0 = T.tensor([[1.0], [1.0], [-1.0], [-0.0]], dtype=T.float64)
v1 = v0.neg()
v1.sqrt_()
v5 = (v1.abs().add(0.5)).log10()
v11 = v5.topk(3, dim=-2)[1]
"""


def test_ties_between_nans_are_ties():
    from . import known_bugs as kb
    from .generator import generate
    from .runner import Failure

    for prog in (generate(19552727, torch, 14), program_from_text(_SEED_19552727)):
        failure = compare(prog)
        assert failure is not None and kb._ties(prog, failure)
    # refused: one NaN only (no tie), the same failure
    one_nan = program_from_text(_SEED_19552727.replace("[[1.0], [1.0]", "[[1.0], [-2.0]"))
    assert not kb._ties(one_nan, Failure("value", "sort", "v11: values differ"))
