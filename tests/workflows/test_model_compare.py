"""tgraph compare --models on a tiny model: real whole-model tuning, end-to-end timing at
budget checkpoints, summary, resuming."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import TINY_MLP_SOURCE, drop_capture_handlers

from tvm_tgraph.cli import main
from tvm_tgraph.database import RECORD_FILE, latencies_in_trial_order
from tvm_tgraph.workflows.model_compare import ModelRun, format_models_markdown, summarise_models


def test_whole_model_compare_times_each_checkpoint_and_resumes(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(TINY_MLP_SOURCE)
    out = tmp_path / "out"
    args = ["compare", "--models", f"{source}:mlp", "--methods", "tgraph+pruning,random+round-robin",
            "--trials-per-task", "4", "--checkpoints", "2,4", "--trials-per-iter", "2", "--seeds", "0",
            "--out", str(out), "--target", '{"kind": "llvm", "num-cores": 2}']
    drop_capture_handlers()
    assert main(args) == 0
    report = json.loads((out / "compare_models.json").read_text())
    [(model, entry)] = report["summary"].items()
    assert entry["tasks"] == 2 and entry["checkpoints"] == [2, 4]
    assert report["untuned_s"][model] > 0 and (out / "compare_models.png").stat().st_size > 0
    for run in report["runs"]:
        assert run["trials"] == 4 * run["tasks"]
        assert all(0 < run["latency_s"][b] < report["untuned_s"][model] * 10 for b in ("2", "4"))
        assert max(run["max_abs_diff"].values()) < 1e-3       # every tuned build computes the same
        assert 0 < run["wall_at_s"]["2"] <= run["wall_at_s"]["4"] <= run["wall_s"]
        assert run["cpu"]["llvm"] and run["untuned_s"] == report["untuned_s"][model]
        assert run["cost_model_split"]["predict"] <= run["search_s"] < run["wall_s"]   # both tasks' proposing
        # two matmul tasks, nothing element-wise: the guard times the tuned build, chooses nothing
        assert all(run["guard"][b]["candidates"] == [] == run["guard"][b]["default_tasks"] for b in ("2", "4"))
    assert "Machine speed: one speed for every run" in (out / "compare_models.md").read_text()
    run_dir = out / "runs" / model.replace("/", "_").replace(":", "_") / "random+round-robin" / "seed0"
    latency, _ = latencies_in_trial_order(run_dir)
    assert json.loads((run_dir / "tuning.json").read_text())["task_scheduler"] == "round-robin"
    assert len(latencies_in_trial_order(run_dir / "at2")[0]) == 2 * 2   # the first 2 trials per task
    assert latencies_in_trial_order(run_dir / "at2")[0].tolist() == latency[:4].tolist()
    assert "| tgraph+pruning |" in (out / "compare_models.md").read_text()
    assert report["seen_in_training"][model] == []   # 16x64 and 16x128 layers: no collected task has these shapes
    assert "trained on (same structural hash): 0 of 2." in (out / "compare_models.md").read_text()

    # timing interrupted after the tuning finished: resumed without tuning again
    first = {r["method"]: r["latency_s"] for r in report["runs"]}
    (run_dir / "result.json").unlink()
    records = (run_dir / RECORD_FILE).read_text()
    capsys.readouterr()
    assert main(args) == 0
    assert (run_dir / RECORD_FILE).read_text() == records
    again = {r["method"]: r["latency_s"] for r in json.loads((out / "compare_models.json").read_text())["runs"]}
    assert {m: v for m, v in again.items() if m != "random+round-robin"} == {
        m: v for m, v in first.items() if m != "random+round-robin"}


def test_model_compare_rejects_checkpoints_beyond_the_budget(tmp_path, capsys):
    assert main(["compare", "--models", "model_resnet", "--trials-per-task", "8", "--checkpoints", "4,16",
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "checkpoints must lie within 1..8" in err and err.count("\n") == 1


def _run(method, latencies, seed=0, untuned_s=0.02, guard=None, search_s=30.0):
    checkpoints = {"4": latencies[0], "8": latencies[1]}
    return ModelRun("m", method, seed, tasks=3, trials=24, wall_s=100.0, cost_model_s=10.0, latency_s=checkpoints,
                    wall_at_s={"4": 50.0, "8": 100.0}, cost_model_at_s={"4": 5.0, "8": 10.0},
                    max_abs_diff={"4": 0.0, "8": 0.0}, cpu={"llvm": "x", "name": "x"}, untuned_s=untuned_s, guard=guard,
                    cost_model_split={"predict": 9.0, "update": 1.0}, search_s=search_s)


def test_model_summary_compares_with_the_stronger_xgboost_at_each_checkpoint():
    results = [_run("xgb", [4.0, 3.0]), _run("xgb-warm16", [5.0, 2.0]),
               _run("tgraph+pruning", [2.0, 1.5]), _run("tgraph+pruning", [2.5, 1.0], seed=1)]
    summary = summarise_models(results)["m"]
    assert summary["reference_s"] == 2.0                     # xgb-warm16's final median
    tg = summary["methods"]["tgraph+pruning"]
    assert tg["latency_s"]["8"] == {"median": 1.25, "min": 1.0, "max": 1.5}
    assert tg["vs_stronger_xgb"] == pytest.approx({"4": 2.25 / 4.0, "8": 1.25 / 2.0})
    assert tg["trials_per_task_to_reference"] == {"median": 6.0, "per_seed": [4, 8]}
    assert summary["methods"]["xgb"]["trials_per_task_to_reference"]["median"] == np.inf
    assert tg["cost_model_share"] == 0.1 and tg["wall_at_s"] == {"4": 50.0, "8": 100.0}
    assert tg["search_share"] == pytest.approx(0.21)   # (30 - 9 of predict) / 100
    assert summary["machine_speed"]["comparable"]


def test_model_summary_without_xgboost_has_no_reference():
    summary = summarise_models([_run("tgraph+pruning", [2.0, 1.5]), _run("tgraph+pruning", [2.5, 1.0], seed=1)])
    assert summary["m"]["reference_s"] is None
    assert "vs_stronger_xgb" not in summary["m"]["methods"]["tgraph+pruning"]
    markdown = format_models_markdown(summary)
    assert "none, no XGBoost method in this call" in markdown and "nan" not in markdown
    assert "| tgraph+pruning | 2250.000 [2000.000-2500.000] | 1250.000 [1000.000-1500.000] | - | - | 100 |" in markdown


def test_model_summary_reports_the_in_model_guard_at_the_final_checkpoint():
    def decision(kept, tuned_s):
        choice = {"default_tasks": ["bn"] if kept else [], "candidates": ["bn"], "tuned_s": tuned_s,
                  "guarded_s": 1.0, "wall_s": 20.0}
        return {"4": choice, "8": choice}

    results = [_run("xgb", [4.0, 3.0], guard=decision(True, 3.5)), _run("xgb", [4.0, 3.0], seed=1,
                                                                        guard=decision(False, 0.9)),
               _run("random", [4.0, 3.0])]
    summary = summarise_models(results)["m"]["methods"]
    assert summary["random"]["guard"] is None
    guard = summary["xgb"]["guard"]
    assert guard["kept_default"] == 1 and guard["runs"] == 2 and guard["candidates"] == 1
    assert guard["every_task_tuned_s"] == {"median": 2.2, "min": 0.9, "max": 3.5}
    markdown = format_models_markdown(summarise_models(results))
    assert "| xgb | 1 | 1 of 2 runs | 2200.000 [900.000-3500.000] | 20 |" in markdown


def test_runs_timed_on_machines_of_different_speed_are_flagged():
    """Same CPU name, different speed: the untuned build timed 10% apart in two calls, or not
    recorded at all, and the report says the runs are not shown to be comparable."""
    slower = [_run("xgb-warm16", [5.0, 2.0]), _run("tgraph+pruning", [2.0, 1.5], untuned_s=0.022)]
    unrecorded = [_run("xgb-warm16", [5.0, 2.0]), _run("tgraph+pruning", [2.0, 1.5], untuned_s=None)]
    for runs, reason in ((slower, "untuned build timed 20.000-22.000 ms"), (unrecorded, "1 runs recorded no")):
        summary = summarise_models(runs)
        assert not summary["m"]["machine_speed"]["comparable"]
        markdown = format_models_markdown(summary)
        assert "**Machine speed: not shown to be one for every run**" in markdown and reason in markdown
    close = summarise_models([_run("xgb-warm16", [5.0, 2.0]), _run("tgraph", [2.0, 1.5], untuned_s=0.0204)])
    assert close["m"]["machine_speed"] == {"untuned_s": pytest.approx({"median": 0.0202, "min": 0.02, "max": 0.0204}),
                                           "unknown": 0, "comparable": True}


def test_a_built_in_model_has_the_same_weights_on_every_load():
    import tvm_ffi

    from tvm_tgraph.workloads import load_module

    assert tvm_ffi.structural_equal(load_module("model_transformer"), load_module("model_transformer"))
