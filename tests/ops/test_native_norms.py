"""Op tests, ``native_layer_norm`` and ``native_batch_norm`` (ops/native_norms.py): the
output and its gradients (input, weight, bias), the statistics' values and shapes, the
running statistics' update."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

# the output only (its gradients); the statistics, which carry no gradient by PyTorch's
# convention though they depend on the input, are compared in the test below the table
CASES = [
    Case("native_layer_norm", lambda m, x, w, b: m.native_layer_norm(x, [4], w, b, 1e-5)[0],
         ((2, 3, 4), (4,), (4,))),
    Case("native_layer_norm_two_dims", lambda m, x: m.native_layer_norm(
        x, (3, 4), None, None, 1e-5)[0], ((2, 3, 4),)),
    Case("native_batch_norm_training", lambda m, x, w, b: m.native_batch_norm(
        x, w, b, None, None, True, 0.1, 1e-5)[0], ((4, 3, 2), (3,), (3,))),
    Case("native_batch_norm_eval", lambda m, x: m.native_batch_norm(
        x, None, None, m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype), False, 0.1,
        1e-5)[0], ((4, 3),)),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


@pytest.mark.parametrize("call", [
    lambda m, x: m.native_layer_norm(x, [2], None, None, 1e-5),
    lambda m, x: m.native_layer_norm(x, (3, 2), None, None, 1e-5),
    lambda m, x: m.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
    lambda m, x: m.native_batch_norm(x, None, None, m.zeros(3, dtype=x.dtype),
                                     m.ones(3, dtype=x.dtype), False, 0.1, 1e-5),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_statistics_as_torch(call, dtype, torch):
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    got = []
    for m in (retrograd, torch):
        out = call(m, m.tensor(x, dtype=getattr(m, dtype), requires_grad=True))
        got.append([(t.detach().numpy(), str(t.dtype).split(".")[-1], t.requires_grad)
                    for t in out])
    for (g, gd, gr), (w, wd, wr) in zip(*got):
        assert g.shape == w.shape and gd == wd and gr == wr
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_running_statistics_update_as_torch(torch):
    x = np.random.default_rng(0).standard_normal((5, 3, 2))
    got = []
    for m in (retrograd, torch):
        rm, rv = m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)
        out = m.native_batch_norm(m.tensor(x), None, None, rm, rv, True, 0.2, 1e-5)
        got.append([t.numpy() for t in (*out, rm, rv)])
    for g, w in zip(*got):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
