"""How many of the schedules each method measured run on one thread, and how fast they are.

A small kernel can run faster on one thread than on two: starting the parallel loop costs
more than splitting the work saves. A MetaSchedule schedule runs on one thread when its
trace has no ``Parallel`` instruction (every block's outer tiles of extent 1, say). For each
method and seed of a ``tgraph compare`` run of one workload (its databases,
``OUT/runs/<workload>/<method>/seed<N>``): the candidates measured, how many of them run on
one thread, and the best latency of each kind. With ``--random-samples N``, N random
design-space samples of the workload (MetaSchedule's ``ReplayTrace``, as a search starts
from) are counted the same way and scored zero-shot by the shipped checkpoint (the
``tgraph-xgb`` cost model before any measurement: the pretrained network alone): the mean
rank of the one-thread samples (0 = predicted fastest) shows whether the pretrained prior
steers the search away from them. Nothing is timed here; the latencies are the run's.

    python benchmarks/serial_schedules.py --run benchmarks/results/compare_conv_depthwise_steps12000 \\
        --workload depthwise_conv2d [--random-samples 256] [--out serial_schedules_depthwise_conv2d]

Writes ``benchmarks/results/<out>.{json,md}`` with the command and this host's CPU.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cost_models  # noqa: E402
from tvm_tgraph.database import read_database, record_latencies  # noqa: E402
from tvm_tgraph.errors import RecordError  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.testing import random_candidates  # noqa: E402
from tvm_tgraph.tvm_env import host_cpu_names, make_target  # noqa: E402
from tvm_tgraph.workloads import load_module  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def runs_in_parallel(trace_json) -> bool:
    """Whether a trace (MetaSchedule's JSON form, ``[instructions, decisions]``) parallelises a loop."""
    return any(inst[0] == "Parallel" for inst in trace_json[0])


def measured_split(database: Path) -> dict:
    """One database's candidates: how many, how many on one thread, the trial (from 1, in
    measurement order) that first measured one, and the best latency of each kind (ms)."""
    _, records = read_database(database)
    parallel = np.array([runs_in_parallel(record[0]) for _, record in records], dtype=bool)
    latency_ms = record_latencies(records)[0] * 1e3
    measured = np.isfinite(latency_ms)

    def best(mask: np.ndarray) -> float | None:
        return float(latency_ms[mask & measured].min()) if (mask & measured).any() else None

    return {"measured": len(records), "one_thread": int((~parallel).sum()),
            "first_one_thread_trial": int(np.argmin(parallel)) + 1 if (~parallel).any() else None,
            "best_one_thread_ms": best(~parallel), "best_parallel_ms": best(parallel)}


def prior_view(workload: str, samples: int, seed: int = 0) -> dict:
    """``samples`` random design-space samples of ``workload``: how many run on one thread, and
    the mean rank the shipped checkpoint gives them and the others (0 = predicted fastest)."""
    context, candidates = random_candidates(load_module(workload), make_target(), samples, seed=seed)
    parallel = np.array([runs_in_parallel(c.sch.trace.as_json()) for c in candidates], dtype=bool)
    scores = np.asarray(cost_models.create("tgraph-xgb").predict(context, candidates), dtype=np.float64)
    rank = np.argsort(np.argsort(-scores, kind="stable"), kind="stable")
    return {"samples": len(candidates), "one_thread": int((~parallel).sum()),
            "mean_rank_one_thread": float(rank[~parallel].mean()) if (~parallel).any() else None,
            "mean_rank_parallel": float(rank[parallel].mean()) if parallel.any() else None}


def _shown(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def to_markdown(report: dict) -> str:
    lines = [f"# Schedules on one thread: {report['workload']}", "",
             f"Command: `{report['command']}`", "",
             f"Run `{report['run']}`; latencies as that run measured them; read on {report['cpu']['llvm']} "
             f"(\"{report['cpu']['name']}\").", "",
             "| method | seed | measured | on one thread | first on one thread (trial) | best on one thread (ms) "
             "| best parallel (ms) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in report["measured"]:
        lines.append(f"| {row['method']} | {row['seed']} | {row['measured']} | {row['one_thread']} | "
                     f"{_shown(row['first_one_thread_trial'], 0)} | {_shown(row['best_one_thread_ms'])} | "
                     f"{_shown(row['best_parallel_ms'])} |")
    prior = report.get("prior")
    if prior:
        lines += ["", f"Random design-space samples: {prior['one_thread']} of {prior['samples']} on one thread; "
                  f"the shipped checkpoint's mean rank (0 = predicted fastest) "
                  f"{_shown(prior['mean_rank_one_thread'], 1)} for those, {_shown(prior['mean_rank_parallel'], 1)} "
                  "for the others."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a tgraph compare --out folder")
    parser.add_argument("--workload", required=True)
    parser.add_argument("--random-samples", type=int, default=0)
    parser.add_argument("--out", default=None, help="file names under benchmarks/results/ "
                                                    "(default serial_schedules_<workload>)")
    args = parser.parse_args(argv)
    runs = Path(args.run) / "runs" / args.workload
    databases = sorted(runs.glob("*/seed*"))
    if not databases:
        parser.exit(2, f"error: no tuning runs of {args.workload!r} under {runs}\n")
    rows = []
    for database in databases:
        try:
            split = measured_split(database)
        except RecordError as err:
            parser.exit(2, f"error: {err}\n")
        rows.append({"method": database.parent.name, "seed": int(database.name.removeprefix("seed")), **split})
    report = {"command": shlex.join(["python", "benchmarks/serial_schedules.py", *(argv or sys.argv[1:])]),
              "cpu": host_cpu_names(), "run": args.run, "workload": args.workload, "measured": rows}
    if args.random_samples:
        report["prior"] = prior_view(args.workload, args.random_samples)
    markdown = to_markdown(report)
    out = RESULTS / (args.out or f"serial_schedules_{args.workload}")
    atomic_write_bytes(out.with_suffix(".json"), json.dumps(report, indent=1).encode())
    atomic_write_bytes(out.with_suffix(".md"), markdown.encode())
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
