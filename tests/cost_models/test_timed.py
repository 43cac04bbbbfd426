"""cost_models.timed: the wrapper that times a cost model."""

from __future__ import annotations

import numpy as np
from conftest import measured_runner_results, sample_candidates
from tvm.s_tir.meta_schedule.cost_model import RandomModel

from cost_models.timed import TimedCostModel


def test_timed_cost_model_passes_through_and_counts_time():
    context, candidates = sample_candidates("matmul_128", count=24)
    timed = TimedCostModel(RandomModel(seed=1))
    scores = timed.predict(context, candidates)
    assert np.asarray(scores).shape == (24,)
    np.testing.assert_array_equal(scores, RandomModel(seed=1).predict(context, candidates))
    timed.update(context, candidates[:4], measured_runner_results(4))
    assert set(timed.seconds) == {"predict", "update"} and timed.total_seconds > 0
