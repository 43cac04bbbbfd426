"""Layout search on a real Relax model against random search with 10x the measurements.

1. Measure random layout configurations of the model end to end (``tgraph layout collect``;
   resumes what the data folder holds).
2. Train TGraph on 80% of them, rank the held-out 20% (Kendall tau).
3. Layout search: score ``--pool`` configurations, measure the top ``--top-k``.
4. Random search with 10x as many measurements: the first ``10 * top-k`` of the randomly
   collected configurations. The two winners are measured again, alternately, three times
   each (the minimum of many noisy measurements is biased low), and compared.

    python benchmarks/layout_search.py --data runs/layouts_resnet3 --model resnet3 --configs 240

Writes ``benchmarks/results/layout_search.{json,md}`` and ``layout_search.png``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="runs/layouts_resnet3")
    parser.add_argument("--model", default="resnet3")
    parser.add_argument("--configs", type=int, default=240)
    parser.add_argument("--pool", type=int, default=1024)
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from search.layout import layout_search
    from tvm_tgraph.convert.relax_layout import LayoutSpace
    from tvm_tgraph.workflows.end_to_end import random_inputs
    from tvm_tgraph.workflows.layout import collect_layouts, load_model, measure_config, train_layout_model
    from tvm_tgraph.nn import predict_scores
    from tvm_tgraph.pretrain import PretrainConfig
    from tvm_tgraph.tvm_env import make_target

    target = make_target(None)
    measured = collect_layouts(args.data, args.model, args.configs, target, args.seed)
    ckpt = Path(args.data) / "layout.safetensors"
    card = train_layout_model(args.data, ckpt, PretrainConfig(steps=args.steps, eval_every=50, seed=args.seed))

    from tvm_tgraph.checkpoint import load_checkpoint
    from tvm_tgraph.convert.relax_layout import FEATURE_SCHEMA_VERSION

    model, _ = load_checkpoint(ckpt, FEATURE_SCHEMA_VERSION)
    mod = load_model(args.model)
    space, inputs = LayoutSpace(mod), random_inputs(mod)
    result = layout_search(space, model, lambda c: measure_config(space, c, target, inputs)[0], args.pool, args.top_k,
                           args.seed + 7)

    random_budget = 10 * args.top_k
    random_best = int(np.argmin(measured.latency[:random_budget]))
    random_config = measured.configs[random_best]
    confirm = {"search": [], "random": []}
    for _ in range(3):
        confirm["search"].append(measure_config(space, result.best_config, target, inputs)[0])
        confirm["random"].append(measure_config(space, random_config, target, inputs)[0])
    search_s, random_s = float(np.median(confirm["search"])), float(np.median(confirm["random"]))

    keys = ["".join(map(str, c)) for c in measured.configs]
    held = np.array([keys.index(k) for k in card["training_data"]["held_out_configs"]])
    scores = predict_scores(model, space.configured_graph(measured.configs[held]))
    report = {
        "command": "python benchmarks/layout_search.py " + shlex.join(sys.argv[1:]),
        "model": args.model, "sites": space.num_sites, "space_size": 2 ** space.num_sites,
        "collected": int(len(measured.latency)), "train_configs": card["training_data"]["train_configs"],
        "held_out": {"configs": int(len(held)), **card["held_out"]},
        "search": {"pool": result.pool_size, "measured": result.measured,
                   "best_config": "".join(map(str, result.best_config)), "best_s": result.best_latency_s},
        "random": {"measurements": random_budget, "best_config": keys[random_best],
                   "best_s": float(measured.latency[random_best]),
                   "best_of_all_collected_s": float(measured.latency.min())},
        "confirmation": {**confirm, "search_median_s": search_s, "random_median_s": random_s,
                         "search_over_random": search_s / random_s},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "layout_search.json").write_text(json.dumps(report, indent=1))
    (RESULTS / "layout_search.md").write_text(
        f"Command: `{report['command']}`\n\n"
        f"Model `{args.model}`: {space.num_sites} configurable operators ({2 ** space.num_sites} configurations), "
        f"TVM's default schedules, end-to-end latency with the Relax VM.\n\n"
        f"- Ranking held-out configurations ({len(held)} of {len(measured.latency)} measured; trained on "
        f"{card['training_data']['train_configs']}): Kendall tau **{card['held_out']['kendall_tau']:.3f}**, "
        f"top-1 {card['held_out']['top1']:.3f}, top-5 {card['held_out']['top5']:.3f}, OPA {card['held_out']['opa']:.3f}\n"
        f"- Layout search: {result.pool_size} scored, {args.top_k} measured, best {result.best_latency_s * 1e3:.3f} ms\n"
        f"- Random search, {random_budget} measured: best {measured.latency[random_best] * 1e3:.3f} ms "
        f"(best of all {len(measured.latency)} collected: {measured.latency.min() * 1e3:.3f} ms)\n"
        f"- Both winners measured again 3x, alternately: search {search_s * 1e3:.3f} ms, random {random_s * 1e3:.3f} ms, "
        f"ratio **{search_s / random_s:.3f}** (target <= 1.05)\n")
    _plot(scores, measured.latency[held], RESULTS / "layout_search.png", card["held_out"]["kendall_tau"])
    print((RESULTS / "layout_search.md").read_text())


def _plot(scores, latency, path, tau) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(scores, latency * 1e3, s=12)
    ax.set_xlabel("TGraph score (higher = predicted faster)")
    ax.set_ylabel("measured latency (ms)")
    ax.set_title(f"held-out layouts, Kendall tau {tau:.3f}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
