"""retrograd.distributed, DistributedDataParallel: MPI programs run under ``mpiexec -n 2``
(and alone, a world of one) by ordinary tests.

mpi4py and mpiexec come with the ``mpi`` extra (``pip install retrograd[mpi]``, which
``make test`` installs); without them these tests are skipped and say why.
"""

import os
import pathlib
import subprocess
import sys

import pytest

PROGRAMS = pathlib.Path(__file__).parent / "programs"
SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
MPIEXEC = pathlib.Path(sys.executable).parent / "mpiexec"

needs_mpi = pytest.mark.skipif(
    not MPIEXEC.exists(),
    reason="needs the mpi extra (pip install retrograd[mpi]): no mpiexec next to "
           f"{sys.executable}")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


def run(program, ranks, timeout=60, args=(), **env):
    cmd = [str(MPIEXEC), "-n", str(ranks), sys.executable, str(PROGRAMS / program), *args]
    if ranks == 1:
        cmd = cmd[3:]   # plain python: a world of one
    environ = _env()
    for var in ("RETROGRAD_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG",
                "RETROGRAD_DISTRIBUTED_CHECK"):
        environ.pop(var, None)   # the default (no cross-rank check) unless a test sets one
    environ.update(env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=environ)


def _check(result, ranks):
    assert result.returncode == 0, result.stdout + result.stderr
    for r in range(ranks):
        assert f"OK rank {r} of {ranks}" in result.stdout, result.stdout + result.stderr


@needs_mpi
@pytest.mark.parametrize("ranks", [1, 2])
def test_collectives_match_numpy(ranks):
    _check(run("collectives.py", ranks), ranks)


@needs_mpi
@pytest.mark.parametrize("ranks", [1, 2])
def test_ddp_training_matches_the_global_batch(ranks):
    _check(run("ddp.py", ranks), ranks)


@needs_mpi
@pytest.mark.parametrize("env", [{"RETROGRAD_DISTRIBUTED_DEBUG": "DETAIL"},
                                 {"TORCH_DISTRIBUTED_DEBUG": "detail"},
                                 {"RETROGRAD_DISTRIBUTED_CHECK": "1"}])
def test_the_debug_mode_names_each_ranks_shape(env):
    result = run("mismatch.py", 2, **env)
    _check(result, 2)
    assert "checked" in result.stdout, result.stdout


@needs_mpi
@pytest.mark.parametrize("env", [{}, {"TORCH_DISTRIBUTED_DEBUG": "DETAIL",
                                      "RETROGRAD_DISTRIBUTED_CHECK": "0"}])
def test_without_the_check_an_mpi_error_says_what_to_do(env):
    result = run("mismatch.py", 2, **env)
    _check(result, 2)
    assert "unchecked" in result.stdout and "rank 1: broadcast raised" in result.stdout


@needs_mpi
def test_without_the_check_an_all_reduce_mismatch_ends_the_job():
    # MPICH: "Message truncated" on the rank with the smaller tensor, then the job ends
    try:
        result = run("mismatch.py", 2, timeout=30, args=["--all-reduce"])
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("a mismatched all_reduce hung the job") from exc
    assert result.returncode != 0, result.stdout + result.stderr
    # MPICH reports the mismatch where it sees it: usually "Message truncated" in the
    # all_reduce itself; on a loaded machine the all_reduce can return and the next
    # collective fail instead ("Other MPI error", seen in a CI run), which retrograd's error
    # names with the rank and the tensor
    out = result.stdout + result.stderr
    assert "Message truncated" in out or "MPI failed on rank" in out, out


@needs_mpi
def test_a_failing_rank_ends_the_job():
    try:
        result = run("fault.py", 2, timeout=30)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("one rank raised and the job hung for 30 s") from exc
    assert result.returncode != 0
    assert "rank 1 fails on purpose" in result.stderr
    assert "rank 1 raised; aborting" in result.stderr


def test_imports_and_explains_without_mpi4py():
    # mpi4py blocked: the package imports, and init_process_group says what to install
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import retrograd.distributed as dist\n"
            "assert not dist.is_available() and not dist.is_initialized()\n"
            "try:\n"
            "    dist.init_process_group('mpi')\n"
            "except ImportError as exc:\n"
            "    assert 'pip install retrograd[mpi]' in str(exc), exc\n"
            "    print('explained')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env=_env())
    assert result.returncode == 0 and "explained" in result.stdout, result.stderr


def test_argument_errors_without_a_group():
    import retrograd as T
    import retrograd.distributed as dist

    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.all_reduce(T.ones(2))
    with pytest.raises(ValueError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(ValueError, match="backend='gloo'"):
        dist.init_process_group("gloo")



@needs_mpi
def test_init_checks_world_size_and_rank_against_mpi():
    # in a process of its own: MPI, once started, stays for the life of the process (and
    # the rest of the suite forks DataLoader workers)
    _check(run("init_checks.py", 1), 1)


@needs_mpi
def test_train_command_runs_data_parallel(tmp_path):
    # `mpiexec -n 2 python -m retrograd train --distributed`: one voice (rank 0 prints every
    # line once and writes the files), and the model it saved scores what it printed
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    pytest.importorskip("matplotlib")
    epochs = 2
    cmd = [str(MPIEXEC), "-n", "2", sys.executable, "-m", "retrograd", "train",
           "--distributed", "--model", "mlp", "--epochs", str(epochs), "--out", str(tmp_path)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env())
    lines = result.stdout.splitlines()
    final = [ln for ln in lines if ln.startswith("MLP test accuracy: ")]
    assert len(final) == 1, result.stdout + result.stderr
    assert len([ln for ln in lines if ln.startswith("epoch ")]) == epochs
    met = "target 97%: met" in final[0]
    assert result.returncode == (0 if met else 1), result.stdout + result.stderr
    assert (tmp_path / "digits_training.png").exists()

    import retrograd as T
    from retrograd._cli.digits import MLP, evaluate, load_digits_split

    model = MLP()
    model.load_state_dict(T.load(str(tmp_path / "digits_mlp.pt")))  # no "module." prefix
    _, test_set = load_digits_split()
    _, acc = evaluate(model, T.utils.data.DataLoader(test_set, batch_size=512),
                      T.nn.CrossEntropyLoss())
    assert f"MLP test accuracy: {100 * acc:.2f}%" in final[0]
    assert acc > 0.8, final[0]  # two data-parallel epochs learn (seed 0: 91-92%)
