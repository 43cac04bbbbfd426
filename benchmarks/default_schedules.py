"""Do some tuned tasks make a whole model slower than TVM's default schedules would?

For each run directory of ``tgraph compare --models`` (a MetaSchedule database), the model is
built three ways: with the best record of every task (as the comparison times it), with the
tasks whose name contains one of ``--default-for`` left on TVM's default schedule (their
records dropped), and untuned (``tvm.compile``). The three builds are timed in turn,
``--rounds`` times (A, B, C, A, B, C, ...), so that a drift of the machine's speed reaches all
three alike; each time is the Relax VM's median of repeats, as the comparison takes it
(``E2E_EVALUATOR``).

    python benchmarks/default_schedules.py --model model_mobilenet_v2 --default-for batch_norm \\
        --runs DIR[,DIR...] [--rounds 3] [--out default_schedules]

Writes ``benchmarks/results/<out>.{json,md}`` with the command and the CPU of this host.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tvm_tgraph.database import open_database  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.model_zoo import extract_tir_tasks  # noqa: E402
from tvm_tgraph.tvm_env import host_cpu_names, make_target  # noqa: E402
from tvm_tgraph.workflows.end_to_end import (E2E_EVALUATOR, compile_default, compile_tuned, random_inputs,  # noqa: E402
                                              time_in_turn)
from tvm_tgraph.workloads import load_module  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def measure(model: str, runs: list[Path], default_for: list[str], rounds: int) -> dict:
    target = make_target(None)
    mod = load_module(model)
    tasks = extract_tir_tasks(mod, target)
    inputs = random_inputs(mod)
    untuned = compile_default(mod, target)
    rows = []
    for run_dir in runs:
        source = open_database(run_dir)
        dropped = [name for name, task_mod, _ in tasks
                   if source.has_workload(task_mod) and any(part in name for part in default_for)]
        builds = {
            "every task tuned": compile_tuned(mod, target, source),
            "matching tasks on the default schedule": compile_tuned(mod, target, source, dropped, tasks),
            "untuned": untuned,
        }
        times = time_in_turn(builds, inputs, rounds)
        rows.append({"run": str(run_dir), "default_for_tasks": dropped,
                     "latency_s": {name: float(np.median(t)) for name, t in times.items()},
                     "rounds_s": times})
        print(f"{run_dir}: " + ", ".join(f"{name} {np.median(t) * 1e3:.3f} ms" for name, t in times.items()),
              flush=True)
    return {"model": model, "default_for": default_for, "rounds": rounds, "cpu": host_cpu_names(), "runs": rows}


def markdown(report: dict, command: str) -> str:
    names = list(report["runs"][0]["latency_s"]) if report["runs"] else []
    lines = [f"Command: `{command}`", "",
             f"CPU: `{report['cpu']['llvm']}` ({report['cpu']['name']}); model `{report['model']}`; tasks left "
             f"on TVM's default schedule: those whose name contains {', '.join(report['default_for'])}; "
             f"median of {report['rounds']} rounds timed in turn (each the median of "
             f"{E2E_EVALUATOR['repeat']} repeats).", "",
             "| run | " + " | ".join(f"{name}, ms" for name in names) + " | tasks on the default |",
             "| --- | " + " | ".join("---" for _ in names) + " | --- |"]
    for row in report["runs"]:
        run = "/".join(Path(row["run"]).parts[-3:])
        lines.append(f"| {run} | " + " | ".join(f"{row['latency_s'][n] * 1e3:.3f}" for n in names)
                     + f" | {len(row['default_for_tasks'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="built-in model (model_mobilenet_v2, ...) or file.py:NAME")
    parser.add_argument("--runs", required=True, help="comma-separated run directories (databases) of that model")
    parser.add_argument("--default-for", required=True,
                        help="comma-separated parts of task names whose tasks keep TVM's default schedule")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="default_schedules")
    args = parser.parse_args(argv)
    runs = [Path(run) for run in args.runs.split(",")]
    missing = [str(run) for run in runs if not (run / "database_tuning_record.json").is_file()]
    if missing:
        print(f"error: no MetaSchedule database in {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print(f"error: --rounds must be at least 1, got {args.rounds}", file=sys.stderr)
        return 2
    try:
        report = measure(args.model, runs, args.default_for.split(","), args.rounds)
    except (ValueError, FileNotFoundError) as err:  # an unknown model or a missing model file
        print(f"error: {err}", file=sys.stderr)
        return 2
    command = "python benchmarks/default_schedules.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    RESULTS.mkdir(exist_ok=True)
    atomic_write_bytes(RESULTS / f"{args.out}.json", json.dumps({"command": command, **report}, indent=1).encode())
    atomic_write_bytes(RESULTS / f"{args.out}.md", markdown(report, command).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
