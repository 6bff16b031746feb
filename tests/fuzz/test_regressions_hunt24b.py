"""Fuzzer findings handled by hunt24b (issue 7, stop 24: seeds 20400000..20457447).

20427011: soft_margin_loss computed log(1 + exp(-y x)) stably, 1960 where PyTorch's kernel,
log1p(exp(-x y)), overflows to inf; its derivative, -y z / (1 + z) with z = exp(-y x), is nan
there in PyTorch (sigmoid's 1 in retrograd).

20402816: det of a matrix with a nan entry and a zero pivot was NumPy's 0, PyTorch's nan.

20412810: a view's retain_grad moved eagerly to its re-derived grad_fn; PyTorch moves it when
it reads that grad_fn."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import Failure, compare, reproducer  # noqa: E402

CASES = {
    # (seed 20427011) expm1 of expm1 of 2.15 is about 1960: exp(1960) overflows
    "soft_margin_loss_overflow": """
v0 = T.tensor([[-2.02, 0.31], [0.5, 2.15], [1.01, 0.4]], dtype=T.float64)
v1 = T.tensor(3, dtype=T.int64)
v0.expm1_()
v5 = (v1).maximum(v0)
v6 = v5.expm1()
v7 = T.tensor([[0.0], [-1.0], [0.0]], dtype=T.float64)
v8 = T.nn.functional.soft_margin_loss(v6, (v7).sign())
""",
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_soft_margin_loss_overflow_like_pytorch(dtype, reduction):
    """exp(-y x) past its overflow: the loss inf, the gradient nan (first order and under
    create_graph), finite elements unchanged."""
    x = [99.0, 1960.0, 2.0, -3.0, 0.5]
    y = [-1.0, -1.0, 1.0, 0.0, 1.0]
    out = []
    for lib in (retrograd, torch):
        dt = getattr(lib, dtype)
        got = []
        for create_graph in (False, True):
            X = lib.tensor(x, dtype=dt, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                loss = lib.nn.functional.soft_margin_loss(X, lib.tensor(y, dtype=dt),
                                                          reduction=reduction)
                (g,) = lib.autograd.grad(loss.sum(), [X], create_graph=create_graph)
            got += [loss.detach().numpy(), g.detach().numpy()]
        out.append(got)
    for r, t in zip(*out):
        np.testing.assert_allclose(r, t, rtol=1e-6, atol=0)


# (seed 20402816) det of a matrix with a nan entry and a zero first column: NumPy's det
# stops at the zero pivot and returns 0, PyTorch's LU product is nan; its gradient is
# PyTorch's LU solve (inf and nan), not inv's LinAlgError
CASES["det_nan_entry_zero_pivot"] = """
v2 = T.tensor([[0.0, -0.03], [0.0, 1.97]], dtype=T.float64, requires_grad=True)
v4 = v2.float()
v4.sqrt_()
v6 = T.linalg.det(v4)
loss = (v4 * v4.detach().tanh()).sum() + (v6 * v6.detach().tanh()).sum()
loss.backward()
"""

_NAN, _INF = float("nan"), float("inf")
_NONFINITE = [
    [[0.0, _NAN], [0.0, 1.4]],
    [[_NAN, 1.0], [2.0, 3.0]],
    [[1.0, _INF], [2.0, 3.0]],
    [[0.0, _INF], [0.0, 1.0]],
    [[_INF, _INF], [1.0, 1.0]],
    [[0.0, 1.0, 2.0], [0.0, _NAN, 1.0], [1.0, 1.0, 1.0]],
    [[2.0, 1.0, 0.0], [4.0, _NAN, 1.0], [1.0, 1.0, _INF]],
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("i", range(len(_NONFINITE)))
def test_det_of_a_nonfinite_matrix_like_pytorch(dtype, i):
    """det of a matrix with an inf or nan entry, alone and batched with a regular one, and
    its first derivative: PyTorch's values (nan where the LU elimination meets one)."""
    a = np.array(_NONFINITE[i])
    batch = np.stack([a, np.eye(len(a)) * 2.0])
    out = []
    for lib in (retrograd, torch):
        got = []
        for m in (a, batch):
            A = lib.tensor(m, dtype=getattr(lib, dtype), requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                d = lib.linalg.det(A)
                d.sum().backward()
            got += [d.detach().numpy(), A.grad.numpy()]
        out.append(got)
    for r, t in zip(*out):
        np.testing.assert_allclose(r, t, rtol=1e-6, atol=0, equal_nan=True)


# (seed 20412810) v5, a view of v4 that retains its grad, is re-derived when another view of
# v4 changes in place; PyTorch moves its retain_grad to the new grad_fn only when it reads
# that grad_fn, so the backward, which does not, gives v5.grad through the old node
CASES["retain_grad_of_a_sibling_view_moves_lazily"] = """
v1 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v4 = v1.cos()
v5 = v4.ravel()
v6 = T.acos(v5.tanh().mul(0.9))
v5.retain_grad()
v7 = T.atleast_1d(v4)
v7 -= 1.5
loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
loss.backward()
"""


@pytest.mark.parametrize("between", ["", "again", "inplace_self", "used", "retain2", "readfn",
                                     "leaf"])
def test_retain_grad_of_a_sibling_view_like_pytorch(between):
    """A view retaining its grad, re-derived after another view of its base changed in
    place, then (``between``) nothing, another change, an in-place op on it, an op on it,
    retain_grad again, reading grad_fn or is_leaf: its .grad and the leaf's as PyTorch's."""
    out = []
    for T in (retrograd, torch):
        v0 = T.tensor([0.3, -0.7, 1.1], dtype=T.float64, requires_grad=True)
        v4 = v0.cos()
        v5 = v4[1:]
        v6 = (v5 * 3).sin()
        v5.retain_grad()
        v7 = v4[:2]
        v7 -= 1.5
        extra = 0
        if between == "again":
            v7 *= 2
        elif between == "inplace_self":
            v5.mul_(2)
        elif between == "used":
            extra = (v5 ** 2).sum()
        elif between == "retain2":
            v5.retain_grad()
        elif between == "readfn":
            assert v5.grad_fn is not None
        elif between == "leaf":
            assert not v5.is_leaf
        loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum() + extra
        (loss + (v4 * v4).sum()).backward()
        out.append([None if v5.grad is None else v5.grad.numpy(), v0.grad.numpy()])
    for r, t in zip(*out):
        assert (r is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(r, t, rtol=1e-12)


# (seed 20441244) accepted: _tie_split_position_rounding
_SEED_20441244 = (  # (program_from_text reads one statement a line)
    "v1 = T.tensor([[[-1.0, -1.0, -1.0], [0.0, 2.0, 1.0], [-1.0, 0.0, -1.0]], "
    "[[0.0, -2.0, 2.0], [0.0, 0.0, 2.0], [-0.0, 0.0, -2.0]]], dtype=T.float64, "
    "requires_grad=True)\n") + """
v3 = (v1).clamp_min(0.5)
v6 = v3.exp2()
h8 = v6.register_hook(lambda g: LOG.append(('v6', g.detach().clone())))
v13 = v6.amax(dim=2, keepdim=True)
loss = (v13 * v13.detach().tanh()).sum()
loss.backward(retain_graph=True)
"""


def _tie_entry():
    from . import known_bugs as kb

    return next(name for name, pred in kb.ACCEPTED_DIFFERENCES
                if pred is kb._tie_split_position_rounding)


def test_pytorch_exp2_rounds_by_position():
    """The excuse: PyTorch's float64 exp2 of equal inputs differs by position (vector lanes
    against the scalar tail); NumPy's (retrograd's) does not."""
    t = torch.full((18,), 0.5, dtype=torch.float64).exp2()
    r = retrograd.full((18,), 0.5, dtype=retrograd.float64).exp2()
    assert len(set(t.tolist())) == 2 and len(set(r.tolist())) == 1


def test_seed_20441244_accepted():
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20441244, 20441244)
    failure = compare(prog)
    assert failure is not None and failure.kind == "log", failure
    assert kb.which_known(prog, failure) == _tie_entry()


def test_tie_entry_refuses_distinct_values():
    """The same failure claimed of a program whose amax operand has no near-ties."""
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20441244.replace("clamp_min(0.5)", "clamp_min(-9.0)"),
                             20441244)
    assert compare(prog) is None
    fake = Failure("log", "register_hook", "gradient seen by the hook on v6: values differ")
    assert not kb._tie_split_position_rounding(prog, fake)


# (seed 20463632, from a 4-minute run after the fixes) accepted:
# _sigmoid_float32_rounding_downstream
_SEED_20463632 = """
v1 = T.tensor([[-0.21, 0.29, 0.66], [-1.47, -0.23, 3.13]], dtype=T.float32)
v2 = T.exp2(v1)
v4 = (v2.sigmoid()).logit()
v10 = v4.i0()
"""


def test_pytorch_float32_sigmoid_one_ulp_off():
    """The excuse: PyTorch's float32 sigmoid of exp2(3.13) is 1 ulp from the float64
    sigmoid rounded to float32, retrograd's is that value."""
    for lib, exact in ((torch, False), (retrograd, True)):
        x = lib.exp2(lib.tensor([3.13], dtype=lib.float32))
        s = x.sigmoid()
        ref = x.double().sigmoid().float()
        assert bool((s == ref).all()) == exact


def test_seed_20463632_accepted():
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20463632, 20463632)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value", failure
    assert kb._sigmoid_float32_rounding_downstream(prog, failure)
    assert kb.which_known(prog, failure) is not None


def test_sigmoid_entry_refuses_float64():
    """The same failure claimed of the float64 program (no float32 sigmoid): refused."""
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20463632.replace("T.float32", "T.float64"), 20463632)
    fake = Failure("value", "i0", "v10: values differ\n  torch     [1.0]\n  retrograd [2.0]")
    assert not kb._sigmoid_float32_rounding_downstream(prog, fake)


# (seed 20496124, from a 3-minute run after the fixes) accepted: _frac_of_large_value_one_ulp
_SEED_20496124 = """
v1 = T.tensor([-0.47, 0.04], dtype=T.float64)
v1.pow_(-1)
v1.exp_()
v5 = v1.frac()
"""


def test_seed_20496124_accepted():
    """exp(25) 1 ulp apart (PyTorch's correctly rounded, NumPy's faithful), frac exact."""
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20496124, 20496124)
    failure = compare(prog)
    if failure is None:  # (a NumPy whose exp(25) rounds as PyTorch's)
        return
    assert failure.kind == "value" and failure.message.startswith("v5:"), failure
    assert kb._frac_of_large_value_one_ulp(prog, failure)
    assert kb.which_known(prog, failure) is not None


def test_frac_entry_refuses_a_real_difference():
    """A frac value claimed to differ where the two libraries' values agree (exp(2)): the
    entry recomputes them and refuses, whatever the message says."""
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20496124.replace("0.04]", "0.5]"), 20496124)
    assert compare(prog) is None
    fake = Failure("value", "", "v5: values differ\n  torch     [0.1, 0.2]\n  retrograd [0.1, 0.3]")
    assert not kb._frac_of_large_value_one_ulp(prog, fake)


# (seed 20522057, from a 4-minute run after the fixes) accepted:
# _sgn_zero_tensor_into_group_norm (PyTorch's gradient is uninitialized memory: the seed
# replays clean when that memory happens to hold zeros or denormals)
_SEED_20522057 = """
v0 = T.tensor([[0.4, 0.62, 0.4, 0.5], [0.1, -2.0, 3.0, 0.5]], dtype=T.float64, requires_grad=True)
v1 = T.nn.functional.group_norm(v0, 1)
v1.sgn_()
v2 = v1.masked_fill(v0 > 0, 0.0)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward(retain_graph=True)
"""


def test_seed_20522057_accepted_or_clean():
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20522057, 20522057)
    sign = program_from_text(_SEED_20522057.replace("sgn_(", "sign_("), 20522057)
    assert compare(sign) is None  # (the rerun the entry makes: real zeros in both)
    for _ in range(3):
        failure = compare(prog)
        if failure is not None:
            assert failure.kind == "grad", failure
            assert kb._sgn_zero_tensor_into_group_norm(prog, failure)
            assert kb.which_known(prog, failure) is not None


def test_group_norm_entry_refuses_without_group_norm():
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20522057.replace("T.nn.functional.group_norm(v0, 1)",
                                                    "v0 * 2.0"), 20522057)
    fake = Failure("grad", "", "v0.grad: values differ\n  torch     [1.0]\n  retrograd [0.0]")
    assert not kb._sgn_zero_tensor_into_group_norm(prog, fake)


# (seed 20521904, from the same run) accepted: _digamma_float32_near_root
_SEED_20521904 = """
v0 = T.tensor([[[0.04, -0.23, -1.79]], [[0.81, 0.0, 0.0]], [[0.27, -0.57, -0.94]]], dtype=T.float32)
v1 = T.digamma(v0.abs().add(0.5))
v2 = T.true_divide(v0, v1)
v3 = v2.flatten(-1, 2)
v5 = v3.flatten()
v7 = v5.sinh()
"""


def test_pytorch_float32_digamma_off_near_its_root():
    """The excuse: PyTorch's float32 digamma(1.44) is not the float64 value rounded to
    float32 (about 1e-5 relatively off); retrograd's is."""
    for lib, exact in ((torch, False), (retrograd, True)):
        x = lib.tensor([1.44], dtype=lib.float32)
        assert bool((x.digamma() == x.double().digamma().float()).all()) == exact


def test_seed_20521904_accepted():
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20521904, 20521904)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value", failure
    assert kb._digamma_float32_near_root(prog, failure)
    assert kb.which_known(prog, failure) is not None


def test_digamma_entry_refuses_float64():
    from . import known_bugs as kb

    prog = program_from_text(_SEED_20521904.replace("T.float32", "T.float64"), 20521904)
    fake = Failure("value", "", "v7: values differ\n  torch     [1.0]\n  retrograd [2.0]")
    assert not kb._digamma_float32_near_root(prog, fake)


# (last: after every CASES entry above)
@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
