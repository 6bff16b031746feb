"""``retrograd.nn.functional``: activations and losses, as in ``torch.nn.functional``."""

from ..ops.activation import (
    elu, gelu, hardtanh, leaky_relu, logsigmoid, relu, relu6, silu, softplus,
)
from ..ops.linalg import linear
from ..ops.nn import (
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, dropout, l1_loss,
    log_softmax, mse_loss, nll_loss, softmax,
)
from ..ops.pointwise import sigmoid, tanh

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "cross_entropy", "nll_loss",
           "mse_loss", "elu", "hardtanh", "leaky_relu", "logsigmoid", "relu6", "silu",
           "softplus", "gelu", "linear", "dropout", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "l1_loss"]
