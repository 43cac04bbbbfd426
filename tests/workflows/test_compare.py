"""tgraph compare on a tiny budget: real tuning runs, summary, table, curves, resuming."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import drop_capture_handlers

from tvm_tgraph.cli import main
from tvm_tgraph.workflows.compare import RunResult, format_markdown, method_parts, summarise
from tvm_tgraph.workflows.tuning import tune
from tvm_tgraph.workloads import load_module


def test_compare_runs_summarises_and_resumes(tmp_path, capsys):
    args = ["compare", "--workloads", "matmul_128", "--methods", "tgraph+pruning,xgb-warm16,random",
            "--trials", "8", "--trials-per-iter", "8", "--seeds", "0", "--out", str(tmp_path),
            "--target", '{"kind": "llvm", "num-cores": 2}']
    drop_capture_handlers()
    assert main(args) == 0
    report = json.loads((tmp_path / "compare.json").read_text())
    methods = report["summary"]["matmul_128"]["methods"]
    assert set(methods) == {"tgraph+pruning", "xgb-warm16", "random"}
    for entry in methods.values():
        assert 0 < entry["best_s"]["8"]["median"] < 1 and 0 <= entry["cost_model_share"] < 1
        assert 0 < entry["search_share"] < 1
    for run in report["runs"]:   # the search's proposing time holds the cost model's predict
        assert run["cost_model_split"]["predict"] <= run["search_s"] < run["wall_s"]
    assert methods["xgb-warm16"]["trials_to_reference"]["median"] <= 8   # it reaches its own best
    assert (tmp_path / "compare.png").stat().st_size > 0 and "| tgraph+pruning |" in (tmp_path / "compare.md").read_text()
    untuned = {r["untuned_s"] for r in report["runs"]}   # timed once in this call, recorded by every run
    assert len(untuned) == 1 and 0 < untuned.pop() < 1 and all(r["cpu"]["llvm"] for r in report["runs"])
    assert "Machine speed: one speed for every run" in (tmp_path / "compare.md").read_text()
    assert report["seen_in_training"] == {"matmul_128": ["matmul_128"]}   # a collected shape the checkpoint used
    assert "Trained on by the TGraph methods' checkpoint (same structural hash): yes." in (tmp_path / "compare.md").read_text()
    first = [r["curve"] for r in report["runs"]]
    capsys.readouterr()
    assert main(args) == 0                                    # resumed: every run read back
    assert [r["curve"] for r in json.loads((tmp_path / "compare.json").read_text())["runs"]] == first


def test_the_checkpoint_named_reaches_the_tgraph_methods(tmp_path, capsys):
    args = ["compare", "--workloads", "matmul_128", "--methods", "tgraph-xgb+pruning-light", "--trials", "8",
            "--seeds", "0", "--out", str(tmp_path), "--checkpoint", str(tmp_path / "typo.safetensors")]
    drop_capture_handlers()
    assert main(args) == 2
    assert "typo.safetensors does not exist" in capsys.readouterr().err


def test_summary_counts_only_a_win_over_the_stronger_xgboost():
    def run(method, curve, seed=0):
        return RunResult("w", method, seed, curve, wall_s=10.0, cost_model_s=1.0,
                         cost_model_split={"predict": 0.8, "update": 0.2}, search_s=3.0)

    results = [run("xgb", [4.0, 3.0, 3.0, 3.0]), run("xgb-warm16", [4.0, 2.0, 2.0, 2.0]),
               run("tgraph+pruning", [2.0, 2.0, 1.0, 1.0])]
    summary = summarise(results, budgets=(2, 4))["w"]
    assert summary["reference_s"] == 2.0                        # the stronger XGBoost's final best
    tg = summary["methods"]["tgraph+pruning"]
    assert tg["trials_to_reference"]["median"] == 1.0
    assert tg["vs_stronger_xgb"] == {"2": 1.0, "4": 0.5}         # against xgb-warm16, not xgb
    assert summary["methods"]["xgb"]["trials_to_reference"]["median"] == np.inf
    assert tg["cost_model_share"] == 0.1 and tg["search_share"] == pytest.approx(0.22)   # (3.0 - 0.8) / 10


def test_summary_without_xgboost_has_no_reference():
    runs = [RunResult("w", "tgraph+pruning", seed, [2.0, 1.0], wall_s=10.0, cost_model_s=1.0) for seed in (0, 1)]
    summary = summarise(runs, budgets=(2,))
    assert summary["w"]["reference_s"] is None
    assert "trials_to_reference" not in summary["w"]["methods"]["tgraph+pruning"]
    assert "vs_stronger_xgb" not in summary["w"]["methods"]["tgraph+pruning"]
    markdown = format_markdown(summary, budgets=(2,))
    assert "none, no XGBoost method in this call" in markdown and "nan" not in markdown
    assert "| tgraph+pruning | 1000.0000 [1000.0000-1000.0000] | - | - | 10 | 10.0% | - |" in markdown   # no search time recorded
    assert summary["w"]["methods"]["tgraph+pruning"]["search_share"] is None


def test_operator_runs_timed_at_different_machine_speeds_are_flagged():
    """Operator runs record their workload's untuned build timed in their own call; runs
    10% apart (same CPU name, another session) are not shown as comparable."""
    def run(method, untuned_s):
        return RunResult("w", method, 0, [2.0, 1.0], wall_s=10.0, cost_model_s=1.0, untuned_s=untuned_s)

    apart = summarise([run("xgb-warm16", 0.020), run("tgraph+pruning", 0.022)], budgets=(2,))["w"]
    assert not apart["machine_speed"]["comparable"]
    assert "**Machine speed: not shown to be one for every run**" in format_markdown({"w": apart}, budgets=(2,))
    close = summarise([run("xgb-warm16", 0.020), run("tgraph+pruning", 0.0204)], budgets=(2,))["w"]
    assert close["machine_speed"]["comparable"]


def test_round_robin_suffix_names_the_task_scheduler_metaschedule_gets(tmp_path):
    assert method_parts("xgb") == ("xgb", "evolutionary", "gradient")
    assert method_parts("tgraph-xgb+pruning-light+round-robin") == ("tgraph-xgb", "pruning-light", "round-robin")
    drop_capture_handlers()
    with pytest.raises(ValueError, match="Unknown TaskScheduler name: no-such"):   # raised by MetaSchedule itself
        tune(load_module("matmul_128"), "random", 2, tmp_path, trials_per_iter=2, strategy="replay-trace",
             progress=False, task_scheduler="no-such")
