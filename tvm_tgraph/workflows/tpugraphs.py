"""Training and evaluating TGraph on TpuGraphs, following the paper's protocol.

A TpuGraphs collection directory holds ``train/``, ``valid/`` and ``test/`` folders of
``.npz`` files (e.g. ``npz/layout/xla/random``); test runtimes are not public, so models
are trained on ``train`` (validation split by graph inside it, for early stopping) and
evaluated on ``valid``: mean Kendall tau over graphs for layout collections, top-K slowdown
for tile collections (the best runtime among the model's top K over the best runtime, minus
one; 0 is perfect). Every graph is pruned to its configurable nodes and their neighbours,
and its duplicate configurations are merged (:mod:`tvm_tgraph.convert.tpugraphs`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..checkpoint import load_checkpoint
from ..convert.tpugraphs import TpuGraphsFormatError, feature_schema, load_tpugraphs
from ..graph import ConfiguredGraph
from ..metrics import kendall_tau, mean_metrics, top_k_score
from ..nn import TGraphConfig, predict_scores
from ..pretrain import PretrainConfig, pretrain, split_configurations, train_checkpoint

#: K of the tile collections' top-K slowdown.
TILE_TOP_K = 5


def load_collection(directory: str | Path, split: str | None = None) -> dict[str, ConfiguredGraph]:
    """Every ``.npz`` of ``directory/split`` (or of ``directory`` itself), by file name.

    Raises
    ------
    FileNotFoundError
        If the folder does not exist or holds no ``.npz`` file.
    TpuGraphsFormatError
        If the files do not all have the same feature widths.
    """
    folder = Path(directory) / split if split else Path(directory)
    files = sorted(folder.glob("*.npz")) if folder.is_dir() else []
    if not files:
        raise FileNotFoundError(f"no TpuGraphs .npz files in {folder}")
    graphs = {path.stem: load_tpugraphs(path) for path in tqdm(files, desc=f"load {folder.name}", unit="file")}
    schemas = {feature_schema(g).version for g in graphs.values()}
    if len(schemas) > 1:
        raise TpuGraphsFormatError(f"{folder}: files of different feature widths: {sorted(schemas)}")
    return graphs


def is_tile(graph: ConfiguredGraph) -> bool:
    return len(graph.config_node_ids) == 0


def graph_metrics(scores: np.ndarray, graph: ConfiguredGraph) -> dict[str, float]:
    """Kendall tau (layout and tile) and top-K slowdown (tile) of one graph's scores."""
    metrics = {"kendall_tau": kendall_tau(scores, graph.runtime)}
    if is_tile(graph):
        metrics[f"top{TILE_TOP_K}_slowdown"] = 1.0 / top_k_score(scores, graph.runtime, TILE_TOP_K) - 1.0
    return metrics


def evaluate_collection(model, graphs: dict[str, ConfiguredGraph], chunk_size: int = 128) -> dict:
    """``{"per_graph": {name: metrics}, "mean": metrics}``; configurations are scored
    ``chunk_size`` at a time, so memory does not grow with their number."""
    per_graph = {name: graph_metrics(predict_scores(model, g, chunk_size), g)
                 for name, g in tqdm(graphs.items(), desc="evaluate", unit="graph")}
    return {"per_graph": per_graph, "mean": mean_metrics(per_graph)}


def evaluate_collection_checkpoint(directory: str | Path, split: str, checkpoint: str | Path,
                                   chunk_size: int = 128) -> dict:
    """Rank every graph of ``directory/split`` with a checkpoint of ``tgraph tpugraphs train``
    (refused if it was trained on graphs of other widths); see :func:`evaluate_collection`."""
    graphs = load_collection(directory, split)
    model, _ = load_checkpoint(checkpoint, feature_schema(next(iter(graphs.values()))).version)
    return evaluate_collection(model, graphs, chunk_size)


def train_collection(directory: str | Path, out: str | Path, config: PretrainConfig, command: str = "") -> dict:
    """Train on ``directory/train`` and write the checkpoint and its card to ``out``."""
    graphs = load_collection(directory, "train")
    first = next(iter(graphs.values()))
    return train_checkpoint(graphs, list(graphs), config, feature_schema(first), out,
                            data={"tpugraphs": str(directory), "split": "train"}, command=command)


def linear_baseline_scores(train: ConfiguredGraph, test: ConfiguredGraph, ridge: float = 1.0) -> np.ndarray:
    """Scores (higher = faster) of a ridge regression from the raw configuration features
    to log runtime, fitted on ``train``'s configurations: the baseline of the 80/20 split."""
    def design(graph):
        rows = np.concatenate([graph.config_feat.reshape(graph.num_configs, -1), graph.global_feat], axis=1)
        return np.concatenate([rows, np.ones((len(rows), 1))], axis=1).astype(np.float64)

    x, y = design(train), np.log(train.runtime)
    weights = np.linalg.solve(x.T @ x + ridge * np.eye(x.shape[1]), x.T @ y)
    return -(design(test) @ weights)


def configuration_split_eval(path: str | Path, config: PretrainConfig, train_fraction: float = 0.8,
                             val_fraction: float = 0.1) -> dict:
    """Train TGraph on ``train_fraction`` of one file's configurations (``val_fraction`` of
    those kept aside for early stopping), rank the rest; the linear baseline fits the same
    training configurations. Returns both models' metrics on the held-out configurations."""
    graph = load_tpugraphs(path)
    train, test = (graph.select(i) for i in split_configurations(graph.num_configs, 1.0 - train_fraction, config.seed))
    fit, val = (train.select(i) for i in split_configurations(train.num_configs, val_fraction, config.seed + 1))
    model, history = pretrain({graph.name: fit}, {f"{graph.name}/val": val},
                              TGraphConfig.from_schema(feature_schema(graph), **config.network), config)
    return {
        "file": str(path), "configs": graph.num_configs, "train_configs": train.num_configs,
        "test_configs": test.num_configs, "nodes_after_pruning": len(graph.node_kind),
        "tgraph": graph_metrics(predict_scores(model, test), test),
        "linear": graph_metrics(linear_baseline_scores(train, test), test),
        "history": history,
    }
