"""Run one program in retrograd and in PyTorch and compare everything observable.

Compared: whether each statement raises and with which exception class; at the end every
named tensor's shape, dtype, values, requires_grad, is_leaf, grad_fn name and .grad; the
gradients returned by ``autograd.grad``; and the hook log (order, names, values).
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np

import retrograd

from . import ops_table
from .program import Program

try:
    import torch
except ImportError:  # pragma: no cover - `make test` installs torch
    torch = None

if torch is not None:
    ops_table.TOPLEVEL.update(n for n in list(ops_table.UNARY) + list(ops_table.BINARY)
                              + ops_table.REGISTRY_UNARY + ops_table.REGISTRY_BINARY
                              if hasattr(retrograd, n) and hasattr(torch, n))

# README "What differs from PyTorch 2.13": matmul, einsum and a multi-item basic index are
# one node each in retrograd (PyTorch records views, expand, bmm...): their grad_fn names
# are not compared.  Nothing else is skipped.
GRAPH_GRANULARITY = {"matmul", "einsum", "getitem_multi"}
TOL = {"float64": (1e-6, 1e-9), "float32": (2e-4, 1e-5), "float16": (1e-2, 1e-3)}


@dataclasses.dataclass
class Failure:
    kind: str       # raise, value, grad, grad_fn, flags, log
    op: str         # the op of the statement at fault (or that made the value)
    message: str
    chunk: int = -1  # index of the statement that raised in only one (kind "raise")
    torch_exc: str = ""
    retro_exc: str = ""

    detail: tuple = ()  # what differs, without names or values (grad_fn names, flags)
    after_failed_backward: bool = False  # a backward raised (in both) before the comparison

    @property
    def signature(self):
        """Failures with one signature are taken for one bug (shrinking keeps it)."""
        if self.kind in ("grad_fn", "flags"):
            return (self.kind,) + self.detail
        return (self.kind, self.op, self.torch_exc, self.retro_exc)


def exc_class(e: BaseException) -> str:
    """The builtin exception class (torch's own errors subclass RuntimeError and friends)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__


_HOOK = re.compile(r"\b(v\d+)\.register_hook\(")


def _hook_would_crash(src, ns, made_at):
    """PyTorch 2.13 segfaults in register_hook on a view written since it was made by a write
    its graph did not see (generator.Generator._hook_crashes_torch).  The generator never
    writes such a program, but shrinking can make one (a smaller leaf turns a copy into a
    view): it is refused here, not run."""
    m = _HOOK.search(src)
    t = ns.get(m.group(1)) if m else None
    if not (isinstance(t, torch.Tensor) and t._is_view()):
        return False
    made = made_at.get(id(t))
    if isinstance(made, tuple) and made[0] is t:  # (execute's record: by the object)
        return t._version != made[1]
    # (a caller that records by name, {name: version}: known_bugs._float64_run)
    return t._version != made_at.get(m.group(1), t._version)


def execute(prog: Program, lib):
    """Run the program's statements one by one; [(exception class or None, message)], ns."""
    ns = {"T": lib, "LOG": []}
    outcomes = []
    # (PyTorch) each tensor's version counter when it was first seen, keyed by the object
    # (kept alive here, so ids stay unique): ``v3 = v1.to(v1.dtype)`` or ``v1.contiguous()``
    # return v1 itself, so v3 was "made" when v1 was, not after writes in between (seed
    # 20226372 crashed a run: a no_grad write to v1, then v3 = v1.to(...), v3.register_hook)
    made_at = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for src, _ in prog.chunks():
            if lib is torch:
                if _hook_would_crash(src, ns, made_at):
                    outcomes.append(("TorchSegfault", "register_hook on this view crashes "
                                     "PyTorch 2.13: not run"))
                    continue
            try:
                exec(compile(src, "<fuzz>", "exec"), ns)
                outcomes.append((None, ""))
            except Exception as e:  # noqa: BLE001 - any exception is an outcome to compare
                outcomes.append((exc_class(e), f"{type(e).__name__}: {str(e)[:300]}"))
            if lib is torch:
                for t in ns.values():
                    if isinstance(t, torch.Tensor) and id(t) not in made_at:
                        made_at[id(t)] = (t, t._version)
    return outcomes, ns


def _arr(t):
    if torch is not None and isinstance(t, torch.Tensor):
        if t._is_zerotensor():  # a ZeroTensor gradient (reading its data crashes torch)
            return np.zeros(tuple(t.shape), dtype=str(t.dtype).rsplit(".", 1)[-1])
        return t.detach().numpy()
    return np.asarray(t.detach())


def _dtype(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def compare_tensors(t, r, what, loose=False) -> str | None:
    if t is None or r is None:
        if (t is None) != (r is None):
            return f"{what}: torch {'None' if t is None else 'a tensor'}, retrograd " \
                   f"{'None' if r is None else 'a tensor'}"
        return None
    if not isinstance(r, retrograd.Tensor):
        return f"{what}: retrograd gave {type(r).__name__}, not a Tensor"
    if tuple(t.shape) != tuple(r.shape):
        return f"{what}: shape torch {tuple(t.shape)} retrograd {tuple(r.shape)}"
    if _dtype(t) != _dtype(r):
        return f"{what}: dtype torch {_dtype(t)} retrograd {_dtype(r)}"
    a, b = _arr(t), _arr(r)
    if a.dtype.kind in "fc":
        rtol, atol = TOL["float32" if loose else _dtype(t)]
        finite = np.abs(a[np.isfinite(a)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        ok = np.allclose(b, a, rtol=rtol, atol=atol * scale, equal_nan=True) and \
            np.array_equal(np.isnan(a), np.isnan(b))
    else:
        ok = np.array_equal(a, b)
    if not ok:
        signs = " (signs only)" if a.dtype.kind in "fc" and np.allclose(
            np.abs(b), np.abs(a), rtol=rtol, atol=atol * scale, equal_nan=True) else ""
        return f"{what}: values differ{signs}\n  torch     {a.tolist()}\n" \
               f"  retrograd {b.tolist()}"
    return None


def _flags(t):
    """(requires_grad, is_leaf, grad_fn name); reading them may raise (a view made under
    no_grad whose base was changed in place): then the exception class stands for them."""
    try:
        fn = t.grad_fn
        name = None if fn is None else fn.name().rsplit("::", 1)[-1]  # torch::autograd::CopySlices
        return t.requires_grad, t.is_leaf, name
    except Exception as e:  # noqa: BLE001
        return (exc_class(e),) * 3


def compare(prog: Program) -> Failure | None:
    """None when retrograd and PyTorch agree on the program, else the first difference."""
    chunks = prog.chunks()
    # float32 anywhere (also from an int tensor's float op: the default dtype): float64
    # results downstream carry float32 rounding
    loose = any("float32" in src or ".float()" in src or "int64" in src for src, _ in chunks)
    t_out, t_ns = execute(prog, torch)
    r_out, r_ns = execute(prog, retrograd)
    for i, ((te, tm), (re_, rm)) in enumerate(zip(t_out, r_out)):
        if te != re_:
            op = chunks[i][1][-1].op
            return Failure("raise", op, f"statement {i + 1} `{chunks[i][0]}`:\n"
                           f"  torch     {tm or 'no exception'}\n"
                           f"  retrograd {rm or 'no exception'}", i, te or "", re_ or "")
    failed_backward = any(te for (te, _), (_, steps) in zip(t_out, chunks)
                          if steps[-1].kind == "end")
    made_by = {}
    for _, steps in chunks:
        for st in steps:
            if st.target:
                made_by[st.target] = st.op
    names = [n for n in t_ns if re.fullmatch(r"v\d+|loss2?", n) and isinstance(t_ns[n],
                                                                              torch.Tensor)]
    # an int op gives float32 (the default float) without "float32" in the text
    loose = loose or any(t_ns[n].dtype in (torch.float32, torch.float16) for n in names)
    for n in names:
        t, r = t_ns[n], r_ns.get(n)
        op = made_by.get(n, "")
        msg = compare_tensors(t, r, n, loose)
        if msg:
            return Failure("value", op, msg)
        tf, rf = _flags(t), _flags(r)
        if tf[:2] != rf[:2]:
            return Failure("flags", op, f"{n}: (requires_grad, is_leaf) torch {tf[:2]} "
                           f"retrograd {rf[:2]}", detail=(tf[:2], rf[:2]))
        if op not in GRAPH_GRANULARITY and tf[2] != rf[2]:
            return Failure("grad_fn", op, f"{n}.grad_fn: torch {tf[2]} retrograd {rf[2]}",
                           detail=(tf[2], rf[2]))
    for n in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(_flags(t_ns[n])[0], str):
                continue
            msg = compare_tensors(t_ns[n].grad, r_ns[n].grad, f"{n}.grad", loose)
        if msg:
            return Failure("grad", made_by.get(n, ""), msg,
                           after_failed_backward=failed_backward)
    if "gs" in t_ns:
        for i, (t, r) in enumerate(zip(t_ns["gs"], r_ns["gs"])):
            msg = compare_tensors(t, r, f"gs[{i}]", loose)
            if msg:
                return Failure("grad", "autograd.grad", msg)
    tl, rl = t_ns["LOG"], r_ns["LOG"]
    if [e[0] for e in tl] != [e[0] for e in rl]:
        return Failure("log", "register_hook", f"hooks ran in order torch {[e[0] for e in tl]}"
                       f" retrograd {[e[0] for e in rl]}", after_failed_backward=failed_backward)
    for (n, t), (_, r) in zip(tl, rl):
        msg = compare_tensors(t, r, f"gradient seen by the hook on {n}", loose)
        if msg:
            return Failure("log", "register_hook", msg)
    return None


def reproducer(prog: Program, failure: Failure) -> str:
    outcomes, _ = execute(prog, torch)
    raising = {i: exc for i, (exc, _) in enumerate(outcomes) if exc}
    return prog.source(f"{failure.kind} mismatch at {failure.op}: {failure.message}", raising)
