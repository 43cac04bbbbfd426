"""TGraphEnsemble: the mean of its members' standardised scores, and their spread."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import random_graph

from tvm_tgraph.metrics import standardise
from tvm_tgraph.nn import GraphTensors, TGraphConfig, TGraphEnsemble, TGraphNet, predict_member_scores, predict_scores

CONFIG = TGraphConfig(num_node_kinds=5, node_features=7, config_features=5, global_features=3,
                      hidden=16, num_blocks=2, heads=2)


def _members(count: int) -> list[TGraphNet]:
    networks = []
    for seed in range(count):
        torch.manual_seed(seed)
        networks.append(TGraphNet(CONFIG).eval())
    return networks


def test_the_ensemble_scores_the_mean_of_its_members_standardised_scores():
    members = _members(3)
    ensemble = TGraphEnsemble(CONFIG, networks=members)
    graph = random_graph(num_configs=9)
    each = np.stack([standardise(predict_scores(m, graph, chunk_size=9)) for m in members])
    np.testing.assert_allclose(predict_member_scores(ensemble, graph, chunk_size=9), each, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(predict_scores(ensemble, graph, chunk_size=9), each.mean(0), rtol=1e-5, atol=1e-5)
    assert each.std(axis=0).max() > 0.1          # differently seeded members disagree somewhere


def test_members_are_standardised_within_each_chunk():
    ensemble = TGraphEnsemble(CONFIG, networks=_members(2))
    tensors = GraphTensors.from_graph(random_graph(num_configs=10))
    chunked = predict_member_scores(ensemble, tensors, chunk_size=4)
    assert chunked.shape == (2, 10)
    for start, stop in ((0, 4), (4, 8), (8, 10)):
        np.testing.assert_allclose(chunked[:, start:stop].mean(axis=1), 0, atol=1e-5)
        np.testing.assert_allclose(chunked[:, start:stop].std(axis=1), 1, atol=1e-4)


def test_a_single_network_is_one_member():
    network = _members(1)[0]
    graph = random_graph(num_configs=5)
    np.testing.assert_array_equal(predict_member_scores(network, graph), predict_scores(network, graph)[None])


def test_an_ensemble_needs_two_members_of_its_configuration():
    with pytest.raises(ValueError, match="at least two members"):
        TGraphEnsemble(CONFIG, networks=_members(1))
    other = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=8, num_blocks=1, heads=2))
    with pytest.raises(ValueError, match="the ensemble's configuration"):
        TGraphEnsemble(CONFIG, networks=[*_members(1), other])
