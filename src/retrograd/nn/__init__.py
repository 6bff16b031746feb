"""retrograd.nn: neural-network building blocks on the public API, as ``torch.nn``."""

from . import attention, common_types, functional, grad, init, parameter, utils  # noqa: F401
from ._factory import factory_kwargs  # noqa: F401
from . import parallel  # noqa: F401  (DistributedDataParallel, over retrograd.distributed)
from .module import Module
from .modules import (
    ELU, GELU, BCELoss, BCEWithLogitsLoss, Bilinear, CrossEntropyLoss, Dropout, Flatten,
    Hardtanh, Identity, L1Loss, LazyLinear, LeakyReLU, Linear, LogSigmoid, LogSoftmax,
    ModuleDict, ModuleList, MSELoss, NLLLoss, ParameterDict, ParameterList, ReLU, ReLU6,
    Sequential, Sigmoid, SiLU, Softmax, Softplus, Tanh, Unflatten,
)
from .modules import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules import (
    MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,
    TransformerEncoder, TransformerEncoderLayer,
)
from .modules import __all__ as _module_names
from .modules import *  # noqa: F401,F403  (every layer named in modules.__all__)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .parallel import DataParallel  # torch.nn.DataParallel

__all__ = [
    "Module", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity",
    "Linear", "Bilinear", "LazyLinear", "Flatten", "Unflatten", "Dropout", "ReLU", "ReLU6",
    "ELU", "GELU", "LeakyReLU", "Hardtanh", "Sigmoid", "Tanh", "SiLU", "Softplus",
    "LogSigmoid", "Softmax", "LogSoftmax", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss",
    "BCELoss", "BCEWithLogitsLoss", "functional", "init", "utils",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer",
]
__all__ += [n for n in _module_names if n not in __all__] + ["DataParallel"]
