"""fuzzB's fixed fuzz findings (issue 7: dtypes, integer tensors that require grad, values at
poles): each program must run alike in retrograd and PyTorch, plus bit-exact checks where the
fuzzer's tolerance would hide a last-bit difference that a pole later amplifies."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, exc_class, reproducer  # noqa: E402

CASES = {
    # PyTorch's float32 logaddexp2 fuses m + log1p(2 ** -|a - b|) / ln 2 into one rounding:
    # logaddexp2(-1, -1) is -1.06e-8 (NumPy's 0), so 1 / erfinv(...) of it is -1.2e8, not inf
    "logaddexp2_float32_fused_9501888": """
v2 = T.tensor(-1.0, dtype=T.float32)
v4 = (v2).logaddexp2(v2)
v5 = T.erfinv(v4.tanh().mul(0.9))
v5.pow_(-1)
""",
    # float32 rad2deg multiplies by 57.29578f (NumPy computes in double: 1 ulp apart, which
    # pow_ and cos_ amplify)
    "rad2deg_float32_9514371": """
v0 = T.tensor([-0.0, 1.0, 2.0, 2.0], dtype=T.float32)
v1 = v0.rad2deg()
v1.pow_(2)
v1.cos_()
""",
    # xlogy's derivative by x is xlogy(g, y): 0 where g is 0, though log(0) is -inf
    "xlogy_zero_grad_at_log_pole_9495021": """
v0 = T.tensor([[-1.0], [0.0], [2.0], [-1.0]], dtype=T.float64)
v1 = T.tensor([[0.21], [0.01], [0.21], [-1.19]], dtype=T.float64, requires_grad=True)
v3 = T.xlogy(v1, v0)
v4 = (v3).logaddexp(v0)
loss = (v4 * v4.detach().tanh()).sum()
loss.backward()
""",
    # lerp of integer (or bool) tensors by a 0-d float weight: promoted as any op (float64)
    "lerp_int_0d_float_weight_9475216": """
v0 = T.tensor([3, -1], dtype=T.int64)
v1 = v0.view(2)
v2 = v1[1]
v3 = T.tensor(0.0, dtype=T.float64)
v4 = v2.lerp(v1, v3)
v5 = T.tensor(0.7, dtype=T.float32, requires_grad=True)
v6 = v1.lerp(v1 * 2, v5)
v7 = (v1 > 0).lerp(v1 < 0, T.tensor(0.25, dtype=T.float64))
try:
    v8 = v1.lerp(v1, T.tensor(2))
except Exception as e:  # PyTorch: NotImplementedError
    print(type(e).__name__, e)
try:
    v9 = v1.lerp(v1, T.tensor([0.5, 0.5], dtype=T.float64))
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss = (v6 * v6.detach().tanh()).sum()
loss.backward()
""",
    # clamp_min/clamp_max of an int tensor by a float number: the default float, recorded as
    # ClampMinBackward0 / ClampMaxBackward0 (seen once an int tensor requires grad by a write)
    "clamp_min_int_by_float_name_8106467": """
v0 = T.tensor([4, 5], dtype=T.int64)
v1 = T.tensor(2.0, dtype=T.float32, requires_grad=True)
v0[0:1] = v1.sum()
v2 = T.clamp_min(v0, 1.5)
v3 = v0.clamp_max(4.5)
v4 = T.tensor([1, 7], dtype=T.int64).clamp_min(2.5)
""",
    # logaddexp/logaddexp2 with a bool operand: PyTorch's derivative subtracts the operands,
    # so backward raises (as a bool exponent of pow does, p - 1; atan2's -y already did)
    "bool_operand_backward_raises": """
v0 = T.tensor([True, False])
v1 = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
v2 = T.logaddexp(v0, v1)
try:
    v2.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v3 = T.logaddexp2(v1, v0)
try:
    v3.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v4 = T.pow(v1, v0)
try:
    v4.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v5 = T.atan2(v0, v1)
try:
    v5.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v6 = T.pow(v0, v1)
loss = (v6 * v6.detach().tanh()).sum()
loss.backward()
""",
    # an in-place op on a float32 tensor computed in float64 (another operand): the gradient
    # reaching it is float32, as PyTorch casts it (its retained .grad and hooks see float32)
    "inplace_wider_dtype_retained_grad": """
LOG = []
v0 = T.tensor([1.0, 2.0], dtype=T.float32, requires_grad=True)
v1 = T.tensor([0.5, 0.25], dtype=T.float64, requires_grad=True)
v2 = v0 * 1
v2.add_(v1)
v2.retain_grad()
h3 = v2.register_hook(lambda g: LOG.append(('v2', g)))
v4 = v0 * 1
v4.retain_grad()
v4.mul_(v1)
v5 = v2 * T.tensor([3.0, 4.0], dtype=T.float64) + v4
loss = (v5 * v5.detach().tanh()).sum()
loss.backward()
""",
    # einsum's dtype follows PyTorch's path: a sum of bools counts (int64), a product
    # promotes, a contraction (bmm) refuses bools and mixed dtypes
    "einsum_dtypes_by_path": """
v0 = T.tensor([[True, False], [True, True]])
v1 = T.einsum('ij,jk->', v0, v0.int().bool())
v2 = T.tensor([[1, 2], [3, 4]], dtype=T.int64)
v3 = T.tensor([[0.5], [1.5]], dtype=T.float64, requires_grad=True)
v4 = T.einsum('ij,jk->ik', v0.float().double(), v3)
try:
    v5 = T.einsum('ij,jk->ik', v2, v3)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v6 = T.einsum('ij,jk->ik', v0, v0)
except Exception as e:  # PyTorch: NotImplementedError
    print(type(e).__name__, e)
v7 = T.einsum('ij,jk->ijk', v2, v3)
v8 = T.einsum('ij,jk->j', v0, T.tensor([[True], [False]]))
loss = (v7 * v7.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
loss.backward()
""",
    # an int/bool tensor made to require grad by a write (as PyTorch): an in-place op on it is
    # recorded (MaskedFillBackward0, MulBackward0...), an out-of-place one (or a view of it)
    # raises 'Autograd not support dtype', some in-place ones too (clamp_, abs_...)
    "int_requires_grad_masked_fill_9427681": """
v1 = T.tensor([4], dtype=T.int64)
v3 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v1[0:1] = v3.sum()
v1.masked_fill_(v1 > 0, 2.0)
""",
    "bool_requires_grad_masked_fill_9530320": """
v0 = T.tensor([1.0], dtype=T.float64)
v1 = T.tensor(1.0, dtype=T.float32, requires_grad=True)
v2 = (v0) == (v1)
v7 = v2[2:2]
v7[0:1] = v1.sum()
v10 = T.tensor(-0.0, dtype=T.float64)
v2.masked_fill_(v10 > 0, 2.0)
""",
    "int_requires_grad_ops_9713483": """
v0 = T.tensor(2.0, dtype=T.float64, requires_grad=True)
v1 = T.tensor([False, True], dtype=T.bool)
v1[0:1] = v0.sum()
try:
    v2 = v1.flip(0)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v3 = T.tensor([4, 5], dtype=T.int64)
v3[0:1] = v0.sum()
v3.mul_(3)
v3.add_(1)
v3.zero_()
v3.fill_(2)
v3.neg_()
try:
    v3.clamp_(0, 1)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v4 = v3 * 2
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v5 = v3[[0]]
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v3[1:2] = 5
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v6 = v3 * 2.5
v7 = v3 > 0
v8 = v0.argmax()
v3.copy_(T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True))
""",
    # std/var of equal values: over a dim PyTorch's Welford gives exactly 0 (its derivative
    # masked); over everything its mean is summed in the dtype, one element after another (a
    # 1-ulp spread, float32 [2.7] * 8); norm's second derivative at 0 is nan (masked_fill)
    "std_of_equal_values": """
v0 = T.tensor([[-2.649] * 7, [0.5] * 7], dtype=T.float64, requires_grad=True)
v1 = v0.std(-1)
v2 = T.tensor([2.7] * 8, dtype=T.float32, requires_grad=True)
v3 = v2.std()
v4 = T.tensor([0.7, 0.7, 0.7], dtype=T.float64, requires_grad=True)
v5 = v4.var() + v4.std()
v6 = (v4 - v4.mean()).norm()
loss = (v1 * v1.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum() + v5 + v6
gs = T.autograd.grad(loss, [v0, v2, v4], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # zero derivatives (trunc, floor, round, sign...) are exact zeros, also where the incoming
    # gradient is inf or nan and in second derivatives (PyTorch's zeros_like(grad))
    "zero_derivative_meets_inf": """
v0 = T.tensor([0.5, 0.0, -1.5], dtype=T.float64, requires_grad=True)
v1 = T.trunc(v0) * T.log(v0)
v2 = T.floor(v0) * T.log(v0) + T.round(v0) * (1 / v0) + T.sign(v0) * T.log(v0)
v3 = v0.ceil() * T.xlogy(v0, v0)
loss = v1.sum() + v2.sum() + v3.sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _bits(x):
    return np.asarray(x).view(np.uint32 if np.asarray(x).dtype == np.float32 else np.uint64)


_RNG = np.random.default_rng(7)


@pytest.mark.parametrize("name", ["rad2deg", "deg2rad"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_degrees_bitwise(name, dtype):
    x = (_RNG.standard_normal(2000) * 100).astype(dtype)
    got = getattr(retrograd, name)(retrograd.tensor(x)).numpy()
    want = getattr(torch, name)(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_logaddexp2_float32_equal_operands_bitwise():
    # (the vectorised kernel and the 0-d one agree where a == b; elsewhere Sleef's exp2/log1p
    # may differ from NumPy's by an ulp, which the fuzzer's tolerance allows)
    x = (_RNG.standard_normal(500) * 10).astype(np.float32)
    got = retrograd.logaddexp2(retrograd.tensor(x), retrograd.tensor(x)).numpy()
    want = torch.logaddexp2(torch.tensor(x), torch.tensor(x)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))
    inf = float("inf")
    edge = np.array([inf, -inf, inf, np.nan, -1.0], np.float32)
    other = np.array([inf, -inf, -inf, 1.0, -1.0], np.float32)
    got = retrograd.logaddexp2(retrograd.tensor(edge), retrograd.tensor(other)).numpy()
    want = torch.logaddexp2(torch.tensor(edge), torch.tensor(other)).numpy()
    np.testing.assert_array_equal(got, want)


def test_erfinv_float32_near_pole_and_signed_zero():
    # PyTorch's float32 erfinv is its float64 one rounded (SciPy's float32 kernel is 1-3 ulp
    # off, which matters next to the pole at 1); erfinv(-0.0) is -0.0
    x = np.concatenate([1 - np.logspace(-7.5, -1, 200), [0.0, -0.0, 0.5]]).astype(np.float32)
    got = retrograd.erfinv(retrograd.tensor(x)).numpy()
    want = torch.erfinv(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1.2e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("y", [0.0, -1.0, 2.0])
def test_xlogy_grad_zero_where_grad_zero(y):
    # d xlogy(x, y) / dx = xlogy(g, y) (PyTorch): g = 0 gives 0 where log(y) is -inf or nan
    def grads(lib):
        x = lib.tensor([0.0, 0.5, 0.0, 1.0], dtype=lib.float64, requires_grad=True)
        yt = lib.full((4,), y, dtype=lib.float64, requires_grad=True)
        g = lib.tensor([0.0, 0.0, float("inf"), 1.0], dtype=lib.float64)
        (by_number,) = lib.autograd.grad(lib.xlogy(x, y), [x], g)
        by_tensor = lib.autograd.grad(lib.xlogy(x, yt), [x, yt], g)
        return [t.detach().numpy() for t in (by_number, *by_tensor)]

    with np.errstate(all="ignore"):
        for got, want in zip(grads(retrograd), grads(torch)):
            np.testing.assert_array_equal(got, want)


def _einsum_outcome(lib, eq, arrays):
    try:
        r = lib.einsum(eq, *[lib.tensor(a) for a in arrays])
    except Exception as e:  # (the class is what must agree)
        return exc_class(e), None
    return str(r.dtype).split(".")[-1], r.numpy().astype(float)


def test_einsum_dtypes_like_torch():
    # two operands of random subscripts, sizes (1 broadcasts, 0 is empty) and dtypes: the
    # result dtype (or the exception class) and values as PyTorch's
    rng = np.random.default_rng(11)
    kinds = ["bool", "int64", "int32", "float32", "float64"]
    for _ in range(300):
        terms = ["".join(rng.permutation(list("ijk"))[:rng.integers(0, 4)]) for _ in range(2)]
        labels = sorted(set("".join(terms)))
        out = "".join(c for c in labels if rng.random() < 0.5)
        size = {c: int(rng.choice([0, 1, 2, 3], p=[0.05, 0.25, 0.4, 0.3])) for c in labels}
        arrays = [rng.integers(-2, 3, size=[size[c] for c in t]).astype(rng.choice(kinds))
                  for t in terms]
        eq = ",".join(terms) + "->" + out
        (td, tv), (rd, rv) = (_einsum_outcome(m, eq, arrays) for m in (torch, retrograd))
        assert td == rd, (eq, [a.dtype for a in arrays], [a.shape for a in arrays], td, rd)
        if tv is not None:
            np.testing.assert_allclose(rv, tv, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_std_of_equal_values_like_torch(dtype):
    # small tensors of equal values, over everything and over a dim: PyTorch's value and
    # derivative (0 and masked, or a 1-ulp spread), which the derivative amplifies (below 8
    # float64 / 16 float32 elements: above, a reduction over everything is an accepted
    # difference, known_bugs._std_mean_rounding)
    rng = np.random.default_rng(5)
    for _ in range(60):
        shape = [(int(rng.integers(2, 8)),), (int(rng.integers(2, 4)), 2),
                 (2, int(rng.integers(2, 8 if dtype == "float32" else 4)))][_ % 3]
        a = np.full(shape, round(rng.uniform(-3, 3), 2), dtype=dtype)
        for dim in (None, 0, -1):
            got, want = [], []
            for lib, out in ((retrograd, got), (torch, want)):
                x = lib.tensor(a, requires_grad=True)
                r = x.std() if dim is None else x.std(dim)
                r.sum().backward()
                out += [r.detach().numpy(), x.grad.numpy()]
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-12)
