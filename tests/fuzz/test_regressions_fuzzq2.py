"""Fuzzer findings fixed by fuzzQ (issue 7, stop 22's runs from seed 18500000: raises,
grad_fn names, requires_grad flags): each program must run alike in retrograd and PyTorch
(values, dtypes, shapes, grad_fn names, gradients, exceptions)."""

import itertools
import warnings

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # lerp by a 0-d weight of another dtype: retrograd cast the weight (and a 0-d input) with
    # .to() before the op, so its LerpBackward1 saved the copy and an in-place change of the
    # weight before backward went unnoticed; PyTorch saves the caller's weight and raises
    # (seed 18706469, found by an error-heavy variant of the generator)
    "lerp_weight_of_another_dtype_changed": """
v2 = T.tensor(1.0, dtype=T.float64)
v3 = T.tensor(2.0, dtype=T.float64, requires_grad=True)
v4 = T.tensor(-2, dtype=T.int64)
v2.lerp_(v3, v4)
v4.floor_()
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:
    pass
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzq2(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _lerp_run(lib, shapes, dts, grads, inplace, change):
    """lerp(input, end, weight) with a 0-d weight (maybe all 0-d) of a dtype of its own;
    ``change`` (an operand's index or None) is changed in place before backward.  Returns
    what is observable: the result's dtype, values, grad_fn and its next functions'
    names, then the gradients or the exception class of the backward."""
    data = ([1.5, -0.5], [2.0, 3.0], 0.75)
    ts = []
    for k, (d, dt, g) in enumerate(zip(data, dts, grads)):
        t = lib.tensor(d if shapes[k] else d if not isinstance(d, list) else d[0],
                       dtype=getattr(lib, dt))
        ts.append(t.requires_grad_() if g else t)
    x = [t * 1 if t.requires_grad else t for t in ts[:2]]
    try:
        y = x[0].lerp_(x[1], ts[2]) if inplace else lib.lerp(x[0], x[1], ts[2])
    except RuntimeError as e:
        return ("forward", type(e).__name__)
    fn = y.grad_fn
    name = None if fn is None else fn.name()
    nxt = None if fn is None else tuple(
        None if f is None else f.name()
        for f, _ in fn.next_functions)
    seen = (str(y.dtype).rsplit(".", 1)[-1], y.detach().tolist(), y.requires_grad, name, nxt)
    if change is not None:
        with lib.no_grad():
            t = ts[change]
            t.logical_not_() if t.dtype == lib.bool else t.mul_(2) if t.requires_grad else \
                t.neg_()
    if not y.requires_grad:
        return seen
    try:
        y.sum().backward()
    except RuntimeError as e:
        return seen + (type(e).__name__,)
    return seen + tuple(None if t.grad is None else (str(t.grad.dtype).rsplit(".", 1)[-1],
                                                     t.grad.tolist()) for t in ts)


@pytest.mark.parametrize("inplace", [False, True])
def test_lerp_zero_dim_weight_of_another_dtype_like_pytorch(inplace):
    """Every mix of float32/float64 (and int64/bool weights), 0-d or [2] input/end, which
    operand requires grad and which is changed in place before backward: the same dtypes,
    values, grad_fn (and its next functions: no ToCopyBackward0 of retrograd's own),
    gradients and version-counter errors as PyTorch."""
    floats = ("float32", "float64")
    n = 0
    for shape, (di, dw), (gi, ge, gw), change in itertools.product(
            ((True, True, False), (False, False, False)),
            itertools.product(floats, floats + ("int64", "bool")),
            itertools.product((False, True), repeat=3), (None, 0, 1, 2)):
        if gw and dw not in floats:
            continue
        dts = (di, di, dw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = _lerp_run(torch, shape, dts, (gi, ge, gw), inplace, change)
            got = _lerp_run(retrograd, shape, dts, (gi, ge, gw), inplace, change)
        assert got == want, (shape, dts, (gi, ge, gw), change)  # (exact: dyadic data)
        n += 1
    assert n > 100


_REDUCTIONS_WITH_DTYPE = {
    "prod": lambda lib, x, dt: x.prod(dtype=dt),
    "prod_dim": lambda lib, x, dt: x.prod(0, dtype=dt),
    "cumprod": lambda lib, x, dt: x.cumprod(0, dtype=dt),
    "cumsum": lambda lib, x, dt: x.cumsum(0, dtype=dt),
    "nansum": lambda lib, x, dt: x.nansum(dtype=dt),
    "nanmean": lambda lib, x, dt: x.nanmean(dtype=dt),
    "sum": lambda lib, x, dt: x.sum(dtype=dt),
    "mean": lambda lib, x, dt: x.mean(dtype=dt),
    "softmax": lambda lib, x, dt: lib.softmax(x, 0, dtype=dt),
    "vector_norm": lambda lib, x, dt: lib.linalg.vector_norm(x, dtype=dt),
    "vector_norm_1": lambda lib, x, dt: lib.linalg.vector_norm(x, 1, dtype=dt),
    "vector_norm_inf": lambda lib, x, dt: lib.linalg.vector_norm(x, float("inf"), dtype=dt),
    "vector_norm_0": lambda lib, x, dt: lib.linalg.vector_norm(x, 0, dtype=dt),
    "linalg_norm": lambda lib, x, dt: lib.linalg.norm(x, dtype=dt),
    "tensor_norm": lambda lib, x, dt: x.norm(dtype=dt),
}


def _reduce_then_change(lib, name, src, dst, change):
    """A reduction with dtype= of a non-leaf input, which is then (maybe) changed in place
    before backward: the gradient, or the class of the error."""
    x = lib.tensor([1.5, 0.5, 2.0], dtype=getattr(lib, src), requires_grad=True)
    xx = x * 1
    try:
        y = _REDUCTIONS_WITH_DTYPE[name](lib, xx, getattr(lib, dst))
        if change:
            xx.mul_(2)
        y.double().sum().backward()
    except RuntimeError as e:
        return type(e).__name__
    if x.grad is None:
        return None
    return str(x.grad.dtype).rsplit(".", 1)[-1], [round(v, 5) for v in x.grad.tolist()]


@pytest.mark.parametrize("name", sorted(_REDUCTIONS_WITH_DTYPE))
def test_reduction_with_dtype_saves_the_callers_tensor(name):
    """prod/cumprod/nansum(dtype=...) cast a copy for their record, which saved the copy:
    PyTorch's ProdBackward0/CumprodBackward0/NansumBackward0 save the caller's tensor, so
    an in-place change of it before backward raises (found by a sweep after seed
    18706469, lerp's form of the same cause)."""
    for src, dst, change in itertools.product(("float32", "float64"), ("float32", "float64"),
                                              (False, True)):
        want = _reduce_then_change(torch, name, src, dst, change)
        got = _reduce_then_change(retrograd, name, src, dst, change)
        assert got == want, (src, dst, change)


@pytest.mark.parametrize("fn", ["vector_norm", "matrix_norm", "norm", "Tensor.norm"])
def test_norm_dtype_checks_like_pytorch(fn):
    """linalg.vector_norm/matrix_norm/norm with dtype=: PyTorch refuses an integer input
    (before the cast), an integer dtype, and a dtype narrower than the input's (float64
    with dtype=float32); retrograd cast first and computed (sweep after seed 18706469)."""
    names = ("float64", "float32", "float16", "int64", "bool")
    for src, dst in itertools.product(names, names):
        seen = []
        for lib in (torch, retrograd):
            x = lib.ones((2, 3), dtype=getattr(lib, src))
            f = lib.Tensor.norm if fn == "Tensor.norm" else getattr(lib.linalg, fn)
            try:
                y = f(x, dtype=getattr(lib, dst))
                seen.append((str(y.dtype).rsplit(".", 1)[-1], round(float(y), 4)))
            except RuntimeError as e:
                seen.append(type(e).__name__)
        assert seen[1] == seen[0], (src, dst)
