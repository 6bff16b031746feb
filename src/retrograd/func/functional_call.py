"""``functional_call``: run a module with some parameters and buffers replaced."""

from __future__ import annotations

import contextlib


def _owner(module, name):
    mod = module
    *path, leaf = name.split(".")
    for p in path:
        mod = getattr(mod, p)
    return mod, leaf


@contextlib.contextmanager
def _swapped(module, values):
    saved = []
    try:
        for name, value in values.items():
            mod, leaf = _owner(module, name)
            d = mod.__dict__
            if leaf in d.get("_parameters", {}):
                saved.append((d["_parameters"], leaf, d["_parameters"][leaf]))
                d["_parameters"][leaf] = value
            elif leaf in d.get("_buffers", {}):
                saved.append((d["_buffers"], leaf, d["_buffers"][leaf]))
                d["_buffers"][leaf] = value
            else:
                had = leaf in d
                saved.append((d, leaf, d[leaf] if had else _MISSING))
                d[leaf] = value
        yield
    finally:
        for store, leaf, old in reversed(saved):
            if old is _MISSING:
                del store[leaf]
            else:
                store[leaf] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a tuple of dicts) replaced for this call, as
    ``torch.func.functional_call``.

    >>> import retrograd as T
    >>> lin = T.nn.Linear(2, 1)
    >>> p = {"weight": T.ones(1, 2), "bias": T.zeros(1)}
    >>> T.func.functional_call(lin, p, (T.tensor([1.0, 2.0]),))
    tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        values = {}
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                                 f"dictionaries, got {type(d).__name__}")
            for k in d:
                if k in values:
                    raise ValueError(f"['{k}'] appeared in multiple dictionaries; behavior of "
                                     "functional call is ambiguous")
            values.update(d)
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    named = list(module.named_parameters(remove_duplicate=False)) + list(
        module.named_buffers(remove_duplicate=False))
    if tie_weights:  # a tied tensor replaced under one of its names is replaced under all
        by_id: dict = {}
        for n, t in named:
            by_id.setdefault(id(t), []).append(n)
        for names in by_id.values():
            given = [n for n in names if n in values]
            if not given or len(names) == 1:
                continue
            first = values[given[0]]
            for n in given[1:]:
                if values[n] is not first:
                    raise ValueError(
                        f"functional_call got multiple values for keys {sorted(given)}, which "
                        f"are tied. Consider using tie_weights=False")
            for n in names:
                values.setdefault(n, first)
    if strict:
        known = {n for n, _ in named}
        missing = sorted(known - set(values))
        unexpected = sorted(set(values) - known)
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                msg.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(msg))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values):
        return module(*args, **(kwargs or {}))
