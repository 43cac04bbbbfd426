"""Measured configurations, grouped by task, de-duplicated, saved as plain arrays.

Used online by the cost model (what has been measured so far) and offline for training
sets. Saved as ``.npz`` (numbers only, loaded with ``allow_pickle=False``) plus the task
keys in JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .errors import CheckpointError
from .graph import ConfiguredGraph

_GRAPH_FIELDS = ("node_kind", "node_feat", "edge_index", "config_node_ids")
_CONFIG_FIELDS = ("config_feat", "global_feat", "runtime")


def graph_arrays(graphs: list[ConfiguredGraph]) -> dict[str, np.ndarray]:
    """The arrays of measured ``graphs`` under numbered names (``t<i>_<field>``), for one ``.npz``."""
    return {f"t{i}_{field}": getattr(graph, field) for i, graph in enumerate(graphs)
            for field in _GRAPH_FIELDS + _CONFIG_FIELDS}


def graph_from_arrays(arrays, number: int, name: str = "") -> ConfiguredGraph:
    """Graph ``number`` of arrays written by :func:`graph_arrays` (an opened ``.npz``)."""
    return ConfiguredGraph(**{field: arrays[f"t{number}_{field}"] for field in _GRAPH_FIELDS + _CONFIG_FIELDS},
                           name=name)


class TaskStore:
    """Per task: one static graph and the measured configurations added so far."""

    def __init__(self) -> None:
        self._graphs: dict[str, ConfiguredGraph] = {}
        self._seen: dict[str, set[bytes]] = {}

    def __len__(self) -> int:
        return len(self._graphs)

    def keys(self) -> list[str]:
        return list(self._graphs)

    def num_samples(self, key: str) -> int:
        graph = self._graphs.get(key)
        return 0 if graph is None else graph.num_configs

    def graph(self, key: str) -> ConfiguredGraph:
        return self._graphs[key]

    def add(self, key: str, graph: ConfiguredGraph) -> int:
        """Append the measured configurations of ``graph`` (runtimes required) to task ``key``.

        A configuration whose features were seen before for this task is skipped.

        Returns
        -------
        int
            Configurations added.
        """
        if graph.runtime is None:
            raise ValueError("only measured configurations (with runtime) can be stored")
        seen = self._seen.setdefault(key, set())
        keep = []
        for i in range(graph.num_configs):
            fingerprint = graph.config_feat[i].tobytes() + graph.global_feat[i].tobytes()
            if fingerprint not in seen:
                seen.add(fingerprint)
                keep.append(i)
        if not keep:
            return 0
        new = graph.select(np.asarray(keep))
        old = self._graphs.get(key)
        if old is not None:
            new = ConfiguredGraph(
                node_kind=old.node_kind, node_feat=old.node_feat, edge_index=old.edge_index,
                config_node_ids=old.config_node_ids,
                config_feat=np.concatenate([old.config_feat, new.config_feat]),
                global_feat=np.concatenate([old.global_feat, new.global_feat]),
                runtime=np.concatenate([old.runtime, new.runtime]), name=old.name,
            )
        self._graphs[key] = new
        return len(keep)

    def save(self, path: str | Path) -> None:
        """Write the store to ``path`` (``.npz``) and ``path`` with ``.json`` (task keys)."""
        path = Path(path)
        np.savez_compressed(path, **graph_arrays(list(self._graphs.values())))
        index = [{"key": key, "name": graph.name} for key, graph in self._graphs.items()]
        path.with_suffix(".json").write_text(json.dumps(index))

    @classmethod
    def load(cls, path: str | Path) -> "TaskStore":
        """Read a store written by :meth:`save`; raises ``CheckpointError`` if malformed."""
        path = Path(path)
        store = cls()
        try:
            index = json.loads(path.with_suffix(".json").read_text())
            with np.load(path, allow_pickle=False) as arrays:
                for i, entry in enumerate(index):
                    store.add(entry["key"], graph_from_arrays(arrays, i, entry["name"]))
        except (OSError, KeyError, ValueError, TypeError, json.JSONDecodeError) as err:
            raise CheckpointError(f"measured-data file {path} cannot be loaded: {err}") from None
        return store
