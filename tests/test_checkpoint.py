"""Checkpoints: safetensors + model card, atomic, and clear errors for bad files."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from conftest import random_graph

import tvm_tgraph.checkpoint as checkpoint
from tvm_tgraph.checkpoint import card_path, load_checkpoint, save_checkpoint
from tvm_tgraph.errors import CheckpointError
from tvm_tgraph.nn import TGraphConfig, TGraphEnsemble, TGraphNet, predict_scores


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


def test_a_seed_ensemble_round_trips_as_an_ensemble(tmp_path, model):
    torch.manual_seed(1)
    ensemble = TGraphEnsemble(model.config, networks=[model, TGraphNet(model.config).eval()])
    path = tmp_path / "ensemble.safetensors"
    card = save_checkpoint(path, ensemble, "schema-x", seeds=[0, 1])
    loaded, loaded_card = load_checkpoint(path, feature_schema="schema-x")
    assert isinstance(loaded, TGraphEnsemble) and len(loaded.members) == 2
    assert loaded_card == card and card["members"] == 2
    graph = random_graph()
    np.testing.assert_array_equal(predict_scores(ensemble, graph), predict_scores(loaded, graph))
    assert "members" not in save_checkpoint(tmp_path / "one.safetensors", model, "schema-x")


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nothing.safetensors")


def test_corrupted_weights_are_detected(tmp_path, model):
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x")
    data = bytearray(path.read_bytes())
    data[-40:] = b"\x00" * 40
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="do not match their model card"):
        load_checkpoint(path)


@pytest.mark.parametrize("content", [b"not a safetensors file", b"", b"\xff" * 64])
def test_garbage_is_refused(tmp_path, content):
    path = tmp_path / "m.safetensors"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="not a readable safetensors checkpoint"):
        load_checkpoint(path)


def test_truncated_file_is_refused(tmp_path, model):
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x")
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(path)


def test_other_feature_schema_is_refused(tmp_path, model):
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-old")
    with pytest.raises(CheckpointError, match="feature schema 'schema-old'"):
        load_checkpoint(path, feature_schema="schema-new")


def test_the_card_travels_inside_the_weights_file(tmp_path, model):
    """The readable .json copy is not needed to load, nor trusted."""
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x", seed=7)
    card_path(path).write_text("{broken")
    assert load_checkpoint(path)[1]["seed"] == 7
    card_path(path).unlink()
    assert load_checkpoint(path)[1]["seed"] == 7


@pytest.mark.parametrize("killed_at_replace", [1, 2])
def test_a_kill_during_save_leaves_a_loadable_checkpoint(tmp_path, model, monkeypatch, killed_at_replace):
    """Kill the save at its first or second file replacement: the old checkpoint or the
    new one loads, whole (each with its own card)."""
    path = tmp_path / "m.safetensors"
    save_checkpoint(path, model, "schema-x", seed=1)
    newer = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=8, num_blocks=1, heads=2))
    calls, real_replace = {"n": 0}, os.replace

    def replace_then_die(src, dst):
        calls["n"] += 1
        if calls["n"] == killed_at_replace:
            raise KeyboardInterrupt("killed")
        real_replace(src, dst)

    monkeypatch.setattr(checkpoint.os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(path, newer, "schema-x", seed=2)
    monkeypatch.undo()
    loaded, card = load_checkpoint(path)
    expected = {1: (1, 16), 2: (2, 8)}[killed_at_replace]
    assert (card["seed"], loaded.config.hidden) == expected
