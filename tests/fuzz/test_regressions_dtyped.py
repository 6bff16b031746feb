"""dtypeD (issue 7): dtype rules for bool, integer and half tensors, and Python numbers
where PyTorch 2.13 wants a tensor.  Each case runs the same source text with ``T = torch``
and ``T = retrograd``; the outcomes must match: the exception class, or the result's dtype,
shape, values, requires_grad and grad_fn name."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

# a bool and an int64 tensor that require grad: PyTorch's only way to make one is a write of
# a tensor requiring grad (CopySlices)
_GRAD_INT = ("w = T.tensor([2.], requires_grad=True); b = T.zeros(3, dtype=T.bool); "
             "b[0:1] = w.sum(); i = T.zeros(3, dtype=T.int64); i[0:1] = w.sum(); "
             "c = T.tensor([True, False, True])")
_PLAIN = ("x = T.tensor([[1., 2.], [3., 4.]]); h = x.half(); i = x.long(); i8 = x.to(T.int8); "
          "u8 = x.to(T.uint8); b = T.tensor([[True, False], [True, True]]); "
          "x0 = T.tensor([[1., 2.], [3., 4.]], requires_grad=True); y = x0 * 1")


def _outcome(lib, setup, expr):
    ns = {"T": lib}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(setup, ns)  # noqa: S102 - the cases below
            out = eval(expr, ns)  # noqa: S307
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e).__name__
    if isinstance(out, tuple):
        out = out[0]
    if not hasattr(out, "detach"):
        return ("not a tensor", type(out).__name__)
    values = np.asarray(out.detach().tolist())
    if values.dtype.kind == "f":  # (float32 kernels differ in the last bit; nan != nan)
        values = np.where(np.isnan(values), np.inf * 0j, np.round(values, 4)).astype(str)
    grad_fn = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    return (str(out.dtype).split(".")[-1], tuple(out.shape), values.tolist(),
            out.requires_grad, grad_fn)


def _agree(setup, exprs):
    bad = {}
    for e in exprs:
        want, got = _outcome(torch, setup, e), _outcome(retrograd, setup, e)
        if want != got:
            bad[e] = (want, got)
    assert not bad, bad


def test_shifts_of_bool_operands_raise_like_pytorch():
    """PyTorch has no bool shift kernel: bool << bool (or a Python bool) raises its
    NotImplementedError in every form; NumPy shifted int8s.  Mixed bool / int operands
    promote and shift."""
    setup = ("b = T.tensor([True, False, True]); c = T.tensor([True, True, False]); "
             "i = T.tensor([1, 2, 3]); i8 = T.tensor([1, 2, 3], dtype=T.int8); "
             "f = T.tensor([1., 2., 3.])")
    exprs = []
    for x in ("b", "i", "i8", "f"):
        for y in ("c", "i", "1", "True", "1.5"):
            exprs += [f"{x} << {y}", f"{x} >> {y}", f"{y} << {x}", f"{y} >> {x}",
                      f"T.bitwise_left_shift({x}, {y})", f"T.bitwise_right_shift({y}, {x})",
                      f"{x}.clone().bitwise_left_shift_({y})",
                      f"{x}.clone().bitwise_right_shift_({y})",
                      f"{x}.clone().__ilshift__({y})", f"{x}.clone().__irshift__({y})"]
    _agree(setup, exprs)


def test_inplace_scans_dtype_and_grad_rules():
    """cumsum_/cumprod_ write into the tensor: a dtype= other than its own is PyTorch's
    "Bad in-place call" (after the dim check); bool tensors have no kernel; cumprod(dtype=
    bool) neither; an integer tensor requiring grad: cumsum_ records, cumprod_ is refused
    first; a bool one requiring grad is refused at the record (0-d, empty) or the kernel."""
    exprs = []
    for t in ("x", "h", "i", "i8", "u8", "b", "y", "x0", "x[0, 0]", "b[0, 0]", "b[:0]"):
        for op in ("cumsum", "cumprod"):
            for dt in ("", ", dtype=T.float64", ", dtype=T.float32", ", dtype=T.int64",
                       ", dtype=T.bool", ", dtype=T.float16", ", dtype='float64'"):
                exprs += [f"{t}.clone().{op}_(0{dt})" if t != "x0" else f"{t}.{op}_(0{dt})",
                          f"{t}.{op}(0{dt})", f"{t}.clone().{op}_(5{dt})"]
    _agree(_PLAIN, exprs)
    exprs = []
    for t in ("b", "i", "b[0]", "i[0]", "b[:0]", "i[:0]"):
        for op in ("cumsum", "cumprod"):
            for dt in ("", ", dtype=T.int64", ", dtype=T.bool", ", dtype=T.float32"):
                exprs += [f"{t}.{op}_(0{dt})", f"{t}.{op}_(5{dt})"]
    for e in exprs:  # (each on fresh tensors: an in-place op changes them)
        _agree(_GRAD_INT, [e])


def test_where_with_a_number_and_an_integer_tensor_requiring_grad():
    """where with a Python number converts the tensor to the result dtype first (PyTorch's
    composite): a bool tensor requiring grad with an int becomes int64 without grad, with a
    float it records WhereBackward0; an int64 one with an int stays int64 and is refused."""
    exprs = []
    for t in ("b", "i", "b[0]"):
        for n in ("2", "2.5", "True", "-1", "T.tensor(2)", "T.tensor([1., 2., 3.])"):
            exprs += [f"T.where(c, {t}, {n})", f"T.where(c, {n}, {t})", f"{t}.where(c, {n})"]
    _agree(_GRAD_INT, exprs)


def test_linalg_vander_dtypes_and_zero_dim():
    """linalg.vander refuses float16 and bool before its checks of N (torch.vander takes
    float16); a 0-d x with N given is one point."""
    exprs = []
    for dt in ("bool", "float16", "int64", "uint8", "int8", "float32"):
        for shape in ("0", "()", "3", "(2, 3)"):
            for n in ("None", "1", "-1", "2", "4"):
                x = f"T.arange(1, 7).reshape(2, 3).to(T.{dt}).ravel()[:3].reshape({shape})" \
                    if shape in ("3", "()") and False else f"T.ones({shape}, dtype=T.{dt})"
                exprs += [f"T.linalg.vander({x}, N={n})", f"T.vander({x}, N={n})"]
    exprs += ["T.vander(T.tensor([1.5, -2., 3.], dtype=T.float16), 4)",
              "T.vander(T.tensor([3, 2, 5], dtype=T.int8), 4)",
              "T.linalg.vander(T.tensor([3, 2, 5], dtype=T.int8), N=4)",
              "T.linalg.vander(T.tensor(2., requires_grad=True), N=3)"]
    _agree("", exprs)


def test_dtype_argument_rules_of_reductions_and_norms():
    """dtype= of sum/prod/nansum/cumsum/cumprod: an integer or bool result of a tensor that
    requires grad is PyTorch's 'Autograd not support dtype' (after the dim check); nansum,
    cumsum and cumprod give the dtype asked (int8, bool); nanmean and the norms check the
    input's dtype, then dtype= (floating, no narrowing), a string first."""
    exprs = []
    for t in ("x", "y", "x0", "h", "i", "b", "b[0, 0]", "b[:0]"):
        for dt in ("None", "T.float64", "T.int64", "T.bool", "T.int8", "T.float16", "'float64'"):
            exprs += [f"{t}.sum(dtype={dt})", f"{t}.sum(0, dtype={dt})", f"{t}.prod(dtype={dt})",
                      f"{t}.prod(0, dtype={dt})", f"{t}.nansum(dtype={dt})",
                      f"{t}.cumsum(0, dtype={dt})", f"{t}.cumprod(0, dtype={dt})",
                      f"{t}.cumsum(7, dtype={dt})", f"T.nanmean({t}, dtype={dt})",
                      f"T.linalg.vector_norm({t}, dtype={dt})",
                      f"T.linalg.matrix_norm({t}, dtype={dt})",
                      f"{t}.norm(dtype={dt})" if dt != "None" else f"{t}.norm()"]
    _agree(_PLAIN, exprs)


# the registered functions probed with a Python number first (torch 2.13: TypeError unless
# it has a Scalar-first overload; two numbers make a 0-d tensor for add/sub/mul/div)
_FUNCTIONS = ("eq", "ne", "lt", "gt", "le", "ge", "greater", "less_equal", "not_equal", "add",
              "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
              "floor_divide", "remainder", "fmod", "pow", "float_power", "atan2", "arctan2",
              "copysign", "maximum", "minimum", "fmax", "fmin", "hypot", "logaddexp",
              "logaddexp2", "xlogy", "nextafter", "ldexp", "heaviside", "bitwise_and",
              "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
              "logical_and", "logical_or", "logical_xor", "lerp", "rsub", "clamp",
              "clamp_min", "clamp_max", "gcd", "lcm", "dist", "isclose", "dot", "outer", "kron",
              "inner", "cross", "mvlgamma", "sigmoid", "exp", "abs", "neg", "tanh", "sum",
              "mean", "square", "sqrt", "relu", "sign", "ceil", "round", "cumsum", "bucketize",
              "searchsorted", "masked_fill", "addcmul", "matmul", "argmax", "max", "min",
              "clone", "nan_to_num", "where")


# Left: ops made by defop whose caller is the public function itself (retrograd.sin is
# Tensor.sin: no wrapper in between, tests/ops/test_out_keywords.py) take a number and give
# a number or an AttributeError where PyTorch raises TypeError; fixing them belongs in
# _apply's callers (their non-tensor branch serves first-order derivatives on arrays)
_LEFT = ("abs", "neg", "relu", "sign", "ceil", "clone", "bitwise_and", "bitwise_or",
         "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")
_NUMBERS_GIVE_TENSOR = ("add", "sub", "subtract", "mul", "multiply", "div", "divide",
                        "true_divide", "floor_divide")
_ONE_TENSOR = ("sigmoid", "exp", "abs", "neg", "tanh", "sum", "mean", "square", "sqrt", "relu",
               "sign", "ceil", "round", "argmax", "clone", "nan_to_num", "cumsum")


def test_python_number_as_input_like_pytorch():
    """A Python number as a function's input: PyTorch's TypeError (sign(2), clamp(2, x),
    eq(input=2, other=x), pow(2, 2)), or its value (pow(2, x), xlogy(2, x),
    add(input=2, other=x)); where(cond, x) alone is its TypeError."""
    setup = ("x = T.tensor([1., 2., 3.]); i = T.tensor([1, 2, 3]); "
             "b = T.tensor([True, False, True])")
    exprs = ["T.where(b, x)", "T.where(b, None, x)", "T.where(b, other=x)"]
    for f in _FUNCTIONS:
        if f in _LEFT:
            continue
        for t in ("x", "i", "b"):
            for n in ("2", "2.5", "True"):
                exprs += [f"T.{f}({n}, {t})"]
                if f not in _ONE_TENSOR:  # (a number second of a one-input function: not
                    exprs += [f"T.{f}({t}, {n})"]  # checked here)
        for n in ("2", "2.5", "True"):
            exprs += [f"T.{f}({n})"]
            if f not in _NUMBERS_GIVE_TENSOR:  # (left: retrograd gives a number; PyTorch a
                exprs += [f"T.{f}({n}, {n})"]  # 0-d tensor)
        exprs += [f"T.{f}(x)", f"T.{f}(input=2, other=x)", f"T.{f}(x, other=2)"]
    _agree(setup, exprs)


def test_dtype_sweep_findings():
    """From the sweep of registered functions over bool, int8...int64, uint8 and float16
    inputs: trace of an integer tensor is int64 (NumPy made uint8 a uint64, a dtype no
    tensor holds); torch.kl_div refuses integral inputs as nn.functional.kl_div does; isin
    refuses bools (tensors or a Python bool); pdist and cdist have no float16 kernel."""
    setup = ("f = T.tensor([[1.5, -2.], [0.5, 3.]]); i = T.tensor([[1, 2], [3, 0]]); b = i > 1; "
             "h = f.half(); u = i.to(T.uint8); i8 = i.to(T.int8); i16 = i.to(T.int16)")
    exprs = ["T.kl_div(i, f)", "T.kl_div(f, i)", "T.kl_div(b, f)", "T.kl_div(f, b)",
             "T.kl_div(h, f)", "T.kl_div(f, f, 2)", "T.isin(b, i)", "T.isin(i, b)",
             "T.isin(b, True)", "T.isin(True, i)", "T.isin(2, b)", "T.isin(f, 2)",
             "T.isin(h, f)", "T.isin(i, i8)", "T.pdist(h)", "T.pdist(h, p=1)", "T.pdist(f)",
             "T.cdist(h, h)", "T.cdist(h, f)", "T.cdist(f, h)", "T.cdist(f, f)",
             "T.nn.functional.pdist(h)"]
    exprs += [f"T.trace({t})" for t in ("f", "h", "i", "u", "i8", "i16", "b")]
    exprs += ["u.trace()", "T.trace(f.requires_grad_())"]
    _agree(setup, exprs)
