"""How the pretrained network should learn a held-out task online: fine-tuning recipes
scored against the frozen network on the same candidates.

For each group of whole families held out (``ranking_eval.py``'s folds) and each seed, the
shipped recipe is trained on the other families; then, for each held-out task, the network
is given the task's first ``k`` measured configurations (measurement order, duplicates
dropped) and every recipe fine-tunes a copy of it on them; the configurations after the
first ``k`` are scored by the frozen network (``frozen``), by each fine-tuned copy, and by
each copy blended with the frozen network as ``TGraphCostModel`` blends them (weight
``k / (k + blend_samples)`` on the copy). No TVM in the loop: the networks and the
database's cached graphs only, so a recipe is compared in minutes. Steps are counted, not
timed, so the result does not depend on the CPU's speed. ``--tasks-per-fold`` scores that
many held-out tasks of each fold, drawn by a generator seeded with the fold's name (not
with anything measured).

``--kept RUN`` takes the folds from a ``ranking_eval.py`` run made with ``--keep-scores`` on the
same database content and scores every task whose online scores it kept, joining its XGBoost
(trained on the other families, updated on the same first ``k``): XGBoost alone, the frozen
network blended with it (``frozen+xgb``, what ``tgraph-xgb`` tunes with) and the frozen
network blended with the mean of each fine-tuned copy and XGBoost (``frozen+<recipe>+xgb``),
on the configurations after the first ``k`` that repeat no earlier one.

    python benchmarks/online_finetune.py --db data/tir_llvm_cpu.tar.xz --family-groups 5 \\
        --seeds 0 --k 64 --tasks-per-fold 12 --out online_finetune
    python benchmarks/online_finetune.py --db data/tir_llvm_cpu.tar.xz --seeds 0,1,2 --k 64 \\
        --kept ranking_eval_groups5_wa_online --recipes lr1e-4_steps100 --out online_finetune_vs_xgb

Writes ``benchmarks/results/<out>.{json,md}`` with the command and the CPU; the report is
rewritten after every fold.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import lzma
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cost_models.tgraph_cost_model import BLEND_SAMPLES, blend_with_prior  # noqa: E402
from ranking_eval import RESULTS, family_folds, train_fold  # noqa: E402
from tvm_tgraph.checkpoint import load_checkpoint  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.measured_tasks import database_sha256, load_configured_graphs  # noqa: E402
from tvm_tgraph.metrics import kendall_tau, mean_and_range, standardised_mean  # noqa: E402
from tvm_tgraph.nn.model import predict_scores  # noqa: E402
from tvm_tgraph.training import RankingTrainer, TrainConfig  # noqa: E402
from tvm_tgraph.tvm_env import host_cpu  # noqa: E402
from tvm_tgraph.workflows.evaluate import ONLINE_MIN_SCORED  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How a copy of the pretrained network is fine-tuned on the task's given configurations."""

    lr: float
    steps: int
    head_only: bool = False


RECIPES = {
    "shipped": Recipe(1e-4, 25),            # TGraphCostModel's update: lr 1e-4, at most 25 steps
    "lr1e-4_steps100": Recipe(1e-4, 100),
    "lr3e-4_steps100": Recipe(3e-4, 100),
    "head_lr1e-3_steps100": Recipe(1e-3, 100, head_only=True),
}


def fine_tuned(network, given, recipe: Recipe, seed: int):
    """A copy of ``network`` trained ``recipe.steps`` steps on the configured graph ``given``."""
    tuned = copy.deepcopy(network)
    if recipe.head_only:
        for name, parameter in tuned.named_parameters():
            parameter.requires_grad_(name.startswith("head."))
    trainer = RankingTrainer(tuned, TrainConfig(lr=recipe.lr), seed=seed)
    trainer.set_task("task", given)
    trainer.train(recipe.steps)
    tuned.eval()
    return tuned


def score_task(network, graph, given: np.ndarray, rest: np.ndarray, recipes: list[str], seed: int,
               xgb: np.ndarray | None = None) -> dict[str, float]:
    """The number of ``graph``'s configurations ``rest`` (``candidates``) and the Kendall tau
    on them of the frozen network, each fine-tuned copy and each blend, having given the
    configurations ``given`` (``k`` of them, the blends' ``measured``). With ``xgb``,
    XGBoost's online scores ``(len(rest),)`` of the same configurations: also XGBoost, the
    frozen network blended with it (``frozen+xgb``, what ``tgraph-xgb`` tunes with), and with
    each copy and XGBoost averaged (``frozen+<recipe>+xgb``)."""
    k = len(given)
    given_graph, scored = graph.select(given), graph.select(rest)
    frozen = predict_scores(network, scored, 512)
    taus = {"candidates": len(rest), "frozen": kendall_tau(frozen, scored.runtime)}
    if xgb is not None:
        taus["xgb"] = kendall_tau(xgb, scored.runtime)
        taus["frozen+xgb"] = kendall_tau(blend_with_prior(frozen, xgb, k, BLEND_SAMPLES["xgb"]), scored.runtime)
    for name in recipes:
        learned = predict_scores(fine_tuned(network, given_graph, RECIPES[name], seed), scored, 512)
        taus[name] = kendall_tau(learned, scored.runtime)
        taus[f"frozen+{name}"] = kendall_tau(blend_with_prior(frozen, learned, k, BLEND_SAMPLES["network"]), scored.runtime)
        if xgb is not None:
            both = standardised_mean([learned, xgb])
            taus[f"frozen+{name}+xgb"] = kendall_tau(blend_with_prior(frozen, both, k, BLEND_SAMPLES["network+xgb"]), scored.runtime)
    return taus


def kept_positions(latency: np.ndarray, kept_latency: list[float]) -> np.ndarray:
    """Where each of a graph's configurations (de-duplicated, in measurement order, runtimes
    ``latency``) stands among the task's measured candidates as ``ranking_eval.py --keep-scores``
    kept them (every candidate, measurement order, ``kept_latency``): the graph's are the
    first occurrences, a subsequence."""
    kept = np.asarray(kept_latency)
    positions, j = [], 0
    for value in latency:
        while j < len(kept) and not np.isclose(kept[j], value, rtol=1e-9, atol=0.0):
            j += 1
        if j == len(kept):
            raise ValueError("the kept latencies do not hold the graph's runtimes in order")
        positions.append(j)
        j += 1
    return np.asarray(positions)


def chosen_tasks(fold: str, names: list[str], count: int) -> list[str]:
    """``count`` of ``names`` drawn by a generator seeded with the fold's name (all if fewer)."""
    if count <= 0 or count >= len(names):
        return sorted(names)
    rng = np.random.default_rng(zlib.crc32(fold.encode()))
    return sorted(rng.choice(sorted(names), size=count, replace=False).tolist())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="data/tir_llvm_cpu.tar.xz")
    parser.add_argument("--family-groups", type=int, default=5)
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--steps", type=int, default=1500, help="pretraining steps per fold and seed")
    parser.add_argument("--k", type=int, default=64, help="measured configurations given per task")
    parser.add_argument("--tasks-per-fold", type=int, default=12, help="0: every held-out task")
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--kept", default="",
                        help="a ranking_eval.py run made with --keep-scores and the same folds and k: score "
                             "every task it kept against its online XGBoost, on the candidates after its first k")
    parser.add_argument("--out", default="online_finetune")
    args = parser.parse_args(argv)
    recipes = [r for r in args.recipes.split(",") if r]
    if unknown := set(recipes) - set(RECIPES):
        parser.error(f"unknown recipes {sorted(unknown)}; known: {sorted(RECIPES)}")
    seeds = [int(s) for s in args.seeds.split(",")]

    started = time.perf_counter()
    graphs, families = load_configured_graphs(args.db)
    folds = _kept_folds(parser, args.kept, args.db) if args.kept else \
        family_folds(sorted(set(families.values())), args.family_groups)
    report = {"command": "python benchmarks/online_finetune.py " + " ".join(sys.argv[1:] if argv is None else argv),
              "cpu": host_cpu(), "k": args.k, "blend_samples": BLEND_SAMPLES,
              "recipes": {r: dataclasses.asdict(RECIPES[r]) for r in recipes}, "folds": {}}
    for number, (fold, held_out) in enumerate(folds.items()):
        kept = _kept_scores(args.kept, number, args.k) if args.kept else None
        if kept is not None:
            tasks = sorted(kept["latency"])
        else:
            eligible = [n for n in graphs
                        if families[n] in held_out and graphs[n].num_configs >= args.k + ONLINE_MIN_SCORED]
            tasks = chosen_tasks(fold, eligible, args.tasks_per_fold)
        runs = []
        for seed in seeds:
            path, _ = train_fold(graphs, families, held_out, "weight_average", args.steps, seed)
            network = load_checkpoint(path)[0]
            per_task = {name: _score(network, graphs[name], name, kept, args.k, recipes, seed) for name in tasks}
            models = [m for m in next(iter(per_task.values())) if m != "candidates"]
            mean = {model: float(np.nanmean([t[model] for t in per_task.values()])) for model in models}
            runs.append({"seed": seed, "per_task": per_task, "mean": mean})
            print(f"fold {number + 1}/{len(folds)} seed {seed}: "
                  + ", ".join(f"{m} {v:.3f}" for m, v in mean.items()), flush=True)
        report["folds"][fold] = {"tasks": tasks, "runs": runs}
        report["seconds"] = time.perf_counter() - started
        _write(report, args.out)
    return 0


def _kept_folds(parser: argparse.ArgumentParser, run: str, db: str) -> dict[str, set[str]]:
    """The folds of the ranking_eval.py run ``run`` (``benchmarks/results/<run>.json``), in its
    order, which numbers its kept scores; exits with status 2 if it is missing or was made on
    another database's content."""
    path = RESULTS / f"{run}.json"
    if not path.is_file():
        parser.exit(2, f"online_finetune: --kept {run}: {path} does not exist\n")
    report = json.loads(path.read_text())
    if report.get("db_sha256") != database_sha256(db):
        parser.exit(2, f"online_finetune: --kept {run} was made on another database content than {db}\n")
    return {fold: set(fold.split("+")) for fold in report["folds"]}


def _kept_scores(run: str, number: int, k: int) -> dict:
    """Fold ``number``'s kept scores of the ranking_eval.py run ``run``: ``{"latency": {task:
    [...]}, "xgb": {task: [...]}}``, XGBoost's online scores of the candidates after the first ``k``."""
    kept = json.loads(lzma.open(RESULTS / f"{run}_scores_{number}.json.xz").read())
    online = kept["seeds"][0]["online"][f"online_k{k}"]
    return {"latency": {t: kept["latency"][t] for t in online}, "xgb": {t: s["xgb"] for t, s in online.items()}}


def _score(network, graph, name: str, kept: dict | None, k: int, recipes: list[str], seed: int) -> dict[str, float]:
    """:func:`score_task` of one task: its first ``k`` configurations given, the rest scored;
    with ``kept``, the first ``k`` measured candidates' configurations given and XGBoost's
    online scores of the others joined in."""
    if kept is None:
        return score_task(network, graph, np.arange(k), np.arange(k, graph.num_configs), recipes, seed)
    positions = kept_positions(graph.runtime, kept["latency"][name])
    rest = np.flatnonzero(positions >= k)
    xgb = np.asarray(kept["xgb"][name])[positions[rest] - k]
    return score_task(network, graph, np.flatnonzero(positions < k), rest, recipes, seed, xgb)


def _write(report: dict, out: str) -> None:
    """The JSON report and its markdown table: per model, the mean over folds per seed, then
    mean (min-max) over seeds, and per fold the mean over seeds."""
    atomic_write_bytes(RESULTS / f"{out}.json", json.dumps(report, indent=1).encode())
    folds = report["folds"]
    models = list(next(iter(folds.values()))["runs"][0]["mean"])
    seeds = len(next(iter(folds.values()))["runs"])
    lines = [f"# Online fine-tuning of the pretrained network, k = {report['k']}", "",
             f"`{report['command']}` on `{report['cpu']}`, {len(folds)} folds, {seeds} seed(s); "
             "Kendall tau on the configurations after the first k, mean over each fold's scored tasks.", "",
             "| model | mean of folds (min-max over seeds) | " + " | ".join(f"fold {i + 1}" for i in range(len(folds))) + " |",
             "| --- | --- | " + " | ".join("---" for _ in folds) + " |"]
    for model in models:
        per_seed = [np.mean([f["runs"][s]["mean"][model] for f in folds.values()]) for s in range(seeds)]
        per_fold = [np.mean([run["mean"][model] for run in f["runs"]]) for f in folds.values()]
        lines.append(f"| {model} | {mean_and_range(per_seed)} | " + " | ".join(f"{v:.3f}" for v in per_fold) + " |")
    atomic_write_bytes(RESULTS / f"{out}.md", ("\n".join(lines) + "\n").encode())


if __name__ == "__main__":
    sys.exit(main())
