"""Derivative flags under create_graph, family by family of tests/fuzz/ops_table_more.py.

PyTorch computes a first derivative with one backward op that takes every tensor its
formula may read (``convolution_backward(grad, input, weight)``), so under create_graph the
derivative requires grad when any of them does, and a second backward through it runs (or
raises NotImplementedError where that op has no derivative).  For each family: float64
leaves, one call of the family's op, then ``autograd.grad(..., create_graph=True)`` and a
second backward; both libraries must agree on everything the fuzzer compares, and on
whether each first derivative requires grad (fuzz seeds 11001116, 11002610...: retrograd
raised "does not require grad" at the second backward where PyTorch ran).
"""

import warnings

import numpy as np
import pytest

pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import ops_table, ops_table_more  # noqa: E402
from .generator import Generator  # noqa: E402
from .known_bugs import which_known  # noqa: E402
from .program import Program, Step  # noqa: E402
from .runner import compare, execute, reproducer, torch  # noqa: E402

FAMILIES = [s for s in ops_table.TABLE if s.build.__module__ == ops_table_more.__name__]
DRAWS = 24  # per family (some draw nothing PyTorch runs): ~18 programs, a few forms of each


def _program(spec, seed):
    """Leaves, one ``spec`` call on one of them, and the create_graph ending; or None when
    the builder gave nothing that PyTorch runs."""
    g = Generator(seed, torch)
    for _ in range(g.rng.randint(1, 2)):
        shape = g._random_shape()
        while len(shape) < spec.min_ndim:  # (the op is tried on any leaf: all must fit)
            shape = g._random_shape()
        g.fresh(shape, "float64", requires_grad=g.rng.random() < 0.5)
    g.weights = [(spec, 1.0)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if not any(g.act_op() for _ in range(3)):
            return None
    vals = list(g.vals.values())
    leaves = [v.name for v in vals if v.is_leaf and v.requires_grad]
    terms = [v.name for v in vals if v.kind == "float" and v.requires_grad]
    if not leaves or not terms:
        return None
    loss = " + ".join(f"({t} * {t}.detach().tanh()).sum()" for t in terms)
    g.steps += [
        Step(f"loss = {loss}", "loss", "end", "loss"),
        Step(f"gs = T.autograd.grad(loss, [{', '.join(leaves)}], create_graph=True, "
             "allow_unused=True)", "autograd.grad", "end", "gs"),
        Step("loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)",
             "loss2", "end", "loss2"),
        Step("loss2.backward()", "backward2", "end"),
    ]
    return Program(seed, g.steps)


def _flags(ns):
    return [None if x is None else bool(x.requires_grad) for x in ns.get("gs") or ()]


@pytest.mark.parametrize("spec", FAMILIES, ids=lambda s: s.name)
def test_create_graph_derivative_flags_match_torch(spec):
    ran = 0
    for i in range(DRAWS):
        prog = _program(spec, 7_000_000 + 1000 * FAMILIES.index(spec) + i)
        if prog is None:
            continue
        ran += 1
        failure = compare(prog)
        if failure is not None:
            assert which_known(prog, failure), reproducer(prog, failure)
            continue
        want, got = _flags(execute(prog, torch)[1]), _flags(execute(prog, retrograd)[1])
        assert got == want, prog.source(f"first derivatives' requires_grad: torch {want}, "
                                        f"retrograd {got}")
    assert ran, f"no program of {spec.name} ran"
