"""PyTorch's other spellings of ops the registry already has (issue 6).

Imported last by ``ops/__init__``: every op is registered by then, and this module only
adds names to existing entries (:func:`registry.add_names`), so an alias is the very same
callable as its op (``retrograd.multiply is retrograd.mul``), with the op's grad_fn names.

* aliases: ``absolute`` (abs), ``arctan2`` (atan2), ``multiply`` (mul), ``divide`` (div,
  with ``rounding_mode``), ``subtract`` (sub, ``alpha``), ``negative`` (neg), ``greater``
  ``greater_equal`` ``less`` ``less_equal`` ``not_equal`` (gt ge lt le ne), ``fix`` (trunc),
  each with its method and in-place method;
* top-level functions for ops first registered as methods only (``retrograd.all``,
  ``logical_not``, ``bitwise_*``, ``floor_divide``, ``reciprocal``, ``masked_fill``...);
* the top-level in-place functions PyTorch has (``torch.abs_(x)`` is ``x.abs_()``);
* ``detach``/``detach_`` and ``imag`` as functions.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from . import registry
from ._apply import defop
from .inplace_forms import _not_implemented_vjp, _recorded_as, float_only_not
from .pointwise import floor_divide
from .registry import add_names, reflected, register

# alias -> the op it spells (methods and in-place methods follow)
ALIASES = {
    "absolute": "abs", "arctan2": "atan2", "multiply": "mul", "divide": "div",
    "subtract": "sub", "negative": "neg", "greater": "gt", "greater_equal": "ge",
    "less": "lt", "less_equal": "le", "not_equal": "ne", "fix": "trunc",
}

# ops registered as methods only, that PyTorch also has as functions: (key, signature)
FUNCTIONS = {
    "all": "input, dim=None, keepdim=False", "any": "input, dim=None, keepdim=False",
    "logical_not": "input", "bitwise_xor": None,
    "bitwise_and": None, "bitwise_or": None, "bitwise_left_shift": None,
    "bitwise_right_shift": None, "reciprocal": None,
    "masked_fill": "input, mask, value",
}

# PyTorch's top-level in-place functions (dir(torch) ending in "_"), those retrograd has
TOP_LEVEL_INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "i0_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "resize_as_",
)


def _key_of_method(name):
    for e in registry.entries():
        if name in e.methods:
            return e.key
    raise KeyError(f"no registered op has the Tensor method {name}")


def _add_aliases():
    for alias, op in ALIASES.items():
        add_names(_key_of_method(op), function=alias, method=alias)
        add_names(_key_of_method(op + "_"), method=alias + "_")


def _add_functions():
    for key, signature in FUNCTIONS.items():
        e = registry.entry(key)
        add_names(key, function=key, signature=signature,
                  method=() if key in e.methods else key)
    # PyTorch records floor_divide and `x // y` (a node whose backward raises) when an
    # operand requires grad; integer index arithmetic keeps the direct path
    recorded = _recorded_as("floor_divide", floor_divide, "NotImplemented", "NotImplemented",
                            _not_implemented_vjp, "floor_divide")

    def floor_divide_(input, other):  # noqa: A002 - PyTorch's names
        if getattr(input, "_requires_grad", False) or getattr(other, "_requires_grad", False):
            return recorded(input, other)
        return floor_divide(input, other)

    floor_divide_.__name__ = "floor_divide"
    floor_divide_.__doc__ = floor_divide.__doc__
    reflected_node = defop("floor_divide", lambda a, label, values: values,
                           _not_implemented_vjp, "NotImplemented", 1)

    def rfloordiv(self, other):  # `number // x`: recorded on x alone, as PyTorch
        if not getattr(self, "_requires_grad", False):
            return floor_divide(other, self)
        with no_grad():
            values = floor_divide(other, self)._data
        return reflected_node(self, "floor_divide", values)

    methods = registry.entry("floor_divide").methods
    methods["__floordiv__"] = floor_divide_  # (rebound: recorded as the function is)
    methods["__rfloordiv__"] = rfloordiv
    add_names("floor_divide", function="floor_divide", method="floor_divide", fn=floor_divide_)
    # torch.bitwise_not / x.bitwise_not() of a float tensor: NotImplementedError (~x: TypeError)
    e = registry.entry("bitwise_not")
    invert = e.fn

    def bitwise_not(input):  # noqa: A002
        float_only_not(input)
        return invert(input)

    bitwise_not.__doc__ = invert.__doc__
    e.methods["bitwise_not"] = bitwise_not  # (the method, rebound; ~x keeps its TypeError)
    add_names("bitwise_not", function="bitwise_not", fn=bitwise_not, signature="input")
    add_names("__iand__", method="bitwise_and_")
    add_names("__ior__", method="bitwise_or_")
    add_names("__ilshift__", method="bitwise_left_shift_")
    add_names("__irshift__", method="bitwise_right_shift_")
    add_names("__ifloordiv__", method="floor_divide_")
    shifts = {"bitwise_left_shift": "__rlshift__", "bitwise_right_shift": "__rrshift__"}
    for key, dunder in shifts.items():
        add_names(key, tensor={dunder: reflected(registry.entry(key).fn, dunder)})


def _add_top_level_inplace():
    for name in TOP_LEVEL_INPLACE:
        add_names(_key_of_method(name), function=name)


_add_aliases()
_add_functions()
_add_top_level_inplace()


# ----------------------------------------------------------------- detach, imag


def detach(input):  # noqa: A002 - PyTorch's name
    """``input.detach()``: the same data outside the graph."""
    return input.detach()


def detach_(input):  # noqa: A002
    """``input.detach_()``: the tensor itself, made a leaf."""
    return input.detach_()


def imag(input):  # noqa: A002
    """The imaginary part: PyTorch refuses it for a real tensor, and so does retrograd."""
    raise RuntimeError(
        "imag is not implemented for tensors with non-complex dtypes (the tensor is "
        f"{input.dtype}; a real tensor's imaginary part is zero: use zeros_like(x))")


register(detach, method=False, differentiable=False)
register(detach_, method=False, differentiable=False)
register(imag, method=False, tensor={"imag": property(imag)}, differentiable=False)
