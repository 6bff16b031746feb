"""Op tests, activation: nn.functional activations (ops/activation.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


case("F.leaky_relu", lambda m, a: nnf(m).leaky_relu(a, 0.2), ((3, 4),), "nonzero")
case("F.leaky_relu_default", lambda m, a: nnf(m).leaky_relu(a), ((3, 4),), "nonzero")
case("F.softplus", lambda m, a: nnf(m).softplus(a), ((3, 4),))
case("F.softplus_beta", lambda m, a: nnf(m).softplus(a * 10, beta=2, threshold=5), ((3, 4),))
case("F.silu", lambda m, a: nnf(m).silu(a), ((3, 4),))
case("F.elu", lambda m, a: nnf(m).elu(a, alpha=0.7), ((3, 4),), "nonzero")
case("F.logsigmoid", lambda m, a: nnf(m).logsigmoid(a * 5), ((3, 4),))
case("F.hardtanh", lambda m, a: nnf(m).hardtanh(a * 2, -1.5, 1.0), ((3, 4),))
case("F.relu6", lambda m, a: nnf(m).relu6(a * 8), ((3, 4),))
case("F.gelu", lambda m, a: nnf(m).gelu(a * 2), ((3, 4),))
case("F.gelu_tanh", lambda m, a: nnf(m).gelu(a * 2, approximate="tanh"), ((3, 4),))
case("F.relu", lambda m, a: nnf(m).relu(a), ((2, 3),), "nonzero")
case("F.sigmoid", lambda m, a: nnf(m).sigmoid(a), ((2, 3),))
case("F.tanh", lambda m, a: nnf(m).tanh(a), ((2, 3),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
