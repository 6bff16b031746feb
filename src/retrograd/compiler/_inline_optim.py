"""``optimizer.step()`` of plain SGD written into the replay, instead of a call.

The call goes through the hook wrapper, ``no_grad``, the group loop and three functions per
parameter (``_update``, ``effective_grad``, ``add_scaled_``): on a small model that is half
the time of the update itself.  For an ``SGD`` whose class keeps every method of its own
(not a subclass that overrides one), the replay does what that path does for a group
without momentum, weight decay or ``maximize``, parameter by parameter, with the same
NumPy calls in the same order (``multiply(g, -lr, out=tmp); p += tmp``), so the values are
the eager ones to the bit:

    if <no step hooks, the same groups and parameters, a plain group>:
        g = L0._grad
        if g is not None:
            MUL(g._data, -lr, out=B0); P = L0._data; P += B0; L0._bump_version()
        ...
    else:
        <the call>

Everything else (momentum, a hook registered later, a parameter group added, a learning
rate scheduler wrapping ``step``) takes the call, read live as before.
"""

from __future__ import annotations

import numpy as np

from ..optim import optimizer as _optimizer
from ..optim.optimizer import Optimizer, PerParameterOptimizer
from ..optim.sgd import SGD


def _plain_sgd_class(opt) -> bool:
    cls = type(opt)
    return (isinstance(opt, SGD) and "step" not in vars(opt)
            and cls.step is SGD.step and cls._update is SGD._update
            and cls._step_group is PerParameterOptimizer._step_group
            and cls._group_settings is SGD._group_settings
            and cls._keeps_state is SGD._keeps_state and cls._scratch is Optimizer._scratch)


def inline_step(w, opt, call) -> list | None:
    """Lines for ``opt.step()`` (``w``: the replay's writer; ``call``: the line that makes
    the call), or None to keep the call."""
    if not _plain_sgd_class(opt):
        return None
    groups = opt.param_groups
    params = [list(g["params"]) for g in groups]
    if not all(type(p._data) is np.ndarray for ps in params for p in ps):
        return None  # (CuPy arrays: the call, whose add_scaled_ picks the namespace)
    o = w.name(opt, "o")
    kgroups = w.name(groups)
    settings = w.name(SGD._group_settings)
    # checked before any parameter changes: no step hooks, the traced groups and
    # parameters, arrays of the traced shapes and dtypes, and plain groups
    checks = [w.name(_optimizer._global_pre_hooks), w.name(_optimizer._global_post_hooks),
              f"{o}._optimizer_step_pre_hooks", f"{o}._optimizer_step_post_hooks",
              f"{o}.param_groups is not {kgroups}", f"len({kgroups}) != {len(groups)}"]
    head, body = [], []
    mul = w.name(np.multiply)
    for gi, (group, ps) in enumerate(zip(groups, params)):
        kgroup, kparams = w.name(group), w.name(group["params"])
        checks += [f"{kgroups}[{gi}] is not {kgroup}", f"{kgroup}['params'] is not {kparams}",
                   f"len({kparams}) != {len(ps)}"]
        checks += [f"{kparams}[{i}] is not {w.obj(p)}" for i, p in enumerate(ps)]
        # the group's settings as SGD reads them (a tensor lr becomes its scalar)
        head.append(f"s{gi} = {settings}({o}, {kgroup})")
        checks.append(f"s{gi}[1] != 0 or s{gi}[4] != 0 or s{gi}[5]")
        body.append(f"a = -s{gi}[0]")
        for p in ps:
            leaf, data = w.obj(p), p._data
            buf = w.name(np.empty_like(data))
            checks.append(f"{leaf}._data.shape != {data.shape!r} or {leaf}._data.dtype != "
                          f"{w.name(data.dtype)}")
            body += [f"g = {leaf}._grad",
                     "if g is not None:",
                     f"    {mul}(g._data, a, out={buf})",
                     f"    P = {leaf}._data",
                     f"    P += {buf}",
                     f"    {leaf}._bump_version()"]
    return head + [f"if {' or '.join(checks)}:", f"    {call}", "else:"] + [
        "    " + line for line in body]
