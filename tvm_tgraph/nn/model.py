"""The TGraph network: configured graph -> one score per configuration (higher = faster)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from ..graph import ConfiguredGraph
from .block import TGraphBlock


@dataclass(frozen=True)
class TGraphConfig:
    """Hyper-parameters of :class:`TGraphNet`; stored in every checkpoint's model card.

    Parameters
    ----------
    num_node_kinds, node_features, config_features, global_features : int
        Sizes fixed by the converter's feature schema.
    hidden : int
        Channels ``H`` of every block (default 64).
    num_blocks : int
        Number of :class:`TGraphBlock` (default 3).
    heads : int
        Heads of the configuration cross-attention (default 4).
    kind_embedding : int
        Width of the node-kind embedding (default 16).
    dropout : float
        Dropout in blocks and head (default 0.1).
    graph_conv : {"sage", "linear"}
        Node update inside blocks (default ``"sage"``).
    cross_attention : {"multihead", "softmax", "none"}
        How configurations attend to each other in every block (default ``"multihead"``;
        see :class:`~.block.TGraphBlock`). Cards written before the choice existed say
        ``True`` (= ``"multihead"``) or ``False`` (= ``"none"``), and still load.
    value_bins : int
        0 (default): configuration features enter through a linear layer only. Above 0,
        each feature is also read as a category: its value quantised to steps of
        ``1 / VALUE_BIN_STEPS`` (clipped to ``value_bins`` bins, 0 and below in the first)
        selects a learned embedding per feature column, and the embeddings are added to the
        linear projection. TIR tile factors (``log2(factor) / 8``) one step apart in the
        log differ by 8 bins, so a factor of 16 and one of 12 get embeddings of their own.
    """

    num_node_kinds: int
    node_features: int
    config_features: int
    global_features: int
    hidden: int = 64
    num_blocks: int = 3
    heads: int = 4
    kind_embedding: int = 16
    dropout: float = 0.1
    graph_conv: str = "sage"
    cross_attention: str = "multihead"
    value_bins: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.cross_attention, bool):
            object.__setattr__(self, "cross_attention", "multihead" if self.cross_attention else "none")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_schema(cls, schema, **overrides) -> "TGraphConfig":
        """A config sized for a converter's :class:`~tvm_tgraph.graph.FeatureSchema`;
        ``overrides`` set the hyper-parameters (``hidden``, ``cross_attention``, ...)."""
        return cls(schema.num_node_kinds, schema.node_features, schema.config_features,
                   schema.global_features, **overrides)


#: Bins per unit of a configuration feature's value in the value embedding (see
#: :class:`TGraphConfig`'s ``value_bins``).
VALUE_BIN_STEPS = 64


class ConfigValueEmbedding(nn.Module):
    """One learned embedding per (configuration feature column, quantised value), summed over
    the columns. Embeddings start at zero (drawing no random numbers, so the rest of the
    network is initialised as without them), and a value no training candidate had keeps
    adding nothing.

    Parameters
    ----------
    features : int
        Configuration feature columns ``F_cfg``.
    bins : int
        Bins per column; values are quantised to ``round(value * VALUE_BIN_STEPS)`` and
        clipped to ``[0, bins - 1]``.
    channels : int
        Output channels ``H``.

    Shapes
    ------
    - config_feat: ``(C, nc, F_cfg)``
    - output: ``(C, nc, H)``
    """

    def __init__(self, features: int, bins: int, channels: int) -> None:
        super().__init__()
        self.bins = bins
        self.weight = nn.Parameter(torch.zeros(features * bins, channels))    # (F_cfg * bins, H)
        self.register_buffer("offsets", torch.arange(features) * bins, persistent=False)

    def reset_parameters(self) -> None:
        """Zero every embedding: a value never seen in training adds nothing to the linear
        projection."""
        nn.init.zeros_(self.weight)

    def forward(self, config_feat: Tensor) -> Tensor:
        bins = torch.round(config_feat * VALUE_BIN_STEPS).long().clamp_(0, self.bins - 1)
        flat = (bins + self.offsets).reshape(-1, config_feat.shape[-1])          # (C * nc, F_cfg)
        return F.embedding_bag(flat, self.weight, mode="sum").reshape(*config_feat.shape[:-1], -1)


class GraphTensors(NamedTuple):
    """A :class:`ConfiguredGraph` as torch tensors (the network's input).

    Shapes: ``node_kind (N,)``, ``node_feat (N, F_node)``, ``edge_index (2, 2m)`` (both
    directions), ``config_node_ids (nc,)``, ``config_feat (C, nc, F_cfg)``,
    ``global_feat (C, G)``.
    """

    node_kind: Tensor
    node_feat: Tensor
    edge_index: Tensor
    config_node_ids: Tensor
    config_feat: Tensor
    global_feat: Tensor

    @classmethod
    def from_graph(cls, graph: ConfiguredGraph) -> "GraphTensors":
        """The tensors of ``graph``; edges are added in both directions.

        Shapes: ``graph.edge_index (2, m)`` -> ``edge_index (2, 2m)``; the other arrays keep
        their shapes (see the class docstring).
        """
        edges = torch.from_numpy(np.ascontiguousarray(graph.edge_index)).long()
        return cls(
            node_kind=torch.from_numpy(graph.node_kind).long(),
            node_feat=torch.from_numpy(graph.node_feat).float(),
            edge_index=torch.cat([edges, edges.flip(0)], dim=1),
            config_node_ids=torch.from_numpy(graph.config_node_ids).long(),
            config_feat=torch.from_numpy(graph.config_feat).float(),
            global_feat=torch.from_numpy(graph.global_feat).float(),
        )

    def select(self, index: Tensor) -> "GraphTensors":
        """The same graph with the configurations ``index`` only.

        Shapes: ``index (C',)`` -> ``config_feat (C', nc, F_cfg)``, ``global_feat (C', G)``.
        """
        return self._replace(config_feat=self.config_feat[index], global_feat=self.global_feat[index])


class TGraphNet(nn.Module):
    r"""TGraph: a GNN over a graph shared by ``C`` configurations, scored jointly.

    Per node: kind embedding + normalised node features; configurable nodes add the
    embedding of their configuration features (linear, plus an embedding of each
    quantised value when ``value_bins`` is set); every node adds the embedding of the
    configuration's global features. Then ``num_blocks`` :class:`TGraphBlock` (GraphSAGE,
    channel attention, configuration cross-attention), mean and max pooling over nodes, and
    an MLP head: one score per configuration, higher = faster.

    Paper: Khizbullin et al., "Graph neural networks with configuration cross-attention for
    tensor compilers", arXiv 2405.16623.

    Parameters
    ----------
    config : TGraphConfig

    Shapes
    ------
    - input: :class:`GraphTensors` with ``C`` configurations
    - output: ``(C,)``
    """

    def __init__(self, config: TGraphConfig) -> None:
        super().__init__()
        self.config = config
        h = config.hidden
        self.kind_embedding = nn.Embedding(config.num_node_kinds, config.kind_embedding)
        self.node_proj = nn.Linear(config.node_features + config.kind_embedding, h)
        self.config_proj = nn.Linear(config.config_features, h)
        self.config_values = (ConfigValueEmbedding(config.config_features, config.value_bins, h)
                              if config.value_bins else None)
        self.global_proj = nn.Linear(config.global_features, h) if config.global_features else None
        self.blocks = nn.ModuleList(
            TGraphBlock(h, config.graph_conv, config.cross_attention, config.heads, config.dropout)
            for _ in range(config.num_blocks)
        )
        self.head = nn.Sequential(
            nn.LayerNorm(2 * h), nn.Linear(2 * h, h), nn.GELU(), nn.Dropout(config.dropout), nn.Linear(h, 1)
        )
        # Feature normalisation, fitted on training data (identity until then).
        self.register_buffer("node_mean", torch.zeros(config.node_features))
        self.register_buffer("node_std", torch.ones(config.node_features))
        self.register_buffer("global_mean", torch.zeros(config.global_features))
        self.register_buffer("global_std", torch.ones(config.global_features))

    def reset_parameters(self) -> None:
        """Re-initialise every weight and forget the fitted feature normalisation."""
        self.kind_embedding.reset_parameters()
        for layer in (self.node_proj, self.config_proj, self.config_values, self.global_proj, *self.blocks):
            if layer is not None:
                layer.reset_parameters()
        for layer in self.head:
            if hasattr(layer, "reset_parameters"):
                layer.reset_parameters()
        for name in ("node", "global"):
            getattr(self, f"{name}_mean").zero_()
            getattr(self, f"{name}_std").fill_(1.0)

    def fit_normalization(self, graphs: list[ConfiguredGraph]) -> None:
        """Set the node and global feature statistics (mean, std + 1e-3) from training graphs.

        Shapes: each graph's ``node_feat (n_i, F_node)`` and ``global_feat (c_i, G)`` are
        stacked over graphs; the statistics are ``(F_node,)`` and ``(G,)``.
        """
        nodes = np.concatenate([g.node_feat for g in graphs])
        globals_ = np.concatenate([g.global_feat for g in graphs])
        for name, data in (("node", nodes), ("global", globals_)):
            if data.size:
                getattr(self, f"{name}_mean").copy_(torch.from_numpy(data.mean(0)))
                getattr(self, f"{name}_std").copy_(torch.from_numpy(data.std(0) + 1e-3))

    def forward(self, graph: GraphTensors) -> Tensor:
        num_configs = graph.config_feat.shape[0]
        node_feat = (graph.node_feat - self.node_mean) / self.node_std
        node = self.node_proj(torch.cat([node_feat, self.kind_embedding(graph.node_kind)], dim=-1))
        x = node.unsqueeze(0).repeat(num_configs, 1, 1)                      # (C, N, H)
        config = self.config_proj(graph.config_feat)                          # (C, nc, H)
        if self.config_values is not None:
            config = config + self.config_values(graph.config_feat)
        x[:, graph.config_node_ids] = x[:, graph.config_node_ids] + config
        if self.global_proj is not None:
            glob = (graph.global_feat - self.global_mean) / self.global_std
            x = x + self.global_proj(glob).unsqueeze(1)
        for block in self.blocks:
            x = block(x, graph.edge_index)
        pooled = torch.cat([x.mean(dim=1), x.amax(dim=1)], dim=-1)           # (C, 2H)
        return self.head(pooled).squeeze(-1)


def predict_scores(model: nn.Module, graph: ConfiguredGraph | GraphTensors, chunk_size: int = 128) -> np.ndarray:
    """Score every configuration of ``graph`` in eval mode, ``chunk_size`` at a time.

    Cross-attention compares configurations within a chunk: a configuration's score depends
    on its chunk-mates, and scores are comparable within a chunk only (see
    ``benchmarks/chunk_size.py`` for what chunking costs in agreement). Chunks bound memory
    to ``N * heads * chunk_size^2`` attention weights whatever the number of configurations.

    Shapes: ``graph`` with ``C`` configurations -> ``(C,)``.

    Parameters
    ----------
    model : TGraphNet or TGraphEnsemble

    Returns
    -------
    np.ndarray
        ``(C,)`` float64 scores, higher = faster.
    """
    return score_in_chunks(model, model, graph, chunk_size).double().numpy()


def score_in_chunks(model: nn.Module, score, graph: ConfiguredGraph | GraphTensors, chunk_size: int) -> Tensor:
    """``score(chunk)`` of each chunk of ``chunk_size`` configurations of ``graph``, with
    ``model`` in eval mode and no gradients, concatenated along the last dimension.

    Shapes: ``score`` maps a chunk of ``c`` configurations to ``(..., c)``; the result is
    ``(..., C)`` for ``C`` configurations (``(0,)`` when there are none).
    """
    tensors = graph if isinstance(graph, GraphTensors) else GraphTensors.from_graph(graph)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            total = tensors.config_feat.shape[0]
            scores = [
                score(tensors.select(torch.arange(start, min(start + chunk_size, total))))
                for start in range(0, total, chunk_size)
            ]
    finally:
        model.train(was_training)
    return torch.cat(scores, dim=-1) if scores else torch.zeros(0)
