"""One TGraph block: norm, graph convolution, channel attention, config cross-attention."""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn import functional as F

from .channel_attention import ChannelAttention
from .cross_attention import ConfigCrossAttention


class TGraphBlock(nn.Module):
    r"""A residual block of TGraph.

    .. math::
        Y &= \mathrm{ChannelAttn}(\mathrm{Conv}(\mathrm{LayerNorm}(X)))\\
        Y &\mathrel{+}= \mathrm{CrossAttn}(Y) \quad\text{(if enabled)}\\
        X' &= X + \mathrm{Dropout}(\mathrm{GELU}(Y))

    ``Conv`` is GraphSAGE with mean aggregation over both edge directions, or a plain
    linear layer. LayerNorm normalises each (config, node) on its own, so without
    cross-attention no configuration sees another.

    Parameters
    ----------
    channels : int
        Channels ``H``.
    graph_conv : {"sage", "linear"}
        The node update (default ``"sage"``).
    cross_attention : bool
        Whether to attend across configurations (default ``True``).
    heads : int
        Heads of the cross-attention (default 4).
    dropout : float
        Dropout on the block output (default 0.1).

    Shapes
    ------
    - x: ``(C, N, H)``
    - edge_index: ``(2, m)``
    - output: ``(C, N, H)``
    """

    def __init__(self, channels: int, graph_conv: str = "sage", cross_attention: bool = True,
                 heads: int = 4, dropout: float = 0.1) -> None:
        super().__init__()
        from torch_geometric.nn import SAGEConv

        if graph_conv not in ("sage", "linear"):
            raise ValueError(f"graph_conv must be 'sage' or 'linear', got {graph_conv!r}")
        self.norm = nn.LayerNorm(channels)
        self.conv = SAGEConv(channels, channels, aggr="mean") if graph_conv == "sage" \
            else nn.Linear(channels, channels)
        self.graph_conv = graph_conv
        self.channel_attention = ChannelAttention(channels)
        self.cross_attention = ConfigCrossAttention(channels, heads) if cross_attention else None
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
        if self.cross_attention is not None:
            y = y + self.cross_attention(y)
        return x + self.dropout(F.gelu(y))
