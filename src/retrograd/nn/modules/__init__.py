"""The layers of ``retrograd.nn``, one file per kind (as ``torch.nn.modules``)."""

from ..module import Module
from .activation import (
    ELU, GELU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU, Softmax,
    Softplus, Tanh,
)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, LazyLinear, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "LazyLinear", "Flatten", "Unflatten", "Dropout",
    "ReLU", "ReLU6", "ELU", "GELU", "LeakyReLU", "Hardtanh", "Sigmoid", "Tanh", "SiLU",
    "Softplus", "LogSigmoid", "Softmax", "LogSoftmax",
    "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer",
]
