"""Fixed regression cases found by the fuzzer: each program must run alike in retrograd and
PyTorch (values, dtypes, shapes, grad_fn names, gradients, exceptions).  A new finding goes
here as the shrunk reproducer the fuzzer printed, once the bug is fixed."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # trace's derivative is g on the diagonal and exact zeros elsewhere (g * eye was nan off
    # the diagonal for a nan g: log2 of a negative trace)
    "trace_backward_nan": """
v1 = T.tensor([[0.0, 0.0], [0.92, -0.04], [0.0, 1.34]], dtype=T.float64, requires_grad=True)
v4 = (v1 - 1).trace()
v10 = T.log2(v4)
loss = (v10 * v10.detach().tanh()).sum()
loss.backward()
""",
    # lerp takes a 0-d weight of another float dtype (the result keeps input's dtype, the
    # weight's gradient its own)
    "lerp_0d_weight_dtype": """
v0 = T.tensor([1.0, -2.0], dtype=T.float32, requires_grad=True)
v1 = T.tensor(0.25, dtype=T.float64, requires_grad=True)
v2 = v0.lerp(T.tensor([3.0, 4.0], dtype=T.float32), v1)
v3 = T.tensor(-2.0, dtype=T.float64).lerp(T.tensor(1.0, dtype=T.float64), T.tensor(3).tan())
v4 = T.tensor(-2.0, dtype=T.float32).lerp(T.tensor(-2.0), T.tensor(-3.0, dtype=T.float64))
v5 = T.tensor(-1.0, dtype=T.float64).lerp(T.tensor(-1.0, dtype=T.float64), T.tensor(2))
v6 = T.tensor([1.0, 2.0]).lerp(T.tensor([3.0, 4.0]), T.tensor(True))
loss = (v2 * v2.detach().cos()).sum()
loss.backward()
""",
    # sigmoid of a negative x as 1 / (1 + exp(-x)), PyTorch's kernel: 1 - 1 / (1 + exp(x))
    # cancelled to 0 at x = -17 in float32 (so logit gave -inf) and lost digits elsewhere
    "sigmoid_negative": """
v0 = T.tensor([[0, 2], [4, -3]], dtype=T.int64)
v2 = v0 @ T.tensor([[0, -2], [-2, 3]], dtype=T.int64)
v5 = (v2.sigmoid()).logit()
v6 = T.tensor([-17.0, -30.0, -100.0, 5.0], dtype=T.float32, requires_grad=True)
v7 = v6.sigmoid().logit()
v7.sum().backward()
""",
    # cumsum's derivative is the reversed cumulative sum (flip, cumsum, flip): as total -
    # cumsum(g) + g, one nan g (float_power of a negative) made every entry nan
    "cumsum_backward_nan": """
v1 = T.tensor([[0.0, -1.0], [0.0, -0.0], [-1.0, 0.0], [-0.0, 2.0]], dtype=T.float64,
              requires_grad=True)
v2 = v1.cumsum(dim=0)
v5 = (v2).float_power(T.tensor(1.5, dtype=T.float64))
loss = (v5 * v5.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1], create_graph=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # reshape of a non-contiguous tensor that strides can express is a view in PyTorch
    # (ReshapeAliasBackward0): a later in-place change of its base shows through it, and an
    # in-place change of it (of a view of a leaf) is refused
    "reshape_alias_view": """
v0 = T.tensor([[4, 3, -1], [3, -2, 3]], dtype=T.int64)
v2 = v0.diagonal(0, 1, 0)
v4 = v2.reshape(2)
v2.mul_(v2)
v1 = T.tensor([[[1.0, 1.0]], [[-1.0, 0.0]]], dtype=T.float64, requires_grad=True)
v6 = v1.diagonal(1, 1, 2).reshape(2)
try:
    v6.sign_()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v7 = v1 * 2
v8 = v7.transpose(0, 2).reshape(2, 1, 2)
v8.mul_(3)
loss = (v7 * v7.detach().cos()).sum() + (v8 * 2).sum()
loss.backward()
""",
    # sgn of a 0-d nan (softmax of a nan): NumPy's sign of a 0-d array is a read-only scalar
    "sgn_0d_nan": """
v0 = T.tensor(float('nan'), dtype=T.float64, requires_grad=True)
v7 = v0.softmax(dim=0).sgn()
v8 = T.tensor([float('nan'), -2.0], dtype=T.float32).sgn()
""",
    # derivatives that are 0 by a mask (clamp_min/clamp_max below/above the bound, the
    # region x[i] = v overwrote, fill_, zero_) are exact zeros, not g * mask: nan where the
    # incoming gradient is inf (xlogy(x, 0) is -inf) or nan (rsqrt of a negative)
    "masked_zero_derivatives": """
v0 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v7 = (v0.abs()).clamp_min(1.5)
v9 = (v7).xlogy(T.tensor(0.0, dtype=T.float64))
v10 = (v0 * 3).clamp_max(-4.0).xlogy(T.tensor(0.0, dtype=T.float64))
loss = (v9 * v9.detach().tanh()).sum() + (v10 * 2).sum()
loss.backward()
v1 = T.tensor([[-0.0]], dtype=T.float64, requires_grad=True)
v6 = v1 * 2
h8 = v6.register_hook(lambda g: LOG.append(('v6', g.detach().clone())))
v6[0:1] = -2
v6.rsqrt_()
v11 = v1 * 3
h9 = v11.register_hook(lambda g: LOG.append(('v11', g.detach().clone())))
v11.fill_(-1.0)
v11.rsqrt_()
v12 = v1 * 4
h10 = v12.register_hook(lambda g: LOG.append(('v12', g.detach().clone())))
v12.zero_()
v12.sub_(1).rsqrt_()
loss2 = (v6 * 2).sum() + v11.sum() + v12.sum()
loss2.backward()
""",
    # hooks on leaves run in PyTorch's order: AccumulateGrad nodes share one sequence number,
    # and the ready heap broke that tie by id() (an order that changed from run to run)
    "leaf_hook_order": """
a0 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
b0 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
c0 = a0.logaddexp(b0)
ha0 = a0.register_hook(lambda g: LOG.append(('a0', g.detach().clone())))
hb0 = b0.register_hook(lambda g: LOG.append(('b0', g.detach().clone())))
loss0 = (b0 * 0.5).sum() + c0.sum()
loss0.backward()
a1 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
b1 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
c1 = a1.logaddexp(b1)
ha1 = a1.register_hook(lambda g: LOG.append(('a1', g.detach().clone())))
hb1 = b1.register_hook(lambda g: LOG.append(('b1', g.detach().clone())))
loss1 = (b1 * 0.5).sum() + c1.sum()
loss1.backward()
a2 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
b2 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
c2 = a2.logaddexp(b2)
ha2 = a2.register_hook(lambda g: LOG.append(('a2', g.detach().clone())))
hb2 = b2.register_hook(lambda g: LOG.append(('b2', g.detach().clone())))
loss2 = (b2 * 0.5).sum() + c2.sum()
loss2.backward()
a3 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
b3 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
c3 = a3.logaddexp(b3)
ha3 = a3.register_hook(lambda g: LOG.append(('a3', g.detach().clone())))
hb3 = b3.register_hook(lambda g: LOG.append(('b3', g.detach().clone())))
loss3 = (b3 * 0.5).sum() + c3.sum()
loss3.backward()
a4 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
b4 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
c4 = a4.logaddexp(b4)
ha4 = a4.register_hook(lambda g: LOG.append(('a4', g.detach().clone())))
hb4 = b4.register_hook(lambda g: LOG.append(('b4', g.detach().clone())))
loss4 = (b4 * 0.5).sum() + c4.sum()
loss4.backward()
a5 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
b5 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
c5 = a5.logaddexp(b5)
ha5 = a5.register_hook(lambda g: LOG.append(('a5', g.detach().clone())))
hb5 = b5.register_hook(lambda g: LOG.append(('b5', g.detach().clone())))
loss5 = (b5 * 0.5).sum() + c5.sum()
loss5.backward()
""",
    # broadcast_to(()) is a 0-d target shape, not a missing size argument
    "broadcast_to_0d": """
v0 = T.tensor(True, dtype=T.bool)
v3 = v0.clone().broadcast_to(())
v4 = T.tensor(2.0, dtype=T.float64, requires_grad=True).broadcast_to(())
v4.backward()
""",
    # atan2's derivative for x negates y: a bool y raises PyTorch's RuntimeError, not NumPy's
    # TypeError
    "atan2_bool_y_backward": """
v0 = T.tensor(False, dtype=T.bool)
v1 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v2 = (v0).atan2(v1)
loss = (v1 * v1.detach().tanh()).sum() + (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # cumsum of a 0-d tensor is 0-d (NumPy's cumsum flattens it to shape (1,))
    "cumsum_0d": """
v0 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v1 = v0.cumsum(dim=-1)
loss = (v1 * v1.detach().cos()).sum()
loss.backward()
""",
    "cumsum_0d_int": """
v0 = T.tensor(3, dtype=T.int64)
v1 = v0.cumsum(dim=0)
v2 = v0.cumsum(dim=1)
v3 = v0.cumsum(dim=-2)
""",
    # narrow is a slice (SliceBackward0) even when it keeps the whole dimension
    "narrow_whole": """
v0 = T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]], dtype=T.float64, requires_grad=True)
v1 = v0.narrow(1, 0, 3)
v2 = v0.narrow(0, -2, 2)
v3 = v1.narrow(0, 1, 1)
loss = (v1 * v1.detach().cos()).sum() + (v2 * v2.detach().cos()).sum() + (v3 * 2).sum()
loss.backward()
""",
    # xlogy by a Python number: XlogyBackward2, float32 stays float32, and its derivative
    # (log of the number) works under create_graph
    "xlogy_number": """
v0 = T.tensor([0.0, 2.0, -1.5], dtype=T.float64, requires_grad=True)
v1 = v0.xlogy(3)
v2 = T.tensor([0.0, 0.5], dtype=T.float32, requires_grad=True)
v3 = v2.xlogy(2.5)
v4 = v0.xlogy(0)
v5 = v0.xlogy(-1.0)
loss = (v1 * v1.detach().cos()).sum() + (v3 * v3.detach().cos()).sum()
gs = T.autograd.grad(loss, [v0, v2], create_graph=True, allow_unused=True)
""",
    "xlogy_number_grad": """
v0 = T.tensor([0.0, 2.0, -1.5], dtype=T.float64, requires_grad=True)
v1 = v0.xlogy(3) + v0.xlogy(0) + v0.xlogy(-2)
v2 = T.tensor([1, 0, 2]).xlogy(2)
loss = (v1 * v1.detach().cos()).sum()
loss.backward()
""",
    # clamp_min / clamp_max by a tensor: ClampMinBackward1 / ClampMaxBackward1 (not clamp's
    # ClampBackward0); an int clamped to a float number gives the default float
    "clamp_min_max_tensor": """
v0 = T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([0.0, 0.25, 1.0], dtype=T.float64, requires_grad=True)
v2 = v0.clamp_min(v1)
v3 = v0.clamp_max(v1)
v4 = T.clamp_min(v0, v1.float())
v5 = v0 * 1
v5.clamp_min_(v1)
v6 = v0 * 1
v6.clamp_max_(v1)
loss = (v2 * v2.detach().cos()).sum() + (v3 * v3.detach().cos()).sum() + v5.sum() + v6.sum()
gs = T.autograd.grad(loss, [v0, v1], create_graph=True)
loss2 = sum((g * g.detach().sin()).sum() for g in gs if g is not None)
loss2.backward()
""",
    "clamp_int_by_float": """
v0 = T.tensor([2, -3], dtype=T.int64)
v1 = v0.clamp_max(-1.5)
v2 = v0.clamp_min(0.0)
v3 = v0.clamp_min(1)
v4 = T.tensor(3, dtype=T.int64).clamp_max(2.5)
""",
    # flatten with nothing to merge (1-d, or start == end) returns the tensor itself
    "flatten_itself": """
v0 = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
v1 = v0.flatten()
v2 = T.tensor([[0.5, -1.0]], dtype=T.float64, requires_grad=True)
v3 = v2.round()
v4 = v3.flatten(-1, 1)
v5 = v2.t().flatten(0, 0)
v6 = T.tensor(2.0, dtype=T.float64, requires_grad=True).flatten()
loss = (v1 * v1.detach().cos()).sum() + v4.sum() + v5.sum() + v6.sum()
loss.backward()
""",
    # sign(nan) is 0 in PyTorch (NumPy gives nan), and so is abs' at nan
    "sign_nan": """
v0 = T.tensor([2.0, -1.0, -2.0, 0.0], dtype=T.float64, requires_grad=True)
v1 = v0.log1p()
v2 = v1.sign()
v3 = v1.float().sign()
v4 = v1.abs()
loss = (v4 * 2).sum()
loss.backward()
""",
    # lerp computes from the nearer end, as PyTorch: lerp(0, -inf, 0.5) is nan, not -inf
    "lerp_far_end": """
v0 = T.tensor([0.0, 1.0, 2.0], dtype=T.float64, requires_grad=True)
v1 = T.tensor([float('-inf'), 3.0, float('inf')], dtype=T.float64)
v2 = v0.lerp(v1, 0.5)
v3 = v0.lerp(v1, 0.25)
v4 = v0.lerp(v1, T.tensor([0.75, 0.1, 0.5], dtype=T.float64))
v5 = v0.detach().lerp(v0.detach() * 3, 0.7)
loss = (v5 * v0).sum()
loss.backward()
""",
    # erfc's tail: erfc(4) in float32 is 1.5e-8 (1 - erf(4) rounds to 0), erfc(6) 2e-17
    "erfc_tail": """
v0 = T.tensor([-1, 0, 3, 4], dtype=T.int64)
v1 = v0.erfc()
v2 = v1.ceil()
v3 = T.tensor([4.0, 6.0, 10.0, -3.0], dtype=T.float64, requires_grad=True)
v4 = v3.erfc()
v5 = v4.log()
loss = (v4 * 2).sum()
loss.backward()
""",
    # a hook under create_graph: the hook's dtype check compares arrays, not a dtype object
    # with a NumPy dtype (raised "changed the type of value (was float64 got float64)")
    "hook_create_graph": """
v8 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
h11 = v8.register_hook(lambda g: g * 2)
loss = (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v8], create_graph=True, allow_unused=True)
""",
    # the value of max/min(dim)/sort/topk/kthvalue of a 0-d tensor is that op's node
    # (KthvalueBackward0...), not a view: changing it in place keeps PowBackward0
    "pick_0d": """
v0 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v1 = v0.kthvalue(1, dim=-1).values
v1.pow_(2)
v2 = v0.max(dim=0).values
v3 = v0.sort().values
v4 = v0.topk(1).values
v5 = v0.min(0, keepdim=True).values
loss = (v1 * 3).sum() + (v2 * v3 * v4 * v5).sum()
loss.backward()
""",
    # kthvalue of a 1-d tensor with a tied k-th value: the one tied slice is 0-d after
    # taking it, and NumPy's nonzero refuses 0-d arrays (raised ValueError)
    "kthvalue_1d_tie": """
v1 = T.tensor([-0.0, -1.0], dtype=T.float64)
v2 = T.tensor(0.5, dtype=T.float64)
v3 = v1.masked_fill(v2 > 0, 2.0)
v4 = v3.kthvalue(1, dim=-1).values
v5 = T.tensor([2.0, 1.0, 2.0, 2.0, 0.5], dtype=T.float64, requires_grad=True)
v6 = v5.kthvalue(4).values
loss = (v6 * 3).sum()
loss.backward()
""",
    # kthvalue of a 0-d bool tensor is the tensor's value (PyTorch refuses bool only with a
    # dimension to select along; fuzzer seed 2005930)
    "kthvalue_0d_bool": """
v0 = T.tensor(-0.0, dtype=T.float64)
v1 = (v0) >= (v0)
v3 = v1.kthvalue(1, dim=0)[1]
v4 = v1.kthvalue(1, dim=0)[0]
v5 = T.tensor([True, False]).kthvalue(1)
""",
    # views made under no_grad of a tensor that requires grad require grad, as leaves whose
    # gradient goes nowhere; a node whose gradients all go nowhere reads no saved values, so
    # a second backward does not raise (seed 5003063)
    "no_grad_view_second_backward": """
v1 = T.tensor([-1.0, 2.0], dtype=T.float64)
v6 = T.tensor(-0.0, dtype=T.float64, requires_grad=True)
v7 = T.mul(v1, v6)
with T.set_grad_enabled(False):
    v9 = v7.unbind(-1)[1]
loss = (v9 * v9.detach().tanh()).sum()
loss.backward()
loss.backward()
""",
    # addcmul of integer tensors casts a fractional value to the integer type first, as
    # PyTorch (truncates: 0.5 -> 0, -1.7 -> -1) (seed 5000216)
    "addcmul_int_fractional_value": """
v1 = T.tensor(-1, dtype=T.int64)
v1.addcmul_(v1, v1, value=0.5)
v2 = T.addcmul(T.tensor([-1, 2, 3]), T.tensor([1, 2, -3]), T.tensor([1, 2, -3]), value=-1.7)
v3 = T.tensor([1.0, 2.0]).addcmul(T.tensor([1, 2]), T.tensor([1, 2]), value=0.5)
""",
    # tile(()) of a 0-d tensor is a copy (repeat of nothing), as PyTorch (seed 7009700); a
    # node whose gradients all go nowhere is skipped even when its saved values are kept
    # (retain_graph: sort's derivative read its missing input, seed 7011163)
    "tile_0d_and_dead_end_sort": """
v2 = T.tensor(False, dtype=T.bool)
v9 = v2.tile(())
v3 = T.tensor(-0.0, dtype=T.float64, requires_grad=True)
with T.set_grad_enabled(False):
    v4 = v3.flatten()
v7 = v4.sort(dim=0, descending=True).values
loss = (v3 * v3.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
loss = loss + (v7 * v7.detach().tanh()).sum()
loss.backward(retain_graph=True)
""",
    # views taken before requires_grad_() on their base require grad too (seeds 5002398,
    # 5001187)
    "view_before_requires_grad": """
v0 = T.tensor([[[-2.0], [-2.0]]], dtype=T.float64)
v2 = v0.sign()
v4 = v2[0, -2, :]
v2.requires_grad_()
v1 = T.tensor([1.0, 0.0, -0.0], dtype=T.float64, requires_grad=True)
with T.set_grad_enabled(False):
    v5 = (v1.abs().add(0.5)).digamma()
v6 = v5[-2]
v5.requires_grad_()
v7 = T.sin(v6)
loss = (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v5, v6], create_graph=True, allow_unused=True)
""",
    # writing a tensor that requires grad into one that does not makes it (and its base, and
    # the base's other views) a non-leaf requiring grad; into an integer or bool tensor only
    # a fill by a 0-d tensor records, copy_ does not (seeds 100243, 101335, 101797, 103099)
    "inplace_write_requires_grad": """
v0 = T.tensor([[-2.0, 1.0], [0.5, 3.0]], dtype=T.float64)
v1 = v0[1]
v2 = T.tensor(0.5, dtype=T.float64, requires_grad=True)
v3 = T.tensor([1.0, -1.0], dtype=T.float64, requires_grad=True)
v0[0] = v2
v1.mul_(v3)
v4 = T.tensor([[1]], dtype=T.int64)
v4[0] = v2.sum()
v5 = T.tensor([1.0, 1.0, -2.0], dtype=T.float64).ne(3)
v5[2] = v2.sum()
v6 = T.tensor([-2, 2, 1], dtype=T.int64)
v6[1] = v2.sum()
v6.masked_fill_(v6 > 0, 2.0)
v7 = T.tensor([False, True], dtype=T.bool)
v7[0:1] = v2.sum()
with T.set_grad_enabled(False):
    v8 = v7.unbind(-1)[1]
loss = (v0 * v0.detach().tanh()).sum() + (v1 * 2).sum()
loss.backward()
""",
    # a view's grad_fn after its base changed in place under no_grad is AsStridedBackward0;
    # a view taken before requires_grad_() on its base, with the memory changed in between,
    # is re-derived (AsStridedBackward0, its gradient reaches the base), not a leaf
    "view_regenerated_after_change": """
v0 = T.tensor([[[2.0, -2.0, 0.0]]], dtype=T.float64, requires_grad=True)
v1 = v0.unflatten(2, (1, 1, 3))
with T.no_grad():
    v0 /= 2
v2 = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
v3 = v2[1:]
v2.mul_(2)
v2.requires_grad_()
loss = (v1 * v1.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
loss.backward()
""",
    # copy_ of a tensor requiring grad into a bool piece of unbind records nothing, so
    # PyTorch makes no view check (seed 8000628); empty tensors: in-place through an expanded
    # one, roll by any dim, bool mm (PyTorch returns before checking)
    "bool_piece_copy_and_empty_tensors": """
v1 = T.tensor([True, False], dtype=T.bool)
v3 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v4 = v1.unbind(0)[1]
v4.copy_(v3)
v5 = T.zeros((0,)).expand(1, 3, 0, -1).add_(3)
v6 = T.zeros((0, 3), dtype=T.float64, requires_grad=True).roll(1, 5)
v7 = T.zeros((0, 2), dtype=T.bool).mm(T.zeros((2, 1), dtype=T.bool))
v8 = T.zeros((2, 0), dtype=T.bool) @ T.zeros((0, 3), dtype=T.bool)
loss = (v6 * 2).sum()
loss.backward()
""",
    # sgn saves its input and result as PyTorch: changing the result in place makes the
    # backward raise (seeds 8011957, 8010405)
    "sgn_saves_result": """
v2 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v3 = v2.sgn()
v3 -= 2.0
loss = (v3 * v3.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # einsum with a size-1 dim of one operand broadcast against the other's: the gradient is
    # summed back over it (a) or broadcast back to the operand's size (v1); also to second
    # order (issue 7: backward raised 'ViewBackward0 returned an invalid gradient')
    "einsum_broadcast_size_one": """
v0 = T.tensor([[2.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([[1.0], [0.0], [3.0]], dtype=T.float64, requires_grad=True)
v2 = T.einsum('ij,jk->ik', v0, v1)
v3 = T.tensor([[0.5, -1.0, 2.0]], dtype=T.float64, requires_grad=True)
v4 = T.tensor([[1.5], [-2.0]], dtype=T.float64, requires_grad=True)
v5 = T.einsum('ij,kj->', v3, v4)
loss = (v2 * v2.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v1, v3, v4], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # remainder's divisor gradient is -grad * div(a, b, rounding_mode='floor'), recorded (with
    # a zero derivative), so under create_graph it requires grad as torch's (seeds 9009992,
    # 9011088, 9011379: a second backward raised 'does not require grad' in retrograd only)
    "remainder_divisor_derivative_requires_grad": """
v0 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v1 = T.tensor([0.0, 2.5], dtype=T.float64, requires_grad=True)
v2 = (v1) % (v0.abs().add(0.5))
v3 = T.tensor(-3.0, dtype=T.float32, requires_grad=True)
v4 = (v3) % (v3)
loss = (v2 * v2.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v1, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # var over every element with no degree of freedom: PyTorch's derivative is grad times a
    # constant (nan where x == mean, inf elsewhere), which does not require grad (seed
    # 9011128); over a dim, 2 / (n - correction) * grad * (x - mean) as before
    "var_without_degrees_of_freedom": """
v0 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v1 = T.tensor([[1.0, 2.0, 4.0]], dtype=T.float64, requires_grad=True)
v2 = v0.var(dim=0, keepdim=True)
v3 = v1.var(dim=0, correction=2)
v4 = v1.var(dim=1, correction=4)
v5 = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
v6 = v5.var(correction=2)
loss = (v2 * 2).sum() + (v3 * 2).sum() + (v4 * 2).sum() + (v6 * 2).sum()
gs = T.autograd.grad(loss, [v0, v1, v5], create_graph=True, allow_unused=True)
loss2 = sum((g * 2).sum() for g in gs if g is not None and g.requires_grad)
loss2.backward()
""",
    # a view made under no_grad whose memory then changed (through its base, under no_grad, or
    # through itself) and whose base then came to require grad: PyTorch refuses to re-derive
    # it, so reading its grad_fn or is_leaf raises (seed 9005420); unchanged, it is a leaf
    "no_grad_view_changed_then_requires_grad": """
v1 = T.tensor(-1.0, dtype=T.float64)
v2 = v1.exp2()
with T.set_grad_enabled(False):
    v3 = v2.transpose(0, -1)
v2.abs_().add_(0.5).sqrt_()
v2.requires_grad_()
v4 = T.tensor([1.0, 2.0], dtype=T.float64) * 1
with T.no_grad():
    v5 = v4[0:1]
    v6 = v4[1:]
with T.no_grad():
    v4.mul_(2)
v7 = T.tensor([1.0, 2.0], dtype=T.float64) * 1
with T.no_grad():
    v8 = v7[0:1]
v8.add_(0.5)
v7.requires_grad_()
v4.requires_grad_()
v9 = T.tensor([3.0, 4.0], dtype=T.float64) * 1
with T.no_grad():
    v10 = v9[0:1]
v9.requires_grad_()
loss = (v2 * 2).sum() + (v4 * 2).sum()
loss.backward()
""",
    # comparisons in PyTorch's promoted dtype: a 0-d float64 tensor meets a float32 one in
    # float32 (seed 9202561), also in nextafter's derivative (0 where input == other: seed
    # 9207376); prod over one element with a zero: the gradient itself (seed 9207047)
    "compare_in_promoted_dtype_and_prod_of_one": """
v1 = T.tensor(-0.92, dtype=T.float64)
v3 = T.tensor([0.5, -0.92], dtype=T.float32)
v4 = (v3) != (v1)
v5 = (v3) == (v1)
v6 = (v1) >= (v3)
v7 = T.tensor(1.1, dtype=T.float64, requires_grad=True)
v8 = T.nextafter(v7.norm().fmax(T.tensor([0.0], dtype=T.float32)), v7)
v9 = T.tensor([[-1.0, 0.0, -1.0]], dtype=T.float64, requires_grad=True)
v10 = v9.unflatten(1, (3, 1)).prod(dim=2)
v11 = T.tensor([0.0], dtype=T.float64, requires_grad=True)
v12 = v11.prod()
loss = (v8 * v8.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum() + (v12 * 2).sum()
gs = T.autograd.grad(loss, [v7, v9, v11], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None and g.requires_grad)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # a view of an empty tensor re-derived after a change under no_grad (AsStridedBackward0):
    # its derivative is fresh zeros, which do not require grad under create_graph (seed
    # 9100742: a second backward raised in PyTorch only)
    "empty_as_strided_backward": """
v1 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v3 = v1.reshape(1, 0, 1)
v6 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
with T.no_grad():
    v3.mul_(v6)
v7 = (v3.abs().add(0.5)).log1p()
loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v6], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # an empty view of a non-empty tensor re-derived after a change under no_grad: fresh zeros
    # too (seeds 9105788, 9157920); copy_ gives the overwritten tensor exact zeros, not g * 0
    # (nan where g is nan: seed 9127822)
    "empty_view_as_strided_and_copy_zeros": """
v0 = T.tensor([[[-0.0]]], dtype=T.float64, requires_grad=True)
v2 = v0.narrow(2, 1, 0)
with T.set_grad_enabled(False):
    v2.add_(0.25)
v7 = T.acos(v2.tanh().mul(0.9))
v8 = T.tensor([[-1.0]], dtype=T.float64, requires_grad=True)
v9 = v8 * 1
v10 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v9.copy_(v10)
v9.pow_(0.5)
loss = (v2 * v2.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss3 = (v9 * 2).sum()
loss3.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
