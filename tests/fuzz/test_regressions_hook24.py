"""Fuzzer findings handled by hook24 (issue 7, stop 24): hooks on empty tensors in a double
backward, the order of leaf hooks under kl_div, and the "invalid gradient" check that a
second backward through addcmul's derivative meets after a leaf was squeezed in place.

- seed 20109857: an in-place op on an (empty) view of a tensor whose base carries a hook.
  PyTorch's CopySlices runs the op's derivative itself and copies its result into the base's
  gradient (``grad_slice.copy_``), recorded under create_graph even when everything is
  empty, so the second backward reaches the base's older nodes and their hooks run again.
  retrograd reached them through the view's AsStridedBackward0, whose derivative gives fresh
  zeros for an empty view (as PyTorch's as_strided_backward, which that path never runs).
- seed 20174524: PyTorch's kl_div is C++ (``exp(target) * (target - input)``) whose
  compiled code builds the right operand first; node creation order decides which leaf's
  hooks run first.
- seed 20140980: PyTorch's addcmul derivative is ``grad * (tensor2 * value)``: a
  MulBackward1 on tensor2 itself, whose gradient in the second backward has tensor2's shape
  of the forward, which a leaf squeezed in place since then no longer accepts.
"""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # (seed 20109857) v4's hook runs in the first and in the second backward in PyTorch
    "empty_base_hook_runs_in_double_backward": """
v0 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v3 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v4 = T.div(v0, v3.abs().add(0.5))
v5 = v4.expand(2, -1)
v5.abs_().add_(0.5).log1p_()
h8 = v4.register_hook(lambda g: LOG.append(('v4', g.detach().clone())))
v5.sinh_()
loss = (v4 * v4.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # (seed 20174524) the target's hook runs before the input's (log_target)
    "kl_div_log_target_hook_order": """
v0 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v1 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v2 = T.nn.functional.kl_div(v0, v1, log_target=True)
h4 = v1.register_hook(lambda g: LOG.append(('v1', g.detach().clone())))
h7 = v0.register_hook(lambda g: LOG.append(('v0', g.detach().clone())))
v8 = T.sigmoid(v2)
v9 = (v8.sigmoid()).logit()
loss = (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v1], retain_graph=True, allow_unused=True)
""",
    # (seed 20140980) v2 is v1 itself (flatten(0, 0)): squeeze_ under no_grad makes the leaf
    # 0-d after its AccumulateGrad recorded shape [1]; the second backward raises
    "addcmul_second_backward_squeezed_leaf": """
v1 = T.tensor([-3.0], dtype=T.float64, requires_grad=True)
v2 = v1.flatten(0, 0)
v4 = v2[1:1:2]
v5 = v4.flip(-1)
with T.set_grad_enabled(False):
    v2.squeeze_(-1)
v7 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v8 = v5.addcmul(v7, v1, value=0.25)
loss = (v5 * v5.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v2, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",  # noqa: E501 (the fuzzer's shrunk program)
    # the same with addcdiv, the squeezed leaf as tensor1 (value * tensor1: MulBackward1)
    # and as tensor2 (tensor2 * tensor2 first: v7 gets its .grad before the raise)
    "addcdiv_second_backward_squeezed_leaf_tensor1": """
v1 = T.tensor([-3.0], dtype=T.float64, requires_grad=True)
v2 = v1.flatten(0, 0)
v4 = v2[1:1:2]
v5 = v4.flip(-1)
with T.set_grad_enabled(False):
    v2.squeeze_(-1)
v7 = T.tensor(1.5, dtype=T.float64, requires_grad=True)
v8 = v5.addcdiv(v1, v7, value=0.25)
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "addcdiv_second_backward_squeezed_leaf_tensor2": """
v1 = T.tensor([-3.0], dtype=T.float64, requires_grad=True)
v2 = v1.flatten(0, 0)
v4 = v2[1:1:2]
v5 = v4.flip(-1)
with T.set_grad_enabled(False):
    v2.squeeze_(-1)
v7 = T.tensor(1.5, dtype=T.float64, requires_grad=True)
v8 = v5.addcdiv(v7, v1, value=0.25)
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


# ------------------------------------------------------------- hooks on empty tensors

_HOOKED = """
x = T.{leaf}
y = T.{leaf}
b = x * (y.abs() + 0.5)
v = b.{view}
v.{op1}
b.register_hook(lambda g: LOG.append(('b', tuple(g.shape))))
v.{op2}
v.register_hook(lambda g: LOG.append(('v', tuple(g.shape))))
loss = (b * b.detach().tanh()).sum() + (v * v.detach().tanh()).sum()
gs = T.autograd.grad(loss, [x, y], create_graph=True, allow_unused=True)
LOG.append('second')
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None and g.requires_grad)
if isinstance(loss2, int):
    LOG.append('no graph')
else:
    loss2.backward()
LOG.append(('x.grad', None if x.grad is None else tuple(x.grad.shape)))
"""


def _hook_log(lib, **fields):
    log = []
    try:
        exec(_HOOKED.format(**fields), {"T": lib, "LOG": log})  # noqa: S102 - our text
    except Exception as e:  # (both must raise alike)
        log.append(type(e).__name__)
    return log


_LEAVES = ["zeros((0,), dtype=T.float64, requires_grad=True)",
           "zeros((2, 0), dtype=T.float64, requires_grad=True)",
           "full((3,), 0.3, dtype=T.float64, requires_grad=True)"]
_VIEWS = ["expand(2, -1)", "view(1, -1)", "narrow(0, 0, 0)", "unsqueeze(0)", "view(-1)[1:1]"]
_OPS = [("abs_()", "sinh_()"), ("mul_(2.0)", "exp_()"), ("add_(0.5)", "sin_()")]


@pytest.mark.parametrize("leaf,view,ops", list(itertools.product(_LEAVES, _VIEWS, _OPS)))
def test_hooks_after_inplace_on_empty_view_run_as_torch(leaf, view, ops):
    """How often (and in which pass) hooks on a base and its view run when in-place ops
    were recorded on an empty view (or a view of an empty base): the same as PyTorch, in
    the first and in the double backward."""
    fields = dict(leaf=leaf, view=view, op1=ops[0], op2=ops[1])
    assert _hook_log(retrograd, **fields) == _hook_log(torch, **fields)


# ----------------------------------------------------------------- kl_div hook order

@pytest.mark.parametrize("log_target", [True, False])
@pytest.mark.parametrize("first", ["input", "target"])
def test_kl_div_leaf_hooks_run_in_torch_order(log_target, first):
    def run(lib):
        log = []
        x = lib.tensor([-2.0, 0.5], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([0.25, 0.75], dtype=lib.float64, requires_grad=True)
        for name in (["input", "target"] if first == "input" else ["target", "input"]):
            tensor = x if name == "input" else t
            tensor.register_hook(lambda g, name=name: log.append(name))
        lib.nn.functional.kl_div(x, t, reduction="sum", log_target=log_target).backward()
        return log

    assert run(retrograd) == run(torch)


# ------------------------------------------------------------------------- addcmul

_DTYPE_PAIRS = [("float64", "float64"), ("float32", "float32"), ("float32", "float64"),
                ("float64", "float32"), ("int64", "float64")]


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtypes", _DTYPE_PAIRS)
def test_addc_gradients_bitwise_as_torch(op, dtypes):
    """PyTorch's formulas, rounded as they are: grad * (tensor2 * value) (not (grad * value)
    * tensor2), grad * (value / tensor2), -grad * (value * tensor1 / (tensor2 * tensor2))."""
    rng = np.random.default_rng(0)
    b, c, w = (rng.standard_normal(200) for _ in range(3))
    b, c = (b * 5).round() if dtypes[0] == "int64" else b, c + 3
    grads = []
    for lib in (torch, retrograd):
        tb = lib.tensor(b.astype(dtypes[0]), requires_grad=dtypes[0] != "int64")
        tc = lib.tensor(c.astype(dtypes[1]), requires_grad=True)
        y = getattr(lib.zeros(200, dtype=lib.float64), op)(tb, tc, value=0.3)
        (y * lib.tensor(w)).sum().backward()
        grads.append([None if t.grad is None else np.array(t.grad.tolist()) for t in (tb, tc)])
    for ours, theirs in zip(grads[1], grads[0]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("divisor", ["int64", "int32", "bool"])
def test_addcdiv_integer_divisor_backward_raises_as_torch(default, divisor):
    """tensor1's gradient is ``value / tensor2`` made in place in a tensor like tensor2: an
    integer tensor2 refuses the true quotient (in backward; the forward works)."""
    def run(lib):
        before = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            t1 = lib.tensor([1.5, 2.5], dtype=lib.float64, requires_grad=True)
            t2 = lib.tensor([1, 2]).to(getattr(lib, divisor))
            y = lib.zeros(2, dtype=lib.float64).addcdiv(t1, t2, value=0.3)
            y.sum().backward()
        except RuntimeError as e:
            return str(e)
        finally:
            lib.set_default_dtype(before)
        return None

    message = run(retrograd)
    assert message is not None and message == run(torch)


def test_addcmul_double_backward_records_mul_by_value_on_the_tensor():
    """Under create_graph the factor ``tensor2 * value`` is PyTorch's MulBackward1 on
    tensor2, so the second backward checks tensor2's shape of the forward against its
    AccumulateGrad (a leaf squeezed in place since raises, as in PyTorch)."""
    def run(lib):
        t1 = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        t2 = lib.tensor([-3.0], dtype=lib.float64, requires_grad=True)
        keep = t2[0:0]  # (its graph keeps the leaf's AccumulateGrad, of shape [1], alive)
        with lib.no_grad():
            t2.squeeze_(0)
        y = keep.detach().addcmul(t1, t2, value=0.25)
        g1, = lib.autograd.grad((y * 2).sum(), [t1], create_graph=True)
        try:
            (g1 * 3).backward()
        except RuntimeError as e:
            return str(e)
        return None

    message = run(retrograd)
    assert message == run(torch)
    assert message is not None and "MulBackward1 returned an invalid gradient" in message


@pytest.mark.parametrize("which", [(0, 1), (1, 1), (1, 0)])
@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float32", "float64"),
                                    ("float32", "float32")])
@pytest.mark.parametrize("divisor", ["int64", "bool"])
def test_addcdiv_forward_mode_with_integer_divisor_as_torch(which, dtypes, divisor):
    """Forward mode keeps working with an integer tensor2 (PyTorch's forward formula; the
    VJP, whose transpose retrograd uses otherwise, refuses it as PyTorch's backward)."""
    rng = np.random.default_rng(3)
    x, t1, tx, tt1 = (rng.standard_normal(s) for s in ((3, 1), 4, (3, 1), 4))
    t2 = rng.integers(1, 4, (3, 4)).astype(divisor)
    out = []
    for lib in (torch, retrograd):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            a = lib.tensor(x.astype(dtypes[0]))
            b = lib.tensor(t1.astype(dtypes[1]))
            if which[0]:
                a = fa.make_dual(a, lib.tensor(tx.astype(dtypes[0])))
            if which[1]:
                b = fa.make_dual(b, lib.tensor(tt1.astype(dtypes[1])))
            tangent = fa.unpack_dual(a.addcdiv(b, lib.tensor(t2), value=0.7)).tangent
            out.append((str(tangent.dtype).split(".")[-1], np.array(tangent.tolist())))
    (theirs_dtype, theirs), (ours_dtype, ours) = out
    assert ours_dtype == theirs_dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
