"""The one list of ops: every public op and the names it is known by.

Each op module ends with a short declarative table, one :func:`register` call per public
op: the callable (a ``defop`` record's caller, or a plain wrapper such as ``reshape``) and
its public names.  Nothing else lists op names.  From this list

* the package's assembly (``retrograd/_assembly.py``) builds the top-level functions
  (``retrograd.add``), the Tensor methods, operators and in-place forms;
* ``retrograd.special`` and ``retrograd.nn.functional`` (later ``retrograd.linalg``) take
  their functions from it;
* the op tests iterate it (``tests/ops/test_registry.py``): an op registered without test
  cases fails a test.

This module imports nothing from retrograd, so every layer may register into it.

>>> from retrograd.ops import registry
>>> e = registry.entry("clamp")
>>> e.names["torch"], sorted(e.methods)[:2], e.inplace
(('clamp', 'clip'), ['clamp', 'clip'], 'clamp_')
"""

from __future__ import annotations

import sys

#: The namespaces an op's functions can appear in: ``torch`` is retrograd's top level.
NAMESPACES = ("torch", "special", "linalg", "nn.functional")


class Entry:
    """One public op.

    Attributes
    ----------
    key : str
        Unique within the registry: the op's name, or ``"nn.functional.relu"`` for an op
        that has neither a top-level function nor a method.
    fn : callable
        What users call.  ``fn.op`` is the :class:`~retrograd.ops._apply.Op` record when the
        op was made by ``defop``; plain wrappers have none (see :attr:`op`).
    kind : str
        The op module that defines it (``"pointwise"``, ``"layout"``...): the op tests are
        split by the same kinds.
    names : dict
        namespace (one of :data:`NAMESPACES`) -> the function names it has there.
    methods : dict
        Tensor attribute name -> callable: methods, operators (``__add__``), reflected
        forms, properties (``T``).
    inplace : str or None
        The name of its in-place method (``"add_"``), set when that form registers.
    inplace_of : str or None
        For an in-place form, the key of the out-of-place op.
    differentiable : bool
        Whether gradients flow through it (the op tests then demand a gradcheck case).
    jvp, batch_rule
        Reserved, None for now: the forward-mode derivative (``jvp(primals, tangents,
        params) -> tangent``) and the vmap batching rule (``rule(args, batch_dims) ->
        (out, out_batch_dim)``) will attach here, to the same record as the VJP.
    """

    __slots__ = ("key", "fn", "kind", "names", "methods", "inplace", "inplace_of",
                 "differentiable", "jvp", "batch_rule")

    def __init__(self, key, fn, kind, names, methods, inplace_of, differentiable):
        self.key = key
        self.fn = fn
        self.kind = kind
        self.names = names
        self.methods = methods
        self.inplace = None
        self.inplace_of = inplace_of
        self.differentiable = differentiable
        self.jvp = None
        self.batch_rule = None

    @property
    def op(self):
        """The ``defop`` record behind ``fn``, or None for a plain wrapper."""
        return getattr(self.fn, "op", None)

    def all_names(self) -> set:
        """Every public spelling: functions (with their namespace) and Tensor attributes."""
        out = {f"{ns}.{n}" if ns != "torch" else n for ns, ns_names in self.names.items()
               for n in ns_names}
        return out | {f"Tensor.{m}" for m in self.methods}

    def __repr__(self):
        return f"<registry entry {self.key} ({self.kind})>"


_ENTRIES: dict[str, Entry] = {}
_TAKEN: dict[tuple, str] = {}  # (namespace or "Tensor", name) -> entry key


def _names(value, default):
    if value is True:
        return default
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def register(fn, name=None, *, function=True, method=True, aliases=(), dunders=(),
             tensor=None, special=(), linalg=(), functional=(), inplace_of=None,
             differentiable=None, signature=None, tuple_out=False):
    """Add ``fn`` to the registry under its public names; returns ``fn``.

    Parameters
    ----------
    fn : callable
        The op as users call it.
    name : str, optional
        Its name (default ``fn.__name__``).
    function, method : bool or str or tuple of str
        ``True``: ``retrograd.<name>`` / ``Tensor.<name>`` and the same for each alias;
        ``False``: none; names: exactly those.
    aliases : tuple of str
        Other spellings (``clip`` for ``clamp``), for the function and the method.
    dunders : tuple of str
        Python operators bound to ``fn`` itself (``"__mul__"``).
    tensor : dict, optional
        Further Tensor attributes bound to other callables: reflected operators
        (``{"__rsub__": rsub}``), methods whose argument order differs, properties.
    special, linalg, functional : tuple of str
        Names in ``retrograd.special``, ``retrograd.linalg``, ``retrograd.nn.functional``.
    inplace_of : str, optional
        This is the in-place form of the op registered as ``inplace_of``.
    differentiable : bool, optional
        Default: the ``defop`` record's flag, else True.
    signature : str, optional
        PyTorch's parameters of the function (``"input, other, *, alpha=1"``), for a plain
        wrapper: its functions then take those keyword names and ``out=`` (see
        :func:`with_signature`).  Ops made by ``defop`` take ``input``/``other`` and
        ``out=`` themselves, with no wrapper.
    tuple_out : bool
        The function returns a namedtuple (``max(x, dim)``: values, indices) and takes
        PyTorch's ``out=(values, indices)``, one tensor per field (or one tensor where the
        call returns one, ``max(x)``); see :func:`with_tuple_out`.
    """
    name = name or fn.__name__
    methods_fn = fn
    if differentiable is None:
        op = getattr(fn, "op", None)
        differentiable = op.differentiable if op is not None else True
    kind = sys._getframe(1).f_globals["__name__"].rpartition(".")[2]
    names = {}
    spelled = (name, *aliases)
    for ns, given in (("torch", _names(function, spelled)), ("special", _names(special, ())),
                      ("linalg", _names(linalg, ())),
                      ("nn.functional", _names(functional, ()))):
        if given:
            names[ns] = given
    methods = {m: methods_fn for m in _names(method, spelled)}  # (no out= on methods)
    methods.update({d: methods_fn for d in dunders})
    methods.update(tensor or {})
    if "torch" in names or methods:
        key = name
    else:
        key = f"{next(iter(names))}.{name}"
    if signature is not None:
        fn = with_signature(fn, name, signature, differentiable, key)
    elif getattr(fn, "op", None) is None:
        fn = vmap_aware(fn, name, key)  # (defop callers check for vmap in their slow branch)
        for ns in NAMESPACES:  # where pickle finds it: the namespace that exposes it
            if ns in names and fn is not methods_fn:
                fn.__module__ = "retrograd" if ns == "torch" else f"retrograd.{ns}"
                fn.__qualname__ = names[ns][0]
                break
    if tuple_out:
        fn = with_tuple_out(fn, name, differentiable)
    spots = [(ns, n) for ns, ns_names in names.items() for n in ns_names]
    spots += [("Tensor", m) for m in methods]
    for spot in spots + [("key", key)]:
        if spot in _TAKEN:
            raise ValueError(f"registry: {spot[0]}.{spot[1]} is registered twice (by "
                             f"{_TAKEN[spot]} and {key}); each public name names one op")
    for spot in spots + [("key", key)]:
        _TAKEN[spot] = key
    e = _ENTRIES[key] = Entry(key, fn, kind, names, methods, inplace_of, differentiable)
    if inplace_of is not None:
        base = _ENTRIES[inplace_of]  # the out-of-place op registers first (its module is lower)
        base.inplace = next(m for m in methods if not m.startswith("__"))
    return e.fn


#: ``write_out(name, inputs, result, out)``: set by ops/_apply.py (this module imports nothing)
out_writer = None

#: ``[n]``: how many vmaps are running (retrograd.func sets it); the public functions of plain
#: wrappers hand their call to ``batched_call(key, fn, args, kwargs)`` while it is non-zero,
#: so BatchedTensors reach their batching rules, and pay one global lookup otherwise
batching = [0]
#: ``batched_call(key, fn, args, kwargs)``: set by retrograd.func.batched
batched_call = None


OUT_SETS_DTYPE = {"sum", "prod", "cumsum"}


def _parameters_source(params):
    """``(def_params, call_args, pos_tuple, kw_dict)`` source text for ``params``."""
    defs, call, pos, kw = [], [], [], []
    star = False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            defs.append(f"*{p.name}")
            call.append(f"*{p.name}")
            pos.append(f"*{p.name}")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            defs.append(f"**{p.name}")
            call.append(f"**{p.name}")
            kw.append(f"**{p.name}")
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                defs.append("*")
                star = True
            defs.append(p.name)
            call.append(f"{p.name}={p.name}")
            kw.append(f"{p.name!r}: {p.name}")
        else:
            if p.kind is p.POSITIONAL_ONLY:
                raise ValueError("positional-only")
            defs.append(p.name)
            call.append(p.name)
            pos.append(p.name)
    pos_src = "(" + ", ".join(pos) + ("," if len(pos) == 1 else "") + ")"
    return ", ".join(defs), ", ".join(call), pos_src, "{" + ", ".join(kw) + "}"


def vmap_aware(fn, name, key):
    """``fn`` behind a generated function of the same parameters that hands the call to
    ``batched_call`` while a vmap runs (one global lookup otherwise), so that a BatchedTensor
    passed to a plain wrapper reaches its batching rule before the wrapper reads ``_data``."""
    import inspect

    try:
        # fn's own parameters (a functools.wraps wrapper's too, e.g. one adding out=), not
        # those of the function it wraps
        params = list(inspect.signature(fn, follow_wrapped=False).parameters.values())
        defs, call, pos, kw = _parameters_source(params)
    except (TypeError, ValueError):
        return fn  # (a builtin, or positional-only parameters: left as it is)
    src = (f"def {name}({defs}):\n"
           f"    if batching[0]:\n"
           f"        return registry.batched_call({key!r}, fn, {pos}, {kw})\n"
           f"    return fn({call})\n")
    scope = {"fn": fn, "registry": sys.modules[__name__], "batching": batching}
    exec(src, scope)  # noqa: S102 - built from fn's own parameter names
    public = scope[name]
    public.__defaults__ = tuple(p.default for p in params if p.kind is p.POSITIONAL_OR_KEYWORD
                                and p.default is not p.empty) or None
    public.__kwdefaults__ = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY
                             and p.default is not p.empty} or None
    public.__doc__ = fn.__doc__
    public.__module__ = fn.__module__
    public.__qualname__ = getattr(fn, "__qualname__", name)
    public.__wrapped__ = fn
    return public


def with_signature(fn, name, signature, differentiable=True, key=None):
    """``fn`` as a function with PyTorch's parameter names ``signature`` and ``out=None``.

    Generated source, so a call without ``out`` costs one plain call frame (no ``*args``
    packing): ``def add(input, other, *, alpha=1, out=None)`` calls ``fn`` with the
    positional parameters in order and the keyword-only ones by name, then, given ``out``,
    hands the result to ``out_writer`` (PyTorch's out= rules)."""
    import inspect

    scope: dict = {}
    exec(f"def probe({signature}): pass", scope)  # noqa: S102 - a fixed, local signature
    params = list(inspect.signature(scope["probe"]).parameters.values())
    pos = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    kw = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    args = ", ".join(pos + [f"{k}={k}" for k in kw])
    inputs = ", ".join(pos) + ("," if len(pos) == 1 else "")
    sig = f"{signature}, out=None" if kw or "*" in signature else f"{signature}, *, out=None"
    # sum/prod/cumsum compute in out's dtype when given one and no dtype= (PyTorch's rule:
    # an int64 out sums the inputs cast to int64, not the float sum truncated)
    out_args = args.replace("dtype=dtype", "dtype=out.dtype if dtype is None else dtype") \
        if name in OUT_SETS_DTYPE else args
    vmap_check = (f"    if batching[0] and out is None:\n"
                  f"        return registry.batched_call({key!r}, fn, ({inputs}), "
                  f"{{{', '.join(f'{k!r}: {k}' for k in kw)}}})\n") if key else ""
    src = (f"def {name}({sig}):\n" + vmap_check +
           f"    if out is None:\n"
           f"        return fn({args})\n"
           f"    return registry.out_writer({name!r}, ({inputs}), fn({out_args}), out, "
           f"{differentiable})\n")
    scope = {"fn": fn, "registry": sys.modules[__name__], "batching": batching}
    exec(src, scope)  # noqa: S102
    public = scope[name]
    public.__doc__ = fn.__doc__
    public.__wrapped__ = fn
    if hasattr(fn, "op"):
        public.op = fn.op
    return public


def with_tuple_out(fn, name, differentiable=True):
    """``fn`` taking ``out=``: a tuple of tensors, one per field of the namedtuple ``fn``
    returns (each written with PyTorch's out= rules, as :data:`out_writer`), or a tensor
    where the call returns a tensor (``max(x)``, ``max(x, y)``).  Returns the namedtuple
    of the ``out`` tensors."""

    # (underscored: errors name the op from the stack, ops/_errors.calling_op, which skips
    # private frames; a public name here made them say "call()")
    def _call(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        inputs = args + tuple(kwargs.values())
        if not isinstance(result, tuple):
            return out_writer(name, inputs, result, out, differentiable)
        fields = getattr(result, "_fields", None) or tuple(f"out[{i}]" for i in
                                                            range(len(result)))
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            got = f"a tuple of {len(out)}" if isinstance(out, (tuple, list)) else \
                type(out).__name__
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} "
                            f"tensors ({', '.join(fields)}), got {got}")
        written = [out_writer(name, inputs, r, o, differentiable)
                   for r, o in zip(result, out)]
        return type(result)(*written)

    _call.__name__ = name
    _call.__module__ = fn.__module__  # (pickle finds it where the wrapped function was found)
    _call.__qualname__ = getattr(fn, "__qualname__", name)
    _call.__doc__ = fn.__doc__
    # the op's own function (under a vmap_aware wrapper, that wrapper's): retrograd.func
    # recognises the public function by it
    _call.__wrapped__ = getattr(fn, "__wrapped__", fn)
    if hasattr(fn, "op"):
        _call.op = fn.op
    return _call


def entries() -> list:
    """Every entry, in registration order."""
    return list(_ENTRIES.values())


def entry(key: str) -> Entry:
    return _ENTRIES[key]


def namespace(ns: str) -> dict:
    """name -> function for the namespace ``ns`` (``"torch"``, ``"special"``...)."""
    if ns not in NAMESPACES:
        raise ValueError(f"unknown namespace {ns!r}; one of {NAMESPACES}")
    return {n: e.fn for e in _ENTRIES.values() for n in e.names.get(ns, ())}


def tensor_methods() -> dict:
    """Tensor attribute name -> callable (methods, operators, in-place forms, properties)."""
    out = {}
    for e in _ENTRIES.values():
        out.update(e.methods)
    return out


def install(cls) -> None:
    """Attach every registered method and operator to ``cls`` (the Tensor class)."""
    for name, fn in tensor_methods().items():
        setattr(cls, name, fn)


# ----------------------------------------------------------------- operator spellings


def reflected(fn, name=None):
    """``other OP self`` as a method of ``self``: ``__rsub__`` and friends."""

    def method(self, other):
        return fn(other, self)

    method.__name__ = name or f"r{fn.__name__}"
    return method


def or_not_implemented(fn):
    """A comparison operator that gives NotImplemented for an operand ``fn`` refuses, so
    ``x == None`` falls back to Python's identity comparison (False), as in PyTorch."""

    def method(self, other):
        try:
            return fn(self, other)
        except TypeError:
            return NotImplemented

    method.__name__ = fn.__name__
    return method


def identity(self):
    """``+x``: the tensor itself, as PyTorch's ``__pos__``."""
    return self


def add_names(key, *, function=(), method=(), tensor=None, signature=None, fn=None):
    """More public names for the op registered as ``key`` (PyTorch's aliases: ``absolute``
    for ``abs``, ``multiply_`` for ``mul_``; and top-level functions for ops first registered
    as methods only, ``torch.logical_not``, ``torch.abs_``).  ``method`` names bind the
    entry's method callable; ``tensor`` maps further attributes to callables; ``signature``
    (PyTorch's parameters, see :func:`with_signature`) wraps an entry that had no function
    yet; ``fn`` replaces the callable of an entry that had no function yet, for the new
    function and method names (``floor_divide``: recorded, where ``//`` was not).  Returns
    the entry."""
    e = _ENTRIES[key]
    function, method = _names(function, ()), _names(method, ())
    method_fn = fn or next((f for m, f in e.methods.items() if not m.startswith("__")),
                           next(iter(e.methods.values()), e.fn))
    spots = [("torch", n) for n in function] + [("Tensor", m) for m in method]
    spots += [("Tensor", m) for m in (tensor or {})]
    for spot in spots:
        if spot in _TAKEN:
            raise ValueError(f"registry: {spot[0]}.{spot[1]} is registered twice (by "
                             f"{_TAKEN[spot]} and {key}); each public name names one op")
    for spot in spots:
        _TAKEN[spot] = key
    if function:
        if fn is not None and "torch" not in e.names:
            e.fn = fn
        if signature is not None and "torch" not in e.names:
            e.fn = with_signature(e.fn, function[0], signature, e.differentiable, key)
        e.names["torch"] = e.names.get("torch", ()) + function
    e.methods.update({m: method_fn for m in method})
    e.methods.update(tensor or {})
    return e
