"""pretrain: offline training with a validation split by task."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from conftest import small_trainer

from tvm_tgraph.checkpoint import load_checkpoint
from tvm_tgraph.convert.tir import FEATURE_SCHEMA
from tvm_tgraph.measured_tasks import configured_graphs, load_measured_tasks
from tvm_tgraph.metrics import standardise
from tvm_tgraph.nn import TGraphConfig, TGraphEnsemble, predict_scores
from tvm_tgraph.pretrain import (
    PretrainConfig, evaluate_graphs, pretrain, split_by_task, teacher_scores, train_checkpoint, train_forks,
)
from tvm_tgraph.training import TrainConfig


def _split(collected_db, target, seed):
    graphs = configured_graphs(load_measured_tasks(collected_db, target, exclude_families="op:softmax"))
    train, val = split_by_task(list(graphs), 0.5, seed)
    assert not set(train) & set(val) and train and val
    return {n: graphs[n] for n in train}, {n: graphs[n] for n in val}


def _train(collected_db, target, seed, train_config=TrainConfig()):
    config = PretrainConfig(steps=12, eval_every=4, seed=seed, network={"hidden": 16, "num_blocks": 1},
                            train=train_config)
    return pretrain(*_split(collected_db, target, seed), TGraphConfig.from_schema(FEATURE_SCHEMA, **config.network),
                    config, progress=False)


def test_training_is_deterministic_given_the_seed(collected_db, target):
    (a, history), (b, _) = _train(collected_db, target, 3), _train(collected_db, target, 3)
    assert len(history["evaluations"]) == 3 and history["best_step"] in (4, 8, 12)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name


def test_with_weight_average_the_average_is_validated_and_kept(collected_db, target):
    """The network returned scores the validation tasks as the history's best evaluation
    did, and differs from the same run's last raw weights."""
    model, history = _train(collected_db, target, 3, TrainConfig(weight_average=0.9))
    _, val = _split(collected_db, target, 3)
    assert evaluate_graphs(model, val)["mean"]["kendall_tau"] == pytest.approx(history["best_val_kendall_tau"])
    raw, _ = _train(collected_db, target, 3)
    assert any(not torch.equal(x, y) for x, y in zip(model.state_dict().values(), raw.state_dict().values()))


def test_without_validation_every_task_trains_for_every_step(collected_db, target, tmp_path):
    graphs = configured_graphs(load_measured_tasks(collected_db, target))
    config = PretrainConfig(steps=8, eval_every=4, val_fraction=0.0, network={"hidden": 16, "num_blocks": 1})
    card = train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, tmp_path / "all.safetensors")
    assert card["training_data"]["train_tasks"] == sorted(graphs) and card["training_data"]["val_tasks"] == []
    assert card["history"]["steps"] == 8 and card["history"]["best_step"] == 8
    assert [e["step"] for e in card["history"]["evaluations"]] == [4, 8]
    load_checkpoint(tmp_path / "all.safetensors", feature_schema=FEATURE_SCHEMA.version)


def test_several_seeds_train_one_network_each_saved_as_an_ensemble(collected_db, target, tmp_path):
    graphs = configured_graphs(load_measured_tasks(collected_db, target))
    config = PretrainConfig(steps=4, eval_every=4, val_fraction=0.0, network={"hidden": 16, "num_blocks": 1})
    card = train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, tmp_path / "e.safetensors", seeds=[0, 1])
    assert card["seeds"] == [0, 1] and card["members"] == 2 and [h["steps"] for h in card["history"]] == [4, 4]
    ensemble, _ = load_checkpoint(tmp_path / "e.safetensors", feature_schema=FEATURE_SCHEMA.version)
    assert isinstance(ensemble, TGraphEnsemble)
    single = train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, tmp_path / "s.safetensors")
    first, _ = load_checkpoint(tmp_path / "s.safetensors")
    for (name, x), y in zip(first.state_dict().items(), ensemble.members[0].state_dict().values()):
        assert torch.equal(x, y), name     # member 0 is the network seed 0 trains alone
    assert single["seed"] == 0
    with pytest.raises(ValueError, match="must differ"):
        train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, tmp_path / "d.safetensors", seeds=[1, 1])


def test_a_network_distils_a_seed_ensemble(collected_db, target, tmp_path):
    """The teacher's scores are the mean of its members' standardised scores; with
    ``distil_weight`` the network trained differs from the one trained on runtimes alone, and
    with ``distil_weight`` 0 a teacher changes nothing."""
    graphs = configured_graphs(load_measured_tasks(collected_db, target))
    config = PretrainConfig(steps=6, eval_every=6, val_fraction=0.0, network={"hidden": 16, "num_blocks": 1})
    train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, tmp_path / "e.safetensors", seeds=[1, 2])
    teacher, _ = load_checkpoint(tmp_path / "e.safetensors")
    for graph in graphs.values():
        members = [standardise(predict_scores(member, graph, 512)) for member in teacher.members]
        np.testing.assert_allclose(teacher_scores(teacher, graph), np.mean(members, axis=0), rtol=1e-5, atol=1e-6)

    def weights(name: str, train: TrainConfig, **teacher_arg) -> list[torch.Tensor]:
        train_checkpoint(graphs, list(graphs), replace(config, train=train), FEATURE_SCHEMA, tmp_path / name,
                         **teacher_arg)
        return list(load_checkpoint(tmp_path / name)[0].state_dict().values())

    alone = weights("alone.safetensors", TrainConfig())
    ignored = weights("ignored.safetensors", TrainConfig(), teacher=teacher)
    distilled = weights("distilled.safetensors", TrainConfig(distil_weight=0.5), teacher=teacher)
    assert all(torch.equal(x, y) for x, y in zip(alone, ignored))
    assert any(not torch.equal(x, y) for x, y in zip(alone, distilled))


def test_train_forks_keeps_the_mean_of_the_forks_weights():
    """Two forks of a trainer, each trained on from the same point with its own seed: the
    weights kept are the mean of the weights each fork keeps."""
    trainer = small_trainer(graph_seed=5, weight_average=0.5)
    trainer.train(2)
    forks = [trainer.fork([7, 1]), trainer.fork([7, 2])]
    for fork in forks:
        fork.train(3)
    expected = [fork.averaged_state() for fork in forks]
    soup = train_forks(trainer, 3, 2, seed=7)
    for key, value in soup.items():
        torch.testing.assert_close(value, (expected[0][key] + expected[1][key]) / 2)
    assert any(not torch.equal(expected[0][k], expected[1][k]) for k in soup)


def test_forks_train_the_second_half_and_need_no_validation_tasks(collected_db, target):
    train, val = _split(collected_db, target, 0)
    graphs = {**train, **val}
    config = PretrainConfig(steps=8, eval_every=4, val_fraction=0.0, network={"hidden": 16, "num_blocks": 1},
                            train=TrainConfig(weight_average=0.5), forks=2)
    model_config = TGraphConfig.from_schema(FEATURE_SCHEMA, **config.network)
    soup, history = pretrain(graphs, {}, model_config, config, progress=False)
    assert history["steps"] == 8 and history["best_step"] == 8 and [e["step"] for e in history["evaluations"]] == [4]
    plain, _ = pretrain(graphs, {}, model_config, replace(config, forks=1), progress=False)
    assert any(not torch.equal(x, y) for x, y in zip(soup.state_dict().values(), plain.state_dict().values()))
    with pytest.raises(ValueError, match="need no validation tasks"):
        pretrain(train, val, model_config, config, progress=False)
