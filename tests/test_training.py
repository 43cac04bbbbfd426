"""training: the ranking trainer."""

from __future__ import annotations

import numpy as np
import torch
from conftest import random_graph
from scipy.stats import kendalltau

from tvm_tgraph.nn import TGraphConfig, TGraphNet, predict_scores
from tvm_tgraph.training import RankingTrainer, TrainConfig


def test_ranking_trainer_learns_a_learnable_order():
    """Runtime grows with one configuration feature: a few hundred steps rank it."""
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
