"""``benchmarks/online_finetune.py`` on the kept scores of a real ``ranking_eval.py`` run: its
frozen network and the XGBoost it joins reproduce the run's, task by task, and its
``frozen+xgb`` is their blend as tuning makes it (raw network scores)."""

import json
import lzma

import numpy as np
import pytest

from cost_models.tgraph_cost_model import blend_with_prior
from tvm_tgraph.metrics import kendall_tau

from benchmark_scripts import kept_run, load_script, run  # noqa: F401 - kept_run is a fixture


def test_frozen_and_xgb_rows_reproduce_the_ranking_eval_run(kept_run, collected_db, tmp_path, monkeypatch):
    online_finetune = load_script("online_finetune", tmp_path, monkeypatch)
    run(online_finetune, monkeypatch, "--db", str(collected_db), "--kept", "kept", "--k", "4", "--seeds", "0,1",
        "--steps", "3", "--recipes", "shipped", "--out", "finetune")
    result = json.loads((tmp_path / "finetune.json").read_text())
    assert list(result["folds"]) == list(kept_run["folds"])
    compared = 0
    for number, (fold, kept_seeds) in enumerate(kept_run["folds"].items()):
        kept = json.loads(lzma.open(tmp_path / f"kept_scores_{number}.json.xz").read())
        for ours, theirs, scores in zip(result["folds"][fold]["runs"], kept_seeds, kept["seeds"]):
            online = theirs["results"]["online_k4"]
            assert set(ours["per_task"]) == set(online["xgb"]["per_task"])
            for task, taus in ours["per_task"].items():
                assert {"frozen", "shipped", "frozen+shipped", "frozen+shipped+xgb"} <= set(taus)
                latency = np.asarray(kept["latency"][task])[4:]
                if taus["candidates"] != len(latency):
                    continue        # duplicates dropped: scored on fewer candidates than the run
                # the run kept the frozen network's scores squashed into (0, 1): same order, logit undoes it
                prior = np.asarray(scores["online"]["online_k4"][task]["tgraph-prior"])
                xgb = np.asarray(scores["online"]["online_k4"][task]["xgb"])
                assert taus["frozen"] == pytest.approx(kendall_tau(prior, latency))
                assert taus["xgb"] == pytest.approx(online["xgb"]["per_task"][task]["kendall_tau"])
                raw_blend = blend_with_prior(np.log(prior / (1 - prior)), xgb, 4, online_finetune.BLEND_SAMPLES["xgb"])
                assert taus["frozen+xgb"] == pytest.approx(kendall_tau(raw_blend, latency))
                compared += 1
    assert compared > 0
    assert "| frozen+shipped+xgb |" in (tmp_path / "finetune.md").read_text()


def test_a_missing_kept_run_is_one_line_and_exit_2(collected_db, tmp_path, monkeypatch, capsys):
    online_finetune = load_script("online_finetune", tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as stop:
        run(online_finetune, monkeypatch, "--db", str(collected_db), "--kept", "missing")
    assert stop.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
