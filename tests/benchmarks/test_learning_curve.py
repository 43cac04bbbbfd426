"""``benchmarks/learning_curve.py`` on two real ``ranking_eval.py`` runs that differ in ``--train-fraction``."""

import json

import pytest

from benchmark_scripts import load_script, run

ARGS = ["--folds", "op:softmax", "--seeds", "0,1", "--steps", "3", "--ablations", "", "--online-ks", "",
        "--baselines", "xgb"]


def test_the_curve_pairs_tgraph_with_xgboost_at_each_fraction(collected_db, tmp_path, monkeypatch, capsys):
    ranking_eval = load_script("ranking_eval", tmp_path, monkeypatch)
    run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS, "--out", "all")
    run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS, "--train-fraction", "0.5", "--out", "half")
    curve = load_script("learning_curve", tmp_path, monkeypatch)
    assert curve.main(["--runs", "half,all", "--out", "curve"]) == 0
    points = {p["run"]: p for p in json.loads((tmp_path / "curve.json").read_text())["points"]}
    assert points["half"]["train_tasks"] == 1 and points["all"]["train_tasks"] == 2
    assert points["half"]["train_fraction"] == 0.5 and points["all"]["steps"] == 3
    for name in ("half", "all"):
        runs = json.loads((tmp_path / f"{name}.json").read_text())["folds"]["op:softmax"]
        taus = {m: [r["results"]["zero_shot"][m]["mean"]["kendall_tau"] for r in runs] for m in ("tgraph", "xgb")}
        assert points[name]["tau"] == taus
        assert points[name]["lead"] == pytest.approx([t - x for t, x in zip(taus["tgraph"], taus["xgb"])])
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert "| `half` | 0.5 | 3 | 1 |" in (tmp_path / "curve.md").read_text()

    run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS, "--folds", "op:matmul", "--out", "other")
    with pytest.raises(SystemExit) as stop:
        curve.main(["--runs", "half,other"])
    assert stop.value.code == 2
    assert "different database contents or folds" in capsys.readouterr().err

    (tmp_path / "blank.json").write_text("{}")
    with pytest.raises(SystemExit) as stop:
        curve.main(["--runs", "half,blank"])
    assert stop.value.code == 2
    assert "not a ranking_eval.py report" in capsys.readouterr().err
