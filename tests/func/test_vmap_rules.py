"""Every batching rule against a Python loop and against torch.vmap.

The op tests' case tables (tests/ops/test_<kind>.py, ``CASES``) already hold one call per
op written for both libraries; here each rule of ``batching_rules.RULES`` takes the first
case that calls its op (and nothing else at the top level), gives the case's inputs a batch
of 3, and checks ``retrograd.vmap`` against a loop over the samples and against
``torch.vmap``: values, dtypes, shapes; with every input batched, and with only the first.
The rule must be the one that runs: the loop fallback's warning is an error here.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings
import zlib

import numpy as np
import pytest

import retrograd
from retrograd.func.batching_rules import RULES
from retrograd.ops import registry

from ops import helpers

B = 3


def _case_modules():
    pkg = importlib.import_module("ops")
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("test_") and info.name != "test_registry":
            yield importlib.import_module(f"ops.{info.name}")


def _cases_by_rule():
    """rule key -> the first case whose only top-level op is that key (or, for keys with no
    such case, the first case calling it among other ops that all have rules)."""
    found: dict = {}
    later: dict = {}
    with helpers.recording_outermost_calls() as hits:
        for mod in _case_modules():
            for c in getattr(mod, "CASES", ()):
                hits.clear()
                xs = [retrograd.tensor(a) for a in c.arrays()]
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    try:
                        c.call(retrograd, *xs)
                    except Exception:  # noqa: BLE001 - error cases raise on purpose
                        continue
                keys = set(hits)
                if not c.shapes or not keys <= set(RULES):
                    continue
                if len(keys) == 1:  # the op alone: the best sample
                    (key,) = keys
                    found.setdefault(key, c)
                else:  # with other ops that have rules: a sample for a rule with none yet
                    for key in keys:
                        later.setdefault(key, c)
    for key, c in later.items():
        found.setdefault(key, c)
    return found


CASES = _cases_by_rule()


def _batched_arrays(case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()) + 1)
    return [helpers.sample(rng, (B, *s), d) for s, d in zip(case.shapes, case.domains())]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [out]


def _check(rg, th, what):
    rg, th = _flat(rg), _flat(th)
    assert len(rg) == len(th), f"{what}: {len(rg)} outputs vs {len(th)}"
    for i, (a, b) in enumerate(zip(rg, th)):
        helpers.check_same(a, b, helpers.TOL["float64"], f"{what}, output {i}")


def _run(lib, case, arrays, batched):
    xs = [lib.tensor(a, dtype=lib.float64) if bat else lib.tensor(a[0], dtype=lib.float64)
          for a, bat in zip(arrays, batched)]
    in_dims = tuple(0 if bat else None for bat in batched)
    fn = lib.vmap if lib is retrograd else lib.func.vmap
    return fn(lambda *v: case.call(lib, *v), in_dims=in_dims)(*xs), xs


def _loop(case, xs, batched):
    outs = [case.call(retrograd, *[x[i] if bat else x for x, bat in zip(xs, batched)])
            for i in range(B)]
    first = outs[0]
    if isinstance(first, (tuple, list)):
        return [retrograd.stack([o[j] for o in outs]) for j in range(len(first))]
    return retrograd.stack(outs)


PATTERNS = {"all": None, "first": None, "last": None}

# torch.vmap cannot run these, or differs from its own loop over samples: checked against
# the loop only (retrograd's loop matches PyTorch's per-sample results in tests/ops)
TORCH_VMAP_DIFFERS = {
    "rrelu": "torch.vmap: 'we do not yet support aten::rrelu'",
    "nn.functional.rrelu": "torch.vmap: 'we do not yet support aten::rrelu'",
    "index_select": "torch.vmap's index_select with a 0-d index keeps the whole dim ([3, 4] "
                    "per sample), its loop gives [3, 1]",
}

# storage-addressing ops: PyTorch's as_strided rule views sample i at the offset plus i batch
# strides (every sample starts where the batch does), while the loop's samples are views of
# one storage (an explicit offset reads sample 0's for all): checked against torch.vmap only
LOOP_DIFFERS = {"as_strided"}
# torch.vmap refuses these (RuntimeError, no batching rule); retrograd too, not the loop
TORCH_VMAP_REFUSES = {"as_strided_scatter"}


def _batched_pattern(case, pattern):
    n = len(case.shapes)
    if pattern == "all":
        return (True,) * n
    if pattern == "first":
        return (True,) + (False,) * (n - 1)
    return (False,) * (n - 1) + (True,)


def _params():
    for key in sorted(CASES):
        for pattern in (("all", "first", "last") if len(CASES[key].shapes) > 1 else ("all",)):
            yield pytest.param(key, pattern, id=f"{key}-{pattern}")


@pytest.mark.parametrize("key, pattern", list(_params()))
def test_rule_matches_loop_and_torch_vmap(key, pattern, torch):
    case = CASES[key]
    arrays = _batched_arrays(case)
    batched = _batched_pattern(case, pattern)
    if registry.entry(key).inplace_of and pattern == "last":
        # an in-place op on an unbatched tensor with a batched operand: torch.vmap refuses
        # (RuntimeError); so does retrograd, with the class of whatever check meets it first
        # (the in-place method writes into a tensor that has no batch dimension)
        with pytest.raises(RuntimeError):
            _run(torch, case, arrays, batched)
        with pytest.raises(Exception):  # noqa: B017, PT011
            _run(retrograd, case, arrays, batched)
        return
    if key in TORCH_VMAP_REFUSES:
        for lib in (torch, retrograd):
            with pytest.raises(RuntimeError, match="batching rule"):
                _run(lib, case, arrays, batched)
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*performance drop.*")
        rg, xs = _run(retrograd, case, arrays, batched)
    if key not in LOOP_DIFFERS:
        _check(rg, _loop(case, xs, batched), f"{key} {case.name} {batched} vs loop")
    if key in TORCH_VMAP_DIFFERS:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        th, _ = _run(torch, case, arrays, batched)
    _check(rg, th, f"{key} {case.name} {batched} vs torch.vmap")


def test_rules_without_a_table_case_are_few():
    # in-place forms share their op's rule (tests/func/test_vmap.py runs some); the other
    # rules no table case reaches alone are tested there too
    missing = sorted(k for k in set(RULES) - set(CASES) if not k.endswith("_")
                     and not registry.entry(k).inplace_of)
    assert len(missing) < 40, missing
