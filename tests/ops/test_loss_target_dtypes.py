"""Losses of a float input by a target (or second input) of every dtype, against PyTorch
2.13: whether each raises (and the class), the result's dtype and its value.  The table that
replaced the fuzzer's KNOWN_BUGS entry for bool/integer loss inputs (fuzzJ): huber_loss of a
float32 input by a float64 target is float32 and its backward refuses the mix,
binary_cross_entropy wants the input's dtype and values in [0, 1], kl_div refuses integral
inputs, binary_cross_entropy_with_logits an integral target, cosine_embedding_loss of an
integer input is the default float dtype."""

import math

import pytest

import retrograd

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int64", "bool"]
pytestmark = pytest.mark.filterwarnings("ignore:reduction. .mean. divides")


def _calls(lib):
    F = lib.nn.functional  # noqa: N806 - PyTorch's spelling
    return {
        "mse_loss": lambda x, b: F.mse_loss(x, b),
        "l1_loss": lambda x, b: F.l1_loss(x, b),
        "smooth_l1_loss": lambda x, b: F.smooth_l1_loss(x, b, beta=0.5),
        "huber_loss": lambda x, b: F.huber_loss(x, b, delta=0.5),
        "soft_margin_loss": lambda x, b: F.soft_margin_loss(x, b.sign()),
        "kl_div_log_target": lambda x, b: F.kl_div(x, b, log_target=True),
        "kl_div": lambda x, b: F.kl_div(x, b.sigmoid()),
        "bce": lambda x, b: F.binary_cross_entropy(x.sigmoid(), b.sigmoid()),
        "bce_raw_target": lambda x, b: F.binary_cross_entropy(x.sigmoid(), b),
        "bce_weight": lambda x, b: F.binary_cross_entropy(
            x.sigmoid(), x.detach().sigmoid(), weight=b.abs().double()),
        "bce_logits": lambda x, b: F.binary_cross_entropy_with_logits(x, b.sigmoid()),
        "bce_logits_raw_target": lambda x, b: F.binary_cross_entropy_with_logits(x, b),
        "poisson_nll_loss": lambda x, b: F.poisson_nll_loss(x, b.abs()),
        "gaussian_nll_loss": lambda x, b: F.gaussian_nll_loss(x, b, x.detach().abs() + 0.5),
        "margin_ranking_loss": lambda x, b: F.margin_ranking_loss(x, b, b.sign()),
        "hinge_embedding_loss": lambda x, b: F.hinge_embedding_loss(x, b.sign()),
        "multilabel_soft_margin_loss": lambda x, b: F.multilabel_soft_margin_loss(x, b),
        "cosine_embedding_loss": lambda x, b: F.cosine_embedding_loss(
            x, b, lib.ones(x.shape[:-1], dtype=x.dtype)),
        "cosine_similarity": lambda x, b: F.cosine_similarity(x, b, dim=-1),
        "pairwise_distance": lambda x, b: F.pairwise_distance(x, b),
        "triplet_margin_loss": lambda x, b: F.triplet_margin_loss(x, b, x.detach()),
    }


def _outcome(lib, name, dx, db, backward):
    x = lib.tensor([[0.5, -1.0, 0.0], [2.0, 1.0, -0.5]], dtype=getattr(lib, dx),
                   requires_grad=True)
    if db == "bool":
        b = lib.tensor([[True, False, True], [False, True, False]])
    else:
        b = lib.tensor([[1.0, 0.0, -1.0], [0.25, 1.0, 2.0]] if db != "int64" else
                       [[1, 0, -1], [2, 1, 0]], dtype=getattr(lib, db))
    try:
        out = _calls(lib)[name](x, b)
        if backward:
            out.sum().backward()
            out = x.grad
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(e).__name__)
    values = [None if math.isnan(v) else round(v, 5) for v in out.detach().flatten().tolist()]
    return ("ok", str(out.dtype).rsplit(".", 1)[-1], values)


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("dx", DTYPES[:2])
@pytest.mark.parametrize("name", sorted(_calls(torch)))
def test_loss_target_dtypes_match_torch(name, dx, backward):
    for db in DTYPES:
        assert _outcome(retrograd, name, dx, db, backward) == \
            _outcome(torch, name, dx, db, backward), (name, dx, db)
