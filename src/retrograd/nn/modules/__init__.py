"""The layers of ``retrograd.nn``, one file per kind (as ``torch.nn.modules``)."""

from ..module import Module
from .activation import (
    ELU, GELU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU, Softmax,
    Softplus, Tanh,
)
from .attention import MultiheadAttention
from . import module  # noqa: F401  (torch.nn.modules.module: Module and the global hooks)
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, LazyLinear, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer,
)

# layers over the new nn.functional (branch layers)
from .activation import (
    CELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Mish, PReLU, RReLU, Softmax2d, Softmin,
    Softshrink, Softsign, Tanhshrink, Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .fold import Fold, Unfold
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .lazy import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d,
    LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
    LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from .loss import (
    CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss,
    LinearCrossEntropyLoss, LinearCrossEntropyOptions, MarginRankingLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss,
)
from .normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
    ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
)
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, FractionalMaxPool2d,
    FractionalMaxPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
)
from .sparse import Embedding, EmbeddingBag
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
    "ParameterDict",
    "Identity", "Linear", "Bilinear", "LazyLinear", "Flatten", "Unflatten", "Dropout",
    "ReLU", "ReLU6", "ELU", "GELU", "LeakyReLU", "Hardtanh", "Sigmoid", "Tanh", "SiLU",
    "Softplus", "LogSigmoid", "Softmax", "LogSoftmax",
    "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer",
]

__all__ += [
    "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Mish", "PReLU", "RReLU",
    "Softmax2d", "Softmin", "Softshrink", "Softsign", "Tanhshrink", "Threshold",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d", "Conv3d",
    "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "CosineSimilarity",
    "PairwiseDistance", "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "FeatureAlphaDropout", "Fold", "Unfold", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "CosineEmbeddingLoss", "CTCLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
    "HuberLoss", "KLDivLoss", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss2d", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
    "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm", "CircularPad1d", "CircularPad2d",
    "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ChannelShuffle", "PixelShuffle",
    "PixelUnshuffle", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d",
    "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "Embedding", "EmbeddingBag", "Upsample", "UpsamplingBilinear2d",
    "UpsamplingNearest2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "LinearCrossEntropyLoss", "CrossMapLRN2d", "SyncBatchNorm", "AdaptiveLogSoftmaxWithLoss",
    "LinearCrossEntropyOptions",
]
