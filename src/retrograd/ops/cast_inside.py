"""An op's ``dtype=`` cast made part of the op's own node, as PyTorch's graph has it.

``x.sum(dtype=float64)`` (and mean, prod, cumsum, cumprod, nansum, the norms) computes on
``x.to(float64)``; PyTorch records no ToCopyBackward0 for that cast: the op's node takes
``x`` itself (its next_functions point at ``x``'s grad_fn or AccumulateGrad) and its
gradient comes back in ``x``'s dtype.  retrograd's ops compute on the cast copy, which
records a ToCopyBackward0; :func:`take_source` then points the op's edge past it, straight
at ``x``'s.  Every backward path (the engine, vmap's batched backward, the compiler) casts
a gradient to the dtype of the node it is sent to (``conform``), which is the cast back
the skipped ToCopyBackward0 did.  The node still saves the cast copy where its derivative
reads it (nobody else holds that copy); the caller's tensor, whose in-place change before
backward PyTorch refuses, is added for its version check by the op (``check_also``).
"""

from __future__ import annotations


def take_source(out, cast, source):
    """Make ``out``'s node take ``source`` where it takes ``cast`` (``source.to(dtype)``),
    skipping the ToCopyBackward0 that cast recorded; returns ``out``.

    Only ``out``'s own node: where PyTorch's composite keeps the cast (an SVD-based matrix
    norm), its graph has the ToCopyBackward0, so a caller splices the node that takes the
    cast in PyTorch (matrix_norm's vector norms).  Nothing changes where no cast was made
    (``cast is source``) or nothing was recorded."""
    node = getattr(out, "_grad_fn", None)  # (a batched tensor under vmap has none)
    copy = getattr(cast, "_grad_fn", None)
    if (node is None or copy is None or cast is source or len(copy.next) != 1
            or type(copy).__name__ != "ToCopyBackward0"):
        return out
    below = copy.next[0]
    below_nr = copy.next_nr[0] if copy.next_nr else 0
    edges = list(node.next)
    nrs = list(node.next_nr) if node.next_nr else None
    changed = False
    for i, edge in enumerate(edges):
        if edge is copy:
            edges[i] = below
            if below_nr or nrs:
                nrs = nrs or [0] * len(edges)
                nrs[i] = below_nr
            changed = True
    if changed:
        node.next = tuple(edges)
        node.next_nr = nrs if nrs and any(nrs) else None
    return out
