"""The converter: MetaSchedule candidates of any task -> one configured graph, cached."""

from __future__ import annotations

import numpy as np

from ...graph import ConfiguredGraph
from .lru import LruCache
from .program_graph import TaskGraph, task_graph
from .schema import F_CONFIG, F_GLOBAL
from .store_extractor import PerStoreRows, candidate_keys
from .store_features import float_ops, store_features
from .trace import _TraceReader, parse_trace


class TirConverter:
    """Converts MetaSchedule candidates of any task to configured graphs.

    The static graph of each task is built once and cached by the task's structural hash;
    each candidate's features are cached by its task and trace text (evolutionary search
    scores the same candidate many times). ``PerStoreFeature`` (TVM's C++ extractor, the one
    XGBoost uses) supplies the global features.

    Parameters
    ----------
    cache_size : int
        Candidates whose features are kept (default 20,000, about 40 MB).

    Attributes
    ----------
    store_rows : PerStoreRows
        Where the per-store rows come from; an ``XGBModel`` reading them too
        (``cost_models.shared_features.SharedPerStoreFeature``) extracts each candidate once
        with the converter.
    """

    def __init__(self, cache_size: int = 20_000) -> None:
        self._graphs: dict[str, TaskGraph] = {}
        self.store_rows = PerStoreRows()
        self._cache = LruCache(cache_size)

    def graph_for(self, mod) -> TaskGraph:
        """The cached static graph of a task's workload module."""
        from tvm.s_tir.meta_schedule.utils import shash2hex

        return self._graph_by_key(shash2hex(mod), mod)

    def _graph_by_key(self, key: str, mod) -> TaskGraph:
        if key not in self._graphs:
            self._graphs[key] = task_graph(mod)
        return self._graphs[key]

    def convert(self, context, candidates, runtime: np.ndarray | None = None) -> ConfiguredGraph:
        """Convert candidates of the task of ``context`` to one configured graph.

        Parameters
        ----------
        context : ms.TuneContext
            The task (``context.mod``) and target.
        candidates : list of ms.MeasureCandidate
            ``c`` candidates of that task.
        runtime : np.ndarray, optional
            ``(c,)`` measured latencies to attach.

        Returns
        -------
        ConfiguredGraph
            ``config_feat`` ``(c, nc, F_CONFIG)``, ``global_feat`` ``(c, F_GLOBAL)``.

        Raises
        ------
        UnsupportedProgramError
            If the task's program or a candidate's trace cannot be converted.
        """
        from tvm.s_tir.meta_schedule.utils import shash2hex

        task = shash2hex(context.mod)
        graph = self._graph_by_key(task, context.mod)
        keys = candidate_keys(task, candidates)
        baseline = float_ops(self.store_rows.unscheduled(context))

        def features(missing: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
            per_store = self.store_rows.rows(context, [candidates[i] for i in missing], [keys[i] for i in missing])
            return [(_TraceReader(graph, graph.config_row()).read(parse_trace(keys[i][1])), store_features(stores, baseline))
                    for i, stores in zip(missing, per_store)]

        rows = self._cache.get_batch(keys, features)
        nc = len(graph.config_node_ids)
        config = np.stack([r[0] for r in rows]) if rows else np.zeros((0, nc, F_CONFIG), np.float32)
        global_feat = np.stack([r[1] for r in rows]) if rows else np.zeros((0, F_GLOBAL), np.float32)
        return ConfiguredGraph(
            node_kind=graph.node_kind, node_feat=graph.node_feat, edge_index=graph.edge_index,
            config_node_ids=graph.config_node_ids, config_feat=config, global_feat=global_feat,
            runtime=runtime, name=str(context.task_name or ""),
        )
