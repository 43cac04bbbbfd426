"""Leave-one-family-out ranking evaluation of TGraph against XGBoost and MLP, plus ablations.

For each held-out family (a whole model or operator family, never seen in training) and
each seed: train TGraph on every other family (``tgraph train``'s code), then run ``tgraph
eval``'s code on the held-out family's tasks: zero-shot and online (k = 32, 64, the task's
first k measured candidates given), with TVM's XGBoost and MLP cost models trained on the
same training data in the same run. Reports, per fold and overall, the mean over seeds of
the fold's mean metrics and their spread (min-max over seeds), and a per-task table of the
zero-shot Kendall tau. The ablations retrain on the first fold without configuration
cross-attention, and with ListMLE instead of the pairwise hinge.

    python benchmarks/ranking_eval.py --db data/tir_llvm_cpu.tar.xz \
        [--folds all | transformer,mobilenet_v2,resnet] [--seeds 0,1,2] [--steps 3000] [--no-ablations]

Writes ``benchmarks/results/ranking_eval.{json,md}`` and ``ranking_eval_<fold>.png`` (seed of
the first run), with the command and the CPU (timings of two CPUs are never pooled: a task
measured on two is two tasks).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = Path(__file__).parent / "results"


def train_fold(graphs, tasks, fold, args, **overrides):
    """Train on every family but ``fold``; return (checkpoint path, training history)."""
    from tvm_tgraph.convert.tir import FEATURE_SCHEMA
    from tvm_tgraph.pretrain import PretrainConfig, train_checkpoint
    from tvm_tgraph.training import TrainConfig

    names = [t.name for t in tasks if t.family != fold and t.name in graphs]
    loss = overrides.pop("loss", "hinge")
    config = PretrainConfig(steps=args.steps, seed=args.seed, train=TrainConfig(loss=loss), network=overrides)
    path = Path(tempfile.mkdtemp(prefix="tgraph_fold_")) / f"{fold}.safetensors"
    card = train_checkpoint(graphs, names, config, FEATURE_SCHEMA, path, data={"held_out_families": fold})
    return path, card["history"]


def _spread(values: list[float]) -> str:
    """``mean (min-max)`` over seeds."""
    values = [v for v in values if v == v]
    if not values:
        return "-"
    return f"{np.mean(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="data/tir_llvm_cpu.tar.xz")
    parser.add_argument("--folds", default="all", help="comma-separated families, or all (default)")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--no-ablations", action="store_true")
    args = parser.parse_args()

    import platform

    from tvm_tgraph.measured_tasks import configured_graphs, load_measured_tasks
    from tvm_tgraph.tvm_env import host_cpu, make_target
    from tvm_tgraph.workflows.evaluate import METRICS, evaluate, format_table, plot_scatter

    start = time.time()
    tasks = load_measured_tasks(args.db, make_target())
    graphs = configured_graphs(tasks)
    folds = sorted({t.family for t in tasks}) if args.folds == "all" else args.folds.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    report = {"command": "python benchmarks/ranking_eval.py " + " ".join(sys.argv[1:]), "db": args.db,
              "cpu": {"llvm": host_cpu(), "machine": platform.machine()},
              "measured_cpus": sorted({t.cpu for t in tasks}), "folds": {}, "ablations": {}}
    lines = ["# Ranking on held-out families", "", f"Command: `{report['command']}`", "",
             f"Evaluated on {report['cpu']['llvm']}; candidates measured on {', '.join(report['measured_cpus'])}; "
             f"seeds {args.seeds}; mean over seeds (min-max).", ""]
    settings = ("zero_shot", "online_k32", "online_k64")
    overall: dict = {}
    for i, fold in enumerate(folds):
        held_out = [t for t in tasks if t.family == fold]
        training = [t for t in tasks if t.family != fold]
        runs = []
        for seed in seeds:
            args.seed = seed
            checkpoint, history = train_fold(graphs, tasks, fold, args)
            result = evaluate(held_out, training, str(checkpoint), ("xgb", "mlp"), (32, 64), seed=seed,
                              progress=False)
            result["history"] = history
            runs.append(result)
            if seed == seeds[0]:
                plot_scatter(result, RESULTS / f"ranking_eval_{fold.replace(':', '_')}.png")
                if i == 0 and not args.no_ablations:
                    report["ablations"] = _ablations(graphs, tasks, held_out, fold, args, checkpoint)
        report["folds"][fold] = runs
        lines += [f"## held out: {fold} ({len(held_out)} tasks; trained on {len(training)} tasks)", "",
                  "| setting | model | " + " | ".join(METRICS) + " |", "| --- | --- |" + " --- |" * len(METRICS)]
        for setting in settings:
            for model in runs[0]["results"][setting]:
                cells = [_spread([r["results"][setting][model]["mean"].get(m, float("nan")) for r in runs])
                         for m in METRICS]
                lines.append(f"| {setting} | {model} | " + " | ".join(cells) + " |")
                for seed, r in zip(seeds, runs):
                    overall.setdefault((setting, model), {}).setdefault(seed, []).append(
                        r["results"][setting][model]["mean"].get("kendall_tau", float("nan")))
        per_task = runs[0]["results"]["zero_shot"]
        lines += ["", "Zero-shot Kendall tau per task (first seed):", "",
                  "| task | " + " | ".join(per_task) + " |", "| --- |" + " --- |" * len(per_task)]
        for task in per_task["tgraph"]["per_task"]:
            lines.append(f"| {task} | " + " | ".join(f"{per_task[m]['per_task'][task]['kendall_tau']:.3f}"
                                                      for m in per_task) + " |")
        lines += ["", "```", format_table(runs[0]), "```", ""]
    lines += ["## Mean over folds (Kendall tau; per seed the mean over folds, then mean and min-max over seeds)", "",
              "| setting | model | Kendall tau |", "| --- | --- | --- |"]
    for (setting, model), by_seed in overall.items():
        lines.append(f"| {setting} | {model} | {_spread([float(np.nanmean(v)) for v in by_seed.values()])} |")
    if report["ablations"]:
        lines += ["", f"## Ablations (zero-shot on {folds[0]}, seed {seeds[0]})", "",
                  "| variant | Kendall tau | top-1 | top-5 | OPA |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {label} | " + " | ".join(f"{m[k]:.3f}" for k in ("kendall_tau", "top1", "top5", "opa")) + " |"
                  for label, m in report["ablations"].items()]
    report["seconds"] = time.time() - start
    lines.append(f"\nTotal time: {report['seconds'] / 60:.1f} min.")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ranking_eval.json").write_text(json.dumps(report, indent=1))
    (RESULTS / "ranking_eval.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _ablations(graphs, tasks, held_out, fold, args, checkpoint) -> dict:
    """Zero-shot metrics on ``fold`` of the main recipe and of its ablations."""
    from tvm_tgraph.checkpoint import load_checkpoint
    from tvm_tgraph.pretrain import evaluate_graphs

    variants = {"tgraph (hinge, cross-attention)": None,
                "no cross-attention": {"cross_attention": False},
                "ListMLE loss": {"loss": "listmle"}}
    eval_graphs = {t.name: graphs[t.name] for t in held_out if t.name in graphs}
    results = {}
    for label, overrides in variants.items():
        path = checkpoint if overrides is None else train_fold(graphs, tasks, fold, args, **overrides)[0]
        results[label] = evaluate_graphs(load_checkpoint(path)[0], eval_graphs, chunk_size=512)["mean"]
    return results


if __name__ == "__main__":
    main()
