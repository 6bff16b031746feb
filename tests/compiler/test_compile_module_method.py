"""``nn.Module.compile()``: PyTorch's in-place compile of a module's forward."""

from __future__ import annotations

import copy
import doctest
import pickle
import warnings

import numpy as np

import retrograd as T
from retrograd import nn

from .test_compile import same


def _model():
    T.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2)).double()


def test_compile_in_place_replays_the_forward():
    model, reference = _model(), _model()
    assert model.compile() is None  # as torch: in place, returns None
    x = T.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    with T.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            assert same(model(x), reference(x))
    assert model.forward.traces == 1 and model.forward.refused is None
    # the module is still itself: parameters, state_dict, train/eval, repr
    assert list(model.state_dict()) == list(reference.state_dict())
    assert repr(model) == repr(reference)
    model.eval()
    with T.no_grad():
        for _ in range(3):
            assert same(model(x), reference.eval()(x))
    assert model.forward.traces == 2  # training is guarded


def test_grad_mode_calls_run_eagerly_with_their_graph():
    model, reference = _model(), _model()
    model.compile()
    x = T.tensor(np.ones((2, 3)))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for _ in range(3):
            model(x).sum().backward()
            reference(x).sum().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert same(p.grad, q.grad)


def test_forward_hooks_run_around_the_compiled_forward():
    model = _model()
    model.compile()
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    with T.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            model(T.tensor(np.ones((2, 3))))
    assert seen == [(2, 2)] * 3 and model.forward.traces == 1
    # a hook of a submodule runs inside the forward: that runs eagerly, with a warning
    model[0].register_forward_hook(lambda m, args, out: seen.append(out.shape))
    with T.no_grad(), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            model(T.tensor(np.ones((2, 3))))
    assert seen[3:] == [(2, 5), (2, 2)] * 3
    assert model.forward.refused is not None and "forward hooks" in str(w[0].message)


def test_copies_and_pickles_compile_their_own_forward():
    model = _model()
    model.compile()
    x = T.tensor(np.ones((2, 3)))
    with T.no_grad():
        for _ in range(3):
            model(x)
    for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert other.forward._module is other and other.forward.traces == 0
        with T.no_grad():
            for _ in range(3):
                assert same(other(x), model(x))
        assert other.forward.traces == 1


def test_disable_leaves_the_module_eager():
    model = _model()
    model.compile(disable=True)
    assert "forward" not in vars(model)


def test_compiler_docstring_examples_run():
    import retrograd.compiler as compiler

    assert doctest.testmod(compiler, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_a_hook_registered_after_tracing_is_not_replayed_past():
    model = _model()
    seen = []

    @T.compile
    def infer(x):
        return model(x)

    x = T.tensor(np.ones((2, 3)))
    with T.no_grad():
        for _ in range(3):
            infer(x)
        assert infer.traces == 1
        model[2].register_forward_hook(lambda m, args, out: seen.append(out.shape))
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            for _ in range(2):
                assert same(infer(x), model(x))
    assert len(seen) == 4 and infer.refused is not None  # (eager, with the hook)
