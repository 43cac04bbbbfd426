"""The in-model guard: leave a model's element-wise tasks on TVM's default schedule when
their tuned schedules make the whole model slower.

MetaSchedule measures every candidate of a task alone, its inputs warm in the cache, and
keeps the fastest. Inside the model the same kernel runs between others, on data its
producer just wrote, and for small memory-bound kernels (batch norm, reshapes, slices,
element-wise epilogues that were not fused) the schedule that wins alone can lose there: on
an AMD EPYC (``znver3``) host the tuned element-wise tasks made MobileNetV2 and the
transformer block slower in 9 runs of 9 (``benchmarks/results/default_schedules_*.md``).

The guard builds the model twice, every task tuned and the *spatial-only* tasks (no
reduction block: what MetaSchedule's own task names call batch_norm, reshape, add, ...) on
TVM's default schedule, times the two in turn with the Relax VM and keeps the faster. It
costs two builds and a few seconds of timing, once, after tuning; its decision is stored
beside the database (:data:`GUARD_FILE`) so that :func:`compile_guarded` builds the same
model later.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..convert.tir.program_graph import task_graph
from ..convert.tir.schema import KIND
from ..database import open_database
from ..errors import UnsupportedProgramError
from ..files import atomic_write_bytes
from ..model_zoo import extract_tir_tasks
from .end_to_end import UntunedModel, compile_tuned, run_and_time, time_in_turn

#: The guard's decision, beside the database it was made for.
GUARD_FILE = "in_model_guard.json"
#: Rounds of timing the two builds in turn (A, B, A, B, ...); each round is the Relax VM's
#: median of repeats (:data:`~tvm_tgraph.workflows.end_to_end.E2E_EVALUATOR`).
GUARD_ROUNDS = 3


def is_spatial_only(task_mod) -> bool:
    """True if the task's PrimFunc has no reduction block (element-wise, reshape, slice,
    broadcast, ...); False for a reduction or a program the graph converter cannot read."""
    try:
        return KIND["block_reduction"] not in task_graph(task_mod).node_kind
    except UnsupportedProgramError:
        return False


@dataclass
class GuardDecision:
    """What the guard measured and chose for one database.

    ``default_tasks``: the tasks built with TVM's default schedule (empty: every task keeps
    its tuned schedule); ``candidates``: the spatial-only tasks that have a tuned record;
    ``tuned_s`` / ``guarded_s``: median over rounds of the model's latency (s) with every task
    tuned and with the candidates on the default (None without candidates); ``wall_s``: the
    guard's own time, builds and timing.
    """

    default_tasks: list
    candidates: list
    tuned_s: float
    guarded_s: float | None
    wall_s: float


def decide(mod, target, work_dir: str | Path, inputs: list[np.ndarray], tasks=None,
           rounds: int = GUARD_ROUNDS) -> tuple[object, GuardDecision]:
    """Build ``mod`` with ``work_dir``'s schedules, with and without its spatial-only tasks'
    records, time both in turn on ``inputs`` and keep the faster.

    ``tasks``: ``mod``'s tasks as :func:`~tvm_tgraph.model_zoo.extract_tir_tasks` gives them
    (extracted here if None). Returns the chosen executable and the decision.
    """
    start = time.perf_counter()
    tasks = extract_tir_tasks(mod, target) if tasks is None else tasks
    database = open_database(work_dir)
    candidates = [name for name, task_mod, _ in tasks if database.has_workload(task_mod) and is_spatial_only(task_mod)]
    tuned = compile_tuned(mod, target, database)
    if not candidates:
        latency = run_and_time(tuned, inputs)[1]
        return tuned, GuardDecision([], [], latency, None, time.perf_counter() - start)
    guarded = compile_tuned(mod, target, database, default_for=candidates, tasks=tasks)
    times = time_in_turn({"tuned": tuned, "guarded": guarded}, inputs, rounds)
    tuned_s, guarded_s = float(np.median(times["tuned"])), float(np.median(times["guarded"]))
    keep_default = guarded_s < tuned_s
    decision = GuardDecision(candidates if keep_default else [], candidates, tuned_s, guarded_s,
                             time.perf_counter() - start)
    return (guarded if keep_default else tuned), decision


def guard(mod, target, work_dir: str | Path, base: UntunedModel, tasks=None) -> tuple[float, float, GuardDecision]:
    """Decide for ``work_dir``'s database (:func:`decide`, on ``base``'s input), store the
    decision beside it in :data:`GUARD_FILE` (replaced atomically) for :func:`compile_guarded`,
    and time the chosen build again, :data:`GUARD_ROUNDS` times: the guard picks the lower of
    two noisy medians, so its own figure would favour the guarded build.

    Returns
    -------
    (float, float, GuardDecision)
        Latency of the chosen build (s, median over the rounds of each round's median of
        repeats), the largest absolute difference between its output and ``base``'s, and the
        decision.
    """
    executable, decision = decide(mod, target, work_dir, base.inputs, tasks)
    atomic_write_bytes(Path(work_dir) / GUARD_FILE, json.dumps(asdict(decision), indent=1).encode())
    output, first, _ = run_and_time(executable, base.inputs)
    latency = float(np.median([first] + [run_and_time(executable, base.inputs)[1] for _ in range(GUARD_ROUNDS - 1)]))
    return latency, float(np.max(np.abs(output - base.output))), decision


def compile_guarded(mod, target, work_dir: str | Path):
    """Build ``mod`` with ``work_dir``'s schedules as the guard chose (:data:`GUARD_FILE`,
    written by ``tgraph tune`` on a Relax model); every task tuned where it has not run."""
    path = Path(work_dir) / GUARD_FILE
    default_tasks = json.loads(path.read_text())["default_tasks"] if path.is_file() else []
    return compile_tuned(mod, target, work_dir, default_for=default_tasks)
