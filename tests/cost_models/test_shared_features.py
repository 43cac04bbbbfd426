"""cost_models.shared_features: XGBoost reads the converter's per-store rows."""

from __future__ import annotations

import numpy as np
from conftest import sample_candidates
from tvm.s_tir.meta_schedule.cost_model import XGBModel
from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

from cost_models.shared_features import SharedPerStoreFeature
from tvm_tgraph.convert.tir import TirConverter
from tvm_tgraph.testing import measure_candidates


class CountingExtractor:
    """TVM's ``PerStoreFeature``, counting the candidates it is asked to extract."""

    def __init__(self) -> None:
        self.inner, self.extracted = PerStoreFeature(), 0

    def extract_from(self, context, candidates):
        self.extracted += len(candidates)
        return self.inner.extract_from(context, candidates)


def test_xgboost_given_the_shared_rows_predicts_as_stock_and_extracts_each_candidate_once():
    context, candidates = sample_candidates("matmul", count=40)
    converter = TirConverter()
    counter = converter.store_rows.extractor = CountingExtractor()
    shared, plain = XGBModel(num_warmup_samples=0, extractor=SharedPerStoreFeature(converter.store_rows)), \
        XGBModel(num_warmup_samples=0)
    converter.convert(context, candidates[:20])
    results = measure_candidates(context, candidates[:16])
    for model in (shared, plain):
        model.update(context, candidates[:16], results)
    np.testing.assert_array_equal(shared.predict(context, candidates), plain.predict(context, candidates))
    converter.convert(context, candidates)     # 20 of these XGBoost extracted, through the shared rows
    assert counter.extracted == len(candidates) + 1   # and the unscheduled program once (the recomputation feature)
