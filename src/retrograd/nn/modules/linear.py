"""Linear layers: Identity, Linear, Bilinear, LazyLinear."""

from __future__ import annotations

import math

from ..._creation import empty
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``; weight is (out_features, in_features).

    Both are initialised from U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch
    (kaiming_uniform_ with a = sqrt(5) for the weight).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> nn.Linear(3, 2)(T.zeros(4, 3)).shape
    retrograd.Size([4, 2])
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias again from the default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        # read from the parameter table (saves two __getattr__ fallbacks per call); a name
        # not in it (parametrized: a class property; legacy weight_norm: a plain
        # attribute) is found by normal lookup
        params = self._parameters
        weight = params["weight"] if "weight" in params else self.weight
        bias = params["bias"] if "bias" in params else self.bias
        return F.linear(input, weight, bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]``; all from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        # TODO(F.bilinear): no functional bilinear yet; einsum records the same derivative
        if input1.shape[:-1] != input2.shape[:-1]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match: got "
                f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
        if input1.shape[-1:] != (self.in1_features,) or input2.shape[-1:] != (self.in2_features,):
            raise RuntimeError(
                f"bilinear(): input1 of shape {list(input1.shape)} and input2 of shape "
                f"{list(input2.shape)} do not match the weight of shape "
                f"{list(self.weight.shape)} (last dims must be {self.in1_features} and "
                f"{self.in2_features})")
        y = _einsum("...i,oij,...j->...o", input1, self.weight, input2)
        if self.bias is not None:
            y = y + self.bias
        return y

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def _einsum(*args):
    from ...ops.einsum import einsum

    return einsum(*args)


class LazyLinear(Linear):
    """A Linear whose ``in_features`` is read from the first input; it then becomes a
    :class:`Linear` (its class changes, as PyTorch's lazy modules do)."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyLinear._infer_parameters)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def has_uninitialized_params(self) -> bool:
        from ..parameter import is_lazy

        return any(is_lazy(p) for p in self._parameters.values() if p is not None)

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    def _infer_parameters(self, args):
        self.initialize_parameters(*args)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        if self.in_features == 0:  # parameters loaded from a state_dict
            self.in_features = self.weight.shape[1]
        self._initialize_hook.remove()
        del self._initialize_hook
        self.__class__ = self.cls_to_become
