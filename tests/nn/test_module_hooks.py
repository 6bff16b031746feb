"""Module hooks against PyTorch: forward (pre-)hooks with kwargs, prepend and always_call;
full backward hooks and backward pre-hooks (what they receive, in which order, and
replacing gradients); state-dict hooks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
from retrograd import nn

from .helpers import copy_weights


def arr(t):
    return None if t is None else np.round(t.detach().numpy().astype(np.float64), 5).tolist()


def both(torch):
    return [(T, nn), (torch, torch.nn)]


def test_forward_hooks_order_arguments_and_results(torch):
    def run(m, mnn):
        log = []
        lin = mnn.Linear(2, 2)
        lin.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
        lin.register_forward_pre_hook(lambda mod, args: log.append(("pre-first",)),
                                      prepend=True)

        def double_input(mod, args, kwargs):
            log.append(("pre-kw", sorted(kwargs)))
            return (args[0] * 2,), kwargs

        lin.register_forward_pre_hook(double_input, with_kwargs=True)
        lin.register_forward_hook(lambda mod, args, out: log.append(("fwd", arr(args[0]))))
        lin.register_forward_hook(
            lambda mod, args, kwargs, out: out + 1, with_kwargs=True)
        h = lin.register_forward_hook(lambda mod, args, out: log.append(("removed",)))
        h.remove()
        with m.no_grad():
            lin.weight.copy_(m.eye(2))
            lin.bias.zero_()
        out = lin(m.tensor([[1.0, 2.0]]))
        log.append(("out", arr(out)))
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1]
    assert logs[0][-1] == ("out", [[3.0, 5.0]])


def test_forward_pre_hook_may_return_a_single_value(torch):
    for m, mnn in both(torch):
        act = mnn.ReLU()
        act.register_forward_pre_hook(lambda mod, args: -args[0])
        assert arr(act(m.tensor([1.0, -2.0]))) == [0.0, 2.0]


def test_pre_hook_with_kwargs_bad_result(torch):
    msgs = []
    for m, mnn in both(torch):
        act = mnn.ReLU()
        act.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError) as info:
            act(m.zeros(1))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_always_call_hook_runs_when_forward_raises(torch):
    def run(m, mnn):
        log = []

        class Boom(mnn.Module):
            def forward(self, x):
                raise ValueError("boom")

        b = Boom()
        b.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                always_call=True)
        b.register_forward_hook(lambda mod, args, out: log.append(("normal",)))
        with pytest.raises(ValueError, match="boom"):
            b(m.zeros(1))
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1] == [("always", None)]


def test_handle_is_a_context_manager_and_cleans_flags():
    lin = nn.Linear(2, 2)
    with lin.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True) as h:
        assert h.id in lin._forward_hooks_with_kwargs
    assert not lin._forward_hooks and not lin._forward_hooks_with_kwargs
    assert not lin._forward_hooks_always_called


class _Two:
    """A module with two inputs (one may not require grad) and two outputs."""

    @staticmethod
    def make(mnn):
        class Two(mnn.Module):
            def __init__(self):
                super().__init__()
                self.lin = mnn.Linear(2, 2)

            def forward(self, x, y, scale=1.0):
                h = self.lin(x)
                return h * y * scale, (h + y).sum(dim=1)

        return Two()


def _backward_log(m, mnn, module, x_needs_grad=True, y_needs_grad=True, modify=False):
    log = []

    def pre(mod, grad_output):
        log.append(("pre", [arr(g) for g in grad_output]))
        if modify:
            return tuple(None if g is None else g * 2 for g in grad_output)
        return None

    def post(mod, grad_input, grad_output):
        log.append(("post", [arr(g) for g in grad_input], [arr(g) for g in grad_output]))
        if modify:
            return tuple(None if g is None else g + 1 for g in grad_input)
        return None

    # float64, so that rounding to 5 decimals (arr) cannot split two results that differ in
    # the last float32 bit (the random weights change with the test order)
    module.double()
    module.register_full_backward_pre_hook(pre)
    module.register_full_backward_hook(post)
    x = m.tensor([[1.0, -1.0], [0.5, 2.0]], dtype=m.float64, requires_grad=x_needs_grad)
    y = m.tensor([[2.0, 3.0], [1.0, -1.0]], dtype=m.float64, requires_grad=y_needs_grad)
    a, b = module(x, y, scale=0.5)
    (a.sum() * 3 + (b * m.tensor([1.0, 2.0], dtype=m.float64)).sum()).backward()
    log.append(("x.grad", arr(x.grad)))
    log.append(("y.grad", arr(y.grad)))
    log.append(("w.grad", arr(module.lin.weight.grad)))
    return log


@pytest.mark.parametrize("x_grad, y_grad, modify", [
    (True, True, False), (True, False, False), (True, True, True), (False, True, True),
])
def test_full_backward_hooks_match_torch(torch, x_grad, y_grad, modify):
    ours, theirs = _Two.make(nn), _Two.make(torch.nn)
    copy_weights(ours, theirs)
    assert _backward_log(T, nn, ours, x_grad, y_grad, modify) == \
        _backward_log(torch, torch.nn, theirs, x_grad, y_grad, modify)


def test_backward_hook_without_input_grads_warns_and_fires(torch):
    def run(m, mnn):
        lin = mnn.Linear(2, 1)
        log = []
        lin.register_full_backward_hook(
            lambda mod, gi, go: log.append((gi, [g.shape[0] for g in go])))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            lin(m.ones(3, 2)).sum().backward()
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1] == [((None,), [3])]


def test_backward_hooks_in_sequential_fire_last_layer_first(torch):
    def run(m, mnn):
        log = []
        net = mnn.Sequential(mnn.Linear(2, 3), mnn.Tanh(), mnn.Linear(3, 1))
        for i, layer in enumerate(net):
            layer.register_full_backward_hook(lambda mod, gi, go, i=i: log.append(i))
        net(m.ones(1, 2, requires_grad=True)).sum().backward()
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1] == [2, 1, 0]


def test_backward_hook_wrong_count_is_an_error(torch):
    msgs = []
    for m, mnn in both(torch):
        act = mnn.Tanh()
        act.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError) as info:
            act(m.ones(2, requires_grad=True)).sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_state_dict_hooks(torch):
    def run(m, mnn):
        log = []
        lin = mnn.Linear(2, 2)
        lin.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))
        lin.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", sorted(sd))))
        lin.register_load_state_dict_post_hook(
            lambda mod, keys: log.append(("load", keys.missing_keys, keys.unexpected_keys)))
        lin.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: log.append(("load-pre", sorted(sd))))
        sd = lin.state_dict()
        del sd["bias"]
        lin.load_state_dict(sd, strict=False)
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1]


def test_load_post_hook_may_clear_keys(torch):
    lin = nn.Linear(2, 2)

    def forgive(mod, keys):
        keys.missing_keys.clear()

    lin.register_load_state_dict_post_hook(forgive)
    assert lin.load_state_dict({"weight": T.zeros(2, 2)}).missing_keys == []


def test_module_call_without_hooks_has_no_identity_nodes():
    lin = nn.Linear(2, 2)
    out = lin(T.ones(1, 2, requires_grad=True))
    assert out.grad_fn.name() == "AddmmBackward0"
    lin.register_full_backward_hook(lambda *a: None)
    out = lin(T.ones(1, 2, requires_grad=True))
    assert out.grad_fn.name() == "BackwardHookFunctionBackward"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out.sum().backward()


def test_global_module_hooks_match_torch(torch):
    def run(m, mnn):
        from importlib import import_module

        mod = import_module(f"{m.__name__}.nn.modules.module")
        log = []
        handles = [
            mod.register_module_forward_pre_hook(
                lambda module, args: log.append(("gpre", type(module).__name__))),
            mod.register_module_forward_hook(
                lambda module, args, out: log.append(("gfwd", type(module).__name__))),
            mod.register_module_full_backward_hook(
                lambda module, gi, go: log.append(("gbwd", type(module).__name__))),
        ]
        try:
            net = mnn.Sequential(mnn.Linear(2, 2), mnn.Tanh())
            net[1].register_forward_hook(lambda module, args, out: log.append(("own",)))
            net(m.ones(1, 2, requires_grad=True)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        net(m.ones(1, 2))
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1]
    assert ("own",) in logs[0] and ("gbwd", "Linear") in logs[0]


def test_legacy_backward_hook_matches_torch(torch):
    def run(m, mnn):
        log = []
        act = mnn.Tanh()
        act.register_backward_hook(
            lambda module, gi, go: log.append(([arr(g) for g in gi], [arr(g) for g in go])))
        with pytest.raises(RuntimeError) as info:
            act.register_full_backward_hook(lambda *a: None)
        log.append(str(info.value))
        x = m.tensor([0.5, -1.0], requires_grad=True)
        with pytest.warns(FutureWarning, match="multiple autograd Nodes"):
            act(x).sum().backward()
        return log

    logs = [run(*b) for b in both(torch)]
    assert logs[0] == logs[1]


def test_backward_hooks_keep_double_backward_working():
    from retrograd.autograd import gradcheck, gradgradcheck

    lin = nn.Linear(3, 2).double()
    seen = []
    lin.register_full_backward_hook(lambda mod, gi, go: seen.append(len(gi)))
    lin.register_full_backward_pre_hook(lambda mod, go: None)
    x = T.randn(4, 3, dtype=T.float64, requires_grad=True)

    def f(x):
        return T.tanh(lin(x))

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
    assert seen and set(seen) == {1}


def _registration_log(lib):
    """The registration hooks' calls while building a small model in ``lib``."""
    mm = lib.nn.modules.module
    log, replacements = [], []

    def on_param(module, name, value):
        log.append(("param", type(module).__name__, name, tuple(value.shape)))
        if name == "bias":  # replaced: the module keeps what the hook returns
            replacements.append(lib.nn.Parameter(lib.zeros(value.shape)))
            return replacements[-1]
        return None

    def on_buffer(module, name, value):
        log.append(("buffer", type(module).__name__, name,
                    None if value is None else tuple(value.shape)))

    def on_module(module, name, value):
        log.append(("module", type(module).__name__, name, type(value).__name__))

    handles = [mm.register_module_parameter_registration_hook(on_param),
               mm.register_module_buffer_registration_hook(on_buffer),
               mm.register_module_module_registration_hook(on_module)]
    try:
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        model.extra = lib.nn.ReLU()
        model.add_module("tail", lib.nn.Identity())
        model.register_buffer("scale", lib.ones(1))
        assert model[0].bias is replacements[0]
    finally:
        for h in handles:
            h.remove()
    count = len(log)
    lib.nn.Linear(1, 1)
    assert len(log) == count  # removed
    return log


def test_global_registration_hooks_as_torch(torch):
    """register_module_{parameter,buffer,module}_registration_hook: the same calls, in the
    same order, for the same model; a returned value replaces the registered one; the
    handles remove the hooks."""
    assert _registration_log(T) == _registration_log(torch)
