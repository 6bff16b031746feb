"""Dtype promotion: each op's result dtype and values for integer, bool and mixed inputs
(PyTorch's rules, where NumPy's differ), or PyTorch's exception class.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import check_same, dtype_name_of, nnf, outputs, TOL


_I = ([3, -2, 7, 0], "int64")
_I32 = ([1, 2, 3, 4], "int32")
_U8 = ([1, 2, 250, 4], "uint8")
_I8 = ([1, -2, 3, -4], "int8")
_B = ([True, False, True, True], "bool")
_F = ([0.5, -1.5, 2.25, 4.0], "float32")
_D = ([0.5, -1.5, 2.25, 4.0], "float64")
_H = ([0.5, -1.5, 2.25, 4.0], "float16")
_D0 = (2.5, "float64")  # a 0-d tensor: it promotes only by category
_I0 = (3, "int64")

DTYPE_CASES = [
    ("int+int", lambda m, a, b: a + b, (_I, _I)),
    ("int+int32", lambda m, a, b: a + b, (_I, _I32)),
    ("uint8+int8", lambda m, a, b: a + b, (_U8, _I8)),
    ("bool+bool", lambda m, a, b: a + b, (_B, _B)),
    ("bool+int", lambda m, a, b: a * b, (_B, _I32)),
    ("int+2", lambda m, a: a + 2, (_I,)),
    ("int32*2", lambda m, a: a * 2, (_I32,)),
    ("int+2.5", lambda m, a: a + 2.5, (_I,)),
    ("int+bool_scalar", lambda m, a: a + True, (_I,)),
    ("uint8*float64_0d", lambda m, a, b: a * b, (_U8, _D0)),
    ("float32+float64_0d", lambda m, a, b: a + b, (_F, _D0)),
    ("float32+int_0d", lambda m, a, b: a + b, (_F, _I0)),
    ("float16+float32", lambda m, a, b: a + b, (_H, _F)),
    ("float16*2.0", lambda m, a: a * 2.0, (_H,)),
    ("float32*float64", lambda m, a, b: a * b, (_F, _D)),
    ("int/int", lambda m, a, b: a / b, (_I32, _I32)),
    ("2/int", lambda m, a: 2 / a, (_I32,)),
    ("int/2", lambda m, a: a / 2, (_I,)),
    ("int//int", lambda m, a, b: a // b, (_I, _I32)),
    ("int%3", lambda m, a: a % 3, (_I,)),
    ("-int", lambda m, a: -a, (_I32,)),
    ("abs_int", lambda m, a: a.abs(), (_I8,)),
    ("relu_int", lambda m, a: m.relu(a), (_I,)),
    ("exp_int", lambda m, a: m.exp(a), (_I32,)),
    ("sqrt_int", lambda m, a: m.sqrt(a.abs()), (_I,)),
    ("log_uint8", lambda m, a: m.log(a), (_U8,)),
    ("sin_int", lambda m, a: m.sin(a), (_I,)),
    ("sigmoid_int", lambda m, a: m.sigmoid(a), (_I,)),
    ("tanh_bool", lambda m, a: m.tanh(a), (_B,)),
    ("log1p_int", lambda m, a: m.log1p(a.abs()), (_I,)),
    ("rsqrt_uint8", lambda m, a: m.rsqrt(a), (_U8,)),
    ("floor_int", lambda m, a: m.floor(a), (_I,)),
    ("round_int32", lambda m, a: a.round(), (_I32,)),
    ("square_int", lambda m, a: a.square(), (_I8,)),
    ("int**2", lambda m, a: a ** 2, (_I,)),
    ("int**0.5", lambda m, a: a.abs() ** 0.5, (_I,)),
    ("2**int", lambda m, a: 2 ** a.abs(), (_I,)),
    ("2.0**int", lambda m, a: 2.0 ** a, (_I,)),
    ("float32**int", lambda m, a, b: a ** b, (_F, _I)),
    ("matmul_int", lambda m, a, b: a @ b, (_I, _I)),
    ("sum_int32", lambda m, a: a.sum(), (_I32,)),
    ("sum_uint8_dim", lambda m, a: a.sum(0), (_U8,)),
    ("sum_bool", lambda m, a: a.sum(), (_B,)),
    ("sum_int_dtype", lambda m, a: a.sum(dtype=m.float64), (_I,)),
    ("sum_float16", lambda m, a: m.sum(a), (_H,)),
    ("prod_int32", lambda m, a: a.prod(), (_I32,)),
    ("prod_uint8_dim", lambda m, a: a.prod(0), (_U8,)),
    ("cumsum_int32", lambda m, a: a.cumsum(0), (_I32,)),
    ("cumsum_bool", lambda m, a: a.cumsum(0), (_B,)),
    ("amax_int", lambda m, a: a.amax(), (_I,)),
    ("norm_float16", lambda m, a: a.norm(), (_H,)),
    ("var_float32", lambda m, a: a.var(), (_F,)),
    ("mean_float16", lambda m, a: a.mean(), (_H,)),
    ("max_int", lambda m, a: a.max(), (_I,)),
    ("min_int_dim", lambda m, a: a.min(0), (_I32,)),
    ("max_dim_float", lambda m, a: a.max(dim=0, keepdim=True), (_F,)),
    ("argmax", lambda m, a: a.argmax(), (_F,)),
    ("argmin_dim", lambda m, a: m.argmin(a, 0), (_I,)),
    ("gt_float", lambda m, a: a > 0, (_F,)),
    ("eq_int_float", lambda m, a, b: a == b, (_I32, _D)),
    ("le_int_scalar", lambda m, a: a <= 2.5, (_I,)),
    ("ne_bool", lambda m, a, b: a != b, (_B, _B)),
    ("maximum_int_float", lambda m, a, b: m.maximum(a, b), (_I, _F)),
    ("clamp_int", lambda m, a: a.clamp(0, 3), (_I,)),
    ("clamp_int_float_bound", lambda m, a: a.clamp(min=0.5), (_I,)),
    ("where_int_float", lambda m, a, b: m.where(a > 0, a, b), (_I, _F)),
    ("where_int_scalar", lambda m, a: m.where(a > 0, a, 0), (_I32,)),
    ("cat_int32_int64", lambda m, a, b: m.cat([a, b]), (_I32, _I)),
    ("cat_int_float", lambda m, a, b: m.cat([a, b]), (_I, _F)),
    ("stack_bool_int", lambda m, a, b: m.stack([a, b]), (_B, _I32)),
    ("index_int", lambda m, a: a[m.tensor([0, 0, 2])], (_I,)),
    ("gather_int", lambda m, a: a.gather(0, m.tensor([3, 3])), (_I,)),
    ("clone_uint8", lambda m, a: a.clone(), (_U8,)),
    ("to_int", lambda m, a: a.to(m.int64), (_F,)),
    ("long_trunc", lambda m, a: a.long(), (_D,)),
    ("float_of_int", lambda m, a: a.float(), (_I,)),
    ("bool_of_float", lambda m, a: a.bool(), (_F,)),
    ("double_of_bool", lambda m, a: a.double(), (_B,)),
    ("reshape_int", lambda m, a: a.reshape(2, 2).t(), (_I,)),
    ("argsort", lambda m, a: a.argsort(), (_F,)),
    ("argsort_desc_ties", lambda m, a: m.argsort(a.abs() // 2, descending=True), (_I,)),
    ("sort_ties_stable", lambda m, a: (a.abs() // 2).sort(), (_I,)),
    ("nonzero", lambda m, a: (a > 0).nonzero(), (_I,)),
    ("nonzero_tuple", lambda m, a: m.nonzero(a.reshape(2, 2), as_tuple=True), (_I,)),
    ("where_one_arg", lambda m, a: m.where(a.reshape(2, 2) > 0), (_F,)),
    ("topk_int", lambda m, a: a.topk(3).values, (_I,)),
    ("lt_int_float", lambda m, a, b: a < b, (_I, _F)),
    ("ge_float_scalar", lambda m, a: a >= 0.5, (_D,)),
    ("and_bool", lambda m, a, b: a & b, (_B, _B)),
    ("or_int", lambda m, a, b: a | b, (_I, _I32)),
    ("rand_int_scalar", lambda m, a: 6 & a, (_I,)),
    ("ror_bool_scalar", lambda m, a: True | a, (_B,)),
    ("xor_int", lambda m, a, b: a ^ b, (_U8, _I8)),
    ("bitwise_xor_method", lambda m, a, b: a.bitwise_xor(b), (_B, _B)),
    ("rxor_int_scalar", lambda m, a: 5 ^ a, (_I32,)),
    ("lshift_int", lambda m, a: a << 2, (_I,)),
    ("rshift_int", lambda m, a, b: a >> b.abs(), (_I, _I32)),
    ("invert_int", lambda m, a: ~a, (_I8,)),
    ("invert_bool", lambda m, a: ~a, (_B,)),
    ("bitwise_not_method", lambda m, a: a.bitwise_not(), (_I,)),
    ("logical_not_int", lambda m, a: a.logical_not(), (_I,)),
    ("logical_not_float", lambda m, a: a.logical_not(), (_F,)),
    ("int_of_float", lambda m, a: a.int(), (_D,)),
    ("byte_of_int", lambda m, a: a.abs().byte(), (_I,)),
    ("short_of_float", lambda m, a: a.short(), (_F,)),
    ("half_of_double", lambda m, a: a.half(), (_D,)),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in DTYPE_CASES])
def test_dtype_vs_torch(fn, inputs, torch):
    rg = outputs(fn(retrograd, *[retrograd.tensor(v, dtype=getattr(retrograd, d))
                                  for v, d in inputs]))
    th = outputs(fn(torch, *[torch.tensor(v, dtype=getattr(torch, d)) for v, d in inputs]))
    assert len(rg) == len(th)
    for r, t in zip(rg, th):
        # float16 arithmetic rounds differently in NumPy (it computes in float16 throughout)
        tol = {"rtol": 1e-3, "atol": 1e-3} if dtype_name_of(t) == "float16" else TOL["float32"]
        check_same(r, t, tol, "value")
        assert r.requires_grad is False


# ----------------------------------------------------------------------------- dtype matrix

_MATRIX_UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu",
                 "sign", "log1p", "expm1", "rsqrt", "log2", "log10", "exp2", "tan", "atan",
                 "asin", "acos", "sinh", "cosh", "floor", "ceil", "trunc", "frac", "round",
                 "square", "erf", "erfc", "reciprocal"]
_MATRIX_REDUCE = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin",
                  "var", "std", "norm", "all", "any"]
_MATRIX_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                  "bool"]


def _matrix_calls():
    calls = []
    for d in _MATRIX_DTYPES:
        for n in _MATRIX_UNARY:
            calls.append((f"{n}-{d}", n, d, ()))
        for n in _MATRIX_REDUCE:
            calls += [(f"{n}-{d}", n, d, ()), (f"{n}_dim0-{d}", n, d, (0,))]
        calls += [(f"logsumexp-{d}", "logsumexp", d, (1,)), (f"cumsum-{d}", "cumsum", d, (1,))]
    return calls


@pytest.mark.parametrize("name,op,dtype_name,args",
                         [pytest.param(*c, id=c[0]) for c in _matrix_calls()])
def test_dtype_matrix_vs_torch(name, op, dtype_name, args, torch):
    """Every elementwise function and reduction on every dtype: PyTorch's result dtype and
    values, or PyTorch's exception class (bool and integer inputs are where NumPy and
    PyTorch part ways)."""
    data = np.array([[0, 1, 2], [3, 4, 5]])
    results = []
    for m in (retrograd, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = getattr(m.tensor(data, dtype=getattr(m, dtype_name)), op)(*args)
            results.append(outputs(out)[0])
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
            results.append(type(e))
    rg, th = results
    if isinstance(th, type):
        assert rg is th, f"torch raised {th.__name__}, retrograd gave {rg!r}"
        return
    assert not isinstance(rg, type), f"retrograd raised {rg.__name__}"
    tol = {"rtol": 1e-2, "atol": 1e-3} if "16" in dtype_name else TOL["float32"]
    check_same(rg, th, tol, name)


_PAIR_OPS = {
    "maximum": lambda m, a, b: m.maximum(a, b), "atan2": lambda m, a, b: m.atan2(a, b),
    "hypot": lambda m, a, b: m.hypot(a, b), "logaddexp": lambda m, a, b: m.logaddexp(a, b),
    "xlogy": lambda m, a, b: m.xlogy(a, b), "lerp": lambda m, a, b: m.lerp(a, b, 0.5),
    "addcmul": lambda m, a, b: m.addcmul(a, a, b), "addcdiv": lambda m, a, b: m.addcdiv(a, a, b),
    "where": lambda m, a, b: m.where(a > 1, a, b), "remainder": lambda m, a, b: a % b,
    "pow": lambda m, a, b: a ** b, "div": lambda m, a, b: a / b,
    "clamp_tensor_min": lambda m, a, b: a.clamp(min=b), "cat": lambda m, a, b: m.cat([a, b]),
    "mse_loss": lambda m, a, b: nnf(m).mse_loss(a, b), "dot": lambda m, a, b: a.dot(b),
    "masked_fill": lambda m, a, b: a.masked_fill(b > 1, 2.5),
}


@pytest.mark.parametrize("op", sorted(_PAIR_OPS))
def test_dtype_pairs_vs_torch(op, torch):
    """Each two-input op on every pair of dtypes: PyTorch's result dtype and values, or its
    exception class."""
    fn = _PAIR_OPS[op]
    for da in _MATRIX_DTYPES:
        for db in _MATRIX_DTYPES:
            results = []
            for m in (retrograd, torch):
                a = m.tensor([1, 2, 3], dtype=getattr(m, da))
                b = m.tensor([2, 1, 3], dtype=getattr(m, db))
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        results.append(fn(m, a, b))
                except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
                    results.append(type(e))
            rg, th = results
            where = f"{op}({da}, {db})"
            if isinstance(th, type):
                assert rg is th, f"{where}: torch raised {th.__name__}, retrograd gave {rg!r}"
                continue
            assert not isinstance(rg, type), f"{where}: retrograd raised {rg.__name__}"
            tol = {"rtol": 1e-2, "atol": 1e-3} if "16" in da + db else TOL["float32"]
            check_same(rg, th, tol, where)
