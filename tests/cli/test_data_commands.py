"""tgraph train / eval (cli.data) on collected and on plain MetaSchedule databases."""

from __future__ import annotations

import json

import pytest

from conftest import drop_capture_handlers

from cost_models.tgraph_cost_model import DEFAULT_CHECKPOINT
from tvm_tgraph import workloads
from tvm_tgraph.cli import build_parser, main
from tvm_tgraph.cli.data import forks_option
from tvm_tgraph.database import RECORD_FILE, WORKLOAD_FILE
from tvm_tgraph.measured_tasks import database_sha256
from tvm_tgraph.pretrain import PretrainConfig
from tvm_tgraph.workflows.tuning import tune


def test_train_command_defaults_are_the_pretraining_defaults():
    """`tgraph train` keeps its own literals (the CLI imports torch lazily): they must not drift."""
    args = build_parser().parse_args(["train", "--db", "d", "--out", "o.safetensors"])
    for name in ("steps", "eval_every", "patience", "val_fraction"):
        assert getattr(args, name) == getattr(PretrainConfig, name), name


def test_train_command_defaults_are_the_shipped_recipe():
    """`tgraph train --val-fraction 0` with no other option trains what the shipped checkpoint's card records."""
    args = build_parser().parse_args(["train", "--db", "d", "--out", "o.safetensors", "--val-fraction", "0"])
    training = json.loads(DEFAULT_CHECKPOINT.with_suffix(".json").read_text())["training"]
    for name in ("steps", "eval_every", "patience", "val_fraction"):
        assert getattr(args, name) == training[name], name
    for name, value in training["network"].items():
        assert getattr(args, name) == value, name
    for name in ("loss", "lr_schedule", "weight_average"):
        assert getattr(args, name) == training["train"][name], name
    assert forks_option(args) == training["forks"]


def test_forks_default_to_one_with_early_stopping_and_are_refused_with_it(tmp_path, capsys):
    assert forks_option(build_parser().parse_args(["train", "--db", "d", "--out", "o.safetensors"])) == 1
    assert main(["train", "--db", str(tmp_path), "--out", str(tmp_path / "o.safetensors"), "--forks", "2"]) == 2
    assert "--forks 2 needs --val-fraction 0" in capsys.readouterr().err


def test_train_and_eval_commands(collected_db, tmp_path, capsys):
    ckpt = tmp_path / "t.safetensors"
    assert main(["train", "--db", str(collected_db), "--out", str(ckpt), "--holdout", "op:softmax",
                 "--steps", "8", "--eval-every", "4", "--hidden", "16", "--value-bins", "24"]) == 0
    card = json.loads(ckpt.with_suffix(".json").read_text())
    assert card["model_config"]["value_bins"] == 24
    assert card["training_data"]["held_out_families"] == "op:softmax"
    assert card["training_data"]["db_sha256"] == database_sha256(collected_db)   # which data, exactly
    assert card["feature_schema"] and card["command"].startswith("tgraph train")
    report = tmp_path / "eval.json"
    assert main(["eval", "--db", str(collected_db), "--families", "op:softmax", "--checkpoint", str(ckpt),
                 "--train-db", str(collected_db), "--baselines", "xgb", "--online-k", "4",
                 "--json", str(report), "--png", str(tmp_path / "scatter.png")]) == 0
    out = capsys.readouterr().out
    assert "zero_shot" in out and "online_k4" in out
    result = json.loads(report.read_text())
    assert set(result["results"]["zero_shot"]) == {"tgraph", "xgb"}
    online = result["results"]["online_k4"]
    derived = ("tgraph-ft", "xgb-cold", "tgraph-prior+xgb", "tgraph-prior+xgb-cold", "tgraph-prior+ft+xgb",
               "tgraph-prior+ft+xgb-cold")
    assert set(online) == {"tgraph", "xgb", *derived}
    for name in derived:
        assert set(online[name]["per_task"]) == set(online["xgb"]["per_task"]) != set()
    for task, kept in result["online_scores"]["online_k4"].items():   # for seed ensembles' blends
        assert len(kept["xgb"]) == len(kept["tgraph-prior"]) == len(kept["tgraph-ft"]) == len(result["latency"][task]) - 4
    assert result["settings"]["eval_families"] == ["op:softmax"]
    assert (tmp_path / "scatter.png").stat().st_size > 1000


def test_eval_on_a_plain_metaschedule_database(collected_db, tmp_path, capsys, target):
    """Users evaluate on their own tuning logs: no tasks.json, tasks named after the workload."""
    plain = tmp_path / "my_tuning_log"
    drop_capture_handlers()
    tune(workloads.as_ir_module(workloads.matmul(32, 48, 64)), "random", 8, plain, target=target,
         trials_per_iter=8, progress=False)
    assert not (plain / "tasks.json").exists()
    report = tmp_path / "eval.json"
    code = main(["eval", "--db", str(plain), "--checkpoint", str(DEFAULT_CHECKPOINT), "--train-db", str(collected_db),
                 "--baselines", "xgb", "--online-k", "4", "--json", str(report)])
    assert code == 0, capsys.readouterr().err
    [name] = json.loads(report.read_text())["settings"]["eval_tasks"]
    assert name.startswith("main_") and len(name) == len("main_") + 8
    assert main(["eval", "--db", str(plain), "--families", "op:matmul", "--checkpoint", str(DEFAULT_CHECKPOINT),
                 "--train-db", str(collected_db)]) == 2
    assert "no tasks.json" in capsys.readouterr().err


def test_a_collect_database_with_zero_records_is_an_error(tmp_path, capsys):
    for name in (WORKLOAD_FILE, RECORD_FILE):
        (tmp_path / name).write_text("")
    (tmp_path / "tasks.json").write_text("{}")
    assert main(["train", "--db", str(tmp_path), "--out", str(tmp_path / "m.safetensors")]) == 2
    assert "holds 0 task(s)" in capsys.readouterr().err


def test_train_distils_a_teacher_and_refuses_a_missing_one(collected_db, tmp_path, capsys):
    teacher = tmp_path / "teacher.safetensors"
    assert main(["train", "--db", str(collected_db), "--out", str(teacher), "--val-fraction", "0", "--steps", "4",
                 "--hidden", "16", "--seed", "0,1"]) == 0
    student = tmp_path / "student.safetensors"
    assert main(["train", "--db", str(collected_db), "--out", str(student), "--val-fraction", "0", "--steps", "4",
                 "--hidden", "16", "--teacher", str(teacher), "--distil-weight", "0.25"]) == 0
    card = json.loads(student.with_suffix(".json").read_text())
    assert card["training"]["train"]["distil_weight"] == 0.25
    teacher_card = json.loads(teacher.with_suffix(".json").read_text())
    assert card["distilled_from"]["weights_sha256"] == teacher_card["weights_sha256"]
    capsys.readouterr()
    assert main(["train", "--db", str(collected_db), "--out", str(tmp_path / "m.safetensors"),
                 "--teacher", str(tmp_path / "missing.safetensors")]) == 2
    err = capsys.readouterr().err
    assert "missing.safetensors does not exist" in err and err.count("\n") == 1


@pytest.mark.parametrize("bins, message", [("-3", "-3 is negative"), ("many", "'many' is not an integer")])
def test_a_bad_number_of_value_bins_is_refused_before_training(tmp_path, capsys, bins, message):
    with pytest.raises(SystemExit) as refused:
        main(["train", "--db", str(tmp_path), "--out", str(tmp_path / "m.safetensors"), "--value-bins", bins])
    assert refused.value.code == 2 and f"argument --value-bins: {message}" in capsys.readouterr().err


def test_mlp_baseline_on_too_few_training_tasks_is_one_line_and_exit_2(collected_db, tmp_path, capsys):
    code = main(["eval", "--db", str(collected_db), "--families", "op:softmax", "--checkpoint", str(DEFAULT_CHECKPOINT),
                 "--train-db", str(collected_db), "--baselines", "mlp"])
    err = capsys.readouterr().err
    assert code == 2 and "the MLP baseline cannot train on 2 task(s)" in err and err.count("\n") == 1
