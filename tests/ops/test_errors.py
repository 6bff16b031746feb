"""The exceptions a user gets for a wrong call: PyTorch's class, and a message naming the
op, shapes or dtypes involved.
"""

from __future__ import annotations

import pytest

import retrograd

from .helpers import nnf


def _r(*shape):
    return lambda m: m.randn(*shape)


# (name, the wrong call, the exception class PyTorch raises, what retrograd's message names)
ERROR_CASES = [
    ("matmul_shapes", lambda m: _r(2, 3)(m) @ _r(4, 5)(m), RuntimeError, ["2x3", "4x5"]),
    ("matmul_vec", lambda m: _r(2, 3)(m) @ _r(4)(m), RuntimeError, ["2x3", "4"]),
    ("matmul_batched", lambda m: _r(2, 2, 3)(m) @ _r(2, 4, 5)(m), RuntimeError,
     ["2x2x3", "2x4x5"]),
    ("matmul_0d", lambda m: m.tensor(1.0) @ _r(3)(m), RuntimeError, ["0D", "1D"]),
    ("matmul_dtypes", lambda m: _r(2, 3)(m) @ _r(3, 2)(m).double(), RuntimeError,
     ["float32", "float64"]),
    ("cat_sizes", lambda m: m.cat([_r(2, 3)(m), _r(2, 4)(m)]), RuntimeError,
     ["dimension 0", "[2, 3]", "[2, 4]", "tensor number 1"]),
    ("cat_ndim", lambda m: m.cat([_r(2, 3)(m), _r(3)(m)]), RuntimeError, ["2", "1"]),
    ("cat_empty", lambda m: m.cat([]), ValueError, ["non-empty"]),
    ("stack_sizes", lambda m: m.stack([_r(2, 3)(m), _r(3, 2)(m)]), RuntimeError,
     ["[2, 3]", "[3, 2]"]),
    ("view_noncontiguous", lambda m: _r(2, 3)(m).t().view(6), RuntimeError,
     ["[3, 2]", "reshape"]),
    ("reshape_size", lambda m: _r(2, 3)(m).reshape(4, 2), RuntimeError, ["[4, 2]", "6"]),
    ("reshape_two_minus1", lambda m: _r(2, 3)(m).reshape(-1, -1), RuntimeError, ["one"]),
    ("view_size", lambda m: _r(2, 3)(m).view(5), RuntimeError, ["[5]", "6"]),
    ("expand_size", lambda m: _r(2, 3)(m).expand(4, 3), RuntimeError, ["[4, 3]", "[2, 3]"]),
    ("broadcast_add", lambda m: _r(2, 3)(m) + _r(4)(m), RuntimeError, ["3", "4"]),
    ("index_int", lambda m: _r(2, 3)(m)[5], IndexError, ["5", "[2, 3]"]),
    ("index_second_int", lambda m: _r(2, 3)(m)[0, 3], IndexError, ["3", "[2, 3]"]),
    ("index_array", lambda m: _r(2, 3)(m)[m.tensor([0, 2])], IndexError, ["2", "[2, 3]"]),
    ("index_mask_shape", lambda m: _r(2, 3)(m)[m.tensor([True, False, True])], IndexError,
     ["[2, 3]"]),
    ("index_too_many", lambda m: _r(2, 3)(m)[0, 0, 0], IndexError, ["[2, 3]"]),
    ("gather_out_of_range", lambda m: _r(2, 3)(m).gather(1, m.tensor([[0, 3]])), RuntimeError,
     ["3", "dimension 1", "size 3"]),
    ("cross_entropy_target", lambda m: nnf(m).cross_entropy(_r(2, 3)(m), m.tensor([0, 3])),
     IndexError, ["3", "[0, 2]"]),
    ("cross_entropy_negative", lambda m: nnf(m).cross_entropy(_r(2, 3)(m), m.tensor([0, -2])),
     IndexError, ["-2"]),
    ("mse_reduction", lambda m: nnf(m).mse_loss(_r(2)(m), _r(2)(m), reduction="avg"),
     ValueError, ["avg"]),
    ("mean_int", lambda m: m.tensor([1, 2]).mean(), RuntimeError, ["Long", "float"]),
    ("clamp_no_bounds", lambda m: _r(2)(m).clamp(), RuntimeError, ["min", "max"]),
    ("permute_duplicate", lambda m: _r(2, 3)(m).permute(0, 0), RuntimeError, ["duplicate"]),
    ("inplace_shape", lambda m: _r(2, 1)(m).add_(_r(2, 3)(m)), RuntimeError,
     ["[2, 1]", "[2, 3]"]),
    ("inplace_dtype", lambda m: m.tensor([1, 2]).add_(1.5), RuntimeError, ["Long", "Float"]),
    ("split_sizes", lambda m: _r(3, 5)(m).split([2, 2], 1), RuntimeError, ["[2, 2]", "5"]),
    ("index_select_range", lambda m: _r(3, 4)(m).index_select(1, m.tensor([4])),
     RuntimeError, ["out of DATA bounds", "size 4", "[4]"]),
    ("narrow_range", lambda m: _r(3, 4)(m).narrow(1, 3, 2), RuntimeError, ["exceeds"]),
    ("repeat_too_few", lambda m: _r(2, 3)(m).repeat(2), RuntimeError, ["repeat", "[2, 3]"]),
    ("chunk_zero", lambda m: _r(2, 3)(m).chunk(0), RuntimeError, ["chunks"]),
    ("repeat_negative", lambda m: _r(2, 3)(m).repeat(-1, 1), RuntimeError, ["negative", "-1"]),
    ("bmm_shapes", lambda m: m.bmm(_r(2, 3, 4)(m), _r(2, 3, 4)(m)), RuntimeError,
     ["[2, 4]", "[2, 3]"]),
    ("bmm_rank", lambda m: m.bmm(_r(3, 4)(m), _r(4, 3)(m)), RuntimeError, ["3D"]),
    ("linear_shapes", lambda m: nnf(m).linear(_r(2, 3)(m), _r(5, 4)(m), _r(5)(m)), RuntimeError,
     ["2x3", "4x5"]),
    ("bce_target_size", lambda m: nnf(m).binary_cross_entropy(_r(2, 3)(m).sigmoid(),
                                                               _r(3)(m).sigmoid()),
     ValueError, ["[3]", "[2, 3]"]),
    ("einsum_operands", lambda m: m.einsum("ij,jk->ik", _r(2, 3)(m)), RuntimeError,
     ["2 operands", "1 tensors"]),
    ("einsum_subscripts", lambda m: m.einsum("ijk->i", _r(2, 3)(m)), RuntimeError,
     ["'ijk'", "[2, 3]"]),
    ("inplace_on_split_output", lambda m: (_r(4, 3)(m).requires_grad_() * 1).split(2)[1].mul_(2),
     RuntimeError, ["Output 1 of Split", "multiple views"]),
    ("inplace_on_unbind_output", lambda m: (_r(4, 3)(m).requires_grad_() * 1).unbind()[0].zero_(),
     RuntimeError, ["Output 0 of Unbind"]),
    ("rremainder_backward", lambda m: (2.5 % m.ones(2).requires_grad_()).sum().backward(),
     RuntimeError, ["remainder", "not implemented"]),
    ("masked_fill_int_mask", lambda m: _r(2)(m).masked_fill(m.tensor([1, 0]), 0.0),
     RuntimeError, ["bool", "Long"]),
]
for _name, _call in [
    ("sum", lambda m, x: x.sum(2)), ("mean", lambda m, x: x.mean(-3)),
    ("softmax", lambda m, x: x.softmax(2)), ("log_softmax", lambda m, x: x.log_softmax(-3)),
    ("max", lambda m, x: x.max(5)), ("min", lambda m, x: m.min(x, -4)),
    ("transpose", lambda m, x: x.transpose(0, 2)), ("unsqueeze", lambda m, x: x.unsqueeze(3)),
    ("squeeze", lambda m, x: x.squeeze(2)), ("cat", lambda m, x: m.cat([x, x], 2)),
    ("stack", lambda m, x: m.stack([x, x], 4)), ("gather", lambda m, x: x.gather(2, x.long())),
    ("permute", lambda m, x: x.permute(0, 2)), ("flatten", lambda m, x: x.flatten(0, 2)),
    ("size", lambda m, x: x.size(2)),
    ("argmax", lambda m, x: x.argmax(2)), ("flip", lambda m, x: x.flip(-3)),
    ("roll", lambda m, x: x.roll(1, 2)), ("cumsum", lambda m, x: x.cumsum(2)),
    ("sort", lambda m, x: x.sort(2)), ("split", lambda m, x: x.split(1, 2)),
    ("unbind", lambda m, x: x.unbind(-3)), ("prod", lambda m, x: x.prod(2)),
    ("var", lambda m, x: x.var(2)), ("logsumexp", lambda m, x: x.logsumexp(2)),
    ("index_select", lambda m, x: x.index_select(2, m.tensor([0]))),
    ("diagonal", lambda m, x: x.diagonal(0, 0, 2)), ("movedim", lambda m, x: x.movedim(2, 0)),
]:
    ERROR_CASES.append((f"dim_{_name}", lambda m, c=_call: c(m, m.randn(2, 3)), IndexError,
                        ["Dimension out of range"]))


@pytest.mark.parametrize("call,exc,fragments",
                         [pytest.param(c, e, f, id=n) for n, c, e, f in ERROR_CASES])
def test_error_vs_torch(call, exc, fragments, torch):
    with pytest.raises(exc):  # PyTorch's class: code that catches it keeps working
        call(torch)
    with pytest.raises(exc) as info:
        call(retrograd)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
