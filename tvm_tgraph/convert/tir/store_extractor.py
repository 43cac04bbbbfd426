"""TVM's ``PerStoreFeature`` rows of candidates, extracted once per candidate and kept, so
that the converter and TVM's XGBoost model (through
:class:`cost_models.shared_features.SharedPerStoreFeature`) extract each candidate once
between them."""

from __future__ import annotations

import numpy as np

from .lru import LruCache


def candidate_keys(task: str, candidates) -> list[tuple[str, str]]:
    """Each candidate's cache key: its task's structural hash (``shash2hex(context.mod)``)
    and its trace's text. Two tasks can print the same trace (an element-wise op at two
    shapes), so the task is part of the key."""
    return [(task, str(cand.sch.trace)) for cand in candidates]


class PerStoreRows:
    """``PerStoreFeature`` rows of the most recent candidates.

    Parameters
    ----------
    cache_size : int
        Candidates whose rows are kept (default 4,096: a round of evolutionary search scores
        a population of 512, first by the network, then by XGBoost).
    """

    def __init__(self, cache_size: int = 4096) -> None:
        from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

        self.extractor = PerStoreFeature()
        self._cache = LruCache(cache_size)
        self._unscheduled: dict[str, np.ndarray] = {}

    def rows(self, context, candidates, keys: list[tuple[str, str]] | None = None) -> list[np.ndarray]:
        """Each candidate's ``(stores, 164)`` ``PerStoreFeature`` rows, as TVM extracts them (float64).

        ``keys`` are the candidates' :func:`candidate_keys`, if the caller has them already.
        """
        if keys is None:
            from tvm.s_tir.meta_schedule.utils import shash2hex

            keys = candidate_keys(shash2hex(context.mod), candidates)
        return self._cache.get_batch(keys, lambda missing: [
            stores.numpy() for stores in self.extractor.extract_from(context, [candidates[i] for i in missing])])

    def unscheduled(self, context) -> np.ndarray:
        """The ``(stores, 164)`` rows of the task's unscheduled program (an empty schedule of
        ``context.mod``), extracted once per task (kept by its structural hash)."""
        from tvm.s_tir import Schedule
        from tvm.s_tir.meta_schedule import MeasureCandidate
        from tvm.s_tir.meta_schedule.utils import shash2hex

        task = shash2hex(context.mod)
        if task not in self._unscheduled:
            empty = MeasureCandidate(Schedule(context.mod), [])
            self._unscheduled[task] = self.extractor.extract_from(context, [empty])[0].numpy()
        return self._unscheduled[task]
