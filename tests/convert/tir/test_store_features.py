"""Pooling PerStoreFeature rows, and the recomputation feature."""

from __future__ import annotations

import numpy as np
import pytest

from tvm_tgraph.convert.tir import F_GLOBAL, RECOMPUTE_COLUMN
from tvm_tgraph.convert.tir.store_features import float_ops, store_features

ADDSUB = 1   # PerStoreFeature's float add/subtract column, log2(1 + count)


def rows(*addsub_counts: int) -> np.ndarray:
    per_store = np.zeros((len(addsub_counts), 164))
    per_store[:, ADDSUB] = np.log2(1.0 + np.asarray(addsub_counts, dtype=float))
    return per_store


def test_float_ops_undo_the_log_scale_and_sum_over_stores():
    assert float_ops(rows(100, 28)) == pytest.approx(128.0)


def test_recomputation_is_zero_for_the_unscheduled_work_and_grows_with_extra_work():
    same = store_features(rows(100, 28), unscheduled_ops=128.0)
    assert same.shape == (F_GLOBAL,)
    assert same[RECOMPUTE_COLUMN] == pytest.approx(0.0, abs=1e-6)
    recomputed = store_features(rows(100 * 256, 28), unscheduled_ops=128.0)
    assert recomputed[RECOMPUTE_COLUMN] > 7.0   # log2(25,628 / 128), about 7.6
