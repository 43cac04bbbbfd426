"""Whole models side by side: each method tunes every task of a Relax model within one
budget, and the model is timed end to end at budget checkpoints.

A run tunes the model once with MetaSchedule's task scheduler (``tune_relax``, budget =
trials per task x tasks) and records when each trial's result arrived. Then, for each
checkpoint ``b`` (trials per task), the database as it stood after ``b x tasks`` trials is
written beside the run (``at<b>/``), the model is compiled with it (tasks without a record
keep TVM's default schedule, as users would get them), the in-model guard chooses between
the element-wise tasks' tuned schedules and TVM's default
(:mod:`~tvm_tgraph.workflows.schedule_guard`, as ``tgraph tune`` does) and the chosen build is
timed with the Relax VM. The
curves are end-to-end latency against measured trials and against the tuning wall time
spent to reach each checkpoint (compiling and timing at checkpoints is not counted: a user
tuning once would not pay it; the guard's time, which such a user pays once, is reported
apart).

Each run lives in ``OUT/runs/<model>/<method>/seed<k>/``: ``tuning.json`` when its tuning
finished (an interrupted tuning is set aside and rerun), ``result.json`` when its
checkpoints are timed too (a finished run is read back when the comparison is rerun).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..database import write_database_prefix
from ..files import atomic_write_bytes
from ..model_zoo import extract_tir_tasks
from ..tvm_env import host_cpu_names
from ..workloads import load_module
from .compare import (XGB_METHODS, finished_run, method_parts, ratio_text, ratios_to_stronger_xgb, reach_text,
                      reference_text, run_directory, run_each, seen_in_training, set_aside_interrupted, share_text,
                      time_shares)
from .end_to_end import UntunedModel, untuned
from .machine_speed import machine_speeds, speed_line, spread
from .schedule_guard import guard
from .tuning import tune

#: The full-size pruning search is left out: on model_resnet (3 seeds) it took 2.3x the wall
#: time of the light and fast ones and was not faster (README, Benchmarks). The first is the
#: best measured on model_resnet and model_mobilenet_v2 (3 seeds each).
DEFAULT_MODEL_METHODS = ("tgraph-xgb+pruning-light", "tgraph-frozen+pruning-fast-256", "tgraph+pruning-light",
                         "xgb-warm16+pruning-fast", "tgraph", "xgb", "xgb-warm16", "random")
#: Trials per task at which the model is compiled and timed.
CHECKPOINTS = (2, 4, 8, 16, 32)


@dataclass
class ModelRun:
    """One whole-model tuning run and its end-to-end latencies.

    ``latency_s[str(b)]``: end-to-end latency (s, median of repeats) built with the first
    ``b x tasks`` trials; ``wall_at_s[str(b)]`` / ``cost_model_at_s[str(b)]``: tuning wall time
    and cost-model time spent by then; ``max_abs_diff[str(b)]``: largest difference between
    that build's output and the untuned build's on the same random input. ``untuned_s``: the
    untuned build's latency timed in the same call as this run's checkpoints, the speed of the
    machine then (machines with the same CPU name differ by 10% and more: see
    :mod:`~tvm_tgraph.workflows.machine_speed`);
    None for runs recorded before it was. ``guard[str(b)]``: the in-model guard's decision for
    that build (:class:`~tvm_tgraph.workflows.schedule_guard.GuardDecision` as a dict); None
    for runs timed before the guard existed.
    """

    model: str
    method: str
    seed: int
    tasks: int
    trials: int
    wall_s: float
    cost_model_s: float
    latency_s: dict
    wall_at_s: dict
    cost_model_at_s: dict
    max_abs_diff: dict
    cpu: dict
    cost_model_split: dict | None = None   # {"predict": s, "update": s}
    untuned_s: float | None = None
    guard: dict | None = None
    search_s: float | None = None


class LoadedModel:
    """A model of the comparison: loaded, split into tasks and built untuned at most once,
    and only when a run needs it (finished runs are read back without any of it)."""

    def __init__(self, name: str, target) -> None:
        self.name = name
        self.target = target

    @cached_property
    def mod(self):
        return load_module(self.name)

    @cached_property
    def task_list(self) -> list[tuple[str, object, int]]:
        """``(name, IRModule, weight)`` of each task MetaSchedule extracts."""
        return extract_tir_tasks(self.mod, self.target)

    @property
    def tasks(self) -> int:
        return len(self.task_list)

    @cached_property
    def untuned(self) -> UntunedModel:
        """The reference the tuned builds are timed against and checked with."""
        return untuned(self.mod, self.target)


def _tune_once(model: LoadedModel, method: str, seed: int, trials: int, run_dir: Path, trials_per_iter: int,
               builder, runner, checkpoint) -> dict:
    """Tune (or read back the finished tuning of) one run; returns ``tuning.json``'s content."""
    tuning_file = run_dir / "tuning.json"
    if tuning_file.is_file():
        return json.loads(tuning_file.read_text())
    set_aside_interrupted(run_dir)
    cost_model, strategy, scheduler = method_parts(method)
    summary = tune(model.mod, cost_model, trials, run_dir, target=model.target, seed=seed,
                   trials_per_iter=trials_per_iter, builder=builder, runner=runner, strategy=strategy, progress=False,
                   shutdown_builder=False, task_scheduler=scheduler, checkpoint=checkpoint)
    tuning = {"model": model.name, "method": method, "seed": seed, "task_scheduler": scheduler,
              "checkpoint": None if checkpoint is None else str(checkpoint),
              "trials": summary.trials, "wall_s": summary.wall_s,
              "cost_model_s": summary.cost_model_s, "cost_model_split": summary.cost_model_split,
              "trial_wall_s": summary.trial_wall_s.tolist(),
              "trial_cost_model_s": summary.trial_cost_model_s.tolist(), "cpu": host_cpu_names(),
              "search_s": summary.search_s}
    atomic_write_bytes(tuning_file, json.dumps(tuning).encode())
    return tuning


def run_model(model: LoadedModel, method: str, seed: int, trials_per_task: int, checkpoints: tuple[int, ...],
              out_dir: Path, trials_per_iter: int, builder, runner, checkpoint=None) -> ModelRun:
    """Tune ``model`` with ``method`` and time it at each checkpoint (or read the finished run);
    ``checkpoint``: the TGraph methods' weights (default: the shipped checkpoint)."""
    run_dir = run_directory(out_dir, model.name, method, seed)
    stored = finished_run(run_dir, ModelRun, model.name, method, seed)
    if stored is not None:
        return stored
    tuning = _tune_once(model, method, seed, trials_per_task * model.tasks, run_dir, trials_per_iter, builder, runner,
                        checkpoint)
    latency, wall_at, cost_at, diff, decisions = {}, {}, {}, {}, {}
    for budget in checkpoints:
        kept = write_database_prefix(run_dir, run_dir / f"at{budget}", budget * model.tasks)
        latency[str(budget)], diff[str(budget)], decision = guard(model.mod, model.target, run_dir / f"at{budget}",
                                                                  model.untuned, model.task_list)
        decisions[str(budget)] = asdict(decision)
        wall_at[str(budget)] = tuning["trial_wall_s"][kept - 1] if kept else 0.0
        cost_at[str(budget)] = tuning["trial_cost_model_s"][kept - 1] if kept else 0.0
    result = ModelRun(model.name, method, seed, model.tasks, tuning["trials"], tuning["wall_s"], tuning["cost_model_s"],
                      latency, wall_at, cost_at, diff, tuning["cpu"], tuning.get("cost_model_split"),
                      model.untuned.latency_s, decisions, tuning.get("search_s"))
    atomic_write_bytes(run_dir / "result.json", json.dumps(asdict(result), indent=1).encode())
    return result


def compare_models(models: list[str], methods: list[str], seeds: list[int], trials_per_task: int,
                   checkpoints: tuple[int, ...], out_dir: str | Path, target=None,
                   trials_per_iter: int = 16,
                   checkpoint=None) -> tuple[list[ModelRun], dict[str, float], dict[str, list[str] | None]]:
    """Run (or resume) every (model, method, seed); ``checkpoint``: the TGraph methods'
    weights (default: the shipped checkpoint).

    Returns
    -------
    (list of ModelRun, dict, dict)
        Every run; per model the untuned build's latency (s) where it was measured in this
        call (models whose runs were all finished before are not rebuilt); and per model the
        names of its tasks the TGraph methods' checkpoint was trained on (:func:`~tvm_tgraph.workflows.compare.seen_in_training`).
    """
    if not checkpoints or min(checkpoints) < 1 or max(checkpoints) > trials_per_task:
        raise ValueError(f"checkpoints must lie within 1..{trials_per_task} trials per task, got {list(checkpoints)}")
    loaded: dict[str, LoadedModel] = {}

    def run(name, method, seed, out, target, builder, runner):
        model = loaded.setdefault(name, LoadedModel(name, target))
        return run_model(model, method, seed, trials_per_task, tuple(checkpoints), out, trials_per_iter, builder,
                         runner, checkpoint)

    results = run_each(models, methods, seeds, out_dir, target, "compare models", run)
    # only the untuned builds this call made (cached_property keeps them in the instance's __dict__)
    untuned_s = {name: model.untuned.latency_s for name, model in loaded.items() if "untuned" in vars(model)}
    return results, untuned_s, seen_in_training({name: model.task_list for name, model in loaded.items()}, checkpoint)


def _guard_summary(runs: list[ModelRun], final: str) -> dict | None:
    """The in-model guard at the final checkpoint over ``runs``: in how many it kept the
    element-wise tasks on TVM's default, the model's latency with every task tuned (s, median
    [min-max]) and the guard's time (s, median); None if no run was timed with the guard."""
    decisions = [r.guard[final] for r in runs if r.guard]
    if not decisions:
        return None
    return {"runs": len(decisions), "kept_default": sum(bool(d["default_tasks"]) for d in decisions),
            "candidates": max(len(d["candidates"]) for d in decisions),
            "every_task_tuned_s": spread([d["tuned_s"] for d in decisions]),
            "wall_s": float(np.median([d["wall_s"] for d in decisions]))}


def summarise_models(results: list[ModelRun]) -> dict:
    """Per model and method, over seeds: end-to-end latency at each checkpoint (median,
    min, max), the ratio of the median to the stronger XGBoost's (the lower median of
    ``xgb`` / ``xgb-warm16`` at that checkpoint), trials per task needed to reach the stronger
    XGBoost's final median (the first checkpoint at or below it, per seed), the tuning wall
    time to each checkpoint and the cost model's and the search's own shares of the whole run
    (:func:`~tvm_tgraph.workflows.compare.time_shares`).

    Returns ``{model: {"tasks", "checkpoints", "reference_s", "machine_speed", "methods":
    {method: {...}}}}`` (``reference_s`` None, and no ratio or trials to it, when no XGBoost
    method ran), ``machine_speed`` as :func:`~tvm_tgraph.workflows.machine_speed.machine_speeds`
    gives it.
    """
    summary = {}
    for model in dict.fromkeys(r.model for r in results):
        runs: dict[str, list[ModelRun]] = {}
        for r in results:
            if r.model == model:
                runs.setdefault(r.method, []).append(r)
        checkpoints = sorted({int(b) for rs in runs.values() for r in rs for b in r.latency_s})
        final = str(checkpoints[-1])
        methods = {}
        for method, rs in runs.items():
            methods[method] = {
                "seeds": [r.seed for r in rs],
                "latency_s": {str(b): spread([r.latency_s[str(b)] for r in rs]) for b in checkpoints},
                "wall_at_s": {str(b): float(np.median([r.wall_at_s[str(b)] for r in rs])) for b in checkpoints},
                "wall_s": float(np.median([r.wall_s for r in rs])),
                **time_shares(rs),
                "max_abs_diff": float(max(max(r.max_abs_diff.values()) for r in rs)),
                "guard": _guard_summary(rs, final),
            }
        xgb = [m for m in XGB_METHODS if m in methods]
        reference = min((methods[m]["latency_s"][final]["median"] for m in xgb), default=None)
        if reference is not None:
            ratios = ratios_to_stronger_xgb(methods, "latency_s", checkpoints, xgb)
            for method, entry in methods.items():
                entry["vs_stronger_xgb"] = ratios[method]
                reach = [next((b for b in checkpoints if r.latency_s[str(b)] <= reference), float("inf"))
                         for r in runs[method]]
                entry["trials_per_task_to_reference"] = {"median": float(np.median(reach)), "per_seed": reach}
        tasks = runs[next(iter(runs))][0].tasks
        summary[model] = {"tasks": tasks, "checkpoints": checkpoints, "reference_s": reference,
                          "machine_speed": machine_speeds([r.untuned_s for rs in runs.values() for r in rs]),
                          "methods": methods}
    return summary


def format_models_markdown(summary: dict, untuned_s: dict[str, float] | None = None,
                           seen: dict[str, list[str] | None] | None = None) -> str:
    """Per model: end-to-end latency (ms, median [min-max] over seeds) at each checkpoint,
    tuning wall time to each checkpoint, and the comparison with the stronger XGBoost;
    ``seen``: the tasks the TGraph methods' checkpoint was trained on (:func:`~tvm_tgraph.workflows.compare.seen_in_training`)."""
    lines = []
    for model, entry in summary.items():
        checkpoints = entry["checkpoints"]
        final = str(checkpoints[-1])
        lines += [f"### {model} ({entry['tasks']} tasks)", ""]
        if seen and model in seen:
            names = seen[model]
            lines += ["Tasks the TGraph methods' checkpoint was trained on (same structural hash): "
                      + ("unknown (its training database is not at hand)" if names is None else
                         f"{len(names)} of {entry['tasks']}" + (f" ({', '.join(names)})" if names else "")) + ".", ""]
        if untuned_s and model in untuned_s:
            lines += [f"Untuned `tvm.compile` build: {untuned_s[model] * 1e3:.3f} ms.", ""]
        lines += [speed_line(entry["machine_speed"]), ""]
        lines += [f"Reference (stronger XGBoost's median at {final} trials per task): "
                  f"{reference_text(entry['reference_s'])}", "",
                  "End-to-end latency, ms, median [min-max] over seeds, by trials per task:", "",
                  "| method | " + " | ".join(f"@{b}" for b in checkpoints)
                  + f" | vs stronger XGB @{final} | trials/task to reference | wall s | cost-model share |"
                  " search's own share | max output diff |",
                  "| --- |" + " --- |" * (len(checkpoints) + 6)]
        for method, m in entry["methods"].items():
            cells = [f"{m['latency_s'][str(b)]['median'] * 1e3:.3f} [{m['latency_s'][str(b)]['min'] * 1e3:.3f}-"
                     f"{m['latency_s'][str(b)]['max'] * 1e3:.3f}]" for b in checkpoints]
            reach = m.get("trials_per_task_to_reference", {}).get("median")
            ratio = m.get("vs_stronger_xgb", {}).get(final)
            lines.append(f"| {method} | " + " | ".join(cells)
                         + f" | {ratio_text(ratio)} | "
                         f"{reach_text(reach)} | {m['wall_s']:.0f} | "
                         f"{m['cost_model_share'] * 100:.1f}% | {share_text(m.get('search_share'))} | "
                         f"{m['max_abs_diff']:.1e} |")
        guarded = {method: m["guard"] for method, m in entry["methods"].items() if m.get("guard")}
        if guarded:
            lines += ["", f"In-model guard at @{final} (the table above times the build it chose): element-wise tasks "
                      "left on TVM's default schedule in how many runs, the model with every task tuned instead (ms, "
                      "median [min-max], the guard's own timing), and the guard's time (s, median; paid once, after "
                      "tuning, not counted in the wall time above):", "",
                      "| method | element-wise tasks | default kept in | every task tuned, ms | guard s |",
                      "| --- | --- | --- | --- | --- |"]
            for method, g in guarded.items():
                tuned = g["every_task_tuned_s"]
                lines.append(f"| {method} | {g['candidates']} | {g['kept_default']} of {g['runs']} runs | "
                             f"{tuned['median'] * 1e3:.3f} [{tuned['min'] * 1e3:.3f}-{tuned['max'] * 1e3:.3f}] | "
                             f"{g['wall_s']:.0f} |")
        lines += ["", "Tuning wall time (s, median over seeds) to reach each checkpoint:", "",
                  "| method | " + " | ".join(f"@{b}" for b in checkpoints) + " |",
                  "| --- |" + " --- |" * len(checkpoints)]
        for method, m in entry["methods"].items():
            lines.append(f"| {method} | " + " | ".join(f"{m['wall_at_s'][str(b)]:.0f}" for b in checkpoints) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_model_curves(results: list[ModelRun], path: str | Path, untuned_s: dict[str, float] | None = None) -> None:
    """Per model: end-to-end latency against total measured trials (left) and against tuning
    wall time (right); median over seeds, band = min-max; dotted: the untuned build."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r.model for r in results))
    fig, axes = plt.subplots(len(models), 2, figsize=(13, 4.5 * len(models)), squeeze=False)
    for row, model in enumerate(models):
        by_trials, by_wall = axes[row]
        for method in dict.fromkeys(r.method for r in results if r.model == model):
            runs = [r for r in results if r.model == model and r.method == method]
            checkpoints = sorted(int(b) for b in runs[0].latency_s)
            latency = np.array([[r.latency_s[str(b)] for b in checkpoints] for r in runs]) * 1e3
            wall = np.median([[r.wall_at_s[str(b)] for b in checkpoints] for r in runs], axis=0)
            trials = np.array(checkpoints) * runs[0].tasks
            for ax, x in ((by_trials, trials), (by_wall, wall)):
                line, = ax.plot(x, np.median(latency, axis=0), marker="o", label=f"{method} (n={len(runs)})")
                ax.fill_between(x, latency.min(axis=0), latency.max(axis=0), color=line.get_color(), alpha=0.12)
        tasks = runs[0].tasks
        for ax, xlabel, what in ((by_trials, f"measured trials (all {tasks} tasks)", "trials"),
                                 (by_wall, "tuning wall time (s)", "wall time")):
            if untuned_s and model in untuned_s:
                ax.axhline(untuned_s[model] * 1e3, color="grey", linestyle=":", label="untuned build")
            ax.set_yscale("log")
            ax.set_title(f"{model}: end-to-end latency vs {what}")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("end-to-end latency (ms)")
            ax.grid(True, which="both", alpha=0.3)
        by_trials.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
