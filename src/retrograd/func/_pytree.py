"""Nested structures of tensors (PyTorch's pytrees): tuples, lists, dicts, namedtuples.

The transforms flatten their inputs and outputs to lists of leaves, work on the leaves and
rebuild the structure; ``in_dims``/``out_dims`` are matched against the same structure.
"""

from __future__ import annotations


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def flatten(tree) -> tuple[list, object]:
    """``(leaves, spec)``: the leaves in order and what :func:`unflatten` needs to rebuild."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if _is_namedtuple(tree):
        return (type(tree), [_flatten(v, leaves) for v in tree])
    if isinstance(tree, (tuple, list)):
        return (type(tree), [_flatten(v, leaves) for v in tree])
    if isinstance(tree, dict):
        return (dict, [(k, _flatten(v, leaves)) for k, v in tree.items()])
    leaves.append(tree)
    return None  # a leaf


def unflatten(leaves, spec):
    """The structure ``spec`` (from :func:`flatten`) with ``leaves`` in its leaf slots."""
    it = iter(leaves)
    return _unflatten(spec, it)


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    kind, children = spec
    if kind is dict:
        return {k: _unflatten(c, it) for k, c in children}
    values = [_unflatten(c, it) for c in children]
    if kind is list:
        return values
    if kind is tuple:
        return tuple(values)
    return kind(*values)  # a namedtuple


def spec_repr(spec) -> str:
    """A short text form of a structure, for error messages (``(*, [*, *])``)."""
    if spec is None:
        return "*"
    kind, children = spec
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {spec_repr(c)}" for k, c in children) + "}"
    inner = ", ".join(spec_repr(c) for c in children)
    return f"[{inner}]" if kind is list else f"({inner}{',' if len(children) == 1 else ''})"


def broadcast_prefix(prefix, tree, what: str, fname: str) -> list:
    """One value of ``prefix`` per leaf of ``tree``: a leaf of ``prefix`` (an int, None)
    covers a whole subtree, as PyTorch's in_dims and out_dims do."""
    out: list = []
    _broadcast(prefix, tree, out, what, fname, tree)
    return out


def _broadcast(prefix, tree, out, what, fname, whole):
    if prefix is None or isinstance(prefix, int):
        n = len(flatten(tree)[0])
        out.extend([prefix] * n)
        return
    ok = (isinstance(prefix, dict) and isinstance(tree, dict) and set(prefix) == set(tree)) or (
        isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list))
        and len(prefix) == len(tree))
    if not ok:
        raise ValueError(
            f"{fname}: {what} is not compatible with the structure of `inputs`. {what} has "
            f"structure {spec_repr(flatten(prefix)[1])} but inputs has structure "
            f"{spec_repr(flatten(whole)[1])}. (Give one {what} entry per input, or an int / "
            "None for a whole sub-structure.)")
    if isinstance(prefix, dict):
        for k in tree:
            _broadcast(prefix[k], tree[k], out, what, fname, whole)
    else:
        for p, t in zip(prefix, tree):
            _broadcast(p, t, out, what, fname, whole)
