"""Ranking metrics, defined once (docs/architecture.md, "Metrics").

For one task: measured latencies ``L`` (lower = faster; failed candidates excluded) and
predicted scores ``s`` (higher = faster).
"""

from __future__ import annotations

import numpy as np


def _checked(scores, latency) -> tuple[np.ndarray, np.ndarray]:
    scores, latency = np.asarray(scores, dtype=np.float64), np.asarray(latency, dtype=np.float64)
    if scores.shape != latency.shape or scores.ndim != 1:
        raise ValueError(f"scores {scores.shape} and latency {latency.shape} must be equal 1-d shapes")
    return scores, latency


def kendall_tau(scores, latency) -> float:
    """Kendall tau-b between ``scores`` and ``-latency`` (NaN for fewer than 2 candidates)."""
    from scipy.stats import kendalltau

    scores, latency = _checked(scores, latency)
    if len(scores) < 2:
        return float("nan")
    return float(kendalltau(scores, -latency).statistic)


def top_k_score(scores, latency, k: int) -> float:
    """``min_i L_i / min_{i in top-k by s} L_i``, in (0, 1]; 1 means the best is in the top k."""
    scores, latency = _checked(scores, latency)
    top = np.argsort(-scores, kind="stable")[:k]
    return float(latency.min() / latency[top].min())


def opa(scores, latency) -> float:
    """Ordered pair accuracy: share of pairs with ``L_i < L_j`` that have ``s_i > s_j``."""
    scores, latency = _checked(scores, latency)
    faster = latency[:, None] < latency[None, :]
    total = faster.sum()
    if total == 0:
        return float("nan")
    return float((faster & (scores[:, None] > scores[None, :])).sum() / total)


def standardise(scores) -> np.ndarray:
    """Scores shifted to zero mean and scaled to unit spread, order kept, ``(N,) -> (N,)``.

    Constant scores stay constant (spread taken as 1), so models on different scales can be
    averaged: the cost model's prior-and-fine-tuned blend and the evaluation's ensembles."""
    scores = np.asarray(scores, dtype=np.float64)
    spread = scores.std()
    return (scores - scores.mean()) / (spread if spread > 0 else 1.0)


def standardised_mean(score_lists) -> np.ndarray:
    """The mean of several models' scores of the same candidates, each standardised first,
    ``(M, N) -> (N,)``: the evaluation's seed and model ensembles."""
    return np.mean([standardise(scores) for scores in score_lists], axis=0)


def best_so_far(latency_in_trial_order) -> np.ndarray:
    """The tuning curve: best latency found after each measured trial, ``(T,)``."""
    return np.minimum.accumulate(np.asarray(latency_in_trial_order, dtype=np.float64))


def ranking_metrics(scores, latency) -> dict[str, float]:
    """Kendall tau, top-1 and top-5 score and OPA of one task."""
    return {
        "kendall_tau": kendall_tau(scores, latency),
        "top1": top_k_score(scores, latency, 1),
        "top5": top_k_score(scores, latency, 5),
        "opa": opa(scores, latency),
    }


def mean_metrics(per_task: dict[str, dict[str, float]]) -> dict[str, float]:
    """Mean of each metric over tasks (NaN entries ignored)."""
    if not per_task:
        return {}
    keys = next(iter(per_task.values())).keys()
    return {k: float(np.nanmean([m[k] for m in per_task.values()])) for k in keys}


def mean_and_range(values) -> str:
    """``"mean (min-max)"`` of ``values`` to three decimals, as the benchmark reports print a
    metric over seeds or folds; NaN entries are left out, one value prints its mean alone
    and none prints ``"-"``."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not values.size:
        return "-"
    if values.size == 1:
        return f"{values[0]:.3f}"
    return f"{values.mean():.3f} ({values.min():.3f}-{values.max():.3f})"
