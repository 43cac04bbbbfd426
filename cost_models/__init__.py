"""MetaSchedule cost models: TGraph, with TVM's XGBoost model as its fallback.

>>> from cost_models import TGraphCostModel
>>> ms.tune_tir(mod, target, work_dir, 64, cost_model=TGraphCostModel())  # doctest: +SKIP
"""

from __future__ import annotations

from tvm_tgraph.names import COST_MODELS

from .tgraph_cost_model import DEFAULT_CHECKPOINT, TGraphCostModel

__all__ = ["DEFAULT_CHECKPOINT", "TGraphCostModel", "create"]


def create(kind: str, **kwargs):
    """Make a cost model by name (one of :data:`tvm_tgraph.names.COST_MODELS`), as
    ``ms.cost_model.CostModel.create`` does.

    ``"tgraph-frozen"`` is TGraph without online fine-tuning (the pretrained network ranks
    every round; its XGBoost fallback still learns), ``"tgraph-xgb"`` TGraph that learns a
    task online through its XGBoost fallback (``learner="xgb"``), ``"tgraph-ft-xgb"`` TGraph that
    learns a task both ways, fine-tuning the network and through its fallback
    (``learner="network+xgb"``), ``"xgb"`` TVM's ``XGBModel`` as users
    get it (random until 100 samples), ``"xgb-warm16"`` the stronger baseline
    ``XGBModel(num_warmup_samples=16)``.
    """
    from tvm.s_tir.meta_schedule.cost_model import RandomModel, XGBModel

    if kind == "tgraph":
        return TGraphCostModel(**kwargs)
    if kind == "tgraph-frozen":
        return TGraphCostModel(online=False, **kwargs)
    if kind == "tgraph-xgb":
        return TGraphCostModel(learner="xgb", **kwargs)
    if kind == "tgraph-ft-xgb":
        return TGraphCostModel(learner="network+xgb", **kwargs)
    if kind == "xgb":
        return XGBModel(**kwargs)
    if kind == "xgb-warm16":
        return XGBModel(num_warmup_samples=16, **kwargs)
    if kind == "random":
        return RandomModel(**kwargs)
    raise ValueError(f"unknown cost model {kind!r}: use one of {', '.join(COST_MODELS)}")
