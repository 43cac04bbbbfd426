"""Ranking losses over the configurations of one graph (torch, no TVM)."""

from __future__ import annotations

import math

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
    return _pair_hinge(scores, faster.float(), margin)


def weighted_hinge_loss(scores: Tensor, runtime: Tensor, margin: float = 0.1, full_weight: float = 2.0) -> Tensor:
    r"""Pairwise hinge loss with each pair weighted by how far apart the two runtimes are.

    A pair with :math:`t_i < t_j` weighs :math:`w_{ij} = \min(1, \log(t_j / t_i) / \log r)`,
    ``r = full_weight``: pairs within measurement noise of each other (a few percent) barely
    count, pairs ``full_weight`` times apart or more count fully. The loss is
    :math:`\sum w_{ij} \max(0, m - (s_i - s_j)) / \sum w_{ij}`.

    Shapes
    ------
    - scores: ``(C,)``, higher = faster
    - runtime: ``(C,)``, lower = faster, positive
    - output: scalar (0 when no pair is ordered)
    """
    log_runtime = torch.log(runtime)
    apart = log_runtime.unsqueeze(0) - log_runtime.unsqueeze(1)   # (C, C): log(t_j / t_i)
    return _pair_hinge(scores, torch.clamp(apart / math.log(full_weight), min=0.0, max=1.0), margin)


def _pair_hinge(scores: Tensor, weight: Tensor, margin: float) -> Tensor:
    r""":math:`\sum w_{ij} \max(0, m - (s_i - s_j)) / \sum w_{ij}`, 0 when every weight is 0.

    Shapes: ``scores (C,)``, ``weight (C, C)`` (``w_ij`` > 0 only where ``i`` is faster than
    ``j``) -> scalar.
    """
    if not bool((weight > 0).any()):
        return scores.sum() * 0.0
    gaps = scores.unsqueeze(1) - scores.unsqueeze(0)            # s_i - s_j
    return (weight * torch.relu(margin - gaps)).sum() / weight.sum()


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


LOSSES = {"hinge": pairwise_hinge_loss, "weighted_hinge": weighted_hinge_loss, "listmle": listmle_loss}
#: The losses that take a ``margin``.
MARGIN_LOSSES = {"hinge", "weighted_hinge"}
