"""Signed zeros as PyTorch's (issue 7): relu(-0.0) is -0.0, clamp keeps x at a tie with a
bound (clamp(0.0, min=-0.0) is 0.0), maximum/minimum keep their first operand at a tie, and
the zeros a masked gradient (relu, clamp) leaves are +0.0 even where the incoming gradient is
negative.  The sign of a zero shows downstream (1/x, atan2), so values are compared bit for
bit here (repr), not with allclose."""

from __future__ import annotations

import pytest

import retrograd

torch = pytest.importorskip("torch")

VALUES = [-0.06, -0.0, 0.0, 0.3, 7.0, -1.0, float("nan")]


def _forward_cases(m):
    F = m.nn.functional
    return {
        "relu": lambda x: m.relu(x),
        "relu_": lambda x: x.relu_(),
        "F.relu_inplace": lambda x: F.relu(x, inplace=True),
        "relu_then_clamp_": lambda x: m.relu(x).clamp_(-0.0, 0.5),
        "clamp": lambda x: x.clamp(-0.0, 0.5),
        "clamp_zero": lambda x: x.clamp(0.0, 0.5),
        "clamp_min_kw": lambda x: x.clamp(min=-0.0),
        "clamp_max_kw": lambda x: x.clamp(max=-0.0),
        "clamp_": lambda x: x.clamp_(-0.0, 0.5),
        "clamp_min": lambda x: x.clamp_min(0.0),
        "clamp_max": lambda x: x.clamp_max(0.0),
        "clamp_min_": lambda x: x.clamp_min_(0.0),
        "clamp_max_": lambda x: x.clamp_max_(-0.0),
        "clamp_tensor": lambda x: m.clamp(x, m.tensor(-0.0, dtype=m.float64),
                                          m.tensor(0.5, dtype=m.float64)),
        "clamp_min_tensor": lambda x: x.clamp_min(m.tensor(0.0, dtype=m.float64)),
        "float32_relu": lambda x: x.float().relu(),
        "maximum": lambda x: m.maximum(x, m.zeros((), dtype=m.float64)),
        "minimum": lambda x: m.minimum(x, m.zeros((), dtype=m.float64)),
        "maximum_neg_zero": lambda x: m.maximum(x, m.tensor(-0.0, dtype=m.float64)),
        "relu6": lambda x: F.relu6(x),
        "hardtanh": lambda x: F.hardtanh(x, -0.0, 0.5),
        "elu": lambda x: F.elu(x),
        "softshrink": lambda x: F.softshrink(x, 0.5),
        "softshrink_zero": lambda x: F.softshrink(x, 0.0),
    }


@pytest.mark.parametrize("name", sorted(_forward_cases(torch)))
def test_forward_signed_zeros_as_pytorch(name):
    def run(m):
        return [repr(v) for v in _forward_cases(m)[name](m.tensor(VALUES,
                                                                   dtype=m.float64)).tolist()]

    assert run(retrograd) == run(torch)


def _backward_cases(m):
    return {
        "relu": lambda x: m.relu(x),
        "clamp": lambda x: x.clamp(-0.5, 0.5),
        "clamp_min": lambda x: x.clamp_min(0.0),
        "clamp_max": lambda x: x.clamp_max(0.0),
        "clamp_tensor": lambda x: x.clamp(m.zeros(7, dtype=m.float64),
                                          m.full((7,), 0.5, dtype=m.float64)),
        "relu6": lambda x: m.nn.functional.relu6(x),
        "hardtanh": lambda x: m.nn.functional.hardtanh(x),
    }


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("name", sorted(_backward_cases(torch)))
def test_masked_gradient_zeros_are_positive_as_pytorch(name, sign):
    def run(m):
        x = m.tensor(VALUES[:-1] + [2.0], dtype=m.float64, requires_grad=True)
        g = m.tensor([sign * (i + 1) for i in range(7)], dtype=m.float64)
        got, = m.autograd.grad(_backward_cases(m)[name](x), [x], g)
        return [repr(v) for v in got.tolist()]

    assert run(retrograd) == run(torch)
