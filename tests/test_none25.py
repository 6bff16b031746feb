"""none25 (stop 25): engine and naming gaps against PyTorch 2.13, each run on both libraries
and compared: nodes that get no gradient, ``grad_fn.name()``, strides of empty tensors."""

from __future__ import annotations

import pytest

import retrograd

torch = pytest.importorskip("torch")


# ------------------------------------------------------- a node that gets no gradient at all


def _show(v):
    """What a hook saw, comparable across the libraries: None, a shape and sum, or a tuple."""
    if v is None:
        return None
    if isinstance(v, tuple):
        return tuple(_show(a) for a in v)
    return (tuple(v.shape), round(float(v.sum().item()), 6))


def _drops_second(m):
    """A custom Function whose backward gives its second input no gradient (None)."""

    class Drop(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2 + b * 3

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    return Drop


def _identity(m, log, materialize):
    class Ident(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(materialize)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            log.append(("backward", _show(g)))
            return g

    return Ident


def _run(program, m):
    log = []
    try:
        program(m, log)
    except RuntimeError as e:
        log.append(("raised", str(e)))
    return log


def _hooked_mul(m, log):
    """``y = x * w`` fed only None by a custom Function, hooks on everything around it."""
    x = m.ones(3, requires_grad=True)
    w = m.ones(3, requires_grad=True)
    y = x * w
    z = m.ones(3, requires_grad=True)
    out = _drops_second(m).apply(z, y)
    y.retain_grad()
    y.register_hook(lambda g: log.append(("y hook", _show(g))))
    y.grad_fn.register_prehook(lambda go: log.append(("pre", _show(go))))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", _show(gi), _show(go))))
    x.register_hook(lambda g: log.append(("x hook", _show(g))))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post acc", _show(t.grad))))
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("acc pre", _show(go))))
    acc.register_hook(lambda gi, go: log.append(("acc post", _show(gi), _show(go))))
    return out, (x, w, y, z)


def _backward(m, log):
    out, (x, w, y, z) = _hooked_mul(m, log)
    out.sum().backward()
    log.append(("grads", _show(x.grad), _show(w.grad), _show(y.grad), _show(z.grad)))


def _backward_create_graph(m, log):
    out, (x, w, y, z) = _hooked_mul(m, log)
    out.sum().backward(create_graph=True)
    log.append(("grads", _show(x.grad), _show(y.grad)))


def _backward_inputs(m, log):
    out, (x, w, y, z) = _hooked_mul(m, log)
    out.sum().backward(inputs=[x])
    log.append(("grads", _show(x.grad), _show(z.grad)))


def _grad_allow_unused(m, log):
    out, (x, w, y, z) = _hooked_mul(m, log)
    log.append(("result", _show(m.autograd.grad(out.sum(), [x, z, y], allow_unused=True))))


def _grad_materialize(m, log):
    out, (x, w, y, z) = _hooked_mul(m, log)
    log.append(("result", _show(m.autograd.grad(out.sum(), [x, z], materialize_grads=True))))


def _grad_nonleaf_only(m, log):
    out, (x, w, y, z) = _hooked_mul(m, log)
    log.append(("result", _show(m.autograd.grad(out.sum(), [y], allow_unused=True))))


def _unbind_all_undefined(m, log):
    x = m.ones(2, 3, requires_grad=True)
    a, b = x.unbind(0)
    out = _drops_second(m).apply(m.ones(3, requires_grad=True), a)
    a.register_hook(lambda g: log.append(("a hook", _show(g))))
    a.grad_fn.register_prehook(lambda go: log.append(("pre", _show(go))))
    a.grad_fn.register_hook(lambda gi, go: log.append(("post", _show(gi), _show(go))))
    x.register_hook(lambda g: log.append(("x hook", _show(g))))
    out.sum().backward()
    log.append(("x.grad", _show(x.grad)))


def _unbind_one_undefined(m, log):
    # the output without a gradient: its tensor hook sees None; the post-hook too (zeros
    # are the derivative's business, not what the node received)
    x = m.ones(2, 3, requires_grad=True)
    a, b = x.unbind(0)
    a.register_hook(lambda g: log.append(("a hook", _show(g))))
    b.register_hook(lambda g: log.append(("b hook", _show(g))))
    a.grad_fn.register_prehook(lambda go: log.append(("pre", _show(go))))
    a.grad_fn.register_hook(lambda gi, go: log.append(("post", _show(gi), _show(go))))
    b.sum().backward()
    log.append(("x.grad", _show(x.grad)))


def _custom_multi_one_undefined(m, log):
    class Two(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, g1, g2):
            log.append(("backward", _show(g1), _show(g2)))
            return g1 + g2

    x = m.ones(3, requires_grad=True)
    p, q = Two.apply(x)
    p.grad_fn.register_hook(lambda gi, go: log.append(("post", _show(gi), _show(go))))
    q.sum().backward()
    log.append(("x.grad", _show(x.grad)))


def _custom(materialize):
    def program(m, log):
        x = m.ones(3, requires_grad=True)
        y = _identity(m, log, materialize).apply(x)
        y.grad_fn.register_prehook(lambda go: log.append(("pre", _show(go))))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", _show(gi), _show(go))))
        x.register_hook(lambda g: log.append(("x hook", _show(g))))
        _drops_second(m).apply(m.ones(3, requires_grad=True), y).sum().backward()
        log.append(("x.grad", _show(x.grad)))

    return program


def _replacing(where):
    def program(m, log):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        out = _drops_second(m).apply(m.ones(3, requires_grad=True), y)
        if where == "tensor":
            y.register_hook(lambda g: m.ones(3))
        elif where == "pre":
            y.grad_fn.register_prehook(lambda go: (m.ones(3),))
        else:
            y.grad_fn.register_hook(lambda gi, go: (m.ones(3), None))
        out.sum().backward()

    return program


@pytest.mark.parametrize("program", [
    _backward, _backward_create_graph, _backward_inputs, _grad_allow_unused,
    _grad_materialize, _grad_nonleaf_only, _unbind_all_undefined, _unbind_one_undefined,
    _custom_multi_one_undefined, _custom(True), _custom(False),
    _replacing("tensor"), _replacing("pre"), _replacing("post"),
], ids=["backward", "backward_create_graph", "backward_inputs", "grad_allow_unused",
        "grad_materialize", "grad_nonleaf_only", "unbind_all_undefined",
        "unbind_one_undefined", "custom_multi_one_undefined", "custom_materialize",
        "custom_no_materialize", "replace_in_tensor_hook", "replace_in_prehook",
        "replace_in_posthook"])
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_node_without_gradient_runs_as_pytorch(program):
    assert _run(program, retrograd) == _run(program, torch)


# ------------------------------------------------------------------- grad_fn.name()


def _names(m):
    """name(), the class name and the repr's grad_fn of PyTorch's hand-written C++ nodes
    (CopySlices, AccumulateGrad, NotImplemented, CopyBackwards) and of a generated and a
    custom one."""
    x = m.ones(3, requires_grad=True)
    y = x.clone()
    y[0] = 2.0
    r = 1.5 % x
    custom = _drops_second(m).apply(x, x)
    copied = m.zeros(3)
    copied.copy_(x)
    out = []
    leaf = y.grad_fn.next_functions[0][0].next_functions[0][0]
    for fn, t in ((y.grad_fn, y), (leaf, None), (r.grad_fn, r), (custom.grad_fn, custom),
                  (copied.grad_fn, copied), ((x * 2).grad_fn, None)):
        out.append((fn.name(), type(fn).__name__,
                    None if t is None else repr(t).rsplit("grad_fn=", 1)[-1]))
    return out


def test_node_names_match_pytorch():
    assert _names(retrograd) == _names(torch)


def test_printed_names_stay_plain():
    # what retrograd prints names the class, as PyTorch's repr does
    x = retrograd.ones(3, requires_grad=True)
    y = x.clone()
    y[0] = 2.0
    assert "CopySlices" in repr(y) and "torch::" not in repr(y)
    from retrograd.autograd.trace_rules import describe_forward

    assert describe_forward(y.grad_fn) is not None
    assert describe_forward(y.grad_fn.next_functions[0][0].next_functions[0][0]) is not None


# ------------------------------------------------------------- strides of empty tensors


_EMPTY = {
    "zeros": lambda m: m.zeros(0, 3),
    "zeros_trailing": lambda m: m.zeros(3, 0),
    "ones_3d": lambda m: m.ones(0, 3, 0),
    "empty_1d": lambda m: m.empty(0),
    "tensor": lambda m: m.tensor([]),
    "randn": lambda m: m.randn(0, 5),
    "full": lambda m: m.full((4, 0, 2), 1.0),
    "arange": lambda m: m.arange(0),
    "slice_rows": lambda m: m.ones(4, 3)[2:2],
    "slice_mid": lambda m: m.ones(4, 3, 5)[:, 3:, :],
    "reshape": lambda m: m.zeros(0, 3).reshape(3, 0),
    "view": lambda m: m.zeros(0, 6).view(2, 0, 3),
    "t": lambda m: m.zeros(0, 3).t(),
    "transpose": lambda m: m.zeros(2, 0, 3).transpose(0, 2),
    "permute": lambda m: m.zeros(2, 0, 3).permute(2, 0, 1),
    "movedim": lambda m: m.zeros(2, 0, 3).movedim(0, 2),
    "expand": lambda m: m.zeros(0, 1).expand(0, 3),
    "unsqueeze": lambda m: m.zeros(0, 3).unsqueeze(1),
    "select": lambda m: m.zeros(2, 0, 3)[1],
    "chunk": lambda m: m.zeros(0, 4).chunk(2, 1)[1],
    "diagonal": lambda m: m.ones(0, 3).diagonal(),
    "add": lambda m: m.zeros(0, 3) + 1,
    "broadcast_mul": lambda m: m.zeros(0, 1) * m.ones(3),
    "sum": lambda m: m.zeros(0, 3, 4).sum(1),
    "clone": lambda m: m.zeros(0, 3).clone(),
    "cat": lambda m: m.cat([m.zeros(0, 3), m.zeros(0, 3)]),
    "empty_like": lambda m: m.empty_like(m.zeros(0, 3)),
    "index": lambda m: m.ones(4, 3)[m.tensor([], dtype=m.long)],
    "matmul": lambda m: m.ones(0, 3) @ m.ones(3, 4),
    "stack": lambda m: m.stack([m.zeros(0), m.zeros(0)], 1),
    "recorded": lambda m: m.zeros(0, 3, requires_grad=True) * 2,
}


@pytest.mark.parametrize("name", list(_EMPTY))
def test_empty_strides_match_pytorch(name):
    r, t = _EMPTY[name](retrograd), _EMPTY[name](torch)
    assert (tuple(r.shape), r.stride(), r.stride(-1), r.is_contiguous()) == \
        (tuple(t.shape), t.stride(), t.stride(-1), t.is_contiguous())
