"""Configuration cross-attention: each node attends over the configurations of its graph."""

from __future__ import annotations

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
