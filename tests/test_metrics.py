"""Metric definitions of docs/architecture.md."""

from __future__ import annotations

import math

import numpy as np

from tvm_tgraph.metrics import best_so_far, kendall_tau, mean_and_range, opa, standardised_mean, top_k_score

LATENCY = np.array([4.0, 1.0, 3.0, 2.0])


def test_perfect_and_reversed_rankings():
    perfect = -LATENCY
    assert kendall_tau(perfect, LATENCY) == 1.0 and kendall_tau(-perfect, LATENCY) == -1.0
    assert opa(perfect, LATENCY) == 1.0 and opa(-perfect, LATENCY) == 0.0


def test_top_k_score_is_best_over_best_of_the_top_k():
    scores = np.array([4.0, 1.0, 3.0, 2.0])  # ranks the slowest first
    assert top_k_score(scores, LATENCY, 1) == 1.0 / 4.0
    assert top_k_score(scores, LATENCY, 2) == 1.0 / 3.0
    assert top_k_score(scores, LATENCY, 4) == 1.0


def test_degenerate_inputs():
    assert math.isnan(kendall_tau([1.0], [1.0]))
    assert math.isnan(opa([1.0, 2.0], [1.0, 1.0]))
    np.testing.assert_array_equal(best_so_far([3, 4, 1, 2]), [3, 3, 1, 1])


def test_standardised_mean_weighs_models_equally_whatever_their_scale():
    # one model on a scale 1000x the other's: standardised, their orders count the same
    small, large = np.array([1.0, 2.0, 3.0, 4.0]), 1000.0 * np.array([4.0, 3.0, 2.0, 1.0])
    np.testing.assert_allclose(standardised_mean([small, large]), 0.0, atol=1e-12)
    mean = standardised_mean([small, 2.0 * small + 5.0, np.full(4, 7.0)])
    assert np.all(np.diff(mean) > 0) and abs(mean.mean()) < 1e-12


def test_mean_and_range_leaves_out_missing_values():
    assert mean_and_range([0.5, 0.25, float("nan"), 0.75]) == "0.500 (0.250-0.750)"
    assert mean_and_range([0.4, float("nan")]) == "0.400"
    assert mean_and_range([float("nan")]) == "-"
    assert mean_and_range([]) == "-"
