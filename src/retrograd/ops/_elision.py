"""Temporary elision at the Tensor level: an op writes its result into the memory of an
input tensor that nothing else can see again (``h @ w + b`` adds into the product's array).

NumPy does this for its own temporaries over 256 KiB (an operand whose refcount says only
the expression holds it becomes the output).  A tensor hides its array from NumPy, so
retrograd decides for itself, in the callers of ops/_apply.py, at a cost of one size test
for small arrays: the saved allocation and the cache it keeps warm pay only on large ones
(bench/run.py (d) and (f), issue 12).

An input ``t`` (array ``d``) may take the result only when all of these hold:

- ``t`` is a temporary: ``sys.getrefcount`` counts no holder but the op's own call.  A
  temporary passed straight to the op (``relu(x @ w)``) is held by the op's frame alone;
  one an operator passes (``x @ w + b``) is also on the evaluation stack of the frame
  running that operator, which is then at a BINARY_OP instruction.  The same count from a
  named tensor passed straight to the op (``mul(x, y)``, ``x.__add__(y)``) comes with a
  CALL there, so the frame's instruction is read when the count is the operator's;
- nothing else holds ``d``: no view of it (a view references its base), no node saving it
  (SavedOutput holds the array, a saved input holds the tensor), no other tensor sharing
  it (``detach()``, ``.data``); it owns its memory (``base is None``) and is writeable;
- ``t`` has no hooks, retain_grad, tangent or other extras (``_extra``), no version counter
  (one is made when an output is saved or a view shares it), and is not a leaf requiring
  grad (its AccumulateGrad would hold it);
- the caller checked the rest: a NumPy float array of the result's dtype and shape, no
  forward AD level, no compile trace, no saved-tensor hooks or anomaly mode, no
  inference_mode block, and that the op itself does not save that input.

CPython 3.14 lets frames borrow references without counting them, so there (and on other
interpreters) nothing is ever elided: a missed holder would be a silently wrong value.
"""

from __future__ import annotations

import dis
import sys

import numpy as np

_getrefcount = sys.getrefcount
_getframe = sys._getframe
_ndarray = np.ndarray

_EXACT_REFCOUNTS = sys.implementation.name == "cpython" and sys.version_info < (3, 14)
#: the fewest elements an input must have to take an op's result.  Below it the checks (a
#: Python call, and for an operator's temporary a frame object) cost more than the fresh
#: buffer they save: elided, a 64x128 float32 bias add took 4.4k instructions more (51.7k
#: against 47.3k) and no less time (bench/elision.py (f)).  NumPy's own threshold: 256 KiB.
ELIDE_MIN = 1 << 16 if _EXACT_REFCOUNTS else sys.maxsize
_BINARY_OP = dis.opmap.get("BINARY_OP", -1)

# What getrefcount reports, inside ``temporary``, for a tensor passed straight to an op's
# caller and held by nothing else: the caller's parameter (``input``/``other``) and its
# alias (``x``/``a``/``b``), ``temporary``'s own parameter and getrefcount's argument.  An
# operator's temporary has one more: the evaluation stack of the frame that runs it.
# tests/test_temporary_elision.py checks both sides of each count.
_DIRECT_REFS = 4
_OPERATOR_REFS = 5
# ... and for its array: the tensor's ``_data``, the caller's local (``xd``/``ad``/``bd``),
# ``temporary``'s parameter and getrefcount's argument
_SOLE_ARRAY_REFS = 4

#: the ufuncs that may write into an input of their own dtype (float in, same float out);
#: an op's ``fast`` must be one of these for its callers to elide
# (a set: an op module adds its own out=-taking forward, elementary's float32 tanh)
UFUNCS = {np.add, np.subtract, np.multiply, np.sin, np.cos, np.tanh, np.exp, np.log, np.sqrt}


def temporary(t, d) -> bool:
    """Whether tensor ``t`` (a plain Tensor), with NumPy array ``d`` (its ``_data``), is a
    temporary of the op's caller whose memory nothing else can see (see the module's
    docstring).  Called from an op's caller in ops/_apply.py, and from nowhere else: the
    reference counts assume exactly that call chain."""
    n = _getrefcount(t)
    if n != _DIRECT_REFS:
        if n != _OPERATOR_REFS:
            return False
        frame = _getframe(2)  # (1: the op's caller; 2: the code that called it)
        if frame.f_code.co_code[frame.f_lasti] != _BINARY_OP:
            return False
    return (t._extra is None and t._vc is None
            and (t._grad_fn is not None or not t._requires_grad)
            and d.base is None and _getrefcount(d) == _SOLE_ARRAY_REFS
            and _writeable_c(d.flags))


def _writeable_c(flags) -> bool:
    # C-contiguous too: then NumPy's result of the op would have been C-contiguous as well,
    # so writing it into ``d`` keeps the layout (and the strides) it would have had
    return flags.writeable and flags.c_contiguous
