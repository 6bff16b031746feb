"""Op tests, resampling: interpolate (every mode), the deprecated upsample spellings,
pixel_shuffle / pixel_unshuffle / channel_shuffle (ops/resample.py); grid_sample and
affine_grid (ops/grid_sample.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.  Nearest modes are
piecewise constant in the input's position, not in its values: their input gradients are
checked like any other.  Bad arguments are in tests/test_argument_errors.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def _interp(m, a, **kw):
    return nnf(m).interpolate(a, **kw)


# (mode, input shape): every mode on every rank it takes
_RANKS = [("nearest", (1, 2, 3)), ("nearest", (1, 2, 3, 2)), ("nearest", (1, 1, 2, 2, 3)),
          ("nearest-exact", (2, 1, 3)), ("nearest-exact", (1, 2, 2, 3)),
          ("nearest-exact", (1, 1, 2, 3, 2)), ("linear", (2, 2, 3)), ("bilinear", (1, 2, 3, 2)),
          ("bicubic", (1, 2, 3, 3)), ("trilinear", (1, 1, 2, 3, 2)), ("area", (1, 2, 5)),
          ("area", (1, 2, 5, 4)), ("area", (1, 1, 3, 4, 5))]
# how the output size is given: up, down, fractional, a size per dim, recomputed scales
_SIZES = {"x2": {"scale_factor": 2}, "x0.6": {"scale_factor": 0.6},
          "x1.7": {"scale_factor": 1.7}, "size": {"size": 4},
          "recompute": {"scale_factor": 1.5, "recompute_scale_factor": True}}
_SPECS = list(_SIZES.items())
_LINEAR = ("linear", "bilinear", "bicubic", "trilinear")
for _i, (_mode, _shape) in enumerate(_RANKS):
    # ways of sizing (rotating through them): two for the linear modes, with both
    # align_corners, one for the others (test_many_sizes_match_torch covers the rest)
    _specs = (_SPECS[_i % 5], _SPECS[(_i + 2) % 5])
    for _sname, _skw in _specs if _mode in _LINEAR else _specs[:1]:
        if _mode == "area" and _sname == "x0.6" and len(_shape) == 3:
            _skw = {"scale_factor": 0.5}
        for _ac in ((None,) if _mode in ("nearest", "nearest-exact", "area") else (False, True)):
            kw = dict(_skw, mode=_mode, align_corners=_ac)
            case(f"interpolate_{_mode}_{len(_shape) - 2}d_{_sname}_ac{_ac}", _interp, (_shape,),
                 params=kw)
for _mode in ("bilinear", "bicubic"):  # antialias (outputs wider than 1: see interpolate)
    case(f"interpolate_{_mode}_antialias_down", _interp, ((1, 2, 5, 6),),
         params={"size": (2, 3), "mode": _mode, "antialias": True})
    case(f"interpolate_{_mode}_antialias_mixed_ac", _interp, ((1, 1, 3, 5),),
         params={"scale_factor": (1.7, 0.5), "mode": _mode, "antialias": True,
                 "align_corners": True})
case("interpolate_lanczos", _interp, ((1, 2, 7, 5),),
     params={"size": (3, 8), "mode": "lanczos", "antialias": True})
case("interpolate_tuple_scale", _interp, ((1, 1, 3, 4),),
     params={"scale_factor": (1.5, 0.5), "mode": "bilinear"})
case("interpolate_tuple_size", _interp, ((1, 2, 3, 4),),
     params={"size": (5, 2), "mode": "bicubic", "align_corners": True})
case("interpolate_area_up", _interp, ((1, 1, 2, 3),), params={"size": (5, 4), "mode": "area"})
case("interpolate_same_size", _interp, ((1, 1, 3, 3),), params={"size": 3, "mode": "bilinear"})
case("interpolate_to_one", _interp, ((1, 1, 3, 3),),
     params={"size": 1, "mode": "bilinear", "align_corners": True})
case("interpolate_chain", lambda m, a: _interp(m, _interp(m, a, scale_factor=2) * a.sum(),
                                               size=3, mode="linear"), ((1, 2, 2),))
case("upsample", lambda m, a: nnf(m).upsample(a, scale_factor=2, mode="bilinear"),
     ((1, 1, 2, 3),))
case("upsample_nearest", lambda m, a: nnf(m).upsample_nearest(a, size=(3, 5)), ((1, 2, 2, 3),))
case("upsample_bilinear", lambda m, a: nnf(m).upsample_bilinear(a, scale_factor=2),
     ((1, 1, 2, 3),))

# shuffles
case("pixel_shuffle", lambda m, a: nnf(m).pixel_shuffle(a, 2), ((1, 8, 2, 3),))
case("pixel_shuffle_fn_batchless", lambda m, a: m.pixel_shuffle(a, 3), ((9, 1, 2),))
case("pixel_shuffle_5d", lambda m, a: m.pixel_shuffle(a, 2), ((2, 1, 4, 1, 2),))
case("pixel_unshuffle", lambda m, a: nnf(m).pixel_unshuffle(a, 2), ((1, 2, 4, 2),))
case("pixel_unshuffle_fn", lambda m, a: m.pixel_unshuffle(a, 1), ((2, 3, 2),))
case("pixel_roundtrip", lambda m, a: m.pixel_unshuffle(m.pixel_shuffle(a, 2) ** 2, 2),
     ((1, 4, 2, 1),))
case("channel_shuffle", lambda m, a: nnf(m).channel_shuffle(a, 2), ((2, 6, 2),))
case("channel_shuffle_fn", lambda m, a: m.channel_shuffle(a, 3), ((1, 6, 1, 2),))
_NO_DERIVATIVE = dict.fromkeys(("gradcheck", "gradgradcheck", "grads"),
                              "PyTorch's native_channel_shuffle has no derivative")
case("native_channel_shuffle", lambda m, a: m.native_channel_shuffle(a, 2) * a, ((1, 4, 3),),
     xfail=_NO_DERIVATIVE)
case("native_channel_shuffle_F", lambda m, a: nnf(m).native_channel_shuffle(a, 4),
     ((2, 4, 1),), xfail=_NO_DERIVATIVE)




# ----------------------------------------------------------------- grid_sample, affine_grid
def _grid(m, g, scale=1.4):
    """A grid reaching past [-1, 1] (so the padding modes matter), from a tanh."""
    return g.tanh() * scale


_GS_SHAPES = {4: ((1, 2, 3, 4), (1, 2, 3, 2)), 5: ((1, 1, 2, 3, 3), (1, 2, 1, 2, 3))}
# every mode with every padding (align_corners alternating); 3-d: bilinear, and nearest once
for _nd, _modes in ((4, ("bilinear", "nearest", "bicubic")), (5, ("bilinear", "nearest"))):
    for _i, _mode in enumerate(_modes):
        for _j, _pad in enumerate(("zeros", "border", "reflection")):
            if _nd == 5 and _mode == "nearest" and _pad != "zeros":
                continue
            _ac = bool((_i + _j + _nd) % 2)
            kw = {"mode": _mode, "padding_mode": _pad, "align_corners": _ac}
            case(f"grid_sample_{_nd}d_{_mode}_{_pad}_ac{_ac}",
                 lambda m, a, g, **kw: nnf(m).grid_sample(a, _grid(m, g), **kw),
                 ((1, 1, 3, 3), (1, 2, 2, 2)) if _mode == "bicubic" else _GS_SHAPES[_nd],
                 params=kw)
case("grid_sample_batch2", lambda m, a, g: nnf(m).grid_sample(a, _grid(m, g, 0.9),
                                                               align_corners=False),
     ((2, 1, 3, 3), (2, 2, 2, 2)))
case("affine_grid", lambda m, t: nnf(m).affine_grid(t, (2, 3, 3, 4), align_corners=False),
     ((2, 2, 3),))
case("affine_grid_ac", lambda m, t: nnf(m).affine_grid(t, [1, 1, 2, 3], align_corners=True),
     ((1, 2, 3),))
case("affine_grid_3d", lambda m, t: nnf(m).affine_grid(t, (1, 2, 2, 3, 2), align_corners=False),
     ((1, 3, 4),))
case("affine_grid_3d_ac_unit", lambda m, t: nnf(m).affine_grid(t, (2, 1, 1, 2, 3),
                                                               align_corners=True), ((2, 3, 4),))
case("affine_then_sample", lambda m, a, t: nnf(m).grid_sample(
    a, nnf(m).affine_grid(t, (1, 2, 3, 3), align_corners=False), align_corners=False,
    padding_mode="border"), ((1, 2, 4, 4), (1, 2, 3)))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)

# ----------------------------------------------------------------- index arithmetic


def test_antialias_many_sizes_match_torch(torch):
    rng = np.random.default_rng(1)
    for mode in ("bilinear", "bicubic", "lanczos"):
        for n_in in (2, 3, 5, 8, 13):
            x = rng.standard_normal((1, 1, n_in, 4)).astype(np.float32)
            for n_out in (1, 2, 3, 4, 7, 11, 20):
                for ac in (False, True) if mode != "lanczos" else (False,):
                    kw = {"size": (n_out, 2), "mode": mode, "antialias": True,
                          "align_corners": ac}
                    want = torch.nn.functional.interpolate(torch.tensor(x), **kw).numpy()
                    got = retrograd.nn.functional.interpolate(retrograd.tensor(x), **kw)
                    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6,
                                               err_msg=f"{mode} {n_in} {kw}")


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear", "area"])
def test_many_sizes_match_torch(mode, torch):
    """Every input size to every output size (and many scale factors): PyTorch's index
    arithmetic exactly, float32 rounding of nearest indices included."""
    rng = np.random.default_rng(0)
    for n_in in range(1, 9):
        x = rng.standard_normal((1, 2, n_in)).astype(np.float32)
        calls = [{"size": n} for n in range(1, 12)]
        calls += [{"scale_factor": s} for s in (0.3, 0.5, 0.7, 1.3, 2.0, 2.5, 3.0, 10 / 3)]
        for kw in calls:
            if kw.get("scale_factor", 1) * n_in < 1:
                continue
            want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kw).numpy()
            got = retrograd.nn.functional.interpolate(retrograd.tensor(x), mode=mode, **kw)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{mode} {n_in} {kw}")


def test_deprecated_spellings_warn_as_torch(torch):
    x = np.ones((1, 1, 2, 2))
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        for m in (torch, retrograd):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                getattr(m.nn.functional, name)(m.tensor(x), scale_factor=2)
            assert [type(w.message) for w in seen] == [UserWarning], name
            assert f"nn.functional.{name}` is deprecated" in str(seen[0].message)


def test_uint8_nearest_keeps_its_dtype(torch):
    x = np.arange(6, dtype=np.uint8).reshape(1, 1, 2, 3)
    want = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=2)
    got = retrograd.nn.functional.interpolate(retrograd.tensor(x), scale_factor=2)
    assert got.dtype == retrograd.uint8
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_empty_batch(torch):
    got = retrograd.nn.functional.interpolate(retrograd.zeros(0, 2, 3, 3), scale_factor=2,
                                              mode="bilinear")
    assert tuple(got.shape) == (0, 2, 6, 6)



@pytest.mark.parametrize("module", ["padding", "resample", "grid_sample", "attention"])
def test_docstring_examples_run(module):
    """The Examples sections of issue 8's op modules are true."""
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.ops.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
