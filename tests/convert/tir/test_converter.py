"""convert.tir.converter: every operator family of the default llvm design space converts, and the feature cache."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sample_candidates
from tvm.s_tir import meta_schedule as ms

from tvm_tgraph.convert.tir import F_CONFIG, F_GLOBAL, F_NODE, KIND, TirConverter
from tvm_tgraph.tvm_env import make_target
from tvm_tgraph.workloads import as_ir_module, fused_elementwise


FAMILIES = [
    "matmul", "dense_bias_relu", "batch_matmul", "conv2d_nchw", "conv2d_nhwc", "depthwise_conv2d",
    "softmax", "layer_norm", "max_pool2d", "fused_elementwise",
]


@pytest.mark.parametrize("workload", FAMILIES)
def test_every_candidate_converts_and_distinct_candidates_differ(workload):
    context, candidates = sample_candidates(workload)
    graph = TirConverter().convert(context, candidates)

    n, nc, c = len(graph.node_kind), len(graph.config_node_ids), len(candidates)
    assert graph.node_feat.shape == (n, F_NODE)
    assert graph.config_feat.shape == (c, nc, F_CONFIG)
    assert graph.global_feat.shape == (c, F_GLOBAL)
    assert np.isfinite(graph.config_feat).all() and np.isfinite(graph.global_feat).all()
    # every block, loop and the root are configurable; buffers are not
    assert set(graph.node_kind[graph.config_node_ids]) <= {KIND[k] for k in KIND if not k.startswith("buffer")}
    # candidates with different scheduling decisions get different configuration features
    pre_postproc = [str(cand.sch.trace).split("sch.enter_postproc()")[0] for cand in candidates]
    assert len(set(map(bytes, (f.tobytes() for f in graph.config_feat)))) == len(set(pre_postproc))


def test_feature_cache_tells_tasks_with_the_same_trace_apart():
    """Element-wise ops at two shapes print the same trace; their per-store features
    (and so their global features) differ, and a fresh converter keeps them apart."""
    def first_candidate(rows, cols):
        mod = as_ir_module(fused_elementwise(rows, cols))
        context = ms.TuneContext(mod=mod, target=make_target({"kind": "llvm", "num-cores": 2}),
                                 space_generator="post-order-apply",
                                 search_strategy=ms.search_strategy.ReplayTrace(), rand_state=0, num_threads=1)
        context.pre_tuning(max_trials=1, num_trials_per_iter=1, design_spaces=context.generate_design_space(),
                           database=ms.database.MemoryDatabase(), cost_model=ms.cost_model.RandomModel())
        return context, list(context.generate_measure_candidates())

    big, small = first_candidate(256, 1024), first_candidate(64, 128)
    assert str(big[1][0].sch.trace) == str(small[1][0].sch.trace)
    converter = TirConverter()
    shared = converter.convert(*big).global_feat, converter.convert(*small).global_feat
    alone = TirConverter().convert(*small).global_feat
    np.testing.assert_array_equal(shared[1], alone)
    assert not np.array_equal(shared[0], shared[1])
