"""The configured graph: the one input format of the network, whatever the source.

A configured graph is a graph shared by a set of configurations (nodes with an integer
kind and a float feature vector, directed edges) plus, per configuration, a feature vector
for each configurable node and optionally a global feature vector. It is TpuGraphs'
layout format, and the converters of :mod:`tvm_tgraph.convert` all produce it, each
describing its widths with a :class:`FeatureSchema`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FeatureSchema:
    """What a converter's configured graphs look like: the network is sized from it
    (``TGraphConfig.from_schema``) and checkpoints record its version.

    Attributes
    ----------
    version : str
        Changes whenever the meaning of a feature changes.
    num_node_kinds : int
        Size of the node-kind vocabulary.
    node_features, config_features, global_features : int
        Widths ``F_node``, ``F_cfg`` and ``G`` of :class:`ConfiguredGraph`'s arrays.
    """

    version: str
    num_node_kinds: int
    node_features: int
    config_features: int
    global_features: int


@dataclass
class ConfiguredGraph:
    """A graph with ``c`` configurations (numpy arrays, no torch).

    Shapes
    ------
    - ``node_kind``: ``(n,)`` int64, indices into the source's kind vocabulary
    - ``node_feat``: ``(n, F_node)`` float32
    - ``edge_index``: ``(2, m)`` int64, row 0 source, row 1 target
    - ``config_node_ids``: ``(nc,)`` int64, the configurable nodes
    - ``config_feat``: ``(c, nc, F_cfg)`` float32
    - ``global_feat``: ``(c, G)`` float32, ``G`` may be 0
    - ``runtime``: ``(c,)`` float64 measured latency (lower is faster), or ``None``
    """

    node_kind: np.ndarray
    node_feat: np.ndarray
    edge_index: np.ndarray
    config_node_ids: np.ndarray
    config_feat: np.ndarray
    global_feat: np.ndarray
    runtime: np.ndarray | None = None
    name: str = ""

    def __post_init__(self) -> None:
        n = len(self.node_kind)
        c = self.config_feat.shape[0]
        checks = [
            (self.node_feat.ndim == 2 and self.node_feat.shape[0] == n, "node_feat must be (n, F_node)"),
            (self.edge_index.ndim == 2 and self.edge_index.shape[0] == 2, "edge_index must be (2, m)"),
            (self.edge_index.size == 0 or (0 <= self.edge_index.min() and self.edge_index.max() < n),
             "edge_index refers to a node that does not exist"),
            (self.config_feat.ndim == 3 and self.config_feat.shape[1] == len(self.config_node_ids),
             "config_feat must be (c, nc, F_cfg) with nc = len(config_node_ids)"),
            (self.global_feat.ndim == 2 and self.global_feat.shape[0] == c, "global_feat must be (c, G)"),
            (self.runtime is None or self.runtime.shape == (c,), "runtime must be (c,)"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"malformed configured graph {self.name!r}: {message}")

    @property
    def num_configs(self) -> int:
        return self.config_feat.shape[0]

    def select(self, index: np.ndarray) -> "ConfiguredGraph":
        """Return the same graph with only the configurations ``index`` (any int array)."""
        return ConfiguredGraph(
            node_kind=self.node_kind, node_feat=self.node_feat, edge_index=self.edge_index,
            config_node_ids=self.config_node_ids,
            config_feat=self.config_feat[index], global_feat=self.global_feat[index],
            runtime=None if self.runtime is None else self.runtime[index],
            name=self.name,
        )
