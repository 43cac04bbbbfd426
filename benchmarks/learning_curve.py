"""How ranking grows with training data: ``ranking_eval.py`` runs that differ in
``--train-fraction`` (and perhaps ``--steps``), side by side (no training, no TVM).

Each run is a report name under ``benchmarks/results/`` made on the same database content
(``db_sha256``) and folds. For every run and model (TGraph, XGBoost): the mean over folds of
the zero-shot Kendall tau, per seed, then mean (min-max) over seeds; TGraph's lead over
XGBoost trained on the same tasks, paired fold by fold and seed by seed. Writes
``benchmarks/results/<out>.{md,json,png}`` (tau against the training tasks per fold, one line
per model and step count).

    python benchmarks/learning_curve.py --runs ranking_eval_groups5_wa_quarter,ranking_eval_groups5_wa_half,ranking_eval_groups5_wa_rounds16 --out learning_curve
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ranking_runs import by_fold_and_seed, differences, per_seed  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.metrics import mean_and_range  # noqa: E402

RESULTS = Path(__file__).parent / "results"
MODELS = ("tgraph", "xgb")


def _steps(command: str) -> int:
    """The ``--steps`` a ``ranking_eval.py`` command trained with (its default if not given)."""
    words = shlex.split(command)
    if "--steps" in words:
        return int(words[words.index("--steps") + 1])
    from tvm_tgraph.pretrain import PretrainConfig

    return PretrainConfig.steps


def point(name: str, report: dict) -> dict:
    """One run's point on the curve: its fraction, steps, training tasks per fold (mean) and,
    per model, the zero-shot tau per seed (mean over folds); TGraph's lead over XGBoost per
    fold and seed."""
    results = {model: by_fold_and_seed(report, model) for model in MODELS}
    return {"run": name, "train_fraction": report.get("train_fraction", 1.0), "steps": _steps(report["command"]),
            "train_tasks": float(np.mean([runs[0]["settings"]["train_tasks"] for runs in report["folds"].values()])),
            "tau": {model: per_seed(r) for model, r in results.items()},
            "lead": differences(results["tgraph"], results["xgb"]).tolist(),
            "cpus": sorted(set(report["fold_cpus"].values()))}


def _lines(points: list[dict], command: str) -> list[str]:
    lines = ["# Ranking against training data", "", f"Command: `{command}`", "",
             "Zero-shot Kendall tau on held-out families; per seed the mean over folds, then mean (min-max) "
             "over seeds. Lead: TGraph minus XGBoost trained on the same tasks, paired by fold and seed.", "",
             "| run | training fraction | TGraph steps | training tasks per fold | TGraph | XGBoost | lead "
             "| pairs TGraph ahead | CPU |", "| --- |" + " --- |" * 8]
    for p in points:
        lead = np.asarray(p["lead"])
        lines.append(f"| `{p['run']}` | {p['train_fraction']:g} | {p['steps']} | {p['train_tasks']:.0f} | "
                     f"{mean_and_range(p['tau']['tgraph'])} | {mean_and_range(p['tau']['xgb'])} | "
                     f"{lead.mean():+.3f} | {int((lead > 0).sum())} of {len(lead)} | {', '.join(p['cpus'])} |")
    return lines


def _plot(points: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    curves = sorted({("tgraph", p["steps"]) for p in points}) + [("xgb", None)]
    for model, steps in curves:
        chosen = sorted((p for p in points if steps is None or p["steps"] == steps), key=lambda p: p["train_tasks"])
        if model == "xgb":  # XGBoost does not depend on TGraph's steps: one point per training set
            chosen = list({p["train_fraction"]: p for p in chosen}.values())
        x = [p["train_tasks"] for p in chosen]
        y = [np.mean(p["tau"][model]) for p in chosen]
        spread = np.clip([[y_ - min(p["tau"][model]), max(p["tau"][model]) - y_] for p, y_ in zip(chosen, y)], 0, None).T
        label = f"TGraph, {steps} steps" if model == "tgraph" else "TVM XGBoost"
        ax.errorbar(x, y, yerr=spread, marker="o", capsize=3, label=label)
    ax.set_xscale("log", base=2)
    ticks = sorted({round(p["train_tasks"]) for p in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("training tasks per fold (log scale)")
    ax.set_ylabel("zero-shot Kendall tau, held-out families")
    ax.set_title("Ranking unseen workloads against training data")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", required=True, help="comma-separated ranking_eval.py report names (--out)")
    parser.add_argument("--out", default="learning_curve")
    args = parser.parse_args(argv)
    reports = {}
    for name in (n for n in args.runs.split(",") if n):
        path = RESULTS / f"{name}.json"
        try:
            reports[name] = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as err:
            parser.exit(2, f"learning_curve: {path} is not a readable report: {err}\n")
        if not {"command", "db_sha256", "folds", "fold_cpus"} <= set(reports[name]) or not reports[name]["folds"]:
            parser.exit(2, f"learning_curve: {path} is not a ranking_eval.py report with a finished fold\n")
        if not set(MODELS) <= set(next(iter(reports[name]["folds"].values()))[0]["results"]["zero_shot"]):
            parser.exit(2, f"learning_curve: {name} has no zero-shot xgb baseline (run it with --baselines xgb)\n")
    if len({r["db_sha256"] for r in reports.values()}) > 1 or len({tuple(r["folds"]) for r in reports.values()}) > 1:
        parser.exit(2, "learning_curve: the runs were made on different database contents or folds\n")
    points = sorted((point(name, report) for name, report in reports.items()),
                    key=lambda p: (p["steps"], p["train_tasks"]))
    command = "python benchmarks/learning_curve.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    atomic_write_bytes(RESULTS / f"{args.out}.json", json.dumps({"command": command, "points": points}, indent=1).encode())
    lines = _lines(points, command)
    atomic_write_bytes(RESULTS / f"{args.out}.md", ("\n".join(lines) + "\n").encode())
    _plot(points, RESULTS / f"{args.out}.png")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
