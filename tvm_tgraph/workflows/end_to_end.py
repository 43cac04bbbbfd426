"""Whole-model builds: compile a Relax model with tuned schedules or with TVM's defaults,
run it with the Relax VM and time it end to end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..database import open_database

#: Timing of a whole model: enough calls per repeat for ~50 ms, median of the repeats.
E2E_EVALUATOR = {"number": 1, "repeat": 7, "min_repeat_ms": 50}


@dataclass
class EndToEnd:
    """End-to-end latency (seconds, median over repeats) of the tuned and default builds."""

    tuned_s: float
    default_s: float
    max_abs_diff: float  # between the two builds' outputs on the same random input

    @property
    def speedup(self) -> float:
        return self.default_s / self.tuned_s


def compile_tuned(mod, target, work_dir: str | Path):
    """Build ``mod`` (an imported Relax model) with the best schedules of ``work_dir``'s
    database; tasks without a record get TVM's default (DLight) schedules."""
    from tvm.s_tir import meta_schedule as ms

    return ms.relax_integration.compile_relax(open_database(work_dir), mod, target, params=None)


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


def time_tuned(mod, target, work_dir: str | Path, base: UntunedModel) -> tuple[float, float]:
    """Build ``mod`` with ``work_dir``'s schedules, run it on ``base``'s input and time it.

    Returns
    -------
    (float, float)
        Latency (s, median of repeats) and the largest absolute difference between its
        output and ``base``'s.
    """
    output, latency, _ = run_and_time(compile_tuned(mod, target, work_dir), base.inputs)
    return latency, float(np.max(np.abs(output - base.output)))


def measure_end_to_end(mod, target, work_dir: str | Path) -> EndToEnd:
    """Build ``mod`` tuned (from ``work_dir``) and untuned, check both compute the same
    thing on one random input, and time both."""
    base = untuned(mod, target)
    tuned_s, diff = time_tuned(mod, target, work_dir, base)
    return EndToEnd(tuned_s, base.latency_s, diff)
