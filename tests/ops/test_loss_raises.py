"""Every loss of nn.functional on odd arguments, against PyTorch 2.13: whether and what each
raises (the exception class: PyTorch checks shapes, dtypes and the reduction's name in an
order of its own per loss), else the result's dtype, shape and values, and the input's
gradient.  The odd arguments: an integer or bool input, target or third tensor (weight,
variance, labels); a reduction that is not one; shapes that do not match, broadcast one way
only, are 0-d or empty.  The table behind fuzzM's fixes (issue 7: the fuzzer's biggest class
of findings, nn_loss raising another class than PyTorch's); tests/ops/test_loss_target_dtypes.py
is its sibling for the float input's dtypes."""

import math
import warnings

import pytest

import retrograd

torch = pytest.importorskip("torch")

DTYPES = ["float64", "float32", "int64", "bool"]


def _calls(lib):
    F = lib.nn.functional  # noqa: N806 - PyTorch's spelling
    return {
        "mse_loss": lambda x, b, c, r: F.mse_loss(x, b, reduction=r),
        "mse_loss_weight": lambda x, b, c, r: F.mse_loss(x, b, reduction=r, weight=c),
        "l1_loss": lambda x, b, c, r: F.l1_loss(x, b, reduction=r),
        "l1_loss_weight": lambda x, b, c, r: F.l1_loss(x, b, reduction=r, weight=c),
        "smooth_l1_loss": lambda x, b, c, r: F.smooth_l1_loss(x, b, reduction=r, beta=0.5),
        "smooth_l1_loss_beta0": lambda x, b, c, r: F.smooth_l1_loss(x, b, reduction=r,
                                                                    beta=0.0),
        "huber_loss": lambda x, b, c, r: F.huber_loss(x, b, reduction=r, delta=0.5),
        "huber_loss_weight": lambda x, b, c, r: F.huber_loss(x, b, reduction=r, weight=c),
        "soft_margin_loss": lambda x, b, c, r: F.soft_margin_loss(x, b.sign(), reduction=r),
        "kl_div": lambda x, b, c, r: F.kl_div(x, b, reduction=r),
        "kl_div_log_target": lambda x, b, c, r: F.kl_div(x, b, reduction=r, log_target=True),
        "bce": lambda x, b, c, r: F.binary_cross_entropy(x, b, reduction=r),
        "bce_sigmoid": lambda x, b, c, r: F.binary_cross_entropy(x.sigmoid(), b.sigmoid(),
                                                                 reduction=r),
        "bce_weight": lambda x, b, c, r: F.binary_cross_entropy(x.sigmoid(), b.sigmoid(),
                                                                weight=c, reduction=r),
        "bce_logits": lambda x, b, c, r: F.binary_cross_entropy_with_logits(x, b,
                                                                            reduction=r),
        "bce_logits_weight": lambda x, b, c, r: F.binary_cross_entropy_with_logits(
            x, b, weight=c, reduction=r),
        "bce_logits_pos_weight": lambda x, b, c, r: F.binary_cross_entropy_with_logits(
            x, b, pos_weight=c, reduction=r),
        "poisson_nll_loss": lambda x, b, c, r: F.poisson_nll_loss(x, b, reduction=r),
        "poisson_nll_loss_full": lambda x, b, c, r: F.poisson_nll_loss(
            x, b, log_input=False, full=True, reduction=r),
        "gaussian_nll_loss": lambda x, b, c, r: F.gaussian_nll_loss(x, b, c, reduction=r),
        "margin_ranking_loss": lambda x, b, c, r: F.margin_ranking_loss(x, b, c, reduction=r),
        "hinge_embedding_loss": lambda x, b, c, r: F.hinge_embedding_loss(x, b, reduction=r),
        "multilabel_soft_margin_loss": lambda x, b, c, r: F.multilabel_soft_margin_loss(
            x, b, reduction=r),
        "multilabel_soft_margin_loss_weight": lambda x, b, c, r:
            F.multilabel_soft_margin_loss(x, b, weight=c, reduction=r),
        "cosine_embedding_loss": lambda x, b, c, r: F.cosine_embedding_loss(x, b, c,
                                                                            reduction=r),
        "triplet_margin_loss": lambda x, b, c, r: F.triplet_margin_loss(x, b, c, reduction=r),
        "triplet_margin_with_distance_loss": lambda x, b, c, r:
            F.triplet_margin_with_distance_loss(x, b, c, reduction=r),
        "cosine_similarity": lambda x, b, c, r: F.cosine_similarity(x, b),
        "pairwise_distance": lambda x, b, c, r: F.pairwise_distance(x, b),
        "cross_entropy": lambda x, b, c, r: F.cross_entropy(x, b, reduction=r),
        "cross_entropy_weight": lambda x, b, c, r: F.cross_entropy(x, b, weight=c,
                                                                   reduction=r),
        "cross_entropy_smoothing": lambda x, b, c, r: F.cross_entropy(
            x, b, label_smoothing=0.1, reduction=r),
        "nll_loss": lambda x, b, c, r: F.nll_loss(x, b, reduction=r),
        "nll_loss_weight": lambda x, b, c, r: F.nll_loss(x, b, weight=c, reduction=r),
        "multi_margin_loss": lambda x, b, c, r: F.multi_margin_loss(x, b, reduction=r),
        "multi_margin_loss_weight": lambda x, b, c, r: F.multi_margin_loss(x, b, weight=c,
                                                                           reduction=r),
        "multilabel_margin_loss": lambda x, b, c, r: F.multilabel_margin_loss(x, b,
                                                                              reduction=r),
    }


_CLASS_INDEX = ("cross_entropy", "nll_loss", "multi_margin_loss")
# (input, target, third tensor): mismatched, one-way broadcastable, 0-d and empty shapes
SHAPES = [((4,), (3,), (4,)), ((1,), (4,), (4,)), ((4,), (1,), (4,)), ((), (4,), (4,)),
          ((4,), (), (4,)), ((), (), ()), ((0,), (0,), (0,)), ((0,), (1,), (0,)),
          ((2, 3), (3,), (3,)), ((3,), (2, 3), (3,)), ((2, 0), (2, 0), (0,)),
          ((2, 3), (2, 3), (2,)), ((2, 3), (2,), (3,)), ((3,), (), (3,)), ((3,), (1,), (3,)),
          ((0, 3), (0,), (3,)), ((2, 3), (2, 3), ()), ((2, 3), (2, 3), (2, 3)),
          ((2, 3), (2, 3), (1,)), ((2, 3), (2, 3), (4,)), ((2, 3), (2, 1), (3,)),
          ((2, 1), (2, 3), (3,)), ((1, 3), (2, 3), (2,)), ((2, 3, 4), (2, 4), (3,)),
          ((2, 3, 4), (2, 3, 4), (2, 4)), ((3,), (3,), (3,)), ((1, 3), (), (3,)),
          ((), (1,), (1,)), ((1,), (), (1,)), ((0, 3), (0, 3), (3,))]


def _specs(name):
    """(input, target, third) as (dtype, shape) pairs, and the reduction."""
    index = name.startswith(_CLASS_INDEX)
    xs, bs = (2, 3), ((2,) if index else (2, 3))
    bdt = "int64" if index or name.startswith("multilabel_margin") else "float64"
    if name.startswith("cosine_embedding"):
        cs = (2,)
    elif name.startswith(("huber", "mse", "l1")) or not name.endswith("weight"):
        cs = (3,) if index else (2, 3)
    else:
        cs = (3,)
    out = [((dx, xs), (db, bs), ("float64", cs), "mean") for dx in DTYPES for db in DTYPES]
    out += [((dx, xs), (bdt, bs), (dx, cs), "mean") for dx in DTYPES]
    out += [(("float64", xs), (bdt, bs), (dc, cs), "mean") for dc in DTYPES[1:]]
    for r in ["bogus", "batchmean", "none", "sum"]:
        out += [(("float64", xs), (bdt, bs), ("float64", cs), r),
                (("int64", xs), (bdt, bs), ("float64", cs), r),
                (("float64", xs), (bdt, (5,)), ("float64", cs), r)]
    for sx, sb, sc in SHAPES:
        out += [(("float64", sx), (bdt, sb), ("float64", sc), "mean"),
                (("float64", sx), (bdt, sb), ("float64", sc), "none"),
                (("int64", sx), (bdt, sb), ("float64", sc), "sum")]
    return out


def _make(lib, dtype, shape, requires_grad):
    n = math.prod(shape)
    if dtype == "bool":
        values = [i % 2 == 0 for i in range(n)]
    elif dtype == "int64":
        values = [i % 3 for i in range(n)]  # (valid class indices for 3 classes)
    else:
        values = [[0.25, 0.75, 0.5, 0.125, 1.0, 0.0][i % 6] for i in range(n)]
    t = lib.tensor(values, dtype=getattr(lib, dtype)).reshape(shape)
    return t.requires_grad_() if requires_grad and dtype.startswith("float") else t


def _rounded(t):
    return [None if math.isnan(v) else round(v, 4) for v in t.detach().flatten().tolist()]


def _outcome(lib, name, spec, values=True):
    """What the call does: ("raise", class) or ("ok", dtype, shape, values), then what its
    backward does to the input's gradient."""
    (dx, sx), (db, sb), (dc, sc), reduction = spec
    x = _make(lib, dx, sx, True)
    b, c = _make(lib, db, sb, False), _make(lib, dc, sc, False)
    try:
        out = _calls(lib)[name](x, b, c, reduction)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(e).__name__)
    forward = ("ok", str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape),
               _rounded(out) if values else None)
    if not out.requires_grad:
        return forward
    try:
        out.sum().backward()
    except Exception as e:  # noqa: BLE001
        return forward, ("raise", type(e).__name__)
    return forward, ("grad", None if x.grad is None else _rounded(x.grad))


def _accepted(name, spec):
    """The difference tests/fuzz/known_bugs.py accepts (a PyTorch bug), or None."""
    (_, sx), _, _, reduction = spec
    if name.startswith(("multi_margin", "multilabel_margin")) and 0 in sx and \
            reduction in ("mean", "sum"):
        return "values"  # _margin_loss_empty_garbage: PyTorch returns uninitialized memory
    return None


@pytest.mark.parametrize("name", sorted(_calls(torch)))
def test_loss_raises_match_torch(name):
    differ = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (size and reduction warnings: both libraries')
        for spec in _specs(name):
            values = _accepted(name, spec) != "values"
            ours, theirs = (_outcome(lib, name, spec, values) for lib in (retrograd, torch))
            if ours != theirs:
                differ.append(f"{spec}: retrograd {ours}, torch {theirs}")
    assert not differ, "\n".join(differ)


def _ctc_calls(lib):
    """ctc_loss (log_probs (T, N, C), targets, input_lengths, target_lengths) on odd
    arguments (a label out of range, or equal to blank, is left out: no defined result, PyTorch's
    kernel reads outside its arrays there)."""
    F = lib.nn.functional  # noqa: N806 - PyTorch's spelling
    lp = lib.tensor([[[-1.0, -2.0, -0.5]], [[-0.3, -1.0, -2.0]], [[-1.0, -1.0, -1.0]]],
                    dtype=lib.float64)
    t, il, tl = lib.tensor([[1, 2]]), lib.tensor([3]), lib.tensor([2])
    return [
        lambda: F.ctc_loss(lp.long(), t, il, tl),
        lambda: F.ctc_loss(lp > 0, t, il, tl),
        lambda: F.ctc_loss(lp.long(), t, lib.tensor([4]), tl, reduction="bogus"),
        lambda: F.ctc_loss(lp.long()[None], t.float(), il, tl),
        lambda: F.ctc_loss(lp.float(), t, il, tl),
        lambda: F.ctc_loss(lp, t.float(), il, tl),
        lambda: F.ctc_loss(lp, lib.tensor([[True, True]]), il, tl),  # (labels 1, 1)
        lambda: F.ctc_loss(lp, t, il.float(), tl),
        lambda: F.ctc_loss(lp, t, il, tl.float()),
        lambda: F.ctc_loss(lp, t, il, tl, reduction="bogus"),
        lambda: F.ctc_loss(lp, t, lib.tensor([4]), tl),
        lambda: F.ctc_loss(lp, t, lib.tensor([3, 3]), tl),
        lambda: F.ctc_loss(lp, t, il, lib.tensor([3])),
        lambda: F.ctc_loss(lp, t, il, lib.tensor([-1])),
        lambda: F.ctc_loss(lp, t, lib.tensor([-1]), tl),
        lambda: F.ctc_loss(lp[:, 0], t[0], lib.tensor(3), lib.tensor(2)),
        lambda: F.ctc_loss(lp[0], t[0], il, tl),
        lambda: F.ctc_loss(lp, t, il, tl, blank=5),
        lambda: F.ctc_loss(lp, t, il, tl, blank=1),
        lambda: F.ctc_loss(lp, t, il, tl, zero_infinity=True, reduction="none"),
    ]


def _ctc_outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(e).__name__)
    return ("ok", str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape), _rounded(out))


def test_ctc_loss_raises_match_torch():
    ours, theirs = ([_ctc_outcome(c) for c in _ctc_calls(lib)] for lib in (retrograd, torch))
    differ = [f"call {i}: retrograd {a}, torch {b}" for i, (a, b) in
              enumerate(zip(ours, theirs)) if a != b]
    assert not differ, "\n".join(differ)


def _class_index_calls(lib):
    """The class-index losses on targets of every integer dtype (PyTorch: nll_loss and
    cross_entropy take int64 or uint8, its >2-d kernel int64 only unless the target is empty
    and reduced; multi_margin_loss and multilabel_margin_loss int64 only), over input ranks,
    a wrong weight, out-of-range and empty targets."""
    F = lib.nn.functional  # noqa: N806 - PyTorch's spelling
    x = lib.tensor([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]], dtype=lib.float64, requires_grad=True)
    x3 = x.view(1, 3, 2)
    out = []
    for name in ["int64", "int32", "int16", "int8", "uint8"]:
        dt = getattr(lib, name)
        t, t3 = lib.tensor([1, 0], dtype=dt), lib.tensor([[1, 0]], dtype=dt)
        out += [
            lambda t=t: F.nll_loss(x, t),
            lambda t=t: F.nll_loss(x[0], t[:1]),
            lambda t=t: F.nll_loss(x[0], t),
            lambda t=t: F.nll_loss(x, t, weight=lib.ones(2, dtype=lib.float64)),
            lambda t=t: F.nll_loss(x, t + 4),
            lambda t3=t3: F.nll_loss(x3, t3, reduction="none"),
            lambda t3=t3: F.nll_loss(x3, t3, weight=lib.ones(2, dtype=lib.float64)),
            lambda t3=t3: F.nll_loss(x3.float(), t3, weight=lib.ones(3, dtype=lib.float64)),
            lambda t3=t3: F.nll_loss(x3.view(1, 3, 2, 1), t3.view(1, 2, 1), ignore_index=0),
            lambda t3=t3: F.nll_loss(x3[:, :, :0], t3[:, :0]),
            lambda t3=t3: F.nll_loss(x3[:, :, :0], t3[:, :0], reduction="none"),
            lambda t=t: F.cross_entropy(x, t, label_smoothing=0.2),
            lambda t=t: F.cross_entropy(x[0], t[0]),
            lambda t3=t3: F.cross_entropy(x3, t3),
            lambda t=t: F.cross_entropy(x[:0], t[:0], reduction="none"),
            lambda t=t: F.multi_margin_loss(x, t),
            lambda t=t: F.multi_margin_loss(x, t + 4),
            lambda t=t: F.multi_margin_loss(x[0, 0], t[0]),
            lambda dt=dt: F.multilabel_margin_loss(
                x, lib.tensor([[1, 2, 0], [0, 1, 2]], dtype=dt)),
        ]
    return out


def _class_index_outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(e).__name__)
    return ("ok", str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape), _rounded(out))


def test_class_index_target_dtypes_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = ([_class_index_outcome(c) for c in _class_index_calls(lib)]
                        for lib in (retrograd, torch))
    differ = [f"call {i}: retrograd {a}, torch {b}" for i, (a, b) in
              enumerate(zip(ours, theirs)) if a != b]
    assert not differ, "\n".join(differ)
