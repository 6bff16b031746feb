"""nn.utils.fusion (conv/linear + BatchNorm folding), nn.utils.skip_init with
Module.to_empty, and the deprecated nn.utils.stateless.functional_call, against PyTorch:
fused weights and outputs (torch's weights and BatchNorm statistics copied in), dtypes,
requires_grad, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
from retrograd import nn

from .helpers import close, copy_weights

RNG = np.random.default_rng(0)


def _trained_bn(torch, bn, channels_shape):
    """Give PyTorch's BatchNorm non-trivial statistics and affine parameters."""
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor(RNG.standard_normal(channels_shape)))
        bn.running_var.copy_(torch.tensor(RNG.uniform(0.5, 2.0, channels_shape)))
        if bn.affine:
            bn.weight.copy_(torch.tensor(RNG.standard_normal(channels_shape)))
            bn.bias.copy_(torch.tensor(RNG.standard_normal(channels_shape)))
    return bn.eval()


CONV_CASES = {
    "conv2d": (lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: lib.nn.BatchNorm2d(3), False,
               (1, 2, 5, 5)),
    "conv1d_no_bias": (lambda lib: lib.nn.Conv1d(2, 3, 2, bias=False),
                       lambda lib: lib.nn.BatchNorm1d(3), False, (2, 2, 6)),
    "conv2d_bn_no_affine": (lambda lib: lib.nn.Conv2d(2, 3, 1),
                            lambda lib: lib.nn.BatchNorm2d(3, affine=False), False, (1, 2, 3, 3)),
    "conv_transpose2d": (lambda lib: lib.nn.ConvTranspose2d(2, 3, 2),
                         lambda lib: lib.nn.BatchNorm2d(3), True, (1, 2, 3, 3)),
}


@pytest.mark.parametrize("name", list(CONV_CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fuse_conv_bn_eval_matches_torch(torch, name, dtype):
    make_conv, make_bn, transpose, x_shape = CONV_CASES[name]
    th_conv = make_conv(torch).to(getattr(torch, dtype)).eval()
    th_bn = _trained_bn(torch, make_bn(torch).to(getattr(torch, dtype)), (3,))
    rg_conv = make_conv(T).to(getattr(T, dtype)).eval()
    rg_bn = make_bn(T).to(getattr(T, dtype)).eval()
    copy_weights(rg_conv, th_conv)
    copy_weights(rg_bn, th_bn)
    ours = nn.utils.fuse_conv_bn_eval(rg_conv, rg_bn, transpose=transpose)
    theirs = torch.nn.utils.fuse_conv_bn_eval(th_conv, th_bn, transpose=transpose)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert ours is not rg_conv and type(ours) is type(rg_conv)
    for key, value in theirs.state_dict().items():
        close(ours.state_dict()[key], value, tol)
        assert str(ours.state_dict()[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]
    assert isinstance(ours.weight, nn.Parameter) and isinstance(ours.bias, nn.Parameter)
    x = RNG.standard_normal(x_shape).astype(dtype)
    close(ours(T.tensor(x)), th_bn(th_conv(torch.tensor(x))), tol)


def test_fuse_conv_bn_weights_requires_grad_follows_inputs(torch):
    w = RNG.standard_normal((3, 2, 1))
    rm, rv = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    for lib, fuse in ((T, nn.utils.fuse_conv_bn_weights),
                      (torch, torch.nn.utils.fuse_conv_bn_weights)):
        fw, fb = fuse(lib.tensor(w, requires_grad=False), None, lib.tensor(rm), lib.tensor(rv),
                      1e-5, None, None)
        assert (fw.requires_grad, fb.requires_grad) == (False, False)
    ours = nn.utils.fuse_conv_bn_weights(T.tensor(w), None, T.tensor(rm), T.tensor(rv), 1e-3,
                                         None, None)
    theirs = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(w), None, torch.tensor(rm),
                                                 torch.tensor(rv), 1e-3, None, None)
    for a, b in zip(ours, theirs):
        close(a, b, 1e-12)


@pytest.mark.parametrize("features", [4, 1])
def test_fuse_linear_bn_eval_matches_torch(torch, features):
    th_lin = torch.nn.Linear(3, 4).double().eval()
    th_bn = _trained_bn(torch, torch.nn.BatchNorm1d(features).double(), (features,))
    rg_lin, rg_bn = nn.Linear(3, 4).double().eval(), nn.BatchNorm1d(features).double().eval()
    copy_weights(rg_lin, th_lin)
    copy_weights(rg_bn, th_bn)
    ours = nn.utils.fuse_linear_bn_eval(rg_lin, rg_bn)
    theirs = torch.nn.utils.fuse_linear_bn_eval(th_lin, th_bn)
    for key, value in theirs.state_dict().items():
        close(ours.state_dict()[key], value, 1e-12)
    x = RNG.standard_normal((5, 3))
    close(ours(T.tensor(x)), theirs(torch.tensor(x)), 1e-12)
    # the fused weights still train: gradients as PyTorch's
    g = RNG.standard_normal((5, 4))
    ours(T.tensor(x)).backward(T.tensor(g))
    theirs(torch.tensor(x)).backward(torch.tensor(g))
    close(ours.weight.grad, theirs.weight.grad, 1e-12)
    close(ours.bias.grad, theirs.bias.grad, 1e-12)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type.__name__, str(info.value)


@pytest.mark.parametrize("case", ["conv_training", "linear_training", "linear_features",
                                  "bn_no_stats", "skip_init_not_module",
                                  "skip_init_no_device"])
def test_errors_match_torch(torch, case):
    def run(lib):
        u = lib.nn.utils
        if case == "conv_training":
            u.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2).eval())
        elif case == "linear_training":
            u.fuse_linear_bn_eval(lib.nn.Linear(1, 2).eval(), lib.nn.BatchNorm1d(2))
        elif case == "linear_features":
            u.fuse_linear_bn_eval(lib.nn.Linear(1, 2).eval(), lib.nn.BatchNorm1d(3).eval())
        elif case == "bn_no_stats":
            u.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 1).eval(),
                                lib.nn.BatchNorm2d(2, track_running_stats=False).eval())
        elif case == "skip_init_not_module":
            u.skip_init(int, 3)
        else:
            u.skip_init(lib.nn.Identity)

    assert _error(lambda: run(T)) == _error(lambda: run(torch))


def test_skip_init_builds_the_same_module(torch):
    for args, kwargs in (((5, 2), {}), ((), {"in_features": 3, "out_features": 1,
                                               "bias": False, "dtype": T.float64})):
        ours = nn.utils.skip_init(nn.Linear, *args, **kwargs)
        th_kwargs = {k: (torch.float64 if k == "dtype" else v) for k, v in kwargs.items()}
        theirs = torch.nn.utils.skip_init(torch.nn.Linear, *args, **th_kwargs)
        assert repr(ours) == repr(theirs)
        for (name, p), (th_name, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert name == th_name and tuple(p.shape) == tuple(q.shape)
            assert isinstance(p, nn.Parameter) and p.requires_grad
            assert str(p.dtype).split(".")[-1] == str(q.dtype).split(".")[-1]


def test_to_empty_keeps_shapes_dtypes_and_parameter_objects():
    m = nn.BatchNorm1d(3).double()
    weight = m.weight
    assert m.to_empty(device="cpu") is m
    assert m.weight is weight and m.weight.dtype == T.float64
    assert m.running_var.shape == (3,) and m.num_batches_tracked.dtype == T.int64


def test_stateless_functional_call_warns_and_matches_torch(torch):
    th = torch.nn.Linear(2, 3).double()
    ours = nn.Linear(2, 3).double()
    w, b = RNG.standard_normal((3, 2)), RNG.standard_normal(3)
    x = RNG.standard_normal((4, 2))
    results, messages = [], []
    for lib, m in ((T, ours), (torch, th)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(lib.nn.utils.stateless.functional_call(
                m, {"weight": lib.tensor(w), "bias": lib.tensor(b)}, lib.tensor(x)))
        messages.append([(c.category, str(c.message)) for c in caught])
    assert messages[0] == messages[1]
    close(results[0], results[1], 1e-12)
