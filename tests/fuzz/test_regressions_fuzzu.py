"""Fuzzer findings fixed by fuzzU (issue 7: nan against a number at degenerate derivative
points, stop 20's run): each program must run alike in retrograd and PyTorch (values,
dtypes, shapes, grad_fn names, gradients, exceptions)."""

import warnings

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402,F401

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # logcumsumexp's backward sends nothing from a nan (or inf) incoming gradient element as
    # PyTorch's log-space formula does (log|g| where g > 0, where g < 0: nan is neither);
    # retrograd's first-order shortcut g * exp(c - out) spread the nan (seed 15035652: the
    # nan is std's of one element)
    "logcumsumexp_nan_grad": """
v0 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
v1 = (v0).clamp_max(v0)
v2 = v1.logcumsumexp(0)
v3 = v2.std(dim=0)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
loss.backward(retain_graph=True)
""",
    "logcumsumexp_nan_inf_grad_positions": """
v0 = T.tensor([[-1.0, 0.5, 2.0], [0.0, 1.0, -3.0]], dtype=T.float32, requires_grad=True)
v1 = v0.logcumsumexp(1)
v2 = T.tensor([[float("nan"), 1.0, -2.0], [1.0, float("inf"), 0.5]], dtype=T.float32)
loss = (v1 * v2).sum()
loss.backward()
""",
    # the same under create_graph: sinc's second derivative at 0 is nan in both libraries
    # and flows into logcumsumexp's (seed 15035885)
    "sinc_logcumsumexp_create_graph": """
v2 = T.tensor([-0.0, 0.0, 1.0], dtype=T.float64, requires_grad=True)
v7 = v2.sinc()
v8 = v7.logcumsumexp(0)
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # an in-place op on a view saves its result on the view's new grad_fn (AsStridedBackward0
    # of the base's CopySlices), as PyTorch's SavedVariable (is_inplace_on_view): a second
    # backward through that saved result passes the base's node, so the base's retained
    # .grad gets it (seed 15072673: tan_ of a view of a cosh result)
    "inplace_on_view_saved_result_retained_grad": """
v1 = T.tensor([[[1.0, 1.0], [1.0, 1.0], [-0.0, 0.0]]], dtype=T.float64, requires_grad=True)
v3 = v1.cosh()
v3.retain_grad()
v6 = v3[0:1, -2, 1:2]
v6.tan_()
loss = (v6 * v6.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    "inplace_on_view_saved_result_hook": """
LOG = []
v1 = T.tensor([1.0, 0.5, -0.25], dtype=T.float64, requires_grad=True)
v3 = v1.sinh()
v3.retain_grad()
v6 = v3[1:]
v6.sigmoid_()
v3.register_hook(lambda g: LOG.append(('v3', g.detach().clone())))
loss = (v6 * v6).sum() + v3.sum()
gs = T.autograd.grad(loss, [v1], create_graph=True)
loss2 = (gs[0] * gs[0]).sum()
loss2.backward()
""",
    # reciprocal's and rsqrt's derivatives grouped as PyTorch's, -grad * (out * out) and
    # -0.5 * grad * out.pow(3): for a tiny x the product of outs overflows, so a zero
    # gradient gives 0 * inf = nan (a left-to-right product gave -0), first and second order
    "reciprocal_rsqrt_tiny_zero_grad": """
v0 = T.tensor([1e-300, 2.0, 1e-160], dtype=T.float64, requires_grad=True)
v1 = v0.reciprocal()
v2 = v0.rsqrt()
v3 = T.tensor([0.0, 1.0, 0.0], dtype=T.float64)
loss = (v1 * v3).sum() + (v2 * v3).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * T.tensor([0.0, 1.0, 1.0], dtype=T.float64)).sum() for g in gs)
loss2.backward()
""",
    # the inf-norm's derivative counts a nan among the largest magnitudes, then multiplies
    # by sgn(nan) = 0, as PyTorch's norm_backward: a slice holding a nan sends 0 to every
    # element, not 0 / 0 (found by the degenerate-point sweep)
    "norm_inf_nan_slice": """
v0 = T.tensor([[0.5, -2.0], [float("nan"), 1.0], [1e-160, 0.0]], requires_grad=True)
v1 = v0.norm(p=float("inf"), dim=0)
v2 = T.linalg.vector_norm(v0, ord=float("-inf"), dim=0)
loss = (v1 * T.tensor([1.0, 2.0])).sum() + (v2 * 0.5).sum()
loss.backward()
""",
    # gelu's first derivative is its own record (GeluBackwardBackward0) whose derivative
    # is PyTorch's closed-form gelu_double_backward: an infinite gradient times gelu''(x)
    # is +-inf, where differentiating gelu' piece by piece gave inf - inf = nan
    "gelu_double_backward_inf_grad": """
v0 = T.tensor([0.0, -1.0, 2.0, 30.0], dtype=T.float64, requires_grad=True)
v1 = T.nn.functional.gelu(v0)
v2 = T.nn.functional.gelu(v0, approximate='tanh')
v3 = T.tensor([float("inf"), 1.0, float("-inf"), 2.0], dtype=T.float64)
gs = T.autograd.grad((v1 * v3).sum() + (v2 * v3).sum(), [v0], create_graph=True)
loss2 = sum((g * 0.75).sum() for g in gs)
loss2.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzu(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


# var/std over everything without degrees of freedom (n <= correction): PyTorch's
# var_backward multiplies the 0-d gradient by where(x == mean, nan, inf), a tensor of the
# default dtype (float32) shaped like x, so a float64 x with a dimension gets its gradient
# computed in float32 (1e-50 * inf is 0 * inf = nan there) and cast back: ToCopyBackward0
# under create_graph.  Checked against PyTorch, first and second order.
NO_DOF = [(f, data, kw, gv) for f in ("var", "std")
          for data in (2.0, [2.0], [[2.0]], [1.0, 2.0])
          for kw in ({}, {"keepdim": True}, {"dim": None}, {"correction": 2})
          for gv in (1.0, 1e-50)]


def _no_dof_run(lib, f, data, kw, gv, dtype):
    x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
    with warnings.catch_warnings():  # (degrees of freedom <= 0: both warn)
        warnings.simplefilter("ignore")
        y = getattr(x, f)(**kw)
    g0 = lib.full(tuple(y.shape), gv, dtype=x.dtype, requires_grad=True)
    (g,) = lib.autograd.grad(y, x, g0, create_graph=True)
    (g * lib.ones_like(g)).sum().backward()
    return (str(g.dtype).rsplit(".", 1)[-1], g.detach().tolist(), g.grad_fn.name(),
            g0.grad.tolist())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_var_std_without_dof_gradient_dtype(dtype):
    import math

    def same(a, b):
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(same(u, v) for u, v in zip(a, b))
        if isinstance(a, float):
            return a == b or (math.isnan(a) and math.isnan(b))
        return a == b

    for case in NO_DOF:
        t, r = _no_dof_run(torch, *case, dtype), _no_dof_run(retrograd, *case, dtype)
        assert same(t, r), (case, t, r)


def _retained_run(lib, first_cg, second_cg):
    def info(t):
        if t is None:
            return None
        name = t.grad_fn.name().replace("torch::autograd::", "") if t.grad_fn else None
        return (t.tolist(), name, t.requires_grad)

    v1 = lib.tensor([1.0, 0.5], dtype=lib.float64, requires_grad=True)
    v3 = v1.sinh()
    v3.retain_grad()
    loss = (v3 * v3).sum()
    lib.autograd.grad(loss, [v1], create_graph=first_cg, retain_graph=True)
    first, held = info(v3.grad), v3.grad
    loss.backward(create_graph=second_cg)
    return first, info(v3.grad), info(held), info(v1.grad)


@pytest.mark.parametrize("first_cg", [True, False])
@pytest.mark.parametrize("second_cg", [True, False])
def test_retained_grad_clone_and_out_of_place_sum(first_cg, second_cg):
    # PyTorch's retain_grad hook: the first gradient is cloned (CloneBackward0 under
    # create_graph), later ones are added out of place (a .grad taken before keeps its value;
    # the sum records nothing in a first-order pass), unlike a leaf's AccumulateGrad, which
    # adds in place there (found while fixing seed 15072673)
    assert _retained_run(retrograd, first_cg, second_cg) == \
        _retained_run(torch, first_cg, second_cg)
