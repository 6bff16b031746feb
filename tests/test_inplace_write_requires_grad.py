"""Writing a tensor that requires grad into one that does not, differentially against PyTorch.

The target (and its base, for a view, and the other views of that base) becomes a non-leaf
that requires grad with the op's node (CopySlices, AsStridedBackward0, FillBackward3...);
gradients reach the written tensor.  An integer or bool target follows PyTorch's rules:
copy_ records nothing there, while fill_ / masked_fill_ by a 0-d tensor, x[slice] = 0-d
tensor and x[mask] = 0-d tensor do record (issue 7, the fuzzer's most frequent finding).
"""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _flags(t):
    return (t.requires_grad, t.is_leaf, _name(t))


# name -> write(m, target, s, w): s a 0-d float64 leaf, w a float64 leaf of shape [3]
WRITES = {
    "setitem_0d_into_row": lambda m, x, s, w: x.__setitem__(0, s),
    "setitem_vec_into_row": lambda m, x, s, w: x.__setitem__(1, w),
    "setitem_slice_0d": lambda m, x, s, w: x.__setitem__((slice(None), slice(0, 2)), s),
    "setitem_element_0d": lambda m, x, s, w: x.__setitem__((1, 2), s),
    "setitem_all_0d": lambda m, x, s, w: x.__setitem__(Ellipsis, s),
    "setitem_mask_0d": lambda m, x, s, w: x.__setitem__(x > 0.5, s),
    "setitem_index_vec": lambda m, x, s, w: x.__setitem__(m.tensor([1]), w[None]),
    "copy_": lambda m, x, s, w: x.copy_(w),
    "copy_row_view": lambda m, x, s, w: x[1].copy_(w),
    "fill_": lambda m, x, s, w: x.fill_(s),
    "fill_row_view": lambda m, x, s, w: x[0].fill_(s),
    "masked_fill_": lambda m, x, s, w: x.masked_fill_(x > 0.5, s),
    "add_": lambda m, x, s, w: x.add_(w),
    "mul_column_view": lambda m, x, s, w: x[:, 1].mul_(s),
    "lerp_": lambda m, x, s, w: x.lerp_(w, s),
    "addcmul_": lambda m, x, s, w: x.addcmul_(w, w, value=0.5),
    "div_transposed": lambda m, x, s, w: x.t().div_(w[:2, None] + 3),
}

DTYPES = ["float64", "float32", "int64", "bool"]


def _run(m, write, dtype):
    data = np.array([[0.25, 1.0, -2.0], [3.0, 0.0, 0.75]])
    x = m.tensor(data).to(getattr(m, dtype))
    row = x[1]  # a view taken before the write: it follows its base
    s = m.tensor(1.5, dtype=m.float64, requires_grad=True)
    w = m.tensor([2.0, -1.0, 0.5], dtype=m.float64, requires_grad=True)
    try:
        WRITES[write](m, x, s, w)
    except RuntimeError as e:
        return ("raises", type(e).__name__)
    out = [x.tolist(), _flags(x), _flags(row)]
    if x.dtype.is_floating_point and x.requires_grad:
        loss = (x * m.tensor(data + 1, dtype=x.dtype)).sum() + (row * row).sum()
        gs = m.autograd.grad(loss, [s, w], allow_unused=True)
        out.append([None if g is None else np.round(np.array(g.tolist()), 5).tolist()
                    for g in gs])
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("write", list(WRITES))
def test_write_requiring_grad_into_plain_tensor_vs_torch(write, dtype):
    assert _run(R, write, dtype) == _run(torch, write, dtype)


def test_index_put_needs_matching_dtypes_as_torch():
    """x[int index] = tensor (index_put_) refuses another dtype; x[mask] = 0-d casts."""
    for m in (R, torch):
        x = m.zeros(3, dtype=m.float32)
        with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                           "dtypes match, got Float for the destination and Double"):
            x[m.tensor([0, 1])] = m.tensor(1.0, dtype=m.float64)
        with pytest.raises(RuntimeError, match="dtypes match"):
            x[m.tensor([True, False, True])] = m.tensor([1.0, 2.0], dtype=m.float64)
        x[m.tensor([True, False, True])] = m.tensor(2.0, dtype=m.float64)
        x[m.tensor([1])] = 3.0
        assert x.tolist() == [2.0, 3.0, 2.0]


def test_views_of_an_integer_tensor_that_requires_grad_as_torch():
    """A bool tensor made to require grad by a fill: a view of it taken under no_grad requires
    grad (a leaf), and an in-place write into such a view is refused, as PyTorch."""
    outs = []
    for m in (R, torch):
        b = m.tensor([1.0, 1.0]).ge(0)
        b[0:1] = m.tensor(-0.0, dtype=m.float64, requires_grad=True).sum()
        with m.no_grad():
            piece = b.unbind(-1)[1]
            narrow = b.narrow(0, 0, 1)
        try:
            narrow[0:1] = m.tensor(1.0, requires_grad=True)
            refused = None
        except RuntimeError as e:
            refused = str(e)[:40]
        outs.append((_flags(b), _flags(piece), refused))
    assert outs[0] == outs[1]


# views taken before their base came to require grad: PyTorch counts them as leaves when
# checking a recorded in-place change of them (a fresh view of one, or a no_grad change, is
# fine)
ADOPTED = {
    "base_add_then_view_mul": lambda m, b, v, s: (b.add_(s), v.mul_(2)),
    "view_of_view": lambda m, b, v, s: (b.__setitem__(0, s), v[0:1].mul_(2)),
    "sibling_copy_then_mul": lambda m, b, v, s: (b[0].copy_(s), v.mul_(2)),
    "first_written_itself": lambda m, b, v, s: (v.copy_(s), v.mul_(2)),
    "setitem_into_it": lambda m, b, v, s: (b.__setitem__(0, s), v.__setitem__(0, 3.0)),
    "under_no_grad": lambda m, b, v, s: (b.__setitem__(0, s), _no_grad_mul(m, v)),
    # reading grad_fn or is_leaf re-derives the view in PyTorch: then the change is fine
    "grad_fn_read_between": lambda m, b, v, s: (b.add_(s), v.grad_fn, v.mul_(2)),
    "is_leaf_read_between": lambda m, b, v, s: (b[0].copy_(s), v.is_leaf, v.mul_(2)),
    "requires_grad_read_between": lambda m, b, v, s: (b.add_(s), v.requires_grad, v.mul_(2)),
    # a view made to require grad itself (a leaf), then its base changed (seed 8108908)
    "view_requires_grad_then_base_changed": lambda m, b, v, s: (
        v.requires_grad_(), b[0].mul_(s), v.cos_()),
}


def _no_grad_mul(m, v):
    with m.no_grad():
        v.mul_(2)


@pytest.mark.parametrize("case", list(ADOPTED))
def test_inplace_on_a_view_taken_before_its_base_required_grad_vs_torch(case):
    outs = []
    for m in (R, torch):
        b = m.zeros(2, 2, dtype=m.float64)
        v = b[1]
        s = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        try:
            ADOPTED[case](m, b, v, s)
        except RuntimeError as e:
            outs.append(str(e).split(" (")[0].rstrip("."))
            continue
        (b * m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64)).sum().backward()
        outs.append((b.tolist(), _flags(b), _flags(v), s.grad.tolist()))
    assert outs[0] == outs[1]


# a view taken before requires_grad_() on its base: a leaf whose gradient goes nowhere, unless
# the memory changed in place in between (then PyTorch re-derives it: AsStridedBackward0)
BEFORE_REQUIRES_GRAD = {
    "unchanged": lambda m, b, v: None,
    "base_changed": lambda m, b, v: b.mul_(2),
    "view_changed": lambda m, b, v: v.add_(1),
    "other_view_changed": lambda m, b, v: b[0].fill_(5),
    "setitem": lambda m, b, v: b.__setitem__(2, 7.0),
}


@pytest.mark.parametrize("case", list(BEFORE_REQUIRES_GRAD))
def test_view_taken_before_requires_grad_vs_torch(case):
    outs = []
    for m in (R, torch):
        b = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)
        v = b[1:3]
        vv = v[1:]
        BEFORE_REQUIRES_GRAD[case](m, b, v)
        b.requires_grad_()
        flags = (_flags(v), _flags(vv))
        loss = (v * m.tensor([1.0, 5.0], dtype=m.float64)).sum() + (vv * 3).sum() + b.sum()
        loss.backward()
        outs.append((flags, b.grad.tolist(), v.tolist()))
    assert outs[0] == outs[1]
