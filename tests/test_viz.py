"""retrograd.viz.draw: the DOT text of known graphs, and real rendering with Graphviz's dot.

Tests that render need the ``dot`` program (``make test`` installs Debian's graphviz).  They
fail when it is missing, unless RETROGRAD_NO_DOT=1 says this machine deliberately has none.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd.trace_events import format_value
from retrograd.viz import Graph, GraphvizNotFoundError, draw


def require_dot():
    """Fail (not skip) when Graphviz's dot is missing, unless RETROGRAD_NO_DOT=1."""
    if shutil.which("dot") is not None:
        return
    if os.environ.get("RETROGRAD_NO_DOT") == "1":
        pytest.skip("RETROGRAD_NO_DOT=1: this machine has no Graphviz dot program")
    pytest.fail("Graphviz's 'dot' program is not installed, so rendering cannot be tested. "
                "Install it (apt-get install graphviz; `make test` does this when root) or set "
                "RETROGRAD_NO_DOT=1 to skip the rendering tests deliberately.")


_NODE = re.compile(r'^  (\w+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
_EDGE = re.compile(r"^  (\w+) -> (\w+)(?: \[(.*)\])?;$")


def parse_dot(source):
    """``({id: label}, {id: attrs}, [(tail, head, attrs)])`` from draw()'s DOT text."""
    labels, attrs, edges = {}, {}, []
    for line in source.splitlines():
        m = _NODE.match(line)
        if m:
            labels[m.group(1)] = m.group(2).replace("\\n", "\n")
            attrs[m.group(1)] = m.group(3)
            continue
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2), m.group(3) or ""))
    return labels, attrs, edges


def seed_graph(shape=(1, 1), value=0.7):
    x = T.full(shape, value, dtype=T.float64, requires_grad=True)
    y = 2 * x
    z = y ** 3
    return x, y, z


def by_first_line(labels):
    return {label.split("\n")[0]: node for node, label in labels.items()}


# --------------------------------------------------------------------------- DOT text
def test_seed_graph_has_exactly_the_expected_nodes_and_edges():
    x, y, z = seed_graph()
    g = draw({"z": z}, params={"x": x, "y": y})
    labels, _, edges = parse_dot(g.source)
    first = by_first_line(labels)
    # 2 * x saves only the constant 2 (as PyTorch's MulBackward0: x is not read)
    assert sorted(first) == sorted(["z", "PowBackward0", "MulBackward0", "x", "saved y"])
    pow_, mul, leaf = first["PowBackward0"], first["MulBackward0"], first["x"]
    out, saved_y = first["z"], first["saved y"]
    # data flows from the leaf x through 2*x and **3 to the output z; saved values hang
    # off the node that saved them
    assert sorted((a, b) for a, b, _ in edges) == sorted([
        (leaf, mul), (mul, pow_), (pow_, out), (saved_y, pow_)])
    assert g.node_count == 3 and g.drawn == 3
    assert "leaf (1, 1) float64" in labels[leaf]
    assert "output (1, 1) float64" in labels[out]
    assert "d(y**p)/dy = p*y**(p-1)" in labels[pow_]
    assert "constant p = 3" in labels[pow_]
    assert "constant b = 2" in labels[mul]
    assert "[[1.4]]" in labels[saved_y]  # y = 2 * 0.7, saved by y ** 3
    edge_labels = {(a, b): lab for a, b, lab in edges}
    assert "y (1, 1)" in edge_labels[(mul, pow_)]
    assert "x (1, 1)" in edge_labels[(leaf, mul)]


def test_unnamed_leaves_are_labelled_by_shape_and_dtype():
    x = T.ones(2, 3, requires_grad=True)
    w = T.ones(3, dtype=T.float64, requires_grad=True)
    out = (x * w).sum()
    labels, _, edges = parse_dot(draw(out).source)
    leaves = [lab for lab in labels.values() if lab.startswith("leaf tensor")]
    assert sorted(lab.split("\n")[1] for lab in leaves) == [
        "leaf (2, 3) float32, requires_grad", "leaf (3,) float64, requires_grad"]
    assert any(lab.startswith("output\noutput () float64") for lab in labels.values())


def test_shared_input_gets_one_node_and_two_edges():
    x = T.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    b = x + 1
    c = a * b
    labels, _, edges = parse_dot(draw(c, params={"x": x}, show_saved=False).source)
    first = by_first_line(labels)
    assert sorted(lab.split("\n")[0] for lab in labels.values()) == [
        "AddBackward0", "MulBackward0", "MulBackward0", "output", "x"]
    leaf = first["x"]
    into_leaf_consumers = [b for a, b, _ in edges if a == leaf]
    assert len(into_leaf_consumers) == 2 and len(set(into_leaf_consumers)) == 2
    assert len(edges) == 5  # x->mul, x->add, mul->mul, add->mul, mul->output


def test_saved_values_shown_then_marked_freed_after_backward():
    x, y, z = seed_graph()
    before = parse_dot(draw(z).source)[0]
    assert sum(lab.startswith("saved ") for lab in before.values()) == 1  # y (2 * x: only 2)
    z.backward(retain_graph=True)
    kept = parse_dot(draw(z).source)[0]
    assert sum(lab.startswith("saved ") for lab in kept.values()) == 1
    assert not any("freed" in lab for lab in kept.values())
    z.backward()  # without retain_graph: both nodes free what they saved
    assert z.grad_fn.saved is None
    after = parse_dot(draw(z).source)[0]
    freed = [lab for lab in after.values() if "freed" in lab]
    assert len(freed) == 2
    assert not any(lab.startswith("saved y") and "freed" not in lab for lab in after.values())


def test_show_saved_false_draws_no_saved_nodes():
    x, y, z = seed_graph()
    labels, _, edges = parse_dot(draw(z, show_saved=False).source)
    assert not any(n.startswith("s") for n in labels)
    assert len(edges) == 3


def test_show_grads_annotates_leaves_with_their_grad():
    x, y, z = seed_graph(value=0.5)
    labels = parse_dot(draw(z, params={"x": x}, show_grads=True).source)[0]
    assert ".grad = None" in labels[by_first_line(labels)["x"]]
    z.backward()
    labels = parse_dot(draw(z, params={"x": x}, show_grads=True).source)[0]
    expected = format_value(np.array([[24 * 0.5 ** 2]]), 6)  # dz/dx = 24 x^2 = 6
    assert f".grad (1, 1), norm 6\n= {expected}" in labels[by_first_line(labels)["x"]]
    assert expected == "[[6.]]"
    big = T.ones(4, 4, requires_grad=True)
    (big * 3).sum().backward()
    labels = parse_dot(draw(big, show_grads=True).source)[0]
    text = "\n".join(labels.values())
    assert ".grad (4, 4), norm 12" in text  # sqrt(16 * 3**2) = 12: shape and norm, no values


def test_hooks_and_retain_grad_are_marked():
    x, y, z = seed_graph()
    x.register_hook(lambda g: g)
    y.retain_grad()
    y.register_hook(lambda g: None)
    z.grad_fn.register_prehook(lambda gs: None)
    z.grad_fn.register_hook(lambda gi, go: None)
    g = draw(z, params={"x": x, "y": y}, show_grads=True)
    labels, attrs, _ = parse_dot(g.source)
    first = by_first_line(labels)
    assert "hooks on this tensor: 1" in labels[first["x"]]
    assert "color=red" in attrs[first["x"]]
    mul = labels[first["MulBackward0"]]
    assert "1 hook(s) on its output" in mul and "retain_grad(): y keeps .grad" in mul
    assert "y.grad = None" in mul
    assert "1 pre-hook(s), 1 post-hook(s)" in labels[first["PowBackward0"]]
    assert "Red border: hooks" in g.source
    assert "Red border" not in draw(seed_graph()[2]).source
    z.backward()
    labels = parse_dot(draw(z, params={"x": x, "y": y}, show_grads=True).source)[0]
    dz_dy = 3 * (2 * 0.7) ** 2
    assert f"y.grad (1, 1), norm {dz_dy:.4g}\n= {format_value(np.array([[dz_dy]]), 6)}" in labels[
        by_first_line(labels)["MulBackward0"]]


def test_several_outputs_and_a_leaf_output():
    x = T.tensor([1.0, 2.0], requires_grad=True)
    a = x.exp()
    b = x * 3
    labels, _, edges = parse_dot(draw([a, b, x], params={"x": x}).source)
    outs = [n for n in labels if n.startswith("o")]
    assert len(outs) == 3
    assert labels["o0"].startswith("output 0") and labels["o2"].startswith("x")
    (leaf,) = [n for n, lab in labels.items() if n.startswith("n") and lab.startswith("x\n")]
    assert (leaf, "o2", "") in edges
    assert "saved result" in "\n".join(labels.values())  # exp saves its own output


def test_output_that_needs_no_grad_is_drawn_alone():
    t = T.ones(2)
    labels, _, edges = parse_dot(draw(t).source)
    assert list(labels) == ["o0"] and "does not require grad" in labels["o0"]
    assert edges == []


def test_max_nodes_collapses_the_rest_into_a_summary_node():
    x = T.ones(3, requires_grad=True)
    h = x
    for _ in range(50):
        h = h * 1.5
    g = draw(h, max_nodes=10)
    labels, _, edges = parse_dot(g.source)
    assert g.node_count == 51 and g.drawn == 10
    assert len([n for n in labels if re.fullmatch(r"n\d+", n)]) == 10
    assert "41 more nodes not drawn" in labels["more"]
    assert ("more", "n9", "style=dashed") in edges
    full = draw(h)
    assert full.drawn == 51 and "more" not in parse_dot(full.source)[0]


def test_ten_thousand_node_graph_makes_dot_text():
    # a long chain: the walk is iterative, so no recursion limit is hit
    x = T.ones(1, requires_grad=True)
    h = x
    for _ in range(10_000):
        h = h * 1.0
    g = draw(h)
    assert g.node_count == 10_001
    assert g.source.count("MulBackward0") == 10_000


def test_format_errors_and_repr():
    x, y, z = seed_graph()
    g = draw(z)
    with pytest.raises(ValueError, match="format must be one of"):
        g.render("/tmp/never", format="gif")
    assert "1 more" not in repr(g) and "3 of 3 nodes" in repr(g)


# --------------------------------------------------------------------------- rendering
def test_svg_parses_as_xml_and_names_the_nodes(tmp_path):
    require_dot()
    x, y, z = seed_graph()
    g = draw({"z": z}, params={"x": x})
    path = g.render(tmp_path / "seed", format="svg")
    assert path.endswith("seed.svg")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    texts = {el.text for el in root.iter() if el.tag.endswith("text")}
    for name in ("PowBackward0", "MulBackward0", "x", "z"):
        assert name in texts, (name, sorted(t for t in texts if t))
    svg = g._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "PowBackward0" in svg


def test_png_and_pdf_signatures(tmp_path):
    require_dot()
    x, y, z = seed_graph()
    g = draw(z)
    png = g.render(tmp_path / "seed.png")  # format from the suffix
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    pdf = g.render(tmp_path / "seed", format="pdf")
    with open(pdf, "rb") as f:
        assert f.read(5) == b"%PDF-"


def test_graphviz_reads_the_structure_we_meant(tmp_path):
    require_dot()
    x, y, z = seed_graph()
    source = draw({"z": z}, params={"x": x, "y": y}).source
    proc = subprocess.run(["dot", "-Tjson"], input=source.encode(), capture_output=True,
                          check=True)
    data = json.loads(proc.stdout)
    names = {o["_gvid"]: o["label"].split("\\n")[0] for o in data["objects"]}
    pairs = sorted((names[e["tail"]], names[e["head"]]) for e in data["edges"])
    assert pairs == sorted([("x", "MulBackward0"), ("MulBackward0", "PowBackward0"),
                            ("PowBackward0", "z"), ("saved y", "PowBackward0")])


def test_render_without_the_graphviz_package_runs_dot_directly(tmp_path, monkeypatch):
    require_dot()
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz -> ImportError
    x, y, z = seed_graph()
    path = draw(z).render(tmp_path / "g.svg")
    assert "MulBackward0" in open(path).read()


@pytest.mark.parametrize("has_package", [True, False])
def test_render_without_dot_says_what_to_install(tmp_path, monkeypatch, has_package):
    if not has_package:
        monkeypatch.setitem(sys.modules, "graphviz", None)
    else:
        pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on PATH
    x, y, z = seed_graph()
    g = draw(z)
    with pytest.raises(GraphvizNotFoundError, match="apt-get install graphviz") as info:
        g.render(tmp_path / "g.svg")
    assert "retrograd[viz]" in str(info.value) and "graph.source" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert not (tmp_path / "g.svg").exists()
    with pytest.warns(RuntimeWarning, match="dot"):
        assert g._repr_svg_() is None  # a notebook falls back to the text repr
    saved = g.save(tmp_path / "g.dot")  # the DOT text needs nothing
    assert open(saved).read() == g.source


def test_graph_objects_can_be_built_from_dot_text():
    g = Graph("digraph { a -> b }\n", 2, 2)
    assert g.source.startswith("digraph")
