"""The TIR converter on every operator family of the default llvm design space."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sample_candidates

from tvm_tgraph.convert.tir import (
    F_CONFIG, F_GLOBAL, F_NODE, KIND, TirConverter, parse_trace, task_graph, trace_config_features,
)
from tvm_tgraph.errors import UnsupportedProgramError
from tvm_tgraph.workloads import WORKLOADS, as_ir_module

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


def test_tile_factors_are_visible_on_their_loop():
    context, candidates = sample_candidates("matmul")
    graph = task_graph(context.mod)
    loops = [i for i, kind in enumerate(graph.node_kind) if kind in (KIND["loop_spatial"], KIND["loop_reduction"])]
    rows = graph.config_row()
    features = [trace_config_features(graph, cand.sch.trace) for cand in candidates]
    tiles = {tuple(np.round(f[rows[loops[0]], 2:6], 4)) for f in features}
    assert len(tiles) > 1, "different tilings of the outer loop must differ on that loop's node"


def test_parse_trace_reads_calls_until_postproc():
    text = '''# from tvm import s_tir
def apply_trace(sch: s_tir.Schedule) -> None:
  b0 = sch.get_sblock(name="C", func_name="main")
  l1, l2 = sch.get_loops(block=b0)
  v3, v4 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=64, decision=[4, 16])
  sch.reorder(l2, l1)
  sch.enter_postproc()
  sch.parallel(loop=l2)
'''
    calls = parse_trace(text)
    assert [c[0] for c in calls] == ["get_sblock", "get_loops", "sample_perfect_tile", "reorder"]
    assert calls[2][2] == {"loop": "l1", "n": 2, "max_innermost_factor": 64, "decision": [4, 16]}
    assert calls[3][1] == ["l2", "l1"] and calls[1][3] == ["l1", "l2"]


def test_unknown_trace_instruction_is_named():
    context, _ = sample_candidates("matmul")
    graph = task_graph(context.mod)
    trace = '  b0 = sch.get_sblock(name="T_matmul_NN", func_name="main")\n  sch.tensorize_magic(block=b0)\n'
    with pytest.raises(UnsupportedProgramError, match="tensorize_magic"):
        trace_config_features(graph, trace)


def test_dynamic_shapes_are_refused_with_the_construct_named():
    from tvm import te, tirx, topi

    n = tirx.Var("n", "int32")
    a = te.placeholder((n, 64), name="A")
    b = te.placeholder((64, 64), name="B")
    func = te.create_prim_func([a, b, topi.nn.matmul(a, b)])
    with pytest.raises(UnsupportedProgramError, match="symbolic shape"):
        task_graph(as_ir_module(func))


def test_module_with_two_functions_is_refused():
    import tvm

    mod = tvm.IRModule({"f": WORKLOADS["softmax"](), "g": WORKLOADS["matmul_128"]()})
    with pytest.raises(UnsupportedProgramError, match="exactly one PrimFunc"):
        task_graph(mod)


def test_lowered_program_without_blocks_is_refused():
    import tvm

    passes = tvm.s_tir.transform
    mod = as_ir_module(WORKLOADS["softmax"]())
    lowered = passes.LowerOpaqueBlock()(passes.ConvertBlocksToOpaque()(passes.LowerInitBlock()(mod)))
    with pytest.raises(UnsupportedProgramError, match="not a root block"):
        task_graph(lowered)


def test_every_tir_statement_kind_is_known_to_the_converter():
    """Walk TVM's statement classes, not just those the suite produced: each one is either
    represented or skipped on purpose (SBlock only occurs inside SBlockRealize)."""
    import inspect

    from tvm import s_tir, tirx

    from tvm_tgraph.convert.tir import STATEMENT_KINDS

    classes = {name for module in (tirx.stmt, s_tir.stmt) for name, cls in vars(module).items()
               if inspect.isclass(cls) and issubclass(cls, tirx.stmt.Stmt) and cls is not tirx.stmt.Stmt}
    assert classes - set(STATEMENT_KINDS) == {"SBlock"}


def test_function_level_alloc_buffer_becomes_an_intermediate_buffer(tmp_path):
    from conftest import ALLOC_BUFFER_KERNEL

    from tvm_tgraph.workloads import load_module

    (tmp_path / "kernel.py").write_text(ALLOC_BUFFER_KERNEL)
    graph = task_graph(load_module(f"{tmp_path / 'kernel.py'}:scaled_matmul"))
    assert set(graph.blocks) == {"matmul", "scale"}
    assert (graph.node_kind == KIND["buffer_intermediate"]).sum() == 1   # D


def test_feature_cache_tells_tasks_with_the_same_trace_apart():
    """Element-wise ops at two shapes print the same trace; their per-store features
    (and so their global features) differ, and a fresh converter keeps them apart."""
    from tvm.s_tir import meta_schedule as ms

    from tvm_tgraph.tvm_env import make_target
    from tvm_tgraph.workloads import fused_elementwise

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
