"""pretrain: offline training with a validation split by task."""

from __future__ import annotations

import torch

from tvm_tgraph.checkpoint import load_checkpoint
from tvm_tgraph.convert.tir import FEATURE_SCHEMA
from tvm_tgraph.measured_tasks import configured_graphs, load_measured_tasks
from tvm_tgraph.nn import TGraphConfig
from tvm_tgraph.pretrain import PretrainConfig, pretrain, split_by_task, train_checkpoint


def _train(collected_db, target, seed):
    graphs = configured_graphs(load_measured_tasks(collected_db, target, exclude_families="op:softmax"))
    train, val = split_by_task(list(graphs), 0.5, seed)
    assert not set(train) & set(val) and train and val
    config = PretrainConfig(steps=12, eval_every=4, seed=seed, network={"hidden": 16, "num_blocks": 1})
    return pretrain({n: graphs[n] for n in train}, {n: graphs[n] for n in val},
                    TGraphConfig.from_schema(FEATURE_SCHEMA, **config.network), config, progress=False)


def test_training_is_deterministic_given_the_seed(collected_db, target):
    (a, history), (b, _) = _train(collected_db, target, 3), _train(collected_db, target, 3)
    assert len(history["evaluations"]) == 3 and history["best_step"] in (4, 8, 12)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name


def test_without_validation_every_task_trains_for_every_step(collected_db, target, tmp_path):
    graphs = configured_graphs(load_measured_tasks(collected_db, target))
    config = PretrainConfig(steps=8, eval_every=4, val_fraction=0.0, network={"hidden": 16, "num_blocks": 1})
    card = train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, tmp_path / "all.safetensors")
    assert card["training_data"]["train_tasks"] == sorted(graphs) and card["training_data"]["val_tasks"] == []
    assert card["history"]["steps"] == 8 and card["history"]["best_step"] == 8
    assert [e["step"] for e in card["history"]["evaluations"]] == [4, 8]
    load_checkpoint(tmp_path / "all.safetensors", feature_schema=FEATURE_SCHEMA.version)
