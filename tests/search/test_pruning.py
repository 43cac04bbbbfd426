"""The pruning search: selection rule, the strategy contract, and real tuning with both
TGraph and XGBoost."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import drop_capture_handlers
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms

from cost_models import TGraphCostModel
from cost_models.timed import TimedCostModel
from search import PruningSearch, select_top_k_and_explore
from tvm_tgraph.measure import FastBuilder, make_runner
from tvm_tgraph.names import STRATEGIES
from tvm_tgraph.workflows.tuning import make_strategy, tune
from tvm_tgraph.workloads import WORKLOADS, as_ir_module


def test_selection_takes_the_top_scores_then_explores_the_rest():
    rng = np.random.default_rng(0)
    scores = rng.permutation(100).astype(float)
    picks = select_top_k_and_explore(scores, k=10, exploration=0.2, rng=rng)
    assert len(picks) == len(set(picks)) == 10
    assert sorted(scores[picks[:8]]) == list(range(92, 100))          # the 8 best
    assert all(scores[i] < 92 for i in picks[8:])                       # 2 explorers from the rest
    assert list(select_top_k_and_explore(scores, 5, 0.0, rng)) == list(np.argsort(-scores)[:5])
    assert len(select_top_k_and_explore(scores[:3], 10, 0.5, rng)) == 3  # a pool smaller than k


def test_uncertainty_picks_the_explorers_the_model_is_most_optimistic_about():
    rng = np.random.default_rng(0)
    scores = rng.permutation(100).astype(float)
    optimistic = scores.copy()
    optimistic[scores == 3] = optimistic[scores == 50] = 1000.0   # low scores, two rankers disagree
    optimistic[scores == 99] = 2000.0                              # in the top anyway: not an explorer
    picks = select_top_k_and_explore(scores, k=10, exploration=0.2, rng=rng, optimistic=optimistic)
    assert sorted(scores[picks[:8]]) == list(range(92, 100))
    assert sorted(scores[picks[8:]]) == [3.0, 50.0]


def test_every_strategy_name_makes_its_search():
    tgraph = TGraphCostModel(learner="xgb")
    made = {name: make_strategy(name, tgraph) for name in STRATEGIES}
    assert made["evolutionary"] == "evolutionary" and made["replay-trace"] == "replay-trace"
    sizes = {name: (made[name].params["pool_size"], made[name].params["population_size"],
                    made[name].params["guide_proposer"]) for name in STRATEGIES if name.startswith("pruning")}
    assert sizes == {"pruning": (256, 512, True), "pruning-light": (256, 256, True),
                     "pruning-fast": (512, 256, False), "pruning-fast-256": (256, 128, False),
                     "pruning-light-ucb": (256, 256, True), "pruning-light-pool64": (64, 256, True),
                     "pruning-light-pool128": (128, 256, True), "pruning-light-pop192": (256, 192, True),
                     "pruning-light-share20": (256, 256, True)}
    assert made["pruning-light-share20"].params["max_model_share"] == 0.2
    assert made["pruning-light-ucb"].params["uncertainty_from"] is tgraph
    assert made["pruning-light"].params["uncertainty_from"] is None
    with pytest.raises(ValueError, match="needs a TGraph cost model"):
        make_strategy("pruning-light-ucb", ms.cost_model.XGBModel())
    with pytest.raises(ValueError, match="unknown search strategy"):
        make_strategy("pruning-huge")


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="exploration"):
        PruningSearch(exploration=1.5)
    with pytest.raises(ValueError, match="pool_size"):
        PruningSearch(pool_size=0)
    with pytest.raises(ValueError, match="max_model_share"):
        PruningSearch(max_model_share=1.0)


def _context(strategy, target, seed=3):
    context = ms.TuneContext(mod=as_ir_module(WORKLOADS["matmul_128"]()), target=target,
                             space_generator="post-order-apply", search_strategy=strategy,
                             task_name="matmul_128", rand_state=seed, num_threads=1)
    return context, context.generate_design_space()


def test_strategy_screens_the_pool_and_stops_at_the_budget(target):
    strategy = PruningSearch(pool_size=40, exploration=0.25, population_size=64)
    context, spaces = _context(strategy, target)
    context.pre_tuning(max_trials=12, num_trials_per_iter=8, design_spaces=spaces,
                       database=ms.database.MemoryDatabase(), cost_model=ms.cost_model.RandomModel())
    first = context.generate_measure_candidates()
    (pool, sent, by_uncertainty, full), = strategy.rounds
    assert len(first) == sent == 8 and 8 < pool <= 40     # the proposer may return a little less than asked
    assert not by_uncertainty                              # no uncertainty_from: explorers at random
    assert full and strategy.meter is None                 # no share budget: the whole population
    traces = {str(c.sch.trace) for c in first}
    assert len(traces) == 8
    failed = [ms.runner.RunnerResult(run_secs=None, error_msg="not measured in this test")] * len(first)
    context.notify_runner_results(first, failed)
    second = context.generate_measure_candidates()
    assert len(second) == 4                                  # 12 - 8: the budget's rest
    assert not traces & {str(c.sch.trace) for c in second}   # nothing proposed twice
    context.notify_runner_results(second, failed[:4])
    assert context.generate_measure_candidates() is None
    context.post_tuning()


@derived_object
class SlowModel(ms.cost_model.PyCostModel):
    """Random scores that take ``seconds_per_candidate`` each: a cost model as slow as asked."""

    def __init__(self, seconds_per_candidate):
        super().__init__()
        self.seconds_per_candidate = seconds_per_candidate
        self.rng = np.random.default_rng(0)

    def update(self, context, candidates, results):
        pass

    def predict(self, context, candidates):
        time.sleep(self.seconds_per_candidate * len(candidates))
        return self.rng.random(len(candidates))


def test_a_share_budget_halves_the_population_while_the_cost_model_is_over_it(target):
    """Rounds that start above the budget propose from half the population; the clones of
    one search (MetaSchedule tunes each task with one) count into one meter; nothing is sent twice."""
    strategy = PruningSearch(pool_size=24, exploration=0.25, population_size=128, genetic_num_iters=1,
                             max_model_share=0.02)
    context, spaces = _context(strategy.clone(), target)
    scored = TimedCostModel(SlowModel(seconds_per_candidate=1e-3))
    context.pre_tuning(max_trials=32, num_trials_per_iter=8, design_spaces=spaces,
                       database=ms.database.MemoryDatabase(), cost_model=scored)
    failed = [ms.runner.RunnerResult(run_secs=None, error_msg="not measured in this test")] * 8
    sent, screened = [], []
    for round_number in range(4):
        before = scored.predicted
        candidates = context.generate_measure_candidates()
        screened.append(scored.predicted - before)
        sent += [str(c.sch.trace) for c in candidates]
        context.notify_runner_results(candidates, failed)
        if round_number == 1:   # as if the round's measurements had taken long: the share falls below
            strategy.meter.round_seconds += 1000.0
    # 128 + 128 scored and the pool (up to 24) with the whole population, 64 + 64 and the pool with half
    fulls = [count >= 256 for count in screened]
    assert fulls == [True, False, True, True], screened   # the first round, then by the share so far
    assert len(sent) == len(set(sent)) == 32
    assert len(strategy.meter.timers) == 1                # the clone counts into its original's meter
    assert strategy.meter.model_seconds == pytest.approx(scored.seconds["predict"], rel=0.05)
    context.post_tuning()


@pytest.mark.parametrize("guide_proposer", [True, False])
def test_an_unguided_proposer_leaves_the_model_only_the_pool_to_score(target, guide_proposer):
    strategy = PruningSearch(pool_size=128, population_size=64, genetic_num_iters=1, guide_proposer=guide_proposer)
    context, spaces = _context(strategy, target)
    counting = TimedCostModel(ms.cost_model.RandomModel())
    context.pre_tuning(max_trials=8, num_trials_per_iter=8, design_spaces=spaces,
                       database=ms.database.MemoryDatabase(), cost_model=counting)
    assert len(context.generate_measure_candidates()) == 8
    (pool, _, _, _), = strategy.rounds
    if guide_proposer:   # two generations of 64 scored, then the pool again
        assert counting.predicted >= pool + 64
    else:
        assert counting.predicted == pool
    context.post_tuning()


@pytest.mark.parametrize("cost_model", ["tgraph", "xgb-warm16"])
def test_real_tuning_with_pruning(tmp_path, target, cost_model):
    drop_capture_handlers()
    summary = tune(as_ir_module(WORKLOADS["matmul_128"]()), cost_model, 16, tmp_path, target=target, seed=0,
                   trials_per_iter=8, builder=FastBuilder(max_workers=2),
                   runner=make_runner(number=1, repeat=3, min_repeat_ms=0),
                   strategy=PruningSearch(pool_size=48, population_size=96), progress=False)
    assert summary.trials == 16 and np.isfinite(summary.best_latency_s)
    assert 0 < summary.cost_model_s < summary.wall_s
    assert summary.cost_model_split["predict"] < summary.search_s < summary.wall_s   # proposing holds the scoring


def test_explorers_follow_tgraphs_uncertainty_once_xgboost_has_learned(tmp_path, target):
    """TGraph blended online with XGBoost: once XGBoost has its 16 warm-up samples, each
    round's pool comes with the model's upper-confidence scores, which pick the explorers
    (MetaSchedule tunes a clone of the strategy, so the reads are watched on the model's side)."""
    class WatchedScores:
        def __init__(self, model):
            self.model, self.reads = model, []

        @property
        def last_optimistic_scores(self):
            scores = self.model.last_optimistic_scores
            self.reads.append(scores is not None)
            return scores

    drop_capture_handlers()
    model = TGraphCostModel(learner="xgb")
    watched = WatchedScores(model)
    strategy = PruningSearch(pool_size=64, population_size=64, genetic_num_iters=1, uncertainty_from=watched)
    summary = tune(as_ir_module(WORKLOADS["matmul_128"]()), model, 32, tmp_path, target=target, seed=0,
                   trials_per_iter=8, builder=FastBuilder(max_workers=2),
                   runner=make_runner(number=1, repeat=3, min_repeat_ms=0), strategy=strategy, progress=False)
    assert summary.trials == 32
    assert len(watched.reads) == 4                            # one read per round of 8
    assert watched.reads[:2] == [False, False] and watched.reads[-1]   # at random until XGBoost has learned
