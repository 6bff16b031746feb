"""Pointwise result layouts as PyTorch's TensorIterator (issue 7, stop 23, helper layoutH:
seeds 19123515 and 19435842; ops/iter_layout.py).  Each program must run alike in retrograd
and PyTorch; result strides (of dims of size > 1) must equal PyTorch's for every op marked
pointwise, over shapes, permutations, expands and slicing steps; ops that are not pointwise
(rot90, flip, LAPACK results) keep their own layouts (tests/fuzz/test_regressions_trib.py,
test_regressions_fuzzf.py)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")

import retrograd  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from retrograd.ops.iter_layout import POINTWISE  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # tanh of a broadcast int64 tensor came out Fortran-ordered (NumPy's ufunc follows the
    # stride-0 input), so flatten() copied where PyTorch's is a view and sub_ reached v3
    # only in PyTorch (seed 19123515)
    "unary_of_broadcast_is_row_major": """
v0 = T.tensor([0, 3], dtype=T.int64)
v2 = v0.broadcast_to((3, 2))
v3 = (v2.tanh().mul(0.9)).atanh()
v6 = v3.flatten()
v6.sub_(2)
""",
    # log_softmax of a column-major solve_triangular result: PyTorch's kernel reads
    # input.contiguous(), so the result is row-major and reshape(-1) a view (ViewBackward0);
    # retrograd's kept the column-major layout and copied (UnsafeViewBackward0) (seed 19435842)
    "log_softmax_of_column_major_is_row_major": """
v0 = T.tensor([[1.0]], dtype=T.float64)
v1 = v0.asinh()
v2 = T.tensor([[-0.0, -0.0], [1.0, 0.0], [1.0, 1.0]], dtype=T.float64, requires_grad=True)
v3 = T.linalg.solve_triangular(((v1 @ v1.mT) + 4 * T.eye(3, dtype=v1.dtype)).tril(), v2, upper=False, unitriangular=False)
v7 = T.nn.functional.log_softmax(v3, dim=1)
v8 = v7.reshape(-1)
v9 = T.softmax(v3, dim=0).view(-1)
loss = (v8 * v8).sum() + v9.sum()
loss.backward()
""",  # noqa: E501 (the fuzzer's shrunk program)
    # a binary op of a column-major and a row-major operand: the first operand decides
    # (NumPy gives row-major either way), so view(-1) works only for a row-major first one
    "binary_first_operand_decides": """
v0 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([[1.0, -1.0], [0.5, 2.0], [3.0, -2.0]], dtype=T.float64, requires_grad=True)
v2 = (v1.t() * v0).t().reshape(-1)
v3 = (v0 + v1.t()).view(-1)
v4 = v1.t().exp().expand(2, 2, 3).sin().reshape(2, -1)
loss = (v2 * v2).sum() + v3.sum() + v4.sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_layouth23(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _strides(t):
    """Strides of the dims of size > 1 (a size-1 dim's stride is never read)."""
    return [(n, s) for n, s in zip(t.shape, t.stride()) if n > 1]


# One call per op marked pointwise (ops/iter_layout.py POINTWISE), written for either
# library: (function of (lib, x, y), dtype of the operands).  ``y`` is the second operand.
_F = "float64"
UNARY = {name: (lambda lib, x, y, n=name: getattr(lib, n)(x), _F) for name in """
abs acos acosh angle asin asinh atan atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp
exp2 expm1 floor frac i0 isfinite isinf isnan isneginf isposinf lgamma log log10 log1p log2
logical_not neg rad2deg reciprocal relu round rsqrt sgn sigmoid sign signbit sin sinc sinh
sqrt tan tanh trunc logit nan_to_num""".split()}
UNARY.update({
    "bitwise_not": (lambda lib, x, y: lib.bitwise_not(x), "int64"),
    "clamp": (lambda lib, x, y: lib.clamp(x, min=0.5), _F),
    "clamp_max": (lambda lib, x, y: lib.clamp_max(x, 0.5), _F),
    "clamp_min": (lambda lib, x, y: lib.clamp_min(x, 0.5), _F),
    "polygamma": (lambda lib, x, y: lib.polygamma(1, x), _F),
    "special_entr": (lambda lib, x, y: lib.special.entr(x), _F),
    "special_erfcx": (lambda lib, x, y: lib.special.erfcx(x), _F),
    "special_i0e": (lambda lib, x, y: lib.special.i0e(x), _F),
    "special_i1": (lambda lib, x, y: lib.special.i1(x), _F),
    "special_i1e": (lambda lib, x, y: lib.special.i1e(x), _F),
    "special_log_ndtr": (lambda lib, x, y: lib.special.log_ndtr(x), _F),
    "special_ndtri": (lambda lib, x, y: lib.special.ndtri(x / 100), _F),
})
for _name in ("celu elu gelu hardshrink hardsigmoid hardswish hardtanh leaky_relu mish selu "
              "silu softplus softshrink").split():
    UNARY[_name] = (lambda lib, x, y, n=_name: getattr(lib.nn.functional, n)(x), _F)
UNARY["to"] = (lambda lib, x, y: x.to(lib.float32), _F)
UNARY["to_float"] = (lambda lib, x, y: x.to(lib.float64), "int64")
UNARY["float_power"] = (lambda lib, x, y: x.float_power(2), "int64")
UNARY["threshold"] = (lambda lib, x, y: lib.nn.functional.threshold(x, 0.5, 2.0), _F)
BINARY = {name: (lambda lib, x, y, n=name: getattr(lib, n)(x, y), _F) for name in """
add atan2 copysign div eq floor_divide fmax fmin fmod ge gt heaviside hypot igamma igammac le
logaddexp logaddexp2 logical_and logical_or logical_xor lt maximum minimum mul ne nextafter
pow remainder rsub sub xlogy""".split()}
BINARY.update({name: (lambda lib, x, y, n=name: getattr(lib, n)(x, y), "int64") for name in
               "bitwise_and bitwise_or bitwise_xor gcd lcm".split()})
BINARY["bitwise_left_shift"] = (lambda lib, x, y: lib.bitwise_left_shift(x, y % 3), "int64")
BINARY["bitwise_right_shift"] = (lambda lib, x, y: lib.bitwise_right_shift(x, y % 3), "int64")
BINARY["ldexp"] = (lambda lib, x, y: lib.ldexp(x, (y % 3).long()), _F)
BINARY["addcmul"] = (lambda lib, x, y: lib.addcmul(x, y, y.t() if y.ndim == 2 else y), _F)
BINARY["addcdiv"] = (lambda lib, x, y: lib.addcdiv(y, x, x), _F)
BINARY["lerp"] = (lambda lib, x, y: lib.lerp(x, y, x), _F)
BINARY["lerp_number"] = (lambda lib, x, y: lib.lerp(x, y, 0.25), _F)
BINARY["clamp_tensors"] = (lambda lib, x, y: lib.clamp(x, y, y + 1), _F)
BINARY["where"] = (lambda lib, x, y: lib.where(x > 2, x, y), _F)
BINARY["special_xlog1py"] = (lambda lib, x, y: lib.special.xlog1py(x, y), _F)


def test_every_pointwise_op_is_tested():
    assert POINTWISE == (set(UNARY) | set(BINARY)) - {"to_float", "float_power", "lerp_number",
                                                       "clamp_tensors"}


def _make(lib, dtype, spec):
    """A view of a fresh tensor: ``spec`` = (shape of the base, steps of a slice, a
    permutation, an expanded shape, whether a float base requires grad: the recorded
    path); values >= 1 (every op's domain)."""
    base_shape, steps, perm, expand, grad = spec
    n = int(np.prod(base_shape))
    x = (lib.arange(n, dtype=getattr(lib, dtype)) % 5 + 1).reshape(base_shape)
    if grad and x.is_floating_point():
        x.requires_grad_()
    x = x[tuple(slice(None, None, s) for s in steps)]
    x = x.permute(*perm)
    if expand is not None:
        x = x.expand(*expand)
    return x


@st.composite
def layouts(draw, ndim=None):
    ndim = draw(st.integers(1, 4)) if ndim is None else ndim
    base = [draw(st.integers(1, 4)) for _ in range(ndim)]
    steps = [draw(st.sampled_from([1, 1, 2])) for _ in range(ndim)]
    perm = draw(st.permutations(range(ndim)))
    shape = [len(range(0, base[p], steps[p])) for p in perm]
    expand = None
    if draw(st.booleans()):
        expand = [draw(st.sampled_from([n, 3])) if n == 1 else n for n in shape]
    return tuple(base), tuple(steps), tuple(perm), expand, draw(st.booleans())


def _shape(spec):
    base, steps, perm, expand, _ = spec
    return tuple(expand) if expand is not None else tuple(
        len(range(0, base[p], steps[p])) for p in perm)


def _check(fn, dtype, spec_x, spec_y, what):
    want_x = _make(torch, dtype, spec_x)
    want_y = None if spec_y is None else _make(torch, dtype, spec_y)
    try:
        want = fn(torch, want_x, want_y)
    except (RuntimeError, TypeError):
        return  # (an op PyTorch refuses for these operands: its own tests cover that)
    got_x = _make(retrograd, dtype, spec_x)
    got_y = None if spec_y is None else _make(retrograd, dtype, spec_y)
    got = fn(retrograd, got_x, got_y)
    assert _strides(got) == _strides(want), (what, spec_x, spec_y)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), err_msg=what,
                               rtol=1e-6 if want.dtype == torch.float32 else 1e-9)


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=8, deadline=None, derandomize=True)
@given(spec=layouts())
def test_unary_pointwise_strides_like_pytorch(spec, name):
    fn, dtype = UNARY[name]
    _check(fn, dtype, spec, None, name)


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=12, deadline=None, derandomize=True)
@given(data=st.data())
def test_binary_pointwise_strides_like_pytorch(data, name):
    """Two tensor operands of independent layouts (broadcast to a common shape)."""
    fn, dtype = BINARY[name]
    spec_x = data.draw(layouts())
    shape = _shape(spec_x)
    spec_y = data.draw(layouts(len(shape)).filter(
        lambda s: all(a == b or a == 1 or b == 1 for a, b in zip(_shape(s), shape))))
    _check(fn, dtype, spec_x, spec_y, name)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(spec=layouts(), name=st.sampled_from(["add", "mul", "sub", "div", "pow", "lt",
                                             "maximum", "atan2", "rsub", "xlogy", "eq",
                                             "remainder", "fmod", "special_xlog1py"]),
       other=st.sampled_from(["number", "float_number", "zero_dim", "int_operand"]))
def test_pointwise_with_a_number_or_promotion_strides_like_pytorch(spec, name, other):
    """An operand that is a number, a 0-d tensor, or one PyTorch converts to the common
    dtype first (an int64 view with a float64 one: .to() keeps a dense layout, makes
    any other row-major)."""
    fn = BINARY[name][0]
    if other == "int_operand":
        def call(lib, x, y):
            return fn(lib, x, (x * 2).double())
        _check(call, "int64", spec, None, name)
        return
    number = {"number": 2, "float_number": 1.5}.get(other)

    def operand(lib):
        return lib.tensor(1.5, dtype=lib.float64) if number is None else number

    _check(lambda lib, x, y: fn(lib, x, operand(lib)), _F, spec, None, name)
    if name != "atan2" or number is None:  # (atan2 takes no number first)
        _check(lambda lib, x, y: fn(lib, operand(lib), x), _F, spec, None, name)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(spec=layouts(), name=st.sampled_from(["sin", "exp", "sqrt", "sigmoid", "abs", "neg"]))
def test_unary_of_an_int_tensor_strides_like_pytorch(spec, name):
    """sin of an int64 tensor: PyTorch converts it to float first (.to(): a dense layout is
    kept, any other becomes row-major)."""
    _check(UNARY[name][0], "int64", spec, None, name)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(spec=layouts(), dim=st.integers(0, 3), log=st.booleans())
def test_softmax_result_is_row_major(spec, dim, log):
    """softmax/log_softmax give a row-major result whatever the input's layout (PyTorch's
    kernel reads input.contiguous(); seed 19435842)."""
    def fn(lib, x, y):
        f = lib.log_softmax if log else lib.softmax
        return f(x, dim % x.ndim)
    _check(fn, _F, spec, None, "log_softmax" if log else "softmax")


def test_recorded_path_lays_out_as_the_plain_path():
    """The input requires grad (the recorded path) or not (the plain path): one layout."""
    for lib in (torch, retrograd):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        assert x.broadcast_to((3, 2)).tanh().stride() == (2, 1)
        assert (x.broadcast_to((3, 2)) * 2.0).stride() == (2, 1)
        y = lib.tensor([[0.5], [-1.0]], dtype=lib.float64, requires_grad=True)
        assert (y.expand(2, 3) + x.detach().reshape(2, 1).expand(2, 3)).stride() == (3, 1)


def test_not_pointwise_ops_keep_their_layouts():
    """Ops outside POINTWISE that go through the same callers keep their own layouts:
    rot90 of a slice (a transposed copy), inv of a transpose (LAPACK's column-major),
    contiguous() and tril of a transpose."""
    x = np.arange(24.0).reshape(2, 3, 4)
    for name, fn in {
        "rot90": lambda lib, t: lib.rot90(t[:, ::2], 1, (0, 1)),
        "inv": lambda lib, t: lib.linalg.inv(t[0, :, :3].t() + 3 * lib.eye(3,
                                                                        dtype=t.dtype)),
        "contiguous": lambda lib, t: t.transpose(0, 2).contiguous(),
        "tril": lambda lib, t: t[0].t().tril(),
    }.items():
        want = fn(torch, torch.tensor(x))
        got = fn(retrograd, retrograd.tensor(x))
        assert _strides(got) == _strides(want), name
