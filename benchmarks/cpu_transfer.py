"""Do timings taken on one CPU rank the candidates of another? Re-measure stored candidates here.

The archive mixes CPUs (``data/README.md``): its first runs were measured on machines LLVM
calls ``emeraldrapids``, later ones on ``rocketlake``, and no workload was measured on both.
This benchmark picks tasks measured on another CPU than this host's (``--stored-on other``;
one task from each of ``--tasks`` families drawn at random), draws ``--candidates`` of each
task's measured candidates at random, builds them for this host (its ``mcpu``) and measures
them as the collector does (``COLLECT_EVALUATOR``), and scores the stored timings as a
ranker of the new ones with the metrics of ``tvm_tgraph.metrics`` (Kendall tau, top-1 /
top-5 score, OPA): the ceiling of what a model trained on the other CPU's labels can reach
here, and how far those labels can be pooled. ``--stored-on same`` is the control: tasks
measured on a CPU of this host's name (another machine or session), the noise floor of
re-measuring. Each finished task is written at once (the JSON is replaced atomically); a
rerun with the same arguments resumes. The CPU of this host is recorded.

    python benchmarks/cpu_transfer.py [--db data/tir_llvm_cpu.tar.xz] [--stored-on other|same] [--tasks 12]
                                      [--candidates 48] [--seed 0] [--out cpu_transfer]

Writes ``benchmarks/results/<out>.{json,md,png}``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = Path(__file__).resolve().parent / "results"


def pick_tasks(tasks: list, host_cpu: str, other_cpu: bool, families: int, candidates: int, seed: int) -> list:
    """One task from each of ``families`` families drawn at random among the tasks measured
    on another CPU than ``host_cpu`` (``other_cpu``) or on one of its name, with at least
    ``candidates`` measured candidates (seeded)."""
    rng = np.random.default_rng(seed)
    eligible = [t for t in tasks if (t.cpu != host_cpu) == other_cpu and len(t.latency) >= candidates]
    by_family: dict[str, list] = {}
    for task in eligible:
        by_family.setdefault(task.family, []).append(task)
    names = sorted(by_family)
    chosen = rng.choice(len(names), size=min(families, len(names)), replace=False)
    return [by_family[names[i]][rng.integers(len(by_family[names[i]]))] for i in sorted(chosen)]


def remeasure(task, count: int, seed: int) -> dict:
    """Measure ``count`` of ``task``'s candidates (drawn at random) here; the stored and the
    new latencies (s) of those measured successfully, and the stored timings' ranking metrics."""
    from tvm_tgraph.database import result_latency
    from tvm_tgraph.metrics import ranking_metrics
    from tvm_tgraph.testing import measure_candidates
    from tvm_tgraph.workflows.collect import COLLECT_EVALUATOR

    index = np.sort(np.random.default_rng(seed).choice(len(task.latency), size=count, replace=False))
    results = measure_candidates(task.context, [task.candidates[i] for i in index], **COLLECT_EVALUATOR)
    new = np.asarray([result_latency(r) for r in results])
    ok = np.isfinite(new)
    stored = task.latency[index][ok]
    return {"task": task.name, "family": task.family, "stored_cpu": task.cpu, "indices": index[ok].tolist(),
            "stored_s": stored.tolist(), "here_s": new[ok].tolist(), "failed_here": int((~ok).sum()),
            "metrics": ranking_metrics(-stored, new[ok])}


def format_markdown(report: dict) -> str:
    from tvm_tgraph.metrics import mean_metrics

    lines = ["# Do timings from another CPU rank the candidates measured here?", "",
             f"Command: `{report['command']}`", "",
             f"Measured here on {report['host_cpu']['llvm']} ({report['host_cpu']['name']}); stored timings from "
             f"{', '.join(sorted({t['stored_cpu'] for t in report['tasks']}))}. The stored timings of each task's "
             "re-measured candidates used as the ranking of the new timings:", "",
             "| task | stored on | candidates | kendall_tau | top1 | top5 | opa | median here / stored |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in report["tasks"]:
        m = t["metrics"]
        ratio = np.median(np.asarray(t["here_s"]) / np.asarray(t["stored_s"]))
        lines.append(f"| {t['task']} | {t['stored_cpu']} | {len(t['here_s'])} | {m['kendall_tau']:.3f} | "
                     f"{m['top1']:.3f} | {m['top5']:.3f} | {m['opa']:.3f} | {ratio:.2f} |")
    mean = mean_metrics({t["task"]: t["metrics"] for t in report["tasks"]})
    if mean:
        taus = [t["metrics"]["kendall_tau"] for t in report["tasks"]]
        lines += ["", f"Mean over {len(report['tasks'])} tasks: Kendall tau {mean['kendall_tau']:.3f} "
                      f"(min {min(taus):.3f}, max {max(taus):.3f}), top-1 {mean['top1']:.3f}, top-5 {mean['top5']:.3f}, "
                      f"OPA {mean['opa']:.3f}."]
    stored_cpus = sorted({t["stored_cpu"] for t in report["tasks"]})
    if len(stored_cpus) > 1:
        lines.append("")
        for cpu in stored_cpus:
            taus = [t["metrics"]["kendall_tau"] for t in report["tasks"] if t["stored_cpu"] == cpu]
            lines.append(f"- stored on {cpu}: {len(taus)} tasks, mean Kendall tau {np.mean(taus):.3f} "
                         f"(min {min(taus):.3f}, max {max(taus):.3f})")
    return "\n".join(lines) + "\n"


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = report["tasks"]
    columns = min(4, len(tasks))
    rows = -(-len(tasks) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.4 * rows), squeeze=False)
    for ax, t in zip(axes.flat, tasks):
        stored, here = np.asarray(t["stored_s"]) * 1e3, np.asarray(t["here_s"]) * 1e3
        ax.loglog(stored, here, ".", alpha=0.7)
        ax.set_title(f"{t['task'][:38]}\ntau {t['metrics']['kendall_tau']:.2f}", fontsize=8)
        ax.set_xlabel(f"ms on {t['stored_cpu']}", fontsize=8)
        ax.set_ylabel(f"ms on {report['host_cpu']['llvm']}", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(tasks):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="data/tir_llvm_cpu.tar.xz")
    parser.add_argument("--stored-on", choices=("other", "same"), default="other",
                        help="re-measure tasks stored from another CPU (default) or from one of this host's name")
    parser.add_argument("--tasks", type=int, default=12, help="families, one task each (default 12)")
    parser.add_argument("--candidates", type=int, default=48, help="candidates re-measured per task (default 48)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="cpu_transfer", help="result file names under benchmarks/results/")
    args = parser.parse_args()

    from tqdm import tqdm

    from tvm_tgraph.files import atomic_write_bytes
    from tvm_tgraph.measured_tasks import load_measured_tasks
    from tvm_tgraph.tvm_env import host_cpu_names

    host = host_cpu_names()
    json_path = RESULTS / f"{args.out}.json"
    command = "python benchmarks/cpu_transfer.py " + shlex.join(sys.argv[1:])
    report = {"command": command, "host_cpu": host, "tasks": []}
    if json_path.is_file():
        stored = json.loads(json_path.read_text())
        if stored.get("command") == command and stored.get("host_cpu") == host:
            report = stored   # resume: the same arguments on the same CPU
    done = {t["task"] for t in report["tasks"]}
    tasks = pick_tasks(load_measured_tasks(args.db), host["llvm"], args.stored_on == "other", args.tasks,
                       args.candidates, args.seed)
    for task in tqdm(tasks, desc="re-measuring", unit="task"):
        if task.name in done:
            continue
        report["tasks"].append(remeasure(task, args.candidates, args.seed))
        atomic_write_bytes(json_path, json.dumps(report, indent=1).encode())
    markdown = format_markdown(report)
    atomic_write_bytes(RESULTS / f"{args.out}.md", markdown.encode())
    plot(report, RESULTS / f"{args.out}.png")
    print(markdown)


if __name__ == "__main__":
    main()
