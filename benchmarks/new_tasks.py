"""Rank the tasks collected after a checkpoint was trained: zero-shot, against XGBoost.

A checkpoint trained on the archive as it stood at commit ``--since`` has never seen the
tasks the collection added after it (same families, new shapes or new members of the
family). This benchmark takes those tasks from ``--db`` (tasks of the same name and CPU in
the old archive are not new, even if they grew since), ranks every candidate of each with
every checkpoint of ``--checkpoints`` as ``TGraphCostModel`` does (zero-shot, candidates in
measurement order, scored in chunks of 512), and with TVM's ``XGBModel`` trained in the same
run on the whole old archive: the baseline on the same data. Kendall tau, top-1 / top-5
score and OPA per task and mean, and the CPU of this host.

    python benchmarks/new_tasks.py --since 8ab5051 --checkpoints NAME=PATH[,NAME=PATH...]
                                   [--db data/tir_llvm_cpu.tar.xz] [--out new_tasks]

Writes ``benchmarks/results/<out>.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = "data/tir_llvm_cpu.tar.xz"


def archive_at(commit: str, directory: Path) -> Path:
    """``data/tir_llvm_cpu.tar.xz`` as committed at ``commit``, written into ``directory``."""
    path = directory / "tir_llvm_cpu.tar.xz"
    path.write_bytes(subprocess.run(["git", "show", f"{commit}:{ARCHIVE}"], cwd=ROOT, check=True,
                                    capture_output=True).stdout)
    return path


def markdown(report: dict) -> str:
    from tvm_tgraph.workflows.evaluate import METRICS

    lines = [f"Command: `{report['command']}`", "",
             f"CPU: {report['cpu']}; {len(report['tasks'])} new tasks, {report['candidates']} candidates; "
             f"XGBoost trained on the {report['train_tasks']} tasks of the archive at `{report['since']}`.", "",
             "| model | " + " | ".join(METRICS) + " |", "| --- |" + " --- |" * len(METRICS)]
    for name, result in report["results"].items():
        lines.append(f"| {name} | " + " | ".join(f"{result['mean'][m]:.3f}" for m in METRICS) + " |")
    lines += ["", "Kendall tau per task:", "", "| task | candidates | " + " | ".join(report["results"]) + " |",
              "| --- | --- |" + " --- |" * len(report["results"])]
    for task, count in report["tasks"].items():
        lines.append(f"| {task} | {count} | " + " | ".join(
            f"{r['per_task'][task]['kendall_tau']:.3f}" for r in report["results"].values()) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", required=True, help="the commit whose archive the checkpoints were trained on")
    parser.add_argument("--checkpoints", required=True, help="NAME=PATH[,NAME=PATH...]")
    parser.add_argument("--db", default=ARCHIVE)
    parser.add_argument("--out", default="new_tasks")
    args = parser.parse_args(argv)

    from tvm_tgraph.files import atomic_write_bytes
    from tvm_tgraph.measured_tasks import load_measured_tasks
    from tvm_tgraph.tvm_env import host_cpu_names, make_target
    from tvm_tgraph.workflows.evaluate import evaluate, train_baselines

    checkpoints = dict(item.split("=", 1) for item in args.checkpoints.split(","))
    target = make_target(None)
    with tempfile.TemporaryDirectory() as tmp:
        old = load_measured_tasks(archive_at(args.since, Path(tmp)), target)
    seen = {task.name for task in old}
    new = [task for task in load_measured_tasks(args.db, target) if task.name not in seen]
    if not new:
        print(f"{args.db} holds no task that the archive at {args.since} lacks", file=sys.stderr)
        return 2
    print(f"{len(new)} new tasks; training XGBoost on the {len(old)} tasks of the archive at {args.since}")
    baselines = train_baselines(("xgb",), old)
    results = {}
    for name, path in checkpoints.items():
        scored = evaluate(new, old, path, baselines=baselines, online_ks=())["results"]["zero_shot"]
        results[name] = scored.pop("tgraph")
        results.update(scored)     # XGBoost, scored in the first checkpoint's call only
        baselines = {}
    report = {"command": "python benchmarks/new_tasks.py " + shlex.join(sys.argv[1:] if argv is None else argv),
              "cpu": host_cpu_names(), "since": args.since, "train_tasks": len(old),
              "tasks": {task.name: len(task.latency) for task in new},
              "candidates": int(sum(len(task.latency) for task in new)), "checkpoints": checkpoints,
              "results": results}
    RESULTS.mkdir(exist_ok=True)
    atomic_write_bytes(RESULTS / f"{args.out}.json", json.dumps(report, indent=1).encode())
    atomic_write_bytes(RESULTS / f"{args.out}.md", markdown(report).encode())
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
