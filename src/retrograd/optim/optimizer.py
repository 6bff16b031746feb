"""The optimizer base class: parameter groups, per-parameter state, state dicts and hooks.

An algorithm (``sgd.py``, ``adam.py``...) subclasses :class:`PerParameterOptimizer` and
writes only its math: the state a parameter starts with and the update of one parameter
(LBFGS, which updates all parameters as one vector, subclasses :class:`Optimizer` and
writes its own ``step``).  Updates work on the parameters' arrays in place, through the
array namespace of each array (NumPy or CuPy), and bump the parameters' version counters
as PyTorch's in-place updates do, so a graph that saved a parameter before the step
refuses to backward through it.

The state dict has PyTorch's structure: ``{'state': {index: {...}}, 'param_groups':
[{..., 'params': [indices]}]}``, parameters numbered in group order.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import RemovableHandle
from ..backend import namespace, to_numpy
from ..dtypes import get_default_dtype
from ..tensor import Tensor, make_tensor

__all__ = ["Optimizer", "PerParameterOptimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


#: state entries kept in the scalar dtype when a state dict is loaded (see load_state_dict)
_SCALAR_STATE = ("step", "mu_product", "eta", "mu")


class _RequiredParameter:
    """The default of a group option that every parameter group must give (SGD's ``lr``
    in old PyTorch); ``add_param_group`` refuses a group without it."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step):
    """Wrap an algorithm's ``step``: pre hooks, the update under no_grad, post hooks."""

    @functools.wraps(step)
    def hooked_step(self, *args, **kwargs):
        # (the hook tables are tested first: most steps have none, and this runs every step)
        if _global_pre_hooks or self._optimizer_step_pre_hooks:
            for pre in chain(_global_pre_hooks.values(),
                             self._optimizer_step_pre_hooks.values()):
                result = pre(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{step} must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {result}.")
        with no_grad():  # the closure re-enables grad itself (see _evaluate_closure)
            out = step(self, *args, **kwargs)
        if self._optimizer_step_post_hooks or _global_post_hooks:
            for post in chain(self._optimizer_step_post_hooks.values(),
                              _global_post_hooks.values()):
                post(self, args, kwargs)
        return out

    hooked_step.hooked = True
    return hooked_step


def scalar_dtype():
    """The dtype of a ``step`` count: float32, or float64 when that is the default dtype
    (PyTorch keeps ``step`` as a 0-d tensor of this dtype)."""
    return get_default_dtype().numpy


def step_tensor(value: float = 0.0) -> Tensor:
    return make_tensor(np.asarray(value, dtype=scalar_dtype()))


def to_scalar(x):
    """A number from a float or a one-element tensor (a tensor ``lr``).

    A tensor gives a NumPy scalar of its dtype: PyTorch computes with the 0-d tensor
    itself, so ``lr / bias_correction`` rounds to float32 for a float32 ``lr``, and so
    does ours.
    """
    if isinstance(x, Tensor):
        return x._data.reshape(())[()]
    return x


def check_tensor_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def _hook_table_handle(table: OrderedDict, hook, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def _state_like_param(value: Tensor, param: Tensor) -> Tensor:
    """A loaded state tensor on the parameter's device (NumPy or CuPy array) and, if both
    are floating, in its dtype; the tensor itself when nothing changes."""
    data, target = value._data, param._data
    if type(data) is not type(target):
        data = to_numpy(data) if isinstance(target, np.ndarray) \
            else namespace(target).asarray(data)
    if target.dtype.kind == "f" and data.dtype.kind == "f" and data.dtype != target.dtype:
        data = data.astype(target.dtype)
    return value if data is value._data else make_tensor(data)


class Scratch:
    """Work buffers an update reuses from step to step instead of allocating temporaries.

    On big parameters allocation costs more than the arithmetic (freed pages go back to
    the OS and fault in again), so each slot keeps one flat buffer per array type and
    dtype, grown to the largest parameter seen, and hands out reshaped views of it.
    """

    def __init__(self):
        self._buffers = {}

    def get(self, slot: int, like):
        key = (slot, type(like), like.dtype)
        buf = self._buffers.get(key)
        if buf is None or buf.size < like.size:
            buf = namespace(like).empty(like.size, dtype=like.dtype)
            self._buffers[key] = buf
        return buf[: like.size].reshape(like.shape)


class Optimizer:
    """Base class of all optimizers.

    Parameters
    ----------
    params : iterable of Tensor, of (name, Tensor) pairs, or of dicts
        The tensors to optimize (leaves with ``requires_grad``), or parameter groups: dicts
        with a ``'params'`` entry and per-group options that override ``defaults``.
    defaults : dict
        The options of every group that does not give its own.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = T.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__module__}.{type(params).__name__} (wrap a "
                "single tensor in a list: [tensor])")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ pickling and repr
    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for group in self.param_groups:  # dicts saved before an option existed
            for name, default in self.defaults.items():
                group.setdefault(name, default)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (a dict with ``'params'`` and optional options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead.")
        else:
            params = list(params)
        tensors, names = [], []
        for p in params:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names

        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__module__}.{type(p).__name__}")
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        for flag, why in (("differentiable", "recording a graph through the update "
                                              "(differentiating through optimizer steps)"),
                          ("capturable", "CUDA-graph capture")):
            if param_group.get(flag):
                raise NotImplementedError(
                    f"{type(self).__name__}({flag}=True) is not supported by retrograd: "
                    f"its updates run on the arrays in place, without {why}. Leave "
                    f"{flag}=False (the default).")

        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information", stacklevel=3)

        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop the gradients (``set_to_none=True``, the default) or fill them with zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g = g.detach()
                        p._grad = g
                    else:
                        g._requires_grad = False
                    g._data[...] = 0
                    g._bump_version()

    def step(self, closure=None):
        """Update the parameters once; ``closure`` re-evaluates the loss (some algorithms
        need it) and its value is returned."""
        raise NotImplementedError

    @staticmethod
    def _evaluate_closure(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _scratch(self) -> Scratch:
        scratch = self.__dict__.get("_scratch_buffers")
        if scratch is None:
            scratch = self.__dict__["_scratch_buffers"] = Scratch()
        return scratch

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before ``step``; it may return new
        ``(args, kwargs)``."""
        return _hook_table_handle(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        return _hook_table_handle(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        return _hook_table_handle(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        return _hook_table_handle(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False):
        return _hook_table_handle(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
        return _hook_table_handle(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """The optimizer's state: ``{'state': {index: {...}}, 'param_groups': [...]}``.

        Parameters are replaced by their index (counted over the groups in order); the state
        tensors are the live ones, not copies (deep-copy the dict to keep a snapshot).
        """
        for pre in self._optimizer_state_dict_pre_hooks.values():
            pre(self)
        index: dict[int, int] = {}
        start = 0
        packed_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            packed_groups.append(packed)
        packed_state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": packed_groups}
        for post in self._optimizer_state_dict_post_hooks.values():
            result = post(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state made by :meth:`state_dict` (of an optimizer with the same groups).

        Floating state tensors take the dtype of their parameter, except the scalar
        bookkeeping kept in the scalar dtype (``step``, NAdam's ``mu_product``, ASGD's
        ``eta`` and ``mu``: PyTorch casts those, so its resumed float64 runs drift from
        unbroken ones; ours don't).
        """
        state_dict = state_dict.copy()
        for pre in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                return value if key in _SCALAR_STATE else _state_like_param(value, param)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for post in self._optimizer_load_state_dict_post_hooks.values():
            post(self)


class PerParameterOptimizer(Optimizer):
    """An optimizer whose update treats each parameter on its own (all but LBFGS).

    ``step`` is written once here: per group, :meth:`_group_settings` reads the group's
    options once; per parameter that has a gradient, :meth:`_init_state` fills an empty
    state, the ``step`` count (when the state has one) goes up by one, and :meth:`_update`
    changes the parameter's array in place; then the parameter's version is bumped.
    """

    def _group_settings(self, group: dict):
        """The group's options as the update wants them (read once per group and step)."""
        return group

    def _keeps_state(self, group: dict) -> bool:
        """Whether this group's parameters have state (plain SGD has none, and PyTorch then
        leaves ``optimizer.state`` empty); without it ``_update`` gets ``state=None``."""
        return True

    def _init_state(self, state: dict, param, group: dict) -> None:
        """Fill the empty state of ``param`` (an array) on its first step."""

    def _update(self, param, grad, state: dict, settings, scratch: Scratch) -> None:
        """Update the array ``param`` in place from the array ``grad``."""
        raise NotImplementedError

    def step(self, closure=None):
        """Update every parameter that has a gradient once; ``closure`` re-evaluates the
        loss, whose value is returned."""
        loss = self._evaluate_closure(closure)
        scratch = self._scratch()
        for group in self.param_groups:
            self._step_group(group, self._group_settings(group), scratch)
        return loss

    def _step_group(self, group, settings, scratch):
        """The update of one group's parameters that have a gradient (SGD's fast path falls
        back to it for momentum, weight decay and maximize)."""
        state_of = self.state
        update = self._update
        keeps_state = self._keeps_state(group)
        state = None
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            param = p._data
            if keeps_state:
                state = state_of[p]
                if len(state) == 0:
                    self._init_state(state, param, group)
                count = state.get("step")
                if count is not None:
                    count._data += 1
            update(param, grad._data, state, settings, scratch)
            p._bump_version()
