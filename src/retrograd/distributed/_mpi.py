"""mpi4py, imported on first use: ``import retrograd`` never needs it, never starts MPI."""

from __future__ import annotations

import importlib.util
import sys
import traceback

_INSTALL = ("retrograd.distributed runs over MPI through mpi4py; install it with "
            "`pip install retrograd[mpi]` (mpi4py and the mpich wheel, which provides "
            "mpiexec), or `pip install mpi4py` against your system's MPI")


def available() -> bool:
    """Whether mpi4py can be imported (without importing it, which would start MPI)."""
    if "mpi4py" in sys.modules:  # imported already, or blocked (None)
        return sys.modules["mpi4py"] is not None
    return importlib.util.find_spec("mpi4py") is not None


def mpi():
    """The ``mpi4py.MPI`` module, or an ImportError that says what to install."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    return MPI


_previous_hook = None


def _abort_on_exception(exc_type, exc, tb):
    # print this rank's traceback first, then end every rank: without the abort the other
    # ranks would wait forever in their next collective for a peer that has gone
    MPI = mpi()
    rank = MPI.COMM_WORLD.Get_rank()
    sys.stderr.write(f"retrograd.distributed: rank {rank} raised; aborting the MPI job\n")
    sys.stderr.write("".join(traceback.format_exception(exc_type, exc, tb)))
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def install_abort_hook() -> None:
    """An uncaught exception on any rank ends the whole job (as ``python -m mpi4py`` does)."""
    global _previous_hook
    if sys.excepthook is not _abort_on_exception:
        _previous_hook = sys.excepthook
        sys.excepthook = _abort_on_exception


def remove_abort_hook() -> None:
    global _previous_hook
    if sys.excepthook is _abort_on_exception:
        sys.excepthook = _previous_hook or sys.__excepthook__
        _previous_hook = None
