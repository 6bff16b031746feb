"""Resources: backward's work and memory grow linearly with the graph, long training loops
keep memory flat, and every kind of saved value is freed by backward.

tests/test_engine.py already runs a 10^6-node chain (no recursion, safe teardown), checks
that a sin chain's saved inputs are freed as backward runs (weakref, tracemalloc) and that
graphs die by reference counting alone; this file covers what it does not.  No timing: work
is counted as the function calls the profiler sees (Python and C), which does not depend on
the load of the machine, and memory with tracemalloc.
"""

import gc
import sys
import tracemalloc
import weakref

import numpy as np
import pytest

import retrograd as R


# --------------------------------------------------------------------------- linear work
def _count_calls(fn):
    """How many Python and C function calls ``fn()`` makes (a load-independent work count)."""
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event == "call" or event == "c_call":
            calls += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def _chain(n):
    x = R.tensor(0.5, dtype=R.float64, requires_grad=True)
    h = x
    for _ in range(n):
        h = (h * 0.999).sin()
    return x, h


def _ladder(n):
    # every step feeds two paths into the next: a walk that revisited nodes per path
    # would be exponential, one that rescans the graph per node quadratic
    x = R.tensor(0.5, dtype=R.float64, requires_grad=True)
    h = x
    for _ in range(n):
        h = h.sin() * 0.5 + h.cos() * 0.5
    return x, h


def _fan_in(n):
    # one leaf used n times: n gradients meet in one AccumulateGrad
    x = R.tensor(0.5, dtype=R.float64, requires_grad=True)
    h = x * 0.5
    for _ in range(n):
        h = h + x
    return x, h


def _backward(build, n, **kw):
    x, y = build(n)

    def run():
        if kw.get("create_graph"):
            R.autograd.grad(y, x, create_graph=True)
        else:
            y.backward()

    return _count_calls(run)


@pytest.mark.parametrize("build", [_chain, _ladder, _fan_in])
def test_backward_work_is_linear_in_graph_size(build):
    n = 2000
    small, big = _backward(build, n), _backward(build, 4 * n)
    # 4x the nodes, 4x the calls (a few fixed calls aside); n log n would give ~4.7x here
    assert 3.9 * small < big < 4.1 * small, (small, big)


def test_create_graph_backward_work_is_linear_in_graph_size():
    n = 1000
    small = _backward(_chain, n, create_graph=True)
    big = _backward(_chain, 4 * n, create_graph=True)
    assert 3.9 * small < big < 4.1 * small, (small, big)


def test_backward_peak_memory_is_linear_in_chain_length():
    # the engine's own bookkeeping (dependency counts, buffers, ready heap) during backward
    def peak_of_backward(n):
        x, y = _chain(n)
        gc.collect()
        tracemalloc.start()
        try:
            y.backward()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    n = 5000
    small, big = peak_of_backward(n), peak_of_backward(4 * n)
    assert 3 * small < big < 5 * small, (small, big)


# --------------------------------------------------------------------------- flat memory
class Cube(R.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class SquareAndCube(R.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2, x ** 3

    @staticmethod
    def backward(ctx, g2, g3):
        (x,) = ctx.saved_tensors
        return g2 * 2 * x + g3 * 3 * x ** 2


def _step_backward(w, x):
    loss = ((x @ w).tanh() ** 2).mean()
    loss.backward()


def _step_retain_grad_and_hooks(w, x):
    h = x @ w
    h.retain_grad()
    handle = w.register_hook(lambda g: g * 1.0)
    post = w.register_post_accumulate_grad_hook(lambda t: None)
    loss = (h.exp() * 0.01).sum()
    loss.backward()
    handle.remove()
    post.remove()
    assert h.grad is not None


def _step_double_backward(w, x):
    loss = ((x @ w).tanh() ** 2).sum()
    (g,) = R.autograd.grad(loss, w, create_graph=True)
    (g * g).sum().backward()


def _step_custom_function_and_inplace(w, x):
    h = Cube.apply((x @ w).tanh())
    h = h.clone()
    h.mul_(0.5)
    h[0] = 0.0
    h.sum().backward()


def _step_retain_graph_twice(w, x):
    loss = (x @ w).sigmoid().sum()
    loss.backward(retain_graph=True)
    loss.backward()


@pytest.mark.parametrize("step", [_step_backward, _step_retain_grad_and_hooks,
                                  _step_double_backward, _step_custom_function_and_inplace,
                                  _step_retain_graph_twice])
def test_training_loop_memory_stays_flat(step):
    # nothing may survive an iteration: not a node, a saved array, a hook table or a
    # gradient.  The cyclic collector is off, so a reference cycle counts as a leak too.
    rng = np.random.default_rng(0)
    w = R.tensor(rng.standard_normal((64, 32)) * 0.1, requires_grad=True)
    x = R.tensor(rng.standard_normal((16, 64)))

    def block(iters):
        for _ in range(iters):
            step(w, x)
            with R.no_grad():
                w.sub_(0.01 * w.grad)
            w.grad = None

    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        block(20)  # warm up caches (dtype tables, lazily built classes)
        # gc.collect() also empties CPython's free lists, which tracemalloc counts as used
        cycles = [gc.collect()]
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        block(60)
        cycles.append(gc.collect())
        mid, peak_first = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        block(120)
        cycles.append(gc.collect())
        end, peak_second = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert cycles[1:] == [0, 0], "the loop made reference cycles (freed only by the gc)"
    # a leak of one 64x32 float64 array per step would add 16 kB an iteration, 1.9 MB here;
    # allow a few kB of noise
    assert end - start < 16_000, (start, mid, end)
    assert peak_second < peak_first + 64_000, (peak_first, peak_second)


# --------------------------------------------------------------------------- saved values
def _saved_arrays(node, leaf):
    """Weak references to every array (and tensor) a node saved for its derivative, except
    the leaf, which the test itself holds."""
    refs = []
    for s in node.saved:
        if s is leaf:
            continue
        if isinstance(s, R.Tensor):
            refs += [weakref.ref(s), weakref.ref(s._data)]
        elif isinstance(s, np.ndarray):  # e.g. the indices of max(dim)
            refs.append(weakref.ref(s))
        elif isinstance(getattr(s, "data", None), np.ndarray):  # a saved output
            refs.append(weakref.ref(s.data))
    return refs


SAVING_OPS = {
    "exp (saves its output)": lambda h: h.exp(),
    "tanh (saves its output)": lambda h: h.tanh(),
    "mul (saves both inputs)": lambda h: h * h.cos(),
    "matmul": lambda h: h @ h.t(),
    "max over dim (saves indices)": lambda h: h.max(dim=1).values,
    "softmax": lambda h: h.softmax(dim=1),
    "pow": lambda h: h ** 3,
    "custom Function": lambda h: Cube.apply(h),
    "custom Function, two outputs": lambda h: sum(SquareAndCube.apply(h)),
}


@pytest.mark.parametrize("how", ["backward", "grad", "create_graph"])
@pytest.mark.parametrize("op", list(SAVING_OPS), ids=list(SAVING_OPS))
def test_saved_values_are_freed_by_backward(op, how):
    x = R.tensor(np.random.default_rng(1).standard_normal((8, 8)), requires_grad=True)
    y = SAVING_OPS[op](x * 1.5)  # the intermediate lives only in what the nodes saved
    loss = y.sum()
    refs = []
    stack, seen = [y.grad_fn], set()
    while stack:  # every node of the graph, with whatever it saved
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        refs += _saved_arrays(node, x)
        stack += [n for n, _ in node.next_functions]
    del y
    assert refs and all(r() is not None for r in refs)
    if how == "backward":
        loss.backward()
    elif how == "grad":
        R.autograd.grad(loss, x)
    else:
        # retain_graph defaults to create_graph: the graph (and what it saved) is kept...
        (g,) = R.autograd.grad(loss, x, create_graph=True)
        assert all(r() is not None for r in refs)
        # ...until a backward without retain_graph runs through it
        del g
        R.autograd.grad(loss, x)
    assert [r() for r in refs] == [None] * len(refs), op
