"""The cross-rank check that every rank calls the same collective on the same layout.

A collective whose ranks disagree on shape or dtype would not fail: MPI moves bytes, so it
would corrupt memory or hang.  Before each such collective every rank therefore takes part
in one tiny ``Allreduce(MAX)`` of the int64 pair ``[sig, -sig]``, where ``sig`` is a 56-bit
digest of what this rank is about to do (the function, shape, dtype, and the op or root).
The ranks all agree iff ``max(sig) == -max(-sig)``, i.e. max == min.  Only then does the
collective go ahead; on a mismatch (which every rank sees, from the same reduced pair) the
ranks gather their descriptions, so the error names each rank's shape and dtype.

Every rank does the same calls in the same order whatever it passed, so the check itself
cannot deadlock; and it is done on every call, never skipped after a first success on one
rank (ranks that cached different decisions would wait in different collectives).  What is
cached is only this rank's digest of a layout, which costs nothing to look up.

Its price is one more synchronisation of a few microseconds per collective (16 bytes),
negligible beside the data of a large all-reduce; ``RETROGRAD_DISTRIBUTED_CHECK=0`` skips
it where every microsecond counts.  Riding the digest on the collective's own message would
need a staged copy of the data (dearer than the check for large tensors) or a per-op
encoding of integers in the reduced dtype, so the check stays a separate message.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

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


def describe(description) -> str:
    """'all_reduce of shape (3, 4) float32, op=SUM' for an error message; a module's layout
    (a tuple of shapes and one of dtypes) lists its tensors, the first few in full."""
    fn, shape, dtype, *extra = description
    if isinstance(dtype, tuple):
        listed = [f"{tuple(s)} {np.dtype(d).name}" for s, d in zip(shape, dtype)]
        more = f", ... {len(listed) - 8} more" if len(listed) > 8 else ""
        text = f"{len(listed)} tensors [{', '.join(listed[:8])}{more}]"
    else:
        text = f"{fn} of shape {tuple(shape)} {np.dtype(dtype).name}"
    return text + "".join(f", {e}" for e in extra)


def check_same(group, fn: str, description, what: str = "tensor") -> None:
    """Raise the same RuntimeError on every rank unless all ranks passed ``description``.

    ``description`` is hashable and its repr is stable across processes: (fn, shape tuple,
    dtype string, *extras such as 'op=SUM' or 'src=0').
    """
    if not ENABLED or group.size() == 1:
        return
    from . import _mpi

    MPI = _mpi.mpi()
    agreed = np.empty(2, dtype=np.int64)
    group.comm.Allreduce(_pair(description), agreed, MPI.MAX)
    if agreed[0] == -agreed[1]:
        return
    everyone = group.comm.allgather(description)   # the slow path: pickles, names the ranks
    lines = "; ".join(f"rank {group.ranks[i]}: {describe(d)}" for i, d in enumerate(everyone))
    raise RuntimeError(f"{fn}: the ranks passed {what}s that do not match ({lines}); every "
                       f"rank must call {fn} with a tensor of the same shape and dtype (and "
                       "the same op and root)")
