"""What the op tests share: the :class:`Case` record, the constants the cases use, and the
checks every case of every table runs (:func:`case_checks`).

Each :class:`Case` names a call written once against a module ``m`` (``retrograd`` or
``torch``: retrograd spells the API as PyTorch does, so the one callable is both the
retrograd call and its PyTorch equivalent), the shapes of its differentiable inputs, the
domain those inputs are drawn from, and its non-tensor arguments.  For every case:

* float64 ``gradcheck`` and ``gradgradcheck`` (retrograd alone, no torch needed);
* a differential comparison with PyTorch 2.13: forward values in float32 and float64,
  output dtype, first-order gradients from ``.backward(gradient)`` with a random gradient,
  the grad_fn name, and the shape of the whole recorded graph (``next_functions``).

The tables live beside the op modules they test (``tests/ops/test_pointwise.py`` for
``ops/pointwise.py``...); ``test_registry.py`` fails for an op registered without a case.
"""

from __future__ import annotations

import contextlib
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

# ----------------------------------------------------------------------------- the cases


@dataclass
class Case:
    """One op call to check.

    ``fn(m, *inputs, **params)`` runs it with ``m`` = retrograd or torch.  ``shapes`` has
    one shape per differentiable input and ``domain`` (one name, or one per input) says where
    its values are drawn from.  ``xfail`` maps a check (``"gradcheck"``, ``"gradgradcheck"``,
    ``"values"``, ``"grads"``, ``"grad_fn"``, ``"structure"``) to the reason it is a known
    gap.
    """

    name: str
    fn: Callable
    shapes: tuple
    domain: str | tuple = "real"
    params: dict = field(default_factory=dict)
    gc: dict = field(default_factory=dict)  # gradcheck options (e.g. eps for a float32 cast)
    xfail: dict = field(default_factory=dict)

    def domains(self):
        return (self.domain,) * len(self.shapes) if isinstance(self.domain, str) else self.domain

    def arrays(self):
        """The case's float64 inputs, the same on every run (seeded by the case name)."""
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return [sample(rng, s, d) for s, d in zip(self.shapes, self.domains())]

    def call(self, m, *xs):
        return self.fn(m, *xs, **self.params)


def sample(rng, shape, domain):
    if domain == "real":
        return rng.standard_normal(shape)
    if domain == "pos":  # log, sqrt, the base of x ** y
        return rng.uniform(0.5, 2.0, shape)
    if domain == "nonzero":  # denominators, negative powers
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if domain == "unit":  # inside (-1, 1) away from the ends: asin, acos, tan
        return rng.uniform(-0.8, 0.8, shape)
    if domain == "spread":  # distinct values well apart: max/min have no near-ties
        n = int(np.prod(shape))
        return rng.permutation(np.arange(n, dtype=np.float64) * 0.7 - n * 0.3).reshape(shape)
    raise ValueError(domain)


BCAST = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((), (2, 3)), ((2, 3), ())]

# constants shared by retrograd and torch (never differentiated)
IDX = np.array([2, 0, 2, 1])  # repeated on purpose: their gradients must add up
IDX2 = np.array([[1, 1], [0, 2], [3, 3]])
MASK = np.array([[True, False, True, False], [False, False, True, True],
                 [True, True, False, False]])
COND = np.array([[True], [False], [True]])
TARGET = np.array([1, 0, 4, 4])

PROBS = np.array([[0.0, 1.0, 0.3], [0.5, 1.0, 0.0]])
WEIGHT = np.array([0.5, 2.0, 1.0, 1.5, 0.25])
TARGET5D = np.array([[[[0], [1]], [[2], [2]]], [[[1], [0]], [[0], [2]]]])  # (2, 2, 2, 1)
IGNORED = np.array([1, -100, 4, 0])


def nnf(m):
    """``m.nn.functional``, for m = retrograd or torch."""
    return m.nn.functional


def param(cases, check):
    """pytest params, with a strict xfail where ``check`` is a known gap of that case."""
    return [
        pytest.param(c, id=c.name, marks=pytest.mark.xfail(strict=True, reason=c.xfail[check]))
        if check in c.xfail else pytest.param(c, id=c.name)
        for c in cases
    ]


# ----------------------------------------------------------------------------- helpers

TOL = {"float32": {"rtol": 2e-5, "atol": 1e-5}, "float64": {"rtol": 1e-10, "atol": 1e-12}}


def leaves(m, arrays, dtype_name):
    dtype = getattr(m, dtype_name)
    return [m.tensor(a, dtype=dtype).requires_grad_(True) for a in arrays]


def dtype_name_of(t) -> str:
    return str(t.dtype).split(".")[-1]


def as_numpy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def outputs(out):
    return list(out) if isinstance(out, tuple) else [out]


def check_same(rg, th, tol, what):
    assert tuple(rg.shape) == tuple(th.shape), f"{what}: shape {rg.shape} vs torch {th.shape}"
    assert dtype_name_of(rg) == dtype_name_of(th), f"{what}: dtype {rg.dtype} vs torch {th.dtype}"
    np.testing.assert_allclose(as_numpy(rg), as_numpy(th), equal_nan=True, err_msg=what, **tol)


def run_both(case, torch, dtype_name):
    """Forward on both libraries from the same inputs; returns (leaves, outputs) per library."""
    arrays = case.arrays()
    rg_in = leaves(retrograd, arrays, dtype_name)
    th_in = leaves(torch, arrays, dtype_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's deprecation notices
        rg_out = case.call(retrograd, *rg_in)
        th_out = case.call(torch, *th_in)
    return rg_in, outputs(rg_out), th_in, outputs(th_out)


def structure(fn, lib):
    """A grad_fn and its next_functions as nested names, down to the leaves."""
    if fn is None:
        return None
    name = fn.name()
    if name == "torch::autograd::AccumulateGrad":
        return name
    return (name, tuple(structure(f, lib) for f, _ in fn.next_functions))


# ----------------------------------------------------------------------------- the checks


def case_checks(cases):
    """The six checks, each parametrized over ``cases``; a table module assigns them to its
    own ``test_*`` names so pytest collects them there.  A case's ``xfail`` maps a check's
    name (``"gradcheck"``, ``"values"``, ``"structure"``...) to the reason it is a known gap."""

    @pytest.mark.parametrize("case", param(cases, "gradcheck"))
    def test_gradcheck(case):
        xs = leaves(retrograd, case.arrays(), "float64")
        assert gradcheck(lambda *a: case.call(retrograd, *a), xs, **case.gc)

    @pytest.mark.parametrize("case", param(cases, "gradgradcheck"))
    def test_gradgradcheck(case):
        xs = leaves(retrograd, case.arrays(), "float64")
        assert gradgradcheck(lambda *a: case.call(retrograd, *a), xs, **case.gc)

    @pytest.mark.parametrize("dtype_name", ["float32", "float64"])
    @pytest.mark.parametrize("case", param(cases, "values"))
    def test_values_vs_torch(case, dtype_name, torch):
        _, rg_out, _, th_out = run_both(case, torch, dtype_name)
        assert len(rg_out) == len(th_out)
        for i, (r, t) in enumerate(zip(rg_out, th_out)):
            check_same(r, t, TOL[dtype_name], f"{case.name} output {i}")
            assert r.requires_grad == t.requires_grad, f"output {i} requires_grad"

    @pytest.mark.parametrize("dtype_name", ["float32", "float64"])
    @pytest.mark.parametrize("case", param(cases, "grads"))
    def test_grads_vs_torch(case, dtype_name, torch):
        rg_in, rg_out, th_in, th_out = run_both(case, torch, dtype_name)
        rng = np.random.default_rng(1 + zlib.crc32(case.name.encode()))
        rg_roots, rg_grads, th_roots, th_grads = [], [], [], []
        for r, t in zip(rg_out, th_out):
            if t.requires_grad:
                g = rng.standard_normal(tuple(t.shape))
                rg_roots.append(r)
                rg_grads.append(retrograd.tensor(g, dtype=r.dtype))
                th_roots.append(t)
                th_grads.append(torch.tensor(g, dtype=t.dtype))
        assert rg_roots, "no differentiable output"
        if len(rg_roots) == 1:
            rg_roots[0].backward(rg_grads[0])
            th_roots[0].backward(th_grads[0])
        else:
            retrograd.autograd.backward(rg_roots, rg_grads)
            torch.autograd.backward(th_roots, th_grads)
        for i, (r, t) in enumerate(zip(rg_in, th_in)):
            if t.grad is None:
                assert r.grad is None, f"input {i}: torch leaves .grad None"
            else:
                assert r.grad is not None, f"input {i}: no .grad"
                check_same(r.grad, t.grad, TOL[dtype_name], f"{case.name} grad of input {i}")

    @pytest.mark.parametrize("case", param(cases, "grad_fn"))
    def test_grad_fn_name_vs_torch(case, torch):
        _, rg_out, _, th_out = run_both(case, torch, "float64")
        for r, t in zip(rg_out, th_out):
            want = None if t.grad_fn is None else t.grad_fn.name()
            got = None if r.grad_fn is None else r.grad_fn.name()
            assert got == want

    @pytest.mark.parametrize("case", param(cases, "structure"))
    def test_graph_structure_vs_torch(case, torch):
        """The whole recorded graph (next_functions, recursively) has PyTorch's shape."""
        _, rg_out, _, th_out = run_both(case, torch, "float64")
        for r, t in zip(rg_out, th_out):
            assert structure(r.grad_fn, retrograd) == structure(t.grad_fn, torch)

    return (test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
            test_grad_fn_name_vs_torch, test_graph_structure_vs_torch)


#: the module behind each registry namespace
NAMESPACE_MODULES = {"torch": retrograd, "special": retrograd.special,
                     "linalg": retrograd.linalg, "nn.functional": retrograd.nn.functional}


def _spellings():
    """(entry, owner, name) for every public spelling of every registered op:
    ``retrograd.X``, ``retrograd.special.X``, ``linalg.X``, ``nn.functional.X``, ``Tensor.X``."""
    from retrograd.ops import registry
    from retrograd.tensor import Tensor

    for e in registry.entries():
        for ns, names in e.names.items():
            for n in names:
                yield e, NAMESPACE_MODULES[ns], n
        for m in e.methods:
            yield e, Tensor, m


@contextlib.contextmanager
def recording_outermost_calls():
    """Every public spelling wrapped: yields the set of keys of the ops the code inside calls
    directly (only the outermost call counts, not what an op calls inside).  The op tables'
    coverage tests (registry, forward AD, vmap rules) read which op a case exercises here."""
    from retrograd.tensor import Tensor

    hits: set = set()
    depth = [0]

    def wrap(fn, key):
        def call(*args, **kwargs):
            if depth[0] == 0:
                hits.add(key)
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1

        return call

    saved = []
    for e, owner, name in _spellings():
        original = owner.__dict__[name] if owner is Tensor else getattr(owner, name)
        new = (property(wrap(original.fget, e.key)) if isinstance(original, property)
               else wrap(original, e.key))
        saved.append((owner, name, original))
        setattr(owner, name, new)
    try:
        yield hits
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
