"""Channel attention (squeeze-and-excitation over the channels of each node)."""

from __future__ import annotations

import torch
from torch import Tensor, nn


class ChannelAttention(nn.Module):
    r"""Gates each channel of a node by a sigmoid of a bottleneck MLP of the same node.

    .. math::
        \mathbf{x}' = \mathbf{x} \odot \sigma(W_2\,\mathrm{ReLU}(W_1 \mathbf{x}))

    As in TGraph (Khizbullin et al., arXiv 2405.16623).

    Parameters
    ----------
    channels : int
        Channels ``H``.
    reduction : int
        Bottleneck ratio (default 4): ``W_1`` maps ``H`` to ``max(1, H // reduction)``.

    Shapes
    ------
    - input: ``(*, H)``
    - output: ``(*, H)``
    """

    def __init__(self, channels: int, reduction: int = 4) -> None:
        super().__init__()
        self.channels = channels
        hidden = max(1, channels // reduction)
        self.squeeze = nn.Linear(channels, hidden)
        self.excite = nn.Linear(hidden, channels)

    def reset_parameters(self) -> None:
        self.squeeze.reset_parameters()
        self.excite.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.sigmoid(self.excite(torch.relu(self.squeeze(x))))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.channels})"
