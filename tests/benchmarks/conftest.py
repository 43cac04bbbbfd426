"""A real ``ranking_eval.py`` run with kept scores, shared by the scripts that read them."""

import json

import pytest

from benchmark_scripts import load_script, run


@pytest.fixture
def kept_run(collected_db, tmp_path, monkeypatch):
    """A two-fold, two-seed ranking_eval run with online k = 4 and its kept scores under ``tmp_path``."""
    ranking_eval = load_script("ranking_eval", tmp_path, monkeypatch)
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:matmul,op:softmax", "--seeds", "0,1",
        "--steps", "3", "--ablations", "", "--online-ks", "4", "--baselines", "xgb", "--out", "kept",
        "--keep-scores")
    return json.loads((tmp_path / "kept.json").read_text())
