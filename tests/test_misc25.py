"""misc25 (stop 25): small PyTorch 2.13 semantics gaps, checked against PyTorch: CopySlices
when the in-place op's gradient for the view is undefined."""

from __future__ import annotations

import numpy as np
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



def _dirty_multi(m, ret, non_diff=False):
    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, v, *rest):
            v.mul_(2)
            ctx.mark_dirty(v)
            out = ret(v)
            if non_diff:
                ctx.mark_non_differentiable(out[1])
            return out

        @staticmethod
        def backward(ctx, *gs):
            return gs[0]

    return Dirty


MULTI_OUT_DIRTY = {
    # (returns, base requires grad, extra input requiring grad, under no_grad, non_diff)
    "two_tensors": (lambda v: (v, v * 3), True, False, False, False),
    "tensor_and_int": (lambda v: (v, 3), True, False, False, False),
    "tensor_and_none": (lambda v: (v, None), True, False, False, False),
    "dirty_second": (lambda v: (v * 3, v), True, False, False, False),
    "one_in_tuple": (lambda v: (v,), True, False, False, False),
    "second_non_diff": (lambda v: (v, v * 3), True, False, False, True),
    "nothing_requires_grad": (lambda v: (v, v * 3), False, False, False, False),
    "view_of_plain_base": (lambda v: (v, v * 3), False, True, False, False),
    "under_no_grad": (lambda v: (v, v * 3), True, False, True, False),
}


def _multi_out_dirty_run(m, case):
    ret, base_grad, extra, no_grad, non_diff = MULTI_OUT_DIRTY[case]
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=base_grad)
    b = x.clone()
    v = b[:2]
    args = (v, m.ones(1, requires_grad=True)) if extra else (v,)
    fn = _dirty_multi(m, ret, non_diff)
    try:
        if no_grad:
            with m.no_grad():
                out = fn.apply(*args)
        else:
            out = fn.apply(*args)
    except RuntimeError as e:
        return ("RuntimeError", str(e).split(".")[0], v._version, b.tolist(),
                v.grad_fn.name() if v.grad_fn is not None else None)
    return tuple(type(o.grad_fn).__name__ if hasattr(o, "grad_fn") else o for o in out)


@pytest.mark.parametrize("case", sorted(MULTI_OUT_DIRTY))
def test_function_changing_a_view_returns_one_value(case):
    # PyTorch refuses a recorded custom Function that changes a view in place (mark_dirty)
    # and returns more than one value (tensor or not): CopySlices wraps one-output nodes
    ours, theirs = _multi_out_dirty_run(retrograd, case), _multi_out_dirty_run(torch, case)
    if ours and ours[0] != "RuntimeError":  # (a custom Function's node: named by its class)
        ours = tuple(n.replace("Backward", "") for n in ours)
        theirs = tuple(n.replace("Backward", "") for n in theirs)
    assert ours == theirs


def _dirty_unrecorded(m, make, no_grad):
    import contextlib

    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            v.mul_(2)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            return g

    v = make(m)
    with m.no_grad() if no_grad else contextlib.nullcontext():
        o = Dirty.apply(v)
    return (o is v, o.requires_grad, o.grad_fn is None, o.is_leaf, o._version == v._version,
            o.tolist(), v.requires_grad)


UNRECORDED_DIRTY = {
    "plain": (lambda m: m.tensor([1.0, 2.0]), False),
    "plain_no_grad": (lambda m: m.tensor([1.0, 2.0]), True),
    "view_of_plain": (lambda m: m.tensor([1.0, 2.0, 3.0])[:2], False),
    "nonleaf_no_grad": (lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 1, True),
    "view_no_grad": (lambda m: (m.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1)[:2], True),
    "leaf_no_grad": (lambda m: m.tensor([1.0, 2.0], requires_grad=True), True),
}


@pytest.mark.parametrize("case", sorted(UNRECORDED_DIRTY))
def test_function_dirty_input_unrecorded(case):
    # not recorded, a changed input that requires grad comes back as a new alias (sharing
    # data and version, not requiring grad, a leaf); one that does not, as itself
    make, no_grad = UNRECORDED_DIRTY[case]
    assert _dirty_unrecorded(retrograd, make, no_grad) == _dirty_unrecorded(torch, make, no_grad)

# ----------------------------------------------------- sort / argsort: the stable= overload


def _sort_outcome(m, call):
    x = m.tensor([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]], requires_grad=True)
    try:
        r = call(m, x)
    except TypeError:
        return "TypeError"
    if isinstance(r, tuple):
        return (type(r).__name__, r.values.tolist(), r.indices.tolist(),
                r.values.grad_fn.name())
    return ("Tensor", r.tolist(), r.requires_grad)


SORT_CALLS = {
    # PyTorch has sort(input, dim=-1, descending=False) and sort(input, *, stable, dim=-1,
    # descending=False): with stable=, dim and descending are keywords only
    "pos_dim_stable": lambda m, x: m.sort(x, 0, stable=True),
    "pos_dim_desc_stable": lambda m, x: m.sort(x, 0, True, stable=True),
    "pos_desc_stable": lambda m, x: m.sort(x, 0, descending=True, stable=True),
    "method_pos_dim_stable": lambda m, x: x.sort(0, stable=True),
    "method_pos_dim_stable_false": lambda m, x: x.sort(0, stable=False),
    "method_three_pos": lambda m, x: x.sort(0, True, True),
    "kw_stable": lambda m, x: m.sort(x, stable=True),
    "kw_dim_stable": lambda m, x: m.sort(x, stable=True, dim=0),
    "kw_all": lambda m, x: m.sort(x, dim=0, descending=True, stable=True),
    "stable_none": lambda m, x: x.sort(stable=None),
    "stable_false": lambda m, x: m.sort(x, stable=False),
    "stable_int": lambda m, x: m.sort(x, stable=1),
    "stable_str": lambda m, x: m.sort(x, stable="yes"),
    "no_stable": lambda m, x: m.sort(x),
    "pos_dim_desc": lambda m, x: m.sort(x, 0, True),
    "pos_desc_int": lambda m, x: m.sort(x, 0, 1),
    "desc_none": lambda m, x: m.sort(x, descending=None),
    "dim_bool": lambda m, x: m.sort(x, True),
    "dim_none_stable": lambda m, x: m.sort(x, stable=True, dim=None),
    "input_kw": lambda m, x: m.sort(input=x, stable=True),
    "unknown_kw": lambda m, x: m.sort(x, stable=True, foo=1),
    "argsort_pos_dim_stable": lambda m, x: m.argsort(x, 0, stable=True),
    "argsort_method_pos_stable": lambda m, x: x.argsort(0, True, stable=True),
    "argsort_stable_none": lambda m, x: m.argsort(x, stable=None),
    "argsort_kw": lambda m, x: m.argsort(x, stable=True, dim=0, descending=True),
    "argsort_pos": lambda m, x: m.argsort(x, 0, True),
}


@pytest.mark.parametrize("name", sorted(SORT_CALLS))
def test_sort_stable_overload(name):
    call = SORT_CALLS[name]
    assert _sort_outcome(retrograd, call) == _sort_outcome(torch, call)


def _stable_out_and_backward(m):
    x = m.tensor([[3.0, 1.0, 2.0], [1.0, 1.0, 0.0]], dtype=m.float64)
    v, i = m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int64)
    m.sort(x, stable=True, dim=0, out=(v, i))
    x.requires_grad_(True)
    w = m.sort(x, stable=True, dim=0, descending=True).values
    (g,) = m.autograd.grad(w, x, m.arange(6.0, dtype=m.float64).reshape(2, 3))
    return v.tolist(), i.tolist(), g.tolist(), w.grad_fn.name()


def test_sort_stable_out_and_backward():
    # the stable overload takes out= too, and records SortBackward1 (sort's derivative)
    assert _stable_out_and_backward(retrograd) == _stable_out_and_backward(torch)


def test_sort_stable_vmap_dim_default():
    # sort(x, stable=True) under vmap: the omitted dim is the sample's last, by the batching
    # rule (no per-sample fallback, which warns)
    import warnings

    x = torch.tensor([[3.0, 1.0, 2.0], [0.0, 2.0, 1.0]])
    want = torch.func.vmap(lambda a: torch.sort(a, stable=True).values)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = retrograd.func.vmap(lambda a: retrograd.sort(a, stable=True).values)(
            retrograd.tensor(x.tolist()))
    assert got.tolist() == want.tolist()


# ------------------------------------------------------------------ Tensor.view(dtype)


def _view_dtype_outcome(m, make, dtype_name):
    try:
        x = make(m)
        r = x.view(getattr(m, dtype_name))
    except (RuntimeError, TypeError) as e:
        # PyTorch's message up to its end (retrograd adds what to do after a ';')
        return type(e).__name__, str(e).split(";")[0]
    return (str(r.dtype).rsplit(".", 1)[-1], tuple(r.shape), r.stride(), r.storage_offset(),
            r.tolist(), r.requires_grad, r.grad_fn is None, r.is_leaf)


def _leaf(m):
    return m.tensor([[1.0, -2.0], [3.5, 0.0]], requires_grad=True)


VIEW_SOURCES = {
    "leaf": _leaf,
    "nonleaf": lambda m: _leaf(m) * 2,
    "transposed": lambda m: m.tensor([[1.0, -2.0], [3.5, 0.0]]).t(),
    "0d": lambda m: m.tensor(1.5),
    "odd_last": lambda m: m.tensor([1.0, 2.0, 3.0]),
    "offset_odd": lambda m: m.arange(8.0)[1:3],
    "offset_even": lambda m: m.arange(8.0)[2:6],
    "stride_odd": lambda m: m.arange(40.0).as_strided((3, 2), (3, 1)),
    "stride_last2": lambda m: m.arange(40.0).as_strided((2, 2), (4, 2)),
    "expanded_rows": lambda m: m.ones(2).expand(3, 2),
    "expanded_last": lambda m: m.ones(3, 1).expand(3, 2),
    "empty_rows": lambda m: m.ones(0, 4),
    "empty_last": lambda m: m.ones(2, 0),
    "bytes": lambda m: m.arange(8, dtype=m.uint8).reshape(2, 4),
    "bools": lambda m: m.tensor([True, False]),
    "long": lambda m: m.tensor([1, 2]),
}
VIEW_DTYPES = ["float32", "int32", "float16", "int16", "uint8", "int8", "bool", "float64",
               "int64"]


@pytest.mark.parametrize("dtype_name", VIEW_DTYPES)
@pytest.mark.parametrize("source", sorted(VIEW_SOURCES))
def test_view_dtype(source, dtype_name):
    # same element size: a reinterpretation of any layout; another size: the last dim
    # rescaled, with PyTorch's checks in its order; never differentiable (a leaf that does
    # not require grad, even for the same dtype of a tensor that requires grad)
    make = VIEW_SOURCES[source]
    assert _view_dtype_outcome(retrograd, make, dtype_name) == \
        _view_dtype_outcome(torch, make, dtype_name)


def _view_dtype_sharing(m):
    out = []
    x = m.tensor([1.0, -2.0], requires_grad=True)
    y = x.view(m.float32)
    y.mul_(2)  # (not a view that autograd knows: no leaf error, x's data changes)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    y.mul_(w)
    out.append((x._version, y._version, x.tolist(), y.requires_grad, y.grad_fn.name(),
                x.grad_fn is None))
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.view(m.int32).add_(1)  # the shared version counter: backward sees the change
    try:
        b.sum().backward()
        out.append("no error")
    except RuntimeError as e:
        out.append(("RuntimeError", "modified by an inplace operation" in str(e)))
    with m.no_grad():
        z = x.view(m.float32)
    out.append((z.requires_grad, z.is_leaf))
    p = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    q = p * 1
    s = q[1:3].view(m.int32)
    s.zero_()
    out.append((q.tolist(), q.grad_fn.name(), q._version))
    out.append((x.view(dtype=m.int32).tolist(), x.view(size=(2, 1)).shape == (2, 1)))
    for bad in (lambda: x.view("float32"), lambda: x.view(m.int32, 2),
                lambda: x.view(None), lambda: x.view(np.float32)):
        with pytest.raises(TypeError):
            bad()
    return out


def test_view_dtype_shares_memory_and_version():
    assert _view_dtype_sharing(retrograd) == _view_dtype_sharing(torch)


@pytest.mark.parametrize("case", ["int32", "float16", "float64", "0d_float16", "0d_int32",
                                  "odd_float64"])
def test_view_dtype_vmap(case):
    import warnings

    def run(m, vmap):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        name = case.split("_")[-1]
        fn = {"0d": lambda a: a[0], "odd": lambda a: a[:1]}.get(case.split("_")[0],
                                                                lambda a: a)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # (the batching rule, not a per-sample loop)
                r = vmap(lambda a: fn(a).view(getattr(m, name)))(x)
        except RuntimeError as e:
            return str(e).split(";")[0]
        return str(r.dtype).rsplit(".", 1)[-1], tuple(r.shape), r.tolist()

    assert run(retrograd, retrograd.func.vmap) == run(torch, torch.func.vmap)


# ------------------------------------------- errors of the ops that return (values, indices)

TUPLE_OUT_BAD_INT = {
    "topk": lambda m, x: m.topk(x, 1.0),
    "kthvalue": lambda m, x: m.kthvalue(x, 1.0),
    "cummax": lambda m, x: m.cummax(x, 1.0),
    "mode": lambda m, x: m.mode(x, 1.5),
    "median": lambda m, x: m.median(x, 0.5),
    "aminmax": lambda m, x: m.aminmax(x, dim=0.5),
}


@pytest.mark.parametrize("name", sorted(TUPLE_OUT_BAD_INT))
def test_tuple_out_errors_name_the_op(name):
    # the out= wrapper of these ops is not the op: the TypeError names the op, as PyTorch's
    call = TUPLE_OUT_BAD_INT[name]
    for m in (torch, retrograd):
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument"):
            call(m, m.ones(3))


# ------------------------------------- forward AD inside a custom Function's forward and jvp


def _fw_inside_function(m):
    fa = m.autograd.forward_ad
    seen = []

    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            v.mul_(2)  # (not propagated: the tangent is jvp's alone)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)
            return t

    class Peek(m.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            ctx.v = v
            seen.append(fa.unpack_dual(v).tangent is None)
            return v * 2

        @staticmethod
        def jvp(ctx, t):
            seen.append(fa.unpack_dual(ctx.v).tangent is None)
            return t * 2

    with fa.dual_level():
        p = fa.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0]))
        o = Dirty.apply(p)
        dirty = (o is p, fa.unpack_dual(o).tangent.tolist(), fa.unpack_dual(p).tangent.tolist())
        q = Peek.apply(fa.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0])))
        peek = fa.unpack_dual(q).tangent.tolist()
    return dirty, peek, seen


def test_forward_ad_is_off_inside_function_forward_and_jvp():
    # PyTorch's forward grad mode is off in forward and jvp: no tangent is seen there, and
    # an in-place op in forward does not change the tangent that jvp then changes again
    assert _fw_inside_function(retrograd) == _fw_inside_function(torch)
