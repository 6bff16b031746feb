"""retrograd.cuda and retrograd.accelerator without CuPy behave as a CPU-only PyTorch build's
torch.cuda / torch.accelerator (the venv's torch is such a build)."""

from __future__ import annotations

import pytest

import retrograd as T

torch = pytest.importorskip("torch")

without_gpu = pytest.mark.skipif(T.cuda.is_available(),
                                reason="these are the answers of a machine without a GPU")


@without_gpu
@pytest.mark.parametrize("call", [
    lambda m: m.cuda.is_available(),
    lambda m: m.cuda.device_count(),
    lambda m: m.cuda.is_initialized(),
    lambda m: m.cuda.manual_seed(0),
    lambda m: m.cuda.manual_seed_all(0),
    lambda m: m.cuda.seed(),
    lambda m: m.cuda.seed_all(),
    lambda m: m.cuda.empty_cache(),
    lambda m: m.cuda.memory_allocated(),
    lambda m: m.cuda.memory_reserved(),
    lambda m: m.cuda.max_memory_allocated(),
    lambda m: m.cuda.is_bf16_supported(),
    lambda m: m.accelerator.is_available(),
    lambda m: m.accelerator.device_count(),
    lambda m: m.accelerator.current_accelerator(),
    lambda m: m.accelerator.current_accelerator(check_available=True),
])
def test_answers_match_cpu_only_torch(call):
    assert call(T) == call(torch)


@without_gpu
@pytest.mark.parametrize("call", [
    lambda m: m.cuda.current_device(),
    lambda m: m.cuda.get_device_name(),
    lambda m: m.cuda.get_device_name(0),
    lambda m: m.cuda.get_device_capability(),
    lambda m: m.cuda.get_device_properties(0),
    lambda m: m.cuda.synchronize(),
    lambda m: m.accelerator.current_device_index(),
    lambda m: m.accelerator.set_device_index(0),
    lambda m: m.accelerator.synchronize(),
])
def test_gpu_only_calls_raise_as_cpu_only_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(T)
    assert "CuPy" in str(ours.value) or "none is available" in str(ours.value)


def test_the_usual_device_choice_runs():
    device = "cuda" if T.cuda.is_available() else "cpu"
    x = T.ones(2, requires_grad=True)
    y = x.to(device)
    assert y.device == T.device(device)
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    model_device = T.device(device)
    assert T.zeros(1).to(model_device).device.type == model_device.type


@without_gpu
def test_device_context_needs_no_gpu_to_construct():
    ctx = T.cuda.device(0)
    assert ctx.idx == 0 and T.cuda.device(None).idx == -1
    with T.cuda.device(None):  # -1: nothing to select, as in PyTorch
        pass
    with pytest.raises(AssertionError, match="CuPy"):
        with ctx:
            pass


def test_accelerator_is_reachable_from_the_top_level():
    assert T.accelerator.is_available() == T.cuda.is_available()
    assert T.accelerator.device_count() == T.cuda.device_count()


@pytest.mark.skipif(not T.cuda.is_available(), reason="needs CuPy and a CUDA GPU")
def test_gpu_queries_answer_with_a_gpu():
    assert T.cuda.device_count() >= 1
    index = T.cuda.current_device()
    assert isinstance(index, int) and 0 <= index < T.cuda.device_count()
    assert isinstance(T.cuda.get_device_name(), str) and T.cuda.get_device_name()
    major, minor = T.cuda.get_device_capability(index)
    assert major >= 1
    T.cuda.synchronize()
    T.cuda.manual_seed_all(0)
    assert T.accelerator.current_accelerator() == T.device("cuda")
    with T.cuda.device(index):
        assert T.cuda.current_device() == index
    y = T.ones(2).to("cuda")
    assert y.device.type == "cuda" and T.cuda.is_initialized()
    assert T.cuda.memory_allocated() >= y.nbytes


def test_moving_to_cuda_without_cupy_raises_torchs_class():
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed: the move succeeds")
    for m in (T, torch):
        if m is torch and torch.cuda.is_available():
            continue
        with pytest.raises(AssertionError):
            m.ones(2).to("cuda")
