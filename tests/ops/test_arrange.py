"""Op tests, arrange: meshgrid, block_diag, rot90, tensor_split, unfold, repeat_interleave...
(ops/arrange.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.  Below the table: views
(shared memory, in-place changes through them against PyTorch), argument edge cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def _sq(m, a):  # a 0-d tensor with a graph: sum of a vector
    return a.sum()


# broadcasting and grids
case("broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b), ((3, 1), (4,)))
case("broadcast_tensors_same", lambda m, a, b: m.broadcast_tensors(a, b)[1] * 1,
     ((3, 4), (4,)))
case("broadcast_tensors_0d", lambda m, a, b: m.broadcast_tensors(a, b), ((), (2, 3)))
case("meshgrid_ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), ((3,), (4,)))
case("meshgrid_xy", lambda m, a, b: m.meshgrid([a, b], indexing="xy"), ((3,), (4,)))
case("meshgrid_xy3", lambda m, a, b, c: m.meshgrid(a, b, c, indexing="xy"),
     ((2,), (3,), (4,)))
case("meshgrid_0d", lambda m, a, b: m.meshgrid((a, b), indexing="ij"), ((), (3,)))
case("meshgrid_one", lambda m, a: m.meshgrid(a, indexing="xy"), ((3,),))
case("meshgrid_empty", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), ((0,), (3,)))
case("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), ((3,), (4,)))
case("cartesian_prod3", lambda m, a, b, c: m.cartesian_prod(a, b, c), ((2,), (3,), (2,)))
case("cartesian_prod_one", lambda m, a: m.cartesian_prod(a) * 1, ((3,),))
case("combinations", lambda m, a: m.combinations(a), ((4,),))
case("combinations_r3", lambda m, a: m.combinations(a, 3), ((5,),))
case("combinations_repl", lambda m, a: m.combinations(a, r=2, with_replacement=True), ((4,),))
case("combinations_r1", lambda m, a: m.combinations(a, 1), ((3,),))
case("combinations_r_gt_n", lambda m, a: m.combinations(a, 4) * 1, ((3,),))
# blocks, padding
case("block_diag", lambda m, a, b: m.block_diag(a, b), ((2, 3), (3, 2)))
case("block_diag_mixed", lambda m, a, b, c: m.block_diag(a, b, c), ((), (3,), (2, 2)))
case("block_diag_empty", lambda m, a, b: m.block_diag(a, b), ((0, 2), (2, 0)))
case("constant_pad_nd", lambda m, a: m.constant_pad_nd(a, (1, 2)), ((3, 4),))
case("constant_pad_nd_2d", lambda m, a: m.constant_pad_nd(a, [1, 0, 2, 1], 1.5), ((2, 3, 4),))
case("constant_pad_nd_crop", lambda m, a: m.constant_pad_nd(a, (-1, 2, 1, -2)), ((3, 4),))
case("constant_pad_nd_none", lambda m, a: m.constant_pad_nd(a, ()), ((3,),))
# rotations, flips
case("rot90", lambda m, a: a.rot90(), ((3, 4),))
case("rot90_k2", lambda m, a: m.rot90(a, 2), ((3, 4),))
case("rot90_k3_dims", lambda m, a: m.rot90(a, 3, [2, 0]), ((2, 3, 4),))
case("rot90_neg", lambda m, a: m.rot90(a, -1, (1, -1)), ((2, 3, 4),))
case("rot90_k0", lambda m, a: a.rot90(4), ((3, 4),))
case("fliplr", lambda m, a: a.fliplr(), ((3, 4),))
case("flipud", lambda m, a: m.flipud(a), ((3,),))
case("flipud_3d", lambda m, a: a.flipud(), ((2, 3, 2),))
# splitting (views)
case("split_with_sizes", lambda m, a: m.split_with_sizes(a, [1, 2], 1), ((2, 3),))
case("split_with_sizes_method", lambda m, a: a.split_with_sizes((2, 0, 1)), ((3, 2),))
case("tensor_split_sections", lambda m, a: m.tensor_split(a, 3), ((7, 2),))
case("tensor_split_more_sections", lambda m, a: a.tensor_split(5, dim=1), ((2, 3),))
case("tensor_split_indices", lambda m, a: m.tensor_split(a, [1, 3], dim=1), ((2, 5),))
case("tensor_split_odd_indices", lambda m, a: a.tensor_split((3, 1, 9, -1)), ((5,),))
case("tensor_split_tensor", lambda m, a: a.tensor_split(m.tensor([2, 4]), 0), ((5, 2),))
case("tensor_split_tensor_0d", lambda m, a: a.tensor_split(m.tensor(2), -1), ((2, 5),))
case("hsplit", lambda m, a: a.hsplit(2), ((3, 4),))
case("hsplit_1d", lambda m, a: m.hsplit(a, [2]), ((5,),))
case("vsplit", lambda m, a: m.vsplit(a, [1, 2]), ((4, 2),))
case("dsplit", lambda m, a: a.dsplit(2), ((2, 1, 4),))
# flattening and stacking
case("ravel", lambda m, a: a.ravel(), ((3, 4),))
case("ravel_noncontig", lambda m, a: m.ravel(a.t()), ((3, 4),))
case("ravel_0d", lambda m, a: m.ravel(_sq(m, a)), ((3,),))
case("atleast_1d", lambda m, a: m.atleast_1d(_sq(m, a)), ((3,),))
case("atleast_1d_many", lambda m, a, b: m.atleast_1d(a, b), ((), (3,)))
case("atleast_2d", lambda m, a, b, c: m.atleast_2d([a, b, c]), ((), (3,), (2, 3)))
case("atleast_3d", lambda m, a, b, c, d: m.atleast_3d(a, b, c, d),
     ((), (3,), (2, 3), (1, 2, 3)))
case("atleast_3d_0d", lambda m, a: m.atleast_3d(_sq(m, a)), ((2,),))
case("hstack", lambda m, a, b: m.hstack((a, b)), ((3,), (2,)))
case("hstack_2d", lambda m, a, b: m.hstack([a, b]), ((2, 3), (2, 1)))
case("hstack_0d", lambda m, a, b: m.hstack([_sq(m, a), b]), ((2,), (3,)))
case("vstack", lambda m, a, b: m.vstack((a, b)), ((4,), (2, 4)))
case("row_stack", lambda m, a, b: m.row_stack((a, b)), ((4,), (4,)))
case("dstack", lambda m, a, b: m.dstack((a, b)), ((3, 4), (3, 4, 2)))
case("dstack_1d", lambda m, a, b: m.dstack((a, b)), ((3,), (3,)))
case("column_stack", lambda m, a, b: m.column_stack((a, b)), ((3,), (3, 2)))
case("column_stack_0d", lambda m, a, b: m.column_stack((_sq(m, a), b)), ((2,), (1, 2)))
# unfold (a view)
case("unfold", lambda m, a: a.unfold(1, 2, 1), ((3, 4),))
case("unfold_step", lambda m, a: a.unfold(0, 2, 3), ((8, 2),))
case("unfold_overlap_3d", lambda m, a: a.unfold(-2, 3, 1) * 1, ((2, 5, 3),))
case("unfold_size0", lambda m, a: a.unfold(0, 0, 1), ((3,),))
case("unfold_0d", lambda m, a: _sq(m, a).unfold(0, 1, 2), ((2,),))
case("unfold_twice", lambda m, a: a.unfold(0, 3, 2).unfold(1, 2, 1), ((7, 3),))
# repeat_interleave
case("repeat_interleave", lambda m, a: a.repeat_interleave(2), ((2, 3),))
case("repeat_interleave_dim", lambda m, a: m.repeat_interleave(a, 3, dim=1), ((2, 3),))
case("repeat_interleave_1d", lambda m, a: a.repeat_interleave(2, 0), ((3,),))
case("repeat_interleave_tensor", lambda m, a: a.repeat_interleave(m.tensor([1, 0, 2]), 0),
     ((3, 2),))
case("repeat_interleave_tensor_flat", lambda m, a: m.repeat_interleave(a, m.tensor([3]),
                                                                        output_size=12), ((2, 2),))
case("repeat_interleave_output_size", lambda m, a: a.repeat_interleave(
    m.tensor([2, 1]), dim=-1, output_size=3), ((3, 2),))
case("repeat_interleave_0d", lambda m, a: _sq(m, a).repeat_interleave(3), ((2,),))
case("repeat_interleave_zero", lambda m, a: a.repeat_interleave(0, 1), ((2, 3),))
# diagonals, sort, conjugate transposes
case("diagflat", lambda m, a: m.diagflat(a), ((2, 2),))
case("diagflat_offset", lambda m, a: a.diagflat(1), ((3,),))
case("diagflat_neg", lambda m, a: m.diagflat(a.t(), -2), ((2, 3),))
case("diagflat_0d", lambda m, a: m.diagflat(_sq(m, a)), ((2,),))
case("msort", lambda m, a: m.msort(a), ((4, 3),), "spread")
case("msort_method", lambda m, a: a.msort(), ((5,),), "spread")
case("H", lambda m, a: a.H, ((3, 4),))
case("mH", lambda m, a: a.mH, ((2, 3, 4),))
case("adjoint", lambda m, a: m.adjoint(a), ((2, 3, 4),))
case("adjoint_method", lambda m, a: a.adjoint(), ((3, 4),))
# changes elsewhere: transpose of a 0-d tensor, diag_embed, topk of 0-d
case("t_0d", lambda m, a: _sq(m, a).t(), ((3,),))
case("transpose_0d", lambda m, a: _sq(m, a).transpose(0, -1), ((3,),))
case("diag_embed_dims_first", lambda m, a: m.diag_embed(a, 0, 0, 2), ((3, 4),))
case("diag_embed_dims_swapped", lambda m, a: m.diag_embed(a, 1, 2, 0), ((3, 4),))
case("diag_embed_dims_neg", lambda m, a: a.diag_embed(-1, -1, 1), ((2, 3, 2),))
case("diag_embed_1d_dims", lambda m, a: m.diag_embed(a, 2, 1, 0), ((3,),))
case("topk_0d", lambda m, a: _sq(m, a).topk(1), ((3,),))
case("msort_0d", lambda m, a: m.msort(_sq(m, a)), ((3,),))
case("sort_0d", lambda m, a: _sq(m, a).sort(descending=True), ((3,),))
case("kthvalue_0d", lambda m, a: m.kthvalue(_sq(m, a), 1, 0, True), ((3,),))
case("topk_0d_k0", lambda m, a: m.topk(_sq(m, a), 0, dim=-1, largest=False), ((3,),))
case("tensor_split_whole", lambda m, a: a.tensor_split([0, 3], 1), ((2, 3),))
# empty inputs
case("empty_rot90", lambda m, a: a.rot90(1, (0, 2)), ((0, 2, 3),))
case("empty_constant_pad_nd", lambda m, a: m.constant_pad_nd(a, (1, 1, 0, 2)), ((2, 0),))
case("empty_tensor_split", lambda m, a: a.tensor_split(3, 1), ((2, 0),))
case("empty_hsplit", lambda m, a: a.hsplit([1]), ((0, 2),))
case("empty_unfold", lambda m, a: a.unfold(1, 2, 1), ((0, 3),))
case("empty_repeat_interleave", lambda m, a: a.repeat_interleave(2, 0), ((0, 2),))
case("empty_repeat_interleave_tensor",
     lambda m, a: a.repeat_interleave(m.tensor([], dtype=m.int64), 0), ((0, 2),))
case("empty_hstack", lambda m, a, b: m.hstack((a, b)), ((0,), (2,)))
case("empty_vstack", lambda m, a, b: m.vstack((a, b)), ((0, 3), (3,)))
case("empty_column_stack", lambda m, a: m.column_stack((a, a)), ((0,),))
case("empty_diagflat", lambda m, a: m.diagflat(a, 1), ((0,),))
case("empty_diag_embed", lambda m, a: m.diag_embed(a, 0, 1, 0), ((2, 0),))
case("empty_ravel", lambda m, a: a.ravel(), ((2, 0, 3),))
case("empty_fliplr", lambda m, a: a.fliplr(), ((3, 0),))
case("empty_combinations", lambda m, a: m.combinations(a, 2), ((0,),))
case("empty_cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), ((0,), (3,)))
case("empty_broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b), ((0, 1), (3,)))
case("empty_msort", lambda m, a: a.msort(), ((0, 3),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- views


VIEWS = [  # (name, view of a (3, 4) tensor): PyTorch returns a view, so must retrograd
    ("broadcast_tensors", lambda m, x: m.broadcast_tensors(x, m.zeros(2, 1, 1))[0]),
    ("meshgrid", lambda m, x: m.meshgrid(x[0], x[1, :2], indexing="xy")[0]),
    ("split_with_sizes", lambda m, x: x.split_with_sizes([1, 2])[1]),
    ("tensor_split", lambda m, x: x.tensor_split([1, 3], 1)[1]),
    ("hsplit", lambda m, x: m.hsplit(x, 2)[1]),
    ("vsplit", lambda m, x: m.vsplit(x, [2])[0]),
    ("ravel", lambda m, x: x.ravel()),
    ("atleast_3d", lambda m, x: m.atleast_3d(x)),
    ("unfold", lambda m, x: x.unfold(1, 2, 2)),
    ("unfold_overlap", lambda m, x: x.unfold(1, 3, 1)),
    ("H", lambda m, x: x.H),
    ("mH", lambda m, x: x.mH),
    ("adjoint", lambda m, x: x.adjoint()),
    ("repeat_interleave", lambda m, x: x[:1].repeat_interleave(1, 0)),
]


def _base(m, requires_grad):
    x = m.arange(12.0, dtype=m.float64).reshape(3, 4)
    return x.requires_grad_() if requires_grad else x


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_memory_as_torch(name, fn, torch):
    for m in (torch, retrograd):
        x = _base(m, False)
        v = fn(m, x)
        is_view = (v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
                   if m is torch else np.shares_memory(v.detach().numpy(), x.numpy()))
        if m is torch:
            want = is_view
        else:
            assert is_view == want, f"{name}: a view in torch: {want}"


INPLACE_VIEWS = [v for v in VIEWS if v[0] not in ("broadcast_tensors", "meshgrid",
                                                  "unfold_overlap")]


def _inplace_run(m, fn):
    leaf = _base(m, True)
    x = leaf * 1.0
    v = fn(m, x)
    before = x._version
    try:
        v.mul_(2.0)
    except RuntimeError as e:
        return ("error", type(e).__name__)
    name = [t.grad_fn.name()
            for t in (x, v)]
    (x * x).sum().backward(retain_graph=True)
    grad_x = leaf.grad.numpy().tolist()
    leaf.grad = None
    (v * v).sum().backward()  # through the view's own (rebased) grad_fn
    return (x._version > before, x.detach().numpy().tolist(), grad_x, leaf.grad.numpy().tolist(),
            name)


@pytest.mark.parametrize("name,fn", INPLACE_VIEWS, ids=[v[0] for v in INPLACE_VIEWS])
def test_inplace_through_views_as_torch(name, fn, torch):
    """An in-place change of the view: the base sees it, the version counter moves, the
    gradient and the base's new grad_fn follow PyTorch's (or both refuse alike)."""
    assert _inplace_run(retrograd, fn) == _inplace_run(torch, fn)


def test_expanded_views_refuse_inplace_as_torch(torch):
    for m in (torch, retrograd):
        x = m.zeros(3, dtype=m.float64)
        g = m.meshgrid(x, x, indexing="ij")[0]
        with pytest.raises(RuntimeError):
            g.add_(1.0)


def test_unfold_view_writes_reach_base(torch):
    for m in (torch, retrograd):
        x = m.arange(6.0)
        x.unfold(0, 2, 2)[1, 0] = 10.0
        assert x.tolist() == [0.0, 1.0, 10.0, 3.0, 4.0, 5.0]


# ----------------------------------------------------------------- arguments


def test_meshgrid_warns_without_indexing(torch):
    for m in (torch, retrograd):
        with pytest.warns(UserWarning, match="indexing"):
            g = m.meshgrid(m.zeros(2), m.zeros(3))
        assert tuple(g[0].shape) == (2, 3)


def test_repeat_interleave_of_repeats_alone(torch):
    for reps in ([1, 0, 3], [2], []):
        want = torch.repeat_interleave(torch.tensor(reps, dtype=torch.int64))
        got = retrograd.repeat_interleave(retrograd.tensor(reps, dtype=retrograd.int64))
        assert got.tolist() == want.tolist() and str(got.dtype)[-5:] == str(want.dtype)[-5:]


def test_block_diag_of_nothing_and_of_integers(torch):
    for m in (torch, retrograd):
        assert tuple(m.block_diag().shape) == (1, 0)
    got = retrograd.block_diag(retrograd.tensor([[1, 2]]), retrograd.tensor([3.0]))
    want = torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([3.0]))
    assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype).replace(
        "torch", "retrograd")


def test_constant_pad_keeps_integer_dtype(torch):
    got = retrograd.constant_pad_nd(retrograd.tensor([1, 2]), (1, 1), 7)
    want = torch.constant_pad_nd(torch.tensor([1, 2]), (1, 1), 7)
    assert got.tolist() == want.tolist() and got.dtype == retrograd.int64


def test_H_of_0d_warns_as_torch(torch):  # noqa: N802
    for m in (torch, retrograd):
        with pytest.warns(UserWarning, match="deprecated"):
            assert m.tensor(2.0).H.item() == 2.0


def test_combinations_r0_is_empty(torch):
    for m in (torch, retrograd):
        out = m.combinations(m.arange(3.0), 0)
        assert tuple(out.shape) == (0,)

