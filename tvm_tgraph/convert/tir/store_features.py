"""Global features of a candidate: TVM's ``PerStoreFeature`` of the scheduled program,
extracted once per candidate (:class:`CachedPerStoreFeature`, shared with XGBoost) and pooled
(:func:`store_features`)."""

from __future__ import annotations

import numpy as np
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature, PyFeatureExtractor

from .lru import LruCache
from .schema import F_GLOBAL, log2p


def store_features(per_store: np.ndarray) -> np.ndarray:
    """Pool one candidate's ``PerStoreFeature`` rows to a fixed-size global vector.

    Shapes: ``per_store`` ``(stores, 164)`` -> ``(F_GLOBAL,)`` = mean, max, log2(1 + stores).
    """
    if per_store.shape[0] == 0:
        return np.zeros(F_GLOBAL, dtype=np.float32)
    pooled = [per_store.mean(axis=0), per_store.max(axis=0), [log2p(per_store.shape[0])]]
    return np.concatenate(pooled).astype(np.float32)


def candidate_keys(task: str, candidates) -> list[tuple[str, str]]:
    """Each candidate's cache key: its task's structural hash (``shash2hex(context.mod)``)
    and its trace's text. Two tasks can print the same trace (an element-wise op at two
    shapes), so the task is part of the key."""
    return [(task, str(cand.sch.trace)) for cand in candidates]


@derived_object
class CachedPerStoreFeature(PyFeatureExtractor):
    """TVM's ``PerStoreFeature`` with the most recent candidates' rows kept, so that the
    converter and an ``XGBModel`` given this extractor (``XGBModel(extractor=...)``) extract
    each candidate once between them: extraction is most of XGBoost's ``predict`` time.

    Parameters
    ----------
    cache_size : int
        Candidates whose rows are kept (default 4,096: a round of evolutionary search scores
        a population of 512, first by the network, then by XGBoost).
    """

    def __init__(self, cache_size: int = 4096) -> None:
        super().__init__()
        self._extractor = PerStoreFeature()
        self._cache = LruCache(cache_size)

    def rows(self, context, candidates, keys: list[tuple[str, str]] | None = None) -> list[np.ndarray]:
        """Each candidate's ``(stores, 164)`` ``PerStoreFeature`` rows, as TVM extracts them (float64).

        ``keys`` are the candidates' :func:`candidate_keys`, if the caller has them already.
        """
        if keys is None:
            from tvm.s_tir.meta_schedule.utils import shash2hex

            keys = candidate_keys(shash2hex(context.mod), candidates)
        return self._cache.get_batch(keys, lambda missing: [
            stores.numpy()
            for stores in self._extractor.extract_from(context, [candidates[i] for i in missing])])

    def extract_from(self, context, candidates) -> list:
        """The rows of :meth:`rows` as TVM tensors, as MetaSchedule's cost models take them."""
        import tvm

        return [tvm.runtime.tensor(rows) for rows in self.rows(context, candidates)]
