"""convert.tir.store_features: the per-store rows the converter and XGBoost share."""

from __future__ import annotations

import numpy as np
from conftest import sample_candidates
from tvm.s_tir.meta_schedule.cost_model import XGBModel
from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

from tvm_tgraph.convert.tir import TirConverter
from tvm_tgraph.convert.tir.lru import LruCache
from tvm_tgraph.convert.tir.store_features import CachedPerStoreFeature
from tvm_tgraph.testing import measure_candidates


class CountingExtractor:
    """TVM's ``PerStoreFeature``, counting the candidates it is asked to extract."""

    def __init__(self) -> None:
        self.inner, self.extracted = PerStoreFeature(), 0

    def extract_from(self, context, candidates):
        self.extracted += len(candidates)
        return self.inner.extract_from(context, candidates)


def test_cached_rows_are_tvms_and_xgboost_given_them_predicts_as_stock():
    context, candidates = sample_candidates("dense_bias_relu", count=40)
    stock = [x.numpy() for x in PerStoreFeature().extract_from(context, candidates)]
    cached = CachedPerStoreFeature()
    for mine, theirs in zip(cached.rows(context, candidates), stock):
        np.testing.assert_array_equal(mine, theirs)

    train, scored = candidates[:24], candidates[24:]
    results = measure_candidates(context, train)
    shared, plain = XGBModel(num_warmup_samples=0, extractor=cached), XGBModel(num_warmup_samples=0)
    for model in (shared, plain):
        model.update(context, train, results)
    np.testing.assert_array_equal(shared.predict(context, scored), plain.predict(context, scored))


def test_converter_and_xgboost_extract_each_candidate_once_between_them():
    context, candidates = sample_candidates("matmul", count=32)
    extractor = CachedPerStoreFeature()
    counter = extractor._extractor = CountingExtractor()
    converter = TirConverter(store_extractor=extractor)
    xgb = XGBModel(num_warmup_samples=0, extractor=extractor)
    converter.convert(context, candidates[:20])
    xgb.update(context, candidates[:8], measure_candidates(context, candidates[:8]))
    xgb.predict(context, candidates)               # 12 of these the converter has not seen
    converter.convert(context, candidates)
    assert counter.extracted == len(candidates)


def test_lru_cache_computes_only_the_missing_and_forgets_the_least_recent():
    cache, asked = LruCache(size=3), []

    def compute(indices):
        asked.append(indices)
        return [f"v{i}" for i in indices]

    assert cache.get_batch(["a", "b", "c"], compute) == ["v0", "v1", "v2"]
    assert cache.get_batch(["c", "d"], compute) == ["v2", "v1"] and asked[-1] == [1]
    assert len(cache) == 3                         # "a", the least recently used, is gone
    cache.get_batch(["a"], compute)
    assert asked[-1] == [0] and asked == [[0, 1, 2], [1], [0]]
