"""In-place ops whose operand shares part of the memory they write: PyTorch refuses them
("some elements of the input tensor and the written-to tensor refer to a single memory
location"), where retrograd computed a result (issue 7, fuzz seeds 9003698, 9007950).  The
same memory in the same layout is allowed (``x.mul_(x)``), as are layouts PyTorch cannot
tell apart (non-dense, such as a diagonal) and the fills (a 0-d value is read as a number)."""

from __future__ import annotations

import pytest

import retrograd

torch = pytest.importorskip("torch")


def _cases(T):  # noqa: N803 - the programs read as T.tensor(...), as in the fuzzer
    def rows():
        return T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def line():
        return T.arange(6.0)

    def squeeze_mul():
        v = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True) * 1
        v *= v.squeeze()  # seed 9003698
        return v

    def unbind_add():
        x = rows()
        return x.add_(x.unbind(0)[2])  # seed 9007950

    return {
        "squeeze_mul": squeeze_mul,
        "unbind_add": unbind_add,
        "row_of_itself": lambda: (lambda x: x.mul_(x[0]))(rows()),
        "zero_dim_piece": lambda: (lambda x: x.mul_(x[0, 0]))(rows()),
        "shifted_slices": lambda: (lambda x: x[0:3].add_(x[1:4]))(line()),
        "shifted_copy_": lambda: (lambda x: x[0:3].copy_(x[1:4]))(line()),
        "transpose": lambda: (lambda x: x.add_(x.t()))(T.tensor([[1.0, 2.0], [3.0, 4.0]])),
        "clamp_bound": lambda: (lambda x: x.clamp_(min=x[1]))(line()),
        "addcmul_": lambda: (lambda x: x[0:3].addcmul_(x[1:4], x[2:5]))(line()),
        "lerp_": lambda: (lambda x: x[0:3].lerp_(x[1:4], x[2:5]))(line()),
        "pow_": lambda: (lambda x: x.pow_(x[0:1]))(line()),
        "alias_of_detach": lambda: (lambda x: x.mul_(x.detach()[0:1]))(line()),
        "add_alpha": lambda: (lambda x: x[0:3].add_(x[1:4], alpha=2))(line()),
        "broadcast_other": lambda: (lambda x: x[0:2].unsqueeze(0).add_(x[1:3]))(line()),
        "setitem_slices": lambda: (lambda x: x.__setitem__(slice(0, 3), x[2:5]) or x)(line()),
        "setitem_index": lambda: (lambda x: x.__setitem__(T.tensor([0, 1]), x[1:3]) or x)(line()),
        "setitem_index_0d": lambda: (lambda x: x.__setitem__(T.tensor([0, 1]), x[2]) or x)(line()),
        # allowed: the same elements, disjoint pieces, copies, fills
        "same_tensor": lambda: (lambda x: x.mul_(x))(line()),
        "same_layout_view": lambda: (lambda x: x.add_(x.view(6)))(line()),
        "expanded_same": lambda: (lambda x: x.add_(x.expand(1, 2)))(T.tensor([[1.0, 2.0]])),
        "disjoint": lambda: (lambda x: x[0:3].add_(x[3:6]))(line()),
        "flip_copy": lambda: (lambda x: x.add_(x.flip(0)))(line()),
        "fill_piece": lambda: (lambda x: x.fill_(x[2]))(line()),
        "masked_fill_piece": lambda: (lambda x: x.masked_fill_(x > 2, x[0]))(line()),
        "setitem_0d": lambda: (lambda x: x.__setitem__(slice(0, 2), x[3]) or x)(line()),
        "setitem_same": lambda: (lambda x: x.__setitem__(slice(0, 2), x[0:2]) or x)(line()),
        "setitem_mask_0d": lambda: (lambda x: x.__setitem__(x > 3, x[2]) or x)(line()),
        "other_dtype_copy": lambda: (lambda x: x[0:3].mul_(x[1:4].int()))(line()),
    }


@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_partial_overlap_as_pytorch(name):
    def run(T):  # noqa: N803
        try:
            return _cases(T)[name]().tolist()
        except RuntimeError as e:
            return "RuntimeError: " + str(e).split(". Please")[0]

    assert run(retrograd) == run(torch)
