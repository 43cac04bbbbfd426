"""TGraph as a MetaSchedule cost model, with TVM's XGBoost model as the fallback."""

from __future__ import annotations

import copy
import importlib.resources
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.cost_model import PyCostModel, XGBModel

from tvm_tgraph.checkpoint import load_checkpoint, save_checkpoint
from tvm_tgraph.convert.tir import FEATURE_SCHEMA, FEATURE_SCHEMA_VERSION, TirConverter
from tvm_tgraph.database import result_latency
from tvm_tgraph.errors import CheckpointError, UnsupportedProgramError
from tvm_tgraph.metrics import standardise, standardised_mean
from tvm_tgraph.nn import TGraphConfig, TGraphEnsemble, TGraphNet, predict_member_scores, predict_scores
from tvm_tgraph.task_store import TaskStore
from tvm_tgraph.training import RankingTrainer, TrainConfig
from tvm_tgraph.tvm_env import register_light_tensor_intrin

from .shared_features import SharedPerStoreFeature
from .xgb_state import load_xgb_state, save_xgb_state

logger = logging.getLogger("tvm_tgraph.cost_model")

#: The pretrained checkpoint shipped inside the ``tvm_tgraph`` package.
DEFAULT_CHECKPOINT = Path(str(importlib.resources.files("tvm_tgraph"))) / "checkpoints" / "tgraph_tir.safetensors"


def squash(scores: np.ndarray) -> np.ndarray:
    """Map raw scores to (0, 1), order kept. MetaSchedule clips negative scores to 0 and
    samples mutations in proportion to the score, so scores must be positive and spread."""
    return 1.0 / (1.0 + np.exp(-standardise(scores)))


def unsquash(scores: np.ndarray) -> np.ndarray:
    """The raw scores ``(N,)``, standardised, that :func:`squash` (:meth:`TGraphCostModel.predict`)
    mapped into (0, 1) (``scores``, ``(N,)``): their logit. Blends of the network with another
    ranker (:func:`blend_with_prior`) standardise their inputs, so blending these is
    blending the raw scores, as the cost model does; blending the squashed scores is not."""
    scores = np.asarray(scores, dtype=np.float64)
    return np.log(scores) - np.log1p(-scores)


#: How a pretrained model learns a task online (``TGraphCostModel(learner=...)``).
LEARNERS = ("network", "xgb", "network+xgb")

#: Default ``blend_samples`` of each learner: measured candidates of a task at which what was
#: learned online weighs as much as the pretrained ranking. Chosen by nested cross-validation
#: over the ranking folds (``benchmarks/blend_eval.py --run ranking_eval_groups5_wa_ft100``):
#: a fine-tuned network already carries the prior, so it needs less of the frozen one.
BLEND_SAMPLES = {"network": 16, "xgb": 64, "network+xgb": 16}

#: Learning rate of online training: fine-tuning a pretrained network, training an untrained one.
FINE_TUNE_LR, UNTRAINED_LR = 1e-4, 1e-3

#: Default ``update_max_steps``: training steps of one ``update`` call at most.
UPDATE_MAX_STEPS = 25


def blend_with_prior(prior: np.ndarray, learned: np.ndarray, measured: int, blend_samples: int) -> np.ndarray:
    """Scores ``(N,)`` of the pretrained network (``prior``) and of a model that learned from the
    task's ``measured`` candidates (``learned``), each standardised, weighted ``b / (n + b)`` and
    ``n / (n + b)`` (``n`` = ``measured``, ``b`` = ``blend_samples``)."""
    weight = measured / (measured + blend_samples)
    return (1 - weight) * standardise(prior) + weight * standardise(learned)


def optimistic_scores(blended: np.ndarray, opinions: np.ndarray) -> np.ndarray:
    """``(N,)`` upper-confidence scores: ``blended`` plus the spread of the ``(K, N)``
    ``opinions`` it blends (the members of the pretrained seed ensemble, or its one network,
    and what was learned online), each standardised: their standard deviation per candidate,
    ``|z_1 - z_2| / 2`` for two. High where the blend is high or the rankers disagree."""
    return blended + np.stack([standardise(opinion) for opinion in opinions]).std(axis=0)


@derived_object
class TGraphCostModel(PyCostModel):
    """TGraph ranking network as a MetaSchedule cost model.

    Scores candidates with the pretrained network, learns online from every measured
    batch (by fine-tuning the network, through its XGBoost model, or both), and falls back to
    TVM's ``XGBModel`` (its ``update`` is always called, so it is warm) when the network
    cannot serve: no checkpoint and too few measurements of the task yet, a program the
    converter cannot represent, or a network error. Each fallback is logged once per task
    and reason.

    Parameters
    ----------
    checkpoint : str or path, optional
        Weights to load (one network or a seed ensemble, whose score is the mean of its
        members' standardised scores); one that cannot be loaded raises ``CheckpointError``.
        Default: the checkpoint shipped with the package; if that one is missing or
        unusable, a warning is logged and the model starts untrained.
    use_pretrained : bool
        ``False`` starts from an untrained network whatever ships (default ``True``).
    online : bool
        Learn from measured candidates in ``update`` (default ``True``); ``False`` keeps the
        pretrained ranking for good (the XGBoost fallback still learns).
    learner : {"network", "xgb", "network+xgb"}
        How a pretrained model learns a task online. ``"network"`` (default) fine-tunes the
        network (an ensemble's first member: fine-tuning every member would multiply the
        cost of each update) on the task's measurements and blends it with the pretrained
        network or ensemble (see ``blend_samples``). ``"xgb"`` never fine-tunes: the pretrained network's scores are
        blended in the same way with the XGBoost fallback's, which ``update`` trains anyway
        (once the fallback has its warm-up samples). ``"network+xgb"`` does both: the
        pretrained ranking is blended with the mean of the fine-tuned network's and the
        fallback's standardised scores (the fine-tuned network's alone until the fallback
        has its warm-up samples). Without a pretrained network, ``"xgb"`` leaves every task
        to XGBoost and ``"network+xgb"`` learns as ``"network"`` does.
    min_online_samples : int
        Measured candidates of a task an untrained network needs before it serves that
        task (default 32).
    update_time_budget_s : float or None
        Time limit of the training inside one ``update`` call (default 1 s; None: the step
        limit alone, as the ranking evaluation runs it, so that its results do not depend
        on the CPU's speed).
    update_max_steps : int
        Step limit of the training inside one ``update`` call (default 25).
    chunk_size : int
        Candidates scored together in ``predict`` (default 512). Cross-attention compares
        the candidates of a chunk, so a candidate's score depends on its chunk-mates and
        scores are comparable within a chunk only; memory grows with the square of the
        chunk. ``benchmarks/chunk_size.py`` measured, on 4,096 random candidates of a 256^3
        matmul scored in chunks against one call: Kendall tau 0.994 at 128, 0.997 at 512,
        0.998 at 1,024, the same top 16 throughout; peak memory grew by 0.36 GB at 2,048
        and 1.9 GB at 4,096, nothing measurable up to 1,024. 512 is MetaSchedule's
        evolutionary population: one round's population is compared in one chunk.
    blend_samples : int, optional
        With a pretrained network, a task's score blends the pretrained network's
        (weight ``b / (n + b)``) with what the learner learned online (weight ``n / (n + b)``),
        ``n`` the task's measured candidates, ``b`` this value (default :data:`BLEND_SAMPLES`
        of the learner: 16 for ``"network"`` and ``"network+xgb"``, 64 for ``"xgb"``; 0 uses
        what was learned alone). A few measurements then refine the pretrained ranking
        instead of replacing it.
    fallback : XGBModel, optional
        Default ``XGBModel(num_warmup_samples=16)`` whose feature extractor is the converter's
        (:class:`~cost_models.shared_features.SharedPerStoreFeature`): TVM's
        ``PerStoreFeature``, each candidate extracted once for the network and XGBoost.
    seed : int
        Seeds network initialisation and online training (default 0).

    Examples
    --------
    >>> ms.tune_tir(mod, target, work_dir, 64, cost_model=TGraphCostModel())  # doctest: +SKIP
    """

    def __init__(self, checkpoint: str | os.PathLike | None = None, *, use_pretrained: bool = True,
                 online: bool = True, learner: str = "network",
                 min_online_samples: int = 32, update_time_budget_s: float | None = 1.0,
                 update_max_steps: int = UPDATE_MAX_STEPS, chunk_size: int = 512, blend_samples: int | None = None,
                 fallback: XGBModel | None = None, seed: int = 0) -> None:
        super().__init__()
        register_light_tensor_intrin()
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {', '.join(map(repr, LEARNERS))}, not {learner!r}")

        self.online = online
        self.learner = learner
        self.min_online_samples = min_online_samples
        self.update_time_budget_s = update_time_budget_s
        self.update_max_steps = update_max_steps
        self.chunk_size = chunk_size
        self.blend_samples = BLEND_SAMPLES[learner] if blend_samples is None else blend_samples
        self.seed = seed
        self.converter = TirConverter()
        if fallback is None:   # extracts each candidate's per-store features once with the converter
            fallback = XGBModel(num_warmup_samples=16, extractor=SharedPerStoreFeature(self.converter.store_rows))
        self.fallback = fallback
        self.store = TaskStore()
        self.network = None
        self.pretrained_network = None   # frozen copy of the checkpoint, for blending
        self.pretrained = False
        self.checkpoint_error: str | None = None
        self._trainer = None
        self._logged: set[tuple[str, str]] = set()
        #: Tasks the network gave up on (conversion or training failed): task key -> reason.
        self.failed_tasks: dict[str, tuple[str, str]] = {}
        #: Measured candidates per task key, as the ``"xgb"`` learner blends by them.
        self.measured_by_task: dict[str, int] = {}
        #: Candidates scored by the network and by the fallback so far.
        self.scored = {"network": 0, "fallback": 0}
        #: ``(N,)`` :func:`optimistic_scores` of the latest ``predict`` call's N candidates, or
        #: None where that call had one opinion only (one pretrained network and no
        #: measurements yet, or the fallback ranked): what :class:`search.PruningSearch` picks
        #: its explorers by.
        self.last_optimistic_scores: np.ndarray | None = None
        if not use_pretrained:
            if checkpoint is not None:
                raise ValueError("give a checkpoint or use_pretrained=False, not both")
            return
        if checkpoint is not None:
            self._load_network(Path(checkpoint))   # the caller asked for it: an error if unusable
            return
        if not DEFAULT_CHECKPOINT.is_file():
            self.checkpoint_error = f"no pretrained checkpoint is shipped ({DEFAULT_CHECKPOINT})"
            logger.warning("TGraphCostModel: %s; the network starts untrained and XGBoost ranks each "
                           "task until the network has learned it online", self.checkpoint_error)
            return
        try:
            self._load_network(DEFAULT_CHECKPOINT)
        except CheckpointError as err:
            self.checkpoint_error = str(err)
            logger.warning("TGraphCostModel: the shipped checkpoint cannot be used: %s; starting "
                           "untrained, XGBoost ranks each task until the network has learned it", err)

    def __str__(self) -> str:
        state = "pretrained" if self.pretrained else "untrained"
        return f"TGraphCostModel({state}, tasks={len(self.store)}, fallback=XGBModel)"

    @property
    def _learns_through_fallback(self) -> bool:
        """Online learning goes through the XGBoost fallback, not the network (``learner="xgb"``)."""
        return self.online and self.learner == "xgb"

    # ------------------------------------------------------------------ network
    def _load_network(self, path: Path) -> None:
        network, card = load_checkpoint(path, feature_schema=FEATURE_SCHEMA_VERSION)
        self.pretrained = bool(card.get("pretrained", True))
        self._trainer = None
        if self.pretrained and self.online and self.learner != "xgb":
            # the checkpoint stays frozen as the prior to blend with; a copy is fine-tuned
            self.pretrained_network = network
            self.network = copy.deepcopy(network.members[0] if isinstance(network, TGraphEnsemble) else network)
        else:
            self.network, self.pretrained_network = network, None

    def _ensure_network(self, first_graph) -> None:
        import torch

        if self.network is None:
            torch.manual_seed(self.seed)
            self.network = TGraphNet(TGraphConfig.from_schema(FEATURE_SCHEMA))
            self.network.fit_normalization([first_graph])
        if self._trainer is None:
            lr = FINE_TUNE_LR if self.pretrained else UNTRAINED_LR
            self._trainer = RankingTrainer(self.network, TrainConfig(lr=lr), seed=self.seed)
            for key in self.store.keys():
                self._trainer.set_task(key, self.store.graph(key))

    def _unready_reason(self, key: str) -> tuple[str, str] | None:
        if key in self.failed_tasks:
            return self.failed_tasks[key]
        if self.pretrained:
            return None
        if self._learns_through_fallback:
            return "cold", f"{self.checkpoint_error or 'started untrained (use_pretrained=False)'}, " \
                           "and learner='xgb' only blends a pretrained network with XGBoost"
        have = self.store.num_samples(key)
        if self.network is not None and have >= self.min_online_samples:
            return None
        why = self.checkpoint_error or "started untrained (use_pretrained=False)"
        if not self.online:
            return "cold", f"{why}, and online training is off"
        return "cold", f"{why}, and {have} of the {self.min_online_samples} measurements " \
                       "of this task needed to train online"

    def _log_fallback(self, context, category: str, reason: str) -> None:
        from tvm.s_tir.meta_schedule.utils import shash2hex

        key = (shash2hex(context.mod), category)
        if key not in self._logged:
            self._logged.add(key)
            logger.warning("TGraphCostModel: XGBoost ranks task %r: %s", str(context.task_name), reason)

    # ------------------------------------------------------------------ PyCostModel
    def predict(self, context, candidates) -> np.ndarray:
        """Scores in (0, 1), float64, shape ``(len(candidates),)``, higher = faster."""
        from tvm.s_tir.meta_schedule.utils import shash2hex

        self.last_optimistic_scores = None
        if not candidates:
            return np.zeros(0, dtype=np.float64)
        key = shash2hex(context.mod)
        unready = self._unready_reason(key)
        if unready is None:
            try:
                graph = self.converter.convert(context, candidates)
                scores = self._scores(graph, key, context, candidates)
                if np.all(np.isfinite(scores)):
                    self.scored["network"] += len(candidates)
                    return squash(scores).astype(np.float64)
                unready = "nonfinite", "the network produced non-finite scores"
            except Exception as err:  # noqa: BLE001 - any failure hands the task to XGBoost, logged
                unready = self._give_up(key, err)
        self.last_optimistic_scores = None   # whatever a failed network call left
        self._log_fallback(context, *unready)
        self.scored["fallback"] += len(candidates)
        return np.asarray(self.fallback.predict(context, candidates), dtype=np.float64)

    def _scores(self, graph, key: str, context, candidates) -> np.ndarray:
        """Raw scores ``(len(candidates),)`` of ``graph``'s configurations (task ``key``), the
        pretrained ranking blended with what was learned online as ``blend_samples`` says
        (the prior alone while the task has no measurements)."""
        if self._learns_through_fallback:
            return self._prior_and_fallback(graph, key, context, candidates)
        measured = self.store.num_samples(key)
        if self.pretrained_network is None or (self.blend_samples <= 0 and measured):
            return predict_scores(self.network, graph, self.chunk_size)
        prior = predict_member_scores(self.pretrained_network, graph, self.chunk_size)
        if measured == 0:
            return self._prior_alone(prior)
        learned = [predict_scores(self.network, graph, self.chunk_size)]
        if self.learner == "network+xgb" and self._fallback_trained():
            learned.append(np.asarray(self.fallback.predict(context, candidates), dtype=np.float64))
        return self._blend(prior, learned, measured)

    def _prior_alone(self, members: np.ndarray) -> np.ndarray:
        """The pretrained ranking ``(N,)`` of its ``(M, N)`` member scores (their mean), keeping
        the members' :func:`optimistic_scores` if there are several."""
        prior = members.mean(axis=0)
        self.last_optimistic_scores = optimistic_scores(prior, members) if len(members) > 1 else None
        return prior

    def _blend(self, members: np.ndarray, learned: list[np.ndarray], measured: int) -> np.ndarray:
        """:func:`blend_with_prior` of the pretrained ranking (the mean of its ``(M, N)``
        member scores) and the mean of the ``L`` standardised ``(N,)`` scores ``learned``
        online, keeping the :func:`optimistic_scores` of the ``M + L`` opinions."""
        online = standardised_mean(learned)
        blended = blend_with_prior(members.mean(axis=0), online, measured, self.blend_samples)
        self.last_optimistic_scores = optimistic_scores(blended, np.vstack([members, *learned]))
        return blended

    def _fallback_trained(self) -> bool:
        """The XGBoost fallback has trained on its warm-up samples (it ranks by chance before)."""
        return self.fallback.booster is not None and self.fallback.data_size >= self.fallback.num_warmup_samples

    def _prior_and_fallback(self, graph, key: str, context, candidates) -> np.ndarray:
        """The frozen pretrained ranking blended with the XGBoost fallback's scores (the
        prior alone until the fallback has trained and the task has measurements)."""
        prior = predict_member_scores(self.network, graph, self.chunk_size)
        measured = self.measured_by_task.get(key, 0)
        if not measured or not self._fallback_trained() or self.blend_samples <= 0:
            return self._prior_alone(prior)
        learned = np.asarray(self.fallback.predict(context, candidates), dtype=np.float64)
        return self._blend(prior, [learned], measured)

    def update(self, context, candidates, results) -> None:
        """Record measured candidates; train the fallback, and the network within its budget."""
        from tvm.s_tir.meta_schedule.utils import shash2hex

        if len(candidates) != len(results):
            raise ValueError(f"{len(candidates)} candidates but {len(results)} results")
        self.fallback.update(context, candidates, results)
        if not self.online:
            return
        measured = [(c, lat) for c, r in zip(candidates, results) if np.isfinite(lat := result_latency(r))]
        if not measured:
            return
        key = shash2hex(context.mod)
        if self.learner == "xgb":
            self.measured_by_task[key] = self.measured_by_task.get(key, 0) + len(measured)
            return
        if key in self.failed_tasks:
            return
        try:
            graph = self.converter.convert(
                context, [c for c, _ in measured], runtime=np.asarray([lat for _, lat in measured])
            )
            if self.store.add(key, graph) == 0:
                return
            self._ensure_network(graph)
            self._trainer.set_task(key, self.store.graph(key))
            self._trainer.train(self.update_max_steps, self.update_time_budget_s, focus=key)
        except Exception as err:  # noqa: BLE001 - as in predict: the task goes to XGBoost, logged
            self._log_fallback(context, *self._give_up(key, err))

    def _give_up(self, key: str, err: Exception) -> tuple[str, str]:
        """Hand task ``key`` to the fallback for good after ``err``; returns (category, reason)."""
        if isinstance(err, UnsupportedProgramError):
            reason = "unsupported", f"the program cannot be converted: {err}"
        else:
            reason = "error", f"the network failed: {type(err).__name__}: {err}"
        self.failed_tasks[key] = reason
        return reason

    def save(self, path: str) -> None:
        """Save the network, the measured data and the fallback to directory ``path``.

        The directory is written beside ``path`` and then moved into place.
        """
        target = Path(path)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent if str(target.parent) else "."))
        try:
            if self.network is not None:
                save_checkpoint(staging / "network.safetensors", self.network, FEATURE_SCHEMA_VERSION,
                                pretrained=self.pretrained)
            if self.pretrained_network is not None:
                save_checkpoint(staging / "prior.safetensors", self.pretrained_network, FEATURE_SCHEMA_VERSION,
                                pretrained=True)
            if len(self.store):
                self.store.save(staging / "measured.npz")
            save_xgb_state(self.fallback, staging)
            state = {"format": "tgraph-cost-model-1", "pretrained": self.pretrained,
                     "has_network": self.network is not None, "measured_by_task": self.measured_by_task}
            (staging / "state.json").write_text(json.dumps(state))
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def load(self, path: str) -> None:
        """Load a directory written by :meth:`save`; raises ``CheckpointError`` if unusable."""
        directory = Path(path)
        state_file = directory / "state.json"
        if not state_file.is_file():
            raise CheckpointError(f"{directory} is not a saved TGraphCostModel (no state.json)")
        try:
            state = json.loads(state_file.read_text())
        except json.JSONDecodeError as err:
            raise CheckpointError(f"{state_file} is not valid JSON: {err}") from None

        def network(name: str):
            file = directory / name
            return load_checkpoint(file, feature_schema=FEATURE_SCHEMA_VERSION)[0] if file.is_file() else None

        self.network, self.pretrained_network, self._trainer = network("network.safetensors"), None, None
        self.pretrained = bool(state.get("pretrained")) and self.network is not None
        if state.get("has_network") and self.network is None:
            raise CheckpointError(f"{directory} lacks network.safetensors, which its state.json lists")
        self.pretrained_network = network("prior.safetensors")
        self.measured_by_task = dict(state.get("measured_by_task", {}))
        measured = directory / "measured.npz"
        self.store = TaskStore.load(measured) if measured.is_file() else TaskStore()
        load_xgb_state(self.fallback, directory)
