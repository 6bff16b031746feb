"""Findings of the final fuzz run of stop 24 (seed 20600000), triaged on branch fin24b."""

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import known_bugs as kb  # noqa: E402
from .generator import Generator, Val  # noqa: E402
from .ops_table import OPS  # noqa: E402
from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

_CALL = re.compile(r"T\.as_strided_scatter\(v3\.detach\(\)(?P<view>.*?), (?P<src>v\d+), "
                   r"(?P<size>\([^)]*\)), (?P<stride>\([^)]*\))(?:, (?P<offset>\d+))?\)$")


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "l1_loss"])
def test_as_strided_scatter_windows_stay_in_the_owners_elements(loss):
    # PyTorch's mse_loss and smooth_l1_loss reduce an unreduced buffer resized to 0-d in
    # place: their 0-d result keeps 8 storage places for a 4x2 input, retrograd's 1.  The
    # table addressed the slack: as_strided_scatter(v3.detach().t(), v5, (2,), (2,), 5) of
    # a smooth_l1_loss raised in retrograd only (seed 20670301).  Every window it writes
    # now runs alike in both.
    x = np.array([[-1.0, -1.0], [-0.0, 2.0], [0.0, 0.0], [1.0, 1.0]])
    made = 0
    for seed in range(300):
        g = Generator(seed, torch)
        g.ns["v3"] = getattr(torch.nn.functional, loss)(torch.tensor(x), torch.tensor(x * 0.5))
        text = OPS["as_strided_scatter"].build(g, Val("v3", (), "float64", False, True))
        if text is None:
            continue
        m = _CALL.match(text)
        assert m, text
        made += 1
        size, stride = eval(m["size"]), eval(m["stride"])  # noqa: S307 - tuples of ints
        offset = () if m["offset"] is None else (int(m["offset"]),)
        src = np.arange(1.0, 1.0 + int(np.prod(size))).reshape(size)
        out = []
        for lib in (torch, retrograd):
            v3 = getattr(lib.nn.functional, loss)(lib.tensor(x), lib.tensor(x * 0.5))
            base = eval(f"v3.detach(){m['view']}", {"v3": v3})  # noqa: S307
            out.append(np.asarray(lib.as_strided_scatter(base, lib.tensor(src), size, stride,
                                                         *offset).tolist()))
        np.testing.assert_array_equal(out[1], out[0], err_msg=text)
    assert made > 10


_MATRIX_EXP_HUGE_G = """
v0 = T.tensor([[-0.25, 1.97, 1.97]], dtype=T.float64, requires_grad=True)
v2 = T.linalg.matrix_exp((v0 @ v0.mT).mul(0.3))
v3 = (v2).xlogy(v2.abs().add(0.5))
v9 = v3.cosh()
loss = (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
"""


def _exact_second_gradient(x0):
    """mpmath's v0.grad of _MATRIX_EXP_HUGE_G (a 1x1 matrix_exp is exp; every detached
    tanh there is 1 or -1 in float64), by differentiating the exact first gradient."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    c, half = mp.mpf(0.3), mp.mpf(0.5)

    def first(x):
        e = mp.exp(c * sum(xi * xi for xi in x))
        v3 = e * mp.log(e + half)
        return [mp.sinh(v3) * (mp.log(e + half) + e / (e + half)) * e * c * 2 * xi for xi in x]

    x = [mp.mpf(v) for v in x0]
    sign = [mp.sign(v) for v in first(x)]
    total = lambda x: sum(a * b for a, b in zip(first(x), sign))  # noqa: E731
    return np.array([float(mp.diff(lambda t, i=i: total(x[:i] + [t] + x[i + 1:]), x[i]))
                     for i in range(len(x))])


def test_matrix_exp_double_backward_of_huge_gradient_accepted():
    # seed 20683912: PyTorch's v0.grad is 3.4e-4 (relative) off the exact derivative, its
    # first-order matrix_exp derivative at max|G| about 1e10 1.7e-8 off; retrograd's within
    # 1e-12 of mpmath's.  Accepted (fin24b entry); the first-order entry does not match.
    prog = program_from_text(_MATRIX_EXP_HUGE_G, 20683912)
    failure = compare(prog)
    assert failure is not None and failure.kind == "grad", failure
    assert failure.message.startswith("v0.grad:"), failure
    assert kb._matrix_exp_double_backward_of_huge_gradient(prog, failure)
    assert not kb._matrix_exp_backward_of_huge_gradient(prog, failure)
    assert kb.which_known(prog, failure) is not None
    exact = _exact_second_gradient([-0.25, 1.97, 1.97])
    ns = {"T": retrograd}
    exec(_MATRIX_EXP_HUGE_G, ns)  # noqa: S102 - the seed's program
    np.testing.assert_allclose(ns["v0"].grad.numpy()[0], exact, rtol=1e-12)
    ns = {"T": torch}
    exec(_MATRIX_EXP_HUGE_G, ns)  # noqa: S102
    assert np.abs(ns["v0"].grad.numpy()[0] / exact - 1).max() > 1e-5


def test_matrix_exp_double_backward_entry_stays_narrow():
    # the same program with a moderate gradient (no cosh): PyTorch and retrograd agree, and
    # a made-up difference (a grad failure of a program without the matrix_exp statement)
    # is not matched
    prog = program_from_text(_MATRIX_EXP_HUGE_G.replace("v3.cosh()", "v3.tanh()"), 1)
    assert compare(prog) is None
    plain = program_from_text(_MATRIX_EXP_HUGE_G.replace(
        "T.linalg.matrix_exp((v0 @ v0.mT).mul(0.3))", "(v0 @ v0.mT).mul(0.3).exp()"), 2)
    failure = compare(program_from_text(_MATRIX_EXP_HUGE_G, 20683912))
    assert not kb._matrix_exp_double_backward_of_huge_gradient(plain, failure)


def test_matrix_exp_double_backward_entry_checks_retrogrades_value(monkeypatch):
    # a retrograd matrix_exp 1e-7 off (a real bug) is not accepted: the entry compares
    # retrograd's gradient with PyTorch's run at the scaled derivative
    prog = program_from_text(_MATRIX_EXP_HUGE_G, 20683912)
    failure = compare(prog)
    plain = retrograd.linalg.matrix_exp
    monkeypatch.setattr(retrograd.linalg, "matrix_exp", lambda a: plain(a) * (1 + 1e-7))
    assert not kb._matrix_exp_double_backward_of_huge_gradient(prog, failure)
