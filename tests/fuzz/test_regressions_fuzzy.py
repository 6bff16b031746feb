"""Fuzzer findings fixed by fuzzY (issue 7: exception classes, stop 20's leftovers): each
program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions); the families around each seed are checked op by op against
PyTorch (the exception class, or the values)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # index_reduce of a bool tensor: PyTorch's kernels have no bool version (the
    # include_self=False fill, the loop over a 1-d self); retrograd reduced it (seed 15061873)
    "index_reduce_of_bool": """
v0 = T.tensor([False, False, True], dtype=T.bool)
v2 = T.tensor([[-1.0]], dtype=T.float64)
v3 = v0.masked_fill(v2 > 0, 0.0)
v4 = T.tensor(0, dtype=T.int64)
v5 = T.tensor([[True, True, True]], dtype=T.bool)
try:
    v6 = v3.index_reduce(0, v4, v5, 'mean', include_self=False)
except Exception as e:
    pass
try:
    v7 = v0.index_reduce(0, v4[None], v5[0, :1], 'amax')
except Exception as e:
    pass
""",
    # eigvalsh of an integer matrix: PyTorch's LAPACK kernel refuses the dtype
    # (NotImplementedError), where retrograd refused it up front as linalg.cholesky does
    # (RuntimeError) (seed 15096647)
    "eigvalsh_of_integer": """
v0 = T.tensor([[[4], [4], [2]]], dtype=T.int64)
v1 = v0.kthvalue(2, dim=1).values
try:
    v2 = T.linalg.eigvalsh(v1 + v1.mT)
except Exception as e:
    pass
try:
    v3 = T.linalg.eigh(v1 + v1.mT)
except Exception as e:
    pass
""",
    # leaky_relu_ of an expanded integer tensor: PyTorch's check for elements sharing memory
    # comes before its kernel's refusal of the dtype (seed 15111218)
    "leaky_relu_inplace_of_expanded_integer": """
v4 = T.tensor(2, dtype=T.int64)
v7 = v4.broadcast_to((2, 2))
try:
    T.nn.functional.leaky_relu_(v7)
except Exception as e:
    pass
try:
    T.nn.functional.elu(v7, inplace=True)
except Exception as e:
    pass
""",
    # floor_divide/heaviside (no derivative in PyTorch) of an integer or bool tensor that
    # requires grad: nothing recorded, nothing refused, in place the grad_fn stays (stop 20)
    "floor_divide_heaviside_of_integer_requiring_grad": """
v0 = T.tensor([1.5, 2.5], dtype=T.float64, requires_grad=True)
v1 = T.zeros((2, 2), dtype=T.int64)
v1[0] = v0.sum()
v2 = T.floor_divide(v1, T.tensor([2, 3], dtype=T.int64))
v3 = v1 // 2
v4 = T.heaviside(v1, T.tensor([2, 3], dtype=T.int64))
v5 = v1.clone()
v5.floor_divide_(2)
v6 = v1.clone()
v6.heaviside_(T.tensor([2, 3], dtype=T.int64))
v7 = v1.clone()
v7 //= T.tensor([2, 3], dtype=T.int64)
v8 = T.zeros((2, 2), dtype=T.bool)
v8[1] = v0.sum()
v9 = T.heaviside(v8, T.tensor([True, False]))
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzy(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _outcome(fn):
    """The exception class raised, or the result's dtype name and values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e).__name__
    if isinstance(out, tuple):
        out = out[0]
    values = np.asarray(out.tolist())
    if values.dtype.kind == "f":  # (float32 kernels differ in the last bit)
        values = np.round(values, 5)
    return str(out.dtype).split(".")[-1], values.tolist()


def _agree(cases):
    """Run each case in both libraries; the outcomes must match."""
    want, got = cases(torch), cases(retrograd)
    bad = {k: (_outcome(want[k]), _outcome(got[k])) for k in want}
    bad = {k: v for k, v in bad.items() if v[0] != v[1]}
    assert not bad, bad


_DTYPES = ("bool", "int64", "uint8", "float64")


def _reduce_cases(L):  # noqa: N803 - the library
    out = {}
    for dt in _DTYPES:
        d = getattr(L, dt)
        for mode in ("prod", "mean", "amax", "amin", "sum"):
            for inc in (True, False):
                out[dt, "scatter_reduce", mode, inc] = (
                    lambda d=d, mode=mode, inc=inc: L.zeros(3, dtype=d).scatter_reduce(
                        0, L.tensor([0, 2]), L.ones(2, dtype=d), mode, include_self=inc))
                if mode == "sum":
                    continue
                out[dt, "index_reduce", mode, inc] = (
                    lambda d=d, mode=mode, inc=inc: L.zeros(3, dtype=d).index_reduce(
                        0, L.tensor([0, 2]), L.ones(2, dtype=d), mode, include_self=inc))
                out[dt, "index_reduce 2-d", mode, inc] = (
                    lambda d=d, mode=mode, inc=inc: L.zeros(2, 3, dtype=d).index_reduce(
                        1, L.tensor([0, 2]), L.ones(2, 2, dtype=d), mode, include_self=inc))
                out[dt, "index_reduce_", mode, inc] = (
                    lambda d=d, mode=mode, inc=inc: L.zeros(3, dtype=d).index_reduce_(
                        0, L.tensor([0, 2]), L.ones(2, dtype=d), mode, include_self=inc))
    return out


def test_scatter_and_index_reduce_dtypes_like_pytorch():
    """Every scatter_reduce/index_reduce mode on bool, integer and float tensors, with and
    without self: PyTorch's NotImplementedError where its kernel has no bool version, and
    the dtype's lowest/highest value as amax/amin's start without self (uint8: 0; bool)."""
    _agree(_reduce_cases)


def _linalg_cases(L):  # noqa: N803 - the library
    out = {}
    for dt in ("int64", "bool"):
        d = getattr(L, dt)
        for n in (2, 0):
            a = L.ones(n, n, dtype=d)
            b = L.ones(n, 1, dtype=d)
            out[dt, n, "eigh"] = lambda a=a: L.linalg.eigh(a)
            out[dt, n, "eigvalsh"] = lambda a=a: L.linalg.eigvalsh(a)
            out[dt, n, "cholesky"] = lambda a=a: L.cholesky(a)
            out[dt, n, "linalg.cholesky"] = lambda a=a: L.linalg.cholesky(a)
            out[dt, n, "solve_triangular"] = (
                lambda a=a, b=b: L.linalg.solve_triangular(a, b, upper=True))
            out[dt, n, "solve_triangular float B"] = (
                lambda a=a, n=n: L.linalg.solve_triangular(a, L.ones(n, 1), upper=True))
            out[dt, n, "triangular_solve"] = lambda a=a, b=b: L.triangular_solve(b, a)
        out[dt, "eigh UPLO"] = lambda d=d: L.linalg.eigh(L.ones(2, 2, dtype=d), UPLO="X")
        out[dt, "eigh 1-d"] = lambda d=d: L.linalg.eigh(L.ones(2, dtype=d))
        out[dt, "solve_triangular shapes"] = (lambda d=d: L.linalg.solve_triangular(
            L.ones(2, 2, dtype=d), L.ones(3, 1, dtype=d), upper=True))
        out[dt, "ormqr shapes"] = (
            lambda d=d: L.ormqr(L.ones(2, 2, dtype=d), L.ones(1, dtype=d), L.ones(2, 2, dtype=d)))
        out[dt, "ormqr"] = (
            lambda d=d: L.ormqr(L.ones(2, 2, dtype=d), L.ones(2, dtype=d), L.ones(2, 2, dtype=d)))
        out[dt, "cross"] = lambda d=d: L.linalg.cross(L.ones(3, dtype=d), L.ones(3, dtype=d))
    # solve_triangular computes in A's dtype
    out["solve_triangular f32 A"] = lambda: L.linalg.solve_triangular(
        L.tensor([[2.0, 1.0], [0.0, 4.0]]), L.tensor([[1.0], [2.0]], dtype=L.float64),
        upper=True)
    out["solve_triangular f64 A, int B"] = lambda: L.linalg.solve_triangular(
        L.tensor([[2.0, 1.0], [0.0, 4.0]], dtype=L.float64), L.tensor([[1], [2]]), upper=True)
    return out


def test_linalg_dtype_refusals_like_pytorch():
    """An integer or bool matrix given to a LAPACK op: PyTorch's class (NotImplementedError
    from the kernel, after the shape checks; RuntimeError where the op refuses it up
    front; an empty one passes where PyTorch returns before its kernel)."""
    _agree(_linalg_cases)


def test_solve_triangular_mixed_dtypes_gradients_like_pytorch():
    """linalg.solve_triangular casts B to A's dtype: the result has A's dtype, B's gradient
    B's dtype."""
    for da, db in (("float64", "float32"), ("float32", "float64")):
        res = []
        for L in (torch, retrograd):  # noqa: N806
            A = L.tensor([[2.0, 1.0], [0.0, 4.0]], dtype=getattr(L, da), requires_grad=True)  # noqa: N806
            B = L.tensor([[1.0], [2.0]], dtype=getattr(L, db), requires_grad=True)  # noqa: N806
            X = L.linalg.solve_triangular(A, B, upper=True)  # noqa: N806
            X.sum().backward()
            res.append([(str(t.dtype).split(".")[-1], t.detach().numpy().tolist())
                        for t in (X, A.grad, B.grad)])
        assert res[0] == res[1], (da, db)


def _expanded_cases(L):  # noqa: N803 - the library
    F = L.nn.functional  # noqa: N806
    out = {}
    for dt in ("int64", "bool", "float64"):
        def x(dt=dt):
            return L.tensor([[1]], dtype=getattr(L, dt)).expand(2, 3)
        for name in ("leaky_relu_", "elu_", "celu_", "selu_", "rrelu_", "threshold_",
                     "relu_", "hardtanh_"):
            args = (0.5, 1.0) if name == "threshold_" else ()
            out[dt, name] = lambda x=x, name=name, args=args: getattr(F, name)(x(), *args)
        for name in ("leaky_relu", "elu", "celu", "selu", "rrelu"):
            out[dt, name, "inplace"] = lambda x=x, name=name: getattr(F, name)(x(), inplace=True)
        for name in ("celu_", "selu_", "rrelu_"):
            out[dt, "torch", name] = lambda x=x, name=name: getattr(L, name)(x())
        for name, args in (("normal_", ()), ("normal_", (0.0, -1.0)), ("uniform_", ()),
                           ("uniform_", (2.0, 1.0)), ("log_normal_", ()), ("conj_physical_", ()),
                           ("exponential_", ()), ("bernoulli_", ())):
            out[dt, name, args] = lambda x=x, name=name, args=args: getattr(x(), name)(*args)
    out["threshold_ values"] = lambda: F.threshold_(
        L.tensor([[0.2, 2.0, -1.0]]).expand(2, 3), 0.5, 1.0)
    return out


def test_inplace_on_expanded_order_of_checks_like_pytorch():
    """An in-place op on an expanded tensor: PyTorch's overlap refusal comes before its
    kernel's dtype refusal (leaky_relu_, elu_, celu_, selu_, rrelu_), after it for normal_
    and uniform_, and threshold_ and a real tensor's conj_physical_ check nothing."""
    _agree(_expanded_cases)


_TENSOR_ONLY = ("atan2", "arctan2", "hypot", "logaddexp", "igamma", "igammac", "maximum",
                "minimum", "dist", "logical_and", "logical_or", "logical_xor", "cross",
                "nextafter", "gcd", "lcm", "eq", "ne", "lt", "gt", "le", "ge", "not_equal",
                "greater", "less", "dot", "vdot", "inner", "outer", "kron", "clamp_min",
                "clamp_max", "copysign", "fmax", "ldexp", "xlogy", "add", "pow", "fmod")


def _number_cases(L):  # noqa: N803 - the library
    out = {}
    for name in _TENSOR_ONLY:
        for dt in ("float64", "int64"):
            for num in (2.0, 2, True):
                def x(dt=dt):
                    return L.tensor([1.5, 2.0]).to(getattr(L, dt))
                out[name, dt, num, "fn"] = lambda name=name, x=x, num=num: getattr(L, name)(
                    x(), num)
                out[name, dt, num, "fn reflected"] = (
                    lambda name=name, x=x, num=num: getattr(L, name)(num, x()))
                out[name, dt, num, "method"] = (
                    lambda name=name, x=x, num=num: getattr(x(), name)(num))
                if hasattr(torch.Tensor, name + "_"):
                    out[name, dt, num, "in place"] = (
                        lambda name=name, x=x, num=num: getattr(x(), name + "_")(num))
    out["gcd_ function"] = lambda: L.gcd_(L.tensor([4]), 2)
    out["hypot other="] = lambda: L.hypot(L.tensor([3.0]), other=4.0)
    out["special.gammainc"] = lambda: L.special.gammainc(L.tensor([3.0]), 4.0)
    return out


def test_python_numbers_where_pytorch_takes_tensors_only():
    """hypot_/atan2_ and the other ops whose PyTorch signature takes tensors only (the
    function, method and in-place forms): a Python number raises PyTorch's TypeError, also
    as a function's first argument (torch.eq(2.0, x)), before any dtype or overlap check."""
    _agree(_number_cases)


def _scatter_reduce_small_index(lib, mode, include_self, needs, case):
    """scatter_reduce whose index is smaller than src, then a weighted backward: the
    values and gradients, or the error class."""
    if case == 0:  # index (2, 2), src (3, 4): not broadcastable
        x, src, idx = [[1., 2., 3.], [4., 5., 6.]], [[2., -1., 3., 7.], [0.5, 2., -3., 1.],
                                                     [1., 1., 1., 1.]], [[0, 1], [1, 0]]
    else:  # index (1, 2), src (3, 2): broadcastable, zeros and ties
        x, src, idx = [[1., 2.], [4., 5.]], [[2., 0.], [2., 7.], [0., 0.]], [[1, 0]]
    xs = lib.tensor(x, dtype=lib.float64, requires_grad=needs[0])
    ss = lib.tensor(src, dtype=lib.float64, requires_grad=needs[1])
    try:
        out = xs.scatter_reduce(0, lib.tensor(idx), ss, mode, include_self=include_self)
        w = lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)),
                       dtype=lib.float64)
        (out * w).sum().backward()
    except RuntimeError:
        return "RuntimeError"
    return [None if t is None else t.detach().numpy().tolist()
            for t in (out, xs.grad, ss.grad)]


def test_scatter_reduce_index_smaller_than_src_like_pytorch():
    """amax/amin/prod with an index smaller than src: PyTorch's derivative compares the
    whole src with index-shaped values, so it raises where they do not broadcast (even for
    self's gradient alone) and gives src elements outside the index's part gradients where
    they do; retrograd gave the index's part only."""
    for mode in ("amax", "amin", "prod"):
        for include_self in (True, False):
            for needs in ((True, True), (True, False), (False, True)):
                for case in (0, 1):
                    where = (mode, include_self, needs, case)
                    want = _scatter_reduce_small_index(torch, *where)
                    got = _scatter_reduce_small_index(retrograd, *where)
                    assert got == want, where


_DET_BATCHES = {
    "mixed": [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]],
    "regular": [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]],
    "singular": [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]],
    "one singular": [[1.0, 2.0], [2.0, 4.0]],
    "one regular": [[1.0, 2.0], [3.0, 4.0]],
    "mixed 4-d": [[[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]]],
    "near singular": [[[1.0, 2.0], [1.0, 2.0 + 1e-15]], [[2.0, 1.0], [1.0, 3.0]]],
}


def _det_create_graph(lib, data, fn):
    a = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(fn(lib)(a).sum(), a, create_graph=True)
    (g * g).sum().backward()
    return type(g.grad_fn).__name__, g.detach().numpy(), a.grad.numpy()


@pytest.mark.parametrize("batch", sorted(_DET_BATCHES))
def test_det_create_graph_paths_like_pytorch(batch):
    """det's derivative under create_graph takes PyTorch's paths: linalg.solve for regular
    matrices (LinalgSolveExBackward0), the SVD's cofactors where |det| < 100 eps, and for a
    batch of both two index_put_s (IndexPutBackward0); values and second derivatives
    agree."""
    for fn in (lambda L: L.linalg.det, lambda L: L.det):  # noqa: N803
        want = _det_create_graph(torch, _DET_BATCHES[batch], fn)
        got = _det_create_graph(retrograd, _DET_BATCHES[batch], fn)
        assert got[0] == want[0]
        for w, h in zip(want[1:], got[1:]):
            np.testing.assert_allclose(h, w, rtol=1e-9, atol=1e-9)


def _igamma_cases(L):  # noqa: N803 - the library
    out = {}
    kinds = ("float64", "float32", "int64", "int32", "bool")
    for fn in ("igamma", "igammac"):
        for da in kinds:
            for db in kinds:
                def a(da=da):
                    return L.tensor([1.5, 2.0]).to(getattr(L, da))

                def b(db=db):
                    return L.tensor([2, 3]).to(getattr(L, db))
                out[fn, da, db] = lambda fn=fn, a=a, b=b: getattr(L, fn)(a(), b())
                out[fn, da, db, "_"] = lambda fn=fn, a=a, b=b: getattr(a(), fn + "_")(b())
    return out


def test_igamma_mixed_dtypes_like_pytorch():
    """igamma/igammac of a float tensor and an integer or bool one promote as PyTorch
    (float32 with int64 stays float32); only an integer or bool promoted type raises
    NotImplementedError."""
    _agree(_igamma_cases)


def test_igamma_gradient_by_x_with_integer_a_like_pytorch():
    for da, db in (("int64", "float64"), ("int64", "float32"), ("bool", "float64")):
        res = []
        for L in (torch, retrograd):  # noqa: N806
            a = L.tensor([1, 2]).to(getattr(L, da))
            x = L.tensor([0.5, 3.0], dtype=getattr(L, db), requires_grad=True)
            try:
                L.igamma(a, x).sum().backward()
                res.append(np.round(x.grad.numpy().astype(np.float64), 6).tolist())
            except RuntimeError:
                res.append("RuntimeError")
        assert res[0] == res[1], (da, db)


def _half_linalg_cases(L):  # noqa: N803 - the library
    la = L.linalg

    def a():
        return L.eye(2).to(L.float16)

    def b():
        return L.ones(2, 1).to(L.float16)
    return {
        "det": lambda: la.det(a()), "slogdet": lambda: la.slogdet(a()),
        "logdet": lambda: L.logdet(a()), "inv": lambda: la.inv(a()),
        "inv_ex": lambda: la.inv_ex(a()), "pinv": lambda: la.pinv(a()),
        "cholesky": lambda: la.cholesky(a()), "torch.cholesky": lambda: L.cholesky(a()),
        "eigh": lambda: la.eigh(a()), "eigvalsh": lambda: la.eigvalsh(a()),
        "qr": lambda: la.qr(a()), "svd": lambda: la.svd(a()), "svdvals": lambda: la.svdvals(a()),
        "solve": lambda: la.solve(a(), b()), "solve_ex": lambda: la.solve_ex(a(), b()),
        "lstsq": lambda: la.lstsq(a(), b()), "lu": lambda: la.lu(a()),
        "lu_factor": lambda: la.lu_factor(a()), "matrix_rank": lambda: la.matrix_rank(a()),
        "matrix_norm 2": lambda: la.matrix_norm(a(), 2),
        "matrix_norm fro": lambda: la.matrix_norm(a()),
        "matrix_norm nuc": lambda: la.matrix_norm(a(), "nuc"), "cond": lambda: la.cond(a()),
        "solve_triangular": lambda: la.solve_triangular(a(), b(), upper=True),
        "triangular_solve": lambda: L.triangular_solve(b(), a()),
        "householder_product": lambda: la.householder_product(a(), a()[0]),
        "orgqr": lambda: L.orgqr(a(), a()[0]), "geqrf": lambda: L.geqrf(a()),
        "ldl_factor": lambda: la.ldl_factor(a()),
        "cholesky_solve": lambda: L.cholesky_solve(b(), a()),
        "cholesky_inverse": lambda: L.cholesky_inverse(a()),
        "matrix_power -1": lambda: la.matrix_power(a(), -1),
    }


def test_linalg_float16_refusals_like_pytorch():
    """A float16 matrix given to a LAPACK op: PyTorch's class (the kernel's
    NotImplementedError, or its RuntimeError up front); NumPy's TypeError leaked before."""
    _agree(_half_linalg_cases)


def _index_put_expanded(lib, accumulate, index):
    base = lib.tensor([[2.0, 3.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = base.expand(2, 3).index_put_(index(lib), lib.tensor(7.0), accumulate=accumulate)
        except RuntimeError:
            return "RuntimeError"
    return out.tolist(), base.tolist()


def test_index_put_inplace_through_expanded_like_pytorch():
    """index_put_ without accumulate writes through an expanded tensor as PyTorch (and as
    x[i] = v did already); retrograd refused it."""
    for index in (lambda L: (L.tensor([0]),), lambda L: (L.tensor([1]), L.tensor([2])),  # noqa: N803
                  lambda L: (L.tensor([True, False]),)):  # noqa: N803
        assert _index_put_expanded(retrograd, False, index) == \
            _index_put_expanded(torch, False, index)
