"""FastBuilder: builds for llvm, reuses its workers across batches, reports failures."""

from __future__ import annotations

import tvm
from conftest import sample_candidates
from tvm.s_tir.meta_schedule.builder import BuilderInput

from tvm_tgraph.measure import FastBuilder


def test_builds_two_batches_with_one_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))   # the libraries are built under pytest's folder
    context, candidates = sample_candidates("matmul_128", count=6)
    builder = FastBuilder(max_workers=2)
    try:
        first = builder.build([BuilderInput(c.sch.mod, context.target) for c in candidates[:3]])
        pool = builder._pool
        second = builder.build([BuilderInput(c.sch.mod, context.target) for c in candidates[3:]])
        assert builder._pool is pool, "the worker pool must survive between batches"
    finally:
        builder.shutdown()
    for result in first + second:
        assert result.error_msg is None, result.error_msg
        assert result.artifact_path.endswith(".tar") and result.artifact_path.startswith(str(tmp_path))


def test_a_failing_build_becomes_an_error_result():
    context, candidates = sample_candidates("matmul_128", count=2)
    bad_target = tvm.target.Target({"kind": "llvm", "mcpu": "not-a-cpu-xyz", "mtriple": "nonsense-triple"})
    builder = FastBuilder(max_workers=1)
    try:
        (result,) = builder.build([BuilderInput(candidates[0].sch.mod, bad_target)])
    finally:
        builder.shutdown()
    assert result.artifact_path is None and "FastBuilder" in result.error_msg
