"""training: the ranking trainer."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from conftest import random_graph, small_trainer
from scipy.stats import kendalltau

from tvm_tgraph.nn import TGraphConfig, TGraphNet, predict_scores
from tvm_tgraph.training import RankingTrainer, TrainConfig, cosine_factor


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


def test_cosine_schedule_warms_up_then_decays_to_zero_over_the_run():
    """lr_schedule="cosine": linear warm-up, peak lr, cosine decay to 0 at the last step."""
    assert cosine_factor(0, 1000, 100) == 0.01 and cosine_factor(99, 1000, 100) == 1.0
    assert abs(cosine_factor(550, 1000, 100) - 0.5) < 1e-9 and cosine_factor(1000, 1000, 100) == 0.0
    graph = random_graph(num_configs=16, seed=1)
    graph.runtime = np.arange(1.0, 17.0)
    model = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=8, num_blocks=1, heads=2))
    model.fit_normalization([graph])
    trainer = RankingTrainer(model, TrainConfig(lr=1e-3, lr_schedule="cosine", warmup_steps=10), total_steps=40)
    trainer.set_task("t", graph)
    rates = []
    for _ in range(40):
        trainer.step("t")
        rates.append(trainer.optimizer.param_groups[0]["lr"])
    assert abs(max(rates) - 1e-3) < 1e-12 and rates[-1] == 0.0 and rates[5] < rates[9]
    online = RankingTrainer(model, TrainConfig(lr=1e-3, lr_schedule="cosine"))   # open length: constant
    online.set_task("t", graph)
    online.train(3)
    assert online.optimizer.param_groups[0]["lr"] == 1e-3


def test_weight_average_is_the_exponential_moving_average_of_the_weights():
    """weight_average=d: after each step the average moves 1 - d of the way to the weights;
    without it, averaged_state is a copy of the current weights."""
    graph = random_graph(num_configs=16, seed=2)
    graph.runtime = np.arange(1.0, 17.0)
    model = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=8, num_blocks=1, heads=2, dropout=0.0))
    model.fit_normalization([graph])
    start = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = RankingTrainer(model, TrainConfig(lr=1e-2, weight_average=0.75), seed=0)
    trainer.set_task("t", graph)
    trainer.step("t")
    first = {k: v.clone() for k, v in model.state_dict().items()}
    trainer.step("t")
    average, now = trainer.averaged_state(), model.state_dict()
    moved = [k for k in start if start[k].is_floating_point() and not torch.equal(first[k], now[k])]
    assert moved
    for key in start:
        expected = (0.75 * (0.75 * start[key] + 0.25 * first[key]) + 0.25 * now[key]
                    if start[key].is_floating_point() else now[key])
        torch.testing.assert_close(average[key], expected)
    plain = RankingTrainer(model, TrainConfig(), seed=0)
    assert all(torch.equal(v, now[k]) for k, v in plain.averaged_state().items())
    with pytest.raises(ValueError, match="weight_average"):
        RankingTrainer(model, TrainConfig(weight_average=1.0))


def test_distillation_teaches_the_teachers_order():
    """distil_weight=1: the loss asks for the teacher's order only, so a teacher that reverses
    the measured order is learnt reversed; distil_weight=0 ignores the teacher."""
    graph = random_graph(num_configs=48, seed=3)
    graph.runtime = 1.0 + graph.config_feat[:, 0, 0] - graph.config_feat[:, 0, 0].min()

    def tau_after_training(distil_weight: float) -> float:
        torch.manual_seed(0)
        model = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=16, num_blocks=1, heads=2, dropout=0.0))
        model.fit_normalization([graph])
        trainer = RankingTrainer(model, TrainConfig(lr=3e-3, distil_weight=distil_weight), seed=0)
        trainer.set_task("t", graph, teacher_scores=graph.runtime.copy())    # higher = slower: reversed
        trainer.train(300)
        return kendalltau(predict_scores(model, graph), -graph.runtime)[0]

    assert tau_after_training(1.0) < -0.8 and tau_after_training(0.0) > 0.8
    trainer = RankingTrainer(TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=8, num_blocks=1, heads=2)))
    with pytest.raises(ValueError, match="3 teacher scores for 48 configurations"):
        trainer.set_task("t", graph, teacher_scores=np.zeros(3))
    with pytest.raises(ValueError, match="distil_weight"):
        RankingTrainer(trainer.model, TrainConfig(distil_weight=1.5))


def test_a_fork_continues_from_the_same_point_on_its_own_draw_of_the_tasks():
    """A fork starts from the trainer's weights, optimiser state and weight average and
    shares its data; training it leaves the trainer unchanged; forks seeded alike train
    alike, forks seeded differently do not."""
    trainer = small_trainer(graph_seed=4, weight_average=0.9)
    trainer.train(3)
    before = trainer.averaged_state()
    twin, same, other = trainer.fork([0, 1]), trainer.fork([0, 1]), trainer.fork([0, 2])
    assert twin.trainable_tasks() == ["t"] and twin._tensors["t"] is trainer._tensors["t"]
    assert all(torch.equal(v, before[k]) for k, v in twin.averaged_state().items())
    assert twin.optimizer.state_dict()["state"][0]["step"] == 3
    for fork in (twin, same, other):
        fork.train(4)
    assert all(torch.equal(v, before[k]) for k, v in trainer.averaged_state().items())
    assert all(torch.equal(v, same.averaged_state()[k]) for k, v in twin.averaged_state().items())
    assert any(not torch.equal(v, other.averaged_state()[k]) for k, v in twin.averaged_state().items())


def test_a_step_on_several_tasks_follows_the_mean_of_their_losses():
    """tasks_per_step=n: a step draws n tasks (the focus task at its share) and follows the
    mean of their losses, each on the configurations it draws in turn."""
    trainer = small_trainer(graph_seed=4, weight_average=0.0)
    reversed_order = random_graph(num_configs=32, seed=5)
    reversed_order.runtime = np.arange(32.0, 0.0, -1.0)
    trainer.set_task("u", reversed_order)
    twin = trainer.fork(7)
    trainer.rng = np.random.default_rng(7)
    loss = trainer.step("t", "u")
    twin.model.train()
    each = [twin._task_loss(key).item() for key in ("t", "u")]
    assert each[0] != pytest.approx(each[1]) and loss == pytest.approx(sum(each) / 2)
    trainer.config = dataclasses.replace(trainer.config, tasks_per_step=3)
    assert len(trainer.draw_tasks(["t", "u"])) == 3
    assert trainer.draw_tasks(["t", "u"], focus="u", focus_share=1.0) == ["u", "u", "u"]
    assert trainer.train(2) == 2
    with pytest.raises(ValueError, match="tasks_per_step"):
        RankingTrainer(trainer.model, TrainConfig(tasks_per_step=0))
