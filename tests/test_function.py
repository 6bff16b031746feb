"""Custom ``autograd.Function``: ctx, saved tensors, multiple outputs, mark_dirty /
mark_non_differentiable, setup_context, once_differentiable, errors; against PyTorch 2.13.
"""

import gc
import weakref

import numpy as np
import pytest

import retrograd as R
from retrograd.autograd import Function as RFunction

torch = pytest.importorskip("torch")

from engine_helpers import _custom_functions, both_raise, close, rand_pair  # noqa: E402


def test_custom_function_saved_tensors_and_non_tensor_args():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 2.5)
        assert type(y.grad_fn).__name__ == "CubeBackward"
        y.sum().backward()
        res.append((y, x.grad))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_multiple_outputs():
    res = []
    for lib, (a, b) in ((R, (rand_pair(3)[0], rand_pair(3, seed=1)[0])),
                        (torch, (rand_pair(3)[1], rand_pair(3, seed=1)[1]))):
        SplitTwo = _custom_functions(lib)[1]
        p, s = SplitTwo.apply(a, b)
        (p.sin() + s * s).sum().backward()
        res.append((p, s, a.grad, b.grad))
        # only one output used: the other gets a zero gradient (materialized)
        a.grad = b.grad = None
        p, s = SplitTwo.apply(a, b)
        p.sum().backward()
        res[-1] += (a.grad, b.grad)
    for x, y in zip(*res):
        close(x, y)


def test_custom_function_needs_input_grad_and_none_grads():
    res = []
    for lib, (a, c) in ((R, (rand_pair(3)[0], rand_pair(3, 1, requires_grad=False)[0])),
                        (torch, (rand_pair(3)[1], rand_pair(3, 1, requires_grad=False)[1]))):
        Needs = _custom_functions(lib)[2]
        y = Needs.apply(a, c)
        y.sum().backward()
        res.append((y.grad_fn.seen if hasattr(y.grad_fn, "seen") else None, a.grad))
    assert res[0][0] == res[1][0] == (True, False)
    close(res[0][1], res[1][1])


def test_custom_function_mark_non_differentiable():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        WithIndex = _custom_functions(lib)[3]
        y, idx = WithIndex.apply(x)
        assert not idx.requires_grad and y.requires_grad
        y.sum().backward()
        res.append((y, x.grad, idx))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_wrong_number_of_grads():
    (ra, ta), (rb, tb) = rand_pair(3), rand_pair(3, seed=1)
    RWrong = _custom_functions(R)[4]
    TWrong = _custom_functions(torch)[4]
    both_raise(lambda: RWrong.apply(ra, rb).sum().backward(),
               lambda: TWrong.apply(ta, tb).sum().backward(),
               match="incorrect number of gradients")


def test_custom_function_higher_order():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 2.0).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        res.append((g, gg))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_no_grad_inputs_does_not_record():
    for lib, x in zip((R, torch), rand_pair(3, requires_grad=False)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 1.0)
        assert y.grad_fn is None and not y.requires_grad
        with lib.no_grad():
            (xx,) = rand_pair(3)[:1] if lib is R else rand_pair(3)[1:]
            assert Cube.apply(xx, 1.0).grad_fn is None


def test_custom_function_saved_tensor_freed_after_backward():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 1.0)
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            _ = y.grad_fn.saved_tensors
        res.append(str(info.value))
    assert "retain_graph" in res[0] or "backward" in res[0]


def test_function_set_materialize_grads_false_and_returning_input():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.set_materialize_grads(False)
                return a * 2, a * 3

            @staticmethod
            def backward(ctx, g1, g2, seen=seen):
                seen.append((g1 is None, g2 is None))
                out = 0
                if g1 is not None:
                    out = out + g1 * 2
                if g2 is not None:
                    out = out + g2 * 3
                return out

        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 5

        p, _ = Two.apply(x)
        p.sum().backward()
        y = Ident.apply(x)
        assert y is not x and y.grad_fn is not None
        y.sum().backward()
        res.append((seen, x.grad))
    assert res[0][0] == res[1][0]
    close(res[0][1], res[1][1])


def test_function_returning_extra_none_grads_ok_and_extra_tensor_errors():
    for lib, x in zip((R, torch), rand_pair(3)):
        class ExtraNone(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        ExtraNone.apply(x).sum().backward()

        class ExtraTensor(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, g

        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            ExtraTensor.apply(x).sum().backward()


def test_custom_function_mark_dirty_in_place():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class MulTwoInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.mark_dirty(a)
                return a.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y = x * 1
        v = y._version
        z = MulTwoInPlace.apply(y)
        (z * z).sum().backward()
        res.append((z, x.grad, y._version - v, type(z.grad_fn).__name__, z is y))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])
    assert res[0][2:] == res[1][2:]
    # on a leaf that requires grad it is refused, as any in-place op
    fns = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.mark_dirty(a)
                return a.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        fns.append(lambda fn=Dirty, x=x: fn.apply(x))
    both_raise(fns[0], fns[1], match="leaf Variable")


def test_custom_function_saving_its_output_higher_order():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a.exp()
                ctx.save_for_backward(out)
                return out

            @staticmethod
            def backward(ctx, g):
                (out,) = ctx.saved_tensors
                return g * out

        y = Exp.apply(x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        res.append((g, gg))
    for a, b in zip(*res):
        close(a, b)


def test_reentrant_backward_inside_custom_function():
    # the checkpointing pattern: backward recomputes the forward and calls autograd.grad
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        class Checkpoint(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return (a.sin() * a).exp()

            @staticmethod
            def backward(ctx, g, lib=lib):
                (a,) = ctx.saved_tensors
                with lib.enable_grad():
                    a2 = a.detach().requires_grad_(True)
                    out = (a2.sin() * a2).exp()
                    (ga,) = lib.autograd.grad(out, a2, g)
                return ga

        (Checkpoint.apply(x) * 2).sum().backward()
        res.append(x.grad)
    close(*res)


def test_function_saving_its_output_makes_no_reference_cycle():
    class Exp(RFunction):
        @staticmethod
        def forward(ctx, a):
            out = a.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    x = R.tensor(np.linspace(0, 1, 5), requires_grad=True)
    gc.disable()
    try:
        y = Exp.apply(x)
        ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
        del y
        assert ref() is None and node_ref() is None  # freed by reference counting alone
    finally:
        gc.enable()
    y = Exp.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.linspace(0, 1, 5)))
    # an in-place change of the saved output is caught, naming the node
    y = Exp.apply(x)
    loss = y.sum()
    with R.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward"):
        loss.backward()


def test_function_setup_context_style():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(a, k):
                return a * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                a, k = inputs
                ctx.save_for_backward(a)
                ctx.k = k

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * ctx.k, None

        y = Mul.apply(x, 2.5)
        (y * y).sum().backward()
        res.append((y, x.grad, type(y.grad_fn).__name__))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])
    assert res[0][2] == res[1][2] == "MulBackward"


def test_once_differentiable():
    from torch.autograd.function import once_differentiable as t_once

    from retrograd.autograd.function import once_differentiable as r_once

    res = []
    for lib, once, x in ((R, r_once, rand_pair(3)[0]), (torch, t_once, rand_pair(3)[1])):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 3

            @staticmethod
            @once
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * 3 * a ** 2

        (g,) = lib.autograd.grad((Cube.apply(x) * x).sum(), x)
        res.append(g)
        # the gradient reaching Cube's backward (x) requires grad: its result is wrapped
        (g2,) = lib.autograd.grad((Cube.apply(x) * x).sum(), x, create_graph=True)
        close(g2, g)
        # (torch's grad() skips the error node, which hangs off a detached copy, and
        # silently drops that term; retrograd raises there too, so backward() is compared)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            g2.sum().backward()
    close(*res)


def test_custom_function_bad_gradients_errors_match_torch():
    fns = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class BadShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g[:2]

        class NotTensor(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return 5.0

        class Broadcast(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g, lib=lib):
                return lib.ones(2, 3, dtype=lib.float64)  # summed down to the input's shape

        Broadcast.apply(x).sum().backward()
        fns.append((lambda f=BadShape, x=x: f.apply(x).sum().backward(),
                    lambda f=NotTensor, x=x: f.apply(x).sum().backward(), x.grad))
    (r_shape, r_type, r_grad), (t_shape, t_type, t_grad) = fns
    both_raise(r_shape, t_shape, match=r"invalid gradient at index 0 - got \[2\] but expected "
                                       r"shape compatible with \[3\]")
    both_raise(r_type, t_type, match=r"expected Variable or None \(got float\)")
    close(r_grad, t_grad)


def _edges(fn):
    """next_functions as (node class name, output_nr) pairs: comparable across libraries."""
    return [(None if n is None else n.name().replace("torch::autograd::", ""), nr)
            for n, nr in fn.next_functions]


def test_function_non_tensor_args_get_no_edge_like_torch():
    """One next_functions entry per tensor argument only, in order (numbers, None and lists
    get none; a tensor not requiring grad gets (None, 0)); backward still returns one
    gradient per forward input."""
    res = []
    for lib in (R, torch):
        class Mix(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b, nothing, lst, c):
                ctx.k = k
                return a * k + b * 2 + c

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None, g * 2, None, None, g * 3

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])  # needs no gradient: an edge to nothing
        c = lib.tensor([5.0, 6.0], requires_grad=True).exp()
        out = Mix.apply(a, 2.5, b, None, [a, c], c)
        edges = _edges(out.grad_fn)
        out.sum().backward()
        res.append((edges, a.grad.tolist(), c.grad_fn.name()))
    assert res[0] == res[1]
    assert len(res[0][0]) == 3


def test_function_gradient_for_a_non_tensor_input_raises_like_torch():
    errors = []
    for lib in (R, torch):
        class NumberGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, a):
                return a * k

            @staticmethod
            def backward(ctx, g):
                return 5, g  # a gradient for the number k

        class TooFew(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, a):
                return a * k

            @staticmethod
            def backward(ctx, g):
                return (g,)  # one gradient for two inputs

        class Fine(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, a):
                return a * k

            @staticmethod
            def backward(ctx, g):
                return None, g * 2

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        Fine.apply(3.0, a).sum().backward()
        errors.append((lambda f=NumberGrad, a=a: f.apply(2.0, a).sum().backward(),
                       lambda f=TooFew, a=a: f.apply(2.0, a).sum().backward(), a.grad.tolist()))
    (r_num, r_few, r_grad), (t_num, t_few, t_grad) = errors
    both_raise(r_num, t_num, match="returned a gradient different than None at position 1, "
                                   "but the corresponding forward input was not a Variable")
    both_raise(r_few, t_few, match=r"incorrect number of gradients \(expected 2, got 1\)")
    assert r_grad == t_grad
