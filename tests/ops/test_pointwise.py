"""Op tests, pointwise: arithmetic, comparisons' relatives, where/clamp, casts (ops/pointwise.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import hypothesis
import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest

import retrograd

from .helpers import BCAST, Case, case_checks, check_same, COND, leaves, MASK, TOL

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# arithmetic, with every broadcast pair
for sa, sb in BCAST:
    tag = f"{sa}x{sb}".replace(" ", "")
    case(f"add{tag}", lambda m, a, b: a + b, (sa, sb))
    case(f"sub{tag}", lambda m, a, b: a - b, (sa, sb))
    case(f"mul{tag}", lambda m, a, b: a * b, (sa, sb))
    case(f"div{tag}", lambda m, a, b: a / b, (sa, sb), ("real", "nonzero"))
    case(f"pow_tt{tag}", lambda m, a, b: a ** b, (sa, sb), ("pos", "real"))
    case(f"maximum{tag}", lambda m, a, b: m.maximum(a, b), (sa, sb))
    case(f"minimum{tag}", lambda m, a, b: m.minimum(a, b), (sa, sb))
case("add_alpha", lambda m, a, b, alpha: m.add(a, b, alpha=alpha), ((3, 4), (4,)),
     params={"alpha": 2.5})
case("sub_alpha", lambda m, a, b, alpha: a.sub(b, alpha=alpha), ((3, 4), (4,)),
     params={"alpha": 2.5})
case("add_scalar", lambda m, a: a + 2, ((3, 4),))
case("radd", lambda m, a: 2 + a, ((3, 4),))
case("sub_scalar", lambda m, a: a - 2, ((3, 4),))
case("rsub", lambda m, a: 2 - a, ((3, 4),))
case("mul_scalar", lambda m, a: a * 2, ((3, 4),))
case("rmul", lambda m, a: 2 * a, ((3, 4),))
case("div_scalar", lambda m, a: a / 2, ((3, 4),))
case("rdiv", lambda m, a: 2 / a, ((3, 4),), "nonzero")
case("neg", lambda m, a: -a, ((3, 4),))
case("neg_fn", lambda m, a: m.neg(a), ((3, 4),))
case("pow2", lambda m, a: a ** 2, ((3, 4),))
case("pow3", lambda m, a: m.pow(a, 3), ((3, 4),))
case("pow_half", lambda m, a: a ** 0.5, ((3, 4),), "pos")
case("pow_neg", lambda m, a: a ** -1.5, ((3, 4),), "pos")
case("pow_0", lambda m, a: a ** 0, ((3, 4),))
case("rpow", lambda m, a: 2 ** a, ((3, 4),))
case("rpow_float", lambda m, a: 0.5 ** a, ((3, 4),))

# elementwise functions
for _name, _dom in [("exp", "real"), ("log", "pos"), ("sqrt", "pos"), ("abs", "nonzero"),
                    ("sin", "real"), ("cos", "real"), ("tanh", "real"), ("sigmoid", "real"),
                    ("relu", "nonzero")]:
    case(_name, lambda m, a, f=_name: getattr(m, f)(a), ((3, 4),), _dom)
    case(f"{_name}_method", lambda m, a, f=_name: getattr(a, f)(), ((2, 3),), _dom)
case("abs_op", lambda m, a: abs(a), ((5,),), "nonzero")
case("pos_op", lambda m, a: +a, ((3, 4),))
case("reciprocal_method", lambda m, a: a.reciprocal(), ((3, 4),), "nonzero")

# a float64 input cast to float32 (and float32 to float64): finite differences through a
# float32 rounding need a larger step
case("to_dtype", lambda m, a: a.to(m.float32 if a.dtype == m.float64 else m.float64),
     ((2, 3),), gc={"eps": 1e-3})
case("float", lambda m, a: a.float(), ((2, 3),), gc={"eps": 1e-3})
case("double", lambda m, a: a.double(), ((2, 3),), gc={"eps": 1e-3})
# through float16 (3 significant digits): a step and tolerance that its rounding allows
case("half", lambda m, a: a.half(), ((2, 3),), gc={"eps": 1e-2, "atol": 5e-2, "rtol": 5e-2})
case("where", lambda m, a, b: m.where(m.tensor(COND), a, b), ((3, 4), (3, 4)))
case("where_bcast", lambda m, a, b: m.where(m.tensor(COND), a, b), ((1, 4), (3, 1)))
case("where_scalar", lambda m, a: m.where(a > 0, a, 0.0), ((3, 4),), "nonzero")
case("where_method", lambda m, a, b: a.where(m.tensor(COND), b), ((3, 4), (4,)))
case("clamp", lambda m, a: a.clamp(-0.5, 0.5), ((3, 4),))
case("clamp_min", lambda m, a: m.clamp(a, min=0.1), ((3, 4),))
case("clamp_max", lambda m, a: a.clamp(max=-0.1), ((3, 4),))
case("clip", lambda m, a: a.clip(-0.3, 0.3), ((3, 4),))
case("clamp_tensor", lambda m, a, lo, hi: a.clamp(lo, hi - 0.5), ((3, 4), (3, 4), (4,)))

# the rest of the Tensor methods that record a graph
case("remainder", lambda m, a, b: a % b, ((3, 4), (4,)), ("real", "pos"))
case("remainder_scalar", lambda m, a: m.remainder(a, 1.5), ((3, 4),))

# ``2.5 % x`` has no derivative in PyTorch (its grad_fn is "NotImplemented"): see the errors
case("sign", lambda m, a: a.sign(), ((3, 4),), "nonzero")
case("masked_fill", lambda m, a: a.masked_fill(m.tensor(MASK), 0.5), ((3, 4),))
case("masked_fill_tensor", lambda m, a, v: a.masked_fill(m.tensor(MASK), v), ((3, 4), ()))
case("masked_fill_bcast", lambda m, a: a.masked_fill(m.tensor(MASK[0]), -1.0), ((3, 4),))
case("type_as", lambda m, a, b: a.type_as(b) * b, ((3, 4), (3, 4)))
case("pow_method", lambda m, a, b: a.pow(b), ((3, 4), (4,)), ("pos", "real"))

# mixed dtypes: each input's gradient comes back in its own dtype
case("mixed_float64", lambda m, a, b: a * b.double(), ((3, 4), (4,)), gc={"eps": 1e-3})
case("mixed_float32", lambda m, a, b: a.float() + b, ((3, 4), (3, 1)), gc={"eps": 1e-3})
case("mixed_int", lambda m, a: a * m.tensor([1, -2, 3, 0]) + m.tensor(2), ((3, 4),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


BINARY_OPS = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / (b.abs() + 0.5), "pow": lambda m, a, b: (a.abs() + 0.5) ** b,
    "maximum": lambda m, a, b: m.maximum(a, b), "where": lambda m, a, b: m.where(a > b, a, b),
    # an outer product per batch element (0-d operands: a plain product)
    "matmul_bcast": lambda m, a, b: a.unsqueeze(-1) @ b.unsqueeze(-2) if a.ndim and b.ndim
    else a * b,
}


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    op=st.sampled_from(sorted(BINARY_OPS)),
    seed=st.integers(0, 2**16),
)
def test_broadcast_grads_vs_torch_hypothesis(shapes, op, seed):
    """Any pair of broadcastable shapes: values and both gradients as PyTorch's."""
    torch = pytest.importorskip("torch")
    fn = BINARY_OPS[op]
    sa, sb = shapes.input_shapes
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(sa), rng.standard_normal(sb)]
    rg_in, th_in = leaves(retrograd, arrays, "float64"), leaves(torch, arrays, "float64")
    rg_out, th_out = fn(retrograd, *rg_in), fn(torch, *th_in)
    check_same(rg_out, th_out, TOL["float64"], "value")
    g = rng.standard_normal(tuple(th_out.shape))
    rg_out.backward(retrograd.tensor(g))
    th_out.backward(torch.tensor(g))
    for r, t in zip(rg_in, th_in):
        check_same(r.grad, t.grad, TOL["float64"], "grad")
