"""TpuGraphs ``.npz`` files -> configured graphs.

TpuGraphs (Phothilimthana et al., arXiv 2308.13490) stores one XLA graph per file:

- layout: ``node_feat (n, 140) float32``, ``node_opcode (n,) uint8``, ``edge_index (m, 2)
  int64`` (row ``[u, v]``: ``u`` consumes ``v``'s output), ``node_config_ids (nc,) int64``,
  ``node_config_feat (c, nc, 18) float32``, ``config_runtime (c,) int64``, ``node_splits``;
- tile: the same graph arrays plus ``config_feat (c, 24)``, ``config_runtime (c,)`` and
  ``config_runtime_normalizers (c,)`` (runtime = runtime / normaliser).

Files whose constant columns were stripped (other widths) load the same way. A layout
configuration is one row of ``node_config_feat``; a tile configuration, which applies to the
whole kernel, becomes the configuration's global features.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from ..errors import TGraphError
from ..graph import ConfiguredGraph, FeatureSchema

#: Node kinds are XLA opcodes, stored as uint8.
NUM_OPCODES = 256

_GRAPH_ARRAYS = ("node_feat", "node_opcode", "edge_index")
_LAYOUT_ARRAYS = (*_GRAPH_ARRAYS, "node_config_ids", "node_config_feat", "config_runtime")
_TILE_ARRAYS = (*_GRAPH_ARRAYS, "config_feat", "config_runtime", "config_runtime_normalizers")


class TpuGraphsFormatError(TGraphError, ValueError):
    """A TpuGraphs file that is missing, unreadable or not in the dataset's schema."""


def _load_npz(path: Path):
    """``np.load`` without pickles, with errors that name the file."""
    if not path.is_file():
        raise FileNotFoundError(f"TpuGraphs file {path} does not exist")
    try:
        return np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        raise TpuGraphsFormatError(f"{path}: not a readable .npz file ({err})") from err


def _read(path: Path, required: tuple[str, ...]) -> dict[str, np.ndarray]:
    with _load_npz(path) as npz:
        missing = [key for key in required if key not in npz.files]
        if missing:
            raise TpuGraphsFormatError(f"{path}: missing arrays {missing} (has {sorted(npz.files)})")
        try:
            arrays = {key: npz[key] for key in required}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
            raise TpuGraphsFormatError(f"{path}: corrupt array data ({err})") from err
    for key, array in arrays.items():
        if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
            raise TpuGraphsFormatError(f"{path}: array {key} has NaN or infinite values")
    return arrays


def _check_configurations(path: Path, c: int, array: str) -> None:
    """A file must hold at least two configurations to rank."""
    _check(path, c >= 2, f"array {array} holds {c} configuration{'s' if c != 1 else ''}: "
                         "at least two are needed to rank")


def _check(path: Path, condition: bool, message: str) -> None:
    if not condition:
        raise TpuGraphsFormatError(f"{path}: {message}")


def _graph_arrays(path: Path, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checked (node_kind (n,), signed-log node features (n, F), edges (2, m) producer->consumer)."""
    feat, opcode, edges = arrays["node_feat"], arrays["node_opcode"], arrays["edge_index"]
    n = len(opcode)
    _check(path, feat.ndim == 2 and feat.shape[0] == n, f"node_feat {feat.shape} must be (n={n}, F)")
    _check(path, opcode.ndim == 1 and np.issubdtype(opcode.dtype, np.integer)
           and (n == 0 or (opcode.min() >= 0 and opcode.max() < NUM_OPCODES)),
           f"node_opcode must be (n,) integers in [0, {NUM_OPCODES})")
    _check(path, edges.ndim == 2 and edges.shape[1] == 2 and np.issubdtype(edges.dtype, np.integer),
           f"edge_index {edges.shape} must be (m, 2) integers")
    _check(path, edges.size == 0 or (edges.min() >= 0 and edges.max() < n), "edge_index refers to a node that does not exist")
    node_feat = (np.sign(feat) * np.log1p(np.abs(feat))).astype(np.float32)
    producer_to_consumer = np.ascontiguousarray(edges[:, ::-1].T).astype(np.int64)
    return opcode.astype(np.int64), node_feat, producer_to_consumer


def _runtime(path: Path, runtime: np.ndarray, c: int) -> np.ndarray:
    _check(path, runtime.shape == (c,), f"config_runtime {runtime.shape} must be (c={c},)")
    _check(path, bool((runtime > 0).all()), "config_runtime must be positive")
    return runtime.astype(np.float64)


def load_layout(path: str | Path) -> ConfiguredGraph:
    """A layout file as a configured graph, every configuration kept (no pruning)."""
    path = Path(path)
    arrays = _read(path, _LAYOUT_ARRAYS)
    kind, node_feat, edges = _graph_arrays(path, arrays)
    ids, feat = arrays["node_config_ids"], arrays["node_config_feat"]
    _check(path, ids.ndim == 1 and (ids.size == 0 or (ids.min() >= 0 and ids.max() < len(kind))),
           "node_config_ids must be (nc,) ids of existing nodes")
    _check(path, feat.ndim == 3 and feat.shape[1] == len(ids),
           f"node_config_feat {feat.shape} must be (c, nc={len(ids)}, F)")
    _check_configurations(path, feat.shape[0], "node_config_feat")
    runtime = _runtime(path, arrays["config_runtime"], feat.shape[0])
    return ConfiguredGraph(kind, node_feat, edges, ids.astype(np.int64), feat.astype(np.float32),
                           np.zeros((feat.shape[0], 0), np.float32), runtime, name=path.stem)


def load_tile(path: str | Path) -> ConfiguredGraph:
    """A tile file as a configured graph: each configuration's features are global ones."""
    path = Path(path)
    arrays = _read(path, _TILE_ARRAYS)
    kind, node_feat, edges = _graph_arrays(path, arrays)
    feat = arrays["config_feat"]
    _check(path, feat.ndim == 2, f"config_feat {feat.shape} must be (c, F)")
    c = feat.shape[0]
    _check_configurations(path, c, "config_feat")
    normalizers = arrays["config_runtime_normalizers"]
    _check(path, normalizers.shape == (c,) and bool((normalizers > 0).all()),
           f"config_runtime_normalizers {normalizers.shape} must be (c={c},) and positive")
    runtime = _runtime(path, arrays["config_runtime"], c) / normalizers.astype(np.float64)
    return ConfiguredGraph(kind, node_feat, edges, np.zeros(0, np.int64), np.zeros((c, 0, 1), np.float32),
                           feat.astype(np.float32), runtime, name=path.stem)


def prune_to_configurable(graph: ConfiguredGraph) -> ConfiguredGraph:
    """Keep the configurable nodes and their 1-hop neighbours (both directions), and the
    edges among kept nodes. A graph without configurable nodes (tile) is returned as is."""
    if len(graph.config_node_ids) == 0:
        return graph
    src, dst = graph.edge_index
    keep = np.zeros(len(graph.node_kind), dtype=bool)
    keep[graph.config_node_ids] = True
    touches = keep[src] | keep[dst]
    keep[src[touches]] = True
    keep[dst[touches]] = True
    new_id = np.full(len(keep), -1, dtype=np.int64)
    new_id[keep] = np.arange(int(keep.sum()))
    inside = keep[src] & keep[dst]
    return ConfiguredGraph(
        graph.node_kind[keep], graph.node_feat[keep], new_id[graph.edge_index[:, inside]],
        new_id[graph.config_node_ids], graph.config_feat, graph.global_feat, graph.runtime, graph.name,
    )


def deduplicate_configs(graph: ConfiguredGraph) -> ConfiguredGraph:
    """One configuration per distinct feature row; its runtime is the mean over repeats."""
    c = graph.num_configs
    rows = np.concatenate([graph.config_feat.reshape(c, -1), graph.global_feat], axis=1)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first)                      # keep the file's order of first occurrences
    unique = graph.select(first[order])
    if graph.runtime is not None:
        sums = np.bincount(inverse, weights=graph.runtime)
        counts = np.bincount(inverse)
        unique.runtime = (sums / counts)[order]
    return unique


def load_tpugraphs(path: str | Path, prune: bool = True, dedup: bool = True) -> ConfiguredGraph:
    """Load a layout or tile file (told apart by its arrays), pruned and de-duplicated."""
    path = Path(path)
    with _load_npz(path) as npz:
        is_tile = "config_feat" in npz.files
    graph = load_tile(path) if is_tile else load_layout(path)
    if prune:
        graph = prune_to_configurable(graph)
    return deduplicate_configs(graph) if dedup else graph


def feature_schema(graph: ConfiguredGraph) -> FeatureSchema:
    """The schema of graphs like ``graph`` (TpuGraphs files differ in width: stripped
    columns, layout or tile), its version naming the widths."""
    kind = "tile" if len(graph.config_node_ids) == 0 else "layout"
    widths = graph.node_feat.shape[1], graph.config_feat.shape[2], graph.global_feat.shape[1]
    version = f"tpugraphs-{kind}-node{widths[0]}-config{widths[1]}-global{widths[2]}"
    return FeatureSchema(version, NUM_OPCODES, *widths)
