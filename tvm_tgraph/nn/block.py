"""One TGraph block: norm, graph convolution, channel attention, config cross-attention."""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch_geometric.nn import SAGEConv

from .channel_attention import ChannelAttention
from .cross_attention import ConfigCrossAttention, ConfigSoftmaxAttention

#: The kinds of configuration cross-attention a block can hold.
CROSS_ATTENTION_KINDS = ("multihead", "softmax", "none")


class TGraphBlock(nn.Module):
    r"""A residual block of TGraph.

    .. math::
        Y &= \mathrm{ChannelAttn}(\mathrm{Conv}(\mathrm{LayerNorm}(X)))\\
        Y &\leftarrow \begin{cases}
            Y + \mathrm{MultiHead}(Y) & \text{multihead}\\
            [\,Y \,\|\, \mathrm{Softmax}_C(Y)\,] & \text{softmax (Conv gives } H/2\text{ channels)}\\
            Y & \text{none}\end{cases}\\
        X' &= X + \mathrm{Dropout}(\mathrm{GELU}(Y))

    ``Conv`` is GraphSAGE with mean aggregation over both edge directions, or a plain
    linear layer. LayerNorm normalises each (config, node) on its own, so without
    cross-attention no configuration sees another. The softmax variant concatenates the
    block's own channels with their attended copy, as TGraph's reference code does.

    Parameters
    ----------
    channels : int
        Channels ``H`` (even for ``"softmax"``).
    graph_conv : {"sage", "linear"}
        The node update (default ``"sage"``).
    cross_attention : {"multihead", "softmax", "none"}
        How configurations attend to each other (default ``"multihead"``):
        :class:`~.cross_attention.ConfigCrossAttention` added to the channels,
        :class:`~.cross_attention.ConfigSoftmaxAttention` concatenated to them, or not at all.
    heads : int
        Heads of the multi-head cross-attention (default 4).
    dropout : float
        Dropout on the block output (default 0.1).

    Shapes
    ------
    - x: ``(C, N, H)``
    - edge_index: ``(2, m)``
    - output: ``(C, N, H)``
    """

    def __init__(self, channels: int, graph_conv: str = "sage", cross_attention: str = "multihead",
                 heads: int = 4, dropout: float = 0.1) -> None:
        super().__init__()
        if graph_conv not in ("sage", "linear"):
            raise ValueError(f"graph_conv must be 'sage' or 'linear', got {graph_conv!r}")
        if cross_attention not in CROSS_ATTENTION_KINDS:
            raise ValueError(f"cross_attention must be one of {CROSS_ATTENTION_KINDS}, got {cross_attention!r}")
        if cross_attention == "softmax" and channels % 2:
            raise ValueError(f"the softmax cross-attention needs an even number of channels, got {channels}")
        inner = channels // 2 if cross_attention == "softmax" else channels
        self.norm = nn.LayerNorm(channels)
        self.conv = SAGEConv(channels, inner, aggr="mean") if graph_conv == "sage" else nn.Linear(channels, inner)
        self.graph_conv = graph_conv
        self.channel_attention = ChannelAttention(inner)
        self.cross_attention_kind = cross_attention
        self.cross_attention = {"multihead": lambda: ConfigCrossAttention(channels, heads),
                                "softmax": lambda: ConfigSoftmaxAttention(inner),
                                "none": lambda: None}[cross_attention]()
        self.dropout = nn.Dropout(dropout)

    def reset_parameters(self) -> None:
        self.norm.reset_parameters()
        self.conv.reset_parameters()
        self.channel_attention.reset_parameters()
        if self.cross_attention is not None:
            self.cross_attention.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        y = self.norm(x)
        y = self.conv(y, edge_index) if self.graph_conv == "sage" else self.conv(y)
        y = self.channel_attention(y)
        if self.cross_attention_kind == "multihead":
            y = y + self.cross_attention(y)
        elif self.cross_attention_kind == "softmax":
            y = torch.cat([y, self.cross_attention(y)], dim=-1)
        return x + self.dropout(F.gelu(y))
