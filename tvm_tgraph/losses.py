"""Ranking losses over the configurations of one graph (torch, no TVM)."""

from __future__ import annotations

import torch
from torch import Tensor


def pairwise_hinge_loss(scores: Tensor, runtime: Tensor, margin: float = 0.1) -> Tensor:
    r"""Mean hinge loss over ordered pairs of configurations of the same graph.

    For every pair with :math:`t_i < t_j` (``i`` is faster) the loss is
    :math:`\max(0, m - (s_i - s_j))`: the faster configuration must score higher by ``margin``.

    Shapes
    ------
    - scores: ``(C,)``, higher = faster
    - runtime: ``(C,)``, lower = faster
    - output: scalar (0 when no pair is ordered)
    """
    faster = runtime.unsqueeze(1) < runtime.unsqueeze(0)        # (C, C): i faster than j
    if not bool(faster.any()):
        return scores.sum() * 0.0
    gaps = scores.unsqueeze(1) - scores.unsqueeze(0)            # s_i - s_j
    return torch.relu(margin - gaps)[faster].mean()


def listmle_loss(scores: Tensor, runtime: Tensor) -> Tensor:
    r"""ListMLE (Xia et al., 2008): negative log-likelihood of the true order under a
    Plackett-Luce model of the scores.

    .. math::
        \mathcal{L} = \frac{1}{C}\sum_{k=1}^{C}\Big(\log\sum_{l \ge k} e^{s_{\pi(l)}} - s_{\pi(k)}\Big)

    with :math:`\pi` the configurations sorted from fastest to slowest.

    Shapes
    ------
    - scores: ``(C,)``, higher = faster
    - runtime: ``(C,)``, lower = faster
    - output: scalar
    """
    ordered = scores[torch.argsort(runtime)]
    # log-sum-exp of each suffix, computed from the end
    suffix = torch.logcumsumexp(ordered.flip(0), dim=0).flip(0)
    return (suffix - ordered).mean()


LOSSES = {"hinge": pairwise_hinge_loss, "listmle": listmle_loss}
