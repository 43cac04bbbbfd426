"""convert.tir.store_features: every PerStoreFeature row lands on the block that produced it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WORKLOAD_FAMILIES, sample_candidates
from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

from tvm_tgraph.convert.tir import TirConverter, store_producers, task_graph
from tvm_tgraph.convert.tir.schema import BLOCK_STORE_COLUMN, CONFIG_COLUMN, PER_STORE_FEATURES, STORE_FEATURE_SCALE
from tvm_tgraph.convert.tir.store_features import place_block_store_features

STORE_COLUMNS = slice(BLOCK_STORE_COLUMN, BLOCK_STORE_COLUMN + PER_STORE_FEATURES)


@pytest.mark.parametrize("workload", WORKLOAD_FAMILIES)
def test_each_store_row_is_named_by_a_block_of_the_task(workload):
    context, candidates = sample_candidates(workload)
    graph = task_graph(context.mod)
    for candidate, rows in zip(candidates, PerStoreFeature().extract_from(context, candidates)):
        producers = store_producers(candidate.sch.mod)
        assert len(producers) == rows.numpy().shape[0], str(candidate.sch.mod)
        config = np.zeros((len(graph.config_node_ids), len(CONFIG_COLUMN)), np.float32)
        place_block_store_features(config, graph, graph.config_row(), rows.numpy(), producers)
        # every row placed: the per-block maxima are the extractor's maxima over all stores
        placed = config[:, STORE_COLUMNS][np.abs(config[:, STORE_COLUMNS]).sum(1) > 0] / STORE_FEATURE_SCALE
        np.testing.assert_allclose(placed.max(0), rows.numpy().max(0), rtol=1e-5, atol=1e-5)


def test_inlined_blocks_carry_no_store_features_and_the_others_do():
    context, candidates = sample_candidates("dense_bias_relu")
    graph = TirConverter().convert(context, candidates)
    store = np.abs(graph.config_feat[..., STORE_COLUMNS]).sum(-1)          # (c, nc)
    inlined = graph.config_feat[..., CONFIG_COLUMN["block_inlined"]] > 0
    assert inlined.any() and (store[inlined] == 0).all()
    assert (store.max(1) > 0).all()
    assert (graph.config_feat[..., STORE_COLUMNS] >= 0).all()


def test_rows_that_cannot_be_matched_to_blocks_are_not_placed():
    context, candidates = sample_candidates("softmax", count=2)
    graph = task_graph(context.mod)
    rows = PerStoreFeature().extract_from(context, candidates[:1])[0].numpy()
    producers = store_producers(candidates[0].sch.mod)
    config = np.zeros((len(graph.config_node_ids), len(CONFIG_COLUMN)), np.float32)
    place_block_store_features(config, graph, graph.config_row(), rows, producers[:-1])
    assert not config.any()


@pytest.mark.parametrize("workload, padding, compute", [("conv2d_nchw", "pad_temp", "conv2d_nchw"),
                                                         ("depthwise_conv2d", "PaddedInput", "DepthwiseConv2d")])
def test_a_convolution_s_arithmetic_lands_on_its_block_and_not_on_the_padding(workload, padding, compute):
    """PerStoreFeature's first columns count float multiply-adds, adds and multiplies: the
    convolution block has them, the padding block (a select) has none."""
    context, candidates = sample_candidates(workload)
    graph = TirConverter().convert(context, candidates)
    row_of = {int(node): row for row, node in enumerate(graph.config_node_ids)}
    blocks = task_graph(context.mod).blocks
    arithmetic = graph.config_feat[:, :, BLOCK_STORE_COLUMN:BLOCK_STORE_COLUMN + 3].sum(-1)   # (c, nc)
    assert (arithmetic[:, row_of[blocks[compute]]] > 0).all()
    assert (arithmetic[:, row_of[blocks[padding]]] == 0).all()
    kept = np.array([padding in store_producers(candidate.sch.mod) for candidate in candidates])
    padding_stores = np.abs(graph.config_feat[:, row_of[blocks[padding]], STORE_COLUMNS]).sum(-1)
    assert kept.any() and (padding_stores[kept] > 0).all() and (padding_stores[~kept] == 0).all()
