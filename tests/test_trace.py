"""autograd.trace(): the narration of a backward pass, and the ``retrograd explain`` command.

Every number the trace reports is checked against the chain rule worked by hand for
z = (2x)^3: dz/dy = 3 y^2 = 12 x^2 at PowBackward0, dz/dx = 24 x^2 into x.grad.
"""

import importlib
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd import engine
from retrograd.autograd.trace_events import format_value
from retrograd.autograd.trace_rules import RULES, describe_rule


def require_dot():
    """Fail (not skip) when Graphviz's dot is missing, unless RETROGRAD_NO_DOT=1."""
    if shutil.which("dot") is not None:
        return
    if os.environ.get("RETROGRAD_NO_DOT") == "1":
        pytest.skip("RETROGRAD_NO_DOT=1: this machine has no Graphviz dot program")
    pytest.fail("Graphviz's 'dot' program is not installed, so the explain pictures cannot be "
                "tested. Install it (apt-get install graphviz; `make test` does this when "
                "root) or set RETROGRAD_NO_DOT=1 to skip the rendering tests deliberately.")


def seed(value=0.7, shape=(1, 1)):
    x = T.full(shape, value, dtype=T.float64, requires_grad=True)
    y = 2 * x
    z = y ** 3
    return x, y, z


@pytest.mark.parametrize("value", [0.7, -1.3])
def test_seed_narration_has_the_chain_rule_numbers(value):
    x, y, z = seed(value)
    with T.autograd.trace({"x": x, "y": y, "z": z}) as t:
        z.backward()
    assert [s.name for s in t.steps] == ["PowBackward0", "MulBackward0"]
    pow_, mul = t.steps
    dz_dy = 3 * (2 * value) ** 2  # d(y**3)/dy at y = 2x
    dz_dx = 24 * value ** 2  # times dy/dx = 2
    np.testing.assert_allclose(pow_.arrived, [[1.0]])
    np.testing.assert_allclose(pow_.sent[0], [[dz_dy]], rtol=1e-12)
    assert len(pow_.sent) == 1  # the exponent 3 is a parameter, not an input (as PyTorch)
    assert pow_.sends[0].target is z.grad_fn.next[0]
    np.testing.assert_allclose(mul.arrived, [[dz_dy]], rtol=1e-12)
    assert mul.sent[1] is None  # the constant 2 (2 * x is recorded as x * 2, as PyTorch)
    np.testing.assert_allclose(mul.sent[0], [[dz_dx]], rtol=1e-12)
    (acc,) = t.accumulations
    assert acc.tensor is x and acc.before is None
    np.testing.assert_allclose(acc.after, [[dz_dx]], rtol=1e-12)
    np.testing.assert_allclose(acc.after, x.grad.numpy())
    assert pow_.rule == "d(y**p)/dy = p*y**(p-1)"
    assert dict(pow_.saved) == {"y": format_value(np.array([[2 * value]]))}
    assert pow_.constants == [("p", "3")]
    table = t.table()
    for number in (dz_dy, dz_dx):
        assert format_value(np.array([[number]])) in table
    assert "d(y**p)/dy = p*y**(p-1)" in table and "d(a*b)/da = b" in table
    assert "x.grad" in table and "before None -> after" in table
    assert "PowBackward0 (makes z)" in table and "constant: p=3" in table and "-> b = 2" in table
    assert repr(table) == str(table)  # shows as a table in a REPL, not as a quoted string


@pytest.mark.parametrize("retain", [False, True])
def test_freed_events_match_retain_graph(retain):
    x, y, z = seed()
    out = z.mean()
    with T.autograd.trace() as t:
        out.backward(retain_graph=retain)
    # MeanBackward0 saves nothing, so only the two nodes that saved values free them
    expected = [] if retain else ["PowBackward0", "MulBackward0"]
    assert t.freed_nodes == expected
    # 2 * x saves only the constant b = 2 (as PyTorch's MulBackward0: x is not read)
    assert [e.slots for e in t.events if e.kind == "freed"] == ([] if retain else
                                                                 [["y"], ["b"]])
    assert (z.grad_fn.saved is None) == (not retain)
    assert [s.freed for s in t.steps] == [False, not retain, not retain]
    assert ("freed saved y" in t.table()) == (not retain)
    kinds = [e.kind for e in t.events]
    if not retain:  # each node frees right after computing, before sending on
        i = kinds.index("freed")
        assert kinds[i - 1] == "node" and kinds[i + 1] == "sent"


def test_second_backward_error_is_recorded_where_it_happened():
    x, y, z = seed()
    z.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        with T.autograd.trace() as t:
            z.backward()
    assert engine.tracer is None
    (failure,) = [e for e in t.events if e.kind == "error"]
    assert failure.node is z.grad_fn
    assert t.steps[-1].saved_gone
    table = t.table()
    assert "already freed by an earlier backward" in table
    assert "RuntimeError: Trying to backward through the graph a second time" in table


def test_gradient_argument_events():
    x, y, z = seed()
    with T.autograd.trace() as t:
        z.backward(retain_graph=True)
        z.backward(T.tensor([0.1], dtype=T.float64), retain_graph=True)
        z.backward(T.tensor([[0.5]], dtype=T.float64))
    default, scaled, same = [e for e in t.events if e.kind == "gradient"]
    assert default.given is None and "default" in default.how
    np.testing.assert_array_equal(default.used, [[1.0]])
    assert scaled.how.startswith("reshaped from (1,) to (1, 1)")
    np.testing.assert_allclose(scaled.used, [[0.1]])
    assert same.how == "used as given, shape (1, 1)"
    accs = t.accumulations
    dz_dx = 24 * 0.7 ** 2
    # .grad accumulates: each event's before is the previous after
    np.testing.assert_allclose(accs[1].before, accs[0].after)
    np.testing.assert_allclose(accs[2].after, [[dz_dx * (1 + 0.1 + 0.5)]], rtol=1e-12)
    assert t.outputs == [z, z, z]

    x2, y2, z2 = seed(shape=(2, 2))
    with T.autograd.trace() as t:
        z2.backward(T.FloatTensor([1, 0]))
    (g,) = [e for e in t.events if e.kind == "gradient"]
    assert g.how.startswith("broadcast from (2,) to (2, 2)")
    np.testing.assert_array_equal(g.used, [[1, 0], [1, 0]])
    np.testing.assert_allclose(x2.grad.numpy(), [[dz_dx, 0], [dz_dx, 0]], rtol=1e-6)


def test_broadcast_reduction_is_narrated():
    w = T.full((3,), 2.0, dtype=T.float64, requires_grad=True)
    m = T.ones(2, 3, dtype=T.float64)
    out = (w * m).sum()
    with T.autograd.trace({"w": w}) as t:
        out.backward()
    mul = t.step("MulBackward0")
    assert mul.sends[0].value.shape == (2, 3) and mul.sends[0].reduced_to == (3,)
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
    assert "summed over broadcast dims to (3,)" in t.table()
    with pytest.raises(KeyError, match="no node called"):
        t.step("ExpBackward0")


def test_hooks_and_retain_grad_are_narrated():
    x, y, z = seed()
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    x.register_hook(lambda g: None)
    z.grad_fn.register_prehook(lambda gs: None)
    z.grad_fn.register_hook(lambda gi, go: None)
    with T.autograd.trace({"x": x, "y": y}) as t:
        z.backward()
    hooks = [e for e in t.events if e.kind == "hook"]
    assert [h.where for h in hooks] == [
        "pre-hook of PowBackward0", "post-hook of PowBackward0",
        "tensor hook on the output of MulBackward0", "tensor hook on a leaf tensor"]
    dz_dy = 3 * 1.4 ** 2
    doubling = hooks[2]
    np.testing.assert_allclose(doubling.given, [[dz_dy]])
    np.testing.assert_allclose(doubling.returned, [[2 * dz_dy]])
    assert hooks[3].returned is None
    y_acc, x_acc = t.accumulations
    assert y_acc.tensor is y and x_acc.tensor is x
    np.testing.assert_allclose(y_acc.after, [[2 * dz_dy]])  # retain_grad sees the hook's value
    np.testing.assert_allclose(x_acc.after, [[2 * 2 * dz_dy]])
    table = t.table()
    assert "returned None (gradient unchanged)" in table and "y.grad" in table


def test_accumulation_after_is_read_before_post_accumulate_hooks():
    x, y, z = seed()

    def clear(t):  # e.g. an optimizer step that consumes and zeroes the gradient
        t.grad.zero_()

    x.register_post_accumulate_grad_hook(clear)
    with T.autograd.trace() as t:
        z.backward()
    (acc,) = t.accumulations
    np.testing.assert_allclose(acc.after, [[24 * 0.7 ** 2]])
    (hook,) = [e for e in t.events if e.kind == "hook"]
    assert hook.where == "post-accumulate-grad hook" and hook.fn.endswith("clear")
    np.testing.assert_array_equal(hook.given, [[0.0]])  # .grad after the hook ran
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0]])


def test_create_graph_trace_reports_values():
    x, y, z = seed()
    with T.autograd.trace() as t:
        (g,) = T.autograd.grad(z, x, create_graph=True)
    assert [s.name for s in t.steps] == ["PowBackward0", "MulBackward0"]
    np.testing.assert_allclose(t.steps[1].sent[0], [[24 * 0.7 ** 2]])
    assert t.accumulations == []  # grad() returns; nothing lands in .grad
    assert g.grad_fn is not None


def test_no_trace_means_no_tracer_and_nesting_restores():
    assert engine.tracer is None
    x, y, z = seed()
    with T.autograd.trace() as outer:
        with T.autograd.trace() as inner:
            z.backward(retain_graph=True)
        assert engine.tracer is outer
        z.backward()
    assert engine.tracer is None
    assert len(inner.steps) == 2 and len(outer.steps) == 2
    with pytest.raises(ValueError):
        with T.autograd.trace():
            raise ValueError("boom")
    assert engine.tracer is None


def test_trace_draw_is_annotated_with_the_traced_values():
    x, y, z = seed()
    with T.autograd.trace({"x": x, "z": z}) as t:
        z.backward()
    src = t.draw(params={"y": y}).source
    dz_dy = format_value(np.array([[3 * 1.4 ** 2]]), 6)
    dz_dx = format_value(np.array([[24 * 0.49]]), 6)
    assert f"grad back: {dz_dy}" in src and f"grad back: {dz_dx}" in src
    assert "grad in: [[1.]]" in src and f".grad after: {dz_dx}" in src
    assert "saved y freed" in src and "constant p = 3" in src
    assert "backward gradient: [[1.]]" in src
    with pytest.raises(RuntimeError, match="recorded no backward"):
        T.autograd.trace().draw()


def test_rules_in_words_and_unknown_names():
    assert describe_rule("ExpBackward0") == "d exp(a)/da = exp(a) (the saved result)"
    assert "no rule recorded for FooBackward0" in describe_rule("FooBackward0")

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 3 * a ** 2 * g

    x = T.tensor([2.0], requires_grad=True)
    with T.autograd.trace() as t:
        Cube.apply(x).sum().backward()
    assert "custom Function: the rule is Cube.backward()" in t.table()
    np.testing.assert_allclose(x.grad.numpy(), [12.0])


def _all_backward_names():
    """Every grad_fn name the op records define (scanned, so new ops are not forgotten)."""
    names = set()
    for mod_name in ("pointwise", "reduce", "shape", "index", "linalg", "nn", "inplace", "unary",
                     "activation", "stats", "layout", "sorting", "binary", "elementary",
                     "selection", "pointwise_compare", "pointwise_common", "changed_views",
                     "index_assign", "nll", "elementwise_losses",
                     "multi_margin", "linear", "einsum"):
        try:
            mod = importlib.import_module(f"retrograd.ops.{mod_name}")
        except ImportError:
            continue
        for obj in vars(mod).values():
            op = getattr(obj, "op", None)
            cls = getattr(op, "node_cls", None)
            if cls is not None and op.differentiable:
                names.add(cls.__name__)
    return names


def test_every_backward_name_has_a_rule_in_words():
    names = _all_backward_names()
    assert {"MulBackward0", "PowBackward0", "ExpBackward0"} <= names
    missing = sorted(n for n in names if n not in RULES)
    assert missing == [], f"add these to retrograd.autograd.trace_rules.RULES: {missing}"


# --------------------------------------------------------------------------- explain CLI
def test_explain_writes_pictures_and_narrates(tmp_path, capsys):
    require_dot()
    from retrograd.__main__ import main

    assert main(["explain", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    files = sorted(os.listdir(tmp_path))
    svgs = [f for f in files if f.endswith(".svg")]
    pngs = [f for f in files if f.endswith(".png")]
    assert len(svgs) == len(pngs) == 8 and "explain.txt" in files
    assert not any(f.endswith(".dot") for f in files)
    for f in pngs:
        with open(tmp_path / f, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "PowBackward0" in (tmp_path / "1_seed_graph.svg").read_text()
    assert text.count("-> matches") == 8 and "DOES NOT MATCH" not in text
    assert "all gradients match the chain rule" in text
    assert "broadcast from (2,) to (2, 2)" in text
    assert "Trying to backward through the graph a second time" in text
    assert (tmp_path / "explain.txt").read_text().strip().endswith(
        "all gradients match the chain rule")


def test_explain_without_graphviz_writes_dot_files(tmp_path, monkeypatch, capsys):
    from retrograd.__main__ import main

    monkeypatch.setitem(sys.modules, "graphviz", None)  # no Python package
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # and no dot program
    assert main(["explain", "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    files = os.listdir(tmp_path / "out")
    assert len([f for f in files if f.endswith(".dot")]) == 8
    assert not any(f.endswith((".svg", ".png")) for f in files)
    assert "dot program was not found" in text
    assert (tmp_path / "out" / "1_seed_graph.dot").read_text().startswith("digraph")


def test_explain_as_a_module_and_console_script(tmp_path):
    env = dict(os.environ, RETROGRAD_NO_DOT="1")
    proc = subprocess.run([sys.executable, "-m", "retrograd", "explain"], capture_output=True,
                          text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "all gradients match the chain rule" in proc.stdout
    script = shutil.which("retrograd", path=os.path.dirname(sys.executable))
    assert script is not None, "the 'retrograd' console script is not installed (pip install -e .)"
    proc = subprocess.run([script, "explain", "--help"], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 0 and "--out" in proc.stdout


def test_multi_output_node_narrates_each_output():
    class Split(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    a, b = Split.apply(x)
    with T.autograd.trace({"x": x}) as t:
        (a * b).sum().backward()
    split = t.step("SplitBackward")
    # d(sum(2x * 3x))/d(2x) = 3x and /d(3x) = 2x, then back through 2 and 3: 12x
    np.testing.assert_allclose(split.arrived[0], [3.0, 6.0])
    np.testing.assert_allclose(split.arrived[1], [2.0, 4.0])
    np.testing.assert_allclose(split.sent[0], [12.0, 24.0])
    table = t.table()
    assert "[0] [3., 6.]; [1] [2., 4.]" in table
    assert "SplitBackward (its output 1)" in table
    src = t.draw().source
    assert "its output 1 (2,)" in src and "output\\noutput () float64" in src
