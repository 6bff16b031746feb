"""Lazy layers: LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*, whose
channel count is read from the first input; then each becomes its plain class (its
``__class__`` changes, as PyTorch's lazy modules do)."""

from __future__ import annotations

from ... import dtypes
from ..._creation import tensor
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _NormBase
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["LazyModuleMixin", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Shapes parameters on the first call: a forward pre-hook runs
    ``initialize_parameters(*args)``, removes itself and turns the module into
    ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer still waits for its shape."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors if t is not None)

    def _infer_parameters(self, args):
        with no_grad():
            self.initialize_parameters(*args)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._sizes_from_loaded_state()
        self._initialize_hook.remove()
        del self._initialize_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _sizes_from_loaded_state(self) -> None:
        """Parameters materialised by load_state_dict leave the channel count at 0."""

    def __getstate__(self):
        # the hook's handle holds weak references, which pickle refuses; the hook itself
        # stays in _forward_pre_hooks and gets a new handle in __setstate__
        state = self.__dict__.copy()
        state.pop("_initialize_hook", None)
        return state

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        hooks = self._forward_pre_hooks
        stale = [k for k, h in hooks.items() if h == LazyModuleMixin._infer_parameters]
        for key in stale:
            del hooks[key]
        if stale:
            self._initialize_hook = self.register_forward_pre_hook(
                LazyModuleMixin._infer_parameters)


class _LazyConvXdMixin(LazyModuleMixin):
    _dims = 0

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input) -> int:
        n = self._dims + 1
        if input.dim() not in (n, n + 1):
            raise RuntimeError(f"Expected {n}D (unbatched) or {n + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == n + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        shape = ((self.in_channels, self.out_channels // self.groups) if self.transposed
                 else (self.out_channels, self.in_channels // self.groups))
        self.weight.materialize((*shape, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _sizes_from_loaded_state(self) -> None:
        if self.in_channels == 0:
            self.in_channels = (self.weight.shape[0] if self.transposed
                                else self.weight.shape[1] * self.groups)


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None,
                 dtype=None):
        self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups,
                                    False, padding_mode, dtype=dtype)
        self._make_lazy(out_channels, bias, dtype)

    def _make_lazy(self, out_channels, bias, dtype) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters)


class _LazyConvTranspose(_LazyConv):
    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros",
                 device=None, dtype=None):
        self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, output_padding,
                                    groups, False, dilation, padding_mode, dtype=dtype)
        self._make_lazy(out_channels, bias, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A :class:`Conv1d` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv1d
    _dims = 1


class LazyConv2d(_LazyConv, Conv2d):
    """A :class:`Conv2d` whose ``in_channels`` is read from the first input.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> conv = nn.LazyConv2d(4, 3)
    >>> conv(T.zeros(1, 2, 5, 5)).shape, conv
    (retrograd.Size([1, 4, 3, 3]), Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1)))
    """

    cls_to_become = Conv2d
    _dims = 2


class LazyConv3d(_LazyConv, Conv3d):
    """A :class:`Conv3d` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv3d
    _dims = 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A :class:`ConvTranspose1d` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose1d
    _dims = 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A :class:`ConvTranspose2d` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose2d
    _dims = 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A :class:`ConvTranspose3d` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose3d
    _dims = 3


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=dtypes.long)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]  # PyTorch's rule, also for unbatched input
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()

    def _sizes_from_loaded_state(self) -> None:
        if self.num_features == 0:
            known = self.weight if self.weight is not None else self.running_mean
            self.num_features = known.shape[0]


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A :class:`BatchNorm1d` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A :class:`BatchNorm2d` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A :class:`BatchNorm3d` whose ``num_features`` is read from the first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An :class:`InstanceNorm1d` whose ``num_features`` is read from the first input
    (affine and tracking running statistics by default, as PyTorch's)."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An :class:`InstanceNorm2d` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An :class:`InstanceNorm3d` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm3d
