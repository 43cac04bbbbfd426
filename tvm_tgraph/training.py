"""Training TGraph on measured configured graphs (torch, no TVM).

:class:`RankingTrainer` holds the network, its optimiser and the training data (one
:class:`~tvm_tgraph.graph.ConfiguredGraph` per task, with runtimes) and takes bounded
numbers of optimisation steps: a few per ``update`` of the cost model online, many
offline.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from .graph import ConfiguredGraph
from .losses import LOSSES, MARGIN_LOSSES, pairwise_hinge_loss
from .nn import GraphTensors, TGraphNet


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings.

    Parameters
    ----------
    lr : float
        Adam learning rate (default 1e-3).
    weight_decay : float
        AdamW weight decay (default 1e-4).
    configs_per_step : int
        Configurations of one task sampled per step (default 64).
    tasks_per_step : int
        Tasks drawn per step (default 1), each with its own ``configs_per_step``
        configurations; the step follows the mean of their losses.
    loss : {"hinge", "weighted_hinge", "listmle"}
        Ranking loss (default ``"hinge"``; see :mod:`tvm_tgraph.losses`).
    margin : float
        Margin of the hinge losses (default 0.1).
    lr_schedule : {"constant", "cosine"}
        Learning rate over a run of known length (offline training): constant (default), or
        a linear warm-up over ``warmup_steps`` then a cosine decay to 0 at the last step.
        Online updates, whose length is open, always use the constant rate.
    warmup_steps : int
        Steps of the cosine schedule's warm-up (default 100).
    weight_average : float
        Decay of an exponential moving average of the weights, updated after every step
        (default 0: none). Offline training validates and keeps the average
        (:meth:`RankingTrainer.averaged_state`), which smooths the noise of one task's
        configurations per step; 0.995 averages over roughly the last 200 steps.
    distil_weight : float
        Knowledge distillation (default 0: none): on a task given a teacher's scores
        (:meth:`RankingTrainer.set_task`), the loss is ``1 - distil_weight`` times the ranking
        loss on the runtimes plus ``distil_weight`` times the pairwise hinge loss on the
        teacher's order of the same configurations. Tasks without a teacher's scores train on
        their runtimes alone.
    """

    lr: float = 1e-3
    weight_decay: float = 1e-4
    configs_per_step: int = 64
    tasks_per_step: int = 1
    loss: str = "hinge"
    margin: float = 0.1
    lr_schedule: str = "constant"
    warmup_steps: int = 100
    weight_average: float = 0.0
    distil_weight: float = 0.0


def cosine_factor(step: int, total_steps: int, warmup_steps: int) -> float:
    """The learning rate's factor at ``step`` (0-based) of a ``total_steps`` run: linear
    warm-up to 1 over ``warmup_steps``, then cosine decay to 0 at ``total_steps``."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return 0.5 * (1.0 + math.cos(math.pi * progress))


class RankingTrainer:
    """Trains a :class:`TGraphNet` to rank the configurations of each task.

    Parameters
    ----------
    model : TGraphNet
    config : TrainConfig
    seed : int
        Seeds the sampling of tasks and configurations and torch's generator.
    total_steps : int, optional
        The run's length, which ``config.lr_schedule = "cosine"`` needs (offline training);
        without it the rate is constant.
    """

    def __init__(self, model: TGraphNet, config: TrainConfig = TrainConfig(), seed: int = 0,
                 total_steps: int | None = None) -> None:
        if config.loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {config.loss!r}")
        if config.lr_schedule not in ("constant", "cosine"):
            raise ValueError(f"lr_schedule must be 'constant' or 'cosine', got {config.lr_schedule!r}")
        if not 0.0 <= config.weight_average < 1.0:
            raise ValueError(f"weight_average must be in [0, 1), got {config.weight_average!r}")
        if not 0.0 <= config.distil_weight <= 1.0:
            raise ValueError(f"distil_weight must be in [0, 1], got {config.distil_weight!r}")
        if config.tasks_per_step < 1:
            raise ValueError(f"tasks_per_step must be at least 1, got {config.tasks_per_step!r}")
        self.model = model
        self.config = config
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        self.scheduler = None
        if config.lr_schedule == "cosine" and total_steps is not None:
            self.scheduler = torch.optim.lr_scheduler.LambdaLR(
                self.optimizer, lambda step: cosine_factor(step, total_steps, config.warmup_steps))
        self._tensors: dict[str, tuple[GraphTensors, torch.Tensor, torch.Tensor | None]] = {}
        self._average = ({k: v.detach().clone() for k, v in model.state_dict().items()}
                         if config.weight_average else None)

    def averaged_state(self) -> dict[str, torch.Tensor]:
        """The weights to validate and keep: a copy of the moving average of the weights
        (``config.weight_average``), or of the current weights without one."""
        state = self._average if self._average is not None else self.model.state_dict()
        return {k: v.detach().clone() for k, v in state.items()}

    def _update_average(self) -> None:
        with torch.no_grad():
            for key, value in self.model.state_dict().items():
                if value.is_floating_point():
                    self._average[key].lerp_(value, 1.0 - self.config.weight_average)
                else:
                    self._average[key].copy_(value)

    def set_task(self, key: str, graph: ConfiguredGraph, teacher_scores: np.ndarray | None = None) -> None:
        """Add or replace the training data of one task (``graph.runtime`` required).

        Parameters
        ----------
        teacher_scores : np.ndarray, optional
            ``(C,)`` a teacher's scores of the task's configurations, higher = faster, to
            distil with ``config.distil_weight``.
        """
        if graph.runtime is None:
            raise ValueError(f"task {key!r} has no runtimes to train on")
        teacher = None
        if teacher_scores is not None:
            if len(teacher_scores) != graph.num_configs:
                raise ValueError(f"task {key!r}: {len(teacher_scores)} teacher scores for "
                                 f"{graph.num_configs} configurations")
            teacher = torch.from_numpy(np.asarray(teacher_scores, dtype=np.float32))
        self._tensors[key] = (GraphTensors.from_graph(graph), torch.from_numpy(graph.runtime).float(), teacher)

    def fork(self, seed: int | list[int]) -> RankingTrainer:
        """A copy that continues from this trainer's weights, optimiser state and weight
        average, sharing its training data, with its own task and configuration sampling
        seeded by ``seed`` (anything ``np.random.default_rng`` takes)."""
        tensors, self._tensors = self._tensors, {}
        try:
            twin = copy.deepcopy(self)
        finally:
            self._tensors = tensors
        twin._tensors = tensors
        twin.rng = np.random.default_rng(seed)
        return twin

    def trainable_tasks(self) -> list[str]:
        """Tasks with at least two distinct runtimes (something to rank)."""
        return [k for k, (_, rt, _) in self._tensors.items() if len(rt) >= 2 and bool((rt != rt[0]).any())]

    def draw_tasks(self, tasks: list[str], focus: str | None = None, focus_share: float = 0.5) -> list[str]:
        """The ``config.tasks_per_step`` tasks of one step, drawn from ``tasks`` with
        replacement; each is ``focus`` with probability ``focus_share`` when ``focus`` is
        one of ``tasks``."""
        drawn = []
        for _ in range(self.config.tasks_per_step):
            use_focus = focus in tasks and self.rng.random() < focus_share
            drawn.append(focus if use_focus else tasks[self.rng.integers(len(tasks))])
        return drawn

    def _task_loss(self, key: str) -> torch.Tensor:
        """The ranking loss (with distillation, if configured) of a random subset of task
        ``key``'s configurations."""
        tensors, runtime, teacher = self._tensors[key]
        total = len(runtime)
        take = min(total, self.config.configs_per_step)
        index = torch.from_numpy(np.sort(self.rng.choice(total, size=take, replace=False)))
        scores = self.model(tensors.select(index))
        loss_fn = LOSSES[self.config.loss]
        loss = loss_fn(scores, runtime[index], self.config.margin) if self.config.loss in MARGIN_LOSSES \
            else loss_fn(scores, runtime[index])
        if teacher is not None and self.config.distil_weight > 0:
            weight = self.config.distil_weight
            loss = (1.0 - weight) * loss + weight * pairwise_hinge_loss(scores, -teacher[index], self.config.margin)
        return loss

    def step(self, *keys: str) -> float:
        """One optimisation step on the mean loss of tasks ``keys``, each on a random subset
        of its configurations."""
        self.model.train()
        loss = torch.stack([self._task_loss(key) for key in keys]).mean()
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        if self._average is not None:
            self._update_average()
        return float(loss.detach())

    def train(self, max_steps: int, time_budget_s: float | None = None,
              focus: str | None = None, focus_share: float = 0.5) -> int:
        """Take up to ``max_steps`` steps, stopping early when ``time_budget_s`` is spent.

        Parameters
        ----------
        focus : str, optional
            A task to draw ``focus_share`` of the steps from (the task being tuned).

        Returns
        -------
        int
            Steps taken.
        """
        tasks = self.trainable_tasks()
        if not tasks:
            return 0
        deadline = None if time_budget_s is None else time.perf_counter() + time_budget_s
        steps = 0
        while steps < max_steps and (deadline is None or time.perf_counter() < deadline):
            self.step(*self.draw_tasks(tasks, focus, focus_share))
            steps += 1
        return steps
