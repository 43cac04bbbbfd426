"""Held-out-family ranking evaluation of TGraph against XGBoost and MLP, plus ablations.

For each held-out family (a whole model family, never seen in training): train TGraph on
every other family (``tgraph train``'s code, same seed), then run ``tgraph eval``'s code on
the held-out family's tasks: zero-shot and online (k = 32, 64), with TVM's XGBoost and MLP
cost models trained on the same training data. The ablations retrain on the first fold
without configuration cross-attention, and with ListMLE instead of the pairwise hinge.

    python benchmarks/ranking_eval.py --db data/tir_llvm_cpu.tar.xz \
        [--folds transformer,mobilenet_v2,resnet] [--steps 3000] [--seed 0] [--no-ablations]

Writes ``benchmarks/results/ranking_eval.{json,md}`` and ``ranking_eval_<fold>.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="data/tir_llvm_cpu.tar.xz")
    parser.add_argument("--folds", default="transformer,mobilenet_v2,resnet")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-ablations", action="store_true")
    args = parser.parse_args()

    from tvm_tgraph.measured_tasks import configured_graphs, load_measured_tasks
    from tvm_tgraph.workflows.evaluate import evaluate, format_table, plot_scatter
    from tvm_tgraph.pretrain import evaluate_graphs
    from tvm_tgraph.checkpoint import load_checkpoint
    from tvm_tgraph.tvm_env import make_target

    start = time.time()
    tasks = load_measured_tasks(args.db, make_target())
    graphs = configured_graphs(tasks)
    report = {"command": "python benchmarks/ranking_eval.py " + " ".join(sys.argv[1:]),
              "db": args.db, "folds": {}, "ablations": {}}
    lines = ["# Ranking on held-out model families", "", f"Command: `{report['command']}`", ""]
    for i, fold in enumerate(args.folds.split(",")):
        held_out = [t for t in tasks if t.family == fold]
        training = [t for t in tasks if t.family != fold]
        checkpoint, history = train_fold(graphs, tasks, fold, args)
        result = evaluate(held_out, training, str(checkpoint), ("xgb", "mlp"), (32, 64), seed=args.seed)
        result["history"] = history
        report["folds"][fold] = result
        plot_scatter(result, RESULTS / f"ranking_eval_{fold}.png")
        lines += [f"## held out: {fold} ({len(held_out)} tasks; trained on {len(training)} tasks)", "",
                  "```", format_table(result), "```", ""]
        if i == 0 and not args.no_ablations:
            variants = {"tgraph (hinge, cross-attention)": None,
                        "no cross-attention": {"cross_attention": False},
                        "ListMLE loss": {"loss": "listmle"}}
            eval_graphs = {t.name: graphs[t.name] for t in held_out if t.name in graphs}
            rows = []
            for label, overrides in variants.items():
                path = checkpoint if overrides is None else train_fold(graphs, tasks, fold, args, **overrides)[0]
                metrics = evaluate_graphs(load_checkpoint(path)[0], eval_graphs)["mean"]
                report["ablations"][label] = metrics
                rows.append(f"| {label} | " + " | ".join(f"{metrics[m]:.3f}" for m in ("kendall_tau", "top1", "top5", "opa")) + " |")
            lines += [f"## Ablations (zero-shot on {fold})", "",
                      "| variant | Kendall tau | top-1 | top-5 | OPA |", "| --- | --- | --- | --- | --- |", *rows, ""]
    report["seconds"] = time.time() - start
    lines.append(f"Total time: {report['seconds'] / 60:.1f} min.")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ranking_eval.json").write_text(json.dumps(report, indent=1))
    (RESULTS / "ranking_eval.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
