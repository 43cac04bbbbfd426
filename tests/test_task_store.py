"""task_store: the measured configurations a cost model keeps per task."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_graph

from tvm_tgraph.errors import CheckpointError
from tvm_tgraph.graph import ConfiguredGraph
from tvm_tgraph.task_store import TaskStore


def test_task_store_keeps_each_configuration_once_and_round_trips(tmp_path):
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
