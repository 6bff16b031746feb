"""Op tests, losses (ops/losses.py, ops/ctc.py, and bce_with_logits' pos_weight in ops/nn.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []

SIGNS = np.array([[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0]])
ROW_SIGNS = np.array([1.0, -1.0, 1.0])
CLASSES = np.array([0, 3, 1])
LABELS = np.array([[0, 3, -1, 1], [2, 2, 1, -1], [-1, 0, 0, 0]])  # repeats, -1 ends, empty
CLASS_W = np.array([0.5, 2.0, 1.0, 1.5])
COUNTS = np.array([[0.0, 1.0, 3.0, 2.0], [4.0, 0.5, 1.0, 7.0], [2.0, 0.0, 1.5, 3.0]])
CTC_TARGETS = np.array([[1, 2, 2], [3, 1, 0]])
CTC_FLAT = np.array([1, 2, 2, 3, 1])
REDUCTIONS = ("mean", "sum", "none")


_MM_NO_GG = ("multi_margin_loss has no second derivative (as PyTorch's "
             "multi_margin_loss_backward, a NotImplemented node): the second backward raises")

def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def const(m, a, like):
    return m.tensor(a, dtype=like.dtype)


for _red in REDUCTIONS:
    kw = {"reduction": _red}
    case(f"smooth_l1_loss_{_red}", lambda m, a, b, **kw: nnf(m).smooth_l1_loss(
        a, b, beta=0.5, **kw), ((3, 4), (3, 4)), params=kw)
    case(f"huber_loss_{_red}", lambda m, a, b, **kw: nnf(m).huber_loss(a, b, delta=0.5, **kw),
         ((3, 4), (3, 4)), params=kw)
    case(f"huber_loss_weight_{_red}", lambda m, a, b, **kw: nnf(m).huber_loss(
        a, b, weight=const(m, COUNTS, a), **kw), ((3, 4), (3, 4)), params=kw)
    case(f"soft_margin_loss_{_red}", lambda m, a, **kw: nnf(m).soft_margin_loss(
        a, const(m, SIGNS, a), **kw), ((3, 4),), params=kw)
    case(f"margin_ranking_loss_{_red}", lambda m, a, b, **kw: nnf(m).margin_ranking_loss(
        a, b, const(m, ROW_SIGNS, a), margin=0.2, **kw), ((3,), (3,)), params=kw)
    case(f"hinge_embedding_loss_{_red}", lambda m, a, **kw: nnf(m).hinge_embedding_loss(
        a, const(m, SIGNS, a), margin=0.5, **kw), ((3, 4),), params=kw)
    case(f"cosine_embedding_loss_{_red}", lambda m, a, b, **kw: nnf(m).cosine_embedding_loss(
        a, b, const(m, ROW_SIGNS, a), margin=-0.9, **kw), ((3, 4), (3, 4)), params=kw)
    case(f"multi_margin_loss_{_red}", lambda m, a, **kw: nnf(m).multi_margin_loss(
        a, m.tensor(CLASSES), **kw), ((3, 4),), params=kw, xfail={"gradgradcheck": _MM_NO_GG})
    case(f"multi_margin_loss_p2_weight_{_red}", lambda m, a, **kw: nnf(m).multi_margin_loss(
        a, m.tensor(CLASSES), p=2, margin=0.7, weight=const(m, CLASS_W, a), **kw), ((3, 4),),
        params=kw, xfail={"gradgradcheck": _MM_NO_GG})
    case(f"multilabel_margin_loss_{_red}", lambda m, a, **kw: nnf(m).multilabel_margin_loss(
        a, m.tensor(LABELS), **kw), ((3, 4),), params=kw)
    case(f"multilabel_soft_margin_loss_{_red}", lambda m, a, t, **kw: nnf(
        m).multilabel_soft_margin_loss(a, t.sigmoid(), weight=const(m, CLASS_W, a), **kw),
        ((3, 4), (3, 4)), params=kw)
    case(f"poisson_nll_loss_{_red}", lambda m, a, t, **kw: nnf(m).poisson_nll_loss(a, t, **kw),
         ((3, 4), (3, 4)), ("real", "pos"), params=kw)
    case(f"poisson_nll_loss_full_{_red}", lambda m, a, t, **kw: nnf(m).poisson_nll_loss(
        a, t * 2, log_input=False, full=True, **kw), ((3, 4), (3, 4)), "pos", params=kw)
    case(f"gaussian_nll_loss_{_red}", lambda m, a, t, v, **kw: nnf(m).gaussian_nll_loss(
        a, t, v, **kw), ((3, 4), (3, 4), (3, 4)), ("real", "real", "pos"), params=kw)
    case(f"kl_div_{_red}", lambda m, a, t, **kw: nnf(m).kl_div(a, t.softmax(1), **kw),
         ((3, 4), (3, 4)), params=kw)
    case(f"kl_div_log_target_{_red}", lambda m, a, t, **kw: nnf(m).kl_div(
        a, t, log_target=True, **kw), ((3, 4), (3, 4)), params=kw)
    case(f"bce_logits_pos_weight_{_red}", lambda m, a, t, **kw: nnf(
        m).binary_cross_entropy_with_logits(a * 3, t.sigmoid(), pos_weight=const(m, CLASS_W, a),
                                            weight=const(m, COUNTS, a), **kw),
        ((3, 4), (3, 4)), params=kw)
    case(f"ctc_loss_{_red}", lambda m, a, **kw: nnf(m).ctc_loss(
        a.log_softmax(2), m.tensor(CTC_TARGETS), m.tensor([6, 5]), m.tensor([3, 2]), **kw),
        ((6, 2, 4),), params=kw,
        xfail={"gradgradcheck": "ctc_loss has no second derivative (as PyTorch's "
                                "_ctc_loss_backward): the second backward raises"})
    case(f"linear_cross_entropy_{_red}", lambda m, a, w, b, **kw: nnf(m).linear_cross_entropy(
        a, w, m.tensor(CLASSES), linear_bias=b, **kw), ((3, 5), (4, 5), (4,)), params=kw)

# the other spellings: legacy flags, the default beta / delta / margins, broadcasting...
case("smooth_l1_loss_beta0", lambda m, a, b: nnf(m).smooth_l1_loss(a, b, beta=0.0),
     ((3, 4), (3, 4)))
case("smooth_l1_loss_broadcast", lambda m, a, b: nnf(m).smooth_l1_loss(a, b), ((3, 4), (4,)))
case("smooth_l1_loss_size_average", lambda m, a, b: nnf(m).smooth_l1_loss(
    a, b, size_average=False), ((3, 4), (3, 4)))
case("huber_loss_default", lambda m, a, b: nnf(m).huber_loss(a * 2, b), ((3, 4), (3, 4)))
case("soft_margin_loss_reduce", lambda m, a: nnf(m).soft_margin_loss(
    a, const(m, SIGNS, a), reduce=False), ((3, 4),))
case("margin_ranking_loss_legacy", lambda m, a, b, t: nnf(m).margin_ranking_loss(
    a, b, t, size_average=False), ((4,), (4,), (4,)))
case("hinge_embedding_loss_default", lambda m, a: nnf(m).hinge_embedding_loss(
    a, const(m, SIGNS, a)), ((3, 4),))
case("cosine_embedding_loss_unbatched", lambda m, a, b: nnf(m).cosine_embedding_loss(
    a, b, m.tensor(-1.0, dtype=a.dtype), margin=-0.5), ((4,), (4,)))
case("multi_margin_loss_unbatched", lambda m, a: nnf(m).multi_margin_loss(a, m.tensor(2)),
     ((4,),), xfail={"gradgradcheck": _MM_NO_GG})
case("multilabel_margin_loss_unbatched", lambda m, a: nnf(m).multilabel_margin_loss(
    a, m.tensor([3, 1, -1, 0])), ((4,),))
case("multilabel_soft_margin_loss_default", lambda m, a: nnf(m).multilabel_soft_margin_loss(
    a, const(m, SIGNS > 0, a)), ((3, 4),))
case("poisson_nll_loss_eps", lambda m, a, t: nnf(m).poisson_nll_loss(
    a, t, log_input=False, eps=0.5, reduce=False), ((3, 4), (3, 4)), "pos")
case("gaussian_nll_loss_full", lambda m, a, t, v: nnf(m).gaussian_nll_loss(
    a, t, v, full=True, reduction="sum"), ((3, 4), (3, 4), (3, 4)), ("real", "real", "pos"))
case("gaussian_nll_loss_var_no_last_dim", lambda m, a, t, v: nnf(m).gaussian_nll_loss(
    a, t, v), ((3, 4), (3, 4), (3,)), ("real", "real", "pos"))
case("gaussian_nll_loss_var_shared", lambda m, a, t, v: nnf(m).gaussian_nll_loss(
    a, t, v, reduction="none"), ((3, 4), (3, 4), (3, 1)), ("real", "real", "pos"))
case("gaussian_nll_loss_var_float", lambda m, a, t: nnf(m).gaussian_nll_loss(a, t, 0.7),
     ((3, 4), (3, 4)))
case("gaussian_nll_loss_eps_clamps", lambda m, a, t, v: nnf(m).gaussian_nll_loss(
    a, t, v * 0.01, eps=0.01), ((3, 4), (3, 4), (3, 4)), ("real", "real", "pos"),
    xfail={c: "PyTorch passes var's gradient through the clamp at eps unchanged (a clone, then "
              "clamp_ under no_grad): not the derivative of the clamped loss"
           for c in ("gradcheck", "gradgradcheck")})
case("kl_div_batchmean", lambda m, a, t: nnf(m).kl_div(a.log_softmax(1), t.softmax(1),
                                                        reduction="batchmean"), ((3, 4), (3, 4)))
case("kl_div_batchmean_log_target", lambda m, a, t: nnf(m).kl_div(
    a, t, reduction="batchmean", log_target=True), ((2, 3, 2), (2, 3, 2)))
case("kl_div_legacy", lambda m, a, t: nnf(m).kl_div(a, t.softmax(1), reduce=True,
                                                     size_average=False), ((3, 4), (3, 4)))
case("bce_logits_pos_weight_broadcast", lambda m, a, t: nnf(m).binary_cross_entropy_with_logits(
    a, t.sigmoid(), pos_weight=const(m, ROW_SIGNS[:, None] + 2, a)), ((3, 4), (3, 4)))
case("bce_logits_legacy", lambda m, a, t: nnf(m).binary_cross_entropy_with_logits(
    a, t.sigmoid(), None, False), ((3, 4), (3, 4)))
case("ctc_loss_flat_targets", lambda m, a: nnf(m).ctc_loss(
    a.log_softmax(2), m.tensor(CTC_FLAT), (6, 4), [3, 2], blank=0), ((6, 2, 4),),
    xfail={"gradgradcheck": "ctc_loss has no second derivative"})
case("ctc_loss_blank_last", lambda m, a: nnf(m).ctc_loss(
    a.log_softmax(2), m.tensor(CTC_TARGETS - 1 + (CTC_TARGETS == 0)), m.tensor([6, 4]),
    m.tensor([3, 2]), blank=3, reduction="sum"), ((6, 2, 4),),
    xfail={"gradgradcheck": "ctc_loss has no second derivative"})
case("ctc_loss_zero_infinity", lambda m, a: nnf(m).ctc_loss(
    a.log_softmax(2), m.tensor([[2, 2, 2], [1, 1, 3]]), m.tensor([4, 2]), m.tensor([3, 2]),
    zero_infinity=True, reduction="sum"), ((6, 2, 4),),
    xfail={"gradgradcheck": "ctc_loss has no second derivative"})
case("ctc_loss_log_probs_leaf", lambda m, a: nnf(m).ctc_loss(
    a, m.tensor(CTC_TARGETS), m.tensor([6, 5]), m.tensor([3, 2]), reduction="sum"),
    ((6, 2, 4),),
    xfail={"gradcheck": "PyTorch's ctc gradient for log_probs adds softmax(log_probs) (removed "
                        "by log_softmax's backward): not the derivative for a leaf",
           "gradgradcheck": "ctc_loss has no second derivative"})
case("ctc_loss_unbatched", lambda m, a: nnf(m).ctc_loss(
    a.log_softmax(1), m.tensor([1, 2]).int(), m.tensor(6), m.tensor(2)), ((6, 4),),
    xfail={"gradgradcheck": "ctc_loss has no second derivative"})
case("linear_cross_entropy_default", lambda m, a, w: nnf(m).linear_cross_entropy(
    a, w, m.tensor(CLASSES)), ((3, 5), (4, 5)))

# PyTorch's top-level spellings: the reduction as an int (0 none, 1 mean, 2 sum)
case("torch.kl_div", lambda m, a, t: m.kl_div(a, t.softmax(1), 2), ((3, 4), (3, 4)))
case("torch.kl_div_log_target", lambda m, a, t: m.kl_div(a, t, log_target=True), ((3, 4),
                                                                                   (3, 4)))
case("torch.margin_ranking_loss", lambda m, a, b: m.margin_ranking_loss(
    a, b, const(m, ROW_SIGNS, a), 0.1, 0), ((3,), (3,)))
case("torch.hinge_embedding_loss", lambda m, a: m.hinge_embedding_loss(
    a, const(m, SIGNS, a), 0.5, 2), ((3, 4),))
case("torch.cosine_embedding_loss", lambda m, a, b: m.cosine_embedding_loss(
    a, b, const(m, ROW_SIGNS, a)), ((3, 4), (3, 4)))
case("torch.poisson_nll_loss", lambda m, a, t: m.poisson_nll_loss(a, t, True, False, 1e-8, 1),
     ((3, 4), (3, 4)), ("real", "pos"))
case("torch.binary_cross_entropy_with_logits", lambda m, a, t: m
     .binary_cross_entropy_with_logits(a, t.sigmoid(), None, const(m, CLASS_W, a), 0),
     ((3, 4), (3, 4)))
case("torch.triplet_margin_loss", lambda m, a, b, c: m.triplet_margin_loss(
    a, b, c, 2.0, 1.0, 1e-6, True, 2), ((3, 4),) * 3)
case("torch.ctc_loss", lambda m, a: m.ctc_loss(
    a.log_softmax(2), m.tensor(CTC_TARGETS), [6, 5], [3, 2], 0, 0), ((6, 2, 4),),
    xfail={"gradgradcheck": "ctc_loss has no second derivative"})

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------------------- edges


def _run(m, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(m)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_impossible_alignment(zero_infinity, torch):
    """An input too short for its labels: an infinite loss (and nan gradients), or 0 and a 0
    gradient with zero_infinity, as PyTorch."""
    out = {}
    for m in (torch, retrograd):
        x = m.tensor(np.linspace(-1, 1, 24).reshape(3, 2, 4), requires_grad=True)
        loss = nnf(m).ctc_loss(x.log_softmax(2), m.tensor([[1, 1, 1], [2, 3, 0]]),
                               [3, 3], [3, 2], reduction="none", zero_infinity=zero_infinity)
        loss.sum().backward()
        out[m.__name__] = (loss.detach().numpy(), x.grad.numpy())
    np.testing.assert_allclose(*(v[0] for v in out.values()))
    np.testing.assert_allclose(*(v[1] for v in out.values()), equal_nan=True, atol=1e-12)


def test_ctc_second_backward_raises():
    x = retrograd.randn(4, 1, 3, dtype=retrograd.float64, requires_grad=True)
    loss = nnf(retrograd).ctc_loss(x.log_softmax(2), retrograd.tensor([[1, 2]]), [4], [2])
    (g,) = retrograd.autograd.grad(loss, x, create_graph=True)
    with pytest.raises(RuntimeError, match="_ctc_loss_backward"):
        g.sum().backward()


def test_kl_div_mean_warns_and_legacy_flags_warn():
    x = retrograd.zeros(2, 2)
    with pytest.warns(UserWarning, match="batchmean"):
        nnf(retrograd).kl_div(x, x.exp())
    with pytest.warns(UserWarning, match="reduction='sum'"):
        nnf(retrograd).soft_margin_loss(x, x + 1, size_average=False)


def test_gaussian_nll_var_clamp_passes_gradient(torch):
    """var below eps is clamped, yet its gradient flows as if unclamped (PyTorch's clone
    then no-grad clamp_)."""
    grads = []
    for m in (torch, retrograd):
        v = m.tensor([1e-9, 0.5], dtype=m.float64, requires_grad=True)
        nnf(m).gaussian_nll_loss(m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64),
                                 v).backward()
        grads.append(v.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    assert grads[1][0] != 0


def test_docstring_examples_run():
    """The Examples sections of issue 8's op modules are true."""
    import doctest
    import importlib

    for name in ("losses", "ctc", "distance", "embedding", "bilinear"):
        mod = importlib.import_module(f"retrograd.ops.{name}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, name


def test_soft_margin_target_is_not_differentiable(torch):
    for m in (torch, retrograd):
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
            nnf(m).soft_margin_loss(m.zeros(2), m.ones(2, requires_grad=True))
