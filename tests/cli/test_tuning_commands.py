"""The tgraph command: a real tune, and clear errors for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import TINY_MLP_BN_SOURCE, drop_capture_handlers

from tvm_tgraph.cli import main
from tvm_tgraph.database import RECORD_FILE, WORKLOAD_FILE, open_database, validate_database
from tvm_tgraph.errors import RecordError
from tvm_tgraph.model_zoo import extract_tir_tasks
from tvm_tgraph.tvm_env import default_target_config, make_target
from tvm_tgraph.workflows.end_to_end import best_records_except, run_and_time, untuned
from tvm_tgraph.workflows.schedule_guard import GUARD_FILE, compile_guarded
from tvm_tgraph.workloads import load_module


def test_tune_writes_a_database_and_reports_the_best(tmp_path, capsys):
    drop_capture_handlers()
    work = tmp_path / "run"
    code = main(["tune", "matmul_128", "--cost-model", "xgb", "--trials", "8", "--trials-per-iter", "8",
                 "--work-dir", str(work), "--target", '{"kind": "llvm", "num-cores": 2}'])
    out = capsys.readouterr().out
    assert code == 0
    assert "best latency" in out and "of 8" in out
    assert validate_database(work) == (1, 8)


def test_tune_of_a_user_file(tmp_path, capsys):
    source = tmp_path / "ops.py"
    source.write_text(
        "from tvm_tgraph.workloads import softmax\n"
        "def small():\n    return softmax(16, 64)\n"
    )
    drop_capture_handlers()
    code = main(["tune", f"{source}:small", "--cost-model", "random", "--trials", "4",
                 "--trials-per-iter", "4", "--work-dir", str(tmp_path / "run")])
    assert code == 0 and "best latency" in capsys.readouterr().out


def test_module_path_that_does_not_exist(tmp_path, capsys):
    code = main(["tune", str(tmp_path / "missing.py") + ":mod", "--work-dir", str(tmp_path / "w")])
    assert code == 2
    assert "missing.py does not exist" in capsys.readouterr().err


def test_unknown_workload_and_bad_target(tmp_path, capsys):
    assert main(["tune", "no_such_workload", "--work-dir", str(tmp_path)]) == 2
    assert "unknown workload 'no_such_workload'" in capsys.readouterr().err
    assert main(["tune", "matmul", "--work-dir", str(tmp_path), "--target", "llvm -mcpu=x"]) == 2
    assert "must be a JSON object" in capsys.readouterr().err


def _database(tmp_path, records: list[str]):
    (tmp_path / WORKLOAD_FILE).write_text(json.dumps(["123", "AAAA"]) + "\n")
    (tmp_path / RECORD_FILE).write_text("\n".join(records) + "\n")
    return tmp_path


def test_malformed_record_file_is_named_with_its_line(tmp_path):
    good = json.dumps([0, [[[], []], [0.001, 0.002], None, None]])
    _database(tmp_path, [good, "{not json", good])
    with pytest.raises(RecordError, match=r"database_tuning_record.json line 2 is not valid JSON"):
        open_database(tmp_path)
    _database(tmp_path, [good, json.dumps([5, [[], [0.1], None, None]])])
    with pytest.raises(RecordError, match="line 2 is malformed: workload index 5"):
        validate_database(tmp_path)
    _database(tmp_path, [json.dumps([0, [[], "fast", None, None]])])
    with pytest.raises(RecordError, match="run_secs"):
        validate_database(tmp_path)


def test_missing_database(tmp_path):
    with pytest.raises(RecordError, match="does not exist"):
        open_database(tmp_path / "nowhere")


def test_whole_model_tune_reports_end_to_end_latency_and_the_guards_choice(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(TINY_MLP_BN_SOURCE)
    work = tmp_path / "run"
    drop_capture_handlers()
    # several tasks: tune_relax clones the pruning search into each task's context
    code = main(["tune", f"{source}:mlp_bn", "--cost-model", "xgb-warm16", "--strategy", "pruning",
                 "--trials", "12", "--trials-per-iter", "4",
                 "--work-dir", str(work), "--target", '{"kind": "llvm", "num-cores": 2}'])
    out = capsys.readouterr().out
    assert code == 0, out
    line = next(line for line in out.splitlines() if line.startswith("end to end"))
    # the build the guard chose computes what the default build computes
    assert float(line.rsplit("at most ", 1)[1]) < 1e-3
    # the batch norm (no reduction) is the guard's one candidate; it keeps the faster build
    decision = json.loads((work / GUARD_FILE).read_text())
    assert decision["candidates"] == ["fused_batch_norm_relu"]
    assert decision["default_tasks"] == (decision["candidates"] if decision["guarded_s"] < decision["tuned_s"] else [])
    assert "in-model guard: 1 element-wise tasks" in out

    # compile_guarded builds what the guard chose; compile_tuned leaves named tasks to the default
    mod, target = load_module(f"{source}:mlp_bn"), make_target({"kind": "llvm", "num-cores": 2})
    tasks = extract_tir_tasks(mod, target)
    base = untuned(mod, target)
    output, _, _ = run_and_time(compile_guarded(mod, target, work), base.inputs)
    assert np.max(np.abs(output - base.output)) < 1e-3
    kept = best_records_except(open_database(work), tasks, {"fused_batch_norm_relu"})
    assert [kept.has_workload(task_mod) for _, task_mod, _ in tasks] == [
        name != "fused_batch_norm_relu" for name, _, _ in tasks]


@pytest.mark.parametrize("body, message", [
    ("NAME = 3\n", "must be an IRModule, a PrimFunc or a function returning one"),
    ("def NAME():\n    return None\n", "must be an IRModule, a PrimFunc or a function returning one"),
    ("raise ImportError('no such helper')\n", "failed to import: ImportError: no such helper"),
    ("def NAME():\n    raise RuntimeError('bad shape')\n", "calling NAME() failed: RuntimeError: bad shape"),
])
def test_user_module_that_is_not_a_program_is_one_line_and_exit_2(tmp_path, capsys, body, message):
    source = tmp_path / "ops.py"
    source.write_text(body)
    assert main(["tune", f"{source}:NAME", "--work-dir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_symbolic_shapes_are_refused_before_tuning(tmp_path, capsys):
    source = tmp_path / "ops.py"
    source.write_text(
        "from tvm import te, tirx, topi\n"
        "n = tirx.Var('n', 'int32')\n"
        "a = te.placeholder((n, 64), name='A')\n"
        "b = te.placeholder((64, 64), name='B')\n"
        "dynamic = te.create_prim_func([a, b, topi.nn.matmul(a, b)])\n"
    )
    work = tmp_path / "w"
    assert main(["tune", f"{source}:dynamic", "--cost-model", "xgb", "--work-dir", str(work)]) == 2
    assert "symbolic shape" in capsys.readouterr().err
    assert not work.exists(), "refused before anything was written"


def test_work_dir_under_a_regular_file_is_refused_before_measuring(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["tune", "matmul_128", "--cost-model", "xgb", "--work-dir", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the tuning database" in err and err.count("\n") == 1


def test_llvm_target_without_num_cores_gets_the_hosts():
    target = make_target('{"kind": "llvm"}')
    assert int(target.attrs["num-cores"]) == default_target_config()["num-cores"]
    assert str(target.attrs["mcpu"]) == default_target_config()["mcpu"]


def test_named_checkpoint_that_does_not_load_is_exit_2(tmp_path, capsys):
    work = tmp_path / "w"
    assert main(["tune", "matmul_128", "--checkpoint", str(tmp_path / "typo.safetensors"),
                 "--work-dir", str(work)]) == 2
    assert "typo.safetensors does not exist" in capsys.readouterr().err
    assert not work.exists()


def test_archive_of_random_bytes_is_one_line_and_exit_2(tmp_path, capsys):
    archive = tmp_path / "db.tar.xz"
    archive.write_bytes(bytes(range(256)) * 8)
    assert main(["train", "--db", str(archive), "--out", str(tmp_path / "m.safetensors")]) == 2
    err = capsys.readouterr().err
    assert "is not a readable .tar.xz" in err and err.count("\n") == 1


def test_a_program_metaschedule_rejects_is_one_line_and_exit_2(tmp_path, capsys):
    """A function-level T.alloc_buffer without a root block: MetaSchedule's own checks fail."""
    source = tmp_path / "kernel.py"
    source.write_text(
        "from tvm.script import tirx as T\n"
        "@T.prim_func(check_well_formed=False)\n"
        "def rootless(A: T.Buffer((16, 16), 'float32'), B: T.Buffer((16, 16), 'float32')):\n"
        "    D = T.alloc_buffer((16, 16), 'float32')\n"
        "    for i, j in T.grid(16, 16):\n"
        "        with T.sblock('copy'):\n"
        "            vi, vj = T.axis.remap('SS', [i, j])\n"
        "            D[vi, vj] = A[vi, vj]\n"
        "    for i, j in T.grid(16, 16):\n"
        "        with T.sblock('out'):\n"
        "            vi, vj = T.axis.remap('SS', [i, j])\n"
        "            B[vi, vj] = D[vi, vj] * T.float32(2)\n"
    )
    drop_capture_handlers()
    assert main(["tune", f"{source}:rootless", "--cost-model", "xgb", "--trials", "4",
                 "--work-dir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert "MetaSchedule cannot tune" in err and err.count("\n") == 1
