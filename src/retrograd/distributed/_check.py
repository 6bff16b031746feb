"""The cross-rank check that every rank calls the same collective on the same layout.

A collective whose ranks disagree on shape or dtype need not fail: MPI moves bytes, so it
may corrupt memory or hang.  Before each such collective every rank therefore takes part
in one tiny all-reduce (MAX) of the int64 pair ``[sig, -sig]``, where ``sig`` is a 56-bit
digest of what this rank is about to do (the function, shape, dtype, and the op or root).
The ranks all agree iff ``max(sig) == -max(-sig)``, i.e. max == min.  Only then does the
collective go ahead; on a mismatch (which every rank sees, from the same reduced pair) the
ranks gather their descriptions, so the error names each rank's shape and dtype.

Every rank does the same calls in the same order whatever it passed, so the check itself
cannot deadlock; and it is done on every call, never skipped after a first success on one
rank (ranks that cached different decisions would wait in different collectives).  What is
cached is only this rank's digest of a layout, which costs nothing to look up.

Its price is one more synchronisation per collective: a few microseconds on idle cores,
negligible beside a large all-reduce, but about a scheduler time slice when the machine has
more busy processes than cores (every rank must be running for a collective to progress);
``RETROGRAD_DISTRIBUTED_CHECK=0`` skips it.  It cannot ride on the collective's own message:
the ranks would have to agree on the message's size before sending it (MPI collectives with
mismatched counts are erroneous: a truncation error on one rank, silently wrong data or a
hang on another), and the digest would have to survive the reduction op in the data's dtype
and be staged next to data the caller owns (a copy of the whole tensor).
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

from . import _mpi

ENABLED = os.environ.get("RETROGRAD_DISTRIBUTED_CHECK", "1") != "0"

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


def check_same(group, fn: str, description, what: str = "tensor", advice: str = "") -> None:
    """Raise the same RuntimeError on every rank unless all ranks passed ``description``.

    ``description`` is hashable and its repr is stable across processes: (fn, shape tuple,
    dtype string, *extras such as 'op=SUM' or 'src=0'), or for a module (fn, tuple of
    shapes, tuple of dtypes, *extras).
    """
    if not ENABLED or group.size() == 1:
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
