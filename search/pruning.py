"""A MetaSchedule search strategy that screens a large pool with the cost model and
measures only its top-k plus a small exploration share.

Each round, MetaSchedule's own ``EvolutionarySearch`` proposes a pool of ``pool_size``
unmeasured candidates: random design-space samples and mutations of the best measured
schedules (tile sizes, loop orders, compute-at locations, unroll / vectorize / parallel
decisions), each valid after post-processing. The cost model then scores the whole pool
in one call (so TGraph compares the pool's candidates with each other through its
configuration cross-attention), and only ``k = num_trials_per_iter`` candidates go to the
builder: the ``k - e`` best-scored and ``e = round(exploration * k)`` explorers from the
rest of the pool, drawn at random or, given ``uncertainty_from`` (a ``TGraphCostModel``), those
its upper-confidence scores rank highest (score plus the disagreement of its opinions: the
members of a pretrained seed ensemble, or its one network, and what was learned online). Everything else in the pool is pruned unbuilt.

By default the proposer's generations are themselves scored with the cost model (each
generation keeps the candidates the model likes best), so a round scores
``population_size x (genetic_num_iters + 1)`` candidates plus the pool. Given
``max_model_share``, a round that starts while the cost model's share of the rounds' wall time
so far exceeds it is proposed by a second proposer of half the population (and half the
sampling and mutation work): the screening gives way when the measurements are cheap. With
``guide_proposer=False`` the proposer draws its pool unguided (random design-space samples
and mutations of the best measured schedules, picked at random) and the cost model scores
each candidate of a round once, in the pool: the screening costs a fraction as much, and
the ranking of one pool is all the model contributes.

Works with any MetaSchedule cost model (``TGraphCostModel``, ``XGBModel``, ...)::

    from search import PruningSearch
    ms.tune_tir(mod, target, work_dir, 128, cost_model=TGraphCostModel(),
                strategy=PruningSearch(pool_size=512, exploration=0.1))
"""

from __future__ import annotations

import time

import numpy as np
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.cost_model import RandomModel
from tvm.s_tir.meta_schedule.search_strategy import EvolutionarySearch, PySearchStrategy
from tvm_ffi import structural_hash

from cost_models.timed import TimedCostModel

# The inner search stops on its own trial count; ours is the one that ends the search.
_UNBOUNDED_TRIALS = 1 << 30


def select_top_k_and_explore(scores: np.ndarray, k: int, exploration: float,
                             rng: np.random.Generator, optimistic: np.ndarray | None = None) -> np.ndarray:
    """Indices of the candidates to measure.

    Parameters
    ----------
    scores : np.ndarray
        ``(pool,)`` cost-model scores, higher = faster.
    k : int
        Candidates to pick (at most the pool size).
    exploration : float
        Share of ``k`` taken from the candidates outside the top.
    rng : np.random.Generator
    optimistic : np.ndarray, optional
        ``(pool,)`` upper-confidence scores (the score plus the model's uncertainty): the
        explorers are the candidates outside the top that rank highest by these. Default:
        explorers drawn uniformly at random.

    Returns
    -------
    np.ndarray
        ``(min(k, pool),)`` distinct indices: the top-scored first, then the explorers.
    """
    k = min(k, len(scores))
    explore = min(int(round(exploration * k)), k)
    order = np.argsort(-scores, kind="stable")
    top = order[: k - explore]
    rest = order[k - explore:]
    if not explore:
        explorers = rest[:0]
    elif optimistic is None:
        explorers = rng.choice(rest, size=explore, replace=False)
    else:
        explorers = rest[np.argsort(-optimistic[rest], kind="stable")[:explore]]
    return np.concatenate([top, explorers]).astype(np.int64)


class ModelShareMeter:
    """The cost model's share of a tuning run's rounds, over every task of the run.

    A round runs from a search's ``generate_measure_candidates`` to its
    ``notify_runner_results`` (screening, building, running and the cost model's update); the
    cost model's part is what the search's scoring calls took. MetaSchedule tunes each task
    with a clone of the search; the clones add to their original's meter.
    """

    def __init__(self) -> None:
        self.round_seconds = 0.0
        self.timers: list[TimedCostModel] = []

    @property
    def model_seconds(self) -> float:
        return sum(timer.seconds["predict"] for timer in self.timers)

    def share(self) -> float:
        """The cost model's seconds over the finished rounds' seconds (0 before any round ends)."""
        return self.model_seconds / self.round_seconds if self.round_seconds > 0 else 0.0


@derived_object
class PruningSearch(PySearchStrategy):
    """Screen ``pool_size`` candidates per round with the cost model, measure ``k``.

    Parameters
    ----------
    pool_size : int
        Unmeasured candidates proposed and scored per round (default 256). ``k``, the
        candidates measured per round, is MetaSchedule's ``num_trials_per_iter``.
    exploration : float
        Share of each round's ``k`` measured candidates drawn at random from the pool
        instead of taken by score (default 0.1).
    population_size : int
        Population of the evolutionary proposer (default 512).
    genetic_num_iters : int
        Generations of the evolutionary proposer per round (default 2). Each generation
        scores the population with the cost model: these two set the screening cost.
    init_measured_ratio : float
        Share of the proposer's initial population taken from the best measured
        schedules (the rest are fresh random samples; default 0.2).
    guide_proposer : bool
        Score the proposer's generations with the cost model (default ``True``); ``False``
        lets the proposer pick at random and scores only the pool (see the module's notes).
    uncertainty_from : TGraphCostModel, optional
        The cost model (the Python object, as MetaSchedule hands the strategy a wrapper
        without it) whose ``last_optimistic_scores`` pick each round's explorers: those of
        the pool outside the top that the model's upper-confidence scores rank highest (its
        score plus the disagreement of its rankers). Rounds without them (one pretrained
        network and no measurements of the task yet) draw explorers at random, as without it.
    max_model_share : float, optional
        Propose with half the population in rounds that start while the cost model's share
        of the run's rounds so far (:class:`ModelShareMeter`, every task's clone together)
        exceeds this; default: always the full population. The share counted is the scoring
        this search asks for, not the cost model's ``update``. A candidate measured before
        in the task is never sent again (the two proposers do not know each other's).

    Attributes
    ----------
    rounds : list of tuple
        Per round: ``(pool size, candidates sent to the builder, explorers picked by
        uncertainty, proposed with the full population)``.
    meter : ModelShareMeter or None
        The run's meter, given ``max_model_share``.
    """

    def __init__(self, pool_size: int = 256, exploration: float = 0.1, population_size: int = 512,
                 genetic_num_iters: int = 2, init_measured_ratio: float = 0.2,
                 guide_proposer: bool = True, uncertainty_from=None, max_model_share: float | None = None) -> None:
        if pool_size < 1:
            raise ValueError(f"pool_size must be positive, got {pool_size}")
        if not 0.0 <= exploration <= 1.0:
            raise ValueError(f"exploration must be within [0, 1], got {exploration}")
        if max_model_share is not None and not 0.0 < max_model_share < 1.0:
            raise ValueError(f"max_model_share must be within (0, 1), got {max_model_share}")
        self.params = dict(pool_size=pool_size, exploration=exploration, population_size=population_size,
                           genetic_num_iters=genetic_num_iters, init_measured_ratio=init_measured_ratio,
                           guide_proposer=guide_proposer, uncertainty_from=uncertainty_from,
                           max_model_share=max_model_share)
        sizes = (population_size,) if max_model_share is None else (population_size, max(1, population_size // 2))
        self.proposers = [EvolutionarySearch(population_size=size, genetic_num_iters=genetic_num_iters,
                                             init_measured_ratio=init_measured_ratio, eps_greedy=exploration)
                          for size in sizes]
        self.meter = None if max_model_share is None else ModelShareMeter()
        self.context = None
        self.scorer = None
        self.rng = np.random.default_rng(0)
        self.max_trials = 0
        self.trials_per_iter = 0
        self.measured = 0
        self.sent: set[int] = set()
        self.round_start = 0.0
        self.rounds: list[tuple[int, int, bool, bool]] = []

    def _initialize_with_tune_context(self, context) -> None:
        self.context = context
        self.rng = np.random.default_rng(abs(int(context.rand_state)))
        for proposer in self.proposers:
            proposer._initialize_with_tune_context(context)

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None, cost_model=None) -> None:
        if cost_model is None:
            raise ValueError("PruningSearch needs a cost model to screen candidates with")
        self.scorer = cost_model
        if self.meter is not None:   # every score this search asks for, timed
            self.scorer = TimedCostModel(cost_model)
            self.meter.timers.append(self.scorer)
        self.max_trials = int(max_trials)
        self.trials_per_iter = int(num_trials_per_iter)
        self.measured = 0
        self.sent = set()
        self.rounds = []
        proposer_model = self.scorer if self.params["guide_proposer"] else RandomModel(seed=int(self.rng.integers(1 << 30)))
        for proposer in self.proposers:
            proposer.pre_tuning(_UNBOUNDED_TRIALS, self.params["pool_size"], design_spaces, database, proposer_model)

    def post_tuning(self) -> None:
        for proposer in self.proposers:
            proposer.post_tuning()

    def generate_measure_candidates(self):
        if self.measured >= self.max_trials:
            return None
        self.round_start = time.perf_counter()
        full = self.meter is None or self.meter.share() <= self.params["max_model_share"]
        pool = list(self.proposers[0 if full else 1].generate_measure_candidates() or [])
        if self.meter is not None:   # one proposer alone never proposes a candidate twice
            pool = [cand for cand in pool if structural_hash(cand.sch.mod) not in self.sent]
        if not pool:
            return None
        k = min(self.trials_per_iter, self.max_trials - self.measured)
        scores = np.asarray(self.scorer.predict(self.context, pool), dtype=np.float64)
        optimistic = self._optimistic_scores(len(pool))
        picks = select_top_k_and_explore(scores, k, self.params["exploration"], self.rng, optimistic)
        self.rounds.append((len(pool), len(picks), optimistic is not None, full))
        if self.meter is not None:
            self.sent.update(structural_hash(pool[i].sch.mod) for i in picks)
        return [pool[i] for i in picks]

    def _optimistic_scores(self, pool: int) -> np.ndarray | None:
        """The ``uncertainty_from`` model's upper-confidence scores of the pool it just
        scored, or None (no such model, or it had one opinion only)."""
        model = self.params["uncertainty_from"]
        optimistic = None if model is None else model.last_optimistic_scores
        return optimistic if optimistic is not None and len(optimistic) == pool else None

    def notify_runner_results(self, measure_candidates, results) -> None:
        self.measured += len(results)
        if self.meter is not None:
            self.meter.round_seconds += time.perf_counter() - self.round_start
        for proposer in self.proposers:
            proposer.notify_runner_results(measure_candidates, results)

    def clone(self):
        twin = PruningSearch(**self.params)
        twin.meter = self.meter
        return twin
