"""``benchmarks/serial_schedules.py`` on a really measured database laid out as a ``tgraph compare`` run."""

import json
import shutil

import numpy as np
import pytest

from benchmark_scripts import load_script


def _as_compare_run(collected_db, run):
    database = run / "runs" / "matmul" / "xgb" / "seed0"
    database.mkdir(parents=True)
    for name in ("database_workload.json", "database_tuning_record.json"):
        shutil.copy(collected_db / name, database / name)
    return (database / "database_tuning_record.json").read_text().splitlines()


def test_counts_the_one_thread_schedules_and_the_priors_ranks(collected_db, tmp_path, monkeypatch):
    lines = _as_compare_run(collected_db, tmp_path / "run")
    serial = load_script("serial_schedules", tmp_path, monkeypatch)
    assert serial.main(["--run", str(tmp_path / "run"), "--workload", "matmul", "--random-samples", "8",
                        "--out", "split"]) == 0
    (row,) = json.loads((tmp_path / "split.json").read_text())["measured"]

    parallel = np.array(['["Parallel"' in line for line in lines])
    latency_ms = np.array([np.median(json.loads(line)[1][1]) * 1e3 for line in lines])
    assert row["method"] == "xgb" and row["seed"] == 0 and row["measured"] == len(lines)
    assert row["one_thread"] == int((~parallel).sum()) > 0 and parallel.any()
    assert row["first_one_thread_trial"] == int(np.argmin(parallel)) + 1
    assert row["best_one_thread_ms"] == pytest.approx(latency_ms[~parallel].min())
    assert row["best_parallel_ms"] == pytest.approx(latency_ms[parallel].min())

    prior = json.loads((tmp_path / "split.json").read_text())["prior"]
    ranks = [(prior["mean_rank_one_thread"], prior["one_thread"]),
             (prior["mean_rank_parallel"], prior["samples"] - prior["one_thread"])]
    assert prior["samples"] == 8
    assert sum(rank * count for rank, count in ranks if count) == pytest.approx(sum(range(8)))
    assert "| xgb | 0 |" in (tmp_path / "split.md").read_text()


def test_a_workload_without_runs_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    serial = load_script("serial_schedules", tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as stop:
        serial.main(["--run", str(tmp_path), "--workload", "depthwise_conv2d"])
    assert stop.value.code == 2
    assert "no tuning runs of 'depthwise_conv2d'" in capsys.readouterr().err
