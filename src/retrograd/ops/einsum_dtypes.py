"""einsum's result dtype, as PyTorch 2.13 reaches it (or the error it raises on the way).

PyTorch's einsum (without opt_einsum, as in its default install) is a sequence of sums, products
and batched matrix products, left to right, and its result dtype is whatever that sequence
gives: a sum of bools or integers is int64, an elementwise product promotes, a batched matrix
product (``bmm``) wants one dtype and refuses bools.  So ``einsum('i->', bools)`` counts (int64),
``einsum('i,i->i', int64, float64)`` is float64 (a product), ``einsum('i,i->', int64, float64)``
raises (a ``bmm``), and ``'i,i->'`` of two 1-element tensors of any dtypes promotes (size-1
dims are never contracted by ``bmm``).  ``einsum_dtype`` replays that sequence on the operands'
sizes and dtypes only; einsum then computes once, in the dtype found.
"""

from __future__ import annotations

from .. import dtypes


def _sum_dtype(dt):
    """``x.sum()``'s dtype: bools and integers sum to int64."""
    return dt if dt.is_floating_point else dtypes.int64


def _bmm(a, b):
    if a is dtypes.bool:  # (the first operand's dtype is checked before they are compared)
        raise NotImplementedError(
            "\"bmm\" not implemented for 'Bool' (einsum contracts these operands with a "
            "batched matrix product; convert them first, e.g. a.int())")
    if a is not b:
        from ._apply import _dtype_name

        raise RuntimeError(
            f"einsum(): expected scalar type {_dtype_name(a.numpy)} but found "
            f"{_dtype_name(b.numpy)} (operands of {a} and {b}: einsum contracts them with a "
            "batched matrix product, which does not promote; convert one, e.g. b.to(a.dtype))")
    return a


def einsum_dtype(terms, out, shapes, dts):
    """The dtype of ``einsum`` of operands with subscripts ``terms`` (diagonals already
    refused), output subscripts ``out``, ``shapes`` and retrograd ``dts``; raises PyTorch's
    error where its path does (a ``bmm`` of bools or of two dtypes)."""
    order = []
    for t in terms:
        order.extend(c for c in t if c not in order)
    contracted = [c for c in order if c not in out]
    sizes = [{c: s for c, s in zip(t, shape)} for t, shape in zip(terms, shapes)]
    if len(terms) == 1:  # one operand: a sum over the contracted dims, if any
        return _sum_dtype(dts[0]) if contracted else dts[0]
    # how many operands have each contracted dim with a size other than 1
    counts = {c: sum(1 for s in sizes if s.get(c, 1) != 1) for c in contracted}
    ops = []
    for s, dt in zip(sizes, dts):
        only_here = [c for c in contracted if counts[c] == 1 and s.get(c, 1) != 1]
        if only_here:  # summed within the operand before any product
            dt = _sum_dtype(dt)
            s = {c: (1 if c in only_here else n) for c, n in s.items()}
            for c in only_here:
                counts[c] = 0
        ops.append((s, dt))
    a_sizes, a_dt = ops[0]
    for b_sizes, b_dt in ops[1:]:
        product_sums = []
        for c in contracted:
            na, nb = a_sizes.get(c, 1), b_sizes.get(c, 1)
            if na != 1 and nb != 1:
                counts[c] -= 1
                if counts[c] == 1:
                    product_sums.append(c)
                    counts[c] = 0
            elif counts[c] == 1:
                if na != 1:
                    a_dt, a_sizes = _sum_dtype(a_dt), {**a_sizes, c: 1}
                    counts[c] = 0
                elif nb != 1:
                    b_dt, b_sizes = _sum_dtype(b_dt), {**b_sizes, c: 1}
                    counts[c] = 0
        merged = {c: max(a_sizes.get(c, 1), b_sizes.get(c, 1))
                  for c in {*a_sizes, *b_sizes}}
        if product_sums:
            # PyTorch's sumproduct_pair swaps the operands of its bmm when every dim only the
            # right one has (or neither: size 1 in both) comes before every dim only the left
            # one has, in its layout (output dims, then contracted ones alphabetically)
            def where(c):
                return out.index(c) if c in out else len(out) + sorted(contracted).index(c)

            lo = [where(c) for c in order if c not in product_sums
                  and a_sizes.get(c, 1) != 1 and b_sizes.get(c, 1) == 1]
            ro = [where(c) for c in order if c not in product_sums and a_sizes.get(c, 1) == 1]
            left, right = (b_dt, a_dt) if lo and ro and max(ro) < min(lo) else (a_dt, b_dt)
            # (an empty operand skips the bmm: PyTorch returns zeros of the right one's dtype)
            empty = 0 in a_sizes.values() or 0 in b_sizes.values()
            a_dt = right if empty else _bmm(left, right)
            merged.update({c: 1 for c in product_sums})
        else:
            a_dt = dtypes.promote_types(a_dt, b_dt)
        a_sizes = merged
    return a_dt
