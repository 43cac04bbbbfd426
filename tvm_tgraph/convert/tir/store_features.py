"""What a candidate's schedule produced: TVM's ``PerStoreFeature`` of the scheduled program,
pooled to global features and placed on the block that produced each store.

``PerStoreFeature`` (TVM's C++ extractor, the one XGBoost uses) returns one row per buffer
the scheduled program stores to, in the order of each buffer's first store (stores of a
constant, such as a reduction's init, do not count; layout-rewrite blocks are dropped
before extraction). :func:`store_producers` walks the scheduled program in that order and
names the block of each row, so the rows can be placed where they belong in the graph.
"""

from __future__ import annotations

import numpy as np

from .program_graph import TaskGraph, single_prim_func
from .schema import BLOCK_STORE_COLUMN, F_GLOBAL, PER_STORE_FEATURES, STORE_FEATURE_SCALE, log2p

#: The annotation of the blocks ``RewriteLayout`` adds; ``PerStoreFeature`` drops them.
_LAYOUT_REWRITE_BLOCK = "meta_schedule.layout_rewrite_preproc"


def store_features(per_store: np.ndarray) -> np.ndarray:
    """Pool one candidate's ``PerStoreFeature`` rows to a fixed-size global vector.

    Shapes: ``per_store`` ``(stores, 164)`` -> ``(F_GLOBAL,)`` = mean, max, log2(1 + stores).
    """
    if per_store.shape[0] == 0:
        return np.zeros(F_GLOBAL, dtype=np.float32)
    pooled = [per_store.mean(axis=0), per_store.max(axis=0), [log2p(per_store.shape[0])]]
    return np.concatenate(pooled).astype(np.float32)


def store_producers(mod) -> list[str]:
    """The block of each ``PerStoreFeature`` row of a scheduled program.

    Parameters
    ----------
    mod : tvm.IRModule
        A candidate's scheduled module (``candidate.sch.mod``).

    Returns
    -------
    list of str
        The name of the block holding the first non-constant store to each buffer, one per
        buffer, in the order of those stores (the order of ``PerStoreFeature``'s rows).
    """
    from tvm import tirx

    producers: list[str] = []
    seen: set[str] = set()
    stack = [(single_prim_func(mod).body, "")]
    while stack:
        stmt, block = stack.pop()
        cls = type(stmt).__name__
        children = []
        if cls == "BufferStore":
            buffer = str(stmt.buffer.name)
            if buffer not in seen and not isinstance(stmt.value, (tirx.IntImm, tirx.FloatImm)):
                seen.add(buffer)
                producers.append(block)
        elif cls == "SBlockRealize":
            inner = stmt.block
            if _LAYOUT_REWRITE_BLOCK not in inner.annotations:
                block = str(inner.name_hint)
                children = [inner.init, inner.body]
        elif cls == "SeqStmt":
            children = list(stmt)
        elif cls == "IfThenElse":
            children = [stmt.then_case, stmt.else_case]
        else:
            children = [getattr(stmt, "body", None)]
        stack.extend((child, block) for child in reversed(children) if child is not None)
    return producers


def _graph_block(graph: TaskGraph, name: str) -> int | None:
    """The node of the unscheduled block a scheduled block comes from: itself, or for a
    stage split off it (``conv_global``, ``pool_rf``, ``matmul_update``, ``red.rf``) the
    longest prefix of its name at ``_`` or ``.`` that names a block."""
    while name:
        if name in graph.blocks:
            return graph.blocks[name]
        cut = max(name.rfind("_"), name.rfind("."))
        if cut <= 0:
            return None
        name = name[:cut]
    return None


def place_block_store_features(config: np.ndarray, graph: TaskGraph, rows: dict[int, int],
                               per_store: np.ndarray, producers: list[str]) -> None:
    """Write each store's features into the ``block_store_*`` columns of its block's row.

    Rows of blocks that produced several stores get the elementwise max; blocks that
    produced none (inlined ones) keep zeros. Nothing is placed when ``producers`` does not
    name one block per row (a program whose stores this walker orders differently from
    TVM's extractor), so that no feature lands on the wrong block.

    Parameters
    ----------
    config : np.ndarray
        ``(nc, F_CONFIG)`` one candidate's configuration features, written in place.
    graph : TaskGraph
    rows : dict
        Node id -> row of ``config`` (``graph.config_row()``).
    per_store : np.ndarray
        ``(stores, 164)`` the candidate's ``PerStoreFeature`` rows.
    producers : list of str
        ``stores`` block names, from :func:`store_producers`.
    """
    if len(producers) != per_store.shape[0]:
        return
    by_row: dict[int, list[np.ndarray]] = {}
    for name, features in zip(producers, per_store):
        node = _graph_block(graph, name)
        if node is not None:
            by_row.setdefault(rows[node], []).append(features)
    columns = slice(BLOCK_STORE_COLUMN, BLOCK_STORE_COLUMN + PER_STORE_FEATURES)
    for row, features in by_row.items():
        config[row, columns] = np.max(features, axis=0) * STORE_FEATURE_SCALE
