"""Lowering: the common recorded steps written out as straight-line NumPy in the replay.

A generic replay line calls the function eager called (``v5 = f11(bias, x, wt)``,
``v14 = j21(node, g, saved)``): the same array work, plus the Python of that function (its
namespace lookup, its branches on types and parameters, the op caller of a derivative's
inner op).  For the steps of a training step (linear layers, relu, log-softmax and nll, the
sums of broadcast gradients, the ``.grad`` accumulations) this module writes the NumPy
calls themselves into the replay, with every NumPy function a name of the replay's
namespace, and the branches decided once from the traced arrays (their shapes and dtypes
are guarded: arguments by the guard key, parameters by the replay's head).

Every rewrite computes each element with the same NumPy operation, on the same operands,
as eager does, so the values are eager's to the bit; what changes is where results go:

* ``out=``: a fresh intermediate whose last reader is the step that writes over it (a
  matmul result getting its bias added, relu's input, log-softmax's shifted logits) is
  reused in place instead of allocating another array.  Only arrays this module made
  fresh, that no other traced array views, that no later step (nor the return value)
  reads, and that are not constants qualify (:meth:`Lowering.dies`).
* ``.grad``: a fresh gradient that dies in its accumulation becomes the new ``.grad``
  without the copy the generic line makes (as the engine's ``sole`` gradient does).

A step whose traced arrays do not fit a rule (another dtype, a CuPy array, a tensor
among the values, parameters other than the defaults) keeps its generic line.
"""

from __future__ import annotations

import numpy as np

from ..backend import namespace
from ..ops import elementary as _elementary
from ..ops import linalg as _linalg
from ..ops import linear as _linear
from ..ops import nll as _nll
from ..ops import nn as _nn
from ..ops import pointwise as _pointwise
from ..ops import shape as _shape
from ._optimize import step_refs
from ._trace import Const, Ref

_ndarray = np.ndarray
_FLOATS = frozenset(np.dtype(t) for t in ("float16", "float32", "float64"))

# the NumPy functions the lowered lines call, by their names in the replay's namespace
NUMPY_NAMES = {
    "MATMUL": np.matmul, "ADD": np.add, "SUB": np.subtract, "MUL": np.multiply,
    "NEG": np.negative, "MAXIMUM": np.maximum, "EXP": np.exp, "LOG": np.log, "NP_COS": np.cos,
    "LESS_EQUAL": np.less_equal, "INVERT": np.invert, "ISFINITE": np.isfinite,
    "WHERE": np.where, "ZEROS": np.zeros, "ASARRAY": np.asarray,
    "SUM": np.add.reduce, "AMAX": np.maximum.reduce, "ALL": np.logical_and.reduce,
}


def _root(a):
    """The object that owns ``a``'s memory (the end of its ``.base`` chain)."""
    while True:
        base = getattr(a, "base", None)
        if base is None:
            return a
        a = base


class Lowering:
    """Writes lowered lines for the steps of one recording (``rec``, the second trace).

    ``const``: indices of the steps computed once (their arrays are frozen); ``tail``:
    the names the return line reads (values that must stay as they are)."""

    def __init__(self, w, rec, const, tail_names):
        self.w = w
        self.const = const
        self.traced = {}  # Ref.key() -> the array the trace saw
        for a in rec.keep:
            ref = rec.known.get(id(a))
            if ref is not None:
                self.traced[ref.key()] = a
        self.owners: dict = {}  # id(memory owner) -> how many named arrays use that memory
        for a in rec.keep:
            r = id(_root(a))
            self.owners[r] = self.owners.get(r, 0) + 1
        self.last: dict = {}  # step k -> the last step reading v{k}
        for j, s in enumerate(rec.steps):
            for ref in step_refs(s):
                if ref.kind == "v":
                    self.last[ref.k] = j
        for name in tail_names:
            self.last[int(name[1:])] = len(rec.steps)
        self.fresh: set = set()  # (k, path): new arrays a lowered step made
        self.used = False  # whether any step was lowered (the replay then guards shapes)
        for name, fn in NUMPY_NAMES.items():
            w.ns[name] = fn

    # ------------------------------------------------------------------ facts
    def array(self, tpl):
        """The traced NumPy array of a value template, or None (not an array Ref, a
        ``.grad`` read, or not a NumPy array)."""
        if type(tpl) is not Ref or tpl.kind == "g":
            return None
        a = self.traced.get(tpl.key())
        return a if type(a) is _ndarray else None

    def dies(self, tpl, k) -> bool:
        """Step ``k`` may write over this value: a fresh array made by a lowered step,
        alone in its memory, read by no later step or the return value, not a constant."""
        if type(tpl) is not Ref or tpl.kind != "v" or (tpl.k, tpl.path) not in self.fresh:
            return False
        if self.last.get(tpl.k, -1) != k or tpl.k in self.const:
            return False
        # no other named array shares its memory in the trace (a view made by a later
        # step, which the replay makes too); the array itself is new in the replay
        a = self.array(tpl)
        return a is not None and self.owners.get(id(_root(a)), 0) == 1

    def e(self, tpl) -> str:
        return self.w.expr(tpl)

    # ------------------------------------------------------------------ dispatch
    def lower(self, k, s):
        """The lines for step ``k``, or None to keep its generic line."""
        if s.kind == "fwd":
            if s.extra:  # (keyword arguments: the generic line)
                return None
            rule = _FORWARD.get(s.fn)
            lines = (rule(self, k, s.args) if rule is not None
                     else _unary_fwd(self, k, s.fn, s.args))
        elif s.kind == "vjp":
            rule = _VJP.get(getattr(s.fn, "vjp", None))
            if rule is None or s.fn.multi_output:
                return None
            lines = rule(self, k, s.fn, s.args, s.extra)
        elif s.kind == "sum":
            lines = self._sum(k, s.args)
        elif s.kind == "acc":
            lines = self._acc(k, s.fn, s.args)
        else:
            return None
        if lines is not None:
            self.used = True
        return lines

    # ------------------------------------------------------------------ sums of gradients
    def _sum(self, k, parts):
        """The engine's sum of the gradients reaching one node, each first summed to the
        node's shape (``conform``): ``SUM(g, axis=...)`` instead of
        ``g.sum(axis=..., keepdims=True).reshape(shape)``; ``a + b + c`` left to right as
        eager, into a new or dying operand."""
        exprs, made = [], []
        for ref, spec in parts:
            a = self.array(ref)
            if a is None:
                return None
            e, new = self.e(ref), False
            if spec is not None:
                shape, dtype, _node, _i, gshape, gdtype = spec
                if gdtype != dtype:
                    return None  # (a cast too: the generic line)
                lead = len(gshape) - len(shape)
                keep = tuple(lead + j for j, n in enumerate(shape)
                             if n == 1 and gshape[lead + j] != 1)
                axes = tuple(range(lead)) + keep
                if not axes:
                    return None
                if keep:
                    e = f"SUM({e}, axis={axes!r}, keepdims=True)"
                    if lead:
                        e = f"{e}.reshape({tuple(shape)!r})"
                else:
                    e = f"SUM({e}, axis={axes!r})"
                new = True
            exprs.append(e)
            made.append(new)
        if len(exprs) == 1:
            if not made[0]:
                return None  # a name for the same array: nothing to gain
            self.fresh.add((k, ()))
            return [f"v{k} = {exprs[0]}"]
        result = self.traced.get(("v", k, (), None))
        if type(result) is not _ndarray:
            return None
        for ref, spec in parts:
            a = self.array(ref)
            shape = spec[0] if spec is not None else a.shape
            if a.dtype != result.dtype or tuple(shape) != result.shape:
                return None
        (r0, s0), (r1, s1) = parts[:2]
        e0, e1 = exprs[:2]
        if made[0]:  # a new reduction: the sum goes into it
            lines = [f"v{k} = {e0}", f"ADD(v{k}, {e1}, out=v{k})"]
        elif made[1]:
            lines = [f"t = {e1}", f"v{k} = ADD({e0}, t, out=t)"]
        elif s0 is None and self.dies(r0, k):
            lines = [f"v{k} = ADD({e0}, {e1}, out={e0})"]
        elif s1 is None and self.dies(r1, k):
            lines = [f"v{k} = ADD({e0}, {e1}, out={e1})"]
        else:
            lines = [f"v{k} = ADD({e0}, {e1})"]
        lines += [f"ADD(v{k}, {e}, out=v{k})" for e in exprs[2:]]
        self.fresh.add((k, ()))
        return lines

    # ------------------------------------------------------------------ .grad
    def _acc(self, k, leaf, g):
        """A first ``.grad``: the gradient itself when it dies here (the generic line
        copies it); later ones: the engine's in-place accumulation, as the generic line."""
        if not self.dies(g, k):
            return None
        name, e = self.w.obj(leaf), self.e(g)
        # (the copy eager makes is C-ordered: an array of another layout is copied)
        return ["with LOCK:",
                f"    if {name}._grad is None:",
                f"        {name}._grad = MK({e} if {e}.flags.c_contiguous else {e}.copy())",
                "    else:",
                f"        ACCUMULATE({name}, {e}, False)"]


# ---------------------------------------------------------------------- op forwards
def _floats(*arrays) -> bool:
    return all(a is not None and a.dtype in _FLOATS for a in arrays)


def _addmm_fwd(lw, k, args):
    """``bias + x @ wt``: the product, then the bias added into it."""
    if len(args) != 3:
        return None  # (beta, alpha given)
    bias, x, wt = (lw.array(t) for t in args)
    out = lw.traced.get(("v", k, (), None))
    if not _floats(bias, x, wt) or out is None or x.ndim != 2 or wt.ndim != 2:
        return None
    if not (bias.dtype == x.dtype == wt.dtype == out.dtype) or out.shape != (
            x.shape[0], wt.shape[1]):
        return None
    lw.fresh.add((k, ()))
    b, xe, we = (lw.e(t) for t in args)
    return [f"v{k} = MATMUL({xe}, {we})", f"ADD({b}, v{k}, out=v{k})"]


def _relu_fwd(lw, k, args):
    """``maximum(0, a)``, into ``a`` when it dies here."""
    (t,) = args
    a = lw.array(t)
    if not _floats(a):
        return None
    lw.fresh.add((k, ()))
    out = f", out={lw.e(t)}" if lw.dies(t, k) else ""
    return [f"v{k} = MAXIMUM(0, {lw.e(t)}{out})"]


def _t_fwd(lw, k, args):
    (t,) = args
    if lw.array(t) is None:
        return None
    return [f"v{k} = {lw.e(t)}.T"]


def _log_softmax_fwd(lw, k, args):
    """``shifted - log(exp(shifted).sum(dim))`` with ``shifted = a - a.max(dim)``; the
    shifted logits are written over ``a`` when it dies here, and the result over them."""
    t, dim = args
    a = lw.array(t)
    if not _floats(a) or a.size == 0 or type(dim) is not Const or type(dim.value) is not int:
        return None
    e, d = lw.e(t), dim.value
    out = f", out={e}" if lw.dies(t, k) else ""
    lw.fresh.add((k, ()))
    return [f"v{k} = SUB({e}, AMAX({e}, axis={d}, keepdims=True){out})",
            f"t = SUM(EXP(v{k}), axis={d}, keepdims=True)",
            "LOG(t, out=t)",
            f"SUB(v{k}, t, out=v{k})"]


def _nll_fwd(lw, k, args):
    """``-logp[arange(n), target]`` summed (over ``count`` for the mean)."""
    if len(args) != 4:
        return None
    tl, tt, red, count = args
    logp, target = lw.array(tl), lw.array(tt)
    if (not _floats(logp) or target is None or logp.ndim != 2 or target.ndim != 1
            or type(red) is not Const or red.value not in ("mean", "sum")):
        return None
    rows = lw.w.name(_frozen_arange(logp.shape[0]))
    picked = f"SUM(NEG({lw.e(tl)}[{rows}, {lw.e(tt)}]), axis=None)"
    if red.value == "mean":
        picked = f"{picked} / {lw.e(count)}"
    return [f"v{k} = ASARRAY({picked})"]


def _frozen_arange(n):
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows


def _reference_unary(a):  # the shape of pointwise's unary forwards (bytecode compared)
    return namespace(a).sin(a)


_UNARY_CODE = _reference_unary.__code__.co_code


def _unary_ufunc(fn):
    """The NumPy ufunc a unary op forward written ``lambda a: namespace(a).NAME(a)``
    calls, or None for any other function."""
    code = getattr(fn, "__code__", None)
    if (code is None or code.co_code != _UNARY_CODE or code.co_argcount != 1
            or len(code.co_names) != 2 or code.co_names[0] != "namespace"
            or getattr(fn, "__globals__", {}).get("namespace") is not namespace):
        return None
    ufunc = getattr(np, code.co_names[1], None)
    return ufunc if isinstance(ufunc, np.ufunc) and ufunc.nin == 1 else None


def _unary_fwd(lw, k, fn, args):
    """``ufunc(a)``, into ``a`` when it dies here and keeps its dtype."""
    ufunc = _unary_ufunc(fn)
    if ufunc is None or len(args) != 1:
        return None
    a, out = lw.array(args[0]), lw.traced.get(("v", k, (), None))
    if not _floats(a) or type(out) is not _ndarray or out.dtype != a.dtype or (
            out.shape != a.shape) or out.ndim == 0:  # (0-d: NumPy gives a scalar)
        return None
    name = f"NP_{ufunc.__name__.upper()}"
    lw.w.ns[name] = ufunc
    e = lw.e(args[0])
    lw.fresh.add((k, ()))
    return [f"v{k} = {name}({e}{f', out={e}' if lw.dies(args[0], k) else ''})"]


def _tanh_fwd(lw, k, args):
    """tanh, as ``_unary_fwd``'s ufunc for float64 (and float16); float32 calls the op's
    own ``_tanh_f32`` (NumPy's tanh, its saturation corrected: ops/elementary.py), the
    function eager's forward calls there, so the replay keeps eager's bits."""
    if len(args) != 1:
        return None
    a, out = lw.array(args[0]), lw.traced.get(("v", k, (), None))
    if not _floats(a) or type(out) is not _ndarray or out.dtype != a.dtype or (
            out.shape != a.shape) or out.ndim == 0:  # (0-d: NumPy gives a scalar)
        return None
    if a.dtype == np.float32:
        name = "TANH_F32"
        lw.w.ns[name] = _elementary._tanh_f32
    else:
        name = "NP_TANH"
        lw.w.ns[name] = np.tanh
    e = lw.e(args[0])
    lw.fresh.add((k, ()))
    return [f"v{k} = {name}({e}{f', out={e}' if lw.dies(args[0], k) else ''})"]


def _binary(lw, k, args, ufunc):
    """``ufunc(a, b)`` (``a + b``, ``a * b``; either may be a Python number), into a
    dying operand of the result's shape and dtype."""
    out = lw.traced.get(("v", k, (), None))
    if type(out) is not _ndarray or out.dtype not in _FLOATS or out.ndim == 0:
        return None  # (0-d: NumPy gives a scalar, which the op makes an array)
    for t in args:
        if type(t) is Const:
            if type(t.value) not in (int, float):
                return None
        elif lw.array(t) is None:
            return None
    into = ""
    for t in args:
        a = lw.array(t)
        if a is not None and a.shape == out.shape and a.dtype == out.dtype and lw.dies(t, k):
            into = f", out={lw.e(t)}"
            break
    lw.fresh.add((k, ()))
    return [f"v{k} = {ufunc}({lw.e(args[0])}, {lw.e(args[1])}{into})"]


def _sub_fwd(lw, k, args):
    return _binary(lw, k, args, "SUB") if len(args) == 2 else None  # (no alpha)


def _matmul_fwd(lw, k, args):
    """``a @ b``."""
    a, b = (lw.array(t) for t in args)
    out = lw.traced.get(("v", k, (), None))
    if not _floats(a, b) or type(out) is not _ndarray or out.ndim == 0:
        return None
    lw.fresh.add((k, ()))
    return [f"v{k} = MATMUL({lw.e(args[0])}, {lw.e(args[1])})"]


def _transpose_fwd(lw, k, args):
    """``swapaxes`` (a view), for arrays with dimensions."""
    t, d0, d1 = args
    a = lw.array(t)
    if a is None or a.ndim == 0 or type(d0) is not Const or type(d1) is not Const:
        return None
    return [f"v{k} = {lw.e(t)}.swapaxes({lw.e(d0)}, {lw.e(d1)})"]


def _add_fwd(lw, k, args):
    return _binary(lw, k, args, "ADD") if len(args) == 2 else None  # (no alpha)


def _mul_fwd(lw, k, args):
    return _binary(lw, k, args, "MUL") if len(args) == 2 else None


_FORWARD = {
    _pointwise._sub_fwd: _sub_fwd,
    _linalg._matmul_fwd: _matmul_fwd,
    _shape._transpose_fwd: _transpose_fwd,
    _pointwise._add_fwd: _add_fwd,
    _pointwise._mul_fwd: _mul_fwd,
    _linear._addmm_fwd: _addmm_fwd,
    _elementary._relu_fwd: _relu_fwd,
    _elementary._tanh_fwd: _tanh_fwd,
    _shape._t_op.op.forward: _t_fwd,
    _nn._log_softmax_fwd: _log_softmax_fwd,
    _nll._nll_fwd: _nll_fwd,
}


# ---------------------------------------------------------------------- derivatives
def _addmm_vjp(lw, k, node, args, extra):
    """``(g, g @ wt.T, x.T @ g)`` for the inputs that need a gradient, as eager's
    derivative computes them: addmm saves ``x`` only for the weight's gradient and ``wt``
    only for ``x``'s, and when ``wt`` is saved and is a transposed weight (nn.Linear) the
    weight's gradient is ``(g.T @ x).T`` (so the weight gets a C-ordered array)."""
    g, saved = args
    if node.params or extra is not None or len(saved) != 3:
        return None  # (beta, alpha given)
    nb, nx, nw = node.next
    ga = lw.array(g)
    x = lw.array(saved[1]) if nw else None
    wt = lw.array(saved[2]) if saved[2] is not None else None
    need = [ga] + ([x] if nw else []) + ([wt] if nx else [])
    if any(a is None for a in need) or not _floats(*need):
        return None
    if any(a.ndim != 2 for a in need) or len({a.dtype for a in need}) != 1:
        return None
    ge = lw.e(g)
    gw = "None"
    if nw:
        xe = lw.e(saved[1])
        if wt is None:
            gw = f"MATMUL({xe}.T, {ge})"
            lw.fresh.add((k, (2,)))
        else:  # (eager's test, made on every call: the layout is not guarded)
            we = lw.e(saved[2])
            gw = (f"(MATMUL({ge}.T, {xe}).T if {we}.flags.f_contiguous and not "
                  f"{we}.flags.c_contiguous else MATMUL({xe}.T, {ge}))")
    parts = [ge if nb else "None", f"MATMUL({ge}, {lw.e(saved[2])}.T)" if nx else "None", gw]
    if nx:
        lw.fresh.add((k, (1,)))
    return [f"v{k} = ({', '.join(parts)})"]


def _t_vjp(lw, k, node, args, extra):
    g, _saved = args
    if lw.array(g) is None or extra is not None:
        return None
    return [f"v{k} = ({lw.e(g)}.T,)"]


def _relu_vjp(lw, k, node, args, extra):
    """PyTorch's threshold_backward as eager's ``grad_where(~(out <= 0), g)``: ``g``
    times the mask (plus 0.0, which turns -0.0 into +0.0) when ``g`` is finite, else
    ``where(mask, g, 0.0)``; the product goes into ``g`` when it dies here."""
    g, saved = args
    if extra is not None or len(saved) != 1:
        return None
    ga, out = lw.array(g), lw.array(saved[0])
    if not _floats(ga, out) or ga.ndim == 0 or ga.dtype != out.dtype or ga.shape != out.shape:
        return None
    ge, oe = lw.e(g), lw.e(saved[0])
    into = f", out={ge}" if lw.dies(g, k) else ""
    lw.fresh.add((k, (0,)))
    return [f"t = INVERT(LESS_EQUAL({oe}, 0))",
            f"if ALL(ISFINITE({ge}), axis=None):",
            f"    t = MUL({ge}, t{into})",
            "    t += 0.0",
            "else:",
            f"    t = WHERE(t, {ge}, 0.0)",
            f"v{k} = (t,)"]


def _log_softmax_vjp(lw, k, node, args, extra):
    """``g - exp(y) * g.sum(dim)``, computed in the buffer of ``exp(y)``."""
    g, saved = args
    if extra is not None or len(saved) != 1 or len(node.params) != 1:
        return None
    ga, y = lw.array(g), lw.array(saved[0])
    dim = node.params[0]
    if not _floats(ga, y) or ga.dtype != y.dtype or ga.shape != y.shape or type(dim) is not int:
        return None
    ge = lw.e(g)
    lw.fresh.add((k, (0,)))
    return [f"t = EXP({lw.e(saved[0])})",
            f"MUL(t, SUM({ge}, axis={dim}, keepdims=True), out=t)",
            f"v{k} = (SUB({ge}, t, out=t),)"]


def _nll_vjp(lw, k, node, args, extra):
    """nll_loss_backward: zeros, ``-(g / count)`` (or ``-g``) at the targets."""
    g, _saved = args
    if extra is None or type(extra) is not tuple or len(extra) != 3:
        return None
    tt, red, count = extra
    target = lw.array(tt)
    shape, dtype = _shape.input_meta(node)
    ga = lw.array(g)
    if (ga is None or ga.ndim != 0 or target is None or target.ndim != 1 or len(shape) != 2
            or type(red) is not Const or red.value not in ("mean", "sum")):
        return None
    rows = lw.w.name(_frozen_arange(target.shape[0]))
    value = f"-({lw.e(g)} / {lw.e(count)})" if red.value == "mean" else f"-{lw.e(g)}"
    lw.fresh.add((k, (0,)))
    return [f"t = ZEROS({tuple(shape)!r}, {lw.w.name(np.dtype(dtype))})",
            f"t[{rows}, {lw.e(tt)}] = {value}",
            f"v{k} = (t,)"]


def _pointwise_operands(lw, g, x):
    """The traced arrays of a gradient and a saved array of the same shape and float
    dtype (what the in-place first-order paths of pointwise's derivatives need)."""
    ga, xa = lw.array(g), lw.array(x)
    if not _floats(ga, xa) or ga.dtype != xa.dtype or ga.shape != xa.shape or ga.ndim == 0:
        return None
    return ga, xa


def _exp_vjp(lw, k, node, args, extra):
    """``g * exp(a)`` (the saved output), into ``g`` when it dies here."""
    g, saved = args
    if extra is not None or len(saved) != 1 or _pointwise_operands(lw, g, saved[0]) is None:
        return None
    ge = lw.e(g)
    lw.fresh.add((k, (0,)))
    return [f"v{k} = (MUL({ge}, {lw.e(saved[0])}{f', out={ge}' if lw.dies(g, k) else ''}),)"]


def _tanh_vjp(lw, k, node, args, extra):
    """``(1 - out * out) * g``, as eager's first-order path: in one new buffer."""
    g, saved = args
    if extra is not None or len(saved) != 1 or _pointwise_operands(lw, g, saved[0]) is None:
        return None
    o = lw.e(saved[0])
    lw.fresh.add((k, (0,)))
    return [f"t = MUL({o}, {o})", "SUB(1, t, out=t)", f"MUL(t, {lw.e(g)}, out=t)",
            f"v{k} = (t,)"]


def _sin_vjp(lw, k, node, args, extra):
    """``cos(a) * g``, as eager's first-order path: in the buffer of ``cos(a)``."""
    g, saved = args
    if extra is not None or len(saved) != 1 or _pointwise_operands(lw, g, saved[0]) is None:
        return None
    lw.fresh.add((k, (0,)))
    return [f"t = NP_COS({lw.e(saved[0])})", f"MUL(t, {lw.e(g)}, out=t)", f"v{k} = (t,)"]


def _mul_vjp(lw, k, node, args, extra):
    """``x * c`` where ``c`` needs no gradient (a number, or an array: a constant, a
    parameter that does not require grad): ``g * c``."""
    g, saved = args
    if extra is not None or len(saved) != 2 or node.next[1] is not None or not node.next[0]:
        return None
    c, ga = saved[1], lw.array(g)
    number = type(c) is Const and type(c.value) in (int, float)
    if not _floats(ga) or not (number or lw.array(c) is not None):
        return None
    ge = lw.e(g)
    lw.fresh.add((k, (0,)))
    # (g * array: a new array, as eager's; g * number keeps g's dtype: into g if it dies)
    into = f", out={ge}" if number and lw.dies(g, k) else ""
    return [f"v{k} = (MUL({ge}, {lw.e(c)}{into}), None)"]


def _mul_arrays_vjp(lw, k, node, args, extra):
    """``(g * b, g * a)`` for the inputs that need a gradient (both arrays)."""
    g, saved = args
    na, nb = node.next
    if extra is not None or len(saved) != 2 or nb is None:
        return None
    ga, a, b = lw.array(g), lw.array(saved[0]), lw.array(saved[1])
    if ga is None or (na and b is None) or (nb and a is None):
        return None
    ge = lw.e(g)
    parts = [f"MUL({ge}, {lw.e(saved[1])})" if na else "None",
             f"MUL({ge}, {lw.e(saved[0])})" if nb else "None"]
    lw.fresh.update((k, (i,)) for i, n in enumerate((na, nb)) if n)
    return [f"v{k} = ({parts[0]}, {parts[1]})"]


def _mul_any_vjp(lw, k, node, args, extra):
    if node.next[1] is None:
        return _mul_vjp(lw, k, node, args, extra)
    return _mul_arrays_vjp(lw, k, node, args, extra)


def _sub_vjp(lw, k, node, args, extra):
    """``(g, -g)`` (alpha 1)."""
    g, _saved = args
    if extra is not None or node.params or lw.array(g) is None:
        return None
    na, nb = node.next
    ge = lw.e(g)
    if nb:
        lw.fresh.add((k, (1,)))
    return [f"v{k} = ({ge if na else None}, {f'NEG({ge})' if nb else None})"]


def _matmul_vjp(lw, k, node, args, extra):
    """``(g @ b^T, a^T @ g)`` (the last two dimensions swapped) for operands of two or
    more dimensions; the engine sums broadcast batch dimensions afterwards."""
    g, saved = args
    na, nb = node.next
    if extra is not None or len(saved) != 2:
        return None
    ga, a, b = lw.array(g), lw.array(saved[0]), lw.array(saved[1])
    if ga is None or (na and b is None) or (nb and a is None):
        return None
    if any(x is not None and x.ndim < 2 for x in (a, b)):
        return None  # (matrix-vector products: the generic line)
    ge = lw.e(g)
    parts = [f"MATMUL({ge}, {lw.e(saved[1])}.swapaxes(-1, -2))" if na else "None",
             f"MATMUL({lw.e(saved[0])}.swapaxes(-1, -2), {ge})" if nb else "None"]
    lw.fresh.update((k, (i,)) for i, n in enumerate((na, nb)) if n)
    return [f"v{k} = ({parts[0]}, {parts[1]})"]


def _add_vjp(lw, k, node, args, extra):
    """``(g, g)``: the same array to both inputs (alpha 1)."""
    g, _saved = args
    if extra is not None or node.params or lw.array(g) is None:
        return None
    na, nb = node.next
    ge = lw.e(g)
    return [f"v{k} = ({ge if na else None}, {ge if nb else None})"]


_VJP = {
    _elementary._exp_vjp: _exp_vjp,
    _elementary._tanh_vjp: _tanh_vjp,
    _elementary._sin_vjp: _sin_vjp,
    _pointwise._mul_vjp: _mul_any_vjp,
    _pointwise._sub_vjp: _sub_vjp,
    _linalg._matmul_vjp: _matmul_vjp,
    _pointwise._add_vjp: _add_vjp,
    _linear._addmm_vjp: _addmm_vjp,
    _shape._t_op.op.node_cls.vjp: _t_vjp,
    _elementary._relu_vjp: _relu_vjp,
    _nn._log_softmax_vjp: _log_softmax_vjp,
    _nll._nll_vjp: _nll_vjp,
}
