"""Which tasks a checkpoint was trained on: looked up by structural hash in the training
database its card names."""

from __future__ import annotations

import json

import tvm_ffi

from tvm_tgraph.seen_tasks import seen_tasks, trained_task_hashes
from tvm_tgraph.workloads import WORKLOADS, as_ir_module


def _database(tmp_path, named_modules):
    index = {name: {"name": name, "family": name.split("/")[0], "shash": str(tvm_ffi.structural_hash(mod))}
             for name, mod in named_modules.items()}
    (tmp_path / "tasks.json").write_text(json.dumps(index))
    return tmp_path


def test_the_tasks_a_checkpoint_trained_on_are_found_by_hash(tmp_path):
    matmul, softmax, layer_norm = (as_ir_module(WORKLOADS[name]()) for name in ("matmul_128", "softmax", "layer_norm"))
    db = _database(tmp_path, {"op:matmul/a": matmul, "op:softmax/b": softmax})
    card = {"training_data": {"db": str(db), "train_tasks": ["op:matmul/a@rocketlake"]}}   # softmax: in the db, not trained on
    hashes = trained_task_hashes(card)
    assert hashes == {str(tvm_ffi.structural_hash(matmul))}
    tasks = [("mm", as_ir_module(WORKLOADS["matmul_128"]()), 1), ("sm", softmax, 1), ("ln", layer_norm, 1)]
    assert seen_tasks(tasks, hashes) == ["mm"]


def test_a_card_without_its_database_at_hand_says_unknown(tmp_path):
    assert trained_task_hashes({}) is None
    assert trained_task_hashes({"training_data": {"db": str(tmp_path / "gone.tar.xz"), "train_tasks": []}}) is None
    assert trained_task_hashes({"training_data": {"db": str(tmp_path), "train_tasks": []}}) is None  # no tasks.json
