"""numC2 (issue 7, stop 22): the two leftover seeds.

18704327: PyTorch's sgn derivative is a ZeroTensor that its mul keeps, so acos'(1) = -inf
times it is 0 there and nan in retrograd: one accepted entry, ``_sgn_zero_tensor``, now
covers the whole sgn-ZeroTensor class (it replaced stop 21's ``_sgn_zero_tensor`` and
leafA's ``_sgn_zero_tensor_into_reshaped_leaf``), pinned by rerunning the program with sgn
written sign.  18802342: float32 i0 of an int64 exp, amplified by fmod.
"""

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import known_bugs as kb  # noqa: E402
from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

# the shrunk reproducers of every seed either old sgn entry matched, and 18704327
SGN_ZERO_TENSOR = {
    18704327: """
v0 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v1 = T.acos(v0)
v1.sgn_()
loss = (v0 * v0.detach().tanh()).sum() + (v1 * v1.detach().tanh()).sum()
loss.backward()
""",
    12538714: """
v1 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v2 = v1.var(dim=-1, keepdim=True)
v4 = v2.nan_to_num()
v9 = T.sgn(v4)
loss = (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
""",
    11019915: """
v1 = T.tensor(-2.0, dtype=T.float32, requires_grad=True)
v2 = T.ceil(v1)
v3 = T.float_power(v2, v1.abs().add(0.5))
v4 = v3.sgn()
v7 = T.tensor([[-2.0], [0.0], [-2.0]], dtype=T.float64)
v8 = T.linalg.lu_solve(*T.linalg.lu_factor((v4 + 4 * T.eye(3, dtype=v4.dtype))), v7)
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
loss.backward()
""",
    11054798: """
v2 = T.tensor([-1.0, 0.0, -1.0, -1.0], dtype=T.float32, requires_grad=True)
v4 = T.tensor([4, 0, -1, -2], dtype=T.int64)
v5 = T.hypot(v2, v4)
v8 = T.sgn(v5)
loss = (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
""",
    15045904: """
v0 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v1 = v0.var(dim=0)
v2 = T.abs(v1)
loss = (v2 * v2.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
}


@pytest.mark.parametrize("seed", sorted(SGN_ZERO_TENSOR))
def test_sgn_zero_tensor_class_is_one_entry(seed):
    """Each seed fails (nan in retrograd, a number in PyTorch), and the one entry takes it."""
    prog = program_from_text(SGN_ZERO_TENSOR[seed], seed)
    failure = compare(prog)
    assert failure is not None and "nan" in failure.message
    assert kb.which_known(prog, failure) == next(
        name for name, pred in kb.ACCEPTED_DIFFERENCES if pred is kb._sgn_zero_tensor)


def _accepted_by(prog, failure):
    return kb.which_known(prog, failure) == next(
        name for name, pred in kb.ACCEPTED_DIFFERENCES if pred is kb._sgn_zero_tensor)


def test_sgn_zero_tensor_refuses_variants(monkeypatch):
    """The entry needs sgn (or abs under create_graph) in the program, nan in retrograd where
    PyTorch has a number, and a rerun with sgn written sign on which both libraries agree."""
    from .runner import Failure

    text = SGN_ZERO_TENSOR[18704327]
    prog = program_from_text(text, 18704327)
    failure = compare(prog)
    assert kb._sgn_zero_tensor(prog, failure)
    # (no sgn: the same failure cannot be sgn's ZeroTensor)
    assert not kb._sgn_zero_tensor(program_from_text(text.replace("sgn_", "sign_")), failure)
    # (PyTorch's nan where retrograd has a number, a number against another, other kinds)
    for message in ("v0.grad: values differ\n  torch     nan\n  retrograd 0.7615941559557649",
                    "v0.grad: values differ\n  torch     0.5\n  retrograd 0.7615941559557649"):
        assert not kb._sgn_zero_tensor(prog, Failure("grad", "leaf", message))
    assert not kb._sgn_zero_tensor(prog, Failure("flags", "acos", "v1: (requires_grad, ...)"))
    # (abs without create_graph has no ZeroTensor in its graph)
    abs_text = SGN_ZERO_TENSOR[15045904]
    abs_failure = compare(program_from_text(abs_text))
    first_order = abs_text.replace("create_graph=True", "retain_graph=True")
    assert kb._sgn_zero_tensor(program_from_text(abs_text), abs_failure)
    assert not kb._sgn_zero_tensor(program_from_text(first_order), abs_failure)
    # (a difference that sgn -> sign does not remove is not sgn's: here a retrograd whose
    # sign_ were wrong, so that the rerun disagrees)
    monkeypatch.setattr(retrograd.Tensor, "sign_", lambda self: self.mul_(2))
    assert not kb._sgn_zero_tensor(prog, failure)


def test_abs_rewrite_keeps_values_and_first_derivative():
    """The rerun writes abs as x * x.sign(): PyTorch's values and gradients unchanged."""
    source = "\n".join(["v1 = T.abs(v0 + 1)", "v2 = (v0) % (v0.abs().add(0.5))",
                        "with T.no_grad():", "    v3 = v0.clone()", "    v3.abs_()"])
    rewritten = kb._rewrite_calls(source, ("abs", "abs_"), kb._abs_as_product)
    assert rewritten.split("\n") == [
        "v1 = (v0 + 1) * (v0 + 1).sign()", "v2 = v0 % (v0 * v0.sign()).add(0.5)",
        "with T.no_grad():", "    v3 = v0.clone()", "    v3.mul_(v3.sign())"]
    for body in (source, rewritten):
        v0 = torch.tensor([-2.5, -1.0, 0.0, 0.75, float("inf")], dtype=torch.float64,
                          requires_grad=True)
        ns = {"T": torch, "v0": v0}
        exec(body, ns)
        (ns["v1"].sum() + ns["v2"][:-1].sum()).backward()
        got = [ns["v1"].detach(), ns["v2"].detach(), ns["v3"], v0.grad]
        if body is source:
            want = got
    for g, w in zip(got, want):
        assert torch.equal(g.nan_to_num(), w.nan_to_num())


I0_AMPLIFIED = """
v0 = T.tensor(4, dtype=T.int64)
v1 = T.exp(v0)
v4 = T.i0(v1)
v5 = (v4).fmod(v1.abs().add(0.5))
"""


def test_i0_float32_from_an_int64_exp_is_accepted():
    """exp of an int64 is float32 with no float32 in the text; its i0 (2.8e22) is correctly
    rounded in retrograd and a few ulp off in PyTorch, and fmod by 55 turns that into the
    result (seed 18802342)."""
    x = torch.exp(torch.tensor(4))
    assert x.dtype == torch.float32
    truth = torch.i0(x.double())  # (float64 i0: 1e-16 relative, far below float32's ulp)
    mine = torch.from_numpy(retrograd.i0(retrograd.tensor(x.item(), dtype=retrograd.float32))
                            .numpy()).double()
    assert mine == truth.float().double()  # (correctly rounded)
    assert (mine - truth).abs() < (torch.i0(x).double() - truth).abs()
    prog = program_from_text(I0_AMPLIFIED, 18802342)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value" and failure.message.startswith("v5")
    assert kb.which_known(prog, failure) == next(
        name for name, pred in kb.ACCEPTED_DIFFERENCES if pred is kb._i0_float32_amplified)


def test_i0_float32_amplified_refuses_variants():
    from .runner import Failure

    prog = program_from_text(I0_AMPLIFIED, 18802342)
    failure = compare(prog)
    assert kb._i0_float32_amplified(prog, failure)
    # (a retrograd value that the correctly rounded i0 does not give is a bug of ours)
    torch_line, _ = failure.message.split("\n  retrograd ")
    far = Failure("value", "fmod", torch_line + "\n  retrograd 47.0")
    assert not kb._i0_float32_amplified(prog, far)
    # (float64 operand: no float32 i0 to blame; no i0; a gradient)
    for edit in (("T.exp(v0)", "T.exp(v0.double())"), ("T.i0(v1)", "T.cosh(v1)")):
        assert not kb._i0_float32_amplified(program_from_text(I0_AMPLIFIED.replace(*edit)),
                                            failure)
    grad = Failure("grad", "leaf", failure.message.replace("v5:", "v5.grad:", 1))
    assert not kb._i0_float32_amplified(prog, grad)
