"""Whole-model builds: compile a Relax model with tuned schedules or with TVM's defaults,
run it with the Relax VM and time it end to end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..database import open_database
from ..model_zoo import extract_tir_tasks

#: Timing of a whole model: enough calls per repeat for ~50 ms, median of the repeats.
E2E_EVALUATOR = {"number": 1, "repeat": 7, "min_repeat_ms": 50}


def best_records_except(source, tasks, default_for):
    """A MetaSchedule ``MemoryDatabase`` with the best record of each of ``tasks`` (``(name,
    IRModule, weight)``) in the database ``source``, except the tasks named in ``default_for``."""
    from tvm.s_tir import meta_schedule as ms

    kept = ms.database.MemoryDatabase()
    for name, mod, _ in tasks:
        if name in default_for or not source.has_workload(mod):
            continue
        for record in source.get_top_k(source.commit_workload(mod), 1):
            kept.commit_tuning_record(ms.database.TuningRecord(
                record.trace, kept.commit_workload(mod), record.run_secs, record.target, record.args_info))
    return kept


def compile_tuned(mod, target, database, default_for=(), tasks=None):
    """Build ``mod`` (an imported Relax model) with the best schedules of ``database`` (a
    MetaSchedule database, or the directory of a ``JSONDatabase``); tasks without a record,
    and the tasks named in ``default_for``, get TVM's default schedules.

    ``tasks``: ``mod``'s tasks as :func:`~tvm_tgraph.model_zoo.extract_tir_tasks` gives them,
    needed with ``default_for`` only (extracted here if None).
    """
    from tvm.s_tir import meta_schedule as ms

    if isinstance(database, (str, Path)):
        database = open_database(database)
    if default_for:
        tasks = extract_tir_tasks(mod, target) if tasks is None else tasks
        database = best_records_except(database, tasks, set(default_for))
    return ms.relax_integration.compile_relax(database, mod, target, params=None)


def compile_default(mod, target):
    """Build ``mod`` as ``tvm.compile`` does without tuning."""
    import tvm

    return tvm.compile(mod, target)


def random_inputs(mod, seed: int = 0) -> list[np.ndarray]:
    """Random arrays matching the parameters of ``mod["main"]`` (static shapes only)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in mod["main"].params:
        info = param.ty
        shape = [int(dim) for dim in info.shape]
        arrays.append(rng.standard_normal(shape).astype(str(info.dtype)))
    return arrays


def run_and_time(executable, inputs: list[np.ndarray]) -> tuple[np.ndarray, float, list[float]]:
    """(output of ``main``, median latency, every repeat's latency), seconds, on the CPU
    with the Relax VM."""
    import tvm
    from tvm import relax

    device = tvm.cpu()
    vm = relax.VirtualMachine(executable, device)
    args = [tvm.runtime.tensor(array, device) for array in inputs]
    output = vm["main"](*args)
    if not hasattr(output, "numpy"):  # models imported from PyTorch return a tuple
        output = output[0]
    timer = vm.time_evaluator("main", device, **E2E_EVALUATOR)
    repeats = [float(r) for r in timer(*args).results]
    return output.numpy(), float(np.median(repeats)), repeats


def time_in_turn(executables: dict, inputs: list[np.ndarray], rounds: int) -> dict[str, list[float]]:
    """Each executable's latency (s, :func:`run_and_time`'s median of repeats) in each of
    ``rounds`` rounds, the executables timed in turn (A, B, A, B, ...) so that a drift of the
    machine's speed reaches all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in executables}
    for _ in range(rounds):
        for name, executable in executables.items():
            times[name].append(run_and_time(executable, inputs)[1])
    return times


@dataclass
class UntunedModel:
    """A model as TVM builds it without tuning: one random input, its output, the latency (s)."""

    inputs: list
    output: np.ndarray
    latency_s: float


def untuned(mod, target) -> UntunedModel:
    """Build ``mod`` with ``tvm.compile`` (no tuning), run it on one random input, time it."""
    inputs = random_inputs(mod)
    output, latency, _ = run_and_time(compile_default(mod, target), inputs)
    return UntunedModel(inputs, output, latency)
