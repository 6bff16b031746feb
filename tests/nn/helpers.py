"""What the nn tests share: moving values between retrograd and PyTorch, and one
differential check of a module against its PyTorch twin (same weights copied in)."""

from __future__ import annotations

import numpy as np

import retrograd as T


def to_torch(torch, x, requires_grad=False):
    t = torch.tensor(np.array(x.detach().numpy()))
    return t.requires_grad_(requires_grad)


def to_rg(t, requires_grad=False):
    return T.tensor(t.detach().numpy().copy(), requires_grad=requires_grad)


def copy_weights(rg_module, th_module):
    """Load PyTorch's parameters and buffers into the retrograd module (its load_state_dict)."""
    result = rg_module.load_state_dict({k: to_rg(v) for k, v in th_module.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys


def close(a, b, tol):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def compare_module(torch, rg_module, th_module, inputs, dtype="float32", tol=None):
    """Forward and backward through both modules with the same weights and inputs; compare
    outputs, dtypes, input gradients and parameter gradients."""
    tol = tol or (1e-5 if dtype == "float32" else 1e-10)
    th_module = th_module.to(getattr(torch, dtype))
    rg_module = rg_module.to(getattr(T, dtype))
    copy_weights(rg_module, th_module)
    arrays = [np.asarray(x) for x in inputs]
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]
    rg_in = [T.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    th_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out_rg, out_th = rg_module(*rg_in), th_module(*th_in)
    assert str(out_rg.dtype).split(".")[-1] == str(out_th.dtype).split(".")[-1]
    close(out_rg, out_th, tol)
    g = np.random.default_rng(0).standard_normal(tuple(out_th.shape)).astype(dtype)
    out_rg.backward(T.tensor(g))
    out_th.backward(torch.tensor(g))
    for a, b in zip(rg_in, th_in):
        if b.grad is not None:
            close(a.grad, b.grad, tol)
    th_params = dict(th_module.named_parameters())
    for name, p in rg_module.named_parameters():
        assert (p.grad is None) == (th_params[name].grad is None), name
        if p.grad is not None:
            close(p.grad, th_params[name].grad, tol)
    return out_rg, out_th


def check_layer(torch, factory, inputs, dtype="float64", tol=None, constant=()):
    """One row of a layer table: the module built by ``factory(nn)`` for retrograd and for
    PyTorch has the same repr, the same state_dict keys and shapes, and (torch's weights
    copied in) the same outputs, input gradients and parameter gradients. The inputs at the
    positions in ``constant`` are passed detached (targets a loss cannot differentiate)."""
    from retrograd import nn

    rg_module, th_module = factory(nn), factory(torch.nn)
    assert repr(rg_module) == repr(th_module)
    rg_state, th_state = rg_module.state_dict(), th_module.state_dict()
    assert list(rg_state) == list(th_state)
    for key, value in th_state.items():
        assert tuple(rg_state[key].shape) == tuple(value.shape), key
        assert str(rg_state[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1], key
    for module in (rg_module, th_module) if constant else ():
        module.forward = _detaching(module.forward, constant)
    return compare_module(torch, rg_module, th_module, inputs, dtype=dtype, tol=tol)


def _detaching(forward, positions):
    def call(*args):
        return forward(*(a.detach() if i in positions else a for i, a in enumerate(args)))
    return call


def compare_double_backward(torch, factory, inputs):
    """Double backward through a layer against PyTorch: the gradient of
    ``sum(grad(sum(out ** 2), inputs and params) ** 2)`` for inputs and parameters."""
    import retrograd as T
    from retrograd import nn

    rg_module, th_module = factory(nn).double(), factory(torch.nn).double()
    copy_weights(rg_module, th_module)
    results = []
    for lib, module in ((T, rg_module), (torch, th_module)):
        xs = [lib.tensor(np.asarray(x, dtype=np.float64), requires_grad=True) for x in inputs]
        leaves = xs + list(module.parameters())
        out = module(*xs)
        grads = lib.autograd.grad((out * out).sum(), leaves, create_graph=True)
        sum(((g * g).sum() for g in grads)).backward()
        results.append([leaf.grad for leaf in leaves])
    for a, b in zip(*results):
        close(a, b, 1e-9)
