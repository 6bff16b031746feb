"""Op tests, strided views (ops/strided.py): as_strided (function, method, in-place form)
and as_strided_scatter: values, views sharing memory, overlapping windows whose gradients
add up, storage offsets of views, gradients of every order, errors; all against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

# PyTorch 2.13's gradient of as_strided_scatter for `input` is wrong: it keeps the gradient
# inside the scattered region and drops it outside (torch.autograd.gradcheck of
# torch.as_strided_scatter fails); retrograd's is the derivative (gradcheck passes), and the
# gradient for `src` matches PyTorch's (test_scatter_src_gradient_as_torch)
_TORCH_WRONG = {"grads": "PyTorch 2.13's as_strided_scatter gradient for input fails its own "
                         "gradcheck"}

CASES = [
    Case("as_strided", lambda m, x: m.as_strided(x, (2, 2), (1, 2), 1), ((3, 4),)),
    Case("as_strided_overlap", lambda m, x: x.as_strided((3, 3), (1, 1)), ((3, 4),)),
    Case("as_strided_default_offset", lambda m, x: (x * 1)[1:].as_strided((2, 3), (3, 1)),
         ((3, 4),)),
    Case("as_strided_repeat", lambda m, x: x.as_strided((2, 4), (0, 1)), ((8,),)),
    Case("as_strided_0d", lambda m, x: m.as_strided(x, (), (), 2), ((5,),)),
    Case("as_strided_empty", lambda m, x: x.as_strided((0, 3), (1, 1)), ((5,),)),
    Case("as_strided_", lambda m, x: (x * 1).as_strided_((2, 3), (1, 2), 1), ((3, 4),)),
    Case("as_strided__fn", lambda m, x: m.as_strided_(x[1:] * 1, (2, 2), (2, 1)), ((3, 3),)),
    Case("as_strided_scatter", lambda m, x, s: m.as_strided_scatter(x, s, (2, 2), (1, 3), 1),
         ((3, 3), (2, 2)), xfail=_TORCH_WRONG),
    Case("as_strided_scatter_method", lambda m, x, s: x.as_strided_scatter(s, (3,), (4,)),
         ((3, 4), (3,)), xfail=_TORCH_WRONG),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_as_strided_is_a_view(torch):
    for m in (retrograd, torch):
        w = m.arange(6.0)
        v = w.as_strided((2,), (2,), 1)
        w[1] = 100.0
        assert v.tolist() == [100.0, 3.0]
        assert w[2:].as_strided((2,), (1,)).tolist() == [2.0, 3.0]


ERRORS = {
    "out_of_bounds": lambda m: m.as_strided(m.ones(4), (3,), (2,)),
    "offset_out_of_bounds": lambda m: m.ones(4).as_strided((2,), (1,), 3),
    "lengths_differ": lambda m: m.ones(4).as_strided((2, 2), (1,)),
    "negative_stride": lambda m: m.ones(4).as_strided((2,), (-1,)),
    "scatter_src_shape": lambda m: m.as_strided_scatter(m.ones(4), m.ones(3), (2,), (1,)),
    "scatter_out_of_bounds": lambda m: m.as_strided_scatter(m.ones(4), m.ones(3), (3,), (2,)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name, torch):
    for m in (retrograd, torch):
        with pytest.raises(RuntimeError):
            ERRORS[name](m)


def test_float32_stays_float32():
    x = retrograd.tensor(np.arange(6.0), dtype=retrograd.float32, requires_grad=True)
    y = x.as_strided((2, 2), (1, 1))
    y.sum().backward()
    assert y.dtype == retrograd.float32 and x.grad.dtype == retrograd.float32


def test_scatter_src_gradient_as_torch(torch):
    grads = []
    for m in (retrograd, torch):
        src = m.ones(2, 2, requires_grad=True)
        out = m.as_strided_scatter(m.zeros(3, 3), src, (2, 2), (1, 3), 1)
        out.backward(m.arange(9.0).reshape(3, 3))
        grads.append(src.grad.tolist())
    assert grads[0] == grads[1]
