"""Modules with no test of their own before: the configured graph, the task store, the
ranking trainer, the XGBoost fallback state, the timing wrapper and the layout search."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import random_graph, sample_candidates

from tvm_tgraph.graph import ConfiguredGraph


def test_configured_graph_refuses_inconsistent_arrays_with_its_name():
    good = random_graph()
    with pytest.raises(ValueError, match="malformed configured graph 'x': edge_index refers"):
        ConfiguredGraph(good.node_kind, good.node_feat, good.edge_index + 100, good.config_node_ids,
                        good.config_feat, good.global_feat, name="x")
    with pytest.raises(ValueError, match="config_feat must be"):
        ConfiguredGraph(good.node_kind, good.node_feat, good.edge_index, good.config_node_ids[:2],
                        good.config_feat, good.global_feat)
    picked = good.select(np.array([4, 1]))
    np.testing.assert_array_equal(picked.config_feat, good.config_feat[[4, 1]])
    np.testing.assert_array_equal(picked.runtime, good.runtime[[4, 1]])


def test_task_store_keeps_each_configuration_once_and_round_trips(tmp_path):
    from tvm_tgraph.errors import CheckpointError
    from tvm_tgraph.task_store import TaskStore

    store = TaskStore()
    graph = random_graph(num_configs=6)
    assert store.add("a", graph.select(np.arange(4))) == 4
    assert store.add("a", graph) == 2 and store.num_samples("a") == 6     # 4 seen, 2 new
    assert store.add("b", random_graph(seed=1)) == 6
    with pytest.raises(ValueError, match="only measured"):
        store.add("c", ConfiguredGraph(graph.node_kind, graph.node_feat, graph.edge_index, graph.config_node_ids,
                                       graph.config_feat, graph.global_feat))
    store.save(tmp_path / "m.npz")
    loaded = TaskStore.load(tmp_path / "m.npz")
    assert loaded.keys() == ["a", "b"]
    np.testing.assert_array_equal(loaded.graph("a").runtime, store.graph("a").runtime)
    (tmp_path / "m.json").write_text("[{}]")
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        TaskStore.load(tmp_path / "m.npz")


def test_ranking_trainer_learns_a_learnable_order():
    """Runtime grows with one configuration feature: a few hundred steps rank it."""
    from scipy.stats import kendalltau

    from tvm_tgraph.nn import TGraphConfig, TGraphNet, predict_scores
    from tvm_tgraph.training import RankingTrainer, TrainConfig

    graph = random_graph(num_configs=48, seed=3)
    graph.runtime = 1.0 + graph.config_feat[:, 0, 0] - graph.config_feat[:, 0, 0].min()
    torch.manual_seed(0)
    model = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=16, num_blocks=1, heads=2, dropout=0.0))
    model.fit_normalization([graph])
    trainer = RankingTrainer(model, TrainConfig(lr=3e-3), seed=0)
    trainer.set_task("t", graph)
    before = kendalltau(predict_scores(model, graph), -graph.runtime)[0]
    assert trainer.train(300) == 300
    after = kendalltau(predict_scores(model, graph), -graph.runtime)[0]
    assert after > 0.8 and after > before
    constant = random_graph(num_configs=4)
    constant.runtime = np.ones(4)
    trainer.set_task("flat", constant)
    assert trainer.trainable_tasks() == ["t"]   # nothing to rank in equal runtimes


def _measured_runner_results(n):
    from tvm.s_tir.meta_schedule.runner import RunnerResult

    rng = np.random.default_rng(0)
    return [RunnerResult([float(x)], None) for x in rng.uniform(1e-4, 1e-3, n)]


def test_xgb_state_round_trip_predicts_the_same(tmp_path):
    from tvm.s_tir.meta_schedule.cost_model import XGBModel

    from cost_models.xgb_state import load_xgb_state, save_xgb_state
    from tvm_tgraph.errors import CheckpointError

    context, candidates = sample_candidates("matmul_128", count=24)
    model = XGBModel(num_warmup_samples=0, adaptive_training=False)
    model.update(context, candidates[:16], _measured_runner_results(16))
    save_xgb_state(model, tmp_path)
    restored = XGBModel(num_warmup_samples=0, adaptive_training=False)
    load_xgb_state(restored, tmp_path)
    np.testing.assert_allclose(restored.predict(context, candidates[16:]), model.predict(context, candidates[16:]))
    (tmp_path / "fallback.json").write_text("{")
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        load_xgb_state(XGBModel(), tmp_path)


def test_timed_cost_model_passes_through_and_counts_time():
    from tvm.s_tir.meta_schedule.cost_model import RandomModel

    from cost_models.timed import TimedCostModel

    context, candidates = sample_candidates("matmul_128", count=24)
    timed = TimedCostModel(RandomModel(seed=1))
    scores = timed.predict(context, candidates)
    assert np.asarray(scores).shape == (24,)
    np.testing.assert_array_equal(scores, RandomModel(seed=1).predict(context, candidates))
    timed.update(context, candidates[:4], _measured_runner_results(4))
    assert set(timed.seconds) == {"predict", "update"} and timed.total_seconds > 0


def test_layout_search_measures_only_the_top_k_of_the_pool():
    """With a stand-in measurement (a function of the configuration), the search measures
    exactly top_k configurations, all of them from the pool, and returns the fastest."""
    from search.layout import layout_search
    from tvm_tgraph.convert.relax_layout import FEATURE_SCHEMA, LayoutSpace
    from tvm_tgraph.model_zoo import MODELS, to_relax
    from tvm_tgraph.nn import TGraphConfig, TGraphNet

    space = LayoutSpace(to_relax(*MODELS["resnet"](width=4, image=8)))
    torch.manual_seed(0)
    model = TGraphNet(TGraphConfig.from_schema(FEATURE_SCHEMA, hidden=8, num_blocks=1, heads=2))
    measured = []

    def measure(config):
        measured.append("".join(map(str, config)))
        return 1.0 + config.sum()

    result = layout_search(space, model, measure, pool_size=16, top_k=3, progress=False)
    assert len(measured) == 3 == len(result.measured) and result.pool_size <= 16
    assert result.best_latency_s == min(latency for _, latency in result.measured)
    assert result.best_latency_s == 1.0 + result.best_config.sum()
