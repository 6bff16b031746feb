"""``retrograd.nn.utils``: gradient clipping, parameter/vector conversion, RNN packing,
parametrizations, BatchNorm fusion, ``skip_init`` and ``stateless``."""

from . import clip_grad, convert_parameters  # noqa: F401
from . import rnn  # noqa: F401
from .clip_grad import (
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
from . import parametrizations, parametrize  # noqa: E402,F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ += ["parametrizations", "parametrize", "spectral_norm", "remove_spectral_norm",
            "weight_norm", "remove_weight_norm"]
from . import fusion, init, stateless  # noqa: E402,F401
from .fusion import (  # noqa: E402
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights,
)
from .init import skip_init  # noqa: E402

__all__ += ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
            "fuse_linear_bn_weights", "skip_init", "stateless"]
