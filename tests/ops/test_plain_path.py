"""The callers' plain path (ops/_apply.py, ``Op.fast``): inference calls of add, sub, mul
and relu skip the general path's bookkeeping.  What they return and raise must be what the
general path returns and raises, and every mode that needs the general path (recording,
forward AD, inference_mode, vmap, compile's trace) must still get it."""

import warnings

import numpy as np
import pytest
import torch

import retrograd as T
import retrograd.autograd.forward_ad as fwAD
from retrograd.nn import Parameter

BINARY = [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b)]
SHAPES = [((3, 4), (4,)), ((), ()), ((2, 1), (1, 3)), ((0, 2), (2,))]


def _tensors(shape_a, shape_b, dtype, requires_grad):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a).astype(dtype)
    b = rng.standard_normal(shape_b).astype(dtype)
    return a, b, T.tensor(a), T.tensor(b, requires_grad=requires_grad)


@pytest.mark.parametrize("name,fn", BINARY)
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_matches_torch_under_no_grad(name, fn, shapes, dtype):
    a, b, ta, tb = _tensors(*shapes, dtype, requires_grad=True)
    with T.no_grad():
        got = fn(ta, tb)
    want = fn(torch.tensor(a), torch.tensor(b))
    assert type(got._data) is np.ndarray  # 0-d results are arrays, not NumPy scalars
    assert got.dtype == getattr(T, str(want.dtype).split(".")[1])
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert not got.requires_grad and got.grad_fn is None and got._version == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_matches_torch_signed_zeros_included(dtype):
    a = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf], dtype=dtype)
    w = T.tensor(a, requires_grad=True)
    with T.no_grad():
        got = T.relu(w)
    want = torch.relu(torch.tensor(a))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
    assert got.dtype == T.float32 if dtype == np.float32 else got.dtype == T.float64
    assert not got.requires_grad and T.relu(T.tensor(a)).grad_fn is None
    zero_d = T.relu(T.tensor(-1.5, dtype=T.float32))
    assert type(zero_d._data) is np.ndarray and zero_d.shape == () and zero_d.item() == 0.0


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "relu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_matches_torch_under_no_grad(name, dtype):
    a = np.array([[0.25, 1.5, 3.0], [0.5, 2.0, 7.5]], dtype=dtype)
    with T.no_grad():
        got = getattr(T, name)(T.tensor(a, requires_grad=True))
        zero_d = getattr(T, name)(T.tensor(a[0, 0]))
    want = getattr(torch, name)(torch.tensor(a))
    assert got.dtype == getattr(T, str(want.dtype).split(".")[1]) and got.grad_fn is None
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert type(zero_d._data) is np.ndarray and zero_d.shape == ()


def test_plain_path_needs_no_grad_mode_when_nothing_requires_grad():
    a, b, ta, tb = _tensors((2, 3), (3,), np.float32, requires_grad=False)
    out = T.relu(ta * tb - tb + ta)
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_allclose(out.numpy(), np.maximum(a * b - b + a, 0), rtol=1e-6)


def test_grad_mode_still_records():
    _, _, ta, tb = _tensors((2, 3), (3,), np.float64, requires_grad=True)
    out = T.relu(ta * tb) + tb - ta
    assert out.grad_fn.name() == "SubBackward0"
    out.sum().backward()
    assert tb.grad is not None and tb.grad.shape == (3,)


@pytest.mark.parametrize("name,fn", BINARY)
def test_errors_are_the_general_paths(name, fn):
    a = T.ones(2, 3)
    b = T.ones(4)
    with pytest.raises(RuntimeError) as plain:
        with T.no_grad():
            fn(a, b)
    with pytest.raises(RuntimeError) as general:
        fn(a.requires_grad_(), b)  # recorded: the general path
    assert str(plain.value) == str(general.value)
    assert "size of tensor a (3)" in str(plain.value)


def test_bool_operands_keep_their_rules():
    t = T.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        t - t
    assert (t + t).tolist() == (torch.tensor([True, False]) + torch.tensor([True, False])).tolist()
    assert (t * t).dtype == T.bool
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        T.relu(t)
    ints = T.tensor([-1, 2])
    assert T.relu(ints).tolist() == [0, 2] and T.relu(ints).dtype == T.int64


def test_mixed_dtypes_promote_as_pytorch():
    a = T.ones(2, dtype=T.float32)
    with T.no_grad():
        assert (a + T.ones(2, dtype=T.float64)).dtype == T.float64
        assert (a * T.tensor(2.0, dtype=T.float64)).dtype == T.float32  # 0-d: no promotion
        assert (T.ones(2, dtype=T.int32) + T.ones(2, dtype=T.int64)).dtype == T.int64


def test_subclasses_and_numbers_take_the_general_path():
    p = Parameter(T.ones(2))
    with T.no_grad():
        out = p * T.ones(2) + 1
    assert type(out) is T.Tensor and out.tolist() == [2.0, 2.0]


def test_results_are_fresh_tensors_with_their_own_versions():
    a = T.ones(3)
    b = T.ones(3)
    with T.no_grad():
        c = a + b
    c.add_(1)
    assert c._version == 1 and a._version == 0 and c.tolist() == [3.0, 3.0, 3.0]


def test_forward_ad_under_no_grad_propagates_tangents():
    x = T.tensor([1.0, -2.0], dtype=T.float64)
    with fwAD.dual_level(), T.no_grad():
        dual = fwAD.make_dual(x, T.tensor([1.0, 1.0], dtype=T.float64))
        out = T.relu(dual * dual + dual)
        tangent = fwAD.unpack_dual(out).tangent
    # d/dx relu(x^2 + x) = (2x + 1) where x^2 + x > 0: 3 at 1, and 0 at -2 (value 2 > 0: -3)
    assert tangent.tolist() == [3.0, -3.0]


def test_inference_mode_results_are_inference_tensors():
    a, b = T.ones(2), T.ones(2)
    with T.inference_mode():
        out = T.relu(a + b)
    assert out.is_inference()


def test_vmap_goes_through_the_batching_rules():
    y = T.tensor([1.0, 2.0])
    with T.no_grad():
        out = T.func.vmap(lambda row: T.relu(row * y - y))(T.tensor([[1.0, 1.0], [3.0, 0.0]]))
    assert out.tolist() == [[0.0, 0.0], [2.0, 0.0]]


def test_compile_still_sees_the_array_calls():
    w = T.tensor([0.5, -1.0], requires_grad=True)

    def step(x):
        with T.no_grad():
            return T.relu(x * w + w)

    compiled = T.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager would warn
        for value in ([1.0, 1.0], [2.0, -3.0], [-4.0, 0.5]):
            x = T.tensor(value)
            assert compiled(x).tolist() == step(x).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (64, 128), (3, 7, 11), (300, 300)])
def test_relu_zeros_of_the_input_shape_give_the_same_bits_and_layout(dtype, shape):
    # relu's plain forward takes its bound from zeros of the input's shape (one contiguous
    # loop): the bits (NaN payloads, signed zeros, subnormals) and the strides must be those
    # of maximum(0, a), transposed and strided inputs included
    from retrograd.ops.elementary import _relu_fwd

    special = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45,
                        np.finfo(dtype).tiny / 2, 1.0, -1.0], dtype)
    n = int(np.prod(shape))
    a = np.random.default_rng(1).choice(special, size=n).astype(dtype).reshape(shape)
    for x in (a, a.T, a[..., ::2] if a.ndim else a):
        want = np.maximum(np.zeros((), dtype), x)
        for got in (_relu_fwd(x), T.relu(T.tensor(x))._data):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.strides == want.strides
            assert got.tobytes() == want.tobytes()
        x.flags.writeable = False  # (a read-only input works too)
        assert _relu_fwd(x).tobytes() == want.tobytes()


def test_compile_sees_matmul_under_no_grad():
    # matmul's no-grad product (2-D floats) is computed by _mm's forward while compile
    # traces, so the trace replays it instead of falling back to eager with a warning
    rng = np.random.default_rng(0)
    w = T.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = T.tensor(rng.standard_normal(3), requires_grad=True)

    def step(x):
        with T.no_grad():
            return T.relu(x @ w + b) @ w.T

    compiled = T.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager would warn
        for seed in range(4):
            x = T.tensor(np.random.default_rng(seed).standard_normal((4, 2)))
            got, want = compiled(x), step(x)
            assert got.dtype == want.dtype and not got.requires_grad
            np.testing.assert_array_equal(got.numpy(), want.numpy())  # bit for bit
    assert compiled.traces == 1 and compiled.refused is None


def test_matmul_records_once_and_reports_mismatches():
    a = T.tensor(np.ones((2, 3)), requires_grad=True)
    b = T.tensor(np.ones((3, 4)))
    y = a @ b
    assert y.grad_fn.name() == "MmBackward0" and y.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 4.0))
    with T.no_grad():
        z = a @ b
    assert z.grad_fn is None and not z.requires_grad and z._version == 0
    for grad_mode in (True, False):
        with T.set_grad_enabled(grad_mode):
            with pytest.raises(RuntimeError, match="cannot be multiplied"):
                a @ T.tensor(np.ones((4, 2)))


@pytest.mark.parametrize("name,fn", BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("number", [0.05, -3.0, 1e300, float("nan")])
def test_tensor_with_python_float_matches_torch(name, fn, dtype, number):
    # (the plain path with a Python float: an optimizer step's lr * p.grad)
    a = np.array([[1.5, -0.0], [0.0, 3e38]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fn(T.tensor(a), number)
        want = fn(torch.tensor(a), number)
    assert got.dtype == getattr(T, str(want.dtype).split(".")[1])
    assert type(got._data) is np.ndarray and got.grad_fn is None and got._version == 0
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    w = T.tensor(a, requires_grad=True)
    assert fn(w, number).grad_fn is not None  # (a tensor requiring grad still records)
