"""Global features of a candidate: TVM's ``PerStoreFeature`` of the scheduled program, pooled."""

from __future__ import annotations

import numpy as np

from .schema import F_GLOBAL, FLOAT_OP_COLUMNS, log2p


def float_ops(per_store: np.ndarray) -> float:
    """A program's float operations, from its ``PerStoreFeature`` rows.

    Shapes: ``per_store`` ``(stores, 164)`` -> scalar (the sum over stores of the float
    arithmetic columns, each ``log2(1 + count)`` undone).
    """
    return float(np.sum(np.exp2(per_store[:, FLOAT_OP_COLUMNS]) - 1.0))


def store_features(per_store: np.ndarray, unscheduled_ops: float) -> np.ndarray:
    """Pool one candidate's ``PerStoreFeature`` rows to a fixed-size global vector.

    Shapes: ``per_store`` ``(stores, 164)`` -> ``(F_GLOBAL,)`` = mean, max, log2(1 + stores),
    and the recomputation ``log2p(float_ops(per_store)) - log2p(unscheduled_ops)``.

    Parameters
    ----------
    unscheduled_ops : float
        :func:`float_ops` of the task's unscheduled program.
    """
    if per_store.shape[0] == 0:
        return np.zeros(F_GLOBAL, dtype=np.float32)
    recompute = log2p(float_ops(per_store)) - log2p(unscheduled_ops)
    pooled = [per_store.mean(axis=0), per_store.max(axis=0), [log2p(per_store.shape[0])], [recompute]]
    return np.concatenate(pooled).astype(np.float32)
