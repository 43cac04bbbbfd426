"""Offline training of TGraph on measured tasks, with a validation split by task.

No task is on both sides of the split; training stops early when the mean Kendall tau of
the validation tasks has not improved for ``patience`` evaluations, and the best weights
are kept. With no validation share (``val_fraction=0``: a checkpoint to ship, its step count
chosen by cross-validation beforehand) every task trains for ``steps`` steps and the last
weights are kept. With ``TrainConfig.weight_average`` the weights validated and kept are the
moving average of the weights. Given a teacher (a trained network or seed ensemble), the
network learns the teacher's order of each training task's configurations beside the
measured one (``TrainConfig.distil_weight``): one network distilled from an ensemble.
With ``PretrainConfig.forks`` the second half of the steps is trained several times from the
same point and the copies' weights averaged: one network from several draws of the tasks.
Everything is seeded: the same data, config and seed give the same
checkpoint.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch

from .checkpoint import save_checkpoint
from .graph import ConfiguredGraph, FeatureSchema
from .metrics import kendall_tau, mean_metrics, ranking_metrics, standardised_mean
from .nn import GraphTensors, TGraphConfig, TGraphEnsemble, TGraphNet, predict_member_scores, predict_scores
from .training import RankingTrainer, TrainConfig


@dataclass(frozen=True)
class PretrainConfig:
    """Settings of an offline training run.

    Parameters
    ----------
    steps : int
        Maximum optimisation steps (default 12000).
    eval_every : int
        Steps between validation evaluations (default 100).
    patience : int
        Evaluations without improvement before stopping (default 8).
    val_fraction : float
        Share of the training tasks held out for validation (default 0.15, at least one);
        0 trains on every task for ``steps`` steps, without early stopping.
    seed : int
    network : dict
        Network hyper-parameters that differ from :class:`~tvm_tgraph.nn.TGraphConfig`'s
        defaults (e.g. ``{"cross_attention": "none"}``).
    train : TrainConfig
        Optimiser, loss and sampling settings.
    forks : int
        With more than one (default 1: none), the second half of the steps is trained ``forks``
        times, each copy continuing from the first half's weights and optimiser state with its
        own draw of tasks, and the mean of the copies' weights is kept: a "model soup", one
        network scored at the cost of one, trained at ``(1 + forks) / 2`` times the cost.
        Needs ``val_fraction`` 0 (nothing to stop early on).
    """

    steps: int = 12000
    eval_every: int = 100
    patience: int = 8
    val_fraction: float = 0.15
    seed: int = 0
    network: dict = field(default_factory=dict)
    train: TrainConfig = field(default_factory=TrainConfig)
    forks: int = 1

    def to_dict(self) -> dict:
        return asdict(self)


def split_by_task(names: list[str], val_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Split task names into (train, validation); no task is on both sides."""
    rng = np.random.default_rng(seed)
    order = sorted(names)
    rng.shuffle(order)
    count = max(1, math.ceil(len(order) * val_fraction)) if len(order) > 1 and val_fraction > 0 else 0
    return sorted(order[count:]), sorted(order[:count])


def split_configurations(count: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split ``count`` configurations of one graph into seeded, disjoint, sorted
    (train, test) index arrays; ``round(test_fraction * count)`` go to test."""
    order = np.random.default_rng(seed).permutation(count)
    cut = count - int(round(test_fraction * count))
    return np.sort(order[:cut]), np.sort(order[cut:])


def evaluate_graphs(model: TGraphNet | TGraphEnsemble, graphs: dict[str, ConfiguredGraph],
                    chunk_size: int = 128) -> dict:
    """Ranking metrics of ``model`` on each graph (runtimes required) and their mean."""
    per_task = {name: ranking_metrics(predict_scores(model, g, chunk_size), g.runtime) for name, g in graphs.items()}
    return {"per_task": per_task, "mean": mean_metrics(per_task)}


#: Configurations a teacher scores at a time (:func:`teacher_scores`).
TEACHER_CHUNK = 512


def teacher_scores(teacher: TGraphNet | TGraphEnsemble, graph: ConfiguredGraph) -> np.ndarray:
    """What a network distils from ``teacher`` on ``graph``: the mean of the teacher's members'
    scores, each standardised over the task (scored ``TEACHER_CHUNK`` configurations at a
    time). Shapes: ``graph`` with ``C`` configurations -> ``(C,)``, higher = faster."""
    return standardised_mean(predict_member_scores(teacher, graph, TEACHER_CHUNK))


def train_forks(trainer: RankingTrainer, steps: int, forks: int, seed: int, progress=None) -> dict[str, torch.Tensor]:
    """Continue ``trainer`` for ``steps`` steps as ``forks`` copies (:meth:`RankingTrainer.fork`,
    the copy ``i`` seeded ``[seed, i + 1]``) and return the mean of the weights each copy keeps
    (:meth:`RankingTrainer.averaged_state`); ``progress`` (a tqdm bar) counts their steps."""
    states = []
    for index in range(forks):
        twin = trainer.fork([seed, index + 1])
        twin.train(steps)
        if progress is not None:
            progress.update(steps)
        states.append(twin.averaged_state())
    return {key: torch.stack([state[key] for state in states]).mean(dim=0) if value.is_floating_point() else value
            for key, value in states[0].items()}


def pretrain(train_graphs: dict[str, ConfiguredGraph], val_graphs: dict[str, ConfiguredGraph],
             model_config: TGraphConfig, config: PretrainConfig, progress: bool = True,
             teacher_targets: dict[str, np.ndarray] | None = None) -> tuple[TGraphNet, dict]:
    """Train a new network; return it (best validation weights) and the history.

    ``teacher_targets`` gives each training task a teacher's scores of its configurations
    (:func:`teacher_scores`), distilled with ``config.train.distil_weight``.

    Returns
    -------
    (TGraphNet, dict)
        The model in eval mode, and ``{"evaluations": [...], "best_step", "best_val_kendall_tau",
        "steps"}``.
    """
    from tqdm import tqdm

    if config.forks > 1 and val_graphs:
        raise ValueError(f"forks ({config.forks}) need no validation tasks (val_fraction 0), got {len(val_graphs)}")
    torch.manual_seed(config.seed)
    model = TGraphNet(model_config)
    model.fit_normalization(list(train_graphs.values()))
    trainer = RankingTrainer(model, config.train, seed=config.seed, total_steps=config.steps)
    for name, graph in train_graphs.items():
        trainer.set_task(name, graph, None if teacher_targets is None else teacher_targets[name])
    cached_val = {name: (GraphTensors.from_graph(g), g.runtime) for name, g in val_graphs.items()}
    averaging = config.train.weight_average > 0
    validated = copy.deepcopy(model) if averaging else model    # holds the weights validated and kept

    def val_tau() -> float:
        if averaging:
            validated.load_state_dict(trainer.averaged_state())
        taus = [kendall_tau(predict_scores(validated, tensors), runtime) for tensors, runtime in cached_val.values()]
        return float(np.nanmean(taus)) if taus else float("nan")

    history = {"evaluations": [], "best_step": 0, "best_val_kendall_tau": -math.inf}
    best_state, stale, step = None, 0, 0
    forked_steps = config.steps // 2 if config.forks > 1 else 0
    trunk_steps = config.steps - forked_steps       # trained once, before any fork
    bar = tqdm(total=config.steps + (config.forks - 1) * forked_steps, desc="train", unit="step",
               disable=not progress)
    losses, tasks = [], trainer.trainable_tasks()
    while step < trunk_steps:
        losses.append(trainer.step(*trainer.draw_tasks(tasks)))
        step += 1
        bar.update(1)
        if step % config.eval_every != 0 and step != trunk_steps:
            continue
        entry = {"step": step, "train_loss": float(np.mean(losses))}
        history["evaluations"].append(entry)
        losses = []
        if not cached_val:      # nothing to stop early on: every step, the last weights kept
            bar.set_postfix_str(f"loss {entry['train_loss']:.4f}")
            continue
        entry["val_kendall_tau"] = tau = val_tau()
        bar.set_postfix_str(f"loss {entry['train_loss']:.4f} val tau {tau:.3f}")
        if tau > history["best_val_kendall_tau"] or best_state is None:
            history.update(best_step=step, best_val_kendall_tau=tau)
            best_state = trainer.averaged_state()
            stale = 0
        else:
            stale += 1
            if stale >= config.patience:
                break
    history["steps"] = step + forked_steps
    if best_state is None:      # no validation tasks: the last weights (or their average, or the forks' mean)
        history.update(best_step=history["steps"], best_val_kendall_tau=None)
        best_state = (train_forks(trainer, forked_steps, config.forks, config.seed, bar) if forked_steps
                      else trainer.averaged_state())
    bar.close()
    model.load_state_dict(best_state)
    model.eval()
    return model, history


def train_checkpoint(graphs: dict[str, ConfiguredGraph], task_names: list[str], config: PretrainConfig,
                     schema: FeatureSchema, out, data: dict | None = None, seeds: Sequence[int] = (),
                     teacher: TGraphNet | TGraphEnsemble | None = None, **card_fields) -> dict:
    """Split ``task_names`` by task, train a network sized for ``schema`` (with
    ``config.network``'s hyper-parameters), and save the best model with its card to ``out``.

    Parameters
    ----------
    data : dict, optional
        Extra ``training_data`` fields for the card (where the data came from).
    seeds : sequence of int, optional
        Train one network per seed, on the same split (``config.seed``'s), and save them as
        one :class:`~tvm_tgraph.nn.TGraphEnsemble` (two or more seeds). Default: one network,
        seeded with ``config.seed``.
    teacher : TGraphNet or TGraphEnsemble, optional
        Distil it with ``config.train.distil_weight`` (its scores of the training tasks,
        :func:`teacher_scores`, computed once for every seed); name where it came from in
        ``card_fields``.
    **card_fields
        Extra top-level card fields (e.g. ``command``).

    Returns
    -------
    dict
        The model card written (its ``history`` and ``validation`` hold the results; an
        ensemble's ``history`` is a list, one entry per seed).
    """
    train, val = split_by_task(task_names, config.val_fraction, config.seed)
    model_config = TGraphConfig.from_schema(schema, **config.network)
    seeds = list(seeds) or [config.seed]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"the seeds of an ensemble must differ, got {seeds}")
    targets = ({n: teacher_scores(teacher, graphs[n]) for n in train}
               if teacher is not None and config.train.distil_weight > 0 else None)
    trained = [pretrain({n: graphs[n] for n in train}, {n: graphs[n] for n in val}, model_config,
                        replace(config, seed=seed), teacher_targets=targets) for seed in seeds]
    if len(trained) == 1:
        (model, history), seed_fields = trained[0], {"seed": seeds[0]}
    else:
        model = TGraphEnsemble(model_config, networks=[network for network, _ in trained])
        history, seed_fields = [h for _, h in trained], {"seeds": seeds}
    training_data = {"train_tasks": train, "val_tasks": val,
                     "candidates": int(sum(graphs[n].num_configs for n in train)), **(data or {})}
    return save_checkpoint(
        out, model, schema.version, pretrained=True, **seed_fields, training_data=training_data,
        training=config.to_dict(), history=history,
        validation=evaluate_graphs(model, {n: graphs[n] for n in val})["mean"], **card_fields,
    )
