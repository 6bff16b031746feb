"""Threads: concurrent backward into shared leaves, per-thread modes, shared lazy state.

PyTorch documents concurrent backward as safe (on separate graphs, and on one graph kept
with ``retain_graph=True``): gradients from every thread add up in ``.grad``.  In NumPy
``grad += g`` is a read-add-write that releases the GIL inside the add, so these tests use
big arrays, several threads, many iterations and a tiny switch interval, and they assert
EXACT totals: the values are small integers, whose float64 sums are exact whatever the
order of the additions.  Each total is also compared with PyTorch running the same threads.
"""

import sys
import threading
import time

import numpy as np
import pytest

import retrograd as R
from retrograd.autograd import engine

N_THREADS = 6
SIZE = 50_000  # big enough for NumPy to release the GIL inside each add


@pytest.fixture(autouse=True)
def fast_switching():
    """Switch threads as often as CPython allows, so that a race shows up at once."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def run_threads(work, n=N_THREADS):
    """Run ``work(k)`` for k in range(n) in n threads released together; re-raise errors."""
    start = threading.Barrier(n)
    errors = []

    def body(k):
        try:
            start.wait(10)
            work(k)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    if errors:
        raise errors[0]


def as_np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# --------------------------------------------------------------------------- .grad totals
def _shared_graph(lib, iters, retain=True):
    """Threads backward through ONE graph (retain_graph) into two leaves (and a retain_grad)."""
    x = lib.zeros(SIZE, dtype=lib.float64, requires_grad=True)
    w = lib.ones(SIZE, dtype=lib.float64, requires_grad=True)
    h = x * 2 + w  # d/dx = 2, d/dw = 1
    if retain:
        h.retain_grad()
    y = (h * 3).sum()  # so x.grad += 6, w.grad += 3, h.grad += 3 per backward

    def work(k):
        for _ in range(iters):
            y.backward(retain_graph=True)

    run_threads(work)
    return x.grad, w.grad, h.grad if retain else None


def test_concurrent_backward_on_shared_graph_loses_nothing(torch):
    iters = 150
    n = N_THREADS * iters
    gx, gw, gh = _shared_graph(R, iters)
    # PyTorch 2.13 itself loses retain_grad updates under concurrent backward (and can
    # crash), so the oracle runs the leaves concurrently and retain_grad once
    tx, tw, _ = _shared_graph(torch, iters, retain=False)
    np.testing.assert_array_equal(as_np(tx), 6 * n)  # the oracle itself is exact
    np.testing.assert_array_equal(as_np(gx), as_np(tx))
    np.testing.assert_array_equal(as_np(gw), as_np(tw))
    t0 = torch.zeros(SIZE, dtype=torch.float64, requires_grad=True)
    th = t0 * 2 + 1
    th.retain_grad()
    (th * 3).sum().backward()
    np.testing.assert_array_equal(as_np(gh), n * as_np(th.grad))


def _separate_graphs(lib, iters):
    """Each thread builds its own graphs, all ending in the same two leaves."""
    x = lib.zeros(SIZE, dtype=lib.float64, requires_grad=True)
    w = lib.zeros(SIZE, dtype=lib.float64, requires_grad=True)

    def work(k):
        for _ in range(iters):
            ((x * (k + 1)).sum() + (w * x).sum() + w.sum()).backward()

    run_threads(work)
    return x.grad, w.grad


def test_concurrent_backward_on_separate_graphs_into_same_leaves(torch):
    iters = 100
    gx, gw = _separate_graphs(R, iters)
    tx, tw = _separate_graphs(torch, iters)
    # d/dx = k + 1 + w (w stays 0), d/dw = x + 1 (x stays 0)
    np.testing.assert_array_equal(as_np(tx), iters * sum(range(1, N_THREADS + 1)))
    np.testing.assert_array_equal(as_np(gx), as_np(tx))
    np.testing.assert_array_equal(as_np(gw), as_np(tw))
    np.testing.assert_array_equal(as_np(gw), N_THREADS * iters)


def _create_graph_accumulation(lib, iters):
    """With create_graph, .grad is replaced by grad + g (out of place), also a race."""
    x = lib.zeros(SIZE, dtype=lib.float64, requires_grad=True)

    def work(k):
        for _ in range(iters):
            (x * 2).sum().backward(create_graph=True)

    run_threads(work)
    return x.grad


@pytest.mark.filterwarnings(r"ignore:Using backward\(\) with create_graph=True")
def test_concurrent_create_graph_backward_into_same_leaf(torch):
    iters = 150
    g = _create_graph_accumulation(R, iters)
    t = _create_graph_accumulation(torch, iters)
    np.testing.assert_array_equal(as_np(t), 2 * N_THREADS * iters)
    np.testing.assert_array_equal(as_np(g), as_np(t))


def _hook_calls(lib, iters):
    x = lib.zeros(SIZE, dtype=lib.float64, requires_grad=True)
    h = x * 1
    y = (h * 2).sum()
    seen = {"leaf": [], "mid": [], "post_acc": [], "node": []}
    # list.append is atomic: a count short of the number of backwards is a lost call
    x.register_hook(lambda g: seen["leaf"].append(float(g[0])))
    h.register_hook(lambda g: seen["mid"].append(float(g[0])))
    x.register_post_accumulate_grad_hook(lambda t: seen["post_acc"].append(1))
    y.grad_fn.register_hook(lambda gi, go: seen["node"].append(1))

    def work(k):
        for _ in range(iters):
            y.backward(retain_graph=True)

    run_threads(work)
    calls = {k: (len(v), sum(v)) for k, v in seen.items()}
    calls["grad"] = float(as_np(x.grad).min()), float(as_np(x.grad).max())
    return calls


def test_hooks_of_concurrent_backwards_all_fire(torch):
    iters = 100
    n = N_THREADS * iters
    want = _hook_calls(torch, iters)
    assert want == {"leaf": (n, 2 * n), "mid": (n, 2 * n), "post_acc": (n, n), "node": (n, n),
                    "grad": (2 * n, 2 * n)}
    assert _hook_calls(R, iters) == want


def _race_to_free(lib, rounds):
    """Threads backward at once through one graph WITHOUT retain_graph."""
    x = lib.zeros(SIZE, dtype=lib.float64, requires_grad=True)
    done, errors = [], []
    for _ in range(rounds):
        y = (x.exp() * 2).sum()  # ExpBackward0 saves its output: freed by the first pass

        def work(k, y=y):
            try:
                y.backward()
                done.append(k)
            except RuntimeError as exc:
                errors.append(str(exc))

        run_threads(work)
    return x.grad, len(done), errors


def test_concurrent_backward_without_retain_graph_runs_or_says_freed(torch):
    # a pass that started before the saved values were freed completes (it holds them);
    # any later one raises PyTorch's error; no other failure, and no gradient lost
    rounds = 30
    for lib in (torch, R):
        grad, done, errors = _race_to_free(lib, rounds)
        assert done >= rounds and done + len(errors) == rounds * N_THREADS
        assert all(e.startswith("Trying to backward through the graph a second time")
                   for e in errors), errors[:1]
        np.testing.assert_array_equal(as_np(grad), 2 * done)  # exp(0) * 2 per pass


# --------------------------------------------------------------------------- lazily shared state
def _register_at_once(tensor, register_two):
    """Each thread registers two hooks on ``tensor`` (or its node) at the same moment."""
    fired = []

    def work(k):
        register_two(tensor, lambda *a: fired.append(k), lambda *a: fired.append(-1 - k))

    run_threads(work)
    return fired


def test_hooks_registered_at_once_on_a_fresh_node_all_fire():
    # a node's hook table is created on the first registration: two threads registering
    # the first hook at once must not each create a table and lose the other's hook
    def register_two(y, hook, prehook):
        y.register_hook(hook)
        y.grad_fn.register_prehook(prehook)

    for _ in range(150):
        y = R.ones(3, requires_grad=True) * 2
        fired = _register_at_once(y, register_two)
        y.sum().backward()
        assert sorted(fired) == list(range(-N_THREADS, N_THREADS))


def test_one_accumulate_grad_per_leaf_when_threads_build_graphs_at_once():
    # the leaf's AccumulateGrad is created by the first op that uses it; threads that use a
    # fresh leaf at once must share one (a hook on it has to see every graph's gradient)
    for _ in range(150):
        x = R.ones(3, requires_grad=True)
        outs = [None] * N_THREADS

        def work(k, x=x, outs=outs):
            outs[k] = x * (k + 1)

        run_threads(work)
        accs = {id(o.grad_fn.next_functions[0][0]) for o in outs}
        assert len(accs) == 1


def test_leaf_extra_state_created_once_under_concurrent_hook_registration():
    def register_two(x, hook, post_hook):
        x.register_hook(hook)
        x.register_post_accumulate_grad_hook(post_hook)

    for _ in range(150):
        x = R.ones(3, requires_grad=True)
        fired = _register_at_once(x, register_two)
        (x * 2).sum().backward()
        assert sorted(fired) == list(range(-N_THREADS, N_THREADS))


def test_version_counter_shared_by_views_counts_every_bump(torch):
    # threads write disjoint views of one base in place; the base's version counter
    # (shared by the views) must count every write, as PyTorch's atomic counter does
    iters = 300
    versions = []
    for lib in (R, torch):
        base = lib.zeros(N_THREADS, 1000, dtype=lib.float64)
        views = [base[k] for k in range(N_THREADS)]

        def work(k, views=views):
            for _ in range(iters):
                views[k].add_(1)

        run_threads(work)
        np.testing.assert_array_equal(as_np(base), iters)
        versions.append(base._version)
    assert versions[0] == versions[1] == N_THREADS * iters


def _second_derivatives_beside_first_order(lib, iters):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            time.sleep(0)  # some work first: lets other threads' backward start
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = Cube.apply(x).sum()
    second = []

    def work(k):
        for _ in range(iters):
            if k % 2:
                (g,) = lib.autograd.grad(y, x, retain_graph=True, create_graph=True)
                (gg,) = lib.autograd.grad(g.sum(), x)
                second.append(as_np(gg).tolist())
            else:
                lib.autograd.grad(y, x, retain_graph=True)

    run_threads(work)
    return second


def test_custom_function_saved_tensors_per_thread_on_a_shared_graph(torch):
    # two kinds of backward at once through one custom Function node: with create_graph
    # its saved tensor must stay differentiable, whatever the other threads unpack
    iters = 150
    want = _second_derivatives_beside_first_order(torch, iters)
    assert want == [[6.0, 12.0, 18.0]] * (N_THREADS // 2 * iters)
    assert _second_derivatives_beside_first_order(R, iters) == want


# --------------------------------------------------------------------------- per-thread modes
def test_thread_modes_match_torch(torch):
    # grad mode and inference mode are per thread (a new thread starts with grad on and
    # inference off); anomaly detection is process-wide, check_nan flag included
    import warnings

    results = []
    for lib in (R, torch):
        seen = {}

        def probe(tag, lib=lib, seen=seen):
            seen[tag] = (lib.is_grad_enabled(), lib.is_inference_mode_enabled(),
                         lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())

        def in_thread(fn):
            t = threading.Thread(target=fn)
            t.start()
            t.join()

        def setter(lib=lib):
            lib.set_grad_enabled(False)
            lib.autograd.set_detect_anomaly(True, check_nan=False)
            probe("worker_after_set")

        with lib.no_grad():
            in_thread(lambda: probe("under_no_grad"))
        with lib.inference_mode():
            in_thread(lambda: probe("under_inference"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                in_thread(lambda: probe("under_anomaly"))
        in_thread(setter)
        probe("main_after_worker_set")
        lib.autograd.set_detect_anomaly(False)
        probe("main_after_reset")
        results.append(seen)
    assert results[0] == results[1]
    assert results[0]["main_after_worker_set"] == (True, False, True, False)


def test_backward_and_no_grad_in_one_thread_do_not_stop_recording_in_another():
    # backward turns grad mode off in its own thread while it runs (first order), and
    # no_grad blocks come and go: another thread building graphs meanwhile keeps recording
    stop = threading.Event()
    not_recorded = []

    def disabler(k):
        x = R.ones(SIZE, requires_grad=True)
        while not stop.is_set():
            (x * 2).sum().backward()
            with R.no_grad():
                x * 2
            with R.inference_mode():
                x * 2

    def recorder(k):
        x = R.ones(4, requires_grad=True)
        for _ in range(3000):
            if not (x * 2).requires_grad:
                not_recorded.append(1)
        stop.set()

    run_threads(lambda k: recorder(k) if k == 0 else disabler(k), n=3)
    assert not_recorded == []


def test_trace_records_only_its_own_thread():
    x = R.tensor([1.0, 2.0], requires_grad=True)
    w = R.tensor([3.0, 4.0], requires_grad=True)
    in_worker = {}
    release = threading.Event()
    traced = threading.Event()

    def worker():
        release.wait(10)
        in_worker["tracer"] = engine.tracer
        for _ in range(20):
            (w * w).sum().backward()  # not part of the main thread's trace
        traced.set()

    t = threading.Thread(target=worker)
    t.start()
    with R.autograd.trace() as tr:
        release.set()
        traced.wait(10)
        (x * 3).sum().backward()
    t.join()
    assert in_worker["tracer"] is None
    assert [s.name for s in tr.steps] == ["SumBackward0", "MulBackward0"]
    assert [a.tensor is x for a in tr.accumulations] == [True]
    np.testing.assert_array_equal(as_np(w.grad), 20 * 2 * np.array([3.0, 4.0]))
