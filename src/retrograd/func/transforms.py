"""torch.func's transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian.

All are built on ``retrograd.autograd.grad`` of *physical* tensors (see ``levels.py``):
inside vmap, every input that is differentiated is first expanded to all running vmap
levels, so a gradient of the physical output is the stack of per-sample gradients
(``vmap(grad(f))`` gives per-sample gradients with one backward pass).

Forward mode (jvp, jacfwd, linearize) runs ``func`` once under a dual level of
``retrograd.autograd.forward_ad`` (:func:`_forward_jvp`): each input is made a dual of its
tangent and the outputs' tangents are read with ``unpack_dual``.  Under vmap the duals are
physical tensors, so a batched tangent (jacfwd's basis) gives every column in one pass.
Dual levels do not nest, so a jvp inside a jvp (``jacfwd(jacfwd(f))``) differentiates by the
double-vjp trick (``J t = d<J^T u, t>/du``, :func:`_jvp_core`); the open level's tangents
flow through it, as through any backward pass.
"""

from __future__ import annotations

import functools

from .. import autograd
from .._creation import eye, zeros
from ..autograd import forward_ad
from ..autograd.forward_state import fw, set_tangent, tangent_of
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor
from . import _pytree
from .batched import BatchedTensor
from .levels import active, chain, rewrap, to_levels
from .vmap import vmap

#: how many transforms (grad, vjp, jvp...) are running: a nested one records its gradient
#: computation (create_graph) so the transform around it can differentiate it
_DEPTH = [0]
#: how many func.jvp calls hold the open dual level (0: none, or the user opened it)
_FW_DEPTH = [0]


def _tensorlike(x):
    return isinstance(x, (Tensor, BatchedTensor))


class _Inputs:
    """The differentiated inputs of one transform call: prepared (expanded to the running
    vmap levels, made to require grad) and their physical tensors."""

    def __init__(self, trees, fname):
        self.levels = active()
        self.physical = []
        self.level_ids = [lv.level for lv in self.levels]
        self.outer_tracked = False
        self.prepared = []
        for tree in trees:
            leaves, spec = _pytree.flatten(tree)
            new = []
            for leaf in leaves:
                if not _tensorlike(leaf):
                    raise RuntimeError(f"{fname}: Expected the inputs to be differentiated to "
                                       f"be Tensors, got {type(leaf).__name__}")
                full = to_levels(leaf, self.levels)
                p, ids = chain(full)
                if not p.is_floating_point():
                    raise RuntimeError(f"{fname}: only Tensors of floating point dtype can "
                                       f"require gradients, got {p.dtype}")
                if p.requires_grad:  # tracked by a transform around this one: stay connected
                    self.outer_tracked = True
                    p = p.view(p.shape)
                else:
                    # a dual of a jvp around this one keeps its tangent (forward-over-reverse)
                    tangent = tangent_of(p) if fw.level is not None else None
                    p = p.detach().requires_grad_()
                    if tangent is not None:
                        set_tangent(p, tangent)
                self.physical.append(p)
                new.append(rewrap(p, ids))
            self.prepared.append(_pytree.unflatten(new, spec))

    def create_graph(self):
        return self.outer_tracked or _DEPTH[0] > 1

    def wrap_grads(self, grads, trees_like, ids=None):
        """Physical gradients (None: unused, zeros) back into the inputs' structures."""
        ids = self.level_ids if ids is None else ids
        out, i = [], 0
        for tree in trees_like:
            leaves, spec = _pytree.flatten(tree)
            new = []
            for _ in leaves:
                p, g = self.physical[i], grads[i]
                if g is None:
                    g = zeros(tuple(p.shape), dtype=p.dtype)
                new.append(rewrap(g, ids))
                i += 1
            out.append(_pytree.unflatten(new, spec))
        return out


def _physical_out(o, levels, fname):
    if not _tensorlike(o):
        raise RuntimeError(f"{fname}: Expected f(*args) to return only tensors, got "
                           f"unsupported type {type(o).__name__}")
    return chain(to_levels(o, levels))[0]


def _release(x, keep):
    """An output handed back to the caller: detached unless an outer transform tracks it."""
    if keep or not _tensorlike(x):
        return x
    p, ids = chain(x)
    return rewrap(p.detach(), ids)


def _argnums_check(argnums, nargs, fname):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{fname}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{fname}: argnums must be int or Tuple[int, ...], got: "
                               f"{type(a).__name__}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    norm = tuple(a % nargs for a in nums)
    if len(set(norm)) != len(norm):
        raise RuntimeError(f"{fname}: argnums must be unique, got {argnums}")
    return norm


def _split_aux(out, has_aux, fname):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fname}(f, ...)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


# ------------------------------------------------------------------------------- grad


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a scalar function, as ``torch.func.grad_and_value``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        fname = "grad_and_value(f)(*args)"
        nums = _argnums_check(argnums, len(args), fname)
        _DEPTH[0] += 1
        try:
            with enable_grad():
                inputs = _Inputs([args[i] for i in nums], fname)
                call = list(args)
                for i, prepared in zip(nums, inputs.prepared):
                    call[i] = prepared
                out, aux = _split_aux(func(*call, **kwargs), has_aux, "grad_and_value")
                if not _tensorlike(out):
                    raise RuntimeError(f"{fname}: Expected f(*args) to return a Tensor, got "
                                       f"{type(out).__name__}")
                if out.dim() != 0:
                    raise RuntimeError(
                        f"{fname}: Expected f(*args) to return a scalar Tensor, got tensor with "
                        f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                        "instead?")
                p = _physical_out(out, inputs.levels, fname)
                keep = inputs.create_graph()
                grads = _grad(p, inputs.physical, p.new_ones(p.shape) if p.dim() else None,
                              keep)
        finally:
            _DEPTH[0] -= 1
        g = inputs.wrap_grads(grads, [args[i] for i in nums])
        g = g[0] if isinstance(argnums, int) else tuple(g)
        value = _release(out, keep)
        if has_aux:
            return g, (value, _pytree.unflatten(
                [_release(a, keep) for a in _pytree.flatten(aux)[0]], _pytree.flatten(aux)[1]))
        return g, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function w.r.t. argument(s) ``argnums``, as
    ``torch.func.grad``.

    >>> import retrograd as T
    >>> T.func.grad(lambda x: (x ** 2).sum())(T.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _grad(outputs, inputs, grad_outputs, create_graph):
    """``autograd.grad`` of physical tensors; None for an input no output depends on."""
    outs = outputs if isinstance(outputs, list) else [outputs]
    gos = grad_outputs if isinstance(grad_outputs, list) else [grad_outputs]
    used = [o for o in outs if o.requires_grad]
    if not used:
        return [None] * len(inputs)
    gos = [g for o, g in zip(outs, gos) if o.requires_grad]
    return list(autograd.grad(used, inputs, gos, retain_graph=True, create_graph=create_graph,
                              allow_unused=True))


# -------------------------------------------------------------------------------- vjp


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (and ``aux``): ``vjp_fn(cotangents)`` gives one gradient per
    primal, as ``torch.func.vjp``."""
    _DEPTH[0] += 1
    try:
        with enable_grad():
            inputs = _Inputs(primals, "vjp")
            out, aux = _split_aux(func(*inputs.prepared), has_aux, "vjp")
    finally:
        _DEPTH[0] -= 1
    flat_out, out_spec = _pytree.flatten(out)
    phys = [_physical_out(o, inputs.levels, "vjp(f, *primals)") for o in flat_out]
    keep = inputs.create_graph()

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = _pytree.flatten(cotangents)
        if _pytree.spec_repr(ct_spec) != _pytree.spec_repr(out_spec):
            raise RuntimeError(
                f"Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_pytree.spec_repr(ct_spec)}, primal "
                f"output: {_pytree.spec_repr(out_spec)}")
        for o, c in zip(flat_out, flat_ct):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {tuple(c.shape)} and "
                    f"output[0] has a shape of {tuple(o.shape)}. (The cotangent must have the "
                    "output's shape.)")
        cg = keep or bool(create_graph) or any(c.requires_grad for c in flat_ct)
        grads, ids = _vjp_levels(phys, inputs, flat_ct, cg)
        return tuple(inputs.wrap_grads(grads, primals, ids))

    value = _pytree.unflatten([_release(o, keep) for o in flat_out], out_spec)
    if has_aux:
        return value, vjp_fn, aux
    return value, vjp_fn


def _vjp_levels(phys_outs, inputs, cts, create_graph):
    """``(grads, level_ids)``.  Cotangents batched at levels the inputs lack (a vjp_fn
    called inside a later vmap) are looped over, one backward per sample, and stacked; the
    others are aligned to the inputs' levels and go through one backward pass."""
    extra = set()
    for c in cts:
        extra |= set(chain(c)[1]) - set(inputs.level_ids)
    if not extra:
        cps = [chain(to_levels(c, inputs.levels))[0] for c in cts]
        return _grad(phys_outs, inputs.physical, cps, create_graph), inputs.level_ids
    from ..ops import registry
    from .batched import level_info

    top = max(extra)  # created after the inputs' levels: its batch goes last
    rows, ids = [], None
    for i in range(level_info(top).size):
        sliced = [c.value.select(0, i) if type(c) is BatchedTensor and c.level == top else c
                  for c in cts]
        grads, ids = _vjp_levels(phys_outs, inputs, sliced, create_graph)
        rows.append(grads)
    stack = registry.entry("stack").fn
    at = len(ids)
    out = []
    for k, p in enumerate(inputs.physical):
        if all(r[k] is None for r in rows):
            out.append(None)
            continue
        parts = [r[k] if r[k] is not None else zeros(tuple(p.shape), dtype=p.dtype) for r in rows]
        out.append(stack(parts, at))
    return out, [*ids, top]


# ---------------------------------------------------------------------- forward mode


def _jvp_core(inputs, phys_outs, tangents, create_graph):
    """J·t of the recorded computation from ``inputs.physical`` to ``phys_outs`` by the
    double-vjp trick: u ↦ J^T u is linear, so J t = d<J^T u, t>/du.  The one function to
    replace by forward-mode AD.  Returns ``(jvp_fn)``: tangents (physical) -> J t."""
    dummies = [zeros(tuple(o.shape), dtype=o.dtype).requires_grad_() for o in phys_outs]
    vjps = _grad(phys_outs, inputs.physical, dummies, True)

    def apply(tans, keep=create_graph):
        pairs = [(v, t) for v, t in zip(vjps, tans) if v is not None and v.requires_grad]
        if not pairs:
            return [zeros(tuple(o.shape), dtype=o.dtype) for o in phys_outs]
        res = autograd.grad([v for v, _ in pairs], dummies, [t for _, t in pairs],
                            retain_graph=True, create_graph=keep, allow_unused=True)
        return [zeros(tuple(o.shape), dtype=o.dtype) if r is None else r
                for r, o in zip(res, phys_outs)]

    return apply


def _check_jvp_args(primals, tangents, fname="jvp"):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected tangents to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    fp, sp = _pytree.flatten(primals)
    ft, st = _pytree.flatten(tangents)
    if _pytree.spec_repr(sp) != _pytree.spec_repr(st):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents to "
                           "have the same python structure. For example, if primals is a tuple "
                           "of 3 tensors, tangents also must be.")
    for p, t in zip(fp, ft):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}.")
    return ft


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(output, jvp_out)`` (and ``aux``): the Jacobian-vector product by forward-mode AD,
    as ``torch.func.jvp``.

    >>> import retrograd as T
    >>> T.func.jvp(lambda x: x ** 3, (T.tensor(2.0),), (T.tensor(1.0),))
    (tensor(8.), tensor(12.))
    """
    ft = _check_jvp_args(primals, tangents)
    out, jv, aux = _forward_jvp(func, primals, ft, has_aux, "jvp")
    if has_aux:
        return out, jv, aux
    return out, jv


def _forward_jvp(func, primals, flat_t, has_aux, fname):
    """``(output, J t, aux)`` of ``func`` at ``primals`` for the flat tangents ``flat_t``:
    one run of ``func`` on duals (physical tensors at every running vmap level)."""
    if fw.level is not None:
        if not _FW_DEPTH[0]:
            forward_ad.enter_dual_level()  # the user's level: PyTorch's "Nested forward" error
        # a jvp inside a jvp: one dual level at a time, so this one transposes the VJP
        out, lin, aux, keep = _linearized(func, primals, has_aux, fname)
        return out, lin(flat_t, keep), aux
    levels = active()
    flat_p, p_spec = _pytree.flatten(primals)
    _DEPTH[0] += 1
    _FW_DEPTH[0] += 1
    forward_ad.enter_dual_level()
    try:
        duals, keep = [], _DEPTH[0] > 1
        for p, t in zip(flat_p, flat_t):
            if not _tensorlike(p):
                raise RuntimeError(f"{fname}: Expected primals to be Tensors, got "
                                   f"{type(p).__name__}")
            phys, ids = chain(to_levels(p, levels))
            if phys.requires_grad:  # tracked by a transform around this one (its grad)
                keep = True
            else:
                phys = phys.detach()
            tphys = chain(to_levels(t, levels))[0]
            duals.append(rewrap(forward_ad.make_dual(phys, tphys), ids))
        out, aux = _split_aux(func(*_pytree.unflatten(duals, p_spec)), has_aux, fname)
        flat_out, out_spec = _pytree.flatten(out)
        values, jvps = [], []
        for o in flat_out:
            if not _tensorlike(o):
                raise RuntimeError(f"{fname}(f, primals, tangents): expected f(*primals) to "
                                   f"return only tensors, got unsupported type {type(o)}")
            phys, ids = chain(to_levels(o, levels))
            primal, tangent = forward_ad.unpack_dual(phys)
            if tangent is None:  # an output that does not depend on the inputs
                tangent = zeros(tuple(phys.shape), dtype=phys.dtype)
            values.append(rewrap(primal if keep else primal.detach(), ids))
            jvps.append(rewrap(tangent if keep else tangent.detach(), ids))
        if has_aux:
            aux = _pytree.unflatten([_release(a, keep) for a in _pytree.flatten(aux)[0]],
                                    _pytree.flatten(aux)[1])
    finally:
        forward_ad.exit_dual_level()
        _FW_DEPTH[0] -= 1
        _DEPTH[0] -= 1
    return _pytree.unflatten(values, out_spec), _pytree.unflatten(jvps, out_spec), aux


def _linearized(func, primals, has_aux, fname):
    """The double-vjp linearization (for a jvp inside a jvp): ``(output, lin, aux, keep)``,
    ``lin(flat_tangents, keep)`` gives J t from one recording."""
    _DEPTH[0] += 1
    try:
        with enable_grad():
            inputs = _Inputs(primals, fname)
            out, aux = _split_aux(func(*inputs.prepared), has_aux, fname)
            flat_out, out_spec = _pytree.flatten(out)
            phys = [_physical_out(o, inputs.levels, f"{fname}(f, primals, tangents)")
                    for o in flat_out]
            keep = inputs.create_graph()
            core = _jvp_core(inputs, phys, None, keep)
    finally:
        _DEPTH[0] -= 1
    out_levels = [chain(to_levels(o, inputs.levels))[1] for o in flat_out]

    def lin(flat_t, keep_graph):
        tps = [chain(to_levels(t, inputs.levels))[0] for t in flat_t]
        with enable_grad():
            res = core(tps, keep_graph)
        return _pytree.unflatten([rewrap(r, ids) for r, ids in zip(res, out_levels)], out_spec)

    value = _pytree.unflatten([_release(o, keep) for o in flat_out], out_spec)
    return value, lin, aux, keep


def linearize(func, *primals):
    """``(output, jvp_fn)``, as ``torch.func.linearize``: ``jvp_fn(*tangents)`` is J t at
    ``primals``, by forward-mode AD (each call runs ``func`` on duals, as PyTorch's replays
    its traced graph)."""
    out, _, _ = _forward_jvp(func, primals, [_zeros_like(p) for p in
                                             _pytree.flatten(primals)[0]], False, "linearize")

    def jvp_fn(*tangents):
        ft = _check_jvp_args(primals, tangents, "linearize")
        return _forward_jvp(func, primals, ft, False, "linearize")[1]

    return out, jvp_fn


def _zeros_like(p):
    if not _tensorlike(p):
        return p
    physical, ids = chain(p)
    return rewrap(zeros(tuple(physical.shape), dtype=physical.dtype), ids)


# ------------------------------------------------------------------------- Jacobians


def _diff_func(func, args, nums):
    def f(*diff):
        call = list(args)
        for i, d in zip(nums, diff):
            call[i] = d
        return func(*call)

    return f


def _basis(leaves):
    """One identity row per element of ``leaves``, split into one tensor per leaf
    ([N, *leaf.shape])."""
    sizes = [leaf.numel() for leaf in leaves]
    n = sum(sizes)
    dtype = leaves[0].dtype
    full = eye(n, dtype=dtype)
    out, start = [], 0
    for leaf, s in zip(leaves, sizes):
        out.append(full[:, start:start + s].reshape(n, *leaf.shape))
        start += s
    return out, sizes


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode, as ``torch.func.jacrev``: one batched forward and one
    backward pass over all rows of the identity (``chunk_size`` rows at a time)."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums_check(argnums, len(args), "jacrev")
        f = _diff_func(func, args, nums)
        primals = tuple(args[i] for i in nums)
        with enable_grad():
            out0 = func(*args)
        out0, aux = _split_aux(out0, has_aux, "jacrev")
        flat_out, out_spec = _pytree.flatten(out0)
        basis, sizes = _basis(flat_out)

        def rows(*cts):
            ct = _pytree.unflatten(list(cts), out_spec)
            _, fn = vjp(lambda *d: _split_aux(f(*d), has_aux, "jacrev")[0], *primals)
            return fn(ct)

        grads = vmap(rows, chunk_size=chunk_size)(*basis)  # per primal: [N, *in]
        per_out, start = [], 0
        for o, s in zip(flat_out, sizes):
            def cut(g, o=o, start=start, s=s):
                return g[start:start + s].reshape(*o.shape, *g.shape[1:])
            tree = tuple(_pytree.unflatten([cut(g) for g in _pytree.flatten(gt)[0]],
                                           _pytree.flatten(gt)[1]) for gt in grads)
            per_out.append(tree[0] if isinstance(argnums, int) else tree)
            start += s
        jac = _pytree.unflatten(per_out, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error", chunk_size=None):
    """The Jacobian by forward mode, as ``torch.func.jacfwd``: a vmap of :func:`jvp` over
    the identity's columns."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums_check(argnums, len(args), "jacfwd")
        f = _diff_func(func, args, nums)
        primals = tuple(args[i] for i in nums)
        flat_in, in_spec = _pytree.flatten(primals)
        basis, sizes = _basis(flat_in)

        def cols(*tans):
            t = _pytree.unflatten(list(tans), in_spec)
            return jvp(lambda *d: _split_aux(f(*d), has_aux, "jacfwd")[0], primals, t)[1]

        outs = vmap(cols, chunk_size=chunk_size, randomness=randomness)(*basis)
        flat_o, o_spec = _pytree.flatten(outs)
        per_out = []
        for jo in flat_o:  # [N_in, *out]
            out_shape = tuple(jo.shape[1:])
            pieces, start = [], 0
            for leaf, s in zip(flat_in, sizes):
                block = jo[start:start + s].reshape(*leaf.shape, *out_shape)
                nin = len(leaf.shape)
                perm = list(range(nin, nin + len(out_shape))) + list(range(nin))
                pieces.append(block.permute(*perm) if perm else block)
                start += s
            tree = _pytree.unflatten(pieces, in_spec)
            per_out.append(tree[0] if isinstance(argnums, int) else tree)
        jac = _pytree.unflatten(per_out, o_spec)
        if has_aux:
            with enable_grad():
                aux = _split_aux(func(*args), True, "jacfwd")[1]
            return jac, aux
        return jac

    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func, argnums), argnums)``, as ``torch.func.hessian``."""
    return jacfwd(jacrev(func, argnums), argnums)
