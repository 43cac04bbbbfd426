"""Checkpoints: safetensors + model card, atomic, and clear errors for bad files."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import random_graph

from tvm_tgraph.checkpoint import card_path, load_checkpoint, save_checkpoint
from tvm_tgraph.errors import CheckpointError
from tvm_tgraph.nn import TGraphConfig, TGraphNet, predict_scores


@pytest.fixture
def model():
    torch.manual_seed(0)
    return TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=16, num_blocks=2, heads=2)).eval()


def test_round_trip_gives_identical_scores(tmp_path, model):
    path = tmp_path / "m.safetensors"
    card = save_checkpoint(path, model, "schema-x", training_data="unit test", seed=3)
    loaded, loaded_card = load_checkpoint(path, feature_schema="schema-x")
    graph = random_graph()
    np.testing.assert_array_equal(predict_scores(model, graph), predict_scores(loaded, graph))
    assert loaded_card == card and loaded_card["seed"] == 3
    assert json.loads(card_path(path).read_text())["model_config"]["hidden"] == 16


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nothing.safetensors")


def test_corrupted_weights_are_detected(tmp_path, model):
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x")
    data = bytearray(path.read_bytes())
    data[100:140] = b"\x00" * 40
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="do not match their model card"):
        load_checkpoint(path)


def test_garbage_with_a_matching_card_is_refused(tmp_path, model):
    import hashlib

    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x")
    path.write_bytes(b"not a safetensors file")
    card = json.loads(card_path(path).read_text())
    card["weights_sha256"] = hashlib.sha256(b"not a safetensors file").hexdigest()
    card_path(path).write_text(json.dumps(card))
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        load_checkpoint(path)


def test_other_feature_schema_is_refused(tmp_path, model):
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-old")
    with pytest.raises(CheckpointError, match="feature schema 'schema-old'"):
        load_checkpoint(path, feature_schema="schema-new")


def test_card_that_is_not_json(tmp_path, model):
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x")
    card_path(path).write_text("{broken")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(path)
