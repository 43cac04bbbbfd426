"""``tvm_tgraph.workflows.evaluate``: TVM's XGBoost baseline, trained once per fold, scores
every seed's run the same, so its online scores are computed once."""

import numpy as np

from tvm_tgraph.measured_tasks import load_measured_tasks
from tvm_tgraph.workflows.evaluate import _untrained_xgb, train_baselines, train_xgb_once


def test_xgboost_online_scores_are_deterministic_and_computed_once(collected_db, target):
    tasks = load_measured_tasks(collected_db, target)
    held_out = next(t for t in tasks if t.family == "op:softmax")
    training = [t for t in tasks if t.family != "op:softmax"]
    first, second = (train_baselines(("xgb",), training)["xgb"] for _ in range(2))
    k = 4
    scores = first.online_scores(held_out, k)
    assert scores.shape == (len(held_out.candidates) - k,) and np.ptp(scores) > 0
    # a second XGBoost trained and updated on the same data scores the same: sharing is sound
    np.testing.assert_array_equal(scores, second.online_scores(held_out, k))
    assert first.online_scores(held_out, k) is scores
    assert not np.array_equal(first.online_scores(held_out, 0)[k:], scores)   # the k given candidates count


def test_xgboost_trained_once_is_the_model_retrained_after_every_task(collected_db, target):
    tasks = load_measured_tasks(collected_db, target)
    held_out = next(t for t in tasks if t.family == "op:softmax")
    training = [t for t in tasks if t.family != "op:softmax"]
    assert len(training) >= 2   # one held back, the last one trains
    every_task, once = _untrained_xgb(), _untrained_xgb()
    for task in training:
        every_task.update(task.context, task.candidates, task.runner_results())
    train_xgb_once(once, training)
    assert once.data_size == every_task.data_size and once.last_train_size == once.data_size
    scores = once.predict(held_out.context, held_out.candidates)
    assert np.ptp(scores) > 0
    np.testing.assert_array_equal(scores, every_task.predict(held_out.context, held_out.candidates))
    once.update(held_out.context, held_out.candidates[:4], held_out.runner_results(np.arange(4)))
    assert once.last_train_size == once.data_size   # online updates still retrain
