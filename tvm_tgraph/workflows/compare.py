"""Side-by-side tuning comparison: TGraph + pruning search against XGBoost and random search.

Every method tunes the same workloads with the same budget, seeds, builder and runner
(docs/architecture.md, "Measurement protocol"). Each run's database and a ``result.json`` go to
``OUT/runs/<workload>/<method>/seed<k>/``; a finished run is skipped when the comparison is
run again, an interrupted one is set aside (renamed, never overwritten) and run again.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cost_models import DEFAULT_CHECKPOINT

from ..checkpoint import load_checkpoint
from ..errors import CheckpointError
from ..files import atomic_write_bytes
from ..measure import FastBuilder, make_runner
from ..seen_tasks import seen_tasks, trained_task_hashes
from ..tvm_env import host_cpu_names, make_target
from ..workloads import load_module
from .machine_speed import machine_speeds, speed_line, spread, time_untuned_operator
from .tuning import tune

#: method name -> (cost model, search strategy), as :func:`tvm_tgraph.tuning.tune` names them.
METHODS = {
    "tgraph+pruning": ("tgraph", "pruning"),
    "tgraph+pruning-light": ("tgraph", "pruning-light"),
    "tgraph+pruning-fast": ("tgraph", "pruning-fast"),
    # the pretrained network alone (no online fine-tuning): what the fine-tuning costs and buys
    "tgraph-frozen+pruning-fast": ("tgraph-frozen", "pruning-fast"),
    "tgraph-frozen+pruning-light": ("tgraph-frozen", "pruning-light"),
    "tgraph-frozen+pruning-fast-256": ("tgraph-frozen", "pruning-fast-256"),
    # the pretrained network blended online with its XGBoost fallback instead of fine-tuned
    "tgraph-xgb+pruning-light": ("tgraph-xgb", "pruning-light"),
    # the same with explorers picked by the disagreement of the network and XGBoost, not at random
    "tgraph-xgb+pruning-light-ucb": ("tgraph-xgb", "pruning-light-ucb"),
    # the same with a smaller pool to choose the measured candidates from (256 above), or a smaller
    # population screened per round (192 instead of 256)
    "tgraph-xgb+pruning-light-pool64": ("tgraph-xgb", "pruning-light-pool64"),
    "tgraph-xgb+pruning-light-pool128": ("tgraph-xgb", "pruning-light-pool128"),
    "tgraph-xgb+pruning-light-pop192": ("tgraph-xgb", "pruning-light-pop192"),
    # the same halving its population in rounds that start above a 20% cost-model share
    "tgraph-xgb+pruning-light-share20": ("tgraph-xgb", "pruning-light-share20"),
    # the network fine-tuned online and blended, with its XGBoost fallback, into the prior
    "tgraph-ft-xgb+pruning-light": ("tgraph-ft-xgb", "pruning-light"),
    "tgraph-xgb": ("tgraph-xgb", "evolutionary"),
    "tgraph": ("tgraph", "evolutionary"),
    "xgb": ("xgb", "evolutionary"),
    "xgb-warm16": ("xgb-warm16", "evolutionary"),
    # the control of pruning-fast: the same unguided pool, ranked by XGBoost instead of TGraph
    "xgb-warm16+pruning-fast": ("xgb-warm16", "pruning-fast"),
    "random": ("random", "replay-trace"),
}
#: A method name with this suffix shares a whole model's budget among its tasks in turn
#: (MetaSchedule's "round-robin" task scheduler) instead of by the gradient of their latency.
ROUND_ROBIN = "+round-robin"
DEFAULT_METHODS = ("tgraph+pruning", "xgb", "xgb-warm16", "random")
#: The baselines a win must beat: at each budget, the better of the two counts.
XGB_METHODS = ("xgb", "xgb-warm16")
BUDGETS = (32, 64, 128, 256)


def base_method(method: str) -> str:
    """``method`` without the :data:`ROUND_ROBIN` suffix: the key of :data:`METHODS` it names."""
    return method.removesuffix(ROUND_ROBIN)


def method_parts(method: str) -> tuple[str, str, str]:
    """The cost model, search strategy and task scheduler :func:`~tvm_tgraph.workflows.tuning.tune`
    gets for ``method`` (a key of :data:`METHODS`, optionally with the :data:`ROUND_ROBIN` suffix)."""
    base = base_method(method)
    cost_model, strategy = METHODS[base]
    return cost_model, strategy, "round-robin" if base != method else "gradient"


@dataclass
class RunResult:
    """One tuning run. ``curve[t]``: best latency (s) after ``t + 1`` measured trials."""

    workload: str
    method: str
    seed: int
    curve: list[float]
    wall_s: float
    cost_model_s: float
    cost_model_split: dict | None = None   # {"predict": s, "update": s}
    #: The workload's untuned build timed in the same call as this run (the machine's speed
    #: then: :mod:`~tvm_tgraph.workflows.machine_speed`) and the host's CPU; None for runs
    #: recorded before runs recorded them.
    untuned_s: float | None = None
    cpu: dict | None = None
    #: Seconds the search strategy spent proposing, ``predict`` included (``TuneSummary.search_s``);
    #: None for runs recorded before runs recorded it.
    search_s: float | None = None


def run_directory(out_dir: Path, workload: str, method: str, seed: int) -> Path:
    """``OUT/runs/<workload>/<method>/seed<k>``, the workload's name made a folder name."""
    return Path(out_dir) / "runs" / workload.replace("/", "_").replace(":", "_") / method / f"seed{seed}"


def finished_run(run_dir: Path, kind, name: str, method: str, seed: int):
    """The run stored in ``run_dir/result.json`` (a ``kind`` dataclass whose first three
    fields are the workload's name, the method and the seed), or None if it is not finished.

    Raises
    ------
    ValueError
        If the file holds another run's result.
    """
    result_file = run_dir / "result.json"
    if not result_file.is_file():
        return None
    stored = kind(**json.loads(result_file.read_text()))
    identity = tuple(asdict(stored).values())[:3]
    if identity != (name, method, seed):
        raise ValueError(f"{result_file} holds the run of {' / '.join(map(str, identity))}, "
                         f"not of {name} / {method} / {seed}")
    return stored


def set_aside_interrupted(run_dir: Path) -> None:
    """Rename an interrupted run's folder (its database's trial order is incomplete) to
    ``<name>.interrupted-<time>``: kept, never overwritten, never resumed."""
    if run_dir.exists():
        run_dir.rename(run_dir.with_name(f"{run_dir.name}.interrupted-{time.strftime('%Y%m%d-%H%M%S')}"))


def run_one(workload: str, method: str, seed: int, trials: int, out_dir: Path, target,
            trials_per_iter: int, builder, runner, untuned_s, checkpoint=None) -> RunResult:
    """Tune ``workload`` with ``method`` (or read the finished run back); ``untuned_s()``
    times the workload's untuned build, called only when the run is tuned; ``checkpoint``:
    the TGraph methods' weights (default: the shipped checkpoint)."""
    run_dir = run_directory(out_dir, workload, method, seed)
    stored = finished_run(run_dir, RunResult, workload, method, seed)
    if stored is not None:
        return stored
    set_aside_interrupted(run_dir)
    cost_model, strategy, scheduler = method_parts(method)
    summary = tune(load_module(workload), cost_model, trials, run_dir, target=target, seed=seed,
                   trials_per_iter=trials_per_iter, builder=builder, runner=runner, strategy=strategy,
                   progress=False, shutdown_builder=False, task_scheduler=scheduler, checkpoint=checkpoint)
    result = RunResult(workload, method, seed, [float(x) for x in summary.curve], summary.wall_s,
                       summary.cost_model_s, summary.cost_model_split, untuned_s(), host_cpu_names(),
                       summary.search_s)
    atomic_write_bytes(run_dir / "result.json", json.dumps(asdict(result), indent=1).encode())
    return result


def run_each(names: list[str], methods: list[str], seeds: list[int], out_dir: str | Path, target, desc: str,
             run) -> list:
    """Call ``run(name, method, seed, out_dir, target, builder, runner)`` for every
    (name, seed, method), in that order, with one builder and runner kept alive; returns
    the results. Unknown methods are refused before anything runs."""
    from tqdm import tqdm

    unknown = sorted(m for m in methods if base_method(m) not in METHODS)
    if unknown:
        raise ValueError(f"unknown methods {unknown}; known: {', '.join(METHODS)} (each also with {ROUND_ROBIN})")
    target = make_target(target) if not hasattr(target, "kind") else target
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    builder, runner = FastBuilder(), make_runner()
    jobs = [(name, method, seed) for name in names for seed in seeds for method in methods]
    results = []
    try:
        with tqdm(jobs, desc=desc, unit="run") as bar:
            for name, method, seed in bar:
                bar.set_postfix_str(f"{name} {method} seed {seed}")
                results.append(run(name, method, seed, out_dir, target, builder, runner))
    finally:
        builder.shutdown()
    return results


def compare(workloads: list[str], methods: list[str], seeds: list[int], trials: int, out_dir: str | Path,
            target=None, trials_per_iter: int = 32, checkpoint=None) -> list[RunResult]:
    """Run (or resume) every (workload, method, seed) and return all runs. Each workload's
    untuned build is timed once per call, when its first run is tuned. ``checkpoint``: the
    TGraph methods' weights (default: the shipped checkpoint)."""
    untuned: dict[str, float] = {}

    def run(workload, method, seed, out, target, builder, runner):
        def untuned_s() -> float:
            if workload not in untuned:
                untuned[workload] = time_untuned_operator(load_module(workload), target)
            return untuned[workload]

        return run_one(workload, method, seed, trials, out, target, trials_per_iter, builder, runner, untuned_s,
                       checkpoint)

    return run_each(workloads, methods, seeds, out_dir, target, "compare", run)


def seen_in_training(task_lists: dict[str, list[tuple[str, object, int]]],
                     checkpoint=None) -> dict[str, list[str] | None]:
    """Per workload, the names of its ``(name, IRModule, weight)`` tasks the ``checkpoint``
    (default: the shipped one) was trained on (same structural hash); None for every
    workload when the checkpoint or the training database its card names is not at hand."""
    try:
        hashes = trained_task_hashes(load_checkpoint(checkpoint or DEFAULT_CHECKPOINT)[1])
    except CheckpointError:
        hashes = None
    return {name: None if hashes is None else seen_tasks(tasks, hashes) for name, tasks in task_lists.items()}


def _best_at(curve: list[float], budget: int) -> float:
    return float(curve[min(budget, len(curve)) - 1]) if curve else float("inf")


def _trials_to_reach(curve: list[float], latency: float) -> float:
    """First trial (1-based) whose best is at most ``latency``; ``inf`` if never."""
    hits = np.flatnonzero(np.asarray(curve) <= latency)
    return float(hits[0] + 1) if len(hits) else float("inf")


def ratios_to_stronger_xgb(methods: dict, key: str, budgets, xgb: list[str]) -> dict[str, dict[str, float]]:
    """Each method's median latency at each budget over the stronger (lower) median of the
    XGBoost methods ``xgb`` at that budget: ``{method: {str(budget): ratio}}``; ``methods[m][key]``
    maps ``str(budget)`` to a :func:`~tvm_tgraph.workflows.machine_speed.spread`."""
    stronger = {str(b): min(methods[m][key][str(b)]["median"] for m in xgb) for b in budgets}
    return {method: {b: entry[key][b]["median"] / best for b, best in stronger.items()}
            for method, entry in methods.items()}


def reference_text(reference_s: float | None) -> str:
    """The stronger XGBoost's reference latency as a report shows it, or why there is none."""
    return "none, no XGBoost method in this call" if reference_s is None else f"{reference_s * 1e3:.4f} ms"


def ratio_text(ratio: float | None) -> str:
    """A method's latency as a multiple of the stronger XGBoost's, as a report cell: ``-``
    without a reference."""
    return "-" if ratio is None else f"{ratio:.3f}x"


def reach_text(trials: float | None) -> str:
    """Trials (or trials per task) a method needed to reach the reference, as a report cell:
    ``-`` without a reference, ``not reached`` when it never did."""
    if trials is None:
        return "-"
    return f"{trials:.0f}" if np.isfinite(trials) else "not reached"


def time_shares(runs: list) -> dict:
    """Median over ``runs`` (:class:`RunResult` or ``ModelRun``) of the cost model's share of
    the wall time (``predict`` and ``update``) and of the search's own share (its proposing
    time less the ``predict`` inside it: sampling, mutation, picking; None unless every run
    recorded it)."""
    shares = {"cost_model_share": float(np.median([r.cost_model_s / r.wall_s for r in runs])), "search_share": None}
    if all(r.search_s is not None and r.cost_model_split for r in runs):
        shares["search_share"] = float(np.median([(r.search_s - r.cost_model_split["predict"]) / r.wall_s
                                                  for r in runs]))
    return shares


def share_text(share: float | None) -> str:
    """A share of the wall time as the tables print it (``-`` where not recorded)."""
    return "-" if share is None else f"{share * 100:.1f}%"


def summarise(results: list[RunResult], budgets=BUDGETS) -> dict:
    """Per workload and method: median and spread over seeds of the best latency at each
    budget, trials needed to reach the stronger XGBoost baseline's final best (the lower of
    ``xgb`` / ``xgb-warm16`` median final best), wall time, the cost model's share and the
    search's own (:func:`time_shares`).

    Returns ``{workload: {"reference_s": float, "machine_speed": dict, "methods": {method: {...}}}}``
    (``reference_s`` None, and no ratio or trials to it, when no XGBoost method ran),
    ``machine_speed`` as :func:`~tvm_tgraph.workflows.machine_speed.machine_speeds` gives it.
    """
    summary = {}
    for workload in dict.fromkeys(r.workload for r in results):
        runs = {}
        for r in results:
            if r.workload == workload:
                runs.setdefault(r.method, []).append(r)
        final = {m: float(np.median([_best_at(r.curve, len(r.curve)) for r in rs])) for m, rs in runs.items()}
        xgb = [m for m in XGB_METHODS if m in final]
        reference = min((final[m] for m in xgb), default=None)
        methods = {}
        for method, rs in runs.items():
            at = {b: [_best_at(r.curve, b) for r in rs] for b in budgets}
            methods[method] = {
                "seeds": [r.seed for r in rs],
                "best_s": {str(b): spread(v) for b, v in at.items()},
                "wall_s": float(np.median([r.wall_s for r in rs])),
                **time_shares(rs),
            }
        if reference is not None:
            ratios = ratios_to_stronger_xgb(methods, "best_s", budgets, xgb)
            for method, entry in methods.items():
                entry["vs_stronger_xgb"] = ratios[method]
                reach = [_trials_to_reach(r.curve, reference) for r in runs[method]]
                entry["trials_to_reference"] = {"median": float(np.median(reach)), "per_seed": reach}
        summary[workload] = {"reference_s": reference, "methods": methods,
                             "machine_speed": machine_speeds([r.untuned_s for rs in runs.values() for r in rs])}
    return summary


def format_markdown(summary: dict, budgets=BUDGETS, seen: dict[str, list[str] | None] | None = None) -> str:
    """One table per workload: median best latency (ms) [min-max over seeds] per budget;
    ``seen``: per workload, whether the TGraph methods' checkpoint was trained on it (:func:`seen_in_training`)."""
    lines = []
    for workload, entry in summary.items():
        lines += [f"### {workload}", ""]
        if seen and workload in seen:
            lines += ["Trained on by the TGraph methods' checkpoint (same structural hash): "
                      + ("unknown (its training database is not at hand)" if seen[workload] is None
                         else "yes" if seen[workload] else "no") + ".", ""]
        lines += [speed_line(entry["machine_speed"]), "",
                  f"Reference (stronger XGBoost's median final best): {reference_text(entry['reference_s'])}", "",
                  "| method | " + " | ".join(f"best ms @{b}" for b in budgets)
                  + " | trials to reference | vs stronger XGB @64 | wall s | cost-model share | search's own share |",
                  "| --- |" + " --- |" * (len(budgets) + 5)]
        for method, m in entry["methods"].items():
            cells = [f"{m['best_s'][str(b)]['median'] * 1e3:.4f} [{m['best_s'][str(b)]['min'] * 1e3:.4f}-"
                     f"{m['best_s'][str(b)]['max'] * 1e3:.4f}]" for b in budgets]
            reach = m.get("trials_to_reference", {}).get("median")
            ratio = m.get("vs_stronger_xgb", {}).get("64")
            lines.append(f"| {method} | " + " | ".join(cells) + f" | {reach_text(reach)} | "
                         f"{ratio_text(ratio)} | {m['wall_s']:.0f} | "
                         f"{m['cost_model_share'] * 100:.1f}% | {share_text(m.get('search_share'))} |")
        lines.append("")
    return "\n".join(lines)


def plot_curves(results: list[RunResult], path: str | Path) -> None:
    """Tuning curves: median best latency against measured trials, band = min-max over
    seeds; per workload the whole run (log scale) above, a zoom on the final stretch below."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r.workload for r in results))
    fig, axes = plt.subplots(2, len(workloads), figsize=(6 * len(workloads), 8), squeeze=False)
    for column, workload in enumerate(workloads):
        finals = []
        for method in dict.fromkeys(r.method for r in results if r.workload == workload):
            curves = [r.curve for r in results if r.workload == workload and r.method == method]
            length = min(len(c) for c in curves)
            stack = np.array([c[:length] for c in curves]) * 1e3
            trials = np.arange(1, length + 1)
            finals.append(stack[:, -1])
            for ax in axes[:, column]:
                line, = ax.plot(trials, np.median(stack, axis=0), label=f"{method} (n={len(curves)})")
                ax.fill_between(trials, stack.min(axis=0), stack.max(axis=0), color=line.get_color(), alpha=0.12)
        top, zoom = axes[:, column]
        top.set_yscale("log")
        top.set_title(workload)
        finals = np.concatenate(finals)
        zoom.set_ylim(0.98 * finals.min(), 1.15 * finals.max())
        zoom.set_title(f"{workload}: final stretch")
        for ax in (top, zoom):
            ax.set_xlabel("measured trials")
            ax.set_ylabel("best latency (ms)")
            ax.grid(True, which="both", alpha=0.3)
        top.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
