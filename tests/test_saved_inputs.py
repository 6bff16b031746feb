"""An op saves only what its derivative reads (issue 6): ``y = x * 2; x.add_(1);
y.sum().backward()`` works in PyTorch, whose MulBackward0 keeps ``self`` only when ``other``
needs a gradient.  For each op and each of its tensor inputs, change that input in place
after the op, then run backward: retrograd must raise exactly where PyTorch raises, and
give the same gradients where it does not.
"""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _leaves(lib):
    x = lib.tensor([1.5, -0.7, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([0.8, 1.3, -0.4], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([0.6, 2.5, 1.1], dtype=lib.float64)  # needs no grad
    return {"x": x, "v": v, "w": w}


# name -> (expression of the leaves x, v (need grad) and w (does not))
CASES = {
    "x * 2": lambda lib, t: t["x"] * 2,
    "2 * x": lambda lib, t: 2 * t["x"],
    "x * w": lambda lib, t: t["x"] * t["w"],
    "w * x": lambda lib, t: t["w"] * t["x"],
    "x * v": lambda lib, t: t["x"] * t["v"],
    "x / 2": lambda lib, t: t["x"] / 2,
    "x / w": lambda lib, t: t["x"] / t["w"],
    "w / x": lambda lib, t: t["w"] / t["x"],
    "x / v": lambda lib, t: t["x"] / t["v"],
    "2 / x": lambda lib, t: 2 / t["x"],
    "x + w": lambda lib, t: t["x"] + t["w"],
    "x - w": lambda lib, t: t["x"] - t["w"],
    "2 - x": lambda lib, t: 2 - t["x"],
    "x + v * 2": lambda lib, t: lib.add(t["x"], t["v"], alpha=2),
    "x ** 2": lambda lib, t: t["x"] ** 2,
    "2 ** x": lambda lib, t: 2 ** t["x"],
    "x ** w": lambda lib, t: t["x"].abs() ** t["w"],
    "w ** x": lambda lib, t: t["w"] ** t["x"],
    "x % 2": lambda lib, t: lib.remainder(t["x"], 2),
    "x % w": lambda lib, t: lib.remainder(t["x"], t["w"]),
    "w % x": lambda lib, t: lib.remainder(t["w"], t["x"]),
    "lerp(x, w, .3)": lambda lib, t: lib.lerp(t["x"], t["w"], 0.3),
    "lerp(x, v, .3)": lambda lib, t: lib.lerp(t["x"], t["v"], 0.3),
    "lerp(x, v, w)": lambda lib, t: lib.lerp(t["x"], t["v"], t["w"]),
    "lerp(w, w * 2, x)": lambda lib, t: lib.lerp(t["w"], t["w"] * 2, t["x"]),
    "addcmul(x, w, v)": lambda lib, t: lib.addcmul(t["x"], t["w"], t["v"]),
    "addcmul(w, x, w)": lambda lib, t: lib.addcmul(t["w"], t["x"], t["w"]),
    "addcdiv(x, w, v)": lambda lib, t: lib.addcdiv(t["x"], t["w"], t["v"]),
    "addcdiv(w, x, w)": lambda lib, t: lib.addcdiv(t["w"], t["x"], t["w"]),
    "hypot(x, w)": lambda lib, t: lib.hypot(t["x"], t["w"]),
    "hypot(x, v)": lambda lib, t: lib.hypot(t["x"], t["v"]),
    "atan2(x, w)": lambda lib, t: lib.atan2(t["x"], t["w"]),
    "maximum(x, w)": lambda lib, t: lib.maximum(t["x"], t["w"]),
}


def _run(lib, case, changed):
    """Whether backward raised, and the leaves' gradients if it did not."""
    t = _leaves(lib)
    out = CASES[case](lib, t)
    with lib.no_grad():
        t[changed].add_(1)  # a leaf that requires grad may change only under no_grad
    try:
        out.sum().backward()
    except RuntimeError:
        return True, None
    return False, [None if t[k].grad is None else t[k].grad.numpy().copy() for k in "xv"]


@pytest.mark.parametrize("changed", ["x", "v", "w"])
@pytest.mark.parametrize("case", list(CASES))
def test_in_place_change_after_the_op_raises_exactly_where_torch_raises(case, changed):
    want_raised, want = _run(torch, case, changed)
    raised, got = _run(R, case, changed)
    assert raised == want_raised, (
        f"{case}, then {changed}.add_(1): torch {'raises' if want_raised else 'works'}")
    if not raised:
        for g, e in zip(got, want):
            assert (g is None) == (e is None)
            if g is not None:
                np.testing.assert_allclose(g, e, rtol=1e-12)


def test_seed_example_keeps_only_the_constant():
    # the program: legal in PyTorch
    x = R.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with R.no_grad():
        x.add_(1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    z = R.tensor([1.0, 2.0]).requires_grad_()
    y = z * 2
    assert y.grad_fn.saved[0] is None and y.grad_fn.saved[1] == 2  # z is not kept alive


@pytest.mark.parametrize("case", list(CASES))
def test_in_place_change_of_the_result_raises_exactly_where_torch_raises(case):
    # ops whose derivative reads their result (PowBackward1, HypotBackward0...) save it
    def run(lib):
        t = _leaves(lib)
        out = CASES[case](lib, t)
        out.add_(1)
        try:
            out.sum().backward()
        except RuntimeError:
            return True
        return False

    assert run(R) == run(torch)


# Ops of one tensor: each saves its input, its result, both or nothing, as PyTorch's
# derivatives.yaml (exp its result, sin its input, prod and std both, x * 2 / x - 2 nothing).
UNARY = {
    "exp": lambda lib, x: x.exp(), "log": lambda lib, x: x.log(),
    "sqrt": lambda lib, x: x.sqrt(), "sin": lambda lib, x: x.sin(),
    "tanh": lambda lib, x: x.tanh(), "sigmoid": lambda lib, x: x.sigmoid(),
    "relu": lambda lib, x: x.relu(), "abs": lambda lib, x: x.abs(),
    "sign": lambda lib, x: x.sign(), "sgn": lambda lib, x: x.sgn(),
    "x ** 3": lambda lib, x: x ** 3,
    "-x": lambda lib, x: -x, "1 / x": lambda lib, x: 1 / x,
    "rsqrt": lambda lib, x: lib.rsqrt(x), "clamp": lambda lib, x: x.clamp(0.1, 1.0),
    "elu": lambda lib, x: lib.nn.functional.elu(x),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "sum": lambda lib, x: x.sum(), "mean": lambda lib, x: x.mean(),
    "prod": lambda lib, x: x.prod(), "prod(1)": lambda lib, x: x.reshape(2, 2).prod(1),
    "max": lambda lib, x: x.max(), "max(1)": lambda lib, x: x.reshape(2, 2).max(1)[0],
    "amax": lambda lib, x: x.amax(), "std": lambda lib, x: x.std(),
    "var": lambda lib, x: x.var(), "norm": lambda lib, x: x.norm(),
    "logsumexp": lambda lib, x: x.logsumexp(0), "softmax": lambda lib, x: x.softmax(0),
    "log_softmax": lambda lib, x: x.log_softmax(0), "cumsum": lambda lib, x: x.cumsum(0),
    "x / 2": lambda lib, x: x / 2, "x - 2": lambda lib, x: x - 2,
}


@pytest.mark.parametrize("changed", ["input", "result"])
@pytest.mark.parametrize("case", list(UNARY))
def test_unary_in_place_change_raises_exactly_where_torch_raises(case, changed):
    def run(lib):
        x = lib.tensor([0.5, 0.25, 0.75, 0.6], requires_grad=True)
        h = x * 1  # a non-leaf, so it may change in place
        out = UNARY[case](lib, h)
        (h if changed == "input" else out).add_(1)
        try:
            out.sum().backward()
        except RuntimeError:
            return True
        return False

    assert run(R) == run(torch)
