"""dist.DebugLevel / get_debug_level / set_debug_level / set_debug_level_from_env, as
PyTorch's, and the cross-rank check they switch: off by default, on with DETAIL (from
RETROGRAD_DISTRIBUTED_DEBUG or PyTorch's TORCH_DISTRIBUTED_DEBUG), forced either way by
RETROGRAD_DISTRIBUTED_CHECK.  The checks themselves run under MPI in test_distributed.py."""

import pytest

import retrograd.distributed as dist
from retrograd.distributed import _check

VARS = ("RETROGRAD_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG", "RETROGRAD_DISTRIBUTED_CHECK")


@pytest.fixture
def env(monkeypatch):
    """A clean environment for the three variables; the process's own setting is read back
    afterwards, so other tests see what they would have seen."""
    for var in VARS:
        monkeypatch.delenv(var, raising=False)
    yield monkeypatch
    monkeypatch.undo()
    dist.set_debug_level_from_env()


def test_levels_match_torch():
    torch_dist = pytest.importorskip("torch.distributed")
    theirs = {name: int(level) if hasattr(level, "__int__") else level.value
              for name, level in torch_dist.DebugLevel.__members__.items()}
    assert {m.name: m.value for m in dist.DebugLevel} == theirs
    assert repr(dist.DebugLevel.DETAIL) == repr(torch_dist.DebugLevel.DETAIL)
    assert str(dist.DebugLevel.INFO) == str(torch_dist.DebugLevel.INFO)


def test_off_by_default_and_on_with_detail(env):
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.OFF and not _check.ENABLED
    for name in ("RETROGRAD_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG"):
        env.setenv(name, "detail")           # any case, as PyTorch
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() is dist.DebugLevel.DETAIL and _check.ENABLED, name
        env.setenv(name, "INFO")
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() is dist.DebugLevel.INFO and not _check.ENABLED, name
        env.delenv(name)


def test_retrograd_variable_wins_over_torchs(env):
    env.setenv("TORCH_DISTRIBUTED_DEBUG", "DETAIL")
    env.setenv("RETROGRAD_DISTRIBUTED_DEBUG", "OFF")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.OFF and not _check.ENABLED


def test_check_variable_forces_either_way(env):
    env.setenv("RETROGRAD_DISTRIBUTED_CHECK", "1")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.OFF and _check.ENABLED
    env.setenv("RETROGRAD_DISTRIBUTED_CHECK", "0")
    env.setenv("TORCH_DISTRIBUTED_DEBUG", "DETAIL")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL and not _check.ENABLED
    dist.set_debug_level(dist.DebugLevel.DETAIL)      # 0 wins at run time too
    assert not _check.ENABLED


def test_set_debug_level_at_run_time(env):
    dist.set_debug_level_from_env()
    dist.set_debug_level(dist.DebugLevel.DETAIL)
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL and _check.ENABLED
    dist.set_debug_level(dist.DebugLevel.OFF)
    assert not _check.ENABLED
    with pytest.raises(TypeError, match="DebugLevel"):   # PyTorch: TypeError too
        dist.set_debug_level("DETAIL")


def test_bad_values_raise_valueerror(env):
    env.setenv("TORCH_DISTRIBUTED_DEBUG", "verbose")
    with pytest.raises(ValueError, match="TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL"):
        dist.set_debug_level_from_env()
    env.delenv("TORCH_DISTRIBUTED_DEBUG")
    env.setenv("RETROGRAD_DISTRIBUTED_CHECK", "yes")
    with pytest.raises(ValueError, match="RETROGRAD_DISTRIBUTED_CHECK must be 1"):
        dist.set_debug_level_from_env()


def test_a_bad_value_keeps_import_working_and_init_raises(env, tmp_path):
    # as PyTorch, the variable is read at import; there a bad value would break
    # `import retrograd`, so init_process_group raises it instead
    import subprocess
    import sys

    from .test_distributed import _env
    code = ("import retrograd.distributed as dist\n"
            "try:\n"
            "    dist.init_process_group('mpi')\n"
            "except ValueError as exc:\n"
            "    print('raised:', exc)\n")
    environ = _env()
    environ["RETROGRAD_DISTRIBUTED_DEBUG"] = "loud"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env=environ, cwd=tmp_path)
    assert "raised: The value of RETROGRAD_DISTRIBUTED_DEBUG must be" in result.stdout, (
        result.stdout + result.stderr)
