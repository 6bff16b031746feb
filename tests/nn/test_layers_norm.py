"""Normalisation layers against PyTorch: repr, state_dict, outputs and gradients with the
same weights (float64, tight), running statistics over train/eval steps (momentum, momentum
None, no tracking), unbatched instance norm, argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd import nn

from .helpers import check_layer, close, compare_double_backward, compare_module, to_rg

RNG = np.random.default_rng(5)


def real(*shape):
    return RNG.standard_normal(shape)


def affine(nn, module):
    """Random affine parameters (PyTorch's start at 1 and 0, which would hide mistakes)."""
    import torch

    if isinstance(module, torch.nn.Module):
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.tensor(RNG.standard_normal(tuple(p.shape))))
    return module


LAYERS = [
    ("BatchNorm1d-2d", lambda nn: nn.BatchNorm1d(3), [real(4, 3)]),
    ("BatchNorm1d-3d", lambda nn: nn.BatchNorm1d(2, momentum=None), [real(3, 2, 4)]),
    ("BatchNorm1d-eval", lambda nn: nn.BatchNorm1d(3).eval(), [real(4, 3)]),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(2, eps=1e-3, affine=False), [real(2, 2, 3, 3)]),
    ("BatchNorm2d-nobias", lambda nn: nn.BatchNorm2d(2, bias=False), [real(2, 2, 2, 3)]),
    ("BatchNorm3d", lambda nn: nn.BatchNorm3d(2, track_running_stats=False),
     [real(2, 2, 2, 2, 2)]),
    ("BatchNorm3d-notrack-eval", lambda nn: nn.BatchNorm3d(2, track_running_stats=False).eval(),
     [real(2, 2, 2, 2, 2)]),
    ("SyncBatchNorm", lambda nn: nn.SyncBatchNorm(3), [real(4, 3, 2)]),
    ("SyncBatchNorm-4d", lambda nn: nn.SyncBatchNorm(2, momentum=None, bias=False),
     [real(2, 2, 2, 2)]),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(2), [real(2, 2, 5)]),
    ("InstanceNorm1d-unbatched", lambda nn: nn.InstanceNorm1d(2, affine=True), [real(2, 5)]),
    ("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3, affine=True, bias=False),
     [real(2, 3, 3, 3)]),
    ("InstanceNorm2d-track", lambda nn: nn.InstanceNorm2d(2, track_running_stats=True),
     [real(2, 2, 3, 3)]),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2, affine=True), [real(1, 2, 2, 3, 2)]),
    ("LayerNorm", lambda nn: nn.LayerNorm(4), [real(3, 4)]),
    ("LayerNorm-2d", lambda nn: nn.LayerNorm([2, 3], eps=1e-3, bias=False), [real(2, 2, 3)]),
    ("LayerNorm-noaffine", lambda nn: nn.LayerNorm((3,), elementwise_affine=False),
     [real(2, 3)]),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), [real(2, 4, 3)]),
    ("GroupNorm-noaffine", lambda nn: nn.GroupNorm(3, 3, affine=False), [real(2, 3, 2, 2)]),
    ("GroupNorm-nobias", lambda nn: nn.GroupNorm(1, 2, bias=False), [real(2, 2, 3)]),
    ("RMSNorm", lambda nn: nn.RMSNorm(4), [real(3, 4)]),
    ("RMSNorm-eps", lambda nn: nn.RMSNorm([2, 3], eps=1e-3), [real(2, 2, 3)]),
    ("RMSNorm-noaffine", lambda nn: nn.RMSNorm(3, elementwise_affine=False), [real(2, 3)]),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=2.0),
     [real(2, 5, 3)]),
    ("LocalResponseNorm-4d", lambda nn: nn.LocalResponseNorm(2), [real(1, 4, 2, 2)]),
]


@pytest.mark.parametrize("name, factory, inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(torch, name, factory, inputs):
    check_layer(torch, lambda nn: affine(nn, factory(nn)), inputs)


@pytest.mark.parametrize("factory, shape", [(lambda nn: nn.BatchNorm2d(2), (2, 2, 3, 3)),
                                            (lambda nn: nn.LayerNorm(3), (2, 3)),
                                            (lambda nn: nn.GroupNorm(2, 4), (2, 4, 2))])
def test_float32_stays_float32(torch, factory, shape):
    compare_module(torch, factory(nn), factory(torch.nn), [real(*shape)], dtype="float32")


@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"momentum": 0.3},
                                    {"track_running_stats": False}, {"affine": False}])
@pytest.mark.parametrize("cls, shape", [("BatchNorm1d", (4, 3)), ("BatchNorm2d", (2, 3, 2, 2)),
                                        ("BatchNorm3d", (2, 3, 2, 1, 2)),
                                        ("InstanceNorm1d", (2, 3, 4)),
                                        ("SyncBatchNorm", (2, 3, 2, 2))])
def test_running_stats_over_train_and_eval_steps(torch, cls, shape, kwargs):
    """Three training steps, an eval step, another training step: running_mean,
    running_var, num_batches_tracked and every output equal PyTorch's."""
    if cls.startswith("Instance"):
        kwargs = {**kwargs, "track_running_stats": kwargs.get("track_running_stats", True)}
    rg_m = getattr(nn, cls)(3, **kwargs).double()
    th_m = getattr(torch.nn, cls)(3, **kwargs).double()
    for step, train in enumerate([True, True, True, False, True]):
        rg_m.train(train)
        th_m.train(train)
        x = real(*shape) * (step + 1) + step
        close(rg_m(T.tensor(x)), th_m(torch.tensor(x)).detach(), 1e-10)
        th_state = th_m.state_dict()
        rg_state = rg_m.state_dict()
        assert list(rg_state) == list(th_state)
        for key, value in th_state.items():
            close(rg_state[key], value, 1e-10)
            assert str(rg_state[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]


def test_momentum_none_is_cumulative_average():
    bn = nn.BatchNorm1d(1, momentum=None, affine=False)
    means = []
    for k in range(4):
        x = T.tensor([[float(k)], [float(k) + 2.0]])
        means.append(k + 1.0)
        bn(x)
    assert int(bn.num_batches_tracked) == 4
    np.testing.assert_allclose(bn.running_mean.numpy(), [np.mean(means)], rtol=1e-6)


def test_reset_and_init():
    bn = nn.BatchNorm2d(3)
    assert bn.weight.detach().numpy().tolist() == [1.0] * 3
    assert bn.bias.detach().numpy().tolist() == [0.0] * 3
    bn(T.randn(2, 3, 2, 2))
    assert int(bn.num_batches_tracked) == 1
    bn.reset_running_stats()
    assert int(bn.num_batches_tracked) == 0
    assert bn.running_mean.numpy().tolist() == [0.0] * 3
    assert bn.running_var.numpy().tolist() == [1.0] * 3
    assert bn.num_batches_tracked.dtype == T.int64
    for m in (nn.LayerNorm(3), nn.GroupNorm(1, 3), nn.RMSNorm(3),
              nn.InstanceNorm1d(3, affine=True)):
        assert m.weight.detach().numpy().tolist() == [1.0] * 3


def test_old_checkpoint_without_num_batches_tracked_loads(torch):
    bn = nn.BatchNorm1d(2)
    th = torch.nn.BatchNorm1d(2)
    state = {k: to_rg(v) for k, v in th.state_dict().items() if k != "num_batches_tracked"}
    result = bn.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys


def test_batchnorm_eval_uses_running_stats(torch):
    th = torch.nn.BatchNorm1d(3).double()
    rg = nn.BatchNorm1d(3).double()
    th.running_mean.copy_(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))
    th.running_var.copy_(torch.tensor([4.0, 0.25, 1.0], dtype=torch.float64))
    compare_module(torch, rg.eval(), th.eval(), [real(4, 3)], dtype="float64")


def test_reprs(torch):
    for f in [lambda nn: nn.BatchNorm1d(3, momentum=None, track_running_stats=False),
              lambda nn: nn.InstanceNorm3d(2, affine=True),
              lambda nn: nn.LayerNorm([2, 3], elementwise_affine=False),
              lambda nn: nn.RMSNorm([2], eps=1e-4), lambda nn: nn.GroupNorm(2, 4, affine=False),
              lambda nn: nn.LocalResponseNorm(5)]:
        assert repr(f(nn)) == repr(f(torch.nn))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nn.BatchNorm1d(3)(T.zeros(2, 3, 2, 2)), ValueError,
     r"expected 2D or 3D input \(got 4D"),
    (lambda: nn.BatchNorm2d(3)(T.zeros(2, 3)), ValueError, r"expected 4D input \(got 2D"),
    (lambda: nn.BatchNorm3d(3)(T.zeros(2, 3)), ValueError, r"expected 5D input \(got 2D"),
    (lambda: nn.InstanceNorm2d(3)(T.zeros(3, 3)), ValueError, r"expected 3D or 4D input"),
    (lambda: nn.InstanceNorm1d(3, affine=True)(T.zeros(2, 4, 5)), ValueError,
     r"expected input's size at dim=1 to match num_features \(3\), but got: 4"),
    (lambda: nn.SyncBatchNorm(3)(T.zeros(3)), ValueError, r"expected at least 2D input"),
    (lambda: nn.SyncBatchNorm(0)(T.zeros(2, 0)), ValueError, "should be non-zero"),
    (lambda: nn.GroupNorm(3, 4), ValueError, r"num_channels \(4\) must be divisible"),
    (lambda: nn.CrossMapLRN2d(3)(T.zeros(2, 3, 4)), ValueError,
     "CrossMapLRN2d: Expected input to be 4D, got 3D instead"),
])
def test_errors_match_torch(torch, call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_instance_norm_feature_mismatch_warns_without_affine():
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(T.randn(2, 4, 5))


@pytest.mark.parametrize("cls, kwargs, shape", [
    ("LazyBatchNorm1d", {}, (4, 3)), ("LazyBatchNorm2d", {"affine": False}, (2, 3, 2, 2)),
    ("LazyBatchNorm3d", {"momentum": None, "bias": False}, (2, 2, 2, 1, 2)),
    ("LazyInstanceNorm1d", {}, (2, 3, 4)),
    ("LazyInstanceNorm2d", {"track_running_stats": False}, (2, 3, 2, 2)),
    ("LazyInstanceNorm3d", {"affine": False}, (1, 2, 2, 2, 2)),
])
def test_lazy_norm_becomes_norm(torch, cls, kwargs, shape):
    rg_m, th_m = getattr(nn, cls)(**kwargs), getattr(torch.nn, cls)(**kwargs)
    assert repr(rg_m) == repr(th_m)
    assert list(rg_m.state_dict()) == list(th_m.state_dict())
    x = real(*shape).astype(np.float32)
    close(rg_m(T.tensor(x)), th_m(torch.tensor(x)).detach(), 1e-5)
    assert type(rg_m).__name__ == type(th_m).__name__ == cls[4:]
    assert repr(rg_m) == repr(th_m)
    for key, value in th_m.state_dict().items():
        close(rg_m.state_dict()[key], value, 1e-5)


@pytest.mark.parametrize("args, shape", [((3,), (2, 5, 2, 3)), ((4, 0.5, 0.6, 2.0), (1, 6, 2, 2)),
                                         ((5, 0.3, 0.9, 1.5), (1, 3, 2, 2)),
                                         ((1, 0.3), (1, 3, 1, 2))])
def test_cross_map_lrn2d(torch, args, shape):
    """Values and repr as PyTorch's legacy CrossMapLRN2d (its uncentred window). Gradients
    are checked against finite differences, not against PyTorch: PyTorch's hand-written
    legacy backward is not the derivative of its forward (it fails torch's own gradcheck)."""
    from retrograd.autograd import gradcheck, gradgradcheck

    assert repr(nn.CrossMapLRN2d(*args)) == repr(torch.nn.CrossMapLRN2d(*args))
    x = real(*shape)
    close(nn.CrossMapLRN2d(*args)(T.tensor(x)),
          torch.nn.CrossMapLRN2d(*args)(torch.tensor(x)), 1e-12)
    xs = T.tensor(x[:1, :, :1], requires_grad=True)
    m = nn.CrossMapLRN2d(*args)
    assert gradcheck(m, (xs,))
    assert gradgradcheck(m, (xs,))


@pytest.mark.parametrize("factory, shape", [
    (lambda nn: nn.BatchNorm1d(3), (4, 3)), (lambda nn: nn.GroupNorm(2, 4), (2, 4, 2)),
    (lambda nn: nn.LayerNorm(3), (2, 3)), (lambda nn: nn.InstanceNorm1d(2, affine=True),
                                           (2, 2, 3)),
    (lambda nn: nn.RMSNorm(3), (2, 3)),
])
def test_double_backward_matches_torch(torch, factory, shape):
    compare_double_backward(torch, lambda nn: affine(nn, factory(nn)), [real(*shape)])


def test_convert_sync_batchnorm_shares_parameters_and_stats(torch):
    def net(nn):
        return nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2),
                             nn.Sequential(nn.BatchNorm1d(3, bias=False).eval()))

    rg = net(nn)
    weight, stats = rg[1].weight, rg[1].running_mean
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(rg)
    expected = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net(torch.nn))
    assert repr(converted) == repr(expected)
    assert type(converted[1]) is nn.SyncBatchNorm and converted[1].weight is weight
    assert converted[1].running_mean is stats and not converted[2][0].training
    assert list(converted.state_dict()) == list(expected.state_dict())


@pytest.mark.parametrize("make", [lambda: nn.LazyConv2d(4, 3), lambda: nn.LazyBatchNorm2d(),
                                  lambda: nn.LazyInstanceNorm2d(affine=False)])
def test_lazy_modules_pickle_and_deepcopy_before_first_call(make):
    import copy
    import pickle

    x = T.randn(2, 3, 4, 4)
    for clone in (pickle.loads(pickle.dumps(make())), copy.deepcopy(make())):
        out = clone(x)
        assert clone.weight is None or clone.weight.shape[0] in (3, 4)
        assert out.shape[:2] in ((2, 4), (2, 3)) and not clone._forward_pre_hooks
        assert not type(clone).__name__.startswith("Lazy")


def test_instance_norm_pre_0_4_checkpoint_with_running_stats(torch):
    """A state dict without version metadata that carries running stats an untracked
    InstanceNorm lacks: the same error as PyTorch's, the keys dropped."""
    state = {"running_mean": T.zeros(3), "running_var": T.ones(3)}
    th_state = {k: torch.tensor(v.numpy()) for k, v in state.items()}
    with pytest.raises(RuntimeError) as rg_err:
        nn.InstanceNorm1d(3).load_state_dict(state)
    with pytest.raises(RuntimeError) as th_err:
        torch.nn.InstanceNorm1d(3).load_state_dict(th_state)
    message = 'Unexpected running stats buffer(s) "running_mean" and "running_var"'
    assert message in str(rg_err.value) and message in str(th_err.value)
