"""Ranking evaluation of TGraph against TVM's XGBoost and MLP cost models.

Every model is evaluated on the same held-out tasks, through MetaSchedule's cost-model
interface (``update`` / ``predict``), so what is measured is what tuning gets:

* **zero-shot**: the model never saw the task; XGBoost and the MLP are trained on the
  training tasks (XGBoost with ``num_warmup_samples=0``, so it is a real model, not the
  random warm-up, and retraining on every update), TGraph is the pretrained checkpoint.
* **online, k**: the task's first ``k`` measured candidates (in measurement order) are
  given to ``update``; the model then ranks the remaining ones. TGraph is fine-tuned on
  them (``TGraphCostModel``'s update, ``online_steps`` steps counted, not timed, so that
  the result does not depend on the CPU's speed): ``tgraph-ft`` is the fine-tuned network
  alone, ``tgraph`` the cost model's default ranking, the pretrained network blended with
  it (computed from the two as the cost model blends them). With XGBoost among the
  baselines, more rows are scored online: ``xgb-cold``, an untrained XGBoost given the
  task's ``k`` only (what the fallback ``TGraphCostModel`` trains on every measurement
  knows of a task tuned alone), the pretrained network, not fine-tuned, blended with each
  XGBoost (``tgraph-prior+xgb`` and ``tgraph-prior+xgb-cold``: ``learner="xgb"``), and
  blended with the mean of the fine-tuned network and each XGBoost
  (``tgraph-prior+ft+xgb``, ``tgraph-prior+ft+xgb-cold``: ``learner="network+xgb"``).
"""

from __future__ import annotations

import contextlib
import copy
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from cost_models import TGraphCostModel
from cost_models.tgraph_cost_model import BLEND_SAMPLES, UPDATE_MAX_STEPS, blend_with_prior, squash, unsquash
from cost_models.xgb_state import load_xgb_state, save_xgb_state

from ..measured_tasks import MeasuredTask
from ..metrics import mean_metrics, ranking_metrics, standardised_mean

METRICS = ("kendall_tau", "top1", "top5", "opa")


@contextlib.contextmanager
def _torch_compatible_mlp():
    """TVM 0.27's MLPModel passes ``verbose=`` to ``StepLR``, which torch 2.13 removed; let
    it through (dropped) while the MLP trains, and restore torch's class after."""
    import torch

    original = torch.optim.lr_scheduler.StepLR

    class StepLR(original):
        def __init__(self, *args, verbose=None, **kwargs):
            super().__init__(*args, **kwargs)

    torch.optim.lr_scheduler.StepLR = StepLR
    try:
        yield
    finally:
        torch.optim.lr_scheduler.StepLR = original


def _untrained_xgb():
    """TVM's ``XGBModel`` as the evaluation uses it: no random warm-up, and retrained on every
    update (``adaptive_training=False``), so that the k online samples count."""
    from tvm.s_tir.meta_schedule.cost_model import XGBModel

    return XGBModel(num_warmup_samples=0, adaptive_training=False)


def train_xgb_once(model, train_tasks: list[MeasuredTask]) -> None:
    """Give ``model`` (an ``XGBModel`` from :func:`_untrained_xgb`) every training task's
    candidates and train it once, on all of them.

    ``XGBModel.update`` retrains from scratch on all the data it holds, so the model left by
    updating on one task after another, retraining each time, is the one trained after the
    last task: this holds the training back until then (``adaptive_training`` skips training
    while the data grew by less than a fifth of ``last_train_size``), one training instead of
    one per task. Every task adds rows (every scheduled program stores something), so the last
    update trains.
    """
    model.adaptive_training, model.last_train_size = True, sys.maxsize
    for task in train_tasks[:-1]:
        model.update(task.context, task.candidates, task.runner_results())
    model.adaptive_training = False
    for task in train_tasks[-1:]:
        model.update(task.context, task.candidates, task.runner_results())


class _Baseline:
    """A TVM cost model trained once on the training tasks, restored fresh per held-out task."""

    def __init__(self, kind: str, train_tasks: list[MeasuredTask], seed: int = 0) -> None:
        self.kind = kind
        self.model = self._new()
        start = time.perf_counter()
        if kind == "xgb":
            train_xgb_once(self.model, train_tasks)
        else:
            random.seed(seed)   # the MLP's own train/test split uses Python's random
            self._train_mlp(train_tasks)
        self.train_seconds = time.perf_counter() - start
        self._snapshot = self._save()
        self._scores: dict[tuple[str, int], np.ndarray] = {}

    def _new(self):
        from tvm.s_tir.meta_schedule.cost_model.mlp_model import MLPModel

        return _untrained_xgb() if self.kind == "xgb" else MLPModel()

    def _train_mlp(self, train_tasks: list[MeasuredTask]) -> None:
        from tvm.s_tir.meta_schedule.cost_model.mlp_model import extract_features
        from tvm.s_tir.meta_schedule.utils import shash2hex

        state = self.model.trainer.state
        for task in train_tasks:
            features, costs = extract_features(task.context, task.candidates, task.runner_results(), state.extractor)
            state.add_to_group(features, costs, shash2hex(task.context.mod))
        with _torch_compatible_mlp():
            try:
                self.model.trainer.train_full()
            except ValueError as err:   # TVM's MLPModel holds out whole tasks for its own test split
                raise ValueError(f"the MLP baseline cannot train on {len(train_tasks)} task(s) ({err}): "
                                 "TVM's MLPModel holds some tasks out for testing; give more training "
                                 "tasks or --baselines xgb") from None

    def _save(self):
        if self.kind == "xgb":
            directory = Path(tempfile.mkdtemp(prefix="tgraph_eval_xgb_"))
            save_xgb_state(self.model, directory)
            return directory
        return copy.deepcopy(self.model.trainer.state)

    def online_scores(self, task: MeasuredTask, k: int) -> np.ndarray:
        """Scores ``(len(task.candidates) - k,)`` of the candidates after the task's first ``k``
        by the model restored fresh and updated on those ``k`` (none: zero-shot). Computed once
        per task and ``k``: the seeds of a fold share them."""
        key = (task.name, k)
        if key not in self._scores:
            self._scores[key] = _scores_after(self.fresh(), task, k)
        return self._scores[key]

    def fresh(self):
        """The model as trained on the training tasks only."""
        if self.kind == "xgb":
            model = self._new()
            load_xgb_state(model, self._snapshot)
            return model
        model = self._new()
        model.trainer.state = copy.deepcopy(self._snapshot)
        return model


def train_baselines(kinds: tuple[str, ...], train_tasks: list[MeasuredTask], seed: int = 0) -> dict:
    """TVM's cost models of ``kinds`` (``"xgb"``, ``"mlp"``) trained on ``train_tasks``, to
    pass to :func:`evaluate` (which restores each fresh per held-out task). XGBoost's
    training is deterministic; the MLP's depends on ``seed``."""
    return {kind: _Baseline(kind, train_tasks, seed) for kind in kinds}


def _scores_after(model, task: MeasuredTask, k: int, update: bool = True, trials_per_iter: int | None = None
                  ) -> np.ndarray:
    """Scores ``(len(task.candidates) - k,)`` by the cost model ``model`` of the candidates after
    the task's first ``k``, once ``update`` has given it those ``k`` (unless ``update`` is False):
    in one call, or with ``trials_per_iter`` in calls of that many, in measurement order, as
    MetaSchedule's task scheduler gives a task's measurements round by round."""
    if k and update:
        per_call = trials_per_iter or k
        with _torch_compatible_mlp():
            for first in range(0, k, per_call):
                given = np.arange(first, min(first + per_call, k))
                model.update(task.context, [task.candidates[i] for i in given], task.runner_results(given))
    return np.asarray(model.predict(task.context, task.candidates[k:]), dtype=np.float64)


def _tgraph_scores(task: MeasuredTask, k: int, checkpoint: str, seed: int, online_steps: int | None = None,
                   trials_per_iter: int | None = None) -> np.ndarray:
    """Raw scores ``(len(task.candidates) - k,)`` (:func:`unsquash` of the cost model's, whose
    order they keep) of the candidates after the task's first ``k`` by ``TGraphCostModel``: with
    ``online_steps``, the network fine-tuned that many steps per ``update`` (no time limit) on
    those ``k`` (given in one update, or in updates of ``trials_per_iter``) and alone
    (``blend_samples=0``), else the frozen pretrained network. Raises ``CheckpointError`` if the
    checkpoint is unusable."""
    if online_steps is None:
        model = TGraphCostModel(checkpoint=checkpoint, seed=seed, online=False)
    else:
        model = TGraphCostModel(checkpoint=checkpoint, seed=seed, update_max_steps=online_steps,
                                update_time_budget_s=None, blend_samples=0)
    return unsquash(_scores_after(model, task, k, update=online_steps is not None, trials_per_iter=trials_per_iter))


#: Candidates an online setting scores at least, after the k given: tasks with fewer are left out.
ONLINE_MIN_SCORED = 8

#: Online XGBoost that saw the task's given candidates only, not the training tasks.
COLD_XGB = "xgb-cold"


def _cold_xgb(task: MeasuredTask, k: int) -> np.ndarray:
    """Scores ``(len(task.candidates) - k,)`` of the candidates after the task's first ``k`` by
    an untrained ``XGBModel`` updated on those ``k``."""
    return _scores_after(_untrained_xgb(), task, k)


def _prior_blends(prior: np.ndarray, fine_tuned: np.ndarray, k: int,
                  xgb_scores: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each XGBoost's online scores ``(N,)`` in ``xgb_scores`` (name -> scores), the frozen
    pretrained network's raw scores ``prior`` ``(N,)`` blended with them as the cost model
    blends them (weight ``k / (k + b)`` on XGBoost, ``b`` the cost model's default
    ``blend_samples`` of ``learner="xgb"``), under the name ``tgraph-prior+<name>``, and with
    the mean of their standardised scores and the fine-tuned network's ``fine_tuned`` ``(N,)``
    (``learner="network+xgb"``, with its ``b``), under the name ``tgraph-prior+ft+<name>``."""
    blends = {}
    for name, scores in xgb_scores.items():
        blends[f"tgraph-prior+{name}"] = blend_with_prior(prior, scores, k, BLEND_SAMPLES["xgb"])
        both = standardised_mean([fine_tuned, scores])
        blends[f"tgraph-prior+ft+{name}"] = blend_with_prior(prior, both, k, BLEND_SAMPLES["network+xgb"])
    return blends


def evaluate(eval_tasks: list[MeasuredTask], train_tasks: list[MeasuredTask], checkpoint: str,
             baselines: tuple[str, ...] | dict = ("xgb", "mlp"), online_ks: tuple[int, ...] = (32, 64),
             seed: int = 0, progress: bool = True, online_steps: int = UPDATE_MAX_STEPS,
             online_trials_per_iter: int | None = None) -> dict:
    """Zero-shot and online ranking metrics of TGraph and the baselines.

    ``baselines`` names the kinds to train on ``train_tasks`` here, or is a dict of ones
    already trained on them (:func:`train_baselines`). Online, TGraph is fine-tuned
    ``online_steps`` steps (default: the cost model's step limit of one update) on the ``k``
    given in one update, or with ``online_trials_per_iter`` in updates of that many (in
    measurement order, ``online_steps`` steps each), as a tuning run with that many trials
    per round gives them. The baselines get the ``k`` in one update: TVM's ``XGBModel``
    (``adaptive_training=False``) retrains from scratch on all it holds at every update, so
    its scores do not depend on how the ``k`` are split; the MLP's would, so the MLP baseline
    is refused with ``online_trials_per_iter``.

    Returns
    -------
    dict
        ``{"settings": ..., "results": {setting: {model: {"per_task": {...}, "mean": {...}}}},
        "scores": {task: {model: [zero-shot scores]}}, "online_scores": {setting: {task:
        {"xgb": [...], "tgraph-prior": [...], "tgraph-ft": [...]}}}, "latency": {task: [...]}}``;
        a setting is ``"zero_shot"`` or ``"online_k32"`` etc. Tasks with fewer than ``k +
        ONLINE_MIN_SCORED`` candidates are left out of ``online_k``. ``online_scores`` (with
        XGBoost among the baselines) keeps, per online setting, XGBoost's scores and the frozen
        pretrained network's and the fine-tuned network's (squashed into (0, 1) as the cost
        model's ``predict`` returns them: :func:`unsquash` them to blend) of the candidates
        after the first ``k``, to blend several seeds' networks with XGBoost.
    """
    from tqdm import tqdm

    if online_trials_per_iter is not None and "mlp" in baselines:
        raise ValueError("online_trials_per_iter with the MLP baseline: its online training depends on how the "
                         "k are split into updates, which only TGraph's are here")
    trained = baselines if isinstance(baselines, dict) else train_baselines(baselines, train_tasks, seed)
    models = ["tgraph", *trained]
    settings = ["zero_shot"] + [f"online_k{k}" for k in online_ks]
    results = {s: {m: {} for m in models} for s in settings}
    zero_shot_scores: dict[str, dict[str, list[float]]] = {}
    online_scores: dict[str, dict[str, dict[str, list[float]]]] = {}
    steps = [(task, s) for task in eval_tasks for s in settings]
    for task, setting in tqdm(steps, desc="eval", unit="run", disable=not progress):
        k = 0 if setting == "zero_shot" else int(setting.removeprefix("online_k"))
        if k and len(task.candidates) < k + ONLINE_MIN_SCORED:
            continue
        latency = task.latency[k:]
        prior = _tgraph_scores(task, k, checkpoint, seed)
        scored = {name: trained[name].online_scores(task, k) for name in trained}
        if not k:   # kept as the cost model returns them, as the per-candidate scores always were
            scored = {"tgraph": squash(prior), **scored}
        else:
            fine_tuned = _tgraph_scores(task, k, checkpoint, seed, online_steps, online_trials_per_iter)
            scored = {"tgraph": blend_with_prior(prior, fine_tuned, k, BLEND_SAMPLES["network"]), "tgraph-ft": fine_tuned,
                      **scored}
        if k and "xgb" in trained:
            xgb_scores = {"xgb": scored["xgb"], COLD_XGB: _cold_xgb(task, k)}
            scored |= {COLD_XGB: xgb_scores[COLD_XGB], **_prior_blends(prior, fine_tuned, k, xgb_scores)}
            online_scores.setdefault(setting, {})[task.name] = {
                "xgb": scored["xgb"].tolist(), **{name: squash(scores).tolist() for name, scores in
                                                  (("tgraph-prior", prior), ("tgraph-ft", fine_tuned))}}
        for name, scores in scored.items():
            results[setting].setdefault(name, {})[task.name] = ranking_metrics(scores, latency)
        if not k:
            zero_shot_scores[task.name] = {name: scores.tolist() for name, scores in scored.items()}
    summary = {s: {m: {"per_task": r, "mean": mean_metrics(r)} for m, r in by_model.items()}
               for s, by_model in results.items()}
    return {
        "settings": {"eval_tasks": [t.name for t in eval_tasks], "eval_families": sorted({t.family for t in eval_tasks}),
                     "train_tasks": len(train_tasks), "online_ks": list(online_ks),
                     "online_steps": online_steps, "online_trials_per_iter": online_trials_per_iter, "seed": seed,
                     "checkpoint": str(checkpoint),
                     "baseline_train_seconds": {k: m.train_seconds for k, m in trained.items()}},
        "results": summary,
        "scores": zero_shot_scores,
        "online_scores": online_scores,
        "latency": {t.name: t.latency.tolist() for t in eval_tasks},
    }


def format_table(report: dict) -> str:
    """The mean metrics of every setting and model as a text table."""
    lines = [f"{'setting':<12} {'model':<8} " + " ".join(f"{m:>11}" for m in METRICS) + "  tasks"]
    for setting, by_model in report["results"].items():
        for model, result in by_model.items():
            mean = result["mean"]
            cells = " ".join(f"{mean.get(m, float('nan')):>11.3f}" for m in METRICS)
            lines.append(f"{setting:<12} {model:<8} {cells}  {len(result['per_task']):>5}")
    return "\n".join(lines)


def plot_scatter(report: dict, path: str | Path, max_tasks: int = 4) -> None:
    """PNG: predicted score against measured latency, zero-shot, for a few tasks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    tasks = sorted(report["scores"], key=lambda t: -len(report["latency"][t]))[:max_tasks]
    models = list(report["results"]["zero_shot"])
    fig, axes = plt.subplots(len(tasks), len(models), figsize=(3.2 * len(models), 2.8 * len(tasks)), squeeze=False)
    for row, task in enumerate(tasks):
        latency = np.asarray(report["latency"][task]) * 1e3
        for col, model in enumerate(models):
            ax = axes[row][col]
            scores = report["scores"][task].get(model)
            if scores is None:
                ax.set_axis_off()
                continue
            tau = report["results"]["zero_shot"][model]["per_task"][task]["kendall_tau"]
            ax.scatter(latency, scores, s=6, alpha=0.6)
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_title(f"{model}: tau {tau:.2f}", fontsize=8)
            ax.set_xlabel("measured latency (ms)", fontsize=7)
            if col == 0:
                ax.set_ylabel(f"{task[:28]}\npredicted score", fontsize=7)
            ax.tick_params(labelsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
