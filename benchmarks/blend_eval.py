"""Rules for blending the pretrained network with XGBoost online, each rule's one parameter
chosen by nested cross-validation over the folds of a ``ranking_eval.py --keep-scores`` run.

No training and no TVM: the run's kept scores (``<run>_scores_<fold number>.json.xz``) hold,
per fold, seed and task, the frozen network's and the online XGBoost's scores of the candidates
after the task's first k, the network's zero-shot scores of every candidate, and the latencies.
Rules (the prior is one seed's network, or the standardised mean of every seed's: the ensemble):

- ``fixed``: the shipped rule, ``TGraphCostModel``'s: prior weight ``b / (k + b)``;
- ``trusted``: the same with ``b`` times the prior's Kendall tau on the task's k given
  candidates (0 when it ranks them backwards), so a prior that misranks what was measured
  gives way to XGBoost on that task. It reads only the k measurements a tuner has;
- ``fine-tuned`` and ``fine-tuned+xgb`` (runs whose kept scores hold ``tgraph-ft``): the
  ``network`` and ``network+xgb`` learners' rules, prior weight ``b / (k + b)`` on the frozen
  network, the rest on the network fine-tuned on the k given candidates (for the ensemble, the
  standardised mean of every seed's fine-tuned copy), or on the mean of its standardised scores
  and XGBoost's.

For each held-out fold, ``b`` is the grid value with the best mean Kendall tau over the *other*
folds (every seed's, for one network); the fold's tau at that ``b`` is the rule's nested score,
which never saw the fold. The full grid over all folds (selected on the folds it is scored on:
optimistic, for reading only) and XGBoost alone are reported beside it.

    python benchmarks/blend_eval.py --run ranking_eval_groups5_ve_kept [--setting online_k64] [--out NAME]

Writes ``benchmarks/results/<out>.{json,md,png}`` (default ``<run>_blends``).
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cost_models.tgraph_cost_model import BLEND_SAMPLES, blend_with_prior, unsquash  # noqa: E402
from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.metrics import kendall_tau, mean_and_range, mean_metrics, ranking_metrics, standardised_mean  # noqa: E402

RESULTS = Path(__file__).parent / "results"
GRID = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
RULES = ("fixed", "trusted", "fine-tuned", "fine-tuned+xgb")
FINE_TUNED_RULES = ("fine-tuned", "fine-tuned+xgb")
#: The cost model's learner that blends as the rule does, and so the rule's shipped ``b``.
RULE_LEARNERS = {"fixed": "xgb", "fine-tuned": "network", "fine-tuned+xgb": "network+xgb"}


def load_folds(run: str) -> list[dict]:
    """The kept scores of every fold of ``run``, in fold order."""
    folds, number = [], 0
    while (RESULTS / f"{run}_scores_{number}.json.xz").is_file():
        folds.append(json.loads(lzma.decompress((RESULTS / f"{run}_scores_{number}.json.xz").read_bytes())))
        number += 1
    return folds


def prior_weight_samples(rule: str, b: float, prior_given: np.ndarray, latency_given: np.ndarray) -> float:
    """The ``blend_samples`` of :func:`blend_with_prior` that ``rule`` gives a task whose prior
    scored its ``(k,)`` given candidates ``prior_given`` and measured them ``latency_given``."""
    if rule != "trusted":
        return b
    tau = kendall_tau(prior_given, latency_given)
    return b * max(tau, 0.0) if tau == tau else 0.0


def rules_of(fold: dict, setting: str) -> tuple[str, ...]:
    """The rules the kept scores of ``fold`` in ``setting`` can score: the fine-tuned rules need
    the fine-tuned network's scores (kept by runs from 2026-12-04 on)."""
    fine_tuned = all("tgraph-ft" in online for online in fold["seeds"][0]["online"][setting].values())
    return RULES if fine_tuned else tuple(r for r in RULES if r not in FINE_TUNED_RULES)


def grid_metrics(fold: dict, members: list[int], setting: str) -> dict[str, np.ndarray]:
    """Per rule, ``(G, 2)``: the mean over the tasks of ``fold`` in ``setting`` of the Kendall tau
    and top-5 score of the prior (the standardised mean of the networks of the seeds at indices
    ``members``) blended with the online XGBoost (first member's run; XGBoost is the same in every
    seed), or with the mean of it and the members' fine-tuned networks, by that rule, at each
    ``b`` of :data:`GRID`."""
    k = int(setting.removeprefix("online_k"))
    seeds = fold["seeds"]
    rules = rules_of(fold, setting)
    per_task: dict[str, list[dict[str, dict]]] = {rule: [{} for _ in GRID] for rule in rules}
    for task, online in seeds[members[0]]["online"][setting].items():
        latency = np.asarray(fold["latency"][task])
        # the networks' scores are kept squashed into (0, 1), as the cost model returns them
        prior = standardised_mean([unsquash(seeds[m]["online"][setting][task]["tgraph-prior"]) for m in members])
        prior_given = standardised_mean([unsquash(seeds[m]["zero_shot"][task]["tgraph"])[:k] for m in members])
        xgb = np.asarray(online["xgb"])
        learned = {"fixed": xgb, "trusted": xgb}     # what each rule blends the prior with
        if "fine-tuned" in rules:
            fine_tuned = standardised_mean([unsquash(seeds[m]["online"][setting][task]["tgraph-ft"]) for m in members])
            learned |= {"fine-tuned": fine_tuned, "fine-tuned+xgb": standardised_mean([fine_tuned, xgb])}
        for rule in rules:
            for g, b in enumerate(GRID):
                samples = prior_weight_samples(rule, b, prior_given, latency[:k])
                scores = blend_with_prior(prior, learned[rule], k, samples)
                per_task[rule][g][task] = ranking_metrics(scores, latency[k:])
    return {rule: np.array([[mean_metrics(tasks)[key] for key in ("kendall_tau", "top5")] for tasks in by_b])
            for rule, by_b in per_task.items()}


def xgb_metrics(fold: dict, setting: str) -> dict[str, float]:
    """The online XGBoost's metrics alone, mean over the fold's tasks in ``setting``."""
    k = int(setting.removeprefix("online_k"))
    return mean_metrics({task: ranking_metrics(np.asarray(online["xgb"]), np.asarray(fold["latency"][task])[k:])
                         for task, online in fold["seeds"][0]["online"][setting].items()})


def nested(grid_tau: np.ndarray) -> np.ndarray:
    """``grid_tau`` ``(F, G)``: mean tau of fold f at grid value g. Returns the index chosen for
    each fold ``(F,)``: the best mean over the other folds (ties to the smaller ``b``)."""
    return np.array([int(np.argmax(np.delete(grid_tau, f, axis=0).mean(axis=0))) for f in range(grid_tau.shape[0])])


def evaluate_rules(folds: list[dict], setting: str) -> dict:
    """Every rule, prior (one network per seed, the seed ensemble) and grid value on every fold:
    ``{"xgb": {...}, "priors": {prior: {rule: {"grid_tau", "grid_top5", "chosen_b", "nested_tau",
    "nested_top5"}}}}``; for one network the taus are per seed, ``(S, F, G)`` and ``(S, F)``."""
    num_seeds = len(folds[0]["seeds"])
    priors = {"one network": [[s] for s in range(num_seeds)], f"ensemble of {num_seeds} seeds": [list(range(num_seeds))]}
    xgb = [xgb_metrics(f, setting) for f in folds]
    result = {"xgb": {"fold_tau": [m["kendall_tau"] for m in xgb], "fold_top5": [m["top5"] for m in xgb]},
              "priors": {}}
    fold_index = np.arange(len(folds))
    for prior, member_sets in priors.items():
        by_members = [[grid_metrics(f, members, setting) for f in folds] for members in member_sets]
        for rule in rules_of(folds[0], setting):
            metrics = np.array([[by_fold[rule] for by_fold in by_folds] for by_folds in by_members])  # (S, F, G, 2)
            chosen = nested(metrics[..., 0].mean(axis=0))    # one network: on the other folds' mean over every seed
            result["priors"].setdefault(prior, {})[rule] = {
                "grid_tau": metrics[..., 0].tolist(), "grid_top5": metrics[..., 1].tolist(),
                "chosen_b": [GRID[c] for c in chosen],
                "nested_tau": metrics[:, fold_index, chosen, 0].tolist(),
                "nested_top5": metrics[:, fold_index, chosen, 1].tolist()}
    return result


def shipped_b() -> str:
    """The cost model's default ``b`` of each shipped rule, in words."""
    return "; ".join(f"{rule} b = {BLEND_SAMPLES[learner]} (learner {learner!r})" for rule, learner in RULE_LEARNERS.items())


def report_lines(run: str, setting: str, folds: list[dict], result: dict, command: str) -> list[str]:
    """The markdown report."""
    names = [f["fold"] for f in folds]
    lines = [f"# Blend rules of `{run}`, {setting}, b chosen by nested cross-validation over folds", "",
             f"Command: `{command}`", "",
             f"{len(folds)} folds, {len(folds[0]['seeds'])} seeds; grid b = {', '.join(map(str, GRID))} "
             f"(shipped: {shipped_b()}). Kendall tau of the candidates after the first k; one network: "
             "mean over seeds (min-max over seeds of the mean over folds).", "",
             "## Nested: b chosen on the other folds", "",
             "| prior | rule | " + " | ".join(f"fold {i + 1}" for i in range(len(names)))
             + " | mean tau | mean top-5 | b chosen per fold |",
             "| --- | --- |" + " --- |" * (len(names) + 3)]
    xgb = result["xgb"]
    lines.append("| - | XGBoost alone | " + " | ".join(f"{t:.3f}" for t in xgb["fold_tau"])
                 + f" | {np.mean(xgb['fold_tau']):.3f} | {np.mean(xgb['fold_top5']):.3f} | - |")
    for prior, rules in result["priors"].items():
        for rule, r in rules.items():
            tau, top5 = np.asarray(r["nested_tau"]), np.asarray(r["nested_top5"])   # (S, F)
            lines.append(f"| {prior} | {rule} | " + " | ".join(f"{t:.3f}" for t in tau.mean(axis=0))
                         + f" | {mean_and_range(tau.mean(axis=1))} | {mean_and_range(top5.mean(axis=1))} | "
                         + ", ".join(map(str, r["chosen_b"])) + " |")
    lines += ["", "## Every b on every fold (selected on the folds it is scored on: optimistic, for reading only)",
              "", "| prior | rule | " + " | ".join(f"b={b}" for b in GRID) + " |", "| --- | --- |" + " --- |" * len(GRID)]
    for prior, rules in result["priors"].items():
        for rule, r in rules.items():
            grid = np.asarray(r["grid_tau"]).mean(axis=(0, 1))
            lines.append(f"| {prior} | {rule} | " + " | ".join(f"{t:.3f}" for t in grid) + " |")
    return lines + [""]


def plot(result: dict, path: Path) -> None:
    """Mean tau over folds against b, per prior and rule, with XGBoost alone as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for prior, rules in result["priors"].items():
        for rule, r in rules.items():
            ax.semilogx(GRID, np.asarray(r["grid_tau"]).mean(axis=(0, 1)), "o-", base=2, label=f"{prior}, {rule}")
    ax.axhline(np.mean(result["xgb"]["fold_tau"]), color="k", ls="--", label="XGBoost alone")
    for b in sorted({BLEND_SAMPLES[learner] for learner in RULE_LEARNERS.values()}):
        ax.axvline(b, color="grey", ls=":")
    ax.plot([], [], color="grey", ls=":", label=f"shipped: {shipped_b()}")
    ax.set_xlabel("b (prior weight b / (k + b))")
    ax.set_ylabel("Kendall tau, mean over folds")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="the --out of a ranking_eval.py --keep-scores run")
    parser.add_argument("--setting", default="online_k64")
    parser.add_argument("--out", help="result file names under benchmarks/results/ (default <run>_blends)")
    args = parser.parse_args()
    folds = load_folds(args.run)
    if len(folds) < 2:
        parser.exit(2, f"blend_eval: {len(folds)} kept-score file(s) {RESULTS}/{args.run}_scores_<n>.json.xz: "
                       "nested cross-validation needs at least 2 folds\n")
    if any(args.setting not in s["online"] for f in folds for s in f["seeds"]):
        parser.exit(2, f"blend_eval: the run's kept scores have no setting {args.setting!r}\n")
    command = "python benchmarks/blend_eval.py " + " ".join(sys.argv[1:])
    result = evaluate_rules(folds, args.setting)
    out = args.out or f"{args.run}_blends"
    lines = report_lines(args.run, args.setting, folds, result, command)
    atomic_write_bytes(RESULTS / f"{out}.json", json.dumps(
        {"command": command, "run": args.run, "setting": args.setting, "grid": list(GRID),
         "folds": [f["fold"] for f in folds], **result}, indent=1).encode())
    atomic_write_bytes(RESULTS / f"{out}.md", ("\n".join(lines) + "\n").encode())
    plot(result, RESULTS / f"{out}.png")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
