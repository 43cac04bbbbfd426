"""Layout search: score many layout configurations of a Relax model with TGraph, build and
measure only the top-k, return the fastest."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tvm_tgraph.nn import predict_scores


@dataclass
class LayoutSearchResult:
    """The fastest measured configuration and everything measured on the way."""

    best_config: np.ndarray          # (sites,) 0/1 choices
    best_latency_s: float
    pool_size: int                   # configurations scored
    measured: list[tuple[str, float]] = field(default_factory=list)  # (config, latency), in order


def layout_search(space, model, measure, pool_size: int = 1024, top_k: int = 8, seed: int = 0,
                  chunk_size: int = 128, progress: bool = True) -> LayoutSearchResult:
    """Measure the ``top_k`` best-scored of ``pool_size`` distinct random configurations.

    Parameters
    ----------
    space : tvm_tgraph.convert.relax_layout.LayoutSpace
    model : tvm_tgraph.nn.TGraphNet
        Trained on measured layouts of this model (``tgraph layout train``).
    measure : callable
        ``measure(config) -> latency in seconds`` for a ``(sites,)`` 0/1 configuration
        (``tvm_tgraph.workflows.layout.measure_config`` builds and times it end to end).
    pool_size : int
        Configurations scored (the whole space if it is smaller).
    """
    from tqdm import tqdm

    pool = space.random_configs(pool_size, np.random.default_rng(seed))
    scores = predict_scores(model, space.configured_graph(pool), chunk_size)
    picks = pool[np.argsort(-scores, kind="stable")[:top_k]]
    measured = []
    for config in tqdm(picks, desc="measure top-k layouts", unit="config", disable=not progress):
        latency = measure(config)
        measured.append(("".join(map(str, config)), latency))
    best = int(np.argmin([latency for _, latency in measured]))
    return LayoutSearchResult(picks[best], measured[best][1], len(pool), measured)
