"""The cross-rank check that every rank calls the same collective on the same layout, and
the debug level that switches it on (``DebugLevel``, ``set_debug_level``, as PyTorch's).

Off by default, as in PyTorch: a collective goes straight to MPI.  On in the debug mode,
``RETROGRAD_DISTRIBUTED_DEBUG=DETAIL`` (or PyTorch's ``TORCH_DISTRIBUTED_DEBUG=DETAIL``, or at
run time ``dist.set_debug_level(dist.DebugLevel.DETAIL)`` on every rank), or forced either
way with ``RETROGRAD_DISTRIBUTED_CHECK=1`` / ``=0`` (0 wins over the debug level).  Every
rank must run with the same setting: a rank that checks waits in a collective the others
never call.  DistributedDataParallel checks its parameter and buffer layout once, at
construction, whatever the setting (``always=True``).

Without the check a mismatch is what MPI makes of it (measured with the mpich wheel, 2
ranks on one machine): a blocking all_reduce/all_gather whose counts differ raises "Message
truncated" on the rank with the smaller tensor (turned into a RuntimeError that says to run
with the debug mode to see every rank's shape; MPICH ends the job moments later)
while the rank with the larger tensor goes on with wrong data; broadcast raises on the
receiving ranks and the group goes on; a non-blocking all-reduce or all-gather
(``async_op=True``) finishes silently with wrong data on every rank; tensors
of the same byte size but another dtype are reinterpreted silently.  Hence the debug mode.

How it checks: before each collective every rank takes part in one tiny all-reduce (MAX) of
the int64 pair ``[sig, -sig]``, where ``sig`` is a 56-bit digest of what this rank is about
to do (the function, shape, dtype, and the op or root).  The ranks all agree iff
``max(sig) == -max(-sig)``, i.e. max == min.  Only then does the collective go ahead; on a
mismatch (which every rank sees, from the same reduced pair) the ranks gather their
descriptions, so the error names each rank's shape and dtype.

Every rank does the same calls in the same order whatever it passed, so the check itself
cannot deadlock; and it is done on every call, never skipped after a first success on one
rank (ranks that cached different decisions would wait in different collectives).  What is
cached is only this rank's digest of a layout, which costs nothing to look up.

Its price is one more synchronisation per collective: a few microseconds on idle cores,
negligible beside a large all-reduce, but about a scheduler time slice when the machine has
more busy processes than cores (every rank must be running for a collective to progress).
It cannot ride on the collective's own message: the ranks would have to agree on the
message's size before sending it (MPI collectives with mismatched counts are erroneous, as
above), and the digest would have to survive the reduction op in the data's dtype and be
staged next to data the caller owns (a copy of the whole tensor).
"""

from __future__ import annotations

import enum
import hashlib
import os

import numpy as np

from . import _mpi


class DebugLevel(enum.Enum):
    """torch.distributed's debug levels: OFF (the default) and INFO run collectives
    unchecked; DETAIL checks that every rank passes the same shape, dtype, op and root."""
    OFF = 0
    INFO = 1
    DETAIL = 2


_DEBUG_VARS = ("RETROGRAD_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG")
_FORCE_VAR = "RETROGRAD_DISTRIBUTED_CHECK"

_level = DebugLevel.OFF
_forced: bool | None = None      # RETROGRAD_DISTRIBUTED_CHECK: 1 -> True, 0 -> False
env_error: ValueError | None = None   # a bad variable, raised by init_process_group
ENABLED = False                  # read on every collective: one global, no call


def _update() -> None:
    global ENABLED
    ENABLED = (_level is DebugLevel.DETAIL) if _forced is None else _forced


def get_debug_level() -> DebugLevel:
    """The debug level of retrograd.distributed (``DebugLevel.OFF`` unless set)."""
    return _level


def set_debug_level(level) -> None:
    """Set the debug level at run time; call it on every rank, at the same point (a rank
    that checks its collectives waits in a check the others never make).
    ``RETROGRAD_DISTRIBUTED_CHECK=0`` keeps the check off whatever the level."""
    global _level, env_error
    if not isinstance(level, DebugLevel):
        raise TypeError("set_debug_level: level must be a dist.DebugLevel (OFF, INFO or "
                        f"DETAIL), got {level!r}")
    _level = level
    env_error = None
    _update()


def set_debug_level_from_env() -> None:
    """Read the level from ``RETROGRAD_DISTRIBUTED_DEBUG`` (else PyTorch's
    ``TORCH_DISTRIBUTED_DEBUG``): OFF, INFO or DETAIL, any case; and
    ``RETROGRAD_DISTRIBUTED_CHECK`` (1 or 0) that forces the check on or off."""
    global _level, _forced, env_error
    name = next((v for v in _DEBUG_VARS if os.environ.get(v)), None)
    value = os.environ.get(name, "OFF") if name else "OFF"
    level = DebugLevel.__members__.get(value.strip().upper())
    if level is None:
        raise ValueError(f"The value of {name} must be OFF, INFO, or DETAIL (got {value!r})")
    force = os.environ.get(_FORCE_VAR, "").strip()
    if force not in ("", "0", "1"):
        raise ValueError(f"The value of {_FORCE_VAR} must be 1 (check every collective "
                         f"across ranks) or 0 (never), got {force!r}")
    _level = level
    _forced = None if force == "" else force == "1"
    env_error = None
    _update()


try:     # at import, as PyTorch; a bad value must not break `import retrograd`, so it is
    set_debug_level_from_env()   # kept and raised by init_process_group
except ValueError as exc:
    env_error = exc

_DIGESTS: dict = {}


def _pair(description) -> np.ndarray:
    """[sig, -sig] for this description, computed once per distinct description."""
    pair = _DIGESTS.get(description)
    if pair is None:
        digest = hashlib.blake2b(repr(description).encode(), digest_size=7).digest()
        sig = int.from_bytes(digest, "little")          # < 2**56: -sig cannot overflow
        pair = np.array([sig, -sig], dtype=np.int64)
        pair.flags.writeable = False
        if len(_DIGESTS) > 4096:                        # a program of ever-new shapes
            _DIGESTS.clear()
        _DIGESTS[description] = pair
    return pair


def _first_difference(descriptions) -> int:
    """For module layouts (tuples of shapes): the first tensor index where ranks differ."""
    layouts = [list(zip(d[1], d[2])) for d in descriptions]
    longest = max(len(x) for x in layouts)
    for i in range(longest):
        if len({repr(x[i]) if i < len(x) else None for x in layouts}) > 1:
            return i
    return 0


def describe(description, start: int = 0) -> str:
    """'all_reduce of shape (3, 4) float32, op=SUM' for an error message; a module's layout
    (a tuple of shapes and one of dtypes) lists a few of its tensors from index ``start``."""
    fn, shape, dtype, *extra = description
    if isinstance(dtype, tuple):
        listed = [f"#{i} {tuple(s)} {np.dtype(d).name}"
                  for i, (s, d) in enumerate(zip(shape, dtype))][start:start + 4]
        more = ", ..." if len(shape) > start + 4 else ""
        text = f"{len(shape)} tensors [{'..., ' if start else ''}{', '.join(listed)}{more}]"
    else:
        text = f"{fn} of shape {tuple(shape)} {np.dtype(dtype).name}"
    return text + "".join(f", {e}" for e in extra)


def check_same(group, fn: str, description, what: str = "tensor", advice: str = "",
               always: bool = False) -> None:
    """Raise the same RuntimeError on every rank unless all ranks passed ``description``.

    ``description`` is hashable and its repr is stable across processes: (fn, shape tuple,
    dtype string, *extras such as 'op=SUM' or 'src=0'), or for a module (fn, tuple of
    shapes, tuple of dtypes, *extras).  Skipped unless the debug mode is on (``ENABLED``)
    or ``always`` (DDP's construction-time layout check).
    """
    if not (ENABLED or always) or group.size() == 1:
        return
    MPI = _mpi.mpi()
    agreed = np.empty(2, dtype=np.int64)
    # non-blocking then Wait rather than the blocking Allreduce: with more busy processes
    # than cores, MPICH's blocking path for tiny messages (shared-memory flags) cost more in
    # most runs (before a 4 MiB all-reduce at load 7 on 2 cores: 1.04-1.21x vs 1.14-1.40x)
    group.comm.Iallreduce(_pair(description), agreed, MPI.MAX).Wait()
    if agreed[0] == -agreed[1]:
        return
    everyone = group.comm.allgather(description)   # the slow path: pickles, names the ranks
    start = _first_difference(everyone) if isinstance(description[2], tuple) else 0
    lines = "; ".join(f"rank {group.ranks[i]}: {describe(d, start)}"
                      for i, d in enumerate(everyone))
    advice = advice or (f"every rank must call {fn} with a tensor of the same shape and "
                        "dtype (and the same op and root)")
    raise RuntimeError(f"{fn}: the ranks passed {what}s that do not match ({lines}); "
                       f"{advice}")
