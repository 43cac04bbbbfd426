"""TGraphNet: shapes, equivariance over configurations, and what cross-attention sees."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import random_graph

from tvm_tgraph.nn import ConfigSoftmaxAttention, GraphTensors, TGraphConfig, TGraphNet, predict_scores


def make_model(**overrides) -> TGraphNet:
    torch.manual_seed(0)
    config = TGraphConfig(num_node_kinds=5, node_features=7, config_features=5, global_features=3,
                          hidden=16, num_blocks=2, heads=2, **overrides)
    return TGraphNet(config).eval()


@pytest.mark.parametrize("graph_conv", ["sage", "linear"])
def test_one_score_per_configuration(graph_conv):
    model = make_model(graph_conv=graph_conv)
    scores = model(GraphTensors.from_graph(random_graph(num_configs=6)))
    assert scores.shape == (6,)
    assert torch.isfinite(scores).all()


@pytest.mark.parametrize("cross_attention", ["multihead", "softmax", "none"])
def test_permuting_configurations_permutes_scores(cross_attention):
    model = make_model(cross_attention=cross_attention)
    tensors = GraphTensors.from_graph(random_graph(num_configs=8))
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.allclose(model(tensors)[perm], model(tensors.select(perm)), atol=1e-5)


@pytest.mark.parametrize("value_bins", [0, 32])
def test_cross_attention_lets_other_configurations_change_a_score(value_bins):
    """With or without a trained (here: random) value embedding (the shipped recipe and its
    ``value_embedding_none`` ablation), a configuration's score depends on the others scored
    with it through the cross-attention only."""
    base = random_graph(num_configs=6, seed=1)
    other = random_graph(num_configs=6, seed=2)
    mixed = base.select(np.arange(6))
    mixed.config_feat[1:] = other.config_feat[1:]   # config 0 stays, its companions change
    mixed.global_feat[1:] = other.global_feat[1:]
    for cross_attention, should_change in (("multihead", True), ("softmax", True), ("none", False)):
        model = make_model(cross_attention=cross_attention, value_bins=value_bins)
        with torch.no_grad():
            if value_bins:
                model.config_values.weight.normal_(generator=torch.Generator().manual_seed(0))
            first = model(GraphTensors.from_graph(base))[0]
            again = model(GraphTensors.from_graph(mixed))[0]
        assert bool(not torch.isclose(first, again, atol=1e-6)) is should_change


def test_chunked_prediction_matches_one_pass_without_cross_attention():
    model = make_model(cross_attention="none")
    graph = random_graph(num_configs=10)
    whole = predict_scores(model, graph, chunk_size=100)
    chunked = predict_scores(model, graph, chunk_size=3)
    assert whole.dtype == np.float64 and whole.shape == (10,)
    np.testing.assert_allclose(whole, chunked, atol=1e-5)


def test_normalisation_is_fitted_from_data():
    model = make_model()
    graph = random_graph()
    model.fit_normalization([graph])
    np.testing.assert_allclose(model.node_mean.numpy(), graph.node_feat.mean(0), atol=1e-6)


def test_repr_names_the_layers():
    text = repr(make_model())
    assert "ConfigCrossAttention(16, heads=2)" in text and "SAGEConv" in text and "ChannelAttention(16)" in text
    assert "ConfigSoftmaxAttention(8, temperature=0.5)" in repr(make_model(cross_attention="softmax"))


def test_softmax_attention_keeps_its_scale_whatever_the_number_of_configurations():
    """Equal configurations come out unchanged (each weight is 1/C, times C), and a channel
    that stands out among the configurations is amplified."""
    attention = ConfigSoftmaxAttention(4)
    for count in (2, 64, 512):
        same = torch.full((count, 3, 4), 0.7)
        assert torch.allclose(attention(same), same)
    x = torch.zeros(8, 1, 4)
    x[3] = 1.0
    out = attention(x)
    assert (out[3] > 1.0).all() and torch.equal(out[:3], x[:3])


def test_cards_written_before_the_choice_of_cross_attention_still_load():
    legacy = dict(num_node_kinds=5, node_features=7, config_features=5, global_features=3)
    assert TGraphConfig(**legacy, cross_attention=True).cross_attention == "multihead"
    assert TGraphConfig(**legacy, cross_attention=False).cross_attention == "none"
    with pytest.raises(ValueError, match="cross_attention must be one of"):
        TGraphNet(TGraphConfig(**legacy, cross_attention="sideways"))


def test_reset_parameters_reinitialises_every_layer_and_the_normalisation():
    torch.manual_seed(0)
    net = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=16, num_blocks=2, heads=2))
    before = {k: v.clone() for k, v in net.state_dict().items()}
    net.node_mean.fill_(3.0)
    net.reset_parameters()
    after = net.state_dict()
    assert not torch.equal(before["node_proj.weight"], after["node_proj.weight"])
    assert not torch.equal(before["blocks.0.cross_attention.attention.in_proj_weight"],
                           after["blocks.0.cross_attention.attention.in_proj_weight"])
    assert torch.equal(after["node_mean"], torch.zeros(7))
    # the reset network still computes (its normalisation is the identity again)
    assert predict_scores(net, random_graph()).shape == (6,)


def test_value_embedding_starts_silent_and_tells_apart_values_one_bin_apart():
    """Zero-initialised, the value embedding leaves the linear network's scores unchanged;
    once trained (here: set), a feature moved by one bin (1/64) changes the score through its
    own embedding, and moving it to a bin whose embedding is zero again does not."""
    graph = random_graph(num_configs=4)
    graph.config_feat[:] = 0.25                           # bin 16 of every column
    plain, embedded = make_model(), make_model(value_bins=32)
    tensors = GraphTensors.from_graph(graph)
    with torch.no_grad():
        assert torch.allclose(plain(tensors), embedded(tensors), atol=1e-6)
        table = embedded.config_values.weight.view(5, 32, 16)
        table[0, 17] = 1.0                                 # column 0, value 17/64
        moved = graph.select(np.arange(4))
        moved.config_feat[:, :, 0] = 17 / 64
        beyond = graph.select(np.arange(4))
        beyond.config_feat[:, :, 0] = 5.0                  # clipped into the last bin (zero)
        linear_only = plain(GraphTensors.from_graph(moved))
        assert not torch.allclose(embedded(GraphTensors.from_graph(moved)), linear_only, atol=1e-4)
        assert torch.allclose(embedded(GraphTensors.from_graph(beyond)),
                              plain(GraphTensors.from_graph(beyond)), atol=1e-6)
