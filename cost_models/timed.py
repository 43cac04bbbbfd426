"""A cost-model wrapper that measures the wall time spent in the wrapped model."""

from __future__ import annotations

import time

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.cost_model import PyCostModel


@derived_object
class TimedCostModel(PyCostModel):
    """Delegates to ``inner`` and accumulates the seconds spent in its methods.

    Attributes
    ----------
    seconds : dict
        ``{"predict": s, "update": s}``, wall seconds spent in each, summed over calls.
    predicted : int
        Candidates scored.
    """

    def __init__(self, inner) -> None:
        super().__init__()
        self.inner = inner
        self.seconds = {"predict": 0.0, "update": 0.0}
        self.predicted = 0

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())

    def load(self, path: str) -> None:
        self.inner.load(path)

    def save(self, path: str) -> None:
        self.inner.save(path)

    def update(self, context, candidates, results) -> None:
        start = time.perf_counter()
        self.inner.update(context, candidates, results)
        self.seconds["update"] += time.perf_counter() - start

    def predict(self, context, candidates):
        start = time.perf_counter()
        scores = self.inner.predict(context, candidates)
        self.seconds["predict"] += time.perf_counter() - start
        self.predicted += len(candidates)
        return scores
