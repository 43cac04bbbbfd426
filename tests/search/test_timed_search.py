"""``TimedSearch``: times a strategy's proposing without changing what it proposes."""

from __future__ import annotations

from tvm.s_tir import meta_schedule as ms

from search import TimedSearch
from tvm_tgraph.workloads import WORKLOADS, as_ir_module


def _proposed(strategy, target) -> list[str]:
    context = ms.TuneContext(mod=as_ir_module(WORKLOADS["matmul_128"]()), target=target,
                             space_generator="post-order-apply", search_strategy=strategy,
                             task_name="matmul_128", rand_state=5, num_threads=1)
    context.pre_tuning(max_trials=8, num_trials_per_iter=8, design_spaces=context.generate_design_space(),
                       database=ms.database.MemoryDatabase(), cost_model=ms.cost_model.RandomModel(seed=0))
    proposed = [str(candidate.sch.trace) for candidate in context.generate_measure_candidates()]
    context.post_tuning()
    return proposed


def test_the_wrapped_stock_search_proposes_what_it_would_alone_and_is_timed(target):
    def stock():
        return ms.search_strategy.EvolutionarySearch(population_size=32, genetic_num_iters=1)

    timed = TimedSearch(stock())
    proposed = _proposed(timed, target)
    assert len(proposed) == 8 and proposed == _proposed(stock(), target)
    first = timed.clock.seconds
    assert first > 0
    assert _proposed(timed.clone(), target) == proposed   # one clone per task of a model: one clock for all
    assert timed.clock.seconds > first
