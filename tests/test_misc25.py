"""misc25 (stop 25): small PyTorch 2.13 semantics gaps, checked against PyTorch: CopySlices
when the in-place op's gradient for the view is undefined."""

from __future__ import annotations

import pytest

import retrograd

torch = pytest.importorskip("torch")


# ----------------------------------------------------------- CopySlices, undefined gradient


def _dirtying(m, grads):
    """A custom Function that doubles its first input in place and whose backward returns
    ``grads(g)`` (None: no gradient for that input)."""

    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, v, *rest):
            v.mul_(2)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            return grads(g)

    return Dirty


def _copy_slices_run(m, grads, with_other):
    x = m.tensor([0.3, 1.7, -2.2], requires_grad=True)
    y = m.tensor([0.5, 2.5], requires_grad=True)
    b = x.clone()
    fn = _dirtying(m, grads)
    if with_other:
        fn.apply(b[:2], y)
    else:
        fn.apply(b[:2])
    seen = []
    b.grad_fn.register_hook(lambda gi, go: seen.append(
        [None if t is None else t.tolist() for t in gi]))
    (b * m.tensor([1.0, 2.0, 3.0])).sum().backward()
    return (b.grad_fn.name().rsplit("::", 1)[-1], seen, None if x.grad is None else x.grad.tolist(),
            None if y.grad is None else y.grad.tolist())


@pytest.mark.parametrize("case", ["none", "none_other", "view_only", "both"])
def test_copy_slices_undefined_view_gradient(case):
    # PyTorch's CopySlices sends nothing to the old base when the wrapped function's
    # gradient for the view is undefined (not zeros outside the view's region, nor the
    # gradient there): a hook on CopySlices sees None, the leaf's .grad stays None
    grads, other = {
        "none": (lambda g: None, False),
        "none_other": (lambda g: (None, g), True),
        "view_only": (lambda g: (3 * g, None), True),
        "both": (lambda g: (3 * g, g), True),
    }[case]
    assert _copy_slices_run(retrograd, grads, other) == _copy_slices_run(torch, grads, other)
