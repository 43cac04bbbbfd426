"""How the tuning budget was shared among a model's tasks, read from ``tgraph compare --models`` runs.

MetaSchedule's task scheduler decides how many of a model's trials each task gets (the
``gradient`` scheduler, the comparison's default, favours the tasks whose best latency, times
their weight, still improves). This reads every run directory ``RUNS/<model>/<method>/seed<k>/``
(its database, records in measurement order) and counts, per task, the records among the
run's first ``b x tasks`` trials for each checkpoint ``b`` (trials per task). Each task is
marked *spatial-only* (no reduction block: the tasks the in-model guard may leave on TVM's
default schedule, ``tvm_tgraph.workflows.schedule_guard.is_spatial_only``) or not, with the
number of distinct schedules among 64 random draws of its design space (``tgraph collect``'s
probe: a search that finds nothing new stops giving a task trials).

    python benchmarks/task_budget.py --runs OUT/runs [--checkpoints 8,32] [--out task_budget]

Reads databases only (no timing). Writes ``benchmarks/results/<out>.{json,md}``: per model
and checkpoint, the share of the trials each method spent on spatial-only tasks (median and
range over seeds) and a per-task table of the median trials over seeds.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import tvm_ffi

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tvm_tgraph.database import read_database  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.model_zoo import extract_tir_tasks  # noqa: E402
from tvm_tgraph.tvm_env import make_target  # noqa: E402
from tvm_tgraph.workflows.collect import SPACE_PROBE_DRAWS, distinct_candidates  # noqa: E402
from tvm_tgraph.workflows.schedule_guard import is_spatial_only  # noqa: E402
from tvm_tgraph.workloads import load_module  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def trials_per_task(run_dir: Path, hashes: dict[str, str], trials: int) -> dict[str, int]:
    """Task name -> records among the run's first ``trials`` measured candidates."""
    workloads, records = read_database(run_dir)
    counted = Counter(workloads[index][0] for index, _ in records[:trials])
    return {name: counted.get(shash, 0) for name, shash in hashes.items()}


def model_budget(model: str, model_dir: Path, checkpoints: list[int]) -> dict:
    """Per checkpoint, method and seed: trials per task; plus each task's kind and weight."""
    target = make_target(None)
    tasks = extract_tir_tasks(load_module(model), target)
    hashes = {name: str(tvm_ffi.structural_hash(mod)) for name, mod, _ in tasks}
    info = {name: {"spatial_only": is_spatial_only(mod), "weight": weight,
                   "distinct_schedules": distinct_candidates(mod, target)}
            for name, mod, weight in tasks}
    runs: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    for run_dir in sorted(model_dir.glob("*/seed*")):
        method, seed = run_dir.parent.name, run_dir.name
        for b in checkpoints:
            counts = trials_per_task(run_dir, hashes, b * len(tasks))
            runs.setdefault(str(b), {}).setdefault(method, {})[seed] = counts
    return {"tasks": info, "trials": runs}


def spatial_share(counts: dict[str, int], info: dict) -> float:
    """Share of the counted trials spent on spatial-only tasks."""
    total = sum(counts.values())
    return sum(n for name, n in counts.items() if info[name]["spatial_only"]) / total if total else float("nan")


def markdown(report: dict) -> list[str]:
    lines = ["# Trials per task chosen by the task scheduler", "", f"Command: `{report['command']}`", "",
             "Read from the run databases (measurement order); no timing. Spatial-only tasks have no reduction "
             "block (the in-model guard's candidates).", ""]
    for model, entry in report["models"].items():
        info = entry["tasks"]
        spatial = sorted(name for name, i in info.items() if i["spatial_only"])
        lines += [f"## {model} ({len(info)} tasks, {len(spatial)} spatial-only)", ""]
        for b, methods in entry["trials"].items():
            lines += [f"### first {b} x {len(info)} trials", "",
                      "| method | share on spatial-only tasks, median [min-max] over seeds |", "| --- | --- |"]
            for method, seeds in methods.items():
                shares = [spatial_share(c, info) for c in seeds.values()]
                lines.append(f"| {method} | {np.median(shares):.3f} [{min(shares):.3f}-{max(shares):.3f}] |")
            names = sorted(info, key=lambda n: (not info[n]["spatial_only"], n))
            lines += ["", "Median trials over seeds:", "",
                      f"| task | spatial-only | weight | distinct schedules in {SPACE_PROBE_DRAWS} draws | "
                      + " | ".join(methods) + " |",
                      "| --- | --- | --- | --- | " + " | ".join("---" for _ in methods) + " |"]
            for name in names:
                cells = [f"{np.median([c[name] for c in seeds.values()]):g}" for seeds in methods.values()]
                lines.append(f"| {name} | {'yes' if info[name]['spatial_only'] else 'no'} | {info[name]['weight']} | "
                             f"{info[name]['distinct_schedules']} | "
                             + " | ".join(cells) + " |")
            lines.append("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", required=True, help="the comparison's runs directory (RUNS/<model>/<method>/seed<k>)")
    parser.add_argument("--checkpoints", default="8,32", help="trials per task (default 8,32)")
    parser.add_argument("--out", default="task_budget")
    args = parser.parse_args()
    runs = Path(args.runs)
    models = sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    if not models:
        parser.exit(2, f"error: {runs} holds no model directories of tgraph compare --models runs\n")
    try:
        checkpoints = [int(b) for b in args.checkpoints.split(",")]
    except ValueError:
        parser.exit(2, f"error: --checkpoints must be comma-separated integers, got {args.checkpoints!r}\n")
    report = {"command": "python benchmarks/task_budget.py " + shlex.join(sys.argv[1:]),
              "models": {p.name: model_budget(p.name, p, checkpoints) for p in models}}
    lines = markdown(report)
    atomic_write_bytes(RESULTS / f"{args.out}.json", json.dumps(report, indent=1).encode())
    atomic_write_bytes(RESULTS / f"{args.out}.md", "\n".join(lines).encode())
    print("\n".join(lines))


if __name__ == "__main__":
    main()
