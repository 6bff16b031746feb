"""retrograd.backends answers as a CPU-only PyTorch build does (torch here is one), and the
device-choice lines scripts use run unchanged: cudnn/mps/cuda availability, the flags'
defaults, setting and reading them back, cudnn.flags() restoring them."""

from __future__ import annotations

import importlib

import pytest

import retrograd as T

torch = pytest.importorskip("torch")


def _cpu_only_torch():
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("the reference answers are a CPU-only PyTorch's")


def test_availability_matches_cpu_only_torch():
    _cpu_only_torch()
    if T.backends.cuda.is_built():
        pytest.skip("CuPy is installed: retrograd can reach a GPU, this torch cannot")
    for name in ("cudnn.is_available", "cudnn.version", "mps.is_available", "mps.is_built",
                 "cuda.is_built"):
        sub, fn = name.split(".")
        ours = getattr(getattr(T.backends, sub), fn)()
        theirs = getattr(getattr(torch.backends, sub), fn)()
        assert ours == theirs, name


def test_flag_defaults_match_torch():
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(T.backends.cudnn, flag) == getattr(torch.backends.cudnn, flag), flag
    for flag in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(T.backends.cuda.matmul, flag) == getattr(torch.backends.cuda.matmul,
                                                                flag), flag
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        fn = f"{kind}_sdp_enabled"
        assert getattr(T.backends.cuda, fn)() == getattr(torch.backends.cuda, fn)(), fn


def test_mkldnn_is_not_used_and_its_flags_are_torchs():
    assert T.backends.mkldnn.is_available() is False  # NumPy's BLAS, no oneDNN
    assert T.backends.mkldnn.enabled == torch.backends.mkldnn.enabled
    assert T.backends.mkldnn.is_acl_available() == torch.backends.mkldnn.is_acl_available()
    with T.backends.mkldnn.flags(enabled=False):
        assert T.backends.mkldnn.enabled is False
    assert T.backends.mkldnn.enabled is True


def test_cpu_capability_is_one_of_torchs_words():
    assert T.backends.cpu.get_cpu_capability() in {"AVX512", "AVX2", "DEFAULT"}


def test_flags_are_settable_and_cudnn_flags_restores_them():
    cudnn = importlib.import_module("retrograd.backends.cudnn")  # `import ... as cudnn` works
    assert cudnn is T.backends.cudnn
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        assert T.backends.cudnn.benchmark and T.backends.cudnn.deterministic
        with cudnn.flags(enabled=True, benchmark=False, deterministic=False):
            assert not cudnn.benchmark and not cudnn.deterministic
        assert cudnn.benchmark and cudnn.deterministic
    finally:
        cudnn.benchmark = cudnn.deterministic = False
    T.backends.cuda.enable_flash_sdp(False)
    try:
        assert T.backends.cuda.flash_sdp_enabled() is False
    finally:
        T.backends.cuda.enable_flash_sdp(True)


def test_device_choice_idiom_runs_on_the_cpu():
    device = ("cuda" if T.cuda.is_available()
              else "mps" if T.backends.mps.is_available() else "cpu")
    x = T.ones(2).to(device)
    assert str(x.device) == device == ("cuda" if T.cuda.is_available() else "cpu")
