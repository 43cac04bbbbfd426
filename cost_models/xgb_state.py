"""Saving and loading TVM's ``XGBModel`` without pickle.

``XGBModel.save`` stores its feature cache with ``np.save(dtype=object)`` and ``load``
reads it back with ``allow_pickle=True``, which runs arbitrary code from the file. These
functions store the same state as plain arrays (``.npz``, loaded with
``allow_pickle=False``) and the booster in XGBoost's own JSON format.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tvm_tgraph.errors import CheckpointError


def save_xgb_state(model, directory: str | Path) -> None:
    """Write ``model``'s booster and feature cache under ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays, groups = {}, []
    for i, group in enumerate(model.data.values()):
        groups.append(group.group_hash)
        arrays[f"g{i}_rows"] = np.asarray([f.shape[0] for f in group.features], dtype=np.int64)
        arrays[f"g{i}_features"] = np.concatenate(group.features).astype(np.float32)
        arrays[f"g{i}_costs"] = np.asarray(group.costs, dtype=np.float32)
    np.savez(directory / "fallback_data.npz", **arrays)
    meta = {"groups": groups, "last_train_size": model.last_train_size, "has_booster": model.booster is not None}
    (directory / "fallback.json").write_text(json.dumps(meta))
    if model.booster is not None:
        model.booster.save_model(str(directory / "fallback_booster.json"))


def load_xgb_state(model, directory: str | Path) -> None:
    """Restore what :func:`save_xgb_state` wrote into ``model`` (an ``XGBModel``)."""
    import xgboost as xgb
    from tvm.s_tir.meta_schedule.cost_model.xgb_model import FeatureGroup

    directory = Path(directory)
    try:
        meta = json.loads((directory / "fallback.json").read_text())
        with np.load(directory / "fallback_data.npz", allow_pickle=False) as arrays:
            data = {}
            for i, group_hash in enumerate(meta["groups"]):
                rows = arrays[f"g{i}_rows"]
                features = np.split(arrays[f"g{i}_features"], np.cumsum(rows)[:-1])
                data[group_hash] = FeatureGroup(group_hash, list(features), arrays[f"g{i}_costs"])
        booster = None
        if meta["has_booster"]:
            booster = xgb.Booster()
            booster.load_model(str(directory / "fallback_booster.json"))
    except (OSError, KeyError, ValueError, json.JSONDecodeError, xgb.core.XGBoostError) as err:
        raise CheckpointError(f"XGBoost fallback state in {directory} cannot be loaded: {err}") from None
    model.data = data
    model.data_size = sum(len(g.costs) for g in data.values())
    model.booster = booster
    model.last_train_size = meta["last_train_size"]
