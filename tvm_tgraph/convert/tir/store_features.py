"""Global features of a candidate: TVM's ``PerStoreFeature`` of the scheduled program, pooled."""

from __future__ import annotations

import numpy as np

from .schema import F_GLOBAL, log2p


def store_features(per_store: np.ndarray) -> np.ndarray:
    """Pool one candidate's ``PerStoreFeature`` rows to a fixed-size global vector.

    Shapes: ``per_store`` ``(stores, 164)`` -> ``(F_GLOBAL,)`` = mean, max, log2(1 + stores).
    """
    if per_store.shape[0] == 0:
        return np.zeros(F_GLOBAL, dtype=np.float32)
    pooled = [per_store.mean(axis=0), per_store.max(axis=0), [log2p(per_store.shape[0])]]
    return np.concatenate(pooled).astype(np.float32)
