"""Activation, loss, dropout, embedding, padding, upsampling, shuffle, distance and fold
layers against PyTorch: repr, state_dict, outputs and input/parameter gradients with the same
weights (float64, tight); dropout masks in training mode; embedding init and from_pretrained."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd import nn

from .helpers import check_layer, close, compare_double_backward, compare_module

RNG = np.random.default_rng(3)


def real(*shape):
    return RNG.standard_normal(shape)


def positive(*shape):
    return RNG.uniform(0.2, 2.0, shape)


def prob(*shape):
    return RNG.uniform(0.1, 0.9, shape)


def sign(*shape):
    return RNG.choice([-1.0, 1.0], shape)


def ints(high, *shape):
    return RNG.integers(0, high, shape).astype(np.int64)


def log_probs(*shape):
    x = real(*shape)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def const(nn, values):
    """The same constant tensor in the namespace the factory is building for."""
    if nn.__name__.startswith("torch"):
        import torch

        return torch.tensor(np.asarray(values))
    return T.tensor(np.asarray(values))


ACTIVATIONS = [
    ("Threshold", lambda nn: nn.Threshold(0.1, 20.0), [real(3, 4)]),
    ("RReLU-eval", lambda nn: nn.RReLU(0.1, 0.3).eval(), [real(3, 4)]),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), [real(3, 4) * 4]),
    ("Hardswish", lambda nn: nn.Hardswish(), [real(3, 4) * 4]),
    ("Mish", lambda nn: nn.Mish(), [real(3, 4)]),
    ("CELU", lambda nn: nn.CELU(0.7), [real(3, 4)]),
    ("SELU", lambda nn: nn.SELU(), [real(3, 4)]),
    ("GLU", lambda nn: nn.GLU(), [real(3, 4)]),
    ("GLU-dim0", lambda nn: nn.GLU(dim=0), [real(4, 3)]),
    ("Hardshrink", lambda nn: nn.Hardshrink(0.3), [real(3, 4)]),
    ("Softshrink", lambda nn: nn.Softshrink(), [real(3, 4)]),
    ("PReLU", lambda nn: nn.PReLU(), [real(3, 4)]),
    ("PReLU-channels", lambda nn: nn.PReLU(3, init=0.1), [real(2, 3, 4)]),
    ("Softsign", lambda nn: nn.Softsign(), [real(3, 4)]),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), [real(3, 4)]),
    ("Softmin", lambda nn: nn.Softmin(dim=1), [real(3, 4)]),
    ("Softmax2d", lambda nn: nn.Softmax2d(), [real(2, 3, 2, 2)]),
    ("Softmax2d-3d", lambda nn: nn.Softmax2d(), [real(3, 2, 2)]),
]

LOSSES = [
    ("NLLLoss2d", lambda nn: nn.NLLLoss2d(), [log_probs(2, 2, 3, 3), ints(2, 2, 3, 3)]),
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(beta=0.5), [real(3, 4), real(3, 4)]),
    ("SmoothL1Loss-none", lambda nn: nn.SmoothL1Loss(reduction="none"),
     [real(3, 4), real(3, 4)]),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.7, reduction="sum"), [real(3, 4), real(3, 4)]),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(), [real(3, 4), sign(3, 4)]),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(margin=0.2),
     [real(5), real(5), sign(5)]),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(margin=0.5),
     [real(3, 4), sign(3, 4)]),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(margin=0.1),
     [real(4, 3), real(4, 3), sign(4)]),
    ("MultiMarginLoss", lambda nn: nn.MultiMarginLoss(), [real(3, 4), ints(4, 3)]),
    ("MultiMarginLoss-weight", lambda nn: nn.MultiMarginLoss(
        p=2, margin=0.5, weight=const(nn, [1.0, 0.5, 2.0, 1.5])), [real(3, 4), ints(4, 3)]),
    ("MultiLabelMarginLoss", lambda nn: nn.MultiLabelMarginLoss(),
     [real(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])]),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(
        weight=const(nn, [1.0, 0.5, 2.0, 1.5])), [real(3, 4), ints(2, 3, 4).astype(float)]),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(), [real(3, 4), positive(3, 4)]),
    ("PoissonNLLLoss-full", lambda nn: nn.PoissonNLLLoss(log_input=False, full=True),
     [positive(3, 4), positive(3, 4) * 3]),
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(full=True),
     [real(3, 2), real(3, 2), positive(3, 2)]),
    ("GaussianNLLLoss-var1", lambda nn: nn.GaussianNLLLoss(reduction="sum"),
     [real(3, 2), real(3, 2), positive(3, 1)]),
    ("KLDivLoss", lambda nn: nn.KLDivLoss(reduction="batchmean"),
     [log_probs(3, 4), prob(3, 4)]),
    ("KLDivLoss-logtarget", lambda nn: nn.KLDivLoss(reduction="sum", log_target=True),
     [log_probs(3, 4), log_probs(3, 4)]),
    ("CTCLoss", lambda nn: nn.CTCLoss(), [log_probs(6, 2, 4), 1 + ints(3, 2, 3),
                                          np.array([6, 5]), np.array([3, 2])]),
    ("CTCLoss-sum", lambda nn: nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True),
     [log_probs(5, 2, 4), ints(3, 2, 2), np.array([5, 4]), np.array([2, 2])]),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(margin=0.5, p=1.5, swap=True),
     [real(4, 3), real(4, 3), real(4, 3)]),
    ("TripletMarginWithDistanceLoss", lambda nn: nn.TripletMarginWithDistanceLoss(),
     [real(4, 3), real(4, 3), real(4, 3)]),
    ("TripletMarginWithDistanceLoss-fn", lambda nn: nn.TripletMarginWithDistanceLoss(
        distance_function=nn.PairwiseDistance(p=1.0), margin=2.0, swap=True,
        reduction="none"), [real(4, 3), real(4, 3), real(4, 3)]),
    ("LinearCrossEntropyLoss", lambda nn: nn.LinearCrossEntropyLoss(4, 3),
     [real(5, 4), ints(3, 5)]),
    ("LinearCrossEntropyLoss-kd", lambda nn: nn.LinearCrossEntropyLoss(
        4, 3, out_features=(2,), bias=True, weight=const(nn, [1.0, 2.0, 0.5]), ignore_index=1,
        reduction="sum"), [real(5, 4), ints(3, 5, 2)]),
    ("LinearCrossEntropyLoss-options", lambda nn: nn.LinearCrossEntropyLoss(
        4, 5, bias=True, reduction="none", options=nn.LinearCrossEntropyOptions(
            batch_chunk_size=2, allow_retain_graph=True)), [real(6, 4), ints(5, 6)]),
    ("LinearCrossEntropyLoss-probs", lambda nn: nn.LinearCrossEntropyLoss(3, 4),
     [real(2, 3), prob(2, 4)]),
    ("BCEWithLogitsLoss-posweight", lambda nn: nn.BCEWithLogitsLoss(
        pos_weight=const(nn, [1.0, 2.0, 0.5, 3.0])), [real(3, 4), prob(3, 4)]),
]

OTHERS = [
    ("Dropout1d-eval", lambda nn: nn.Dropout1d(0.3).eval(), [real(2, 3, 4)]),
    ("Dropout2d-eval", lambda nn: nn.Dropout2d().eval(), [real(2, 3, 2, 2)]),
    ("Dropout3d-eval", lambda nn: nn.Dropout3d().eval(), [real(2, 3, 2, 2, 2)]),
    ("AlphaDropout-eval", lambda nn: nn.AlphaDropout(0.2).eval(), [real(3, 4)]),
    ("FeatureAlphaDropout-eval", lambda nn: nn.FeatureAlphaDropout().eval(), [real(2, 3, 4)]),
    ("Dropout2d-p0", lambda nn: nn.Dropout2d(0.0), [real(2, 3, 2, 2)]),
    ("Embedding", lambda nn: nn.Embedding(5, 3), [ints(5, 2, 4)]),
    ("Embedding-padding", lambda nn: nn.Embedding(5, 3, padding_idx=-4),
     [np.array([[1, 2, 1], [0, 4, 1]])]),
    ("Embedding-scale", lambda nn: nn.Embedding(5, 3, scale_grad_by_freq=True, norm_type=1.5),
     [np.array([1, 2, 1, 1, 3])]),
    ("EmbeddingBag-mean", lambda nn: nn.EmbeddingBag(6, 3), [ints(6, 3, 4)]),
    ("EmbeddingBag-sum-offsets", lambda nn: nn.EmbeddingBag(6, 3, mode="sum", padding_idx=2),
     [np.array([1, 2, 4, 5, 2, 0, 3]), np.array([0, 3, 3, 5])]),
    ("EmbeddingBag-max", lambda nn: nn.EmbeddingBag(6, 3, mode="max",
                                                    include_last_offset=True),
     [np.array([1, 2, 4, 5, 0, 3]), np.array([0, 2, 4, 6])]),
    ("EmbeddingBag-weights", lambda nn: nn.EmbeddingBag(6, 3, mode="sum"),
     [np.array([1, 2, 4, 5, 0]), np.array([0, 2]), real(5)]),
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((1, 2)), [real(2, 3)]),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d(1), [real(1, 2, 3)]),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d((1, 0, 0, 1, 2, 0)), [real(1, 1, 2, 2, 2)]),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), [real(2, 3)]),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -1.0), [real(1, 2, 3)]),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d(1, 0.5), [real(1, 2, 2, 2)]),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((2, 1)), [real(2, 2, 4)]),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(1), [real(1, 2, 3, 3)]),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 0, 1, 1, 0, 1)),
     [real(1, 1, 2, 3, 2)]),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d(2), [real(2, 2, 3)]),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 2, 0, 1)), [real(1, 2, 2, 3)]),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(1), [real(1, 1, 2, 2, 2)]),
    ("CircularPad1d", lambda nn: nn.CircularPad1d((2, 1)), [real(2, 2, 4)]),
    ("CircularPad2d", lambda nn: nn.CircularPad2d(1), [real(1, 2, 3, 3)]),
    ("CircularPad3d", lambda nn: nn.CircularPad3d((1, 0, 1, 1, 0, 1)), [real(1, 1, 2, 3, 2)]),
    ("Upsample-nearest", lambda nn: nn.Upsample(scale_factor=2), [real(1, 2, 3)]),
    ("Upsample-bilinear", lambda nn: nn.Upsample(size=(4, 5), mode="bilinear"),
     [real(1, 2, 2, 3)]),
    ("Upsample-trilinear", lambda nn: nn.Upsample(scale_factor=(2, 1.5, 1), mode="trilinear",
                                                  align_corners=True), [real(1, 1, 2, 2, 2)]),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
     [real(1, 2, 2, 3)]),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(size=(3, 5)),
     [real(1, 2, 2, 3)]),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), [real(1, 8, 2, 3)]),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(2), [real(1, 2, 4, 6)]),
    ("ChannelShuffle", lambda nn: nn.ChannelShuffle(2), [real(1, 4, 2, 2)]),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(), [real(4, 3), real(4, 3)]),
    ("PairwiseDistance-p", lambda nn: nn.PairwiseDistance(p=1.5, eps=1e-3, keepdim=True),
     [real(4, 3), real(4, 3)]),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(), [real(4, 3), real(4, 3)]),
    ("CosineSimilarity-dim0", lambda nn: nn.CosineSimilarity(dim=0, eps=1e-4),
     [real(4, 3), real(1, 3)]),
    ("Fold", lambda nn: nn.Fold(output_size=(3, 4), kernel_size=2), [real(1, 8, 6)]),
    ("Fold-strided", lambda nn: nn.Fold((4, 5), (2, 3), dilation=1, padding=1, stride=2),
     [real(2, 6, 9)]),
    ("Unfold", lambda nn: nn.Unfold(kernel_size=(2, 3), padding=1, stride=2),
     [real(1, 2, 4, 5)]),
]

ALL = ACTIVATIONS + LOSSES + OTHERS


# losses PyTorch cannot differentiate with respect to their target
CONSTANT_TARGET = {"SoftMarginLoss": (1,)}


@pytest.mark.filterwarnings("ignore:`NLLLoss2d` has been deprecated:FutureWarning")
@pytest.mark.parametrize("name, factory, inputs", ALL, ids=[c[0] for c in ALL])
def test_layer_matches_torch(torch, name, factory, inputs):
    check_layer(torch, factory, inputs, constant=CONSTANT_TARGET.get(name, ()))


def test_nll_loss_2d_is_deprecated():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        nn.NLLLoss2d()


@pytest.mark.parametrize("name, factory, inputs",
                         [c for c in ALL if c[0] in ("Mish", "PReLU-channels", "HuberLoss",
                                                     "KLDivLoss", "Embedding", "Unfold",
                                                     "Upsample-bilinear")],
                         ids=lambda c: c if isinstance(c, str) else "")
def test_float32_stays_float32(torch, name, factory, inputs):
    compare_module(torch, factory(nn), factory(torch.nn), inputs, dtype="float32")


def test_reprs_with_options(torch):
    for f in [lambda nn: nn.Threshold(0.1, 20, True), lambda nn: nn.RReLU(inplace=True),
              lambda nn: nn.Hardsigmoid(True), lambda nn: nn.Hardswish(True),
              lambda nn: nn.Mish(True), lambda nn: nn.CELU(inplace=True),
              lambda nn: nn.SELU(True), lambda nn: nn.Softmin(),
              lambda nn: nn.Dropout3d(0.2, inplace=True), lambda nn: nn.AlphaDropout(),
              lambda nn: nn.Embedding(4, 2, padding_idx=1, max_norm=1.0, norm_type=3.0,
                                      scale_grad_by_freq=True, sparse=True),
              lambda nn: nn.EmbeddingBag(4, 2, max_norm=1.0, norm_type=1, mode="sum",
                                         padding_idx=0, scale_grad_by_freq=True),
              lambda nn: nn.Upsample(scale_factor=(2, 3)), lambda nn: nn.Upsample(size=3),
              lambda nn: nn.UpsamplingBilinear2d(scale_factor=2),
              lambda nn: nn.ConstantPad2d((1, 2, 3, 4), 0), lambda nn: nn.ZeroPad3d(2),
              lambda nn: nn.Fold(3, (2, 2), stride=1), lambda nn: nn.Unfold(2, 1, 0, 2),
              lambda nn: nn.PairwiseDistance(3), lambda nn: nn.CosineSimilarity(0),
              lambda nn: nn.HuberLoss(), lambda nn: nn.CTCLoss(),
              lambda nn: nn.TripletMarginWithDistanceLoss()]:
        assert repr(f(nn)) == repr(f(torch.nn))


def test_prelu_init():
    m = nn.PReLU(4, init=0.3)
    assert m.weight.shape == (4,) and np.allclose(m.weight.detach().numpy(), 0.3)


def test_rrelu_training_slopes_in_range():
    x = -T.ones(1000)
    y = nn.RReLU(0.1, 0.3)(x).numpy()
    assert ((y <= -0.1 + 1e-7) & (y >= -0.3 - 1e-7)).all() and y.std() > 0.03


@pytest.mark.parametrize("cls, shape", [("Dropout1d", (4, 8, 5)), ("Dropout2d", (4, 8, 3, 3)),
                                        ("Dropout3d", (4, 8, 2, 2, 2))])
def test_channel_dropout_training_zeros_whole_channels(cls, shape):
    x = T.ones(*shape)
    y = getattr(nn, cls)(0.5)(x).numpy()
    per_channel = y.reshape(shape[0] * shape[1], -1)
    for row in per_channel:
        assert np.all(row == 0) or np.allclose(row, 2.0)
    assert 0 < (per_channel[:, 0] == 0).sum() < len(per_channel)


def test_alpha_dropout_keeps_mean_and_variance():
    T.manual_seed(0)
    x = T.randn(20000)
    y = nn.AlphaDropout(0.3)(x).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    assert (y == y[0]).sum() < 10  # training mode changed something, not a constant
    z = nn.FeatureAlphaDropout(0.5)(T.randn(4, 50, 6)).numpy()
    dropped = np.all(z == z[..., :1], axis=-1)  # a dropped channel is one constant value
    assert 0 < dropped.sum() < 200


def test_embedding_init_and_padding_row():
    T.manual_seed(0)
    m = nn.Embedding(200, 20, padding_idx=3)
    w = m.weight.detach().numpy()
    assert np.all(w[3] == 0)
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05
    bag = nn.EmbeddingBag(200, 20)
    assert abs(bag.weight.detach().numpy().std() - 1) < 0.05


def test_embedding_max_norm_renormalises_weight_in_place(torch):
    rg_m, th_m = nn.Embedding(5, 3, max_norm=0.5).double(), torch.nn.Embedding(
        5, 3, max_norm=0.5).double()
    rg_m.load_state_dict({"weight": T.tensor(th_m.weight.detach().numpy().copy())})
    idx = np.array([0, 2, 2, 4])
    close(rg_m(T.tensor(idx)), th_m(torch.tensor(idx)), 1e-12)
    close(rg_m.weight, th_m.weight, 1e-12)


def test_from_pretrained(torch):
    w = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    emb = nn.Embedding.from_pretrained(w, padding_idx=0)
    assert not emb.weight.requires_grad and emb.padding_idx == 0
    assert emb(T.tensor([2])).numpy().tolist() == [[5.0, 6.0]]
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    bag = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not bag.weight.requires_grad
    assert bag(T.tensor([[0, 2]])).numpy().tolist() == [[6.0, 8.0]]
    assert nn.EmbeddingBag.from_pretrained(w, freeze=False).weight.requires_grad
    assert repr(bag) == repr(torch.nn.EmbeddingBag.from_pretrained(
        torch.tensor(w.numpy()), mode="sum"))
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(T.zeros(3))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nn.Embedding(3, 2, padding_idx=3), AssertionError, "Padding_idx must be within"),
    (lambda: nn.EmbeddingBag(3, 2, padding_idx=-4), AssertionError,
     "padding_idx must be within"),
    (lambda: nn.Embedding(3, 2, _weight=T.zeros(2, 2)), AssertionError, "Shape of weight"),
    (lambda: nn.Softmax2d()(T.zeros(2, 3)), ValueError, "expected input to be 3D or 4D"),
    (lambda: nn.CircularPad2d(1)(T.zeros(2, 3)), ValueError, r"expected 3D or 4D input"),
    (lambda: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2"),
    (lambda: nn.MultiMarginLoss(weight=T.ones(2, 2)), ValueError, "expected weight"),
    (lambda: nn.TripletMarginLoss(margin=0), ValueError, "greater than 0"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=-1), ValueError, "greater than 0"),
    (lambda: nn.Dropout2d(1.5), ValueError, "between 0 and 1"),
    (lambda: nn.LinearCrossEntropyLoss(3, 2, out_features=(2,))(T.zeros(3), T.zeros(2)),
     RuntimeError, r"requires batched input, \(N, 3\), got unbatched input with shape \(3,\)"),
    (lambda: nn.LinearCrossEntropyOptions(acc_policy="fast"), ValueError, "invalid acc_policy"),
    (lambda: nn.LinearCrossEntropyOptions(chunking_method="rows"), ValueError,
     "invalid chunking_method: 'rows'"),
    (lambda: nn.LinearCrossEntropyOptions(batch_chunk_size=0), ValueError,
     "batch_chunk_size must be positive int or None, got 0"),
    (lambda: nn.LinearCrossEntropyOptions(acc_dtype=T.int32), ValueError,
     "acc_dtype must be one of"),
    (lambda: nn.LinearCrossEntropyLoss(3, 2, weight=T.ones(3)), RuntimeError,
     r"expected weight shape to be \(2,\), got \(3,\)"),
    (lambda: nn.LinearCrossEntropyLoss(3, 2, label_smoothing=1.5), RuntimeError,
     r"label_smoothing to be in range \[0, 1\]"),
])
def test_errors_match_torch(torch, call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("module", ["conv", "pooling", "batchnorm", "instancenorm",
                                    "normalization", "sparse", "pixelshuffle", "upsampling",
                                    "padding", "distance", "fold", "lazy"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.nn.modules.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("factory, inputs", [
    (lambda nn: nn.PReLU(2), [real(2, 2, 3)]), (lambda nn: nn.Mish(), [real(3, 2)]),
    (lambda nn: nn.GLU(), [real(2, 4)]), (lambda nn: nn.CELU(0.5), [real(3, 2)]),
    (lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"), [real(1, 1, 2, 2)]),
    (lambda nn: nn.ReflectionPad1d(1), [real(1, 2, 3)]),
    (lambda nn: nn.PairwiseDistance(), [real(3, 2), real(3, 2)]),
])
def test_double_backward_matches_torch(torch, factory, inputs):
    compare_double_backward(torch, factory, inputs)


def test_network_repr_and_state_dict_keys_match_torch(torch):
    def net(nn):
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding="same", padding_mode="circular"), nn.BatchNorm2d(8),
            nn.PReLU(8), nn.MaxPool2d(2, return_indices=False), nn.Dropout2d(0.1),
            nn.ConvTranspose2d(8, 4, 2, stride=2), nn.GroupNorm(2, 4), nn.Hardswish(),
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.LayerNorm(4), nn.Embedding(3, 4),
            nn.ModuleDict({"loss": nn.TripletMarginWithDistanceLoss(), "up": nn.Upsample(
                scale_factor=2, mode="bilinear")}))

    rg, th = net(nn), net(torch.nn)
    assert repr(rg) == repr(th)
    assert [(k, tuple(v.shape)) for k, v in rg.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in th.state_dict().items()]


@pytest.mark.parametrize("kwargs, target", [
    (dict(in_features=8, n_classes=10, cutoffs=[3, 6], div_value=2.0),
     np.array([0, 4, 9, 2, 7, 5, 1])),
    (dict(in_features=6, n_classes=7, cutoffs=[2], head_bias=True), np.array([0, 1, 1, 0])),
    (dict(in_features=6, n_classes=9, cutoffs=[2, 4, 8], div_value=1.5),
     np.array([8, 3, 5, 1, 6])),
])
def test_adaptive_log_softmax_matches_torch(torch, kwargs, target):
    rg_m = nn.AdaptiveLogSoftmaxWithLoss(**kwargs).double()
    th_m = torch.nn.AdaptiveLogSoftmaxWithLoss(**kwargs).double()
    assert repr(rg_m) == repr(th_m)
    from .helpers import copy_weights

    copy_weights(rg_m, th_m)
    x = real(len(target), kwargs["in_features"])
    xr, xt = T.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    rg_out, th_out = rg_m(xr, T.tensor(target)), th_m(xt, torch.tensor(target))
    close(rg_out.output, th_out.output, 1e-12)
    close(rg_out.loss, th_out.loss, 1e-12)
    (rg_out.loss + rg_out.output[0]).backward()
    (th_out.loss + th_out.output[0]).backward()
    close(xr.grad, xt.grad, 1e-12)
    th_params = dict(th_m.named_parameters())
    for name, p in rg_m.named_parameters():
        assert (p.grad is None) == (th_params[name].grad is None), name  # an unused cluster
        if p.grad is not None:
            close(p.grad, th_params[name].grad, 1e-12)
    close(rg_m.log_prob(T.tensor(x)), th_m.log_prob(torch.tensor(x)), 1e-12)
    np.testing.assert_array_equal(rg_m.predict(T.tensor(x)).numpy(),
                                  th_m.predict(torch.tensor(x)).numpy())
    one = rg_m(T.tensor(x[0]), T.tensor(target[0]))
    close(one.output, th_m(torch.tensor(x[0]), torch.tensor(target[0])).output, 1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda m: m(T.zeros(3, 8), T.tensor([0, 1])), "same size in the batch dimension"),
    (lambda m: m(T.zeros(1, 2, 8), T.tensor([0])), "1D target tensor expects 2D input"),
    (lambda m: m(T.zeros(2, 8), T.tensor(0)), "0D target tensor expects 1D input"),
    (lambda m: m(T.zeros(2, 8), T.tensor([[0]])), "multi-target not supported"),
    (lambda m: m(T.zeros(2, 8), T.tensor([0, 10])), r"Target values should be in \[0, 9\]"),
])
@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors:UserWarning")
def test_adaptive_log_softmax_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
