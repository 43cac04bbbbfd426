"""``tvm_tgraph.workflows.evaluate``: TVM's XGBoost baseline, trained once per fold, scores
every seed's run the same, so its online scores are computed once."""

import numpy as np
import pytest

from cost_models import DEFAULT_CHECKPOINT, TGraphCostModel
from cost_models.tgraph_cost_model import BLEND_SAMPLES, blend_with_prior, unsquash
from tvm_tgraph.measured_tasks import load_measured_tasks
from tvm_tgraph.metrics import kendall_tau, standardise
from tvm_tgraph.workflows.evaluate import _untrained_xgb, evaluate, train_baselines, train_xgb_once


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


def test_online_rows_rank_as_the_cost_models_they_stand_for(collected_db, target):
    """The online ``tgraph`` and ``tgraph-prior+ft+xgb`` rows, blended from the kept frozen and
    fine-tuned networks' and XGBoost's scores, are the scores of ``TGraphCostModel`` with
    ``learner="network"`` and ``learner="network+xgb"`` (its fallback XGBoost trained on the
    same tasks), updated on the same k with the same steps."""
    tasks = load_measured_tasks(collected_db, target)
    held_out = next(t for t in tasks if t.family == "op:softmax")
    training = [t for t in tasks if t.family != "op:softmax"]
    k, steps = 4, 3
    xgb = train_baselines(("xgb",), training)
    report = evaluate([held_out], training, str(DEFAULT_CHECKPOINT), xgb, (k,), progress=False, online_steps=steps)
    rows = report["results"][f"online_k{k}"]
    kept = report["online_scores"][f"online_k{k}"][held_out.name]
    prior, fine_tuned = unsquash(kept["tgraph-prior"]), unsquash(kept["tgraph-ft"])
    both = (standardise(fine_tuned) + standardise(kept["xgb"])) / 2
    expected = {"network": blend_with_prior(prior, fine_tuned, k, BLEND_SAMPLES["network"]),
                "network+xgb": blend_with_prior(prior, both, k, BLEND_SAMPLES["network+xgb"])}
    assert np.ptp(expected["network"] - expected["network+xgb"]) > 0.1   # XGBoost weighs in
    given, rest = held_out.runner_results(np.arange(k)), held_out.candidates[k:]
    for learner, row in (("network", "tgraph"), ("network+xgb", "tgraph-prior+ft+xgb")):
        model = TGraphCostModel(DEFAULT_CHECKPOINT, learner=learner, update_max_steps=steps,
                                update_time_budget_s=None, fallback=xgb["xgb"].fresh())
        model.update(held_out.context, held_out.candidates[:k], given)
        scores = unsquash(model.predict(held_out.context, rest))
        np.testing.assert_allclose(scores, standardise(expected[learner]), rtol=1e-5, atol=1e-6, err_msg=learner)
        assert kendall_tau(scores, held_out.latency[k:]) == pytest.approx(
            rows[row]["per_task"][held_out.name]["kendall_tau"])


def _update_in_rounds(model, task, k: int, per_round: int) -> None:
    """Give ``model`` the task's first ``k`` candidates in ``update`` calls of ``per_round``."""
    for first in range(0, k, per_round):
        given = np.arange(first, first + per_round)
        model.update(task.context, [task.candidates[i] for i in given], task.runner_results(given))


def test_online_updates_in_rounds_are_the_cost_models_round_by_round(collected_db, target):
    """With ``online_trials_per_iter`` the fine-tuned network is ``TGraphCostModel`` updated on the
    k given in rounds of that many, ``online_steps`` steps each (not one update), while
    XGBoost's online scores do not depend on the split (it retrains on all it holds)."""
    tasks = load_measured_tasks(collected_db, target)
    held_out = next(t for t in tasks if t.family == "op:softmax")
    training = [t for t in tasks if t.family != "op:softmax"]
    k, per_round, steps = 4, 2, 3
    xgb = train_baselines(("xgb",), training)
    rest = held_out.candidates[k:]

    split = xgb["xgb"].fresh()
    _update_in_rounds(split, held_out, k, per_round)
    np.testing.assert_array_equal(split.predict(held_out.context, rest), xgb["xgb"].online_scores(held_out, k))

    kept = {}
    for trials_per_iter in (None, per_round):
        report = evaluate([held_out], training, str(DEFAULT_CHECKPOINT), xgb, (k,), progress=False,
                          online_steps=steps, online_trials_per_iter=trials_per_iter)
        assert report["settings"]["online_trials_per_iter"] == trials_per_iter
        kept[trials_per_iter] = unsquash(report["online_scores"][f"online_k{k}"][held_out.name]["tgraph-ft"])
    model = TGraphCostModel(DEFAULT_CHECKPOINT, update_max_steps=steps, update_time_budget_s=None, blend_samples=0)
    _update_in_rounds(model, held_out, k, per_round)
    np.testing.assert_allclose(unsquash(model.predict(held_out.context, rest)), kept[per_round], rtol=1e-5, atol=1e-6)
    assert np.ptp(kept[per_round] - kept[None]) > 1e-3   # twice the steps: not the one-update network
    with pytest.raises(ValueError, match="MLP"):
        evaluate([held_out], training, str(DEFAULT_CHECKPOINT), ("mlp",), (k,), progress=False,
                 online_trials_per_iter=per_round)
