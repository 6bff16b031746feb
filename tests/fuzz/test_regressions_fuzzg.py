"""Fuzzer findings of stop 19 fixed by fuzzG (issue 7): tensors PyTorch's nodes save (index
and mask tensors, sources, inputs and results of multi-output ops) and retrograd did not
version-check, the index-shaped source gradient of scatter, and derivatives PyTorch returns
without a graph.  Each program must run alike in retrograd and PyTorch (values, dtypes,
shapes, grad_fn names, gradients, exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # scatter's source gradient is PyTorch's grad.gather(dim, index), index-shaped, which its
    # engine refuses for a larger src (seed 11001870)
    "scatter_add_src_larger_than_index": """
v1 = T.tensor([[-0.0]], dtype=T.float64)
v2 = T.tensor([[0]], dtype=T.int64)
v3 = T.tensor([[-1.0, 0.0, 0.0]], dtype=T.float64, requires_grad=True)
v1.scatter_add_(0, v2, v3)
v7 = v1.trunc()
loss = (v7 * v7.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the same for scatter_reduce's sum and mean (seed 11002663)
    "scatter_reduce_src_larger_than_index": """
v0 = T.tensor([[1.0], [0.0], [1.0]], dtype=T.float64)
v1 = v0.exp()
v6 = T.tensor([[2]], dtype=T.int64)
v7 = T.tensor([[-0.0], [-0.0]], dtype=T.float64, requires_grad=True)
v8 = v1.scatter_reduce(0, v6, v7, 'sum', include_self=False)
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
try:
    loss.backward(retain_graph=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # and for scatter (seed 11016870)
    "scatter_src_larger_than_index": """
v0 = T.tensor([[3, 1, 0]], dtype=T.int64)
v1 = v0.erf()
v2 = v1.narrow(1, 2, 1)
v3 = v2.abs()
v10 = T.tensor([[0]], dtype=T.int64)
v11 = T.tensor([[1.0], [1.0], [1.0]], dtype=T.float32, requires_grad=True)
v12 = v3.scatter(-1, v10, v11)
loss = (v11 * v11.detach().tanh()).sum() + (v12 * v12.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v11], retain_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the index of index_copy, saved by IndexCopyBackward0, changed in place (seed 11011618)
    "index_copy_index_changed": """
v0 = T.tensor([-1.0, -2.0], dtype=T.float64)
v2 = v0.tanh()
v3 = T.tensor([0, 1], dtype=T.int64)
v4 = T.tensor([-1.0, -2.0], dtype=T.float64, requires_grad=True)
v0.index_copy_(0, v3, v4)
v3.sgn_()
v2 -= v0
v5 = v2.diag(-1)
loss = (v5 * v5.detach().tanh()).sum()
try:
    loss.backward(retain_graph=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the index of scatter_add (seed 11016151)
    "scatter_add_index_changed": """
v0 = T.zeros((0,), dtype=T.float64)
v1 = v0.var(dim=0, keepdim=True)
v2 = v1.detach()
v3 = T.tensor([0], dtype=T.int64)
v4 = T.tensor([3.0], dtype=T.float64, requires_grad=True)
v2.scatter_add_(0, v3, v4)
v3.ceil_()
v9 = T.stack([v4, v2], dim=0)
loss = (v9 * v9.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the source of index_add, saved when it requires grad (seed 11006070)
    "index_add_source_changed": """
v0 = T.tensor([0.0], dtype=T.float64, requires_grad=True)
v1 = T.log1p(v0.abs().add(0.5))
v2 = T.tensor([0, 0], dtype=T.int64)
v3 = T.tensor([2.0, -2.0], dtype=T.float64, requires_grad=True)
v1.index_add_(0, v2, v3)
with T.no_grad():
    v3.add_(v3)
v9 = (v0 * v0.detach().tanh()).sum() + (v1 * v1.detach().tanh()).sum()
loss = v9 + (v3 * v3.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v0, v3], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the source of index_copy (seed 11007941)
    "index_copy_source_changed": """
v1 = T.tensor(2.0, dtype=T.float64, requires_grad=True)
v2 = T.tensor([[-1.0], [-1.0], [-0.0]], dtype=T.float64, requires_grad=True)
v3 = T.remainder(v1, v2.abs().add(0.5))
v4 = T.tensor([0, 2, 1], dtype=T.int64)
v5 = T.tensor([[-1.0], [-1.0], [1.0]], dtype=T.float64, requires_grad=True)
v3.index_copy_(0, v4, v5)
with T.no_grad():
    v5.sign_()
loss = (v3 * v3.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v1, v2, v5], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # (seed 11014689)
    "index_add_source_changed_f32": """
v1 = T.tensor([[3.0, 0.0, 1.0]], dtype=T.float32, requires_grad=True)
v2 = T.cosh(v1)
v3 = T.tensor(0, dtype=T.int64)
v4 = T.tensor([[-1.0, -1.0, 2.0]], dtype=T.float32, requires_grad=True)
v2.index_add_(0, v3, v4)
with T.set_grad_enabled(False):
    v4.clamp_(-0.7, 0.5)
loss = (v2 * v2.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v1, v4], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the indices of index_put, saved by IndexPutBackward0 (seed 11011288)
    "index_put_index_changed": """
v0 = T.tensor([-0.0], dtype=T.float64, requires_grad=True)
v1 = T.tensor(0, dtype=T.int64)
v2 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v3 = v0.index_put((v1,), v2, accumulate=True)
T.nn.functional.hardtanh_(v1)
loss = (v3 * v3.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v0, v2], retain_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the index and mask tensors other nodes save: an in-place change after the op breaks
    # backward in PyTorch (found replaying the seeds above; one program per op)
    "getitem_index_changed": """
v0 = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([1, 0], dtype=T.int64)
v2 = v0[v1, 1:]
v1.add_(0)
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "setitem_mask_changed": """
v0 = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
v1 = v0 + 1
v2 = T.tensor([True, False])
v1[v2] = 2.0
v2.logical_not_()
loss = (v1 * v1.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "where_condition_changed": """
v0 = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
v1 = v0 > 0
v2 = T.where(v1, v0, 0.5)
v3 = v0.masked_fill(v1, 1.5)
v1.logical_not_()
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v3 * v3.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "take_put_index_changed": """
v0 = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([3, 0], dtype=T.int64)
v2 = v0.take(v1)
v3 = T.tensor([5.0, 6.0], dtype=T.float64, requires_grad=True)
v4 = v0.put(v1, v3)
with T.no_grad():
    v3.mul_(2)
v5 = T.tensor([1, 0], dtype=T.int64)
v6 = T.nn.functional.embedding(v5, v0)
v1.add_(0)
v5.add_(0)
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v4 * v4.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss3 = (v6 * v6.detach().tanh()).sum()
try:
    loss3.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # aminmax's results, saved by AminmaxBackward0 (seeds 11008523, 11011086)
    "aminmax_min_changed": """
v0 = T.tensor(-1.0, dtype=T.float64)
v2 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v3 = T.hypot(v0, v2)
v4 = v3.aminmax().min
v4.div_(2)
loss = (v3 * v3.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "aminmax_max_changed": """
v3 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v7 = (v3) % 2
v10 = v7.aminmax(dim=0).max
v10.square_()
loss = (v7 * v7.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v3], retain_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # std_mean's std, saved by StdMeanBackward0 as result0 (seed 11011483)
    "std_mean_std_changed": """
v0 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
v4 = T.std_mean(v0, dim=-2)[0]
v4.abs_().add_(0.5).log_()
loss = (v4 * v4.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # slogdet's sign, saved by LinalgSlogdetBackward0 (seed 11012945)
    "slogdet_sign_changed": """
v0 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v1 = T.linalg.slogdet((v0 + 3 * T.eye(2, dtype=v0.dtype)))[0]
v2 = T.tensor(-0.0, dtype=T.float64)
v1.remainder_(v2.abs().add(0.5))
loss = (v1 * v1.detach().tanh()).sum()
try:
    loss.backward(inputs=[v0])
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # cummin's input, saved by CumminBackward0 (seed 11008651)
    "cummin_input_changed": """
v0 = T.tensor([[-3.0]], dtype=T.float64, requires_grad=True)
v1 = T.frac(v0)
v3 = T.tensor(1.0, dtype=T.float64)
v4 = (v1).hypot(v3)
v5 = T.sin(v4)
v6 = v5.cummin(1).values
v5.pow_(3)
v9 = (v4 * v4.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
loss = v9 + (v6 * v6.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # a pool's input, saved by its node (seeds 11013657, 11002532)
    "max_pool1d_input_changed": """
v4 = T.tensor([[2.0], [-1.0], [-0.0]], dtype=T.float64, requires_grad=True)
v5 = v4.mT
v6 = T.round(v5)
v7 = T.nn.functional.max_pool1d(v6, 2, stride=2, padding=0)
v6.cosh_()
loss = (v7 * v7.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v4], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "adaptive_avg_pool1d_input_changed": """
v1 = T.tensor([[-1.0]], dtype=T.float64, requires_grad=True)
v2 = T.nn.functional.adaptive_avg_pool1d(v1, 2)
v4 = T.tensor(-1.0, dtype=T.float64)
v5 = (v2).minimum(v4)
v6 = (v5) * -2
v7 = v1.detach()
v7.abs_().add_(0.5).rsqrt_()
loss = (v6 * v6.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the indices returned beside the values (sort, topk, kthvalue, median, mode, max(dim),
    # cummax, max_pool's return_indices) are saved by PyTorch's node; retrograd's derivative
    # scattered through the same array, so an in-place change of them moved the gradient
    # silently (found replaying the seeds above)
    "sort_topk_indices_changed": """
v0 = T.tensor([[3.0, 1.0, 2.0]], dtype=T.float64, requires_grad=True)
v1 = v0.sort(1)
v2 = v1[0]
v3 = v1[1]
v4 = v0.topk(2)
v5 = v4[0]
v6 = v4[1]
v3.zero_()
v6.zero_()
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v5 * v5.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "max_median_indices_changed": """
v0 = T.tensor([[3.0, 1.0, 2.0]], dtype=T.float64, requires_grad=True)
v1 = v0.max(1)
v2 = v1[0]
v3 = v1[1]
v4 = v0.median(1)
v5 = v4[0]
v6 = v4[1]
v3.zero_()
v6.zero_()
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v5 * v5.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "kthvalue_cummax_indices_changed": """
v0 = T.tensor([[3.0, 1.0, 2.0]], dtype=T.float64, requires_grad=True)
v1 = v0.kthvalue(2, 1)
v2 = v1[0]
v3 = v1[1]
v4 = v0.cummax(1)
v5 = v4[0]
v6 = v4[1]
v3.zero_()
v6.zero_()
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v5 * v5.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "mode_max_pool_indices_changed": """
v0 = T.tensor([[3.0, 1.0, 2.0]], dtype=T.float64, requires_grad=True)
v1 = v0.mode(1)
v2 = v1[0]
v3 = v1[1]
v4 = T.nn.functional.max_pool1d(v0, 2, return_indices=True)
v5 = v4[0]
v6 = v4[1]
v3.zero_()
v6.zero_()
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v5 * v5.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # cumprod along a dim of size 1 (or of at most one element) and logcumsumexp of an empty
    # or 0-d tensor return the gradient itself, as PyTorch's, so under create_graph it needs
    # no grad when the incoming one needs none (seeds 11009818, 11028281, 11042137, 11047371,
    # 11043217, 11051055)
    "cumprod_size_one_returns_grad": """
v8 = T.tensor([[2.0]], dtype=T.float64, requires_grad=True)
v9 = v8.cumprod(-2)
loss = (v8 * v8.detach().tanh()).sum() + (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v8], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "cumprod_empty_returns_grad": """
v3 = T.zeros((0, 1, 1), dtype=T.float64, requires_grad=True)
v5 = v3.cumprod(2)
loss = (v5 * v5.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "logcumsumexp_empty_returns_grad": """
v0 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
v1 = v0.logcumsumexp(1)
loss = (v1 * v1.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # kron's operands are PyTorch's _unsafe_view of the inputs, fresh tensors: one that came
    # to require grad after the product is not differentiated (seed 11000439)
    "kron_operand_required_grad_later": """
v1 = T.tensor(-0.0, dtype=T.float64, requires_grad=True)
v3 = T.tensor(1.0, dtype=T.float64)
v4 = T.kron(v1, v3)
v3.requires_grad_()
loss = (v4 * v4.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the input of sort changed rank in place under no_grad after std saved its result:
    # PyTorch raises (the version check of std's result), retrograd raised NumPy's ValueError
    # in sort's derivative (seed 11022280)
    "select_input_rank_changed": """
v1 = T.tensor([3.0], dtype=T.float64, requires_grad=True)
v3 = v1.std(dim=-1, keepdim=True)
with T.no_grad():
    v3.unsqueeze_(-1)
v9 = v3.msort()
loss = (v9 * v9.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # nll_loss's target (and input, weight), saved by NllLossBackward0: the derivative read
    # the target's array itself, so changing it in place moved the gradient silently
    "nll_loss_target_changed": """
v0 = T.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([0, 2], dtype=T.int64)
v2 = T.nn.functional.nll_loss(v0, v1)
v3 = T.nn.functional.cross_entropy(v0, v1)
v1.zero_()
loss = v2 * 1.0
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = v3 * 1.0
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # more saved integer tensors: frexp's exponent (its derivative reads the array), the
    # target of multi_margin_loss and multilabel_margin_loss, embedding_bag's indices and
    # offsets, max_unpool's indices
    "frexp_exponent_changed": """
v0 = T.tensor([[3.0, -1.5, 0.25]], dtype=T.float64, requires_grad=True)
v1 = T.frexp(v0)
v2 = v1[0]
v3 = v1[1]
v4 = T.tensor([2], dtype=T.int64)
v5 = T.nn.functional.multi_margin_loss(v0, v4)
v3.zero_()
v4.zero_()
loss = (v2 * v2.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = v5 * 1.0
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "embedding_bag_indices_changed": """
v0 = T.tensor([[3.0, -1.5], [0.25, 1.0], [2.0, 0.5]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([0, 2, 1], dtype=T.int64)
v2 = T.tensor([0, 2], dtype=T.int64)
v3 = T.nn.functional.embedding_bag(v1, v0, v2)
v4 = T.tensor([[[0, 3]]], dtype=T.int64)
v5 = T.nn.functional.max_unpool1d(v0[None, :1], v4, 2)
v1.zero_()
v4.zero_()
loss = (v3 * v3.detach().tanh()).sum()
try:
    loss.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
loss2 = (v5 * v5.detach().tanh()).sum()
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzg(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
