"""einsum: Einstein summation over explicit subscripts (``...`` spelt out), recorded under
the grad_fn name of the path PyTorch takes (a sum, a permute, a product or a bmm view); its
derivative is einsums of the gradient with the other operands.
"""

from __future__ import annotations

from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._apply import INPUTS, defop
from .linalg import _saved_view, no_grad_product_view
from .matmul_saved import resave_copies

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation, shapes):
    """Explicit subscripts for ``equation`` (``'...'`` spelt out, the output made explicit)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(f"einsum(): {len(terms)} operands in the equation {equation!r} but "
                           f"{len(shapes)} tensors given")
    used = set(eq) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            n_ell = max(n_ell, len(s) - (len(t) - 3))
    ell = "".join(spare[:n_ell])
    fixed = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k:] if k else "")
        if len(t) != len(s):
            raise RuntimeError(f"einsum(): the subscript {t!r} has {len(t)} indices but the "
                               f"operand has {len(s)} dimensions (shape {list(s)})")
        fixed.append(t)
    if arrow:
        out = out.replace("...", ell)
    else:  # implicit: the ellipsis, then the letters that appear once, in alphabetical order
        counts = {}
        for t in fixed:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    seen = {}  # each subscript's size: equal in every operand, or 1 (which broadcasts)
    for k, (t, s) in enumerate(zip(fixed, shapes)):
        for c, size in zip(t, s):
            before = seen.get(c, 1)
            if size != 1 and before != 1 and size != before:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {size} for operand {k} which does not "
                    f"broadcast with previously seen size {before} (equation {equation!r}, "
                    f"operand shapes {', '.join(str(list(x)) for x in shapes)})"
                )
            if size != 1:
                seen[c] = size
    for t in fixed:
        if len(set(t)) != len(t):
            raise NotImplementedError(
                f"einsum(): a repeated index within one operand ({t!r}, a diagonal) is not "
                "supported by retrograd; use torch.diagonal-style indexing first"
            )
    return fixed, out, ell


def _einsum_fwd(*args):
    *arrays, terms, out, shapes, ell = args
    from ..backend import namespace
    from .einsum_layout import einsum_strides
    from .iter_layout import with_strides

    strides = [tuple(s // a.itemsize for s in a.strides) for a in arrays] \
        if hasattr(arrays[0], "strides") else None
    in_terms = terms
    if len(arrays) == 2:
        # PyTorch's sumproduct_pair sums a label only one operand (and not the output) has
        # before the product, so its rounding is that of the sum: 'ij,jk->j' of a column
        # -1.5, 0.42, 1.08 is 0 there, and NumPy's sum of products 5.6e-17 (which abs's
        # kink turns into a gradient: seed 20007679)
        arrays, terms = map(list, zip(*(_sum_own_labels(a, t, out, terms[1 - i])
                                        for i, (a, t) in enumerate(zip(arrays, terms)))))
    data = namespace(arrays[0]).einsum(",".join(terms) + "->" + out, *arrays)
    if strides is None or not hasattr(data, "strides"):
        return data
    # PyTorch's layout, not NumPy's: a later contiguous()/reshape copies or not by it
    return with_strides(data, einsum_strides(in_terms, out, ell, shapes, strides))


def _sum_own_labels(array, term, out, other):
    """``array`` summed over its labels in neither ``out`` nor ``other``, and its term."""
    own = tuple(k for k, c in enumerate(term) if c not in out and c not in other)
    if not own or array.dtype.kind not in "fc":  # (integers sum exactly in any order)
        return array, term
    return array.sum(axis=own), "".join(c for c in term if c in out or c in other)


def _einsum_vjp(node, g, saved):
    from .shape import expand_op, reshape_op, sum_to_size

    terms, out, shapes, _ = node.params
    grads = []
    for i, (t, nxt) in enumerate(zip(terms, node.next)):
        if nxt is None:
            grads.append(None)
            continue
        others = [s for j, s in enumerate(saved) if j != i]
        other_terms = [u for j, u in enumerate(terms) if j != i]
        present = set(out).union(*other_terms) if other_terms else set(out)
        avail = "".join(c for c in t if c in present)
        gi = einsum_terms([out] + other_terms, avail, [g] + others)
        shape = shapes[i]
        own = dict(zip(t, shape))
        # a size-1 dim of this operand that the others broadcast: sum it back (keepdim)
        reduced = tuple(1 if own[c] == 1 else s for c, s in zip(avail, gi.shape))
        if reduced != tuple(gi.shape):
            gi = sum_to_size(gi, reduced)
        # letters summed within this operand only, and dims this operand broadcasts to the
        # others' size (size 1 everywhere else, so 1 in gi): broadcast them back
        kept = tuple(gi.shape[avail.index(c)] if c in avail else 1 for c in t)
        if avail != t:
            gi = reshape_op(gi, kept, tuple(gi.shape))
        if kept != shape:
            gi = expand_op(gi, shape, kept)
        grads.append(gi)
    return tuple(grads)


def _einsum_name(terms, out):
    # PyTorch's einsum ends in different nodes by path; these are the common ones
    if len(terms) == 1:
        return "SumBackward1" if len(out) < len(terms[0]) else "PermuteBackward0"
    if set(out) == set().union(*terms):
        return "MulBackward0"
    return "ViewBackward0"


def _einsum_saved_for(needs):
    # operand j's values are read by the other operands' derivatives only (its own shape is
    # in the params): PyTorch's bmm/mul keep no more, so an in-place change of an operand
    # that only it needs breaks nothing (fuzz seed 9807254)
    return tuple(any(n for i, n in enumerate(needs) if i != j) for j in range(len(needs)))


_EINSUM_OPS = {name: defop("einsum", _einsum_fwd, _einsum_vjp, name, 0, INPUTS, "promote",
                           saved_for=_einsum_saved_for)
               for name in ("SumBackward1", "PermuteBackward0", "MulBackward0", "ViewBackward0",
                            "BmmBackward0")}


def einsum_terms(terms, out, operands, ell=""):
    """einsum with parsed subscripts (used by einsum's own derivative); ``ell``: the letters
    that spell ``...`` (they order the summed dims, so PyTorch's result layout)."""
    from ._apply import apply_op

    shapes = tuple(tuple(o.shape) for o in operands)
    if not any(hasattr(o, "_data") for o in operands):
        return _einsum_fwd(*operands, terms, out, shapes, ell)
    name = _einsum_name(terms, out)
    result = apply_op(_EINSUM_OPS[name].op, list(operands), (terms, out, shapes, ell))
    if name in ("PermuteBackward0", "ViewBackward0") and not state.enabled:
        return no_grad_product_view(result)
    return result


def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``; ``...`` stands for
    broadcast dimensions.  A repeated index within one operand (a diagonal) is not supported.

    Examples
    --------
    >>> import retrograd as T
    >>> a, b = T.ones(2, 3), T.ones(3, 4)
    >>> T.einsum("ij,jk->ik", a, b).shape, T.einsum("ij->", a)
    (retrograd.Size([2, 4]), tensor(6.))
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type(equation).__name__}: einsum('ij,jk->ik', a, b)")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out, ell = _parse_einsum(equation, [tuple(o.shape) for o in operands])
    first = operands[0].dtype
    if all(isinstance(o, Tensor) for o in operands) and (
            not first.is_floating_point or any(o.dtype is not first for o in operands)):
        # PyTorch's dtype depends on its path (sums of bools count, products promote, bmm
        # refuses mixed dtypes): einsum_dtypes replays it
        from .einsum_dtypes import einsum_dtype

        want = einsum_dtype(terms, out, [tuple(o.shape) for o in operands],
                            [o.dtype for o in operands])
        operands = tuple(o if o.dtype is want else o.to(want) for o in operands)
    name = _einsum_name(terms, out)
    if name == "ViewBackward0" and all(type(o) is Tensor for o in operands):
        # PyTorch's result is a view of its last product (bmm or mul): an in-place change of
        # it goes to that base (CopySlices) and hooks registered before it see nothing of
        # it, so it is one here too (fuzz seeds 9482606, 9485972)
        from ._apply import apply_op
        from .shape import view

        product = apply_op(_EINSUM_OPS["BmmBackward0"].op, [_saved_view(o) for o in operands],
                           (terms, out, tuple(tuple(o.shape) for o in operands), ell))
        _resave_summed_first(product, terms, out, operands)
        return view(product, tuple(product.shape))
    if name == "PermuteBackward0" and sorted(out) == sorted(terms[0]) and \
            type(operands[0]) is Tensor:
        # dims reordered only: PyTorch's result is a permute view of the operand (NumPy's
        # einsum shares its memory too, so it must share its version counter and views)
        from .shape import permute

        return permute(operands[0], tuple(terms[0].index(c) for c in out))
    result = einsum_terms(terms, out, operands, ell)
    _resave_summed_first(result, terms, out, operands)
    return result


def _resave_summed_first(result, terms, out, operands):
    """PyTorch's two-operand einsum first sums each operand over its labels of size > 1 that
    neither the other operand nor the output has, and its product saves that sum: a fresh
    tensor, so a later in-place change of the operand is no error and the backward reads
    the values of the product's time (seed 19671202).  Such an operand is saved as a
    snapshot here (resave_copies).  A size-1 label is squeezed, a view: saved as is."""
    if len(operands) != 2 or not state.enabled or not all(
            type(o) is Tensor for o in operands):
        return
    copies = tuple(
        any(n > 1 and c not in out and c not in terms[1 - i]
            for c, n in zip(terms[i], operands[i].shape))
        for i in range(2))
    if any(copies):
        resave_copies(result, operands, copies)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(einsum, method=False)
