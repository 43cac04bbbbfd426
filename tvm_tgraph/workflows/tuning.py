"""Tuning a module with MetaSchedule and a chosen cost model, on the project's builder.

The one place where the project calls ``ms.tune_tir`` / ``ms.relax_integration.tune_relax``:
the CLI, the demo and the examples go through :func:`tune`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import cost_models
from cost_models.timed import TimedCostModel
from search import PruningSearch, TimedSearch

from ..database import latencies_in_trial_order, open_database, result_latency
from ..measure import FastBuilder, make_runner
from ..metrics import best_so_far
from ..names import STRATEGIES
from ..tvm_env import make_target, register_light_tensor_intrin


@dataclass
class TuneSummary:
    """What a tuning run found.

    Attributes
    ----------
    best_latency_s : float
        Best measured latency (median of ``run_secs``), seconds; for a module of several
        tasks, the sum of each task's best. ``inf`` if some task has no successful run.
    best_trial : int
        1-based trial after which ``best_latency_s`` was reached.
    trials : int
        Candidates measured.
    wall_s : float
        Wall time of the run.
    curve : np.ndarray
        ``(trials,)`` ``best_latency_s`` after each trial.
    work_dir : str
        The JSON database and logs.
    cost_model_s : float
        Wall time spent in the cost model's ``predict`` and ``update``.
    cost_model_split : dict
        That time by method: ``{"predict": s, "update": s}``.
    trial_wall_s : np.ndarray
        ``(trials of this run,)`` seconds from the start of the run until each candidate's
        result was recorded (after the cost model's update on its batch), in trial order.
    trial_cost_model_s : np.ndarray
        ``(trials of this run,)`` ``cost_model_s`` spent by then.
    search_s : float
        Wall time spent in the search strategy proposing candidates (every task's), the cost
        model's ``predict`` included: ``search_s - cost_model_split["predict"]`` is the
        search's own sampling, mutation and picking.
    """

    best_latency_s: float
    best_trial: int
    trials: int
    wall_s: float
    curve: np.ndarray
    work_dir: str
    cost_model_s: float = 0.0
    cost_model_split: dict | None = None
    trial_wall_s: np.ndarray | None = None
    trial_cost_model_s: np.ndarray | None = None
    search_s: float | None = None


def progress_callback(bar):
    """A MetaSchedule measure callback that advances the tqdm ``bar`` per measured candidate."""
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

    @derived_object
    class ProgressCallback(PyMeasureCallback):
        def __init__(self) -> None:
            super().__init__()
            self.bar = bar
            self.best = float("inf")

        def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results):
            for result in runner_results:
                self.best = min(self.best, result_latency(result))
            self.bar.set_postfix_str(f"best {self.best * 1e3:.4f} ms")
            self.bar.update(len(runner_results))

    return ProgressCallback()


def trial_clock_callback(start: float, timed_model: TimedCostModel, marks: list):
    """A MetaSchedule measure callback that appends, per measured candidate, ``(seconds
    since start, seconds spent in timed_model so far)`` to ``marks``."""
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

    @derived_object
    class TrialClock(PyMeasureCallback):
        def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results):
            mark = (time.perf_counter() - start, timed_model.total_seconds)
            marks.extend([mark] * len(runner_results))

    return TrialClock()


def make_cost_model(name: str, seed: int = 0, checkpoint: str | None = None):
    """``"tgraph"``, ``"tgraph-frozen"`` (no online fine-tuning), ``"tgraph-xgb"`` (online
    through XGBoost), ``"xgb"`` (stock), ``"xgb-warm16"`` or ``"random"``."""
    if name.startswith("tgraph"):
        return cost_models.create(name, checkpoint=checkpoint, seed=seed)
    if checkpoint is not None:
        raise ValueError("--checkpoint only applies to the tgraph cost models")
    return cost_models.create(name)


def make_strategy(name: str, cost_model=None):
    """A search strategy by name (see :data:`tvm_tgraph.names.STRATEGIES`): ``"pruning"`` is
    :class:`search.PruningSearch` with its defaults, ``"pruning-light"`` the same with a
    quarter of the screening (population 256, one generation per round), ``"pruning-light-ucb"``
    the light one picking its explorers by ``cost_model``'s uncertainty (a
    :class:`~cost_models.TGraphCostModel`), ``"pruning-light-pool64"`` / ``"pruning-light-pool128"``
    the light one choosing from a pool of 64 / 128 instead of 256, ``"pruning-light-pop192"`` the
    light one with a proposer population of 192 instead of 256, ``"pruning-light-share20"`` the
    light one proposing with a population of 128 in rounds that start while the cost model's
    share of the run so far is above 20% (``max_model_share=0.2``), ``"pruning-fast"`` the light proposer unguided,
    every candidate of a round (up to 512) scored once, in the pool, ``"pruning-fast-256"`` the
    same with half the pool (population 128, up to 256 scored)."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown search strategy {name!r}: use one of {', '.join(STRATEGIES)}")
    if name == "pruning":
        return PruningSearch()
    if name == "pruning-light":
        return PruningSearch(population_size=256, genetic_num_iters=1)
    if name == "pruning-light-ucb":
        if not isinstance(cost_model, cost_models.TGraphCostModel):
            raise ValueError("the pruning-light-ucb search needs a TGraph cost model (its uncertainty picks "
                             f"the explorers), not {type(cost_model).__name__}")
        return PruningSearch(population_size=256, genetic_num_iters=1, uncertainty_from=cost_model)
    if name.startswith("pruning-light-pool"):
        return PruningSearch(pool_size=int(name.removeprefix("pruning-light-pool")), population_size=256,
                             genetic_num_iters=1)
    if name == "pruning-light-pop192":
        return PruningSearch(population_size=192, genetic_num_iters=1)
    if name == "pruning-light-share20":
        return PruningSearch(population_size=256, genetic_num_iters=1, max_model_share=0.2)
    if name == "pruning-fast":
        return PruningSearch(pool_size=512, population_size=256, genetic_num_iters=1, guide_proposer=False)
    if name == "pruning-fast-256":
        return PruningSearch(pool_size=256, population_size=128, genetic_num_iters=1, guide_proposer=False)
    return name


def is_relax_module(mod) -> bool:
    """Whether ``mod`` holds a Relax function (a whole model) rather than TIR only."""
    from tvm import relax

    return any(isinstance(func, relax.Function) for func in mod.functions.values())


def check_static_shapes(mod) -> None:
    """Raise ``ValueError`` naming the first PrimFunc parameter of ``mod`` whose shape is not
    constant: MetaSchedule cannot tune symbolic shapes (bind them first, e.g. with
    ``PrimFunc.specialize``)."""
    import tvm

    for gvar, func in mod.functions.items():
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        for param in func.params:   # a buffer parameter carries its shape (TVM 0.27)
            shape = list(getattr(param, "shape", None) or [])
            if not all(isinstance(dim, (int, tvm.tirx.IntImm)) for dim in shape):
                raise ValueError(
                    f"{gvar.name_hint}: buffer {param.name} has the symbolic shape {shape}; "
                    "MetaSchedule tunes static shapes only (bind them first, e.g. with PrimFunc.specialize)")


def tune(mod, cost_model, trials: int, work_dir: str | Path, target=None, seed: int = 0,
         trials_per_iter: int = 16, builder=None, runner=None, strategy="evolutionary",
         progress=True, shutdown_builder: bool = True, task_scheduler: str = "gradient",
         checkpoint: str | Path | None = None) -> TuneSummary:
    """Tune ``mod`` (TIR, or a Relax model: every task) and summarise the result.

    Parameters
    ----------
    mod : tvm.IRModule
    cost_model : str or ms.cost_model.CostModel
        A name for :func:`make_cost_model` or a cost model object.
    trials : int
        Measurement budget (all tasks together).
    work_dir : path
        Where the JSON database and logs go; an existing database there is appended to.
    target : str, dict or tvm.target.Target, optional
        Default: llvm on the host CPU.
    seed : int
    trials_per_iter : int
        Candidates measured per search round.
    builder, runner : optional
        Default: :class:`~tvm_tgraph.measure.FastBuilder` and the tuning ``LocalRunner`` of docs/architecture.md.
    strategy : str or ms.search_strategy.SearchStrategy
        A name for :func:`make_strategy` or a strategy object (default ``"evolutionary"``).
    progress : bool or tqdm
        Show a progress bar of measured trials (or advance this one).
    shutdown_builder : bool
        Stop the builder's workers at the end (keep them for a next call with False).
    task_scheduler : str
        How a Relax model's budget is shared among its tasks: MetaSchedule's ``"gradient"``
        (the next round goes to the task whose latency is expected to drop most) or
        ``"round-robin"`` (each task in turn).
    checkpoint : path, optional
        Weights for a TGraph cost model named by ``cost_model`` instead of the shipped
        checkpoint (not used by the other cost models).
    """
    register_light_tensor_intrin()
    import tvm
    from tvm.s_tir import meta_schedule as ms

    if not isinstance(target, tvm.target.Target):
        target = make_target(target)
    if not is_relax_module(mod):
        check_static_shapes(mod)
    if isinstance(cost_model, str):
        cost_model = make_cost_model(cost_model, seed=seed,
                                     checkpoint=checkpoint if cost_model.startswith("tgraph") else None)
    if isinstance(strategy, str):
        strategy = make_strategy(strategy, cost_model)
        if isinstance(strategy, str):   # one of MetaSchedule's own, made as tune_tir makes it from its name
            strategy = ms.search_strategy.SearchStrategy.create(strategy)
    timed_search = TimedSearch(strategy)
    timed_model = TimedCostModel(cost_model)
    work_dir = Path(work_dir)
    database = open_database(work_dir, create=True)
    builder = builder or FastBuilder()
    runner = runner or make_runner()
    from tqdm import tqdm

    start = time.perf_counter()
    marks: list[tuple[float, float]] = []
    callbacks = list(ms.measure_callback.MeasureCallback.create("default"))
    callbacks.append(trial_clock_callback(start, timed_model, marks))
    own_bar = progress is True
    if progress:
        bar = tqdm(total=trials, desc=f"tuning ({type(cost_model).__name__})", unit="trial") if own_bar else progress
        callbacks.append(progress_callback(bar))
    common = dict(
        target=target, work_dir=str(work_dir), max_trials_global=trials,
        num_trials_per_iter=trials_per_iter, builder=builder, runner=runner,
        database=database, cost_model=timed_model, seed=seed, measure_callbacks=callbacks, strategy=timed_search,
        task_scheduler=task_scheduler,
    )
    # MetaSchedule's logging set-up raises its logger to DEBUG; keep the caller's level.
    ms_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    level = ms_logger.level
    if is_relax_module(mod):
        with target:
            lowered = tvm.relax.get_pipeline("zero")(mod)
        ms.relax_integration.tune_relax(mod=lowered, params={}, **common)
    else:
        ms.tune_tir(mod=mod, **common)
    wall = time.perf_counter() - start
    ms_logger.setLevel(level)
    if own_bar:
        callbacks[-1].bar.close()
    if shutdown_builder and isinstance(builder, FastBuilder):
        builder.shutdown()
    curve = tuning_curve(*latencies_in_trial_order(work_dir))
    best = float(curve[-1]) if len(curve) else float("inf")
    best_trial = int(np.argmax(curve == best)) + 1 if np.isfinite(best) else 0
    clock = np.asarray(marks, dtype=np.float64).reshape(-1, 2)
    return TuneSummary(best, best_trial, len(curve), wall, curve, str(work_dir), timed_model.total_seconds,
                       dict(timed_model.seconds), clock[:, 0], clock[:, 1], timed_search.clock.seconds)


def tuning_curve(latency: np.ndarray, workload: np.ndarray) -> np.ndarray:
    """Sum over tasks of each task's best latency so far, after each trial.

    Shapes: ``latency (T,)``, ``workload (T,)`` -> ``(T,)`` (``inf`` until every task
    has a successful measurement).
    """
    tasks = np.unique(workload)
    per_task = np.full((len(tasks), len(latency)), np.inf)
    for row, task in enumerate(tasks):
        mine = np.where(workload == task, latency, np.inf)
        per_task[row] = best_so_far(mine)
    return per_task.sum(axis=0)
