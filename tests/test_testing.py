"""The measuring helper of ``tvm_tgraph.testing``: a failed build is a result, not a crash, and
no built library is left behind."""

from __future__ import annotations

from conftest import sample_candidates

from tvm_tgraph.measure import FastBuilder
from tvm_tgraph.testing import measure_candidates


def test_candidates_whose_build_times_out_get_error_results_in_order():
    context, candidates = sample_candidates("matmul_128", count=3)
    builder = FastBuilder(max_workers=1, timeout_sec=1e-3)   # no build finishes in a millisecond
    try:
        results = measure_candidates(context, candidates, builder=builder)
    finally:
        builder.shutdown()
    assert len(results) == len(candidates)
    for result in results:
        assert result.run_secs is None and "timeout" in result.error_msg


def test_measured_candidates_leave_no_build_folder_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))   # the builder's fresh workers build under it
    context, candidates = sample_candidates("matmul_128", count=2)
    results = measure_candidates(context, candidates)
    assert all(result.run_secs for result in results)
    assert list(tmp_path.iterdir()) == []
