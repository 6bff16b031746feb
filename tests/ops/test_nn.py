"""Op tests, nn: softmax, log_softmax, losses (ops/nn.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, IDX2, IGNORED, nnf, PROBS, TARGET, TARGET5D, WEIGHT

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


case("softmax_dtype", lambda m, a: a.softmax(-1, dtype=m.float64), ((2, 3),), gc={"eps": 1e-3})

# nn
for _dim in (0, 1, -1):
    case(f"softmax{_dim}", lambda m, a, dim: a.softmax(dim), ((3, 4),), params={"dim": _dim})
    case(f"log_softmax{_dim}", lambda m, a, dim: nnf(m).log_softmax(a, dim=dim), ((3, 4),),
         params={"dim": _dim})
case("softmax_fn", lambda m, a: m.softmax(a, 1), ((2, 3, 4),))
case("log_softmax_method", lambda m, a: a.log_softmax(-1), ((2, 3),))
case("special.softmax", lambda m, a: m.special.softmax(a, 1), ((2, 3, 4),))
case("special.log_softmax", lambda m, a: m.special.log_softmax(a, dim=0, dtype=m.float64),
     ((3, 4),))
for _red in ("mean", "sum", "none"):
    case(f"cross_entropy_{_red}",
         lambda m, a, reduction: nnf(m).cross_entropy(a, m.tensor(TARGET), reduction=reduction),
         ((4, 5),), params={"reduction": _red})
    case(f"mse_loss_{_red}",
         lambda m, a, b, reduction: nnf(m).mse_loss(a, b, reduction=reduction),
         ((3, 4), (3, 4)), params={"reduction": _red})
case("nll_loss", lambda m, a: nnf(m).nll_loss(a, m.tensor(TARGET)), ((4, 5),))
# label smoothing: PyTorch's formula, with weights and ignored targets (the mean divides by
# the kept targets' weight), and mixed into class probabilities
for _red in ("mean", "sum", "none"):
    kw = {"reduction": _red, "label_smoothing": 0.2}
    case(f"cross_entropy_smoothing_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(IGNORED), weight=m.tensor(WEIGHT, dtype=a.dtype), **kw), ((4, 5),),
        params=kw)
    case(f"cross_entropy_smoothing_probs_{_red}", lambda m, a, t, **kw: nnf(m).cross_entropy(
        a, t.softmax(1), **kw), ((4, 5), (4, 5)), params=kw)
case("cross_entropy_smoothing_1d", lambda m, a: nnf(m).cross_entropy(
    a, m.tensor(3), label_smoothing=0.1), ((5,),))
for _red in ("mean", "sum", "none"):
    kw = {"reduction": _red}
    case(f"bce_{_red}", lambda m, a, **kw: nnf(m).binary_cross_entropy(
        a.sigmoid(), m.tensor(PROBS, dtype=a.dtype), **kw), ((2, 3),), params=kw)
    case(f"bce_weight_{_red}", lambda m, a, **kw: nnf(m).binary_cross_entropy(
        a.sigmoid(), m.tensor(PROBS, dtype=a.dtype), weight=m.tensor(WEIGHT[:3], dtype=a.dtype),
        **kw), ((2, 3),), params=kw)
    case(f"bce_target_grad_{_red}", lambda m, a, t, **kw: nnf(m).binary_cross_entropy(
        a.sigmoid(), t.sigmoid(), **kw), ((2, 3), (2, 3)), params=kw)
    case(f"bce_logits_{_red}", lambda m, a, t, **kw: nnf(m).binary_cross_entropy_with_logits(
        a * 5, t.sigmoid(), **kw), ((2, 3), (2, 3)), params=kw)
    case(f"l1_loss_{_red}", lambda m, a, b, **kw: nnf(m).l1_loss(a, b, **kw), ((2, 3), (2, 3)),
         params=kw)
case("bce_logits_weight", lambda m, a: nnf(m).binary_cross_entropy_with_logits(
    a, m.tensor(PROBS, dtype=a.dtype), weight=m.tensor(WEIGHT[:3], dtype=a.dtype)), ((2, 3),))
for _red in ("mean", "sum", "none"):
    kw = {"reduction": _red}
    case(f"cross_entropy_weight_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(TARGET), weight=m.tensor(WEIGHT, dtype=a.dtype), **kw), ((4, 5),), params=kw)
    case(f"cross_entropy_ignore_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(IGNORED), **kw), ((4, 5),), params=kw)
    case(f"nll_loss_ignore_weight_{_red}", lambda m, a, **kw: nnf(m).nll_loss(
        a.log_softmax(1), m.tensor(np.where(TARGET == 4, 7, TARGET)), ignore_index=7,
        weight=m.tensor(WEIGHT, dtype=a.dtype), **kw), ((4, 5),), params=kw)
    case(f"cross_entropy_ignore_valid_class_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(TARGET), ignore_index=4, **kw), ((4, 5),), params=kw)
    case(f"cross_entropy_5d_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(TARGET5D), **kw), ((2, 3, 2, 2, 1),),
        params=kw)
    case(f"cross_entropy_unbatched_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(3), **kw), ((5,),), params=kw)
    case(f"cross_entropy_kdim_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(IDX2[:2] % 5), **kw), ((2, 5, 2),), params=kw)
    case(f"cross_entropy_4d_{_red}", lambda m, a, **kw: nnf(m).cross_entropy(
        a, m.tensor(IDX2[:2, :, None].repeat(2, 2) % 3), **kw), ((2, 3, 2, 2),), params=kw)
    case(f"cross_entropy_probs_{_red}", lambda m, a, p, **kw: nnf(m).cross_entropy(
        a, p.softmax(1), **kw), ((4, 5), (4, 5)), params=kw)
    case(f"cross_entropy_probs_weight_{_red}", lambda m, a, p, **kw: nnf(m).cross_entropy(
        a, p.softmax(1), weight=m.tensor(WEIGHT, dtype=a.dtype), **kw),
        ((4, 5), (4, 5)), params=kw)


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_dropout_masks_and_scales():
    """Dropout zeroes about p of the elements, scales the rest by 1 / (1 - p), and sends the
    gradient through the same mask; it is the identity when not training or p = 0."""
    retrograd.manual_seed(0)
    x = retrograd.ones(200, 50, dtype=retrograd.float64, requires_grad=True)
    y = nnf(retrograd).dropout(x, 0.3)
    assert y.grad_fn.name() == "MulBackward0"
    kept = y.detach().numpy() != 0
    assert 0.25 < 1 - kept.mean() < 0.35
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.7)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    assert nnf(retrograd).dropout(x, 0.3, training=False) is x
    assert nnf(retrograd).dropout(x, 0.0) is x
    assert not nnf(retrograd).dropout(x, 1.0).detach().numpy().any()
    retrograd.manual_seed(0)
    np.testing.assert_array_equal(nnf(retrograd).dropout(x, 0.3).detach().numpy(),
                                  y.detach().numpy())  # repeatable from the seed
    with pytest.raises(ValueError, match="between 0 and 1"):
        nnf(retrograd).dropout(x, 1.5)


# ----------------------------------------------------------------------------- docstrings


def test_dropout_gradcheck():
    """The same mask on every call (the generator reseeded): finite differences agree."""
    x = retrograd.randn(4, 5, dtype=retrograd.float64, requires_grad=True)

    def f(a):
        retrograd.manual_seed(3)
        return nnf(retrograd).dropout(a, 0.4)

    assert retrograd.autograd.gradcheck(f, (x,))
    assert retrograd.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("eps,probabilities", [(1.5, True), (1.5, False)])
def test_label_smoothing_out_of_range_raises_as_torch(eps, probabilities, torch):
    # (PyTorch checks the range only when label_smoothing > 0: see below)
    messages = []
    for m in (retrograd, torch):
        target = m.full((2, 3), 1 / 3) if probabilities else m.tensor([0, 1])
        with pytest.raises(RuntimeError) as info:
            m.nn.functional.cross_entropy(m.zeros(2, 3), target, label_smoothing=eps)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "between 0.0 and 1.0" in messages[0]


@pytest.mark.parametrize("probabilities", [True, False])
def test_negative_label_smoothing_means_none_as_torch(probabilities, torch):
    got = []
    for m in (retrograd, torch):
        target = m.tensor([[0.2, 0.5, 0.3]]) if probabilities else m.tensor([1])
        got.append(m.nn.functional.cross_entropy(m.tensor([[0.5, 1.0, -1.0]]), target,
                                                 label_smoothing=-0.1).item())
    assert got[0] == pytest.approx(got[1], rel=1e-6)
