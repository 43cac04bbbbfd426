"""graph: the configured graph checks its arrays."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_graph

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
