"""A search-strategy wrapper that measures the wall time spent proposing candidates."""

from __future__ import annotations

import time

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.search_strategy import PySearchStrategy


class SearchClock:
    """Seconds spent in ``generate_measure_candidates`` by a strategy and all its clones (one
    per task of a model): sampling and mutating candidates, the cost model's ``predict`` on
    them (which a :class:`~cost_models.timed.TimedCostModel` counts apart) and picking what
    to measure."""

    def __init__(self) -> None:
        self.seconds = 0.0


@derived_object
class TimedSearch(PySearchStrategy):
    """Delegates to ``inner`` (any MetaSchedule search strategy, Python or C++) and adds the
    seconds of its ``generate_measure_candidates`` calls to ``clock``.

    Parameters
    ----------
    inner : ms.search_strategy.SearchStrategy
    clock : SearchClock, optional
        Shared with every clone (default: a new one).
    """

    def __init__(self, inner, clock: SearchClock | None = None) -> None:
        self.inner = inner
        self.clock = SearchClock() if clock is None else clock

    def _initialize_with_tune_context(self, context) -> None:
        self.inner._initialize_with_tune_context(context)

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None, cost_model=None) -> None:
        self.inner.pre_tuning(max_trials, num_trials_per_iter, design_spaces, database, cost_model)

    def post_tuning(self) -> None:
        self.inner.post_tuning()

    def generate_measure_candidates(self):
        start = time.perf_counter()
        try:
            return self.inner.generate_measure_candidates()
        finally:
            self.clock.seconds += time.perf_counter() - start

    def notify_runner_results(self, measure_candidates, results) -> None:
        self.inner.notify_runner_results(measure_candidates, results)

    def clone(self):
        return TimedSearch(self.inner.clone(), self.clock)
