"""convert.tir.trace: the trace text parser and the replay of decisions onto the program graph."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sample_candidates

from tvm_tgraph.convert.tir import KIND, parse_trace, task_graph, trace_config_features
from tvm_tgraph.convert.tir.trace import _parse_line
from tvm_tgraph.errors import UnsupportedProgramError


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


def test_a_trace_reads_the_same_after_other_traces_shared_its_lines():
    """Parsed lines are kept and shared between traces: replaying other candidates first
    must not change what a candidate with the same lines reads."""
    context, candidates = sample_candidates("matmul")
    graph = task_graph(context.mod)
    _parse_line.cache_clear()
    alone = trace_config_features(graph, candidates[-1].sch.trace)
    _parse_line.cache_clear()
    for cand in candidates:
        trace_config_features(graph, cand.sch.trace)
    assert _parse_line.cache_info().hits > 0, "the candidates of one task share lines"
    np.testing.assert_array_equal(trace_config_features(graph, candidates[-1].sch.trace), alone)
