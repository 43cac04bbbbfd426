"""A seed ensemble of TGraph networks: one ranking, and the spread of its members' opinions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..graph import ConfiguredGraph

from .model import GraphTensors, TGraphConfig, TGraphNet, predict_scores, score_in_chunks


def standardise_rows(scores: Tensor) -> Tensor:
    """Each row shifted to zero mean and scaled to unit spread (a constant row stays
    constant, its spread taken as 1), ``(M, C) -> (M, C)``: members on different scales
    become comparable, and each member's order is kept."""
    spread = scores.std(dim=1, unbiased=False, keepdim=True)
    return (scores - scores.mean(dim=1, keepdim=True)) / torch.where(spread > 0, spread, torch.ones_like(spread))


class TGraphEnsemble(nn.Module):
    """``M`` :class:`TGraphNet` of one configuration, trained with different seeds.

    Its score is the mean of the members' standardised scores of the same configurations
    (the ensemble the held-out-family evaluation measured, see ``benchmarks/ranking_eval.py``);
    :meth:`member_scores` gives each member's, whose spread is the ensemble's uncertainty.

    Parameters
    ----------
    config : TGraphConfig
        Every member's configuration.
    members : int
        Number of members ``M`` (at least 2), initialised untrained; or pass ``networks``.
    networks : sequence of TGraphNet, optional
        Trained members to hold (their configurations must equal ``config``).

    Shapes
    ------
    - input: :class:`GraphTensors` with ``C`` configurations
    - output: ``(C,)``; :meth:`member_scores`: ``(M, C)``
    """

    def __init__(self, config: TGraphConfig, members: int = 0, networks: Sequence[TGraphNet] = ()) -> None:
        super().__init__()
        networks = list(networks) or [TGraphNet(config) for _ in range(members)]
        if len(networks) < 2:
            raise ValueError(f"an ensemble needs at least two members, got {len(networks)}")
        if any(n.config != config for n in networks):
            raise ValueError("every member of an ensemble must have the ensemble's configuration")
        self.config = config
        self.members = nn.ModuleList(networks)

    def member_scores(self, graph: GraphTensors) -> Tensor:
        """``(M, C)`` standardised scores of each member, higher = faster."""
        return standardise_rows(torch.stack([member(graph) for member in self.members]))

    def forward(self, graph: GraphTensors) -> Tensor:
        return self.member_scores(graph).mean(dim=0)


def predict_member_scores(model: TGraphNet | TGraphEnsemble, graph: ConfiguredGraph | GraphTensors,
                          chunk_size: int = 128) -> np.ndarray:
    """Each member's scores of every configuration of ``graph``, as :func:`predict_scores`
    scores them (in chunks of ``chunk_size``): an ensemble's members standardised within each
    chunk, a single network as the one member.

    Shapes: ``graph`` with ``C`` configurations -> ``(M, C)`` (``M = 1`` for a TGraphNet).

    Returns
    -------
    np.ndarray
        ``(M, C)`` float64 scores, higher = faster.
    """
    if isinstance(model, TGraphEnsemble):
        return score_in_chunks(model, model.member_scores, graph, chunk_size).double().numpy()
    return predict_scores(model, graph, chunk_size)[None]
