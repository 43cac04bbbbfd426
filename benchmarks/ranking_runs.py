"""Summaries and paired comparisons of ``ranking_eval.py`` reports (no training, no TVM).

Each model is ``REPORT.json:MODEL``, MODEL being ``tgraph`` (the recipe), ``xgb``, ``mlp``
``tgraph+xgb`` (the two averaged) or ``ablation:<variant>``, zero-shot unless ``--setting`` names
another (``online_k64``: then also ``xgb-cold``, ``tgraph-prior+xgb`` etc.). For every model: the mean over folds of each metric,
per seed, then mean (min-max) over seeds; the recipe's seed ensembles if the report has them;
and the best validation steps of TGraph models. With two models: their Kendall tau paired
fold by fold and seed by seed (the folds and seeds the two reports share), the mean
difference, how many pairs the first leads, the differences' range and the standard error
of their mean.

    python benchmarks/ranking_runs.py benchmarks/results/ranking_eval_groups5_block_store.json:tgraph \\
        benchmarks/results/ranking_eval_groups5_block_store.json:ablation:no_block_store
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tvm_tgraph.metrics import mean_and_range  # noqa: E402
from tvm_tgraph.workflows.evaluate import METRICS  # noqa: E402


def _result(run: dict, model: str, setting: str) -> dict:
    """The result (``mean`` metrics, ``history`` for TGraph) of ``model`` in ``setting`` in one run
    (ablations are zero-shot only)."""
    if model.startswith("ablation:"):
        return run["ablations"][model.removeprefix("ablation:")]
    return {**run["results"][setting][model], "history": run.get("history") if model == "tgraph" else None}


def by_fold_and_seed(report: dict, model: str, setting: str = "zero_shot") -> dict[tuple[str, int], dict]:
    """``{(fold, seed index): result}`` of ``model`` in ``setting`` in a report."""
    return {(fold, i): _result(run, model, setting) for fold, runs in report["folds"].items()
            for i, run in enumerate(runs)}


def load(spec: str, setting: str = "zero_shot") -> tuple[str, dict, dict[tuple[str, int], dict]]:
    """``REPORT.json:MODEL`` -> (spec, report, {(fold, seed index): result in ``setting``})."""
    path, _, model = spec.partition(":")
    report = json.loads(Path(path).read_text())
    return spec, report, by_fold_and_seed(report, model or "tgraph", setting)


def _ensembles(report: dict) -> dict[str, dict[str, dict]]:
    """``{name: {fold: result}}`` of the report's seed ensembles (reports written before the
    ensemble with XGBoost hold one unnamed ensemble per fold)."""
    by_name: dict[str, dict[str, dict]] = {}
    for fold, entry in report.get("seed_ensemble", {}).items():
        for name, result in ({"seed ensemble": entry} if "mean" in entry else entry).items():
            by_name.setdefault(name, {})[fold] = result
    return by_name


def per_seed(results: dict, metric: str = "kendall_tau") -> list[float]:
    """``metric``'s mean over folds for each seed of ``results`` (as :func:`load` returns them)."""
    seeds = sorted({seed for _, seed in results})
    return [float(np.mean([r["mean"][metric] for (_, s), r in results.items() if s == seed])) for seed in seeds]


def differences(first: dict, second: dict) -> np.ndarray:
    """Kendall tau of ``first`` minus ``second`` (results as :func:`load` returns them), for each
    fold and seed both hold."""
    shared = sorted(set(first) & set(second))
    return np.array([first[k]["mean"]["kendall_tau"] - second[k]["mean"]["kendall_tau"] for k in shared])


def summary(spec: str, report: dict, results: dict, with_ensembles: bool = True) -> list[str]:
    """Mean over folds per seed, then mean (min-max) over seeds, of every metric; then the
    report's (zero-shot) seed ensembles if ``with_ensembles``."""
    lines = [f"{spec}: {len({fold for fold, _ in results})} folds x {len({seed for _, seed in results})} seeds"]
    for metric in METRICS:
        lines.append(f"  {metric:<12} {mean_and_range(per_seed(results, metric))}")
    histories = [r["history"] for r in results.values() if r.get("history")]
    steps = sorted(h["best_step"] for h in histories if h["best_val_kendall_tau"] is not None)
    if steps:
        lines.append(f"  best validation steps {steps[0]}-{steps[-1]}, median {np.median(steps):.0f}")
    elif histories:
        lines.append(f"  no early stopping: every run trained {max(h['steps'] for h in histories)} steps")
    if with_ensembles and spec.endswith((".json", ":tgraph")):
        for name, ensemble in _ensembles(report).items():
            lines.append(f"  {name}: " + ", ".join(
                f"{metric} {np.mean([e['mean'][metric] for e in ensemble.values()]):.3f}" for metric in METRICS))
            for fold, e in ensemble.items():
                members = np.mean([r["mean"]["kendall_tau"] for (f, _), r in results.items() if f == fold])
                lines.append(f"    {fold}: tau {e['mean']['kendall_tau']:.3f}, the seeds' mean {members:.3f}")
    return lines


def paired(first: tuple, second: tuple) -> list[str]:
    """Kendall tau of two models paired by fold and seed."""
    diffs = differences(first[2], second[2])
    standard_error = diffs.std(ddof=1) / np.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
    return [f"{first[0]} - {second[0]}: mean {diffs.mean():+.4f} tau over {len(diffs)} fold-seed pairs, "
            f"first ahead in {int((diffs > 0).sum())}; differences {diffs.min():+.3f} to {diffs.max():+.3f}, "
            f"standard error of their mean {standard_error:.4f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="REPORT.json:MODEL (MODEL: tgraph, xgb, mlp, ablation:<variant>)")
    parser.add_argument("--setting", default="zero_shot", help="zero_shot (default) or online_k<k>")
    args = parser.parse_args()
    try:
        loaded = [load(spec, args.setting) for spec in args.models]
    except (OSError, json.JSONDecodeError, KeyError) as err:
        parser.exit(2, f"ranking_runs: not a ranking_eval report or model: {err!r}\n")
    for entry in loaded:
        print("\n".join(summary(*entry, with_ensembles=args.setting == "zero_shot")))
    if len(loaded) == 2:
        print("\n".join(paired(*loaded)))


if __name__ == "__main__":
    main()
