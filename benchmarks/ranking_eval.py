"""Leave-one-family-out ranking evaluation of TGraph against XGBoost and MLP, with ablations.

For each held-out family (a whole model or operator family, never seen in training) and
each seed: train TGraph on every other family (``tgraph train``'s code), then run ``tgraph
eval``'s code on the held-out family's tasks: zero-shot and online (k = 32, 64, the task's
first k measured candidates given), with TVM's XGBoost and MLP cost models trained on the
same training data in the same run. Every ablation variant is trained on the same fold
and seed and scored zero-shot on the same tasks as the recipe is (by the cost model, on each
task's candidates), so each ablation row is paired with the recipe's; a variant that hides
global features (``no_recompute``) is scored on its converted graphs, 512 candidates at a
time, as every ablation was until 2026-12-06. ``--train-fraction F`` trains every model
(TGraph, its ablations, the baselines) on a fraction F of each fold's training tasks, drawn
without looking at their measurements, to measure how ranking grows with data. TGraph stops early on ``--val-fraction`` of its training
tasks (default 0.15); ``--val-fraction 0`` trains it on all of them for ``--steps`` steps, as
``tgraph train --val-fraction 0`` trains the shipped checkpoint. Reports, per fold and
overall, the mean over seeds of the fold's mean metrics and their spread (min-max over
seeds), and a per-task table of the zero-shot Kendall tau.

    python benchmarks/ranking_eval.py --db data/tir_llvm_cpu.tar.xz \
        [--folds all | transformer,mobilenet_v2,resnet] [--family-groups 5] [--seeds 0,1,2] [--steps 12000] \
        [--recipe weight_average] [--ablations softmax,none,listmle,weighted_hinge,configs128,no_recompute,cosine,hidden128,value_embedding,weight_average] [--online-ks 32,64] [--online-steps 25] [--online-trials-per-iter 16] [--baselines xgb,mlp] [--train-fraction 0.5] [--val-fraction 0]

Online, the network is fine-tuned ``--online-steps`` steps on the k given (counted, not timed,
so that the result does not depend on the CPU's speed or load; with ``--online-trials-per-iter
N``, that many steps per update, the k given in updates of N as a tuning run of N trials per
round gives them) and scored alone
(``tgraph-ft``), blended with the frozen network as ``TGraphCostModel`` blends them
(``tgraph``) and, with XGBoost, the frozen network blended with the mean of the fine-tuned one
and XGBoost (``tgraph-prior+ft+xgb``: ``learner="network+xgb"``); see
``tvm_tgraph.workflows.evaluate``. Blends of TGraph's scores use its raw scores (the run keeps
them squashed into (0, 1), as the cost model returns them; ``unsquash`` undoes it).

Variants: ``multihead`` / ``softmax`` / ``none`` (the configuration cross-attention, see
``tvm_tgraph.nn.TGraphBlock``), ``listmle`` (multihead with the ListMLE loss instead of the
pairwise hinge), ``weighted_hinge`` (multihead, each pair of the hinge weighted by how far
apart its runtimes are), ``configs128`` (multihead, 128 configurations per training step
instead of 64), ``no_recompute`` (multihead without the recomputation global feature, see
``tvm_tgraph.convert.tir.schema``), ``cosine`` (the cosine learning-rate schedule with
warm-up), ``hidden128`` (128 channels instead of 64), ``value_embedding`` (every
configuration feature's quantised value also embedded, ``TGraphConfig.value_bins``),
``value_embedding_none`` (the same without the configuration cross-attention),
``weight_average`` (``value_embedding`` validated and kept as the moving average of its
weights, ``TrainConfig.weight_average`` 0.995: the shipped recipe until 2026-12-08, "the
shipped recipe" of the variants below), ``weight_average_none``
(the same without the configuration cross-attention), ``weight_average_softmax`` (the same with
the reference code's parameter-free softmax cross-attention instead of the multi-head one),
``weight_average_distil`` (the shipped recipe distilling the seed ensemble of the recipe's
networks of the same fold, every seed's, ``TrainConfig.distil_weight`` 0.5: one network
taught by the ensemble; trained after the recipe's seeds), ``weight_average_999`` (the shipped
recipe with a longer moving average, decay 0.999: roughly the last 1,000 steps),
``weight_average_lr2e-3`` (the shipped recipe at twice the learning rate, 2e-3),
``weight_average_dropout0.2`` (the shipped recipe with dropout 0.2 in the blocks and the head,
as the reference code trains, instead of 0.1), ``weight_average_forks2`` (the shipped recipe
with its second half trained twice from the first half's state and the two copies' averaged
weights averaged, ``PretrainConfig.forks`` 2), ``weight_average_configs128`` (the shipped
recipe with 128 configurations per training step), ``weight_average_tasks2`` (the shipped
recipe with two tasks per training step, ``TrainConfig.tasks_per_step``),
``weight_average_999_forks2`` (the two gains measured on their own combined: the moving
average's decay 0.999 and two forks; the shipped recipe since 2026-12-08, with ``--val-fraction
0``, as forks need). With XGBoost
among the baselines, TGraph and XGBoost averaged (``tgraph+xgb``: each one's zero-shot scores
standardised, then their mean) is scored as one more zero-shot model; with several seeds, the recipe's seed ensemble (the mean of each seed's
standardised zero-shot scores) is scored too, alone and averaged with XGBoost, and online the
seeds' frozen networks blended with XGBoost (``tgraph-ensemble of N seeds-prior+xgb``). Writes ``benchmarks/results/ranking_eval.{json,md}``
and ``ranking_eval_<fold number>.png`` (first seed), with the command and the CPU (timings of
two CPUs are never pooled: a task measured on two is two tasks). ``--out NAME`` changes the
file names. The report is rewritten after every fold; ``--resume`` keeps the finished folds of
an earlier run with the same arguments on the same database content and runs the others (the
CPU each fold ran on is recorded, ``fold_cpus``). ``--keep-scores`` also writes, per fold,
``<out>_scores_<fold number>.json.xz``: every seed's per-candidate scores (zero-shot: every
model's of every candidate; online: XGBoost's and the frozen network's of the candidates after
the first k) and the latencies, in measurement order, so that other blends of the same models
can be scored later without training or measuring again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import lzma
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cost_models.tgraph_cost_model import BLEND_SAMPLES, UPDATE_MAX_STEPS, blend_with_prior, unsquash  # noqa: E402
from tvm_tgraph.checkpoint import load_checkpoint  # noqa: E402
from tvm_tgraph.cli.common import fraction  # noqa: E402
from tvm_tgraph.convert.tir import FEATURE_SCHEMA, RECOMPUTE_COLUMN  # noqa: E402
from tvm_tgraph.graph import ConfiguredGraph  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.measured_tasks import database_sha256, load_configured_graphs, load_measured_tasks  # noqa: E402
from tvm_tgraph.metrics import mean_and_range, mean_metrics, ranking_metrics, standardised_mean  # noqa: E402
from tvm_tgraph.nn import TGraphEnsemble, TGraphNet  # noqa: E402
from tvm_tgraph.pretrain import PretrainConfig, evaluate_graphs, train_checkpoint  # noqa: E402
from tvm_tgraph.training import TrainConfig  # noqa: E402
from tvm_tgraph.tvm_env import host_cpu, make_target  # noqa: E402
from tvm_tgraph.workflows.evaluate import (  # noqa: E402
    METRICS, evaluate, format_table, plot_scatter, train_baselines,
)

RESULTS = Path(__file__).parent / "results"
NO_EARLIER_REPORT = {"folds": {}, "seconds": 0.0}  # what a run that resumes nothing starts from (read only)

@dataclasses.dataclass(frozen=True)
class Variant:
    """A training recipe: network overrides, training overrides (``TrainConfig`` fields),
    global-feature columns the variant never sees (zeroed in its training and its scoring), and
    the forks of its second half (``PretrainConfig.forks``)."""

    network: dict
    train: dict = dataclasses.field(default_factory=dict)
    hidden_globals: tuple[int, ...] = ()
    forks: int = 1

    @property
    def distils_recipe(self) -> bool:
        """Whether the variant distils (``TrainConfig.distil_weight`` > 0): its teacher is the
        seed ensemble of the recipe's networks of the same fold, every seed's."""
        return self.train.get("distil_weight", 0.0) > 0

    def graphs_seen(self, graphs: dict[str, ConfiguredGraph]) -> dict[str, ConfiguredGraph]:
        """``graphs`` as this variant sees them: ``hidden_globals`` zeroed."""
        if not self.hidden_globals:
            return graphs
        seen = {}
        for name, graph in graphs.items():
            global_feat = graph.global_feat.copy()
            global_feat[:, list(self.hidden_globals)] = 0.0
            seen[name] = dataclasses.replace(graph, global_feat=global_feat)
        return seen


def _weight_average(train: dict | None = None, **network) -> Variant:
    """The recipe shipped until 2026-12-08 (multi-head cross-attention, value embedding, the
    weights' moving average with decay 0.995) with ``train`` overriding its ``TrainConfig`` fields and ``network``
    its network settings."""
    return Variant({"cross_attention": "multihead", "value_bins": 160, **network},
                   {"weight_average": 0.995, **(train or {})})


VARIANTS = {
    "multihead": Variant({"cross_attention": "multihead"}),
    "softmax": Variant({"cross_attention": "softmax"}),
    "none": Variant({"cross_attention": "none"}),
    "listmle": Variant({"cross_attention": "multihead"}, {"loss": "listmle"}),
    "weighted_hinge": Variant({"cross_attention": "multihead"}, {"loss": "weighted_hinge"}),
    "configs128": Variant({"cross_attention": "multihead"}, {"configs_per_step": 128}),
    "no_recompute": Variant({"cross_attention": "multihead"}, hidden_globals=(RECOMPUTE_COLUMN,)),
    "cosine": Variant({"cross_attention": "multihead"}, {"lr_schedule": "cosine"}),
    "hidden128": Variant({"cross_attention": "multihead", "hidden": 128}),
    "value_embedding": Variant({"cross_attention": "multihead", "value_bins": 160}),
    "value_embedding_none": Variant({"cross_attention": "none", "value_bins": 160}),
    "weight_average": _weight_average(),
    "weight_average_none": _weight_average(cross_attention="none"),
    "weight_average_softmax": _weight_average(cross_attention="softmax"),
    "weight_average_hidden128": _weight_average(hidden=128),
    "weight_average_distil": _weight_average(train={"distil_weight": 0.5}),
    "weight_average_999": _weight_average(train={"weight_average": 0.999}),
    "weight_average_lr2e-3": _weight_average(train={"lr": 2e-3}),
    "weight_average_dropout0.2": _weight_average(dropout=0.2),
    "weight_average_forks2": dataclasses.replace(_weight_average(), forks=2),
    "weight_average_configs128": _weight_average(train={"configs_per_step": 128}),
    "weight_average_tasks2": _weight_average(train={"tasks_per_step": 2}),
    "weight_average_999_forks2": dataclasses.replace(_weight_average(train={"weight_average": 0.999}), forks=2),
}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What every fold runs: the recipe and its steps, the seeds, the ablation variants, the
    online settings' k and the baselines."""

    recipe: str
    steps: int
    seeds: tuple[int, ...]
    ablations: tuple[str, ...]
    online_ks: tuple[int, ...]
    baselines: tuple[str, ...]
    online_steps: int = UPDATE_MAX_STEPS
    online_trials_per_iter: int | None = None
    val_fraction: float = PretrainConfig.val_fraction


@dataclasses.dataclass(frozen=True)
class Fold:
    """One fold: the held-out families, their tasks, and the training tasks (of every other
    family, or ``--train-fraction`` of them)."""

    name: str
    families: set[str]
    held_out: list
    training: list


def family_folds(families: list[str], groups: int | None) -> dict[str, set[str]]:
    """Folds of whole families: one per family (``groups`` None), or the families dealt into
    ``groups`` groups after a shuffle seeded by nothing but the family names' count, so that
    no fold correlates with what is measured."""
    if not groups:
        return {family: {family} for family in families}
    order = sorted(families)
    np.random.default_rng(len(order)).shuffle(order)
    dealt = [sorted(order[i::groups]) for i in range(groups)]
    return {"+".join(group): set(group) for group in dealt if group}


def training_subset(tasks: list, fraction: float) -> list:
    """The first ``fraction`` (at least one task) of ``tasks`` in an order shuffled by a seed of
    nothing but their count, kept in their own order: a smaller training set, chosen without
    looking at what was measured, each fraction's set inside every larger one's."""
    if fraction >= 1.0:
        return tasks
    kept = set(np.random.default_rng(len(tasks)).permutation(len(tasks))[:max(1, round(fraction * len(tasks)))])
    return [task for i, task in enumerate(tasks) if i in kept]


def train_fold(graphs: dict, families: dict, held_out: set[str], variant: str, steps: int, seed: int,
               only: set[str] | None = None, val_fraction: float = PretrainConfig.val_fraction,
               teacher: TGraphNet | TGraphEnsemble | None = None) -> tuple[Path, dict]:
    """Train ``variant`` on every family outside ``held_out`` (on the tasks named in ``only``, if
    given), ``val_fraction`` of them held out for early stopping (0: all trained on for ``steps``
    steps, as the shipped checkpoint is), distilling ``teacher`` if the variant distils; return
    (checkpoint path, training history)."""
    recipe = VARIANTS[variant]
    names = [name for name in graphs if families[name] not in held_out and (only is None or name in only)]
    config = PretrainConfig(steps=steps, seed=seed, val_fraction=val_fraction, train=TrainConfig(**recipe.train),
                            network=recipe.network, forks=recipe.forks)
    path = Path(tempfile.mkdtemp(prefix="tgraph_fold_")) / f"{variant}.safetensors"
    card = train_checkpoint(recipe.graphs_seen(graphs), names, config, FEATURE_SCHEMA, path,
                            data={"held_out_families": sorted(held_out), "variant": variant}, teacher=teacher)
    return path, card["history"]


def blend(held_out: list, members: list[tuple[dict, str]]) -> dict:
    """Per task, the mean of the members' zero-shot scores standardised (zero mean, unit
    spread; TGraph's raw scores, :func:`unsquash` of the squashed ones the run keeps);
    ``members`` are ``(run, model)`` pairs. Returns ``{"scores", "per_task", "mean"}``."""
    def raw(run: dict, task: str, model: str) -> np.ndarray:
        scores = run["scores"][task][model]
        return unsquash(scores) if model == "tgraph" else np.asarray(scores)

    scores = {task.name: standardised_mean([raw(run, task.name, model) for run, model in members])
              for task in held_out}
    per_task = {task.name: ranking_metrics(scores[task.name], task.latency) for task in held_out}
    return {"scores": scores, "per_task": per_task, "mean": mean_metrics(per_task)}


def add_xgb_blend(result: dict, held_out: list) -> None:
    """Score TGraph and XGBoost averaged (``tgraph+xgb``) as one more zero-shot model of ``result``."""
    mixed = blend(held_out, [(result, "tgraph"), (result, "xgb")])
    result["results"]["zero_shot"]["tgraph+xgb"] = {"per_task": mixed["per_task"], "mean": mixed["mean"]}
    for task, scores in mixed["scores"].items():
        result["scores"][task]["tgraph+xgb"] = scores.tolist()


def seed_ensembles(runs: list[dict], held_out: list) -> dict[str, dict]:
    """Metrics of the recipe's seed ensemble (the mean of each seed's standardised zero-shot
    scores) and, with XGBoost among the baselines, of that ensemble averaged with XGBoost and,
    in each online setting, of the seeds' frozen pretrained networks (their standardised mean)
    blended with XGBoost given the task's first k as ``TGraphCostModel`` blends them. Each
    entry names its ``setting`` and ``model``."""
    members = [(run, "tgraph") for run in runs]
    model = f"tgraph-ensemble of {len(runs)} seeds"
    ensembles = {model: {"setting": "zero_shot", "model": model, **blend(held_out, members)}}
    if "xgb" in runs[0]["results"]["zero_shot"]:
        # XGBoost's scores are the same in every run (trained once per fold)
        ensembles[f"{model}+xgb"] = {"setting": "zero_shot", "model": f"{model}+xgb",
                                     **blend(held_out, members + [(runs[0], "xgb")] * len(runs))}
    for setting, by_task in runs[0].get("online_scores", {}).items():
        k = int(setting.removeprefix("online_k"))
        per_task = {}
        for task in held_out:
            if task.name in by_task:
                prior = standardised_mean([unsquash(run["online_scores"][setting][task.name]["tgraph-prior"])
                                           for run in runs])
                scores = blend_with_prior(prior, np.asarray(by_task[task.name]["xgb"]), k, BLEND_SAMPLES["xgb"])
                per_task[task.name] = ranking_metrics(scores, task.latency[k:])
        ensembles[f"{setting}/{model}-prior+xgb"] = {"setting": setting, "model": f"{model}-prior+xgb",
                                                     "per_task": per_task, "mean": mean_metrics(per_task)}
    return {name: {key: e[key] for key in ("setting", "model", "per_task", "mean")} for name, e in ensembles.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="data/tir_llvm_cpu.tar.xz")
    parser.add_argument("--folds", default="all", help="comma-separated families, or all (default)")
    parser.add_argument("--family-groups", type=int, help="hold out groups of whole families instead of one "
                        "family per fold: the families dealt into this many groups")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--steps", type=int, default=PretrainConfig.steps,
                        help="training steps per fold and seed (default: the shipped recipe's, PretrainConfig.steps)")
    parser.add_argument("--recipe", default="weight_average", choices=list(VARIANTS),
                        help="the variant compared against XGBoost and MLP, zero-shot and online (default "
                             "weight_average, the shipped recipe until 2026-12-08; the shipped recipe since "
                             "is weight_average_999_forks2, which needs --val-fraction 0; "
                             "value_embedding: weight_average without the "
                             "weights' moving average, the shipped recipe until 2026-12-04; multihead: "
                             "without the value embedding either, the shipped recipe until 2026-12-02)")
    parser.add_argument("--ablations", default="softmax,none",
                        help="comma-separated variants scored zero-shot beside the recipe on every fold and seed "
                             "(empty for none)")
    parser.add_argument("--online-ks", default="32,64",
                        help="comma-separated k of the online settings (empty: zero-shot only, much faster: the "
                             "baselines retrain on every task and k)")
    parser.add_argument("--online-steps", type=int, default=UPDATE_MAX_STEPS,
                        help="steps the network is fine-tuned on a task's k given candidates online (counted, "
                             f"not timed; default {UPDATE_MAX_STEPS}, the cost model's step limit of one update)")
    parser.add_argument("--online-trials-per-iter", type=int,
                        help="give the network the k in updates of this many, in measurement order, "
                             "--online-steps steps each, as a tuning run of this many trials per round "
                             "(`tgraph tune` and `tgraph compare --models`: 16) gives them (default: all k in "
                             "one update); XGBoost's online scores do not depend on it (it retrains on all "
                             "it holds at every update); not with the mlp baseline")
    parser.add_argument("--baselines", default="xgb,mlp",
                        help="TVM's cost models trained on the same tasks: xgb (once per fold: its training is "
                             "deterministic) and mlp (per seed)")
    parser.add_argument("--train-fraction", type=float, default=1.0,
                        help="train every model on this fraction of each fold's training tasks (drawn without "
                             "looking at their measurements; a smaller fraction's tasks are in every larger "
                             "one's) to measure how ranking grows with data (default 1: all)")
    parser.add_argument("--val-fraction", type=fraction, default=PretrainConfig.val_fraction,
                        help="share of each fold's training tasks TGraph holds out to stop early (default "
                             f"{PretrainConfig.val_fraction}); 0 trains on all of them for --steps steps without "
                             "early stopping, as `tgraph train` trains the shipped checkpoint")
    parser.add_argument("--out", default="ranking_eval", help="result file names under benchmarks/results/")
    parser.add_argument("--keep-scores", action="store_true",
                        help="also write each fold's per-candidate scores and latencies to "
                             "<out>_scores_<fold number>.json.xz")
    parser.add_argument("--resume", action="store_true",
                        help="keep the finished folds of the report --out names, if it was written by the same "
                             "arguments on the same database content, and run the others")
    args = parser.parse_args()
    ablations = tuple(v for v in args.ablations.split(",") if v)
    unknown = set(ablations) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variant(s) {sorted(unknown)}: choose from {list(VARIANTS)}")
    if VARIANTS[args.recipe].hidden_globals:
        parser.error(f"--recipe {args.recipe} hides features from its training only: use it as an ablation")
    if VARIANTS[args.recipe].distils_recipe:
        parser.error(f"--recipe {args.recipe} distils the recipe's seed ensemble: use it as an ablation")
    baselines = tuple(b for b in args.baselines.split(",") if b)
    if set(baselines) - {"xgb", "mlp"}:
        parser.error(f"unknown baseline(s) {sorted(set(baselines) - {'xgb', 'mlp'})}: choose from xgb, mlp")
    if not 0.0 < args.train_fraction <= 1.0:
        parser.error(f"--train-fraction must be in (0, 1], not {args.train_fraction}")
    if args.online_trials_per_iter is not None and args.online_trials_per_iter < 1:
        parser.error(f"--online-trials-per-iter must be at least 1, not {args.online_trials_per_iter}")
    if args.online_trials_per_iter is not None and "mlp" in baselines:
        parser.error("--online-trials-per-iter with the mlp baseline: its online training depends on the "
                     "split, which only the network's follows here; use --baselines xgb")

    start = time.time()
    command = "python benchmarks/ranking_eval.py " + " ".join(a for a in sys.argv[1:] if a != "--resume")
    db_sha256 = database_sha256(args.db)
    earlier = _earlier_report(parser, args.out, command, db_sha256) if args.resume else NO_EARLIER_REPORT
    start -= earlier["seconds"]
    target = make_target()
    tasks = load_measured_tasks(args.db, target)
    graphs, families = load_configured_graphs(args.db, target, tasks=tasks)
    folds = family_folds(sorted(set(families.values())) if args.folds == "all" else args.folds.split(","),
                         args.family_groups)
    plan = Plan(args.recipe, args.steps, tuple(int(s) for s in args.seeds.split(",")), ablations,
                tuple(int(k) for k in args.online_ks.split(",") if k), baselines, args.online_steps,
                args.online_trials_per_iter, args.val_fraction)
    report = {"command": command, "db": args.db, "db_sha256": db_sha256,
              "cpu": {"llvm": host_cpu(), "machine": platform.machine()},
              "measured_cpus": sorted({t.cpu for t in tasks}), "recipe": args.recipe, "ablations": list(ablations),
              "train_fraction": args.train_fraction, "val_fraction": args.val_fraction, "folds": {}, "fold_cpus": {}}
    lines = ["# Ranking on held-out families", "", f"Command: `{report['command']}`", "",
             f"Evaluated on {report['cpu']['llvm']}; candidates measured on {', '.join(report['measured_cpus'])}; "
             f"{sum(g.num_configs for g in graphs.values())} distinct candidates of {len(graphs)} tasks in "
             f"{len(set(families.values()))} families; seeds {args.seeds}; "
             f"TGraph = the `{args.recipe}` recipe, "
             + (f"{args.steps} steps at most, {args.val_fraction:g} of the training tasks held out to stop early; "
                if args.val_fraction > 0 else f"{args.steps} steps on all training tasks, no early stopping; ")
             + (f"every model trained on {args.train_fraction:g} of each fold's training tasks; "
                if args.train_fraction < 1.0 else "")
             + "mean over seeds (min-max).", ""]
    settings = ("zero_shot", *(f"online_k{k}" for k in plan.online_ks))
    overall: dict = {}
    for fold_name, fold_families in folds.items():
        fold = Fold(fold_name, fold_families, [t for t in tasks if families.get(t.name) in fold_families],
                    training_subset([t for t in tasks if t.name in families and families[t.name] not in fold_families],
                                    args.train_fraction))
        if fold.name in earlier["folds"]:
            runs = earlier["folds"][fold.name]
            ensembles = earlier.get("seed_ensemble", {}).get(fold.name, {})
            report["fold_cpus"][fold.name] = earlier["fold_cpus"][fold.name]
            print(f"{fold.name}: kept from the earlier run", flush=True)
        else:
            number = len(report["folds"])
            runs, ensembles = _run_fold(plan, fold, graphs, families, start, RESULTS / f"{args.out}_{number}.png",
                                        RESULTS / f"{args.out}_scores_{number}.json.xz" if args.keep_scores else None)
            report["fold_cpus"][fold.name] = host_cpu()
        report["folds"][fold.name] = runs
        if ensembles:
            report.setdefault("seed_ensemble", {})[fold.name] = ensembles
        for name, ensemble in ensembles.items():
            row = (ensemble.get("setting", "zero_shot"), ensemble.get("model", name))
            overall.setdefault(row, {}).setdefault("all", []).append(ensemble["mean"]["kendall_tau"])
        lines += _fold_lines(fold.name, report["fold_cpus"][fold.name], runs, settings, ablations, len(fold.training),
                             ensembles)
        for seed, run in zip(plan.seeds, runs):
            for setting in settings:
                for model, result in run["results"][setting].items():
                    overall.setdefault((setting, model), {}).setdefault(seed, []).append(
                        result["mean"].get("kendall_tau", float("nan")))
            for variant, result in run["ablations"].items():
                overall.setdefault(("zero_shot", f"tgraph-{variant}"), {}).setdefault(seed, []).append(
                    result["mean"]["kendall_tau"])
        _write(report, lines + _overall_lines(overall, start), args.out, start)
    print("\n".join(lines + _overall_lines(overall, start)))


def _earlier_report(parser: argparse.ArgumentParser, out: str, command: str, db_sha256: str) -> dict:
    """The report ``--resume`` continues: ``benchmarks/results/<out>.json`` if it was written by
    ``command`` on a database of content ``db_sha256``; none yet is an empty one. Exits with
    status 2 and one line naming the mismatch otherwise."""
    path = RESULTS / f"{out}.json"
    if not path.is_file():
        return NO_EARLIER_REPORT
    earlier = json.loads(path.read_text())
    for key, wanted in (("command", command), ("db_sha256", db_sha256)):
        if earlier.get(key) != wanted:
            parser.exit(2, f"ranking_eval: --resume: {path} has {key} {earlier.get(key)!r}, not {wanted!r}; "
                           "choose another --out or drop --resume\n")
    return earlier


def _run_fold(plan: Plan, fold: Fold, graphs: dict, families: dict, start: float,
              scatter_png: Path, scores_path: Path | None = None) -> tuple[list[dict], dict[str, dict]]:
    """Train and score one fold on every seed: (the runs as the report keeps them, the seed
    ensembles' metrics). With ``scores_path``, the runs' per-candidate scores are written there."""
    runs, checkpoints = [], []
    training = {task.name for task in fold.training}
    xgb = train_baselines(tuple(b for b in plan.baselines if b == "xgb"), fold.training)
    eval_graphs = {t.name: graphs[t.name] for t in fold.held_out}

    def ablate(variant: str, seed: int, teacher=None) -> dict:
        """Train ``variant`` on this fold and score it zero-shot as the recipe is scored (by the
        cost model), or, hiding features the cost model would give it, on its graphs."""
        path, variant_history = train_fold(graphs, families, fold.families, variant, plan.steps, seed, training,
                                           plan.val_fraction, teacher)
        if VARIANTS[variant].hidden_globals:
            scored = evaluate_graphs(load_checkpoint(path)[0], VARIANTS[variant].graphs_seen(eval_graphs),
                                     chunk_size=512)
        else:
            scored = evaluate(fold.held_out, fold.training, str(path), {}, (), seed=seed,
                              progress=False)["results"]["zero_shot"]["tgraph"]
        return {**scored, "history": variant_history}

    for seed in plan.seeds:
        checkpoint, history = train_fold(graphs, families, fold.families, plan.recipe, plan.steps, seed, training,
                                         plan.val_fraction)
        checkpoints.append(checkpoint)
        trained = {**xgb, **train_baselines(tuple(b for b in plan.baselines if b != "xgb"), fold.training, seed)}
        result = evaluate(fold.held_out, fold.training, str(checkpoint), trained, plan.online_ks, seed=seed,
                          progress=False, online_steps=plan.online_steps,
                          online_trials_per_iter=plan.online_trials_per_iter)
        result["history"] = history
        if "xgb" in trained:
            add_xgb_blend(result, fold.held_out)
        result["ablations"] = {v: ablate(v, seed) for v in plan.ablations if not VARIANTS[v].distils_recipe}
        runs.append(result)
        print(f"[{(time.time() - start) / 60:.0f} min] {fold.name} seed {seed}: tau "
              + ", ".join(f"{m} {r['mean']['kendall_tau']:.3f}" for m, r in result["results"]["zero_shot"].items())
              + "".join(f", {v} {r['mean']['kendall_tau']:.3f}" for v, r in result["ablations"].items()),
              flush=True)
        if seed == plan.seeds[0]:
            plot_scatter(result, scatter_png)
    distilling = [v for v in plan.ablations if VARIANTS[v].distils_recipe]
    if distilling:     # the teacher: every seed's recipe network of this fold
        networks = [load_checkpoint(path)[0] for path in checkpoints]
        teacher = networks[0] if len(networks) == 1 else TGraphEnsemble(networks[0].config, networks=networks)
        for seed, result in zip(plan.seeds, runs):
            result["ablations"].update({v: ablate(v, seed, teacher) for v in distilling})
            print(f"[{(time.time() - start) / 60:.0f} min] {fold.name} seed {seed}: tau "
                  + ", ".join(f"{v} {result['ablations'][v]['mean']['kendall_tau']:.3f}" for v in distilling),
                  flush=True)
    ensembles = seed_ensembles(runs, fold.held_out) if len(runs) > 1 else {}
    if scores_path is not None:
        _write_scores(scores_path, fold.name, plan.seeds, runs)
    # per-candidate scores are in the scatter plots (and --keep-scores' file); the report keeps the metrics
    kept = [{k: v for k, v in run.items() if k not in ("scores", "online_scores", "latency")} for run in runs]
    return kept, ensembles


def _write_scores(path: Path, fold: str, seeds: tuple[int, ...], runs: list[dict]) -> None:
    """One fold's per-candidate scores and latencies (measurement order), xz-compressed JSON:
    ``{"fold", "latency": {task: [...]}, "seeds": [{"seed", "zero_shot": {task: {model: [...]}},
    "online": {setting: {task: {"xgb": [...], "tgraph-prior": [...], "tgraph-ft": [...]}}}}]}``."""
    kept = {"fold": fold, "latency": runs[0]["latency"],
            "seeds": [{"seed": seed, "zero_shot": run["scores"], "online": run["online_scores"]}
                      for seed, run in zip(seeds, runs)]}
    atomic_write_bytes(path, lzma.compress(json.dumps(kept).encode()))


def _fold_lines(fold: str, cpu: str, runs: list[dict], settings, ablations: list[str], num_training: int,
                ensembles: dict[str, dict]) -> list[str]:
    """The markdown section of one fold (run on ``cpu``): metrics per setting and model, ablations, per-task tau."""
    lines = [f"## held out: {fold} ({len(runs[0]['settings']['eval_tasks'])} tasks; trained on {num_training} tasks; "
             f"run on {cpu})",
             "", "| setting | model | " + " | ".join(METRICS) + " |", "| --- | --- |" + " --- |" * len(METRICS)]
    for setting in settings:
        for model in runs[0]["results"][setting]:
            cells = [mean_and_range([r["results"][setting][model]["mean"].get(m, float("nan")) for r in runs])
                     for m in METRICS]
            lines.append(f"| {setting} | {model} | " + " | ".join(cells) + " |")
    for variant in ablations:
        cells = [mean_and_range([r["ablations"][variant]["mean"].get(m, float("nan")) for r in runs]) for m in METRICS]
        lines.append(f"| zero_shot | tgraph-{variant} | " + " | ".join(cells) + " |")
    for name, ensemble in ensembles.items():
        lines.append(f"| {ensemble.get('setting', 'zero_shot')} | {ensemble.get('model', name)} | "
                     + " | ".join(f"{ensemble['mean'].get(m, float('nan')):.3f}" for m in METRICS) + " |")
    per_task = runs[0]["results"]["zero_shot"]
    columns = list(per_task) + [f"tgraph-{v}" for v in ablations]
    lines += ["", "Zero-shot Kendall tau per task (first seed):", "",
              "| task | " + " | ".join(columns) + " |", "| --- |" + " --- |" * len(columns)]
    for task in per_task["tgraph"]["per_task"]:
        cells = [per_task[m]["per_task"][task]["kendall_tau"] for m in per_task]
        cells += [runs[0]["ablations"][v]["per_task"][task]["kendall_tau"] for v in ablations]
        lines.append(f"| {task} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return lines + ["", "```", format_table(runs[0]), "```", ""]


def _overall_lines(overall: dict, start: float) -> list[str]:
    lines = ["## Mean over folds (Kendall tau; per seed the mean over folds, then mean and min-max over seeds)", "",
             "| setting | model | Kendall tau |", "| --- | --- | --- |"]
    for (setting, model), by_seed in overall.items():
        lines.append(f"| {setting} | {model} | {mean_and_range([float(np.nanmean(v)) for v in by_seed.values()])} |")
    return lines + [f"\nTotal time: {(time.time() - start) / 60:.1f} min."]


def _write(report: dict, lines: list[str], out: str, start: float) -> None:
    """Write the results so far (a long run leaves its finished folds behind if stopped)."""
    report["seconds"] = time.time() - start
    atomic_write_bytes(RESULTS / f"{out}.json", json.dumps(report, indent=1).encode())
    atomic_write_bytes(RESULTS / f"{out}.md", ("\n".join(lines) + "\n").encode())


if __name__ == "__main__":
    main()
