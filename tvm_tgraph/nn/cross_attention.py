"""Configuration cross-attention: each node attends over the configurations of its graph
(multi-head, or the parameter-free softmax of the reference code)."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class ConfigCrossAttention(nn.Module):
    r"""Multi-head attention along the configuration axis, separately for every node.

    For node :math:`v` with embeddings :math:`X_v \in \mathbb{R}^{C \times H}` across the
    :math:`C` configurations of one graph,

    .. math::
        X_v' = \mathrm{softmax}\!\left(\frac{(X_v W_Q)(X_v W_K)^\top}{\sqrt{d}}\right) X_v W_V W_O

    so that what a configuration does at a node is read against what the other
    configurations do at the same node (TGraph, Khizbullin et al., arXiv 2405.16623).
    Memory grows as ``N * heads * C^2``: score large config sets in chunks.

    Parameters
    ----------
    channels : int
        Channels ``H`` (divisible by ``heads``).
    heads : int
        Attention heads (default 4).

    Shapes
    ------
    - input: ``(C, N, H)``
    - output: ``(C, N, H)``
    """

    def __init__(self, channels: int, heads: int = 4) -> None:
        super().__init__()
        self.channels = channels
        self.heads = heads
        self.attention = nn.MultiheadAttention(channels, heads, batch_first=True)

    def reset_parameters(self) -> None:
        self.attention._reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        per_node = x.transpose(0, 1)  # (N, C, H): a batch of N sequences over configs
        out, _ = self.attention(per_node, per_node, per_node, need_weights=False)
        return out.transpose(0, 1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels}, heads={self.heads})"


class ConfigSoftmaxAttention(nn.Module):
    r"""Parameter-free attention along the configuration axis, per node and channel.

    For node :math:`v`, channel :math:`h` and the :math:`C` configurations of one graph,

    .. math::
        x'_{c,v,h} = C \cdot x_{c,v,h}\,
                     \frac{\exp(x_{c,v,h} / \tau)}{\sum_{c'} \exp(x_{c',v,h} / \tau)}

    with one learnable temperature :math:`\tau` (initially 0.5): a configuration's channel
    is amplified where it stands out among the configurations and damped where it does not.
    This is the form of TGraph's reference code (the winning TpuGraphs solution), with one
    change: the factor :math:`C` makes the output's scale independent of how many
    configurations share a chunk (without it, every value shrinks as :math:`1/C`, and a
    network trained on batches of 64 would see other magnitudes when scoring 512).

    Parameters
    ----------
    channels : int
        Channels ``H`` (only reported; the operator has no weights but :math:`\tau`).
    temperature : float
        Initial :math:`\tau` (default 0.5).

    Shapes
    ------
    - input: ``(C, N, H)``
    - output: ``(C, N, H)``
    """

    def __init__(self, channels: int, temperature: float = 0.5) -> None:
        super().__init__()
        self.channels = channels
        self.initial_temperature = temperature
        self.temperature = nn.Parameter(torch.tensor(temperature))

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.temperature.fill_(self.initial_temperature)

    def forward(self, x: Tensor) -> Tensor:
        weights = torch.softmax(x / self.temperature, dim=0)
        return x * weights * x.shape[0]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels}, temperature={self.temperature.item():.3g})"
