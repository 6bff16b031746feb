"""Chains of unary pointwise derivatives run block by block (autograd/fused_chain.py).

The fused path must give exactly the bits of the one-node-at-a-time path, and it must not
run where anything could observe the nodes it fuses or the order they run in: hooks of any
kind, retain_grad, captures (``autograd.grad``, ``inputs=``), create_graph, anomaly mode,
tracing (``autograd.trace()``, compile), forward AD, saved-tensor hooks, a node that also
receives a root gradient or whose output is used twice.  Values are checked against torch.

The thresholds are lowered (``small_blocks``) so that tiny tensors take the fused path in
several blocks, the last one partial.
"""

import threading

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd.autograd import engine, fused_chain


@pytest.fixture
def fused(monkeypatch):
    """Lower the thresholds; returns the list of chains run (node names, in order)."""
    monkeypatch.setattr(engine, "CHAIN_MIN", 16)
    monkeypatch.setattr(fused_chain, "_BLOCK_BYTES", 96)  # (2 rows of 5 float64 a block)
    chains = []
    real = engine.run_chain

    def spy(chain, g, prev):
        chains.append([node.name() for node, _, _ in chain])
        return real(chain, g, prev)

    monkeypatch.setattr(engine, "run_chain", spy)
    return chains


def _x0(shape=(9, 5), seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _chain(lib, x, cycles=2):
    h = x
    for _ in range(cycles):
        h = h + lib.exp(lib.tanh(lib.sin(h))) * 0.1
    return h


def _unfused_grad(x0, monkeypatch, build=_chain):
    monkeypatch.setattr(engine, "CHAIN_MIN", 1 << 62)
    x = R.tensor(x0, requires_grad=True)
    build(R, x).sum().backward()
    monkeypatch.setattr(engine, "CHAIN_MIN", 16)
    return x.grad.numpy()


def _torch_grad(x0, build=_chain):
    xt = torch.tensor(x0, requires_grad=True)
    build(torch, xt).sum().backward()
    return xt.grad.numpy()


_FULL = ["MulBackward0", "ExpBackward0", "TanhBackward0", "SinBackward0"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(9, 5), (45,), (3, 3, 5), (1, 45)])
def test_fused_chain_is_bit_for_bit_the_unfused_one_and_torchs(fused, monkeypatch, dtype,
                                                               shape):
    x0 = _x0(shape, dtype=dtype)
    x = R.tensor(x0, requires_grad=True)
    _chain(R, x).sum().backward()
    assert fused == [_FULL, _FULL]
    got = x.grad.numpy()
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(got, _unfused_grad(x0, monkeypatch))
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got, _torch_grad(x0), rtol=tol, atol=tol)


def test_backward_gradient_argument_is_read_not_written(fused):
    x0 = _x0()
    v = R.tensor(np.full((9, 5), 2.0))
    x = R.tensor(x0, requires_grad=True)
    y = R.exp(R.tanh(R.sin(x))) * 0.5
    y.backward(v)
    assert fused == [_FULL]
    np.testing.assert_array_equal(v.numpy(), np.full((9, 5), 2.0))
    assert not np.shares_memory(x.grad.numpy(), v.numpy())
    xt = torch.tensor(x0, requires_grad=True)
    (torch.exp(torch.tanh(torch.sin(xt))) * 0.5).backward(torch.full((9, 5), 2.0,
                                                                     dtype=torch.float64))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_a_tensor_hook_splits_the_chain_and_sees_its_gradient_unchanged(fused):
    x0 = _x0()
    seen = {}

    def build(lib, x, key):
        t = lib.tanh(lib.sin(x))
        def hook(g):
            seen[key] = g.clone()

        t.register_hook(hook)
        return lib.exp(t) * 0.1

    x = R.tensor(x0, requires_grad=True)
    build(R, x, "rg").sum().backward()
    xt = torch.tensor(x0, requires_grad=True)
    build(torch, xt, "torch").sum().backward()
    # tanh's node carries the hook: Mul and Exp fuse above it, Tanh runs alone, Sin alone
    assert fused == [["MulBackward0", "ExpBackward0"]]
    np.testing.assert_allclose(seen["rg"].numpy(), seen["torch"].numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_retain_grad_inside_the_chain(fused):
    x0 = _x0()

    def build(lib, x):
        s = lib.sin(x)
        s.retain_grad()
        return s, lib.exp(lib.tanh(s)) * 0.1

    x = R.tensor(x0, requires_grad=True)
    s, y = build(R, x)
    y.sum().backward()
    xt = torch.tensor(x0, requires_grad=True)
    st, yt = build(torch, xt)
    yt.sum().backward()
    assert ["SinBackward0"] not in fused and all("SinBackward0" not in c for c in fused)
    np.testing.assert_allclose(s.grad.numpy(), st.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_node_hooks_keep_their_node_out_of_the_chain(fused):
    x0 = _x0()
    calls = []
    x = R.tensor(x0, requires_grad=True)
    e = R.exp(R.tanh(R.sin(x)))
    e.grad_fn.register_hook(lambda gi, go: calls.append(gi[0].numpy().copy()))
    (e * 0.1).sum().backward()
    assert all("ExpBackward0" not in c for c in fused)
    xt = torch.tensor(x0, requires_grad=True)
    et = torch.exp(torch.tanh(torch.sin(xt)))
    tcalls = []
    et.grad_fn.register_hook(lambda gi, go: tcalls.append(gi[0].detach().numpy().copy()))
    (et * 0.1).sum().backward()
    np.testing.assert_allclose(calls[0], tcalls[0], rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_a_prehook_on_a_node(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    t = R.tanh(R.sin(x))
    t.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    (R.exp(t) * 0.1).sum().backward()
    xt = torch.tensor(x0, requires_grad=True)
    tt = torch.tanh(torch.sin(xt))
    tt.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    (torch.exp(tt) * 0.1).sum().backward()
    assert all("TanhBackward0" not in c for c in fused)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_autograd_grad_and_inputs_capture_without_fusion(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    s = R.sin(x)
    y = (R.exp(R.tanh(s)) * 0.1).sum()
    gs, gx = R.autograd.grad(y, (s, x))
    xt = torch.tensor(x0, requires_grad=True)
    st = torch.sin(xt)
    yt = (torch.exp(torch.tanh(st)) * 0.1).sum()
    gst, gxt = torch.autograd.grad(yt, (st, xt))
    assert fused == []
    np.testing.assert_allclose(gs.numpy(), gst.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx.numpy(), gxt.numpy(), rtol=1e-12, atol=1e-12)
    x2 = R.tensor(x0, requires_grad=True)
    _chain(R, x2).sum().backward(inputs=[x2])
    assert fused == []
    np.testing.assert_allclose(x2.grad.numpy(), _torch_grad(x0), rtol=1e-12, atol=1e-12)


def test_an_output_used_twice_ends_the_chain(fused):
    x0 = _x0()

    def build(lib, x):
        t = lib.tanh(lib.sin(x))
        return lib.exp(t) * 0.1 + t * 3

    x = R.tensor(x0, requires_grad=True)
    build(R, x).sum().backward()
    # t has two consumers: the chain from the product stops above tanh, whose node runs
    # once both gradients arrived (summed), as the head of a chain of its own
    assert fused == [["MulBackward0", "ExpBackward0"], ["TanhBackward0", "SinBackward0"]]
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0, build), rtol=1e-12,
                               atol=1e-12)


def test_a_root_inside_the_chain_gets_both_gradients(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    t = R.tanh(R.sin(x))
    y = R.exp(t) * 0.1
    R.autograd.backward([y.sum(), t.sum()])
    xt = torch.tensor(x0, requires_grad=True)
    tt = torch.tanh(torch.sin(xt))
    yt = torch.exp(tt) * 0.1
    torch.autograd.backward([yt.sum(), tt.sum()])
    # tanh's node has a root gradient waiting: the chain from the product stops above it
    assert fused == [["MulBackward0", "ExpBackward0"], ["TanhBackward0", "SinBackward0"]]
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_retain_graph_keeps_saved_values_and_a_second_pass_agrees(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    y = _chain(R, x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    assert len(fused) == 4
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_saved_values_are_freed_after_a_fused_pass(fused):
    x = R.tensor(_x0(), requires_grad=True)
    y = _chain(R, x, cycles=1).sum()
    y.backward()
    assert fused == [_FULL]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_a_saved_value_changed_in_place_raises_as_without_fusion(fused):
    x = R.tensor(_x0(), requires_grad=True)
    t = R.tanh(R.sin(x))
    y = R.exp(t) * 0.1
    with R.no_grad():
        t.mul_(2)  # tanh saved its output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # the chain stopped above tanh (its saved value unpacks with an error), and tanh's
    # node raised in its turn
    assert fused == [["MulBackward0", "ExpBackward0"]]


def test_create_graph_records_without_fusion(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    (g,) = R.autograd.grad(_chain(R, x).sum(), x, create_graph=True)
    assert fused == []
    g.sum().backward()  # (first order, partly through the first graph's nodes)
    xt = torch.tensor(x0, requires_grad=True)
    (gt,) = torch.autograd.grad(_chain(torch, xt).sum(), xt, create_graph=True)
    gt.sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_and_tracing_run_one_node_at_a_time(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    with R.autograd.detect_anomaly():
        _chain(R, x).sum().backward()
    assert fused == []
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0), rtol=1e-12, atol=1e-12)
    x.grad = None
    with R.autograd.trace():
        _chain(R, x).sum().backward()
    assert fused == []
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0), rtol=1e-12, atol=1e-12)


def test_compiled_step_matches_eager(fused):
    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)

    def step():
        x.grad = None
        _chain(R, x).sum().backward()
        return x.grad

    compiled = R.compile(step)
    for _ in range(3):
        got = compiled().numpy().copy()
        np.testing.assert_allclose(got, _torch_grad(x0), rtol=1e-12, atol=1e-12)


def test_forward_ad_level_runs_one_node_at_a_time(fused):
    import retrograd.autograd.forward_ad as fwAD

    x0 = _x0()
    x = R.tensor(x0, requires_grad=True)
    with fwAD.dual_level():
        _chain(R, x).sum().backward()
    assert fused == []
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0), rtol=1e-12, atol=1e-12)


def test_saved_tensor_hooks_keep_their_nodes_out(fused):
    x0 = _x0()
    packed = []

    def pack(t):
        packed.append(1)
        return t

    x = R.tensor(x0, requires_grad=True)
    with R.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = _chain(R, x).sum()
    y.backward()
    assert packed and fused == []  # (every node here saved through the hooks)
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0), rtol=1e-12, atol=1e-12)


def test_layouts_and_dtypes_that_do_not_chain(fused):
    # a transposed saved input (not C-contiguous) and a cast in the middle
    x0 = _x0((5, 9))

    def build(lib, x):
        return lib.exp(lib.tanh(lib.sin(x.t()))) * 0.1

    x = R.tensor(x0, requires_grad=True)
    build(R, x).sum().backward()
    assert all("SinBackward0" not in c for c in fused)
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0, build), rtol=1e-12,
                               atol=1e-12)
    fused.clear()

    def cast(lib, x):
        return lib.exp(lib.tanh(lib.sin(x).float())) * 0.1

    x = R.tensor(x0, requires_grad=True)
    cast(R, x).sum().backward()
    assert all("SinBackward0" not in c for c in fused)
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0, cast), rtol=1e-5, atol=1e-6)


def test_a_broadcast_gradient_into_the_chain(fused):
    x0 = _x0()

    def build(lib, x):
        return lib.exp(lib.tanh(lib.sin(x))) * 0.1 + lib.ones(5, dtype=lib.float64)

    x = R.tensor(x0, requires_grad=True)
    build(R, x).sum().backward()  # (sum's gradient: a broadcast view of one number)
    assert fused == [_FULL[:3]] or fused == [_FULL]
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(x0, build), rtol=1e-12,
                               atol=1e-12)


def test_threads_running_fused_backwards_at_once(fused):
    seeds = range(6)
    results = {}

    def work(seed):
        x = R.tensor(_x0(seed=seed), requires_grad=True)
        for _ in range(5):
            x.grad = None
            _chain(R, x, cycles=3).sum().backward()
        results[seed] = x.grad.numpy()

    threads = [threading.Thread(target=work, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in seeds:
        np.testing.assert_allclose(results[s], _torch_grad(_x0(seed=s),
                                                          lambda lib, x: _chain(lib, x, 3)),
                                   rtol=1e-12, atol=1e-12)


def test_nodes_of_another_branch_run_when_they_would_without_fusion(fused):
    # b's node was created between sin's and tanh's: the one-node loop runs it after tanh's
    # and before sin's, so the chain from the product stops above sin; the leaves' hooks
    # fire in torch's order
    x0, w0 = _x0(), _x0(seed=1)

    def build(lib, order):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        x.register_hook(lambda g: order.append("x"))
        w.register_hook(lambda g: order.append("w"))
        s = lib.sin(x)
        b = lib.exp(w)
        y = lib.exp(lib.tanh(s)) * 0.1 + b
        y.sum().backward()
        return x, w

    order, torder = [], []
    x, w = build(R, order)
    xt, wt = build(torch, torder)
    assert fused == [["MulBackward0", "ExpBackward0", "TanhBackward0"]]
    assert order == torder
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)
