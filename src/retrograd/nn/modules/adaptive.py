"""AdaptiveLogSoftmaxWithLoss: an efficient softmax over many classes (Grave et al., 2016):
frequent classes in a head, rarer ones in clusters reached through one head entry each."""

from __future__ import annotations

from collections import namedtuple

from ...ops.shape import cat
from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of targets under an adaptive softmax, and their mean negative as
    the loss: ``forward(input, target) -> (output, loss)``; ``log_prob(input)`` gives the
    full (N, n_classes) distribution and ``predict(input)`` its argmax.

    Classes below ``cutoffs[0]`` live in the head; cluster i (classes cutoffs[i] to
    cutoffs[i+1]) goes through a projection to ``in_features // div_value ** (i + 1)``.
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, dtype=dtype),
                                        Linear(hidden, size, bias=False, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        rows_in = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        # each row's head entry: its class in the shortlist, else its cluster's entry; and
        # for cluster rows, the log-probability within the cluster
        head_index = target.clone()
        rows, within = [], []
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            mask = (target >= bounds[i]) & (target < bounds[i + 1])
            idx = mask.nonzero().reshape(-1)
            if idx.numel() == 0:
                continue
            rows.append(idx)
            if i == 0:
                within.append(rows_in.new_zeros(idx.numel()))
                continue
            head_index[idx] = self.shortlist_size + i - 1
            logprob = F.log_softmax(self.tail[i - 1](rows_in[idx]), dim=1)
            within.append(logprob.gather(1, (target[idx] - bounds[i]).unsqueeze(1)).squeeze(1))
        used = sum(r.numel() for r in rows)
        if used != target.size(0):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        order = cat(rows).argsort()  # the concatenated pieces back in row order
        head_logprob = F.log_softmax(self.head(rows_in), dim=1)
        output = cat(within)[order] + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            entry = self.shortlist_size + i
            pieces.append(cluster + head_logprob[:, entry:entry + 1])
        return cat(pieces, 1)

    def log_prob(self, input):
        """Log-probabilities of every class, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row, ``log_prob(input).argmax(1)``."""
        return self.log_prob(input).argmax(dim=1)
