"""Forward AD: the tangents of split/chunk/unbind pieces are views of the input's tangent
(shared memory, as PyTorch), so an in-place change of the dual shows in every piece."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
import retrograd.autograd.forward_ad as fwAD


def _pieces(m, d):
    return {"split": d.split(2), "split_sizes": d.split([1, 3]), "chunk": d.chunk(2, 1),
            "unbind": d.unbind(1), "function split": m.split(d, 3, dim=0)}


@pytest.mark.parametrize("how", ["split", "split_sizes", "chunk", "unbind", "function split"])
def test_piece_tangents_are_views_of_the_tangent(how, torch):
    rng = np.random.default_rng(5)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    results = {}
    for m, ad in ((R, fwAD), (torch, torch.autograd.forward_ad)):
        tangent = m.tensor(t)
        with ad.dual_level():
            d = ad.make_dual(m.tensor(x), tangent)
            pieces = _pieces(m, d)[how]
            tans = [ad.unpack_dual(p).tangent for p in pieces]
            for p, tp in zip(pieces, tans):
                assert tuple(tp.shape) == tuple(p.shape)
                if m is R:
                    assert np.shares_memory(tp._data, tangent._data), "a copy, not a view"
            d.mul_(3)  # an in-place change of the dual: its tangent triples, in place
            after = [ad.unpack_dual(p).tangent.clone() for p in pieces]
            results[m.__name__] = ([a.numpy() for a in tans], [a.numpy() for a in after])
    for (a, b) in zip(results["retrograd"], results["torch"]):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-12)
    # and the values are the pieces of 3 t
    whole = np.concatenate([a.reshape(-1) for a in results["retrograd"][1]])
    assert np.isclose(np.abs(whole).sum(), 3 * np.abs(t).sum())
