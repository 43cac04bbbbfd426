"""``benchmarks/blend_eval.py`` on the kept scores of a real ``ranking_eval.py`` run: the shipped
rules reproduce the run's report, and each fold's b is chosen without that fold."""

import json

import numpy as np
import pytest

from benchmark_scripts import kept_run, load_script, run  # noqa: F401 - kept_run is a fixture


def test_the_shipped_rule_reproduces_the_report_and_b_is_chosen_on_the_other_fold(kept_run, tmp_path, monkeypatch):
    blend_eval = load_script("blend_eval", tmp_path, monkeypatch)
    run(blend_eval, monkeypatch, "--run", "kept", "--setting", "online_k4")
    result = json.loads((tmp_path / "kept_blends.json").read_text())
    shipped = {rule: blend_eval.GRID.index(blend_eval.BLEND_SAMPLES[learner])
               for rule, learner in blend_eval.RULE_LEARNERS.items()}
    one, ensemble = result["priors"]["one network"], result["priors"]["ensemble of 2 seeds"]["fixed"]
    for f, fold in enumerate(result["folds"]):
        for s, seed_run in enumerate(kept_run["folds"][fold]):
            for rule, row in (("fixed", "tgraph-prior+xgb"), ("fine-tuned", "tgraph"),
                              ("fine-tuned+xgb", "tgraph-prior+ft+xgb")):
                assert one[rule]["grid_tau"][s][f][shipped[rule]] == pytest.approx(
                    seed_run["results"]["online_k4"][row]["mean"]["kendall_tau"]), rule
        assert ensemble["grid_tau"][0][f][shipped["fixed"]] == pytest.approx(
            kept_run["seed_ensemble"][fold]["online_k4/tgraph-ensemble of 2 seeds-prior+xgb"]["mean"]["kendall_tau"])
        assert result["xgb"]["fold_tau"][f] == pytest.approx(
            kept_run["folds"][fold][0]["results"]["online_k4"]["xgb"]["mean"]["kendall_tau"])
    for rule in result["priors"]["ensemble of 2 seeds"].values():
        grid = np.asarray(rule["grid_tau"][0])                 # (folds, grid)
        for f in range(2):                                      # two folds: b is the other fold's best
            assert rule["chosen_b"][f] == blend_eval.GRID[int(np.argmax(grid[1 - f]))]
            assert rule["nested_tau"][0][f] == pytest.approx(grid[f][blend_eval.GRID.index(rule["chosen_b"][f])])
    assert (tmp_path / "kept_blends.png").stat().st_size > 0
    assert "| - | XGBoost alone |" in (tmp_path / "kept_blends.md").read_text()


def test_a_prior_that_misranks_the_given_candidates_gets_no_weight(tmp_path, monkeypatch):
    blend_eval = load_script("blend_eval", tmp_path, monkeypatch)
    latency = np.array([1.0, 2.0, 3.0, 4.0])
    assert blend_eval.prior_weight_samples("trusted", 64, -latency, latency) == pytest.approx(64)   # tau 1
    assert blend_eval.prior_weight_samples("trusted", 64, latency, latency) == 0.0                  # tau -1
    assert blend_eval.prior_weight_samples("fixed", 64, latency, latency) == 64


def test_too_few_kept_folds_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    blend_eval = load_script("blend_eval", tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as stop:
        run(blend_eval, monkeypatch, "--run", "missing")
    assert stop.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
