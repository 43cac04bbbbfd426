"""``benchmarks/ranking_eval.py`` on a really measured database: a stopped run resumes, kept scores reproduce the report."""

import json
import lzma

import numpy as np
import pytest

from cost_models.tgraph_cost_model import BLEND_SAMPLES, blend_with_prior, unsquash
from tvm_tgraph.metrics import kendall_tau, standardise

from benchmark_scripts import BENCHMARKS, load_script, run

ARGS = ["--folds", "op:matmul,op:softmax", "--seeds", "0", "--steps", "3", "--ablations", "",
        "--online-ks", "", "--baselines", "", "--out", "resumed"]


@pytest.fixture
def ranking_eval(tmp_path, monkeypatch):
    """The benchmark as a module writing its results under ``tmp_path``."""
    return load_script("ranking_eval", tmp_path, monkeypatch)


def test_resume_keeps_finished_folds_and_runs_the_others(ranking_eval, collected_db, tmp_path, monkeypatch):
    run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS)
    report_path = tmp_path / "resumed.json"
    report = json.loads(report_path.read_text())
    assert list(report["folds"]) == ["op:matmul", "op:softmax"]
    # as if the run had stopped after its first fold, with a mark on what it finished
    report["folds"].pop("op:softmax")
    report["folds"]["op:matmul"][0]["history"] = "kept"
    report_path.write_text(json.dumps(report))

    run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS, "--resume")
    resumed = json.loads(report_path.read_text())
    assert resumed["folds"]["op:matmul"][0]["history"] == "kept"
    assert resumed["folds"]["op:softmax"][0]["history"] != "kept"
    assert set(resumed["fold_cpus"]) == {"op:matmul", "op:softmax"}
    assert "--resume" not in resumed["command"]
    assert "## held out: op:softmax" in (tmp_path / "resumed.md").read_text()


def test_resume_refuses_a_report_of_other_arguments(ranking_eval, collected_db, tmp_path, monkeypatch, capsys):
    run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS)
    with pytest.raises(SystemExit) as stop:
        run(ranking_eval, monkeypatch, "--db", str(collected_db), *ARGS, "--steps", "4", "--resume")
    assert stop.value.code == 2
    assert "--resume" in capsys.readouterr().err


def test_the_seed_ensemble_is_blended_with_xgboost_online(ranking_eval, collected_db, tmp_path, monkeypatch):
    """Two runs of one seed: their ensemble's prior is that seed's, so blended with XGBoost it
    ranks exactly as the single run's ``tgraph-prior+xgb``."""
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--seeds", "0,0",
        "--steps", "3", "--ablations", "", "--online-ks", "4", "--baselines", "xgb", "--out", "blended")
    report = json.loads((tmp_path / "blended.json").read_text())
    ensemble = report["seed_ensemble"]["op:softmax"]["online_k4/tgraph-ensemble of 2 seeds-prior+xgb"]
    assert ensemble["setting"] == "online_k4"
    single = report["folds"]["op:softmax"][0]["results"]["online_k4"]["tgraph-prior+xgb"]
    assert ensemble["per_task"] and set(ensemble["per_task"]) == set(single["per_task"])
    for task, metrics in ensemble["per_task"].items():
        assert metrics["kendall_tau"] == pytest.approx(single["per_task"][task]["kendall_tau"])
    assert "online_scores" not in report["folds"]["op:softmax"][0]
    assert "| online_k4 | tgraph-ensemble of 2 seeds-prior+xgb |" in (tmp_path / "blended.md").read_text()


def test_kept_scores_reproduce_the_reported_metrics(ranking_eval, collected_db, tmp_path, monkeypatch):
    """``--keep-scores``: the online blend and the zero-shot tau recomputed from the kept file
    equal the report's, so later blends can be scored from it alone."""
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--seeds", "0",
        "--steps", "3", "--ablations", "", "--online-ks", "4", "--baselines", "xgb", "--out", "kept",
        "--keep-scores")
    report = json.loads((tmp_path / "kept.json").read_text())["folds"]["op:softmax"][0]["results"]
    kept = json.loads(lzma.decompress((tmp_path / "kept_scores_0.json.xz").read_bytes()))
    assert kept["fold"] == "op:softmax" and [s["seed"] for s in kept["seeds"]] == [0]
    online = kept["seeds"][0]["online"]["online_k4"]
    assert online and set(online) == set(report["online_k4"]["tgraph-prior+xgb"]["per_task"])
    for task, scores in online.items():
        latency = np.asarray(kept["latency"][task])
        prior, fine_tuned = unsquash(scores["tgraph-prior"]), unsquash(scores["tgraph-ft"])
        blended = blend_with_prior(prior, np.asarray(scores["xgb"]), 4, BLEND_SAMPLES["xgb"])
        assert kendall_tau(blended, latency[4:]) == pytest.approx(
            report["online_k4"]["tgraph-prior+xgb"]["per_task"][task]["kendall_tau"])
        both = (standardise(fine_tuned) + standardise(scores["xgb"])) / 2
        assert kendall_tau(blend_with_prior(prior, both, 4, BLEND_SAMPLES["network+xgb"]), latency[4:]) == pytest.approx(
            report["online_k4"]["tgraph-prior+ft+xgb"]["per_task"][task]["kendall_tau"])
        zero_shot = kept["seeds"][0]["zero_shot"][task]["tgraph"]
        assert len(zero_shot) == len(latency)
        assert kendall_tau(zero_shot, latency) == pytest.approx(
            report["zero_shot"]["tgraph"]["per_task"][task]["kendall_tau"])


def test_a_training_fraction_is_drawn_blind_and_nested(ranking_eval):
    """The subset depends on nothing but the tasks' count and order (not their measurements),
    keeps their order, and a smaller fraction's tasks are in every larger one's."""
    tasks = [f"task{i}" for i in range(40)]
    quarter, half = ranking_eval.training_subset(tasks, 0.25), ranking_eval.training_subset(tasks, 0.5)
    assert len(quarter) == 10 and len(half) == 20
    assert set(quarter) < set(half) and half == sorted(half, key=tasks.index)
    assert ranking_eval.training_subset(tasks, 1.0) == tasks
    assert ranking_eval.training_subset(tasks[:3], 0.1) != []


def test_every_model_trains_on_the_fraction(ranking_eval, collected_db, tmp_path, monkeypatch):
    """``--train-fraction 0.5`` on a fold of two training tasks: TGraph's card and the report
    both name one training task, the same one."""
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--seeds", "0",
        "--steps", "3", "--ablations", "", "--online-ks", "", "--baselines", "xgb", "--out", "half",
        "--train-fraction", "0.5")
    report = json.loads((tmp_path / "half.json").read_text())
    assert report["train_fraction"] == 0.5
    assert "trained on 1 tasks" in (tmp_path / "half.md").read_text()
    from tvm_tgraph.measured_tasks import load_configured_graphs

    graphs, families = load_configured_graphs(collected_db)
    training = [name for name in graphs if families[name] != "op:softmax"]
    kept = ranking_eval.training_subset(training, 0.5)
    path, _ = ranking_eval.train_fold(graphs, families, {"op:softmax"}, "weight_average", 3, 0, only=set(kept))
    card = ranking_eval.load_checkpoint(path)[1]["training_data"]
    assert len(kept) == 1 and card["train_tasks"] + card["val_tasks"] == kept
    with pytest.raises(SystemExit) as stop:
        run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--train-fraction", "0")
    assert stop.value.code == 2


def test_without_early_stopping_every_training_task_is_trained_on_every_step(ranking_eval, collected_db,
                                                                              tmp_path, monkeypatch):
    """``--val-fraction 0``, as the shipped checkpoint is trained: no task is held out for
    validation, training runs all ``--steps`` steps, and the report says so."""
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--seeds", "0",
        "--steps", "3", "--ablations", "", "--online-ks", "", "--baselines", "", "--out", "val0",
        "--val-fraction", "0")
    report = json.loads((tmp_path / "val0.json").read_text())
    assert report["val_fraction"] == 0.0
    history = report["folds"]["op:softmax"][0]["history"]
    assert history["steps"] == 3 and history["best_val_kendall_tau"] is None
    assert "3 steps on all training tasks, no early stopping" in (tmp_path / "val0.md").read_text()
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from ranking_runs import by_fold_and_seed, summary

    lines = summary("val0", report, by_fold_and_seed(report, "tgraph"), with_ensembles=False)
    assert "  no early stopping: every run trained 3 steps" in lines
    assert not any("best validation steps" in line for line in lines)
    from tvm_tgraph.measured_tasks import load_configured_graphs

    graphs, families = load_configured_graphs(collected_db)
    training = sorted(name for name in graphs if families[name] != "op:softmax")
    stopping, _ = ranking_eval.train_fold(graphs, families, {"op:softmax"}, "weight_average", 3, 0)
    assert ranking_eval.load_checkpoint(stopping)[1]["training_data"]["val_tasks"] != []
    path, _ = ranking_eval.train_fold(graphs, families, {"op:softmax"}, "weight_average", 3, 0, val_fraction=0.0)
    card = ranking_eval.load_checkpoint(path)[1]["training_data"]
    assert card["val_tasks"] == [] and sorted(card["train_tasks"]) == training
    with pytest.raises(SystemExit) as stop:
        run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--val-fraction", "1")
    assert stop.value.code == 2


def test_ablations_pair_with_the_recipe_and_the_distilled_one_learns_from_its_seeds(ranking_eval, collected_db,
                                                                                     tmp_path, monkeypatch, capsys):
    """An ablation is scored as the recipe is: the recipe itself as an ablation ranks every task
    exactly as the recipe's row. ``weight_average_distil`` is trained and scored on every seed
    after the recipe's seeds, which are its teacher; refused as the recipe (nothing to distil)."""
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:softmax", "--seeds", "0,1",
        "--steps", "3", "--ablations", "weight_average,weight_average_distil", "--online-ks", "", "--baselines", "",
        "--out", "distil", "--val-fraction", "0")
    report = json.loads((tmp_path / "distil.json").read_text())
    runs = report["folds"]["op:softmax"]
    assert [set(r["ablations"]) for r in runs] == [{"weight_average", "weight_average_distil"}] * 2
    for r in runs:
        recipe, again = r["results"]["zero_shot"]["tgraph"]["per_task"], r["ablations"]["weight_average"]["per_task"]
        assert recipe and {t: m["kendall_tau"] for t, m in again.items()} == {
            t: m["kendall_tau"] for t, m in recipe.items()}
        assert r["ablations"]["weight_average_distil"]["history"]["steps"] == 3
    assert "tgraph-weight_average_distil" in (tmp_path / "distil.md").read_text()
    with pytest.raises(SystemExit) as stop:
        run(ranking_eval, monkeypatch, "--db", str(collected_db), "--recipe", "weight_average_distil")
    assert stop.value.code == 2 and "use it as an ablation" in capsys.readouterr().err
