"""The in-place forms: one for every registered op that PyTorch has one for, and their
rules (version counting, leaves, views, dtypes, shapes) as PyTorch's.

Values and gradients of each form are in ``INPLACE_CASES`` (tests/ops/test_inplace.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.ops import registry

# Ops retrograd has whose in-place form PyTorch has but retrograd lacks, and why.  Keep it
# short: each entry is a gap.
MISSING_ON_PURPOSE: set = set()


def _torch_inplace_names(torch):
    """(registry key, in-place name) for every method of a registered op whose ``name_``
    PyTorch's Tensor has."""
    out = []
    for e in registry.entries():
        if e.inplace_of is not None:
            continue
        for name in e.methods:
            if not name.startswith("_") and hasattr(torch.Tensor, name + "_"):
                out.append((e.key, name + "_"))
            if name.startswith("__") and not name.startswith(("__r", "__i")):
                dunder = "__i" + name[2:]
                if hasattr(torch.Tensor, dunder) and name not in ("__eq__", "__ne__", "__lt__",
                                                                   "__le__", "__gt__",
                                                                   "__ge__", "__invert__"):
                    out.append((e.key, dunder))
    return out


def test_every_inplace_form_torch_has_exists(torch):
    """Fails when PyTorch's Tensor has ``op_`` (or the operator ``__iop__``) for a
    registered op and retrograd has not: add the form, or a reason above."""
    names = _torch_inplace_names(torch)
    assert len(names) > 60, names  # the enumeration itself works
    missing = sorted({n for _, n in names if not hasattr(retrograd.Tensor, n)}
                     - MISSING_ON_PURPOSE)
    assert not missing, f"in-place forms PyTorch has and retrograd lacks: {missing}"
    stale = sorted(n for n in MISSING_ON_PURPOSE if hasattr(retrograd.Tensor, n))
    assert not stale, f"now there: remove from MISSING_ON_PURPOSE: {stale}"


def _forms():
    return sorted({n for _, n in _torch_inplace_names(pytest.importorskip("torch"))
                   if hasattr(retrograd.Tensor, n)})


# each form called on a float64 (3, 4) tensor, with arguments that keep every op defined
ARGS = {
    "add_": (1.0,), "sub_": (1.0,), "mul_": (2.0,), "div_": (2.0,), "pow_": (2,),
    "clamp_": (-0.5, 0.5), "clip_": (-0.5, 0.5), "clamp_min_": (0.0,), "clamp_max_": (0.0,),
    "remainder_": (1.5,), "lerp_": (None, 0.5), "addcmul_": (None, None),
    "addcdiv_": (None, None),
    "masked_fill_": (None, 0.0), "atan2_": (None,), "hypot_": (None,), "xlogy_": (None,),
    "eq_": (0.0,), "ne_": (0.0,), "lt_": (0.0,), "le_": (0.0,), "gt_": (0.0,), "ge_": (0.0,),
    "cumsum_": (0,), "addmm_": (None, None), "fill_": (1.0,), "copy_": (None,),
    "__ipow__": (2,), "__imod__": (1.5,), "__ifloordiv__": (2.0,), "__iadd__": (1.0,),
    "__isub__": (1.0,), "__imul__": (2.0,), "__itruediv__": (2.0,),
    "transpose_": (0, 1), "swapaxes_": (1, 0), "swapdims_": (-1, 0), "unsqueeze_": (1,),
    "renorm_": (2, 0, 1.0), "as_strided_": ((2, 2), (1, 2)),
}
# the indexing forms, whose arguments depend on the tensor's shape: (m, x) -> arguments
_i64 = lambda m, values: m.tensor(values, dtype=m.int64)  # noqa: E731
_rows = lambda m, x, n: m.ones(n, x.shape[1], dtype=x.dtype)  # noqa: E731
INDEXING_ARGS = {
    "index_add_": lambda m, x: (0, _i64(m, [0, 1]), _rows(m, x, 2)),
    "index_copy_": lambda m, x: (0, _i64(m, [1, 0]), _rows(m, x, 2)),
    "index_fill_": lambda m, x: (1, _i64(m, [0, 2]), -1.0),
    "index_put_": lambda m, x: ((_i64(m, [0, 1]),), m.tensor(2.0, dtype=x.dtype)),
    "index_reduce_": lambda m, x: (0, _i64(m, [0, 1]), _rows(m, x, 2), "prod"),
    "masked_scatter_": lambda m, x: (m.ones(x.shape, dtype=m.bool), m.ones(x.shape, dtype=x.dtype)),
    "put_": lambda m, x: (_i64(m, [0, 2]), m.tensor([5.0, 6.0], dtype=x.dtype)),
    "scatter_": lambda m, x: (0, m.zeros(1, x.shape[1], dtype=m.int64), _rows(m, x, 1)),
    "scatter_add_": lambda m, x: (0, m.zeros(1, x.shape[1], dtype=m.int64), _rows(m, x, 1)),
    "scatter_reduce_": lambda m, x: (0, m.zeros(1, x.shape[1], dtype=m.int64), _rows(m, x, 1),
                                     "amax"),
}
_INTEGER_ONLY = {"bitwise_not_", "bitwise_xor_", "__iand__", "__ior__", "__ixor__",
                 "__ilshift__", "__irshift__", "bitwise_and_", "bitwise_or_",
                 "bitwise_left_shift_", "bitwise_right_shift_", "gcd_", "lcm_"}  # issue 6


_TRIED = [(), (None,), (1.5,), (None, None), (None, 0.5), (0,), (1,), (1, 2)]


def _args_for(name):
    """ARGS's entry, else the first of _TRIED that PyTorch accepts (forms added later)."""
    if name in ARGS:
        return ARGS[name]
    torch = pytest.importorskip("torch")
    for args in _TRIED:
        x = torch.full((3, 3), 0.5, dtype=torch.float64)
        try:
            getattr(x, name)(*[torch.ones_like(x) if a is None else a for a in args])
            return args
        except (TypeError, RuntimeError, IndexError, NotImplementedError):
            continue
    return None


def _call(m, x, name):
    if name in INDEXING_ARGS:
        return getattr(x, name)(*INDEXING_ARGS[name](m, x))
    args = _args_for(name)
    if args is None:
        pytest.fail(f"{name}: takes arguments this generic test does not make; add them to ARGS")
    filled = []
    for a in args:
        if a is None:  # a tensor argument
            filled.append(m.ones(x.shape[-1], x.shape[-1], dtype=x.dtype)
                          if name == "addmm_" else
                          m.ones(x.shape, dtype=m.bool) if name == "masked_fill_" else
                          m.ones(x.shape, dtype=x.dtype))
        else:
            filled.append(a)
    if name == "addmm_":
        filled[0] = m.ones(x.shape[0], x.shape[-1], dtype=x.dtype)
    return getattr(x, name)(*filled)


# forms whose tensor is not 2-D (the generic test's): tested at the end of this file
_OTHER_RANKS = {"addmv_": (3,), "baddbmm_": (2, 3, 3)}


@pytest.mark.parametrize("name", [n for n in _forms()
                                  if n not in _INTEGER_ONLY and n not in _OTHER_RANKS])
def test_inplace_form_rules_like_torch(name, torch):
    """Each form: same object back, the version one further (shared by views), on a leaf
    that requires grad a RuntimeError, under no_grad allowed; on a view the base's grad_fn
    becomes CopySlices; the same things as PyTorch."""
    res = []
    rng = np.random.default_rng(0)
    data = rng.uniform(0.2, 0.9, (3, 3))
    for m in (retrograd, torch):
        rec = []
        leaf = m.tensor(data, requires_grad=True)
        try:
            _call(m, leaf, name)
            rec.append("no error on a leaf")
        except RuntimeError as e:
            rec.append("leaf Variable that requires grad" in str(e))
        with m.no_grad():
            out = _call(m, leaf, name)
        rec += [out is leaf, leaf._version, leaf.grad_fn is None]
        y = m.tensor(data, requires_grad=True) * 1
        view = y[1:]
        v = y._version
        _call(m, view, name)
        fn = y.grad_fn
        rec += [y._version - v, view._version == y._version,
                None if fn is None else fn.name().replace("torch::autograd::", "")]
        res.append(rec)
    assert res[0] == res[1]


@pytest.mark.parametrize("name", sorted(_INTEGER_ONLY))
def test_integer_inplace_forms_like_torch(name, torch):
    """The integer-only forms: values, dtype kept, one version further; on a float tensor
    PyTorch's NotImplementedError; a bool tensor given an int: PyTorch's cast error."""
    res = []
    for m in (retrograd, torch):
        x = m.tensor([5, 6, 7, -8], dtype=m.int32)
        alias = x[1:]
        args = () if name == "bitwise_not_" else (m.tensor([1, 2, 3, 1]),)
        out = getattr(x, name)(*args)
        rec = [out is x, x.tolist(), alias.tolist(), x._version, alias._version, str(x.dtype)[-5:]]
        with pytest.raises(Exception) as info:
            getattr(m.tensor([1.5, 2.5]), name)(*args[:1] and (m.tensor([1.0, 2.0]),))
        rec.append(info.type.__name__)
        if name != "bitwise_not_" and "shift" not in name:
            with pytest.raises(RuntimeError, match="result type Long can't be cast to the "
                                                   "desired output type Bool"):
                getattr(m.tensor([True, False]), name)(m.tensor([1, 1]))
        res.append(rec)
    assert res[0] == res[1]


DTYPE_AND_SHAPE_ERRORS = [
    ("tan_ of an int tensor", lambda m: m.tensor([1, 2]).tan_()),
    ("atan2_ of an int tensor", lambda m: m.tensor([1, 2]).atan2_(m.tensor([1, 1]))),
    ("erf_ of a bool tensor", lambda m: m.tensor([True]).erf_()),
    ("xlogy_ of an int tensor", lambda m: m.tensor([1, 2]).xlogy_(m.tensor([1.0, 2.0]))),
    ("**= 0.5 of an int tensor", lambda m: m.tensor([1, 2]).__ipow__(0.5)),
    ("atan2_ broadcasting self", lambda m: m.zeros(3, 4).atan2_(m.ones(2, 3, 4))),
    ("eq_ broadcasting self", lambda m: m.zeros(3, 4).eq_(m.ones(2, 3, 4))),
    ("hypot_ broadcasting self", lambda m: m.zeros(1, 4).hypot_(m.ones(3, 4))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in DTYPE_AND_SHAPE_ERRORS])
def test_inplace_dtype_and_shape_errors_like_torch(fn, torch):
    caught = []
    for m in (retrograd, torch):
        with pytest.raises(RuntimeError) as info:
            fn(m)
        caught.append(str(info.value))
    head = caught[1].split(" (")[0].split(" in ")[0]
    assert caught[0].startswith(head), caught


def test_comparison_inplace_values_and_dtypes_like_torch(torch):
    """x.eq_(y) writes 1/0 in x's own dtype (float, int or bool)."""
    for dtype in ("float32", "int64", "bool", "float64"):
        got = []
        for m in (retrograd, torch):
            x = m.tensor([1, 0, 2, 0]).to(getattr(m, dtype))
            rows = [getattr(x.clone(), op)(m.tensor([1, 1, 0, 0]).to(getattr(m, dtype)))
                    for op in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_")]
            got.append([(r.tolist(), str(r.dtype).split(".")[-1]) for r in rows])
        assert got[0] == got[1], dtype


def test_floor_divide_inplace_refuses_backward_like_torch(torch):
    for m in (retrograd, torch):
        y = m.tensor([1.5, -2.5], requires_grad=True) * 1
        y //= 2
        assert y.grad_fn.name().endswith("NotImplemented") and y.tolist() == [0.0, -2.0]
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide_ is not "
                                               "implemented"):
            y.sum().backward()


def test_logical_not_inplace_is_not_recorded_like_torch(torch):
    """PyTorch 2.13 does not record logical_not_: the grad_fn stays, and a leaf that
    requires grad may be changed (its gradient then flows as if nothing happened)."""
    res = []
    for m in (retrograd, torch):
        a = m.tensor([0.0, 2.0], requires_grad=True)
        y = a * 3
        y.logical_not_()
        rec = [y.tolist(), y.grad_fn.name().replace("torch::autograd::", ""), y._version]
        y.sum().backward()
        rec.append(a.grad.tolist())
        a.logical_not_()
        rec += [a.tolist(), a._version, a.requires_grad, a.grad_fn]
        res.append(rec)
    assert res[0] == res[1]


def test_inplace_aliases_are_the_same_op(torch):
    for alias, name in (("arctan_", "atan_"), ("arcsin_", "asin_"), ("arccos_", "acos_"),
                        ("clip_", "clamp_")):
        assert getattr(retrograd.Tensor, alias) is getattr(retrograd.Tensor, name)
        assert hasattr(torch.Tensor, alias)


VIEW_FORMS = [
    ("t_", lambda y: y.t_()),
    ("transpose_", lambda y: y.transpose_(0, -1)),
    ("swapdims_", lambda y: y.swapdims_(1, 0)),
    ("squeeze_", lambda y: y.unsqueeze_(0).squeeze_()),
    ("squeeze_dims", lambda y: y.unsqueeze_(2).squeeze_((2, 0))),
    ("unsqueeze_", lambda y: y.unsqueeze_(-1)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in VIEW_FORMS])
def test_inplace_view_forms_vs_torch(fn, torch):
    """The in-place view ops: the tensor's own shape changes; on a view the base keeps its
    grad_fn; views taken before and in-place changes after give PyTorch's gradients."""
    rng = np.random.default_rng(2)
    data = rng.standard_normal((3, 4))
    res = []
    for m in (retrograd, torch):
        a = m.tensor(data, requires_grad=True)
        y = a * 1
        early = y[1:]
        v = y._version
        assert fn(y) is y
        rec = [tuple(y.shape), y.grad_fn.name().replace("torch::autograd::", ""),
               y._version - v, early._version == y._version, y.is_contiguous()]
        y.mul_(m.tensor(rng.standard_normal(tuple(y.shape))))  # a change after the reshape
        ((y * y).sum() + (early * 2).sum()).backward()
        rec.append(np.round(a.grad.numpy(), 10).tolist())
        z = a * 1
        view = z[1:]
        fn(view)
        rec += [tuple(view.shape), z.grad_fn.name(), view.grad_fn.name().replace(
            "torch::autograd::", "")]
        a.grad = None
        ((view * view).sum() + z.sum()).backward()
        rec.append(np.round(a.grad.numpy(), 10).tolist())
        res.append(rec)
        rng = np.random.default_rng(2)
        rng.standard_normal((3, 4))
    assert res[0] == res[1]


def test_inplace_view_forms_errors_like_torch(torch):
    for call in (lambda m: m.zeros(2, 3, 4).t_(), lambda m: m.zeros(2, 3).transpose_(0, 2),
                 lambda m: m.zeros(2, 3).squeeze_(5), lambda m: m.zeros(2, 3).unsqueeze_(4)):
        caught = []
        for m in (retrograd, torch):
            with pytest.raises((RuntimeError, IndexError)) as info:
                call(m)
            caught.append(info.type)
        assert caught[0] is caught[1]


def test_inplace_view_form_after_a_saved_result_raises_like_torch(torch):
    """exp_ saves its result, the tensor itself; t_ then moves it a version on: backward
    refuses, in both."""
    for m in (retrograd, torch):
        y = m.ones(3, 4, requires_grad=True) * 1
        y.exp_()
        y.t_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


# ---- the matrix-product forms (issue 11): addr_ and addbmm_ on the generic 2-D tensor,
# addmv_ (1-D) and baddbmm_ (3-D) on tensors of their own rank
INDEXING_ARGS["addr_"] = lambda m, x: (m.ones(x.shape[0], dtype=x.dtype),
                                       m.ones(x.shape[1], dtype=x.dtype))
INDEXING_ARGS["addbmm_"] = lambda m, x: (m.ones(2, x.shape[0], 2, dtype=x.dtype),
                                         m.ones(2, 2, x.shape[1], dtype=x.dtype))


def _product_args(m, x, name):
    if name == "addmv_":
        return (m.ones(x.shape[0], 2, dtype=x.dtype), m.ones(2, dtype=x.dtype))
    return (m.ones(x.shape[0], x.shape[1], 2, dtype=x.dtype),
            m.ones(x.shape[0], 2, x.shape[2], dtype=x.dtype))


@pytest.mark.parametrize("name", sorted(_OTHER_RANKS))
def test_product_inplace_forms_of_other_ranks_like_torch(name, torch):
    res = []
    data = np.random.default_rng(0).uniform(0.2, 0.9, _OTHER_RANKS[name])
    for m in (retrograd, torch):
        rec = []
        leaf = m.tensor(data, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(leaf, name)(*_product_args(m, leaf, name))
        with m.no_grad():
            out = getattr(leaf, name)(*_product_args(m, leaf, name))
        rec += [out is leaf, leaf._version, leaf.grad_fn is None, out.tolist()]
        y = m.tensor(data, requires_grad=True) * 1
        view = y[1:]
        getattr(view, name)(*_product_args(m, view, name))
        rec += [view._version == y._version, y.grad_fn.name().replace("torch::autograd::", "")]
        res.append(rec)
    assert res[0] == res[1]
