"""Timings for retrograd.viz and autograd.trace (numbers to read, not tests).

1. ``draw()`` of a 10,000-node graph: how long producing the DOT text takes (a chain, and
   a wider graph where every node also reuses an earlier value), and with ``max_nodes``.
2. What tracing costs when no trace is active: the seed example's backward (z = (2x)^3)
   run 20,000 times with the engine as shipped versus the same engine with every
   ``if trace is not None`` statement removed from its source (ast), interleaved
   round-robin; and, for scale, the same backward inside an active trace.

Run ``python bench/viz_dot.py`` (about half a minute).
"""

from __future__ import annotations

import ast
import gc
import inspect
import os
import statistics
import sys
import time
import types

try:  # run from a checkout without installing
    import retrograd as T
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as T

from retrograd.autograd import engine


def _best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_draw(n=10_000):
    x = T.ones(3, requires_grad=True)
    h = x
    for _ in range(n):
        h = h * 1.0001
    chain = h
    # a wider graph: each step also adds a value from ~10 steps back (shared inputs, fan-in 2)
    vals = [T.ones(3, requires_grad=True)]
    for _ in range(n // 3):  # three nodes per step
        vals.append(vals[-1] * 0.5 + vals[max(0, len(vals) - 10)] * 0.25)
    wide = vals[-1]
    for label, out in (("chain", chain), ("fan-in", wide)):
        seconds = _best(lambda out=out: T.viz.draw(out))
        g = T.viz.draw(out)
        print(f"draw(): {label:6s} graph of {g.node_count:,} nodes -> {len(g.source):,} chars "
              f"of DOT in {seconds * 1e3:.1f} ms ({seconds / g.node_count * 1e6:.2f} us/node)")
    seconds = _best(lambda: T.viz.draw(chain, max_nodes=100))
    print(f"draw(max_nodes=100): {n + 1:,}-node chain -> DOT in {seconds * 1e3:.1f} ms")


def _untraced_engine():
    """The engine module recompiled with every ``if trace/tracer is not None`` removed."""
    source = inspect.getsource(engine)

    class Strip(ast.NodeTransformer):
        def visit_If(self, node):  # noqa: N802 - ast's name
            self.generic_visit(node)
            test = node.test
            if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                    and test.left.id in ("trace", "tracer")
                    and isinstance(test.ops[0], ast.IsNot)):
                return node.orelse or None
            return node

    tree = ast.fix_missing_locations(Strip().visit(ast.parse(source)))
    stripped = ast.unparse(tree)
    assert "trace." not in stripped and "tracer." not in stripped, "a trace call survived"
    module = types.ModuleType("retrograd.autograd._engine_untraced")
    module.__package__ = "retrograd.autograd"
    exec(compile(tree, "<engine without trace checks>", "exec"), module.__dict__)
    module.above = engine.above  # the Tensor class and ops the package's assembly handed in
    module.Node.__call__ = engine._node_call  # the copy attached its own; keep the shipped one
    return module


def bench_trace_overhead(n=20_000, rounds=11):
    T.manual_seed(0)
    x = T.randn(1, 1, requires_grad=True)
    z = (2 * x) ** 3

    def run():
        for _ in range(n):
            z.backward(retain_graph=True)

    shipped = engine.run_backward
    bare = _untraced_engine().run_backward
    results = {"shipped (no trace active)": [], "trace checks removed": []}
    try:
        for _ in range(rounds):
            for name, fn in (("shipped (no trace active)", shipped),
                             ("trace checks removed", bare)):
                engine.run_backward = fn
                gc.collect()
                t0 = time.perf_counter()
                run()
                results[name].append((time.perf_counter() - t0) / n)
    finally:
        engine.run_backward = shipped
    with T.autograd.trace() as t:
        t0 = time.perf_counter()
        for _ in range(n // 10):
            z.backward(retain_graph=True)
        traced = (time.perf_counter() - t0) / (n // 10)
    print(f"seed backward (z = (2x)^3, retain_graph=True), {n:,} times, median of {rounds} "
          "interleaved rounds:")
    med = {k: statistics.median(v) for k, v in results.items()}
    for k, v in med.items():
        print(f"  {k:28s} {v * 1e6:7.2f} us per backward")
    ratios = [a / b for a, b in zip(results["shipped (no trace active)"],
                                    results["trace checks removed"])]
    print(f"  paired ratio shipped / removed: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    print(f"  inside an active trace:      {traced * 1e6:7.2f} us per backward "
          f"({len(t.events):,} events recorded)")


if __name__ == "__main__":
    bench_draw()
    bench_trace_overhead()
