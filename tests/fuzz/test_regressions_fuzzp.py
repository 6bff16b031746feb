"""Fuzzer findings fixed by fuzzP (issue 7, stop 20: backward / autograd.grad raising where
the other library does not: saved-version checks, derivative flags, engine rules).  Each
program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions); the table below checks the saved-input rule op by op."""

import itertools
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer, torch  # noqa: E402

CASES = {
    # addr/addmv/baddbmm/addbmm save no input (only beta), and each factor only for the
    # other's gradient: an in-place change of an unread one is no error (seeds 12517604,
    # 12543603, 12586129, 12598407)
    "addr_saves_no_input": """
v0 = T.tensor([-2.0], dtype=T.float64, requires_grad=True)
v1 = T.tensor(-1.0, dtype=T.float64)
v2 = T.tensor([0.0], dtype=T.float64)
v3 = T.addr(v1, v2, v0, beta=0.5, alpha=2.0)
v1.abs_().add_(0.5).log1p_()
loss = (v0 * v0.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
loss.backward(retain_graph=True)
""",
    "baddbmm_saves_no_input": """
v0 = T.tensor([[[-0.0, 1.0], [-1.0, -1.0]]], dtype=T.float32, requires_grad=True)
v2 = T.tensor([[[0.0, -1.0], [1.0, -0.0]]], dtype=T.float32, requires_grad=True)
v3 = T.tensor([[[0.0, 1.0], [1.0, -2.0]]], dtype=T.float32)
v4 = T.baddbmm(v2, v0, v3, beta=0.5, alpha=3)
with T.no_grad():
    v2.index_add_(0, T.tensor(0, dtype=T.int64), v3)
loss = (v2 * v2.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v2], create_graph=True, allow_unused=True)
""",
    # bmm and vdot (linalg.vecdot of 1-d) save each operand only for the other's gradient
    # (seeds 12520706, 12660443, 12589945, 12620172)
    "bmm_saves_other_only": """
v2 = T.tensor([[[2.0, 0.0]]], dtype=T.float32, requires_grad=True)
v3 = v2.detach()
v4 = T.tensor([[[0.0], [0.0]]], dtype=T.float32)
v5 = T.bmm(v2, v4)
v3.abs_()
loss = (v2 * v2.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
loss.backward(inputs=[v2])
""",
    "vecdot_saves_other_only": """
v0 = T.tensor([-1.0, -1.0], dtype=T.float64)
v1 = T.tensor([0.0, 2.0], dtype=T.float64, requires_grad=True)
v2 = T.linalg.vecdot(v0, v1)
v3 = v1.detach()
v3.clamp_(-0.9, 0.5)
loss = (v2 * v2.detach().tanh()).sum()
loss.backward()
""",
    # an operand that requires grad but has no edge (a view made under no_grad) needs nothing
    # saved for it: the binary fast path chose what to save by requires_grad (seed 12577197)
    "bmm_no_grad_view_operand": """
v0 = T.zeros((3, 0, 1), dtype=T.float64, requires_grad=True)
with T.set_grad_enabled(False):
    v2 = v0.permute(0, 2, 1)
v3 = T.zeros((3, 0, 1), dtype=T.float64, requires_grad=True)
v4 = T.bmm(v2, v3)
with T.set_grad_enabled(False):
    v3.sigmoid_()
loss = (v3 * v3.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
loss.backward()
""",
    # group_norm makes a strided input contiguous first (CloneBackward0), so its node saves
    # the copy (seed 12661846)
    "group_norm_strided_input": """
v2 = T.tensor(0.0, dtype=T.float64)
v3 = (v2 + 5 * T.eye(4, dtype=v2.dtype)).inverse()
v4 = T.tensor([1.0, -0.0, 0.0, -1.0], dtype=T.float64)
v5 = T.tensor([1.0, 0.0, -0.0, 1.0], dtype=T.float64, requires_grad=True)
v6 = T.nn.functional.group_norm(v3, 4, weight=v4, bias=v5)
v3.exp_()
loss = (v6 * v6.detach().tanh()).sum()
loss.backward()
""",
    # a node whose gradients all go nowhere (its inputs are views made under no_grad) still
    # unpacks what it saved: minimum keeps both inputs whatever the edges (seeds 12519587,
    # 12579878, 12657110)
    "no_edge_node_checks_saved_inputs": """
v2 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
with T.no_grad():
    v5 = v2.broadcast_to((1, 2, 0, 3))
v6 = T.tensor(1.0, dtype=T.float64)
v7 = (v5).minimum(v6)
v6.log_()
loss = (v5 * v5.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:
    pass
""",
    "no_edge_node_checks_saved_inputs2": """
v0 = T.tensor([-3.0, -1.0], dtype=T.float64, requires_grad=True)
with T.no_grad():
    v2 = v0.reshape(2)
    v3 = v2.nan_to_num()
v4 = (v2).logaddexp(v3)
v5 = v2.sign()
v3.addcmul_(v5, v5, value=0.5)
loss = (v4 * v4.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:
    pass
""",
    # mse_loss of a bool input: create_graph's derivative subtracted the bool tensor
    # (seed 12669445)
    "mse_loss_bool_input_create_graph": """
v0 = T.tensor([1.0, 0.25], dtype=T.float64, requires_grad=True)
v1 = (v0).gt(0.5)
v2 = T.nn.functional.mse_loss(v1, v0, reduction='none')
v3 = T.nn.functional.mse_loss(v0, v1)
loss = (v0 * v0.detach().tanh()).sum() + (v2 * v2.detach().tanh()).sum() + v3
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # a 1x1 determinant's gradient is g itself: it was g * det * inv (0 at a zero entry),
    # and under create_graph it depended on A where PyTorch's does not (seeds 12599717,
    # 12677605)
    "det_one_by_one": """
v2 = T.tensor([[-0.0]], dtype=T.float64, requires_grad=True)
v3 = T.tensor([[[0.0]], [[2.0]]], dtype=T.float64, requires_grad=True)
v10 = T.linalg.det(v2)
v11 = v3.det()
loss = (v10 * v10.detach().tanh()).sum() + v11.sum() + (v11 * v11).sum()
gs = T.autograd.grad(loss, [v2, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None and g.requires_grad)
loss2.backward()
v4 = T.tensor([[0.0]], dtype=T.float64, requires_grad=True)
v4.det().mul(2).backward()
""",
    # cummax/cummin of an empty tensor: PyTorch's derivative is the input itself, so under
    # create_graph it requires grad (stop 19's open item, seed 12606800)
    "cummin_empty_create_graph": """
v2 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v3 = T.zeros((2, 0), dtype=T.float64, requires_grad=True)
v5 = v2.narrow(0, 0, 0).flatten().expand(-1)
v6 = v5.cummin(-1).values
v7 = (v3 * 2).cummax(0).values
loss = (v6 * v6.detach().tanh()).sum() + v7.sum()
gs = T.autograd.grad(loss, [v2, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # adaptive_max_pool1d of an empty batch under create_graph: the plane gather reshaped
    # with -1, ambiguous for 0 elements (NumPy's ValueError; seed 12611504)
    "adaptive_max_pool_empty_create_graph": """
v2 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
v3 = v2.permute(0, 1)
v6 = T.nn.functional.adaptive_max_pool1d(v2, 3)
v7 = T.ldexp(v3, v6)
v8 = T.nn.functional.max_pool1d(T.zeros((0, 2, 3), dtype=T.float64, requires_grad=True), 1)
loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum() + v8.sum()
gs = T.autograd.grad(loss, [v2, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzp(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


# ----------------------------------------------------------------- which inputs a node saves
# PyTorch's generated nodes save an input only for a derivative that reads it, guarded by
# that derivative's edge when only one derivative reads it (addr's vec2 for vec1's gradient,
# none of its self); retrograd's ``saved_for`` must say the same, or an in-place change of an
# unread input raises at backward in retrograd only (or, too few, a wrong gradient)
def _eye_plus(lib, a):
    return a + 3 * lib.eye(a.shape[-1], dtype=a.dtype)


SAVES = {
    "addr": (lambda lib, a, b, c: lib.addr(a, b, c, beta=0.5, alpha=2.0), [(2, 3), (2,), (3,)]),
    "addmv": (lambda lib, a, b, c: lib.addmv(a, b, c, beta=0.5, alpha=2.0), [(2,), (2, 3), (3,)]),
    "addmm": (lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=2.0),
              [(2, 2), (2, 3), (3, 2)]),
    "baddbmm": (lambda lib, a, b, c: lib.baddbmm(a, b, c, beta=0.5, alpha=2.0),
                [(2, 2, 2), (2, 2, 3), (2, 3, 2)]),
    "addbmm": (lambda lib, a, b, c: lib.addbmm(a, b, c, beta=0.5, alpha=2.0),
               [(2, 2), (2, 2, 3), (2, 3, 2)]),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [(2, 2, 3), (2, 3, 2)]),
    "vdot": (lambda lib, a, b: lib.vdot(a, b), [(3,), (3,)]),
    "dot": (lambda lib, a, b: lib.dot(a, b), [(3,), (3,)]),
    "vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b), [(3,), (3,)]),
    "outer": (lambda lib, a, b: lib.outer(a, b), [(2,), (3,)]),
    "mv": (lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)]),
    "mm": (lambda lib, a, b: lib.mm(a, b), [(2, 3), (3, 2)]),
    "cross": (lambda lib, a, b: lib.linalg.cross(a, b), [(2, 3), (2, 3)]),
    "bilinear": (lambda lib, a, b, c: lib.nn.functional.bilinear(a, b, c),
                 [(2, 3), (2, 2), (4, 3, 2)]),
    "igammac": (lambda lib, a, b: lib.igammac(a.abs() + 1, b.abs() + 1), [(3,), (3,)]),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(_eye_plus(lib, a), b,
                                                                   upper=True),
                         [(2, 2), (2, 1)]),
    "lerp": (lambda lib, a, b, c: lib.lerp(a, b, c), [(3,), (3,), (3,)]),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), [(3,), (3,), (3,)]),
    "addcdiv": (lambda lib, a, b, c: lib.addcdiv(a, b, c.abs() + 1, value=0.5),
                [(3,), (3,), (3,)]),
    "minimum": (lambda lib, a, b: lib.minimum(a, b), [(3,), (3,)]),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), [(3,), (3,)]),
    "prelu": (lambda lib, a, b: lib.nn.functional.prelu(a, b), [(2, 3), (3,)]),
    "layer_norm": (lambda lib, a, b, c: lib.nn.functional.layer_norm(a, (3,), b, c),
                   [(2, 3), (3,), (3,)]),
    "group_norm": (lambda lib, a, b, c: lib.nn.functional.group_norm(a, 1, b, c),
                   [(2, 3), (3,), (3,)]),
    "group_norm_strided": (lambda lib, a, b, c: lib.nn.functional.group_norm(a.mT, 1, b, c),
                           [(3, 2), (3,), (3,)]),
    "linear": (lambda lib, a, b, c: lib.nn.functional.linear(a, b, c), [(2, 3), (2, 3), (2,)]),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), [(2, 3), (2, 3)]),
}


def _outcome(lib, name, data, req, mod):
    fn, _ = SAVES[name]
    args = [lib.tensor(d, dtype=lib.float64) for d in data]
    args[req].requires_grad_()
    out = fn(lib, *args)
    with lib.no_grad():
        args[mod].mul_(1.5)
    try:
        out.sum().backward()
    except RuntimeError:
        return "RuntimeError"
    return "ok"


@pytest.mark.parametrize("name", sorted(SAVES))
def test_inplace_change_of_an_input_after_the_op_matches_torch(name):
    shapes = SAVES[name][1]
    data = [np.random.default_rng(i).uniform(-1, 1, s) for i, s in enumerate(shapes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for req, mod in itertools.product(range(len(shapes)), repeat=2):
            want = _outcome(torch, name, data, req, mod)
            got = _outcome(retrograd, name, data, req, mod)
            assert got == want, (f"{name}: input {req} requires grad, input {mod} changed in "
                                 f"place after the op: torch {want}, retrograd {got}")
