"""Forward mode on every op of the library: one row per registered op of the op tables
(tests/ops/*: the ``CASES`` that drive gradcheck; ``RETROGRAD_FWD_ALL=1`` runs every row) is
run on float64 duals with one random tangent, and every float output's tangent is checked
against

* the finite-difference directional derivative ``(f(x + eps t) - f(x - eps t)) / 2 eps``;
* PyTorch's forward AD on the same inputs and tangent, where PyTorch has a forward
  derivative for the op (``TORCH_LACKS`` lists, from running it, where it does not).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import warnings
import zlib

import numpy as np
import pytest

import retrograd
import retrograd.autograd.forward_ad as fwAD
import tests.ops as op_tests

from tests.ops.helpers import as_numpy, outputs, recording_outermost_calls


def _all_cases():
    cases = []
    for info in pkgutil.iter_modules(op_tests.__path__):
        if info.name.startswith("test_") and info.name != "test_registry":
            mod = importlib.import_module(f"tests.ops.{info.name}")
            cases.extend(getattr(mod, "CASES", ()))
    return cases


def _one_per_op(cases):
    """The first case calling each registered op (a case calling none is kept)."""
    kept, covered = [], set()
    with recording_outermost_calls() as hits:
        for c in cases:
            hits.clear()
            with contextlib.suppress(Exception):
                _call_quietly(c, retrograd, [retrograd.tensor(a) for a in c.arrays()])
            if not hits or not hits <= covered:
                kept.append(c)
                covered |= hits
    return kept


EPS = 1e-6


def _tangents(case, arrays):
    rng = np.random.default_rng(7 + zlib.crc32(case.name.encode()))
    return [rng.standard_normal(a.shape) for a in arrays]


def _float_outputs(out):
    return [o for o in outputs(out) if hasattr(o, "dtype") and o.dtype.is_floating_point]


def _call_quietly(case, m, xs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return case.call(m, *xs)


def _values(case, arrays):
    xs = [retrograd.tensor(a) for a in arrays]
    return [as_numpy(o) for o in _float_outputs(_call_quietly(case, retrograd, xs))]


def _jvp(m, ad, case, arrays, tangents):
    """(primal outputs, tangent outputs) of the case under ``m``'s forward AD (float64)."""
    with ad.dual_level():
        xs = [ad.make_dual(m.tensor(a, dtype=m.float64), m.tensor(t, dtype=m.float64))
              for a, t in zip(arrays, tangents)]
        outs = _float_outputs(_call_quietly(case, m, xs))
        result = []
        for o in outs:
            primal, tangent = ad.unpack_dual(o)
            if getattr(tangent, "_is_zerotensor", lambda: False)():
                tangent = None  # PyTorch's lazy zeros (slogdet's sign)
            result.append((as_numpy(primal),
                           None if tangent is None else as_numpy(tangent)))
    return result


ALL_CASES = _all_cases()
CASES = ALL_CASES if os.environ.get("RETROGRAD_FWD_ALL") else _one_per_op(ALL_CASES)


def _error_case(case, arrays):
    """Skip a case whose call raises (an error row of the op tables: ``imag`` of a real
    tensor) after checking PyTorch raises the same class on it: no derivative to check."""
    try:
        _values(case, arrays)
    except Exception as e:  # noqa: BLE001 - which error is checked against PyTorch below
        import torch

        with pytest.raises(type(e)):
            _call_quietly(case, torch, [torch.tensor(a) for a in arrays])
        pytest.skip(f"an error case: retrograd and PyTorch both raise {type(e).__name__}")


def _deterministic(case, arrays):
    _error_case(case, arrays)
    first, second = _values(case, arrays), _values(case, arrays)
    return all(np.array_equal(a, b, equal_nan=True) for a, b in zip(first, second))


# where no tangent comes out (None), as in PyTorch's forward AD, though finite differences
# see a change: the case cuts the tangent itself, or the op is not differentiable
_DETACHED = "the case detaches its input (x.detach()...): no tangent, as PyTorch's"
NO_TANGENT = {
    "logspace": _DETACHED, "resize_": _DETACHED, "resize_as_": _DETACHED,
    "igamma_": _DETACHED, "igammac_": _DETACHED, "detach_fn": _DETACHED,
    "detach__fn": _DETACHED, "apply_map": _DETACHED, "histogramdd": _DETACHED,
}
# ops PyTorch's forward AD refuses ("Trying to use forward AD with ..."): histogram,
# histogramdd, unique, unique_consecutive, bincount's weights; retrograd raises the same
# NotImplementedError on a dual input rather than giving an output with no tangent
_REFUSED = "Trying to use forward AD with"

_RAISES = "PyTorch has no derivative for it: forward AD raises, as PyTorch's does"
_INPLACE_GAP = ("PyTorch 2.13 has no derivative for the in-place form (retrograd raises its "
                "NotImplementedError, as PyTorch's forward AD does)")
# where the JVP is not the finite-difference derivative, and why (each as PyTorch)
FD_DIFFERS = {
    "embedding_max_norm": "max_norm rescales the rows in place without recording it (PyTorch's "
                          "no-grad renorm): finite differences see the rescaling, the JVP not",
    "normal_tensor_tensor": "PyTorch defines a sample's derivative as zero",
    "normal_tensor_float": "PyTorch defines a sample's derivative as zero",
    "native_channel_shuffle": "PyTorch's native_channel_shuffle has no derivative (raises)",
    "native_channel_shuffle_F": "PyTorch's native_channel_shuffle has no derivative (raises)",
    **{name: _RAISES for name in ("heaviside", "geqrf", "Tensor.geqrf batched wide",
                                  "ldl_factor", "ldl_factor_ex", "ldl_solve",
                                  "binomial_grad_node")},
    **{name: _INPLACE_GAP for name in ("acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_",
                                       "arctanh_")},
}


def _fd_params():
    return [pytest.param(c, id=c.name, marks=pytest.mark.xfail(
                strict=True, reason=FD_DIFFERS[c.name])) if c.name in FD_DIFFERS
            else pytest.param(c, id=c.name) for c in CASES]


@pytest.mark.parametrize("case", _fd_params())
def test_jvp_matches_finite_differences(case):
    arrays = case.arrays()
    if not _deterministic(case, arrays):
        pytest.skip("random op (dropout...): its outputs differ between calls, no derivative "
                    "to difference; tests/autograd/test_forward_ad.py checks dropout's JVP")
    tangents = _tangents(case, arrays)
    try:
        got = _jvp(retrograd, fwAD, case, arrays, tangents)
    except NotImplementedError as e:
        if _REFUSED not in str(e):
            raise
        import torch  # refused: so must PyTorch's forward AD be, with the same class

        with pytest.raises(NotImplementedError, match=_REFUSED):
            _jvp(torch, torch.autograd.forward_ad, case, arrays, tangents)
        return
    if case.name in NO_TANGENT:
        assert all(t is None for _, t in got), f"{case.name}: {NO_TANGENT[case.name]}"
        return
    # an op that computes in a lower precision (x.float(), x.half()) needs the larger step
    # and tolerances its gradcheck uses
    eps = case.gc.get("eps", EPS)
    rtol = case.gc.get("rtol", 1e-4 if eps == EPS else 1e-2)
    atol = case.gc.get("atol", 1e-5 if eps == EPS else 1e-2)
    plus = _values(case, [a + eps * t for a, t in zip(arrays, tangents)])
    minus = _values(case, [a - eps * t for a, t in zip(arrays, tangents)])
    assert len(got) == len(plus)
    for i, ((primal, tangent), p, q) in enumerate(zip(got, plus, minus)):
        fd = (p.astype(np.float64) - q) / (2 * eps)
        if tangent is None:
            tangent = np.zeros_like(primal)
        assert tangent.shape == primal.shape, f"output {i}: tangent shape"
        finite = np.isfinite(fd)
        scale = max(1.0, float(np.abs(fd[finite]).max()) if finite.any() else 1.0)
        np.testing.assert_allclose(tangent[finite], fd[finite], rtol=rtol, atol=atol * scale,
                                   err_msg=f"{case.name} output {i}: JVP vs finite differences")


def _refused_by_retrograd(case, arrays, tangents) -> bool:
    try:
        _jvp(retrograd, fwAD, case, arrays, tangents)
    except NotImplementedError as e:
        return _REFUSED in str(e)
    except RuntimeError:  # no derivative at all (ldl_factor...): checked elsewhere
        return False
    return False


def _torch_lacks(e) -> bool:
    text = str(e)
    return isinstance(e, (NotImplementedError, RuntimeError)) and (
        "forward AD" in text or "forward-mode" in text or "forward mode" in text
        or "jvp" in text.lower() or "not implemented for" in text)


# Where PyTorch 2.13's forward AD is wrong (each checked by hand against finite differences,
# which retrograd's JVP matches: test_jvp_matches_finite_differences above)
TORCH_DIFFERS = {
    "triangular_solve": "PyTorch's JVP uses the whole tangent of A, not its triangle (the op "
                        "reads only the triangle; finite differences agree with retrograd)",
    "triangular_solve_method": "as triangular_solve",
    "triangular_solve_t": "PyTorch's forward formula fails on a broadcast batch (RuntimeError: "
                          "a forward gradient of size [3, 3] for a tensor of size [2, 3, 3])",
    "logcumsumexp_big": "PyTorch's JVP underflows to ~0 where the output is far below the "
                        "slice's max (logcumsumexp(x)[0] = x[0], whose tangent is t[0])",
    "scatter_reduce_prod_True": "PyTorch's JVP of scatter_reduce('prod') is zero",
    "scatter_reduce_prod_False": "PyTorch's JVP of scatter_reduce('prod') is zero",
    "cholesky_inverse upper=False": "PyTorch's forward formula for cholesky_inverse is off "
                                    "by ~5e-2 from its finite differences and its own "
                                    "reverse-mode Jacobian (which agree to 1e-11, as "
                                    "retrograd's JVP does)",
    "cholesky_inverse upper=True": "as cholesky_inverse upper=False",
}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=pytest.mark.xfail(strict=True, reason=TORCH_DIFFERS[c.name]))
    if c.name in TORCH_DIFFERS else pytest.param(c, id=c.name) for c in CASES])
def test_jvp_matches_torch(case, torch):
    import torch.autograd.forward_ad as th_fwAD

    arrays = case.arrays()
    if not _deterministic(case, arrays):
        pytest.skip("random op: PyTorch's generator differs from retrograd's")
    tangents = _tangents(case, arrays)
    try:
        want = _jvp(torch, th_fwAD, case, arrays, tangents)
    except Exception as e:  # noqa: BLE001 - which ops torch lacks is the point here
        if _REFUSED in str(e) and _refused_by_retrograd(case, arrays, tangents):
            return  # an op PyTorch refuses for a dual input, refused alike (same class)
        if _torch_lacks(e):
            pytest.skip(f"PyTorch 2.13 has no forward AD for this op: {str(e)[:120]}")
        raise
    got = _jvp(retrograd, fwAD, case, arrays, tangents)
    assert len(got) == len(want)
    for i, ((gp, gt), (wp, wt)) in enumerate(zip(got, want)):
        # a float32 output computed apart from the duals (windows): float32's rounding
        single = wp.dtype != np.float64
        np.testing.assert_allclose(gp, wp, rtol=1e-6 if single else 1e-10,
                                   atol=1e-7 if single else 1e-12, equal_nan=True)
        if wt is None:
            wt = np.zeros_like(wp)
        if gt is None:
            gt = np.zeros_like(gp)
        np.testing.assert_allclose(gt, wt, rtol=1e-7, atol=1e-9, equal_nan=True,
                                   err_msg=f"{case.name} output {i}: tangent vs PyTorch")
