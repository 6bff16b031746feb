"""A chain of unary pointwise derivatives run block by block (first-order backward).

``exp(tanh(sin(h))) * 0.1`` records four one-input nodes in a row.  Their first-order
derivatives, run one node at a time, sweep whole arrays eight times (``g * 0.1``, ``* e``,
``t * t``, ``1 - ``, ``*``, ``cos(h)``, ``*``, then the sum with the gradient arriving from
the other path), each pass reading and writing megabytes that have left the cache since the
previous pass.  Run over blocks of 128 KiB instead, every pass but the first reads what the
previous one left in the cache, and the intermediates live in two block-sized buffers: on
(d)'s 1000x1000 float32 chain the backward is about 10 % faster (fused against unfused in
one process), bit for bit the same (bench/run.py (d), issue 12).

An op opts in with ``node_cls.block_vjp = (accepts, step)``:

- ``accepts(node, saved, dtype)``: whether its derivative can run blockwise for these saved
  values (already checked: each None, a Python number or a C-contiguous array of the
  gradient's shape) and this gradient dtype, computing what its ``vjp`` computes, bit for
  bit (its first edge gets the result; the others are None);
- ``step(node, saved_blocks, g, out, tmp)``: the derivative of one block (the saved arrays
  sliced to it, numbers as they are): reads ``g`` (a block of the incoming gradient,
  possibly ``out`` itself), writes the result into ``out``;
  ``tmp`` is a scratch block that aliases neither.

The engine (:func:`chain_from`) takes a node and as many of the nodes below it as form a
chain: each the only consumer of the one before (its dependency count is 1, no root
gradient waiting at it), sending its gradient down its first edge only, with no hooks of
any kind, not multi-output, its saved values plain (no saved-tensor hooks) and readable
(an unpack that raises ends the chain there, so the error comes when that node runs, as
without fusion), of the same shape and dtype, and accepting.  It runs only in a
first-order ``backward()`` (no ``inputs=``, no tracer, no anomaly mode, no forward AD), for
gradients of 2^17+ elements; everything else takes the one-node-at-a-time path.  Nodes run
fused have no hooks and nothing captures their gradients, so what is observable is the
same: the values, the gradient delivered below the chain, saved values freed (unless
``retain_graph``).
"""

from __future__ import annotations

import numpy as np

from .graph import AccumulateGrad, PackedSaved

_ndarray = np.ndarray
_F32 = np.dtype("float32")
_F64 = np.dtype("float64")

#: the fewest elements a chain's gradient must have: at least a few blocks
CHAIN_MIN = 1 << 17
#: bytes per block: a few of them (the scratch buffers and the slices read) fit in L2
_BLOCK_BYTES = 1 << 17


def _plain_values(values, shape) -> bool:
    """Each value None, a Python number, or a C-contiguous ndarray of ``shape``."""
    for a in values:
        ta = type(a)
        if ta is _ndarray:
            if a.shape != shape or not a.flags.c_contiguous:
                return False
        elif a is not None and ta is not float and ta is not int:
            return False
    return True


def _one_edge(node) -> bool:
    """Its gradient goes down its first edge only (``x * 0.1``: the number has none)."""
    nxt = node.next
    return nxt[0] is not None and (len(nxt) == 1 or nxt.count(None) == len(nxt) - 1)


def _plain_saved(node, unpack_saved, shape):
    """``node``'s saved values (read without error) when :func:`_plain_values`, else
    None."""
    saved = node.saved
    if saved is None:
        return None
    for s in saved:
        if type(s) is PackedSaved:  # (its unpack hook runs when the node runs)
            return None
    if not saved:
        return []
    try:
        arrays = unpack_saved(node, False)
    except Exception:  # noqa: BLE001 - the node raises it itself, in its turn
        return None
    return arrays if _plain_values(arrays, shape) else None


def chain_from(node, g, saved, deps, buffers, unpack_saved, top):
    """The chain of fusable nodes starting at ``node`` (which receives ``g`` and whose
    saved arrays are ``saved``), as ``[(node, saved arrays, step)]``, and the node below
    it that receives the chain's result; None when fewer than two nodes chain.

    ``top``: the sequence number of the node that would run next (the ready heap's top),
    or None.  The chain takes only nodes created after it, which the one-node loop would
    run one after the other before it: so every node, and the node below the chain, runs
    or becomes ready at the point of the pass where it would without fusion (the order of
    other nodes' hooks, of leaves' accumulations, is PyTorch's either way)."""
    dtype = g.dtype
    if dtype is not _F32 and dtype is not _F64:
        return None
    shape = g.shape
    if not shape:
        return None
    spec = node.block_vjp
    if not _one_edge(node) or not _plain_values(saved, shape) or not spec[0](node, saved, dtype):
        return None
    chain = [(node, saved, spec[1])]
    child = node.next[0]
    while (child is not None and type(child) is not AccumulateGrad
           and child.block_vjp is not None and child.hooks is None
           and not child.multi_output and deps.get(child) == 1 and _one_edge(child)
           and child not in buffers  # (a root as well: its own gradient is waiting)
           and (top is None or child.seq > top)
           and child.out_shape == shape and child.out_dtype == dtype):
        spec = child.block_vjp
        arrays = _plain_saved(child, unpack_saved, shape)
        if arrays is None or not spec[0](child, arrays, dtype):
            break
        chain.append((child, arrays, spec[1]))
        child = child.next[0]
    if len(chain) < 2 or child is None or child.multi_output:
        return None
    if child.out_shape != shape or child.out_dtype != dtype:
        return None  # (the result would need conform(): the one-node path does it)
    return chain, child


def run_chain(chain, g, prev):
    """The chain's result for incoming gradient ``g``: a fresh C-contiguous array, with
    ``prev`` (the gradient already waiting at the node below, or None) added in, as
    ``_sum_arrays`` would (``result += prev``: addition commutes exactly)."""
    shape = g.shape
    dtype = g.dtype
    rows = shape[0] if shape else 1
    row = g.size // rows if rows else 0
    per = max(1, _BLOCK_BYTES // (max(row, 1) * dtype.itemsize))
    result = np.empty(shape, dtype)
    block = (min(per, rows),) + shape[1:]
    s1 = np.empty(block, dtype)
    s2 = np.empty(block, dtype)
    last = len(chain) - 1
    for i in range(0, rows, per):
        j = min(rows, i + per)
        k = j - i
        a, b = (s1, s2) if k == per else (s1[:k], s2[:k])
        gb = g[i:j]
        for n, (node, saved, step) in enumerate(chain):
            out = result[i:j] if n == last else a
            step(node, [s[i:j] if type(s) is _ndarray else s for s in saved], gb, out, b)
            gb = out
        if prev is not None:
            gb += prev[i:j]
    return result
