"""einsum's result layout (strides) as PyTorch 2.13 produces it.

NumPy's einsum lays its result out its own way; PyTorch's (aten/src/ATen/native/Linear.cpp,
without opt_einsum, as in its default install) is the end of a sequence of permutes, sums,
products and ``bmm``\\ s, and its strides are whatever that sequence leaves: ``'ij,jk->ki'``
of a (2, 1) and a (1, 2) operand is a permuted view of a row-major product, so its strides
are (1, 2).  The difference is observable: a later ``contiguous()`` or ``reshape`` copies in
one library only (CloneBackward0 in one graph), and pointwise results carry the layout on
(fuzz seeds 20047317, 20118121).  ``einsum_strides`` replays that sequence on shapes and
strides only:

* each operand is permuted to the common order: the output's labels, then the ellipsis
  dims the output drops, then the other summed labels in PyTorch's label order (upper case
  first); a label it lacks is unsqueezed at its end first (stride 1);
* left to right, the first two operands are replaced by their product: each first sums
  (a fresh row-major tensor, keepdim) the summed dims no later operand has; the product is
  ``mul`` (TensorIterator's layout, iter_layout.result_strides) when no dim is summed in
  both, else a row-major ``bmm`` result of the dims (both, left only, right only) viewed
  back to the dims' sizes and permuted to the common order;
* the summed dims (all of size 1 by then) are dropped by a ``view``; a single operand is
  instead summed (row-major) or only permuted.
"""

from __future__ import annotations

from .iter_layout import result_strides
from .matmul_saved import view_strides


def _row_major(shape):
    out, step = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        out[d] = step
        step *= max(shape[d], 1)
    return out


def _product(left, right, sum_dims):
    """PyTorch's ``sumproduct_pair(left, right, sum_dims, keepdim=True)``: (sizes, strides)."""
    (lsz, lst), (rsz, rst) = left, right
    if not sum_dims:  # at::mul
        shape = tuple(b if a == 1 else a for a, b in zip(lsz, rsz))
        want = result_strides(shape, 1, [(tuple(lsz), tuple(lst), 1),
                                         (tuple(rsz), tuple(rst), 1)])
        return list(shape), list(want) if want is not None else _row_major(shape)
    lsz, rsz = list(lsz), list(rsz)
    both, lonly, ronly = [], [], []
    for d in range(len(lsz)):
        sl, sr = lsz[d] != 1, rsz[d] != 1
        if d in sum_dims:  # a dim only one side has is summed there first (size 1 after)
            if not sr:
                lsz[d] = 1
            elif not sl:
                rsz[d] = 1
        elif sl and sr:
            both.append(d)
        elif sl:
            lonly.append(d)
        else:
            ronly.append(d)
    if lonly and ronly and ronly[-1] < lonly[0]:
        # every right-only dim comes before every left-only one in the output: PyTorch
        # swaps the operands, so the bmm result is in output order
        lsz, rsz, lonly, ronly = rsz, lsz, ronly, lonly
    sizes = ([lsz[d] for d in both] + [lsz[d] for d in lonly] + [1] * len(sum_dims)
             + [rsz[d] for d in ronly])

    def numel(dims, sz):
        n = 1
        for d in dims:
            n *= sz[d]
        return n

    bmm = (numel(both, lsz), numel(lonly, lsz), numel(ronly, rsz))
    viewed = view_strides(bmm, _row_major(bmm), sizes)
    shape, strides = [0] * len(lsz), [0] * len(lsz)
    for k, d in enumerate(both + lonly + list(sum_dims) + ronly):  # permute back
        shape[d], strides[d] = sizes[k], viewed[k]
    return shape, strides


def einsum_strides(terms, out, ell, shapes, strides):
    """The element strides of PyTorch's ``einsum`` result for explicit subscripts ``terms``
    (``...`` spelt out as the letters ``ell``), output subscripts ``out`` and operands of
    these shapes and element strides (no repeated label within an operand)."""
    summed = [c for c in ell if c not in out]
    summed += sorted(set().union(*terms) - set(out) - set(ell))
    labels = list(out) + summed
    n_out, n = len(out), len(labels)
    counts = [0] * n  # how many operands have each dim with a size other than 1
    ops = []
    for t, sh, st in zip(terms, shapes, strides):
        size, step = [1] * n, [1] * n  # a missing label: unsqueezed at the end (stride 1)
        for c, s, k in zip(t, sh, st):
            d = labels.index(c)
            size[d], step[d] = s, k
            counts[d] += s != 1
        ops.append((size, step))
    if len(ops) == 1:
        size, step = ops[0]
        return tuple(_row_major(size[:n_out]) if n > n_out else step)
    while len(ops) > 1:
        (asz, ast), (bsz, bst) = ops[0], ops[1]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(n_out, n):  # the summed dims that no later operand has
            if asz[d] != 1 and bsz[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if asz[d] != 1:
                    a_sum.append(d)
                    counts[d] = 0
                elif bsz[d] != 1:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:  # a.sum(a_sum, keepdim=True): a fresh row-major tensor
            asz = [1 if d in a_sum else s for d, s in enumerate(asz)]
            ast = _row_major(asz)
        if b_sum:
            bsz = [1 if d in b_sum else s for d, s in enumerate(bsz)]
            bst = _row_major(bsz)
        ops[:2] = [_product((asz, ast), (bsz, bst), sum_dims)]
    size, step = ops[0]
    if n == n_out:
        return tuple(step)
    return tuple(view_strides(tuple(size), tuple(step), tuple(size[:n_out])))

