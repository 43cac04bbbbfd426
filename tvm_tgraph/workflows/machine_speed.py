"""Whether a comparison's runs were timed on machines of one speed.

The CPU's name is not enough: machines reporting the same LLVM CPU (``rocketlake``) ran the
untuned ResNet-style model in 20.6 ms in one session and 23.0 ms in another the same day
(README, Benchmarks), a gap as large as the ones being compared. So every run records the
untuned build of its workload (an operator's or a whole model's), timed in the same harness
call as the run itself, and a report checks that these timings agree.
"""

from __future__ import annotations

import numpy as np

#: Untuned builds of one workload timed further apart than this (max / min) mean the runs
#: were measured on machines of different speed.
SPEED_TOLERANCE = 1.05

#: Timing of an untuned operator build: enough calls per repeat for ~50 ms, median of the repeats.
UNTUNED_EVALUATOR = {"number": 1, "repeat": 7, "min_repeat_ms": 50}


def spread(values) -> dict:
    """``{"median", "min", "max"}`` of ``values`` as floats."""
    return {"median": float(np.median(values)), "min": float(np.min(values)), "max": float(np.max(values))}


def machine_speeds(untuned_s: list[float | None]) -> dict:
    """Whether runs of one workload were timed at one machine speed, judged by the untuned
    build each run's harness call timed (``untuned_s``, one per run, None where a run did not
    record it): ``{"untuned_s": spread or None, "unknown": runs without it, "comparable": bool}``."""
    known = [s for s in untuned_s if s is not None]
    unknown = len(untuned_s) - len(known)
    timed = spread(known) if known else None
    within = timed is None or timed["max"] <= timed["min"] * SPEED_TOLERANCE
    return {"untuned_s": timed, "unknown": unknown, "comparable": within and unknown == 0}


def speed_line(speed: dict) -> str:
    """One markdown line saying whether the runs' timings can be compared (``speed`` as
    :func:`machine_speeds` gives it)."""
    timed = speed["untuned_s"]
    timings = "" if timed is None else \
        f"the untuned build timed {timed['min'] * 1e3:.3f}-{timed['max'] * 1e3:.3f} ms in the runs' calls"
    if speed["comparable"]:
        return f"Machine speed: one speed for every run ({timings})."
    why = [f"{speed['unknown']} runs recorded no untuned timing (made before runs recorded it)"] if speed["unknown"] else []
    if timed is not None and timed["max"] > timed["min"] * SPEED_TOLERANCE:
        why.append(timings)
    return ("**Machine speed: not shown to be one for every run** (" + "; ".join(why) + "): compare only runs "
            "timed at one machine speed (measure the others again on this machine).")


def time_untuned_operator(mod, target, seed: int = 0) -> float:
    """Latency (s, median of repeats) of ``mod`` (an operator's IRModule, one function
    ``main``) built by ``tvm.compile`` without any schedule, on random inputs."""
    import tvm
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    rng = np.random.default_rng(seed)
    device = tvm.cpu()
    args = [tvm.runtime.tensor(rng.standard_normal([int(d) for d in arg.shape]).astype(str(arg.dtype)), device)
            for arg in ArgInfo.from_prim_func(mod["main"])]
    executable = tvm.compile(mod, target)
    timer = executable.mod.time_evaluator("main", device, **UNTUNED_EVALUATOR)
    return float(np.median(timer(*args).results))
