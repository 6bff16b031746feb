"""autograd.trace() and viz.draw() of a forward-mode pass: every op with the tangents it got
and gave (equal to what unpack_dual reads), and the DOT picture with tangents on the edges."""

from __future__ import annotations

import shutil

import numpy as np

import retrograd as T
import retrograd.autograd.forward_ad as fwAD
from retrograd import func
from retrograd.autograd.trace_events import format_value


def _seed(value):
    x = T.full((1, 1), value, dtype=T.float64)
    t = T.ones(1, 1, dtype=T.float64)
    with fwAD.dual_level(), T.autograd.trace({"x": x}) as tr:
        d = fwAD.make_dual(x, t)
        y = 2 * d
        z = y ** 3
        tr.name({"y": y, "z": z})
        tz = fwAD.unpack_dual(z).tangent
    return tr, d, y, z, tz


def test_seed_forward_pass_has_the_chain_rule_tangents():
    value = 0.7
    tr, d, y, z, tz = _seed(value)
    assert [e.kind for e in tr.events] == ["dual", "forward", "forward", "unpack"]
    mul, pow_ = tr.forward_steps
    assert (mul.name, pow_.name) == ("MulBackward0", "PowBackward0")
    np.testing.assert_allclose(mul.in_tangents[0], [[1.0]])
    np.testing.assert_allclose(mul.tangent, [[2.0]])  # d(2x) = 2 t
    np.testing.assert_allclose(pow_.in_tangents[0], mul.tangent)
    # d(y^3) = 3 y^2 dy = 3 (2x)^2 * 2 t = 24 x^2 t: the seed's derivative, by forward mode
    np.testing.assert_allclose(pow_.tangent, [[24 * value ** 2]], rtol=1e-12)
    np.testing.assert_allclose(pow_.tangent, tz.numpy())
    assert pow_.outputs[0] is z and mul.inputs[0] is d
    table = tr.table()
    assert "make_dual(x)" in table and "pow (PowBackward0) makes z" in table
    assert f"tangent out: {format_value(tz.numpy())}" in table
    assert "unpack_dual(z)" in table


def test_every_op_lists_the_tangents_unpack_dual_gives():
    rng = np.random.default_rng(0)
    w, x, t = (T.tensor(rng.standard_normal(s)) for s in ((3, 3), (3,), (3,)))
    eye = T.eye(3, dtype=T.float64)
    with fwAD.dual_level(), T.autograd.trace() as tr:
        d = fwAD.make_dual(x, t)
        h = T.tanh(w @ d)  # hand-written rules: mv, tanh
        a, b = h.split([1, 2])  # a multi-output view op
        q, r = T.linalg.qr(h.outer(d) + eye)  # a multi-output node
        s = (a.sum() * b).logsumexp(0) + r.trace()  # logsumexp: the VJP's transpose
        outs = [h, a, b, q, r, s]
        tangents = [fwAD.unpack_dual(o).tangent for o in outs]
    produced = {}
    for step in tr.forward_steps:
        for o, ot in zip(step.outputs, step.out_tangents):
            produced[id(o)] = ot
        for i, (xi, ti) in enumerate(zip(step.inputs, step.in_tangents)):
            if ti is not None and id(xi) in produced:  # the tangent that came along the edge
                np.testing.assert_array_equal(ti, produced[id(xi)], err_msg=f"{step.name}[{i}]")
    for o, tg in zip(outs, tangents):
        np.testing.assert_array_equal(produced[id(o)], tg.numpy())
    hows = {s.name: s.how for s in tr.forward_steps}
    assert hows["TanhBackward0"] == "rule" and hows["LogsumexpBackward0"] == "transpose"
    # and the values are J t: compare with reverse mode, column by column
    def f(v):
        hh = T.tanh(w @ v)
        return (hh[:1].sum() * hh[1:]).logsumexp(0) + T.linalg.qr(hh.outer(v) + eye)[1].trace()

    jac = T.autograd.functional.jacobian(f, x)
    np.testing.assert_allclose(tangents[-1].numpy(), (jac @ t).numpy(), rtol=1e-10)


def test_draw_shows_tangents_on_the_edges():
    tr, d, y, z, tz = _seed(-1.3)
    for g in (tr.draw(), T.viz.draw({"z": z}, trace=tr)):
        src = g.source
        assert "make_dual(x)" in src and "PowBackward0" in src
        ty = tr.forward_steps[0].tangent
        assert f'-> f2 [label="tangent: {format_value(ty, 6)}"]' in src  # y's tangent into pow
        assert f"tangent: {format_value(tz.numpy(), 6)}" in src
        assert "t_y = p*a**(p-1) * t_a" in src
        if shutil.which("dot"):
            assert g.pipe("svg").lstrip().startswith((b"<?xml", b"<svg"))


def test_trace_of_func_jvp_and_a_constant_input():
    x, c = T.tensor([0.5, -1.0], dtype=T.float64), T.tensor([2.0, 3.0], dtype=T.float64)
    with T.autograd.trace({"c": c}) as tr:
        out, jv = func.jvp(lambda a: (a * c).sin(), (x,), (T.ones(2, dtype=T.float64),))
    mul, sin = tr.forward_steps
    assert mul.in_tangents[1] is None  # c carries no tangent
    np.testing.assert_allclose(sin.tangent, jv.numpy())
    src = tr.draw().source
    assert "no tangent (constant)" in src and '"c\\nno tangent"' in src


def test_in_place_ops_on_a_dual_are_steps_of_the_pass():
    x = T.tensor([[0.2, -0.4, 1.0]], dtype=T.float64)
    t = T.tensor([[1.0, 2.0, -1.0]], dtype=T.float64)
    t0 = t.numpy().copy()  # (the dual's tangent is t itself, changed in place with it)
    with fwAD.dual_level(), T.autograd.trace() as tr:
        d = fwAD.make_dual(x.clone(), t)
        d.mul_(3)
        d.exp_()
        s = d.sum()
        ts = fwAD.unpack_dual(s).tangent
    mul, exp, total = tr.forward_steps
    assert (mul.op, exp.op, total.op) == ("mul_", "exp_", "sum")
    assert mul.outputs[0] is d and exp.outputs[0] is d  # the dual took each result
    np.testing.assert_allclose(mul.tangent, 3 * t0)
    np.testing.assert_allclose(exp.tangent, np.exp(3 * x.numpy()) * 3 * t0)
    np.testing.assert_allclose(total.tangent, ts.numpy())
    edges = [line for line in tr.draw().source.splitlines() if " -> " in line]
    assert [e.split(" [")[0].strip() for e in edges] == ["d0 -> f1", "f1 -> f2", "f2 -> f3",
                                                        "f3 -> o0"]
