"""Findings of the final fuzz run of stop 24 (seed 20600000), triaged on branch fin24c:
layer_norm's weight hook called with None by PyTorch (accepted), a float32 matrix_exp double
backward at a large incoming gradient (accepted, checked against float64).  The third,
det of an empty batch under create_graph, is fixed (tests/ops/test_linalg_scalars.py)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import known_bugs as kb  # noqa: E402
from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

_LAYER_NORM_HOOK = """
v1 = T.tensor([-3.0, -3.0, -0.0], dtype=T.float64, requires_grad=True)
v3 = v1.unflatten(-1, (3, 1))
v4 = v3.detach()
v6 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
v7 = T.nn.functional.layer_norm(v4, (1,), weight=v6)
h8 = v6.register_hook(lambda g: LOG.append(('v6', g.detach().clone())))
v9 = v7.flatten(0, 0)
loss = (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v6], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
"""


def test_layer_norm_weight_hook_called_with_none_now_matches():
    # seed 20748954: PyTorch calls v6's hook with None in the second backward; retrograd's
    # engine now does too (none25: a node that gets no gradient still runs its hooks), so
    # the program matches and _hook_called_with_none_layer_norm has nothing left to accept
    prog = program_from_text(_LAYER_NORM_HOOK, 20748954)
    assert compare(prog) is None


def test_layer_norm_hook_program_still_sees_a_real_bug(monkeypatch):
    # without create_graph (a plain backward) nothing differs; with a retrograd layer_norm
    # 1e-3 off (a real bug) the program differs
    first = _LAYER_NORM_HOOK.split("gs = ")[0] + "loss.backward()\n"
    assert compare(program_from_text(first, 1)) is None
    prog = program_from_text(_LAYER_NORM_HOOK, 20748954)
    plain = retrograd.nn.functional.layer_norm
    monkeypatch.setattr(retrograd.nn.functional, "layer_norm",
                        lambda *a, **k: plain(*a, **k) + 1e-3)
    assert compare(prog) is not None


@pytest.mark.parametrize("lib", ["torch", "retrograd"])
def test_layer_norm_weight_hook_gets_a_tensor_where_the_input_gradient_is_taken(lib):
    # the entry's reason: where the input's gradient is taken the weight's second-order
    # gradient exists, and PyTorch calls its hook with a tensor (only the bias gets None)
    m = torch if lib == "torch" else retrograd
    got = []
    x = m.tensor([[-3.0, 1.0], [-3.0, 2.0], [0.0, 5.0]], dtype=m.float64, requires_grad=True)
    w = m.tensor([-1.0, 2.0], dtype=m.float64, requires_grad=True)
    w.register_hook(lambda g: got.append(g))
    y = m.nn.functional.layer_norm(x, (2,), weight=w)
    gs = m.autograd.grad((y * y.detach().tanh()).sum(), [x, w], create_graph=True)
    sum((g * g.detach().tanh()).sum() for g in gs).backward()
    assert len(got) == 2 and all(g is not None for g in got)
    assert w.grad is not None


_MATRIX_EXP_F32 = """
v0 = T.tensor([[[1.61, -0.01, 1.61], [0.68, 0.48, 1.61]], [[0.02, -1.42, 0.0], [0.23, 0.0, 0.0]], [[0.0, 0.46, 2.04], [-0.87, 0.66, -1.6]]], dtype=T.float32, requires_grad=True)
v1 = T.linalg.matrix_exp((v0 @ v0.mT).mul(0.3))
v1.pow_(-1)
loss = (v1 * v1.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
"""  # noqa: E501 - the seed's leaf as printed


def _loss2(lib, text):
    ns = {"T": lib, "LOG": []}
    exec(text, ns)  # noqa: S102 - the seed's program
    return float(ns["loss2"].detach())


def test_matrix_exp_float32_double_backward_accepted():
    # seed 20743575: the float64 run at the same float32 inputs (both libraries agree to
    # 1e-10) is the truth; retrograd's float32 loss2 is within 1e-7 of it, PyTorch's 2e-3
    prog = program_from_text(_MATRIX_EXP_F32, 20743575)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value", failure
    assert failure.message.startswith("loss2:"), failure
    assert kb._matrix_exp_double_backward_of_huge_gradient_float32(prog, failure)
    assert not kb._matrix_exp_double_backward_of_huge_gradient(prog, failure)
    assert kb.which_known(prog, failure) is not None
    x = np.array(eval(_MATRIX_EXP_F32.split("T.tensor(")[1].split(", dtype")[0]),  # noqa: S307
                 dtype=np.float32).astype(np.float64).tolist()
    text64 = _MATRIX_EXP_F32.replace("T.float32", "T.float64").replace(
        _MATRIX_EXP_F32.split("T.tensor(")[1].split(", dtype")[0], repr(x))
    truth = _loss2(torch, text64)
    assert _loss2(retrograd, text64) == pytest.approx(truth, rel=1e-10)
    assert _loss2(retrograd, _MATRIX_EXP_F32) == pytest.approx(truth, rel=1e-6)
    assert abs(_loss2(torch, _MATRIX_EXP_F32) / truth - 1) > 1e-3


def test_matrix_exp_float32_entry_checks_retrogrades_value(monkeypatch):
    # a retrograd matrix_exp 1e-4 off (a real bug) is not accepted
    prog = program_from_text(_MATRIX_EXP_F32, 20743575)
    failure = compare(prog)
    plain = retrograd.linalg.matrix_exp
    monkeypatch.setattr(retrograd.linalg, "matrix_exp", lambda a: plain(a) * (1 + 1e-4))
    assert not kb._matrix_exp_double_backward_of_huge_gradient_float32(prog, failure)


def test_matrix_exp_float32_entry_refuses_float64():
    # the float64 program is the fin24b entry's (1e-9), not this one's
    text = _MATRIX_EXP_F32.replace("T.float32", "T.float64")
    prog = program_from_text(text, 3)
    failure = compare(program_from_text(_MATRIX_EXP_F32, 20743575))
    assert not kb._matrix_exp_double_backward_of_huge_gradient_float32(prog, failure)
