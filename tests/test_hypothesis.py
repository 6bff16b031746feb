"""Property tests: random broadcast shapes and random expression graphs, checked against torch.

Hypothesis draws the shapes and the graphs; the same computation runs in retrograd and in
PyTorch 2.13 (float64) and values and leaf gradients must agree to ~1e-6 relative.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import retrograd as R

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-6, 1e-9
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def close(r, t):
    np.testing.assert_allclose(np.asarray(r.detach()), t.detach().numpy(), rtol=RTOL, atol=ATOL)
    assert tuple(r.shape) == tuple(t.shape)


def leaves(arrays):
    """The same float64 leaves in both libraries."""
    return ([R.tensor(a.copy(), requires_grad=True) for a in arrays],
            [torch.tensor(a.copy(), requires_grad=True) for a in arrays])


# ----------------------------------------------------------------------- binary broadcasting
# Each op is given inputs in its smooth region: random floats never sit on a kink or a tie.
BINARY = {
    "add": (lambda a, b: a + b, lambda a: a),
    "sub": (lambda a, b: a - b, lambda a: a),
    "mul": (lambda a, b: a * b, lambda a: a),
    "div": (lambda a, b: a / b, lambda b: np.sign(b) * (np.abs(b) + 0.5)),
    "pow": (lambda a, b: a ** b, lambda a: a),  # base made positive below
    "maximum": (lambda a, b: a.maximum(b) if hasattr(a, "maximum") else a, lambda a: a),
    "minimum": (lambda a, b: a.minimum(b) if hasattr(a, "minimum") else a, lambda a: a),
}


@SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                             min_side=1, max_side=3),
    op=st.sampled_from(sorted(BINARY)),
    seed=st.integers(0, 2**32 - 1),
)
def test_binary_broadcast_values_and_grads(shapes, op, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = rng.standard_normal(sa)
    b = BINARY[op][1](rng.standard_normal(sb))
    if op == "pow":
        a = np.abs(a) + 0.5
    (ra, rb), (ta, tb) = leaves([a, b])
    fn = BINARY[op][0]
    ro, to = fn(ra, rb), fn(ta, tb)
    close(ro, to)
    assert ro.grad_fn.name() == to.grad_fn.name()
    w = rng.standard_normal(tuple(to.shape))
    ro.backward(R.tensor(w))
    to.backward(torch.tensor(w))
    close(ra.grad, ta.grad)
    close(rb.grad, tb.grad)


# ----------------------------------------------------------------------- random graphs
# Unary ops are bounded or applied to bounded values so that deep random graphs stay finite.
UNARY = [
    ("sin", lambda lib, x: x.sin()),
    ("cos", lambda lib, x: x.cos()),
    ("tanh", lambda lib, x: x.tanh()),
    ("sigmoid", lambda lib, x: x.sigmoid()),
    ("exp_tanh", lambda lib, x: x.tanh().exp()),
    ("neg", lambda lib, x: -x),
    ("square", lambda lib, x: x * x),
    ("log1psq", lambda lib, x: (x * x + 1).log()),
    ("sqrt1psq", lambda lib, x: (x * x + 1).sqrt()),
    ("scale", lambda lib, x: x * 0.7 + 0.1),
    ("sum_keep", lambda lib, x: x.sum(-1, keepdim=True) if x.ndim else x),
    ("mean_all", lambda lib, x: x.mean()),
    ("transpose", lambda lib, x: x.transpose(0, 1) if x.ndim == 2 and x.shape[0] == x.shape[1]
     else x),
    ("softmax", lambda lib, x: x.softmax(-1) if x.ndim else x.exp()),
    ("cat_slice", lambda lib, x: lib.cat([x, x * 2], -1)[..., x.shape[-1]:] if x.ndim else x),
    ("flatten_reshape", lambda lib, x: x.flatten().reshape(x.shape)),
    ("expand_sum", lambda lib, x: x.unsqueeze(0).expand(2, *x.shape).sum(0)),
]
BINARY_G = [
    ("add", lambda lib, a, b: a + b),
    ("sub", lambda lib, a, b: a - b),
    ("mul", lambda lib, a, b: a * b),
    ("div", lambda lib, a, b: a / (b * b + 1)),
    ("max", lambda lib, a, b: lib.maximum(a, b * 1.01 + 0.003)),
    ("matmul", lambda lib, a, b: a @ b if a.shape == b.shape == (3, 3) else a * b),
    ("stack_sum", lambda lib, a, b: (lib.stack([a, b]) * lib.tensor(
        [[1.0], [-0.5]] if a.ndim == 1 else [1.0, -0.5] if a.ndim == 0 else [[[1.0]], [[-0.5]]],
        dtype=lib.float64)).sum(0) if a.shape == b.shape else a + b),
    ("where", lambda lib, a, b: lib.where(a > b, a * b, a - b)),
]


@st.composite
def graphs(draw):
    """A random DAG: 2-3 leaves, then ops whose operands are any earlier value (reuse)."""
    n_leaves = draw(st.integers(2, 3))
    shape = draw(st.sampled_from([(), (3,), (2, 3), (3, 3)]))
    # some leaves broadcast against the others
    leaf_shapes = [draw(st.sampled_from([shape, shape[1:], ()])) if i else shape
                   for i in range(n_leaves)]
    steps = []
    n_values = n_leaves
    for _ in range(draw(st.integers(1, 10))):
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)),
                          draw(st.integers(0, n_values - 1))))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY_G) - 1)),
                          draw(st.integers(0, n_values - 1)), draw(st.integers(0, n_values - 1))))
        n_values += 1
    outputs = draw(st.lists(st.integers(0, n_values - 1), min_size=1, max_size=3))
    return leaf_shapes, steps, outputs


def evaluate(lib, xs, steps, outputs):
    values = list(xs)
    for step in steps:
        if step[0] == "u":
            values.append(UNARY[step[1]][1](lib, values[step[2]]))
        else:
            values.append(BINARY_G[step[1]][1](lib, values[step[2]], values[step[3]]))
    # every leaf takes part (so every leaf gets a gradient), plus the chosen outputs
    total = sum((values[i] * values[i]).sum() for i in range(len(xs)))
    for k, i in enumerate(outputs):
        total = total + (values[i] * (k + 1)).sum()
    return total, values


@SETTINGS
@given(graph=graphs(), seed=st.integers(0, 2**32 - 1))
def test_random_graph_values_and_grads(graph, seed):
    leaf_shapes, steps, outputs = graph
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in leaf_shapes]
    rxs, txs = leaves(arrays)
    rl, rvals = evaluate(R, rxs, steps, outputs)
    tl, tvals = evaluate(torch, txs, steps, outputs)
    for rv, tv in zip(rvals, tvals):
        close(rv, tv)
        if tv.grad_fn is not None:
            assert rv.grad_fn.name() == tv.grad_fn.name()
    rl.backward()
    tl.backward()
    for rx, tx in zip(rxs, txs):
        close(rx.grad, tx.grad)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs(), seed=st.integers(0, 2**32 - 1))
def test_random_graph_second_order(graph, seed):
    # grad with create_graph, then the gradient of sum(g * v): a Hessian-vector product
    leaf_shapes, steps, outputs = graph
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in leaf_shapes]
    vs = [rng.standard_normal(s) for s in leaf_shapes]
    results = []
    for lib, xs in zip((R, torch), leaves(arrays)):
        loss, _ = evaluate(lib, xs, steps, outputs)
        gs = lib.autograd.grad(loss, xs, create_graph=True)
        dot = sum((g * lib.tensor(v)).sum() for g, v in zip(gs, vs))
        hv = lib.autograd.grad(dot, xs, allow_unused=True, materialize_grads=True)
        results.append(list(gs) + list(hv))
    for r, t in zip(*results):
        close(r, t)


@SETTINGS
@given(graph=graphs(), seed=st.integers(0, 2**32 - 1))
def test_random_graph_hooks_fire_in_torchs_order(graph, seed):
    # every intermediate value gets a hook that logs its index: the engines must visit the
    # graph in the same order (most recently created ready node first)
    leaf_shapes, steps, outputs = graph
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in leaf_shapes]
    orders = []
    for lib, xs in zip((R, torch), leaves(arrays)):
        log = []
        loss, values = evaluate(lib, xs, steps, outputs)
        seen = set()
        for i, v in enumerate(values):
            if v.grad_fn is not None and id(v) not in seen:
                seen.add(id(v))
                v.register_hook(lambda g, i=i, log=log: log.append(i))
        loss.backward()
        orders.append(log)
    assert orders[0] == orders[1]
