"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from ...tensor import Tensor
from ..module import Module, _addindent
from ..parameter import Parameter

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]


def _index(idx, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class Container(Module):
    """Deprecated: a Module whose keyword arguments become its submodules (PyTorch keeps
    it for old code; subclass Module instead)."""

    def __init__(self, **kwargs) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules called one after the other: ``Sequential(a, b)(x) == b(a(x))``.

    Built from modules (named '0', '1'...) or from an OrderedDict of named modules.
    Supports indexing, slicing (a Sequential), ``len``, ``del``, ``append``, ``insert``,
    ``extend``, ``pop``, ``+`` and ``*``.

    Examples
    --------
    >>> from retrograd import nn
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> len(net), type(net[1]).__name__
    (3, 'ReLU')
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        return next(islice(iterator, _index(idx, len(self)), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module) -> None:
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        # keep the names 0..n-1, as PyTorch
        self._modules = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other) -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other) -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        for layer in list(other):
            self.append(layer)
        return self

    def __mul__(self, other) -> "Sequential":
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        ret = Sequential()
        for _ in range(other):
            for layer in self:
                ret.append(layer)
        return ret

    __rmul__ = __mul__

    def __imul__(self, other) -> "Sequential":
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        layers = list(self)
        for _ in range(other - 1):
            for layer in layers:
                self.append(layer)
        return self

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module) -> "Sequential":
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module) -> "Sequential":
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential) -> "Sequential":
        """Append every module of an iterable."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        """Remove and return the module at index ``key``."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)  # noqa: A001 - PyTorch's name
        return input


class ModuleList(Module):
    """A list of modules, registered (their parameters are the container's).

    Examples
    --------
    >>> from retrograd import nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        return str(_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx, module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self._modules = OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other) -> "ModuleList":
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        # repeated modules are shown once: "(0-2): 3 x Linear(...)", as PyTorch
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            text = (f"({start}): {b}" if start == end
                    else f"({start}-{end}): {end - start + 1} x {b}")
            lines.append(_addindent(text, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module) -> None:
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module) -> "ModuleList":
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at index ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules) -> "ModuleList":
        """Append every module of an iterable."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str):
        return self._modules[key]

    def __setitem__(self, key: str, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add modules from a mapping or from an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j)
                                + " should be Iterable; is" + type(m).__name__)
            if not len(m) == 2:
                raise ValueError("ModuleDict update sequence element #" + str(j)
                                 + " has length " + str(len(m)) + "; 2 is required")
            self[m[0]] = m[1]


def _param_line(key, p, typename_style: bool) -> str:
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.size())
        device = f" ({p.device})" if p.device.type == "cuda" else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        what = p.type() if typename_style else str(p.dtype)
        return f"  ({key}): {kind} containing: [{what} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters, registered (plain tensors are made Parameters)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx) -> str:
        return str(_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx, param) -> None:
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, idx, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value) -> "ParameterList":
        """Add ``value`` at the end (a tensor becomes a Parameter)."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values) -> "ParameterList":
        """Append every value of an iterable."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, False) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their keys."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys.")
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> "ParameterDict":
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None) -> "ParameterDict":
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add parameters from a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, p in parameters.items():
                self[key] = p
        elif isinstance(parameters, Mapping):
            for key, p in sorted(parameters.items()):
                self[key] = p
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j)
                                    + " should be Iterable; is" + type(p).__name__)
                if not len(p) == 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j)
                                     + " has length " + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, True) for k, p in self.items())

    def __call__(self, input=None):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other) -> "ParameterDict":
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other) -> "ParameterDict":
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other) -> "ParameterDict":
        self.update(other)
        return self
