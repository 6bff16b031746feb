"""Ops that pick values along a dim (max, min, sort, topk, kthvalue, gather, losses...) on
pieces of views (chunk, split, unbind, narrow, indexing), differentially against PyTorch
2.13: their derivatives must read the piece's own shape, not its multi-output node's list.
"""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


# a piece of a (4, 6) tensor, as each view function gives it
PIECES = {
    "chunk_0": lambda m, b: b.chunk(2, dim=0)[0],
    "chunk_1": lambda m, b: b.chunk(2, dim=0)[1],
    "chunk_dim1": lambda m, b: b.chunk(3, dim=1)[2],
    "split_1": lambda m, b: b.split(3, dim=0)[1],
    "split_sizes": lambda m, b: b.split([1, 3], dim=0)[1],
    "unbind_2": lambda m, b: b.unbind(1)[2],
    "iter_3": lambda m, b: list(b)[3],
    "narrow": lambda m, b: b.narrow(1, 2, 3),
    "int": lambda m, b: b[2],
    "slice": lambda m, b: b[1:3, ::2],
    "t": lambda m, b: b.t(),
    "split_then_t": lambda m, b: b.split(2)[1].t(),
}

# ops that pick values along a dim (their derivative scatters into the input's shape)
PICKS = {
    "max_dim": lambda m, p: p.max(dim=-1)[0],
    "max_dim_keepdim": lambda m, p: p.max(dim=-1, keepdim=True)[0],
    "max_dim0": lambda m, p: p.max(dim=0)[0],
    "min_dim_keepdim": lambda m, p: p.min(dim=0, keepdim=True)[0],
    "max_all": lambda m, p: p.max(),
    "amax": lambda m, p: p.amax(dim=-1, keepdim=True),
    "amin": lambda m, p: p.amin(dim=0),
    "sort": lambda m, p: p.sort(dim=-1)[0],
    "sort_desc_dim0": lambda m, p: p.sort(dim=0, descending=True)[0],
    "topk": lambda m, p: p.topk(1, dim=-1)[0],
    "topk_smallest_dim0": lambda m, p: p.topk(1, dim=0, largest=False)[0],
    "kthvalue": lambda m, p: p.kthvalue(1, dim=-1)[0],
    "kthvalue_keepdim": lambda m, p: p.kthvalue(1, dim=0, keepdim=True)[0],
    "logsumexp": lambda m, p: p.logsumexp(dim=-1),
    "gather": lambda m, p: p.gather(-1, m.zeros(p.shape, dtype=m.int64)),
    "diagonal": lambda m, p: p.diagonal() if p.ndim == 2 else p * 1,
    "trace": lambda m, p: p.trace() if p.ndim == 2 else p.sum(),
    "cross_entropy": lambda m, p: m.nn.functional.cross_entropy(
        p if p.ndim == 2 else p[None], m.zeros(p.shape[0] if p.ndim == 2 else 1,
                                               dtype=m.int64)),
    "nll_loss": lambda m, p: m.nn.functional.nll_loss(
        p if p.ndim == 2 else p[None], m.zeros(p.shape[0] if p.ndim == 2 else 1,
                                               dtype=m.int64), reduction="sum"),
}


@pytest.mark.parametrize("piece", list(PIECES))
def test_picks_on_view_pieces_vs_torch(piece):
    """max/min/sort/topk/kthvalue... with dim and keepdim on a piece of chunk/split/unbind/
    narrow/indexing: values and gradients as PyTorch (issue 7: max on a chunk crashed in
    backward, its derivative reading the split node's list of output shapes)."""
    rng = np.random.default_rng(11)
    # distinct values: no ties, so every pick has one answer
    x_np = rng.permutation(24).reshape(4, 6) / 8.0
    bad = []
    for name, pick in PICKS.items():
        outs = []
        for m in (R, torch):
            x = m.tensor(x_np, requires_grad=True)
            y = pick(m, PIECES[piece](m, x * 1))
            g = m.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)))
            (y * g).sum().backward()
            outs.append((np.array(y.tolist()), np.array(x.grad.tolist())))
        (ry, rg), (ty, tg) = outs
        if ry.shape != ty.shape or not np.allclose(ry, ty) or not np.allclose(rg, tg):
            bad.append(name)
    assert bad == []


def test_issue_7_max_of_a_chunk_regression():
    grads = []
    x_np = np.random.default_rng(0).standard_normal((4, 3))
    for m in (R, torch):
        x = m.tensor(x_np, requires_grad=True)
        y = x.chunk(2, dim=0)[1].max(dim=-1, keepdim=True)[0]
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_picks_on_pieces_second_order_vs_torch():
    """The same derivatives recorded (create_graph=True) on a piece of split."""
    x_np = np.random.default_rng(5).permutation(12).reshape(4, 3) / 4.0
    outs = []
    for m in (R, torch):
        x = m.tensor(x_np, requires_grad=True)
        piece = (x * x).split(2)[1]
        y = piece.max(dim=-1, keepdim=True)[0].sum() + piece.sort(dim=0)[0][0].sum()
        (g,) = m.autograd.grad(y, [x], create_graph=True)
        (g * m.tensor(x_np)).sum().backward()
        outs.append((g.tolist(), x.grad.tolist()))
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1])
