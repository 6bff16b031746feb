"""What a node's post-hook (``grad_fn.register_hook(fn(grad_inputs, grad_outputs))``) sees
and may return, compared with PyTorch 2.13.

PyTorch checks a node's results (validate_outputs: their count, ``sum_to`` the input's
shape, the cast to its dtype) before the post-hooks run, and computes no gradient for an
edge that leads to no input of ``grad()``.  So for ``y = x * w`` with ``x`` (3, 4) and ``w``
(4,), the hook sees ``w``'s gradient as (4,), and a replacement it returns must have that
size and dtype.  retrograd reduces broadcasting at the edge, after the node; for a hooked
node it now reduces before the hooks too (engine._edge_grads).
"""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

from engine_helpers import close  # noqa: E402  (after the torch check)

RNG = np.random.default_rng(7)
A34 = RNG.standard_normal((3, 4))
A4 = RNG.standard_normal(4)
A31 = RNG.standard_normal((3, 1))
A0 = RNG.standard_normal(())

# op -> its forward on three operands (a, b, c); each broadcasts its operands
OPS = {
    "add": lambda lib, a, b, c: a + b,
    "sub_alpha": lambda lib, a, b, c: lib.sub(b, a, alpha=2),
    "mul": lambda lib, a, b, c: a * b,
    "div": lambda lib, a, b, c: a / b,
    "pow": lambda lib, a, b, c: a.abs().pow(b),
    "atan2": lambda lib, a, b, c: lib.atan2(a, b),
    "maximum": lambda lib, a, b, c: lib.maximum(a, b),
    "hypot": lambda lib, a, b, c: lib.hypot(a, b),
    "xlogy": lambda lib, a, b, c: lib.xlogy(a, b.abs()),
    "where": lambda lib, a, b, c: lib.where(c > 0, a, b),
    "lerp": lambda lib, a, b, c: lib.lerp(a, b, c),
    "addcmul": lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5),
    "addcdiv": lambda lib, a, b, c: lib.addcdiv(a, b, c.abs() + 1, value=0.5),
    "clamp": lambda lib, a, b, c: lib.clamp(a, min=b, max=c),
}
# (a, b, c): the broadcast falls on different operands (clamp only with the largest
# ``a``: PyTorch's own clamp derivative raises "output with shape [3, 1] doesn't match the
# broadcast shape [3, 4]" when ``a`` is the smaller one, so there is nothing to compare)
SHAPES = [(A34, A4, A31), (A31, A4, A0), (A0, A34, A4)]


def _leaves(lib, arrays, flags, dtypes=None):
    dtypes = dtypes or ["float64"] * len(arrays)
    return [lib.tensor(np.array(a, dtype=d), requires_grad=f)
            for a, f, d in zip(arrays, flags, dtypes)]


def _seen(grads):
    """What a hook got: per slot None or (shape, dtype name)."""
    return [None if g is None else (tuple(g.shape), str(g.dtype).split(".")[-1])
            for g in grads]


def _scaled_hook(log):
    """A post-hook that records what it sees and returns each gradient times 2, 3, ..."""
    def hook(grad_inputs, grad_outputs):
        log.append((_seen(grad_inputs), _seen(grad_outputs)))
        return tuple(None if g is None else g * (i + 2) for i, g in enumerate(grad_inputs))
    return hook


def _run(lib, fn, arrays, flags, mode):
    ins = _leaves(lib, arrays, flags)
    y = fn(lib, *ins)
    log = []
    y.grad_fn.register_hook(_scaled_hook(log))
    wanted = [t for t, f in zip(ins, flags) if f]
    if mode == "backward":
        y.sum().backward()
        grads = [t.grad for t in wanted]
    elif mode == "grad_last":  # grad() of one input: the other edges compute nothing
        grads = list(lib.autograd.grad(y.sum(), wanted[-1:], allow_unused=True))
    else:  # create_graph: the hook sees (and returns) recorded tensors
        grads = list(lib.autograd.grad(y.sum(), wanted, create_graph=True, allow_unused=True))
        log.append([None if g is None else g.grad_fn is not None for g in grads])
    return log, grads


@pytest.mark.parametrize("mode", ["backward", "grad_last", "create_graph"])
@pytest.mark.parametrize("flags", [(True, True, True), (True, False, True),
                                   (False, True, False)])
@pytest.mark.parametrize("op,shapes", [(op, k) for op in sorted(OPS)
                                       for k in range(len(SHAPES))
                                       if op != "clamp" or SHAPES[k][0].shape == (3, 4)])
def test_post_hook_sees_and_returns_reduced_gradients(op, shapes, flags, mode):
    arrays = SHAPES[shapes]
    rlog, rgrads = _run(R, OPS[op], arrays, flags, mode)
    tlog, tgrads = _run(torch, OPS[op], arrays, flags, mode)
    assert rlog == tlog
    for r, t in zip(rgrads, tgrads):
        close(r, t)


def test_issue_example_mul_bias():
    for lib in (torch, R):
        x = lib.ones(3, 4, requires_grad=True)
        w = lib.ones(4, requires_grad=True)
        y = x * w
        log = []
        y.grad_fn.register_hook(lambda gi, go, log=log: log.append([tuple(g.shape)
                                                                    for g in gi]))
        y.sum().backward()
        assert log == [[(3, 4), (4,)]], lib.__name__


def test_post_hook_sees_the_input_dtype():
    # float64 x times float32 w: w's gradient is cast to float32 before the hook
    out = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True], ["float64", "float32"])
        y = x * w
        log = []
        y.grad_fn.register_hook(_scaled_hook(log))
        y.sum().backward()
        out.append((log, x.grad, w.grad))
    assert out[0][0] == out[1][0] == [([((3, 4), "float64"), ((4,), "float32")],
                                       [((3, 4), "float64")])]
    close(out[0][1], out[1][1])
    close(out[0][2], out[1][2], rtol=1e-6)
    assert out[0][2].dtype == R.float32


def _raises_both(build, match):
    for lib in (torch, R):
        with pytest.raises(RuntimeError, match=match):
            build(lib)


def test_replacement_must_have_the_reduced_size():
    # returning a gradient of the broadcast (unreduced) shape is PyTorch's size error
    def build(lib):
        x, w = _leaves(lib, [A34, A4], [True, True])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0], lib.ones(3, 4, dtype=gi[1].dtype)))
        y.sum().backward()
    _raises_both(build, "has changed the size of value")


def test_replacement_must_keep_the_dtype():
    def build(lib):
        x, w = _leaves(lib, [A34, A4], [True, True], ["float32", "float32"])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0].double(), gi[1]))
        y.sum().backward()
    _raises_both(build, r"has changed the type of value \(was \w+\.FloatTensor got "
                        r"\w+\.DoubleTensor\)")


def test_replacement_cannot_fill_a_none_gradient():
    # w needs no gradient: the hook sees None there and may not put a tensor in its place
    def build(lib):
        x, w = _leaves(lib, [A34, A4], [True, False])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0], lib.ones(4, dtype=gi[0].dtype)))
        y.sum().backward()
    _raises_both(build, "can't replace a None gradient with a non-None value")


def test_replacement_cannot_fill_an_edge_grad_does_not_compute():
    # grad() of w alone: x's edge computes nothing, so the hook sees None there
    def build(lib):
        x, w = _leaves(lib, [A34, A4], [True, True])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (lib.ones(3, 4, dtype=gi[1].dtype), gi[1]))
        lib.autograd.grad(y.sum(), [w])
    _raises_both(build, "can't replace a None gradient with a non-None value")


def test_pre_hook_cannot_fill_an_undefined_output_gradient():
    # unbind's second output got no gradient: a pre-hook may not invent one
    def build(lib):
        x = lib.ones(2, 3, requires_grad=True)
        a, b = x.unbind(0)
        a.grad_fn.register_prehook(lambda go: tuple(lib.ones(3) for _ in go))
        a.sum().backward()
    _raises_both(build, "can't replace a None gradient with a non-None value")


def test_replacement_none_drops_that_gradient():
    out = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 3, None))
        y.sum().backward()
        out.append((x.grad, w.grad))
    close(out[0][0], out[1][0])
    assert out[0][1] is None and out[1][1] is None


def test_edge_to_a_multi_output_node():
    # the hooked mul's first edge goes to chunk's node (output 0, shape (1, 4))
    out = []
    x_np = RNG.standard_normal((2, 4))
    for lib in (R, torch):
        x, w = _leaves(lib, [x_np, A31], [True, True])
        a, b = x.chunk(2)
        y = a * w + b.sum()
        log = []
        y.grad_fn.next_functions[0][0].register_hook(_scaled_hook(log))
        y.sum().backward()
        out.append((log, x.grad, w.grad))
    assert out[0][0] == out[1][0]
    assert out[0][0][0][0] == [((1, 4), "float64"), ((3, 1), "float64")]
    close(out[0][1], out[1][1])
    close(out[0][2], out[1][2])


def _broadcasting_function(lib):
    class Scale(lib.autograd.Function):
        # returns its gradients unreduced: the engine sums them to the inputs' shapes
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x
    return Scale


def test_custom_function_gradients_are_reduced_before_its_post_hooks():
    out = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True])
        y = _broadcasting_function(lib).apply(x, w)
        log = []
        y.grad_fn.register_hook(_scaled_hook(log))
        y.sum().backward()
        out.append((log, x.grad, w.grad))
    assert out[0][0] == out[1][0]
    assert out[0][0][0][0] == [((3, 4), "float64"), ((4,), "float64")]
    close(out[0][1], out[1][1])
    close(out[0][2], out[1][2])


@pytest.mark.parametrize("sa,sb", [((2, 3, 4, 5), (3, 5, 6)), ((1, 4, 5), (2, 5, 6)),
                                   ((4, 5), (2, 5, 6)), ((2, 3, 4, 5), (5, 6))])
def test_broadcast_matmul(sa, sb):
    # retrograd's matmul is one node (tests/fuzz/README.md: graph granularity), PyTorch's a
    # chain ending in bmm/mm and views: its hook sees the operands' own shapes (not the
    # (3, 5, 6) operand broadcast to (2, 3, 5, 6)), and scaling them all scales the leaves'
    # gradients as scaling the chain's last node does in PyTorch
    a_np, b_np = RNG.standard_normal(sa), RNG.standard_normal(sb)
    log = []
    a, b = _leaves(R, [a_np, b_np], [True, True])
    y = a @ b
    y.grad_fn.register_hook(
        lambda gi, go: log.append(_seen(gi)) or tuple(g * 2 for g in gi))
    y.sum().backward()
    assert log == [[(sa, "float64"), (sb, "float64")]]
    ta, tb = _leaves(torch, [a_np, b_np], [True, True])
    ty = ta @ tb
    ty.grad_fn.register_hook(lambda gi, go: tuple(g * 2 for g in gi))
    ty.sum().backward()
    close(a.grad, ta.grad)
    close(b.grad, tb.grad)


def test_node_called_directly_returns_unreduced_gradients():
    # grad_fn(g) runs the derivative alone, without the engine's checks: PyTorch's too
    shapes = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True])
        y = x * w
        gi = y.grad_fn(lib.ones(3, 4, dtype=y.dtype))
        shapes.append([tuple(g.shape) for g in gi])
    assert shapes[0] == shapes[1] == [(3, 4), (3, 4)]


def test_tensor_hook_on_a_broadcast_leaf_sees_its_shape():
    seen = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True])
        w.register_hook(lambda g: seen.append(tuple(g.shape)))
        (x * w).sum().backward()
    assert seen == [(4,), (4,)]


def test_second_order_through_a_hooked_broadcast_node():
    out = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True])
        y = x * w * x
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, gi[1] * 3))
        gx, gw = lib.autograd.grad(y.sum(), [x, w], create_graph=True)
        (gw * gw).sum().backward()
        out.append((gx, gw, x.grad, w.grad))
    for r, t in zip(*out):
        close(r, t)


def _returning_for_w(lib, what):
    class Scale(lib.autograd.Function):
        # returns something for ``w`` even when ``w`` needs no gradient
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            other = {"double": (g * x).double(), "other shape": lib.ones(7), "int": 5}[what]
            return g * w, other
    return Scale


@pytest.mark.parametrize("what", ["double", "other shape"])
def test_custom_function_gradient_for_an_input_without_grad_reaches_post_hooks(what):
    # PyTorch keeps what a custom backward returns for an input that needs no gradient (its
    # PyNode checks only that it is a tensor): a post-hook sees it as returned, and the
    # engine sends nothing along the missing edge
    out = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, False], ["float32", "float32"])
        y = _returning_for_w(lib, what).apply(x, w)
        log = []
        y.grad_fn.register_hook(_scaled_hook(log))
        y.sum().backward()
        out.append((log, x.grad))
    assert out[0][0] == out[1][0]
    close(out[0][1], out[1][1])


def test_custom_function_non_tensor_for_an_input_without_grad_raises():
    def build(lib):
        x, w = _leaves(lib, [A34, A4], [True, False])
        _returning_for_w(lib, "int").apply(x, w).sum().backward()
    _raises_both(build, r"expected Variable or None \(got int\)")


def test_grad_of_a_non_leaf_input_through_a_hooked_node():
    # grad() of the non-leaf w2 (broadcast in x * w2): its edge computes, x's does not
    out = []
    for lib in (R, torch):
        x, w = _leaves(lib, [A34, A4], [True, True])
        w2 = w.exp()
        y = x * w2
        log = []
        y.grad_fn.register_hook(_scaled_hook(log))
        (g,) = lib.autograd.grad(y.sum(), [w2])
        out.append((log, g))
    assert out[0][0] == out[1][0] == [([None, ((4,), "float64")], [((3, 4), "float64")])]
    close(out[0][1], out[1][1])
