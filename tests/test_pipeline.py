"""collect -> load -> train -> evaluate on a tiny real database (real builds and runs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import drop_capture_handlers

from tvm_tgraph import workloads
from tvm_tgraph.workflows.collect import SMALL_SPACE_DISTINCT, CollectPlan, CollectTask, collect, records_per_workload

PLAN = CollectPlan(random_trials=10, evolutionary_trials=6, trials_per_iter=8)


def tiny_suite():
    def task(family, func, **kwargs):
        return CollectTask(f"{family}/{kwargs}", family, "test", workloads.as_ir_module(func(**kwargs)))

    return [task("op:matmul", workloads.matmul, n=32, m=32, k=64),
            task("op:dense", workloads.dense_bias_relu, batch=16, in_dim=64, out_dim=32),
            task("op:softmax", workloads.softmax, rows=16, cols=64)]


@pytest.fixture(scope="module")
def database(tmp_path_factory, target):
    out = tmp_path_factory.mktemp("collected")
    drop_capture_handlers()
    collect(out, tiny_suite(), PLAN, target)
    return out


def test_collect_writes_every_task_and_resumes_without_remeasuring(database, target):
    counts = records_per_workload(database)
    index = json.loads((database / "tasks.json").read_text())
    assert len(counts) == 3 and set(index) == {t.name for t in tiny_suite()}
    for entry in index.values():
        expected = entry["distinct_in_64"] if entry["distinct_in_64"] < SMALL_SPACE_DISTINCT else 16
        assert counts[entry["shash"]] >= expected
    meta = json.loads((database / "collect_meta.json").read_text())
    assert meta["evaluator"]["repeat"] == 10 and meta["seconds"] > 0
    drop_capture_handlers()
    collect(database, tiny_suite(), PLAN, target)               # nothing left to do
    assert records_per_workload(database) == counts


def test_load_measured_tasks_by_family(database, target):
    from tvm_tgraph.measured_tasks import configured_graphs, load_measured_tasks

    tasks = load_measured_tasks(database, target)
    assert sorted(t.family for t in tasks) == ["op:dense", "op:matmul", "op:softmax"]
    assert all(np.isfinite(t.latency).all() and len(t.latency) == len(t.candidates) for t in tasks)
    only = load_measured_tasks(database, target, families="op:softmax")
    rest = load_measured_tasks(database, target, exclude_families="op:softmax")
    assert [t.family for t in only] == ["op:softmax"] and len(rest) == 2
    graphs = configured_graphs(tasks)
    assert all(g.runtime is not None and g.num_configs >= 2 for g in graphs.values())


def _train(database, target, seed):
    from tvm_tgraph.convert.tir import FEATURE_SCHEMA
    from tvm_tgraph.nn import TGraphConfig
    from tvm_tgraph.measured_tasks import configured_graphs, load_measured_tasks
    from tvm_tgraph.pretrain import PretrainConfig, pretrain, split_by_task

    graphs = configured_graphs(load_measured_tasks(database, target, exclude_families="op:softmax"))
    train, val = split_by_task(list(graphs), 0.5, seed)
    assert not set(train) & set(val) and train and val
    config = PretrainConfig(steps=12, eval_every=4, seed=seed, network={"hidden": 16, "num_blocks": 1})
    return pretrain({n: graphs[n] for n in train}, {n: graphs[n] for n in val},
                    TGraphConfig.from_schema(FEATURE_SCHEMA, **config.network), config, progress=False)


def test_training_is_deterministic_given_the_seed(database, target):
    (a, history), (b, _) = _train(database, target, 3), _train(database, target, 3)
    assert len(history["evaluations"]) == 3 and history["best_step"] in (4, 8, 12)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name


def test_train_and_eval_commands(database, tmp_path, capsys):
    from tvm_tgraph.cli import main

    ckpt = tmp_path / "t.safetensors"
    assert main(["train", "--db", str(database), "--out", str(ckpt), "--holdout", "op:softmax",
                 "--steps", "8", "--eval-every", "4", "--hidden", "16"]) == 0
    card = json.loads(ckpt.with_suffix(".json").read_text())
    assert card["training_data"]["held_out_families"] == "op:softmax"
    assert card["feature_schema"] and card["command"].startswith("tgraph train")
    report = tmp_path / "eval.json"
    assert main(["eval", "--db", str(database), "--families", "op:softmax", "--checkpoint", str(ckpt),
                 "--train-db", str(database), "--baselines", "xgb", "--online-k", "4",
                 "--json", str(report), "--png", str(tmp_path / "scatter.png")]) == 0
    out = capsys.readouterr().out
    assert "zero_shot" in out and "online_k4" in out
    result = json.loads(report.read_text())
    assert set(result["results"]["zero_shot"]) == {"tgraph", "xgb"}
    assert result["settings"]["eval_families"] == ["op:softmax"]
    assert (tmp_path / "scatter.png").stat().st_size > 1000


def test_resumed_task_measures_new_samples_not_the_ones_it_has(tmp_path, target):
    """A collection interrupted after 8 random samples and resumed to 16 draws new ones."""
    from tvm_tgraph.database import read_database

    task = tiny_suite()[:1]
    drop_capture_handlers()
    collect(tmp_path, task, CollectPlan(random_trials=8, evolutionary_trials=0, trials_per_iter=8), target)
    drop_capture_handlers()
    collect(tmp_path, task, CollectPlan(random_trials=16, evolutionary_trials=0, trials_per_iter=8), target)
    traces = [json.dumps(record[0]) for _, record in read_database(tmp_path)[1]]
    assert len(traces) == 16 and len(set(traces)) == 16


def test_eval_on_a_plain_metaschedule_database(database, tmp_path, capsys, target):
    """Users evaluate on their own tuning logs: no tasks.json, tasks named after the workload."""
    from cost_models.tgraph_cost_model import DEFAULT_CHECKPOINT
    from tvm_tgraph.cli import main
    from tvm_tgraph.workflows.tuning import tune

    plain = tmp_path / "my_tuning_log"
    drop_capture_handlers()
    tune(workloads.as_ir_module(workloads.matmul(32, 48, 64)), "random", 8, plain, target=target,
         trials_per_iter=8, progress=False)
    assert not (plain / "tasks.json").exists()
    report = tmp_path / "eval.json"
    code = main(["eval", "--db", str(plain), "--checkpoint", str(DEFAULT_CHECKPOINT), "--train-db", str(database),
                 "--baselines", "xgb", "--online-k", "4", "--json", str(report)])
    assert code == 0, capsys.readouterr().err
    [name] = json.loads(report.read_text())["settings"]["eval_tasks"]
    assert name.startswith("main_") and len(name) == len("main_") + 8
    assert main(["eval", "--db", str(plain), "--families", "op:matmul", "--checkpoint", str(DEFAULT_CHECKPOINT),
                 "--train-db", str(database)]) == 2
    assert "no tasks.json" in capsys.readouterr().err


def test_a_collect_database_with_zero_records_is_an_error(tmp_path, capsys):
    from tvm_tgraph.cli import main
    from tvm_tgraph.database import RECORD_FILE, WORKLOAD_FILE

    for name in (WORKLOAD_FILE, RECORD_FILE):
        (tmp_path / name).write_text("")
    (tmp_path / "tasks.json").write_text("{}")
    assert main(["train", "--db", str(tmp_path), "--out", str(tmp_path / "m.safetensors")]) == 2
    assert "holds 0 task(s)" in capsys.readouterr().err


def test_configured_graphs_are_converted_once_and_cached(database, target, tmp_path):
    import shutil

    from tvm_tgraph.database import RECORD_FILE
    from tvm_tgraph.measured_tasks import load_configured_graphs

    copy = tmp_path / "db"
    shutil.copytree(database, copy)
    graphs, families = load_configured_graphs(copy, target)
    [cached] = list((copy / ".tgraph_cache").glob("*.npz"))
    again, _ = load_configured_graphs(copy, target)
    assert set(again) == set(graphs) and set(families.values()) == {"op:dense", "op:matmul", "op:softmax"}
    for name, graph in graphs.items():
        np.testing.assert_array_equal(again[name].config_feat, graph.config_feat)
        np.testing.assert_array_equal(again[name].runtime, graph.runtime)
    only, _ = load_configured_graphs(copy, target, families="op:softmax")
    assert list(only) == [n for n, f in families.items() if f == "op:softmax"]
    # a database that grew is converted again, under a new key
    records = copy / RECORD_FILE
    records.write_text(records.read_text() + records.read_text().splitlines()[0] + "\n")
    load_configured_graphs(copy, target)
    assert len(list((copy / ".tgraph_cache").glob("*.npz"))) == 2 and cached.is_file()


def test_mlp_baseline_on_too_few_training_tasks_is_one_line_and_exit_2(database, tmp_path, capsys):
    from cost_models.tgraph_cost_model import DEFAULT_CHECKPOINT
    from tvm_tgraph.cli import main

    code = main(["eval", "--db", str(database), "--families", "op:softmax", "--checkpoint", str(DEFAULT_CHECKPOINT),
                 "--train-db", str(database), "--baselines", "mlp"])
    err = capsys.readouterr().err
    assert code == 2 and "the MLP baseline cannot train on 2 task(s)" in err and err.count("\n") == 1
