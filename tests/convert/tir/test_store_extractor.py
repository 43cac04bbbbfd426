"""convert.tir.store_extractor and .lru: per-store rows extracted once per candidate."""

from __future__ import annotations

import numpy as np
from conftest import sample_candidates
from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

from tvm_tgraph.convert.tir.lru import LruCache
from tvm_tgraph.convert.tir.store_extractor import PerStoreRows


def test_kept_rows_are_tvms_rows():
    context, candidates = sample_candidates("dense_bias_relu", count=16)
    stock = [x.numpy() for x in PerStoreFeature().extract_from(context, candidates)]
    rows = PerStoreRows(cache_size=8)
    for batch in (candidates, candidates[4:]):         # the second batch is served partly from the cache
        for mine, theirs in zip(rows.rows(context, batch), stock[len(candidates) - len(batch):]):
            np.testing.assert_array_equal(mine, theirs)


def test_lru_cache_computes_only_the_missing_and_forgets_the_least_recent():
    cache, asked = LruCache(size=3), []

    def compute(indices):
        asked.append(indices)
        return [f"v{i}" for i in indices]

    assert cache.get_batch(["a", "b", "c"], compute) == ["v0", "v1", "v2"]
    assert cache.get_batch(["c", "d"], compute) == ["v2", "v1"] and asked[-1] == [1]
    assert len(cache) == 3                         # "a", the least recently used, is gone
    cache.get_batch(["a"], compute)
    assert asked == [[0, 1, 2], [1], [0]]
