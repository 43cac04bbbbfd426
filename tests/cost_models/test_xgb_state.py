"""cost_models.xgb_state: the XGBoost fallback's saved state."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import measured_runner_results, sample_candidates
from tvm.s_tir.meta_schedule.cost_model import XGBModel

from cost_models.xgb_state import load_xgb_state, save_xgb_state
from tvm_tgraph.errors import CheckpointError


def test_xgb_state_round_trip_predicts_the_same(tmp_path):
    context, candidates = sample_candidates("matmul_128", count=24)
    model = XGBModel(num_warmup_samples=0, adaptive_training=False)
    model.update(context, candidates[:16], measured_runner_results(16))
    save_xgb_state(model, tmp_path)
    restored = XGBModel(num_warmup_samples=0, adaptive_training=False)
    load_xgb_state(restored, tmp_path)
    np.testing.assert_allclose(restored.predict(context, candidates[16:]), model.predict(context, candidates[16:]))
    (tmp_path / "fallback.json").write_text("{")
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        load_xgb_state(XGBModel(), tmp_path)
