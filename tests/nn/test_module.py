"""Module's contract against PyTorch's: registration by assignment and its errors,
named_* order and names, state_dict / load_state_dict, modes, conversions, repr."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import retrograd as T
from retrograd import nn

from .helpers import copy_weights, to_rg


def lib(torch, which):
    return T if which == "rg" else torch


def build(m):
    """The same model in retrograd (m = retrograd) or PyTorch (m = torch): nested modules,
    a shared module, a buffer, a non-persistent buffer, a None parameter."""
    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = m.nn.Linear(3, 3)
            self.act = m.nn.ReLU()
            self.register_buffer("scale", m.ones(3))
            self.register_buffer("cache", m.zeros(2), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Block()
            self.shared = m.nn.Linear(3, 3)
            self.seq = m.nn.Sequential(self.shared, m.nn.Tanh(), Block())
            self.alpha = m.nn.Parameter(m.tensor(0.5))
            self.register_parameter("unused", None)
            self.head = m.nn.Linear(3, 2, bias=False)

        def forward(self, x):
            return self.head(self.seq(self.first(x))) * self.alpha

    return Net()


def names(pairs):
    return [n for n, _ in pairs]


def test_named_iterators_match_torch(torch):
    ours, theirs = build(T), build(torch)
    assert names(ours.named_parameters()) == names(theirs.named_parameters())
    assert names(ours.named_buffers()) == names(theirs.named_buffers())
    assert names(ours.named_modules()) == names(theirs.named_modules())
    assert names(ours.named_children()) == names(theirs.named_children())
    for kw in ({"recurse": False}, {"prefix": "model"}, {"remove_duplicate": False}):
        assert names(ours.named_parameters(**kw)) == names(theirs.named_parameters(**kw))
        assert names(ours.named_buffers(**kw)) == names(theirs.named_buffers(**kw))
    for kw in ({"prefix": "m"}, {"remove_duplicate": False}):
        assert names(ours.named_modules(**kw)) == names(theirs.named_modules(**kw))
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert [type(c).__name__ for c in ours.children()] == \
        [type(c).__name__ for c in theirs.children()]


def test_state_dict_structure_matches_torch(torch):
    ours, theirs = build(T), build(torch)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == list(tsd)
    assert dict(sd._metadata) == dict(tsd._metadata)
    assert all(not v.requires_grad for v in sd.values())
    kept = ours.state_dict(keep_vars=True)
    assert kept["alpha"] is ours.alpha
    assert list(ours.state_dict(prefix="p.")) == list(theirs.state_dict(prefix="p."))
    # shares memory with the parameter, as PyTorch's detach()
    sd["alpha"].fill_(2.0)
    assert ours.alpha.item() == 2.0


def test_copied_weights_give_torch_outputs_and_grads(torch):
    ours, theirs = build(T), build(torch)
    copy_weights(ours, theirs)
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    out, tout = ours(T.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)


def _load_error(module, state):
    with pytest.raises(RuntimeError) as info:
        module.load_state_dict(state)
    return str(info.value)


def test_load_state_dict_errors_match_torch(torch):
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    bad = {"weight": T.zeros(2, 4), "extra": T.zeros(1)}
    tbad = {"weight": torch.zeros(2, 4), "extra": torch.zeros(1)}
    msg, tmsg = _load_error(ours, bad), _load_error(theirs, tbad)
    assert msg.replace("retrograd.Size", "torch.Size") == tmsg
    assert msg.startswith("Error(s) in loading state_dict for Linear:\n\t")
    assert 'Missing key(s) in state_dict: "bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra".' in msg
    assert "size mismatch for weight" in msg


def test_load_state_dict_non_strict_returns_incompatible_keys(torch):
    ours, theirs = build(T), build(torch)
    state = {k: v for k, v in ours.state_dict().items() if k != "alpha"}
    state["bogus.weight"] = T.zeros(1)
    result = ours.load_state_dict(state, strict=False)
    tstate = {k: v for k, v in theirs.state_dict().items() if k != "alpha"}
    tstate["bogus.weight"] = torch.zeros(1)
    tresult = theirs.load_state_dict(tstate, strict=False)
    assert result.missing_keys == tresult.missing_keys == ["alpha"]
    assert result.unexpected_keys == tresult.unexpected_keys
    assert repr(ours.load_state_dict(ours.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(TypeError, match="dict-like"):
        ours.load_state_dict([1, 2])


def test_load_state_dict_copies_in_place_or_assigns():
    m = nn.Linear(2, 2)
    weight = m.weight
    src = {"weight": T.ones(2, 2), "bias": T.zeros(2)}
    m.load_state_dict(src)
    assert m.weight is weight and np.array_equal(m.weight.detach().numpy(), np.ones((2, 2)))
    assert m.weight._version > 0
    m.load_state_dict(src, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight is not weight


def test_registration_errors_match_torch(torch):
    def errors(m):
        mod = m.nn.Linear(2, 2)
        out = []
        for action in (
            lambda: mod.register_parameter("a.b", None),
            lambda: mod.register_parameter("", None),
            lambda: mod.register_parameter("training", None),
            lambda: mod.register_parameter("x", m.zeros(2)),
            lambda: mod.register_buffer("a.b", None),
            lambda: mod.register_buffer("w", 3),
            lambda: mod.add_module("a.b", m.nn.ReLU()),
            lambda: mod.add_module("x", 3),
            lambda: setattr(mod, "weight", m.zeros(2, 2)),
            lambda: (setattr(mod, "fc", m.nn.ReLU()), setattr(mod, "fc", 3)),
            lambda: mod.nothing,
            lambda: mod.get_submodule("nope"),
            lambda: mod.get_parameter("nope"),
            lambda: mod.train("yes"),
        ):
            with pytest.raises(Exception) as info:
                action()
            text = str(info.value).replace("torch.", "").replace("retrograd.", "")
            out.append((type(info.value).__name__, text.replace("FloatTensor", "T")))
        return out

    assert errors(T) == errors(torch)


def test_parameter_from_a_non_leaf_is_refused(torch):
    m = nn.Linear(2, 2)
    x = T.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="cannot assign"):
        m.weight = x * 2
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(T.tensor([1, 2]))
    assert not nn.Parameter(T.tensor([1, 2]), requires_grad=False).requires_grad


def test_assignment_moves_between_kinds():
    m = nn.Module()
    m.x = nn.Parameter(T.zeros(1))
    assert "x" in m._parameters
    m.x = None  # keeps the slot, as a None parameter
    assert m._parameters == {"x": None} and m.x is None
    del m.x
    m.x = nn.ReLU()
    assert "x" in m._modules and "x" not in m._parameters
    with pytest.raises(TypeError, match="as child module 'x'"):
        m.x = T.zeros(1)
    del m.x
    m.x = nn.Buffer(T.ones(2), persistent=False)
    assert "x" in m._buffers and "x" not in m._modules
    assert "x" in m._non_persistent_buffers_set
    assert list(m.state_dict()) == []
    m.x = T.zeros(3)  # a plain tensor assigned to a buffer name stays a buffer
    assert m._buffers["x"].shape == (3,)
    del m.x
    assert not m._buffers
    m.plain = 5
    assert m.__dict__["plain"] == 5
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(T.zeros(1))
        Early()


def test_buffer_marks(torch):
    b = nn.Buffer(T.ones(2))
    assert isinstance(b, T.Tensor) and isinstance(b, nn.Buffer)
    assert not isinstance(T.ones(2), nn.Buffer)
    m = nn.Module()
    m.b = b
    assert list(m.state_dict()) == ["b"]


def test_get_submodule_parameter_buffer():
    net = build(T)
    assert net.get_submodule("seq.2.fc") is net.seq[2].fc
    assert net.get_submodule("") is net
    assert net.get_parameter("seq.2.fc.weight") is net.seq[2].fc.weight
    assert net.get_buffer("first.scale") is net.first.scale
    with pytest.raises(AttributeError, match="not an nn.Parameter"):
        net.get_parameter("first.scale")
    with pytest.raises(AttributeError, match="not a buffer"):
        net.get_buffer("first.fc.weight")
    net.set_submodule("first.act", nn.Tanh())
    assert isinstance(net.first.act, nn.Tanh)


def test_train_eval_apply_requires_grad_zero_grad():
    net = build(T)
    assert net.training and net.seq[2].act.training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Linear"
    net(T.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_dtype_conversions_keep_parameter_objects():
    net = build(T)
    weight = net.head.weight
    assert net.double() is net
    assert net.head.weight is weight and weight.dtype == T.float64
    assert net.first.scale.dtype == T.float64
    net.to(T.float32)
    assert weight.dtype == T.float32
    net.half()
    assert weight.dtype == T.float16
    net.float().to("cpu").cpu()
    assert weight.dtype == T.float32
    net.to(T.zeros(1, dtype=T.float64))
    assert weight.dtype == T.float64
    with pytest.raises(TypeError, match="floating point"):
        net.to(T.int64)
    net.type(T.float32)
    assert weight.dtype == T.float32


def test_cuda_without_cupy_says_what_to_install():
    pytest.importorskip("numpy")
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(AssertionError, match="CuPy"):
            nn.Linear(2, 2).cuda()


def test_repr_of_nested_model_matches_torch(torch):
    assert repr(build(T)) == repr(build(torch))
    ml = [nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
          torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])]
    assert repr(ml[0]) == repr(ml[1])
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())

    class Custom(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    class TCustom(torch.nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Custom()).replace("Custom", "X") == repr(TCustom()).replace("TCustom", "X")


def test_parameter_repr_and_identity(torch):
    p = nn.Parameter(T.tensor([1.0, 2.0]))
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(tp)
    assert p.is_leaf and p.requires_grad and isinstance(p, T.Tensor)
    y = p * 2
    assert type(y) is T.Tensor  # ops on a parameter give plain tensors
    assert repr(nn.Parameter()) == "Parameter containing:\ntensor([], requires_grad=True)"


def test_dir_lists_registered_names():
    names_ = dir(build(T))
    for n in ("first", "seq", "alpha", "head", "forward", "training"):
        assert n in names_


def test_deepcopy_and_pickle_round_trip():
    net = build(T)
    clone = copy.deepcopy(net)
    assert clone.head.weight is not net.head.weight
    assert isinstance(clone.head.weight, nn.Parameter)
    assert clone.seq[0] is clone.shared  # sharing survives
    x = T.randn(2, 3)
    np.testing.assert_array_equal(clone(x).detach().numpy(), net(x).detach().numpy())
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    back = pickle.loads(pickle.dumps(seq))
    np.testing.assert_array_equal(back(x).detach().numpy(), seq(x).detach().numpy())
    assert isinstance(back[0].weight, nn.Parameter) and back[0].weight.requires_grad


def test_forward_missing_is_not_implemented():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(T.zeros(1))


def test_module_init_refuses_arguments(torch):
    for args, kwargs in (((1,), {}), ((), {"a": 1})):
        with pytest.raises(TypeError) as ours:
            nn.Module(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            torch.nn.Module(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_state_dict_round_trip_between_libraries(torch):
    ours, theirs = build(T), build(torch)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    ours2 = build(T)
    ours2.load_state_dict({k: to_rg(v) for k, v in theirs.state_dict().items()})
    for (n, a), (_, b) in zip(ours.state_dict().items(), ours2.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)


def test_uninitialized_buffer_materializes():
    b = nn.UninitializedBuffer()
    assert nn.parameter.is_lazy(b) and repr(b) == "<UninitializedBuffer>"
    b.materialize((2, 3))
    assert isinstance(b, T.Tensor) and b.shape == (2, 3) and not nn.parameter.is_lazy(b)
    p = nn.UninitializedParameter()
    p.materialize((4,), dtype=T.float64)
    assert type(p) is nn.Parameter and p.dtype == T.float64 and p.requires_grad


def test_parameter_shares_memory_and_versions_with_its_data():
    t = T.zeros(3)
    p = nn.Parameter(t)
    with T.no_grad():
        p.add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0] and t._version == p._version > 0
    q = nn.Parameter(p, requires_grad=False)
    assert not q.requires_grad and q.data_ptr() == p.data_ptr()
    clone = copy.deepcopy(q)
    assert type(clone) is nn.Parameter and not clone.requires_grad
    assert clone.data_ptr() != q.data_ptr()
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_extra_state_round_trip(torch):
    def make(m):
        class WithState(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(1, 1)
                self.counter = 0

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]

        return WithState()

    ours, theirs = make(T), make(torch)
    ours.counter = 7
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict()) == ["_extra_state", "lin.weight", "lin.bias"]
    fresh = make(T)
    fresh.load_state_dict(sd)
    assert fresh.counter == 7
    del sd["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key.*"_extra_state"'):
        fresh.load_state_dict(sd)
    with pytest.raises(RuntimeError, match='Unexpected key.*"_extra_state"'):
        nn.Linear(1, 1).load_state_dict({"weight": T.zeros(1, 1), "bias": T.zeros(1),
                                         "_extra_state": 3})


def test_state_dict_post_hooks_public_and_private():
    lin = nn.Linear(1, 1)
    lin._register_state_dict_hook(lambda m, sd, prefix, meta: {"replaced": 1})
    assert lin.state_dict() == {"replaced": 1}
    lin2 = nn.Linear(1, 1)
    lin2.register_state_dict_post_hook(lambda m, sd, prefix, meta: {"replaced": 1})
    with pytest.raises(RuntimeError, match="must return None"):
        lin2.state_dict()


def test_assigning_none_is_no_buffer_assignment(torch):
    """``None`` is no Buffer: a plain attribute set to None (BatchNorm's momentum, as
    swa_utils.update_bn does) stays a plain attribute, as in PyTorch."""
    assert isinstance(None, nn.Buffer) is isinstance(None, torch.nn.Buffer) is False
    ours, theirs = nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None)
    assert list(ours._buffers) == list(theirs._buffers)
    ours.momentum = 0.2
    ours.momentum = None
    assert ours.momentum is None and "momentum" not in ours._buffers
