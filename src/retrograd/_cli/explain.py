"""``retrograd explain``: the seed post's backward() examples, narrated step by step.

Each example builds z = (2x)^3, runs one backward inside ``autograd.trace()`` and prints
what the engine did: the gradient argument and how it was broadcast, every node run with
the gradient that arrived and its derivative rule, the gradients it sent on, each saved
buffer freed and each accumulation into ``x.grad``.  The result is checked against the
chain rule worked by hand (dz/dx = 3 (2x)^2 * 2 = 24 x^2).  With ``--out DIR`` it also
draws each graph (SVG and PNG with Graphviz's ``dot``; the ``.dot`` text without it).

Needs nothing but NumPy: the pictures use ``dot`` when it is installed.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import retrograd as T


class _Narrator:
    """Prints the story and writes the pictures; remembers whether every check passed."""

    def __init__(self, out_dir, stream):
        self.out_dir = out_dir
        self.stream = stream
        self.ok = True
        self.dot_missing = None  # the error message once rendering failed for want of dot
        self.written = []
        self.lines = []

    def say(self, text: str = "") -> None:
        print(text, file=self.stream)
        self.lines.append(text)

    def code(self, text: str) -> None:
        for line in text.strip("\n").splitlines():
            self.say("    >>> " + line)

    def check(self, what: str, got, expected) -> None:
        got = np.asarray(got, dtype=np.float64)
        expected = np.asarray(expected, dtype=np.float64)
        good = got.shape == expected.shape and np.allclose(got, expected, rtol=1e-4,
                                                           atol=1e-6)
        self.ok = self.ok and good
        mark = "matches" if good else "DOES NOT MATCH"
        self.say(f"  check: {what}")
        self.say(f"         retrograd  {_fmt(got)}")
        self.say(f"         by hand    {_fmt(expected)}   -> {mark}")

    def picture(self, graph, stem: str, caption: str) -> None:
        if self.out_dir is None:
            return
        from ..viz import GraphvizNotFoundError

        base = os.path.join(self.out_dir, stem)
        files = []
        if self.dot_missing is None:
            try:
                files.append(graph.render(base + ".svg", "svg"))
                files.append(graph.render(base + ".png", "png"))
            except GraphvizNotFoundError as e:
                self.dot_missing = str(e)
                self.say("  (Graphviz's dot program was not found, so the graphs are written as "
                         ".dot text instead of SVG/PNG pictures; install graphviz and rerun, or "
                         "run: dot -Tsvg FILE.dot -o FILE.svg)")
        if self.dot_missing is not None:
            files.append(graph.save(base + ".dot"))
        self.written.extend(files)
        self.say(f"  picture ({caption}): " + ", ".join(files))


def _fmt(a) -> str:
    from ..autograd.trace_events import format_value

    return format_value(a, 8)


def _seed_graph(shape):
    x = T.randn(*shape, requires_grad=True)
    y = 2 * x
    z = y ** 3
    return x, y, z


SETUP = """x = T.randn({shape}, requires_grad=True)   # a leaf: grad_fn is None
y = 2 * x                          # grad_fn=<MulBackward0>
z = y ** 3                         # grad_fn=<PowBackward0>"""


def _run_traced(n, names, call, title, expect_error=False):
    """Run ``call()`` (one backward) inside a trace; print its table; return the trace.

    With ``expect_error`` a RuntimeError is caught (after the trace recorded it) and
    returned as ``(trace, error)``.
    """
    error = None
    try:
        with T.autograd.trace(names) as t:
            call()
    except RuntimeError as e:
        if not expect_error:
            raise
        error = e
    n.say("")
    n.say("  What backward() did, step by step:")
    for line in t.table().splitlines():
        n.say("    " + line)
    return (t, error) if expect_error else t


def _example_default(n, k):
    n.say(f"== {k}. z = (2x)^3 on a 1x1 leaf, z.backward() with the default gradient ==")
    n.say("  z has one element, so backward() may start from the gradient 1 (dz/dz = 1).")
    n.code(SETUP.format(shape="1, 1") + "\nz.backward()")
    x, y, z = _seed_graph((1, 1))
    names = {"x": x, "y": y, "z": z}
    n.picture(T.viz.draw({"z": z}, params=names, title="z = (2x)^3 before backward()"),
              f"{k}_seed_graph", "the graph before backward")
    t = _run_traced(n, names, lambda: z.backward(), "z.backward()")
    xv = x.detach().numpy()
    n.check("x.grad = dz/dx = 3 y^2 * 2 = 24 x^2", x.grad.numpy(), 24 * xv ** 2)
    n.say("  y.grad stays None: y is not a leaf (call y.retain_grad() before backward to keep "
          "it).")
    n.picture(t.draw(title="z.backward(): the traced gradients"), f"{k}_default_gradient",
              "after backward, with the traced gradients")
    return t


def _example_scaled(n, k):
    n.say(f"== {k}. The same, with the gradient 0.1: z.backward(T.FloatTensor([0.1])) ==")
    n.say("  The gradient argument is dL/dz for some later L: every gradient is scaled by it.")
    n.code(SETUP.format(shape="1, 1") + "\nz.backward(T.FloatTensor([0.1]))")
    x, y, z = _seed_graph((1, 1))
    names = {"x": x, "y": y, "z": z}
    t = _run_traced(n, names, lambda: z.backward(T.FloatTensor([0.1])), "")
    n.check("x.grad = 0.1 * 24 x^2", x.grad.numpy(), 0.1 * 24 * x.detach().numpy() ** 2)
    n.picture(t.draw(title="z.backward(T.FloatTensor([0.1]))"), f"{k}_gradient_0.1",
              "after backward")
    return t


def _example_2x2(n, k):
    n.say(f"== {k}. A 2x2 x: the gradient weights the elements of z ==")
    n.say("  z has four elements: backward() needs a weight for each. A 2-element weight is "
          "broadcast")
    n.say("  to 2x2 as NumPy broadcasts (every row gets it), so [1, 0] picks the first column.")
    n.code(SETUP.format(shape="2, 2"))
    x, y, z = _seed_graph((2, 2))
    names = {"x": x, "y": y, "z": z}
    xv = x.detach().numpy()
    traces = []
    for j, w in enumerate(([1, 0], [0, 1], [1, 1])):
        n.say("")
        if j:
            n.code("x.grad.data.zero_()   # .grad accumulates: clear it between backward calls")
            x.grad.data.zero_()
        n.code(f"z.backward(T.FloatTensor({w}), retain_graph=True)")
        t = _run_traced(n, names, lambda w=w: z.backward(T.FloatTensor(w),
                                                             retain_graph=True), "")
        weight = np.broadcast_to(np.asarray(w, dtype=np.float64), (2, 2))
        n.check(f"x.grad = 24 x^2 * {w} (broadcast)", x.grad.numpy(), 24 * xv ** 2 * weight)
        n.say("  retain_graph=True: no saved value was freed, so backward can run again.")
        stem = f"{k}_2x2_gradient_{w[0]}{w[1]}"
        n.picture(t.draw(title=f"z.backward(T.FloatTensor({w}), retain_graph=True)"), stem,
                  "after backward")
        traces.append(t)
    return traces


def _example_mean(n, k):
    n.say(f"== {k}. Reduce first: out = z.mean(); out.backward() ==")
    n.say("  A one-element output needs no gradient argument; the mean spreads 1/4 to each "
          "element.")
    n.code(SETUP.format(shape="2, 2") + "\nout = z.mean()\nout.backward()")
    x, y, z = _seed_graph((2, 2))
    out = z.mean()
    names = {"x": x, "y": y, "z": z, "out": out}
    t = _run_traced(n, names, lambda: out.backward(), "")
    n.check("x.grad = 24 x^2 / 4 = 6 x^2", x.grad.numpy(), 6 * x.detach().numpy() ** 2)
    n.picture(t.draw(title="out = z.mean(); out.backward()"), f"{k}_mean", "after backward")
    return t


def _example_retain_error(n, k):
    n.say(f"== {k}. Backward twice without retain_graph: an error ==")
    n.say("  Each node frees the values it saved for its derivative as soon as it has run; a "
          "second")
    n.say("  backward through the same graph finds them gone.")
    n.code(SETUP.format(shape="2, 2") + "\nout = z.mean()\nout.backward()\nout.backward()")
    x, y, z = _seed_graph((2, 2))
    out = z.mean()
    names = {"x": x, "y": y, "z": z, "out": out}
    t = _run_traced(n, names, lambda: out.backward(), "")
    n.say(f"  freed after the first backward: {', '.join(t.freed_nodes)}")
    n.picture(t.draw(title="after the first out.backward(): saved values freed"),
              f"{k}_retain_graph_freed", "after the first backward: what was freed")
    t2, error = _run_traced(n, names, lambda: out.backward(), "", expect_error=True)
    if error is None:
        n.ok = False
        n.say("  the second backward did NOT raise: retrograd should have said RuntimeError")
    else:
        failed_at = t2.steps[-1].name if t2.steps else "?"
        n.say(f"  the second backward stopped at {failed_at} with RuntimeError:")
        for line in _wrap_text(str(error), 92):
            n.say("    " + line)
        n.say("  Fix: out.backward(retain_graph=True) the first time.")
    return t, error


def _example_forward(n, k):
    import retrograd.autograd.forward_ad as fwAD

    n.say(f"== {k}. Forward mode beside reverse mode: the same 24 x^2 ==")
    n.say("  Forward mode carries a tangent (the derivative along a direction v) with every "
          "value, op")
    n.say("  by op, in the forward pass itself: one pass gives J v. z is elementwise, so with "
          "v = 1")
    n.say("  (every element) z's tangent is dz/dx = 24 x^2; reverse mode gets it from "
          "z.backward(1).")
    n.code("import retrograd.autograd.forward_ad as fwAD\n"
           "with fwAD.dual_level():\n"
           "    xd = fwAD.make_dual(x.detach(), T.ones_like(x))   # tangent v = 1\n"
           "    y = 2 * xd                # tangent 2 v\n"
           "    z = y ** 3                # tangent 3 y^2 * (2 v)\n"
           "    dz = fwAD.unpack_dual(z).tangent\n"
           "z.backward(T.ones_like(z))    # reverse mode, on the graph of x")
    x, y, z = _seed_graph((2, 2))
    with fwAD.dual_level():
        xd = fwAD.make_dual(x.detach(), T.ones_like(x))
        yd = 2 * xd
        zd = yd ** 3
        ty, tz = fwAD.unpack_dual(yd).tangent, fwAD.unpack_dual(zd).tangent
    z.backward(T.ones_like(z))
    xv = x.detach().numpy()
    w = 42
    n.say(f"  {'step':<10}{'forward: the tangent':<{w}}reverse: the gradient")
    n.say(f"  {'x':<10}{_fmt(np.ones_like(xv)):<{w}}x.grad = {_fmt(x.grad.numpy())}")
    n.say(f"  {'y = 2x':<10}{_fmt(ty.numpy()):<{w}}(dz/dy = 3 y^2, times dy/dx = 2)")
    n.say(f"  {'z = y^3':<10}{_fmt(tz.numpy()):<{w}}(starts here: dz/dz = 1)")
    n.check("z's tangent (forward mode) = 24 x^2", tz.numpy(), 24 * xv ** 2)
    n.check("x.grad (reverse mode) = 24 x^2", x.grad.numpy(), 24 * xv ** 2)
    n.say("  Forward mode needs one pass per input direction, reverse mode one per output: "
          "for one")
    n.say("  loss of many parameters, reverse; for few inputs and many outputs, forward.")
    return tz


def _wrap_text(text, width):
    import textwrap

    return textwrap.wrap(text, width)


def explain(out_dir=None, seed: int = 0, stream=None) -> bool:
    """Run the seed post's examples one by one, narrating each backward.

    Parameters
    ----------
    out_dir : str, optional
        Where to write the graph pictures (SVG and PNG with Graphviz's ``dot``, else
        ``.dot`` files) and ``explain.txt``, the narration.
    seed : int
        Seed for ``retrograd.manual_seed`` (the examples draw x at random).
    stream : file, optional
        Where to print (default: stdout).

    Returns
    -------
    bool
        True when every gradient matched the chain rule worked by hand.
    """
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    n = _Narrator(out_dir, stream if stream is not None else sys.stdout)
    T.manual_seed(seed)
    n.say("retrograd explain: the seed post's backward() examples, step by step")
    n.say("z = (2x)^3, so by the chain rule dz/dx = dz/dy * dy/dx = 3 y^2 * 2 = 24 x^2.")
    n.say("")
    examples = (_example_default, _example_scaled, _example_2x2, _example_mean,
                _example_retain_error, _example_forward)
    for k, example in enumerate(examples, 1):
        example(n, k)
        n.say("")
    if out_dir is not None:
        path = os.path.join(out_dir, "explain.txt")
        n.written.append(path)
        n.say(f"{len(n.written)} files written to {out_dir} (this text: {path})")
    n.say("all gradients match the chain rule" if n.ok else
          "SOME GRADIENTS DID NOT MATCH THE CHAIN RULE")
    if out_dir is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(n.lines) + "\n")
    return n.ok


def add_parser(sub) -> None:
    """The ``explain`` subcommand's options, on the ``retrograd`` command's subparsers."""
    import argparse

    p = sub.add_parser("explain", help="narrate the seed post's backward() examples",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write the graph pictures (and the narration) into DIR")
    p.add_argument("--seed", type=int, default=0, help="random seed for x (default 0)")
    p.set_defaults(run=lambda args: 0 if explain(args.out, args.seed) else 1)
