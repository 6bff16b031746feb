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
    """Make the nodes of ``out``'s graph that take ``cast`` (``source.to(dtype)``) take
    ``source`` instead, skipping the ToCopyBackward0 that cast recorded; returns ``out``.

    Only nodes recorded after the cast are visited (a larger sequence number; the graph
    below the cast is the caller's and stays as it is), so a composite (matrix_norm's
    amax of vector norms, an SVD's) is rewired where its first node takes the cast.
    Nothing changes where no cast was made (``cast is source``) or nothing was recorded."""
    root = getattr(out, "_grad_fn", None)  # (a batched tensor under vmap has none)
    copy = getattr(cast, "_grad_fn", None)
    if (root is None or copy is None or cast is source or len(copy.next) != 1
            or type(copy).__name__ != "ToCopyBackward0"):
        return out
    below = copy.next[0]
    below_nr = copy.next_nr[0] if copy.next_nr else 0
    after = copy.seq
    seen = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
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
            elif edge is not None and getattr(edge, "seq", -1) > after:
                stack.append(edge)
        if changed:
            node.next = tuple(edges)
            node.next_nr = nrs if nrs and any(nrs) else None
    return out
