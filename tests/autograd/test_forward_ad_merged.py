"""Forward AD beside the features merged with it: saved-tensor hooks (autograd/graph.py's
on_record, which ops/_apply.py calls before propagating a tangent), ops that record their
own multi-output nodes (decompositions), and in-place ops that change what a dual is."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.autograd.forward_ad as fwAD


def _hooked_dual_program(m, ad):
    """Values, tangent and (reverse-mode) gradients of one program run under saved-tensor
    hooks and a dual level at once, and how many tensors the hooks packed."""
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x = m.tensor([[0.5, 1.0], [2.0, 0.3]], dtype=m.float64, requires_grad=True)
    a = m.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=m.float64, requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t), ad.dual_level():
        xd = ad.make_dual(x, m.ones_like(x))
        ad_ = ad.make_dual(a, m.tensor([[1.0, 0.5], [0.5, 2.0]], dtype=m.float64))
        y = ((xd.exp() * xd.sin()).sum() + m.linalg.cholesky(ad_).sum()
             + m.linalg.eigvalsh(ad_).prod())
        primal, tangent = ad.unpack_dual(y)
        primal.backward()
    return primal.item(), tangent.item(), x.grad.numpy(), a.grad.numpy(), len(packed)


def test_saved_tensor_hooks_and_forward_ad_coexist(torch):
    import torch.autograd.forward_ad as th_fwAD

    got = _hooked_dual_program(retrograd, fwAD)
    want = _hooked_dual_program(torch, th_fwAD)
    for g, w in zip(got[:4], want[:4]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert got[4] > 0  # the hooks saw the saved tensors


@pytest.mark.parametrize("fn", ["lu", "qr", "svd", "eigh"])
def test_decomposition_tangents_match_torch(torch, fn):
    import torch.autograd.forward_ad as th_fwAD

    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    a = a + a.T if fn == "eigh" else a
    t = rng.standard_normal((3, 3))
    t = t + t.T if fn == "eigh" else t

    def tangents(m, ad):
        with ad.dual_level():
            outs = getattr(m.linalg, fn)(ad.make_dual(m.tensor(a), m.tensor(t)))
            return [ad.unpack_dual(o).tangent.numpy() for o in outs
                    if o.dtype.is_floating_point and ad.unpack_dual(o).tangent is not None]

    got, want = tangents(retrograd, fwAD), tangents(torch, th_fwAD)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("m_name", ["retrograd", "torch"])
def test_inplace_as_strided_and_detach_on_a_dual(torch, m_name):
    m = retrograd if m_name == "retrograd" else torch
    ad = fwAD if m is retrograd else torch.autograd.forward_ad
    with ad.dual_level():
        x = ad.make_dual(m.tensor(np.arange(12.0).reshape(3, 4)),
                         m.tensor(np.arange(12.0).reshape(3, 4) * 2))
        x.as_strided_((2, 3), (1, 2), 1)
        np.testing.assert_array_equal(ad.unpack_dual(x).tangent.numpy(),
                                      [[2, 6, 10], [4, 8, 12]])
        y = ad.make_dual(m.ones(3, dtype=m.float64), m.ones(3, dtype=m.float64)) * 2
        y.detach_()
        assert ad.unpack_dual(y).tangent is None
