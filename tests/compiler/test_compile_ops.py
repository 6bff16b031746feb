"""A sample of the op CASES tables compiled: ``f(*xs) = sum of op(*xs).backward()``.

Each sampled case runs compiled (two traces, then replays) and eagerly on the same inputs,
scaled a little differently on every call; outputs and input gradients must match bit for
bit, whether the op compiled or was refused (then it ran eagerly).  Most must compile.
The whole tables (about 1,500 cases) take minutes: ``COMPILE_ALL_CASES=1`` runs them all.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import warnings

import retrograd as T
import tests.ops as op_tests

from .test_compile import same

STRIDE = 1 if os.environ.get("COMPILE_ALL_CASES") else 40


def _cases():
    out = []
    for info in sorted(pkgutil.iter_modules(op_tests.__path__), key=lambda m: m.name):
        if info.name.startswith("test_"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(f"tests.ops.{info.name}")
            out += [(info.name, c) for c in getattr(module, "CASES", ())]
    return out[::STRIDE]


def _step(case):
    def f(*xs):
        for x in xs:
            x.grad = None
        out = case.call(T, *xs)
        total = None
        for o in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(o, T.Tensor) and o.requires_grad:
                total = o.sum() if total is None else total + o.sum()
        total.backward()
        return total, [x.grad for x in xs]
    return f


def _inputs(case, i):
    return [T.tensor(a * (1 + 0.01 * i), requires_grad=True) for a in case.arrays()]


def test_sampled_op_cases_compile_bit_for_bit():
    compiled, refused, skipped = [], [], 0
    for module, case in _cases():
        f = _step(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                f(*_inputs(case, 0))
            except Exception:  # noqa: BLE001 - cases whose outputs need no gradient
                skipped += 1
                continue
            cf = T.compile(f)
            for i in range(4):  # traces at 0 and 1, replays at 2 and 3
                got, want = cf(*_inputs(case, i)), f(*_inputs(case, i))
                assert same(got, want), f"{module}::{case.name}, call {i}"
        (refused if cf.refused is not None else compiled).append(case.name)
    total = len(compiled) + len(refused)
    assert total > 100 // STRIDE
    assert len(compiled) >= 0.5 * total, f"only {len(compiled)} of {total} compiled"
