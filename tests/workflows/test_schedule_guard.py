"""The in-model guard when it has nothing to choose: no spatial-only task was tuned."""

from __future__ import annotations

import json

import numpy as np
from conftest import TINY_MLP_BN_SOURCE

from tvm_tgraph.database import open_database
from tvm_tgraph.tvm_env import make_target
from tvm_tgraph.workflows.end_to_end import run_and_time, untuned
from tvm_tgraph.workflows.schedule_guard import GUARD_FILE, compile_guarded, guard
from tvm_tgraph.workloads import load_module


def test_guard_without_tuned_candidates_keeps_the_build_and_stores_an_empty_choice(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(TINY_MLP_BN_SOURCE)
    mod, target = load_module(f"{source}:mlp_bn"), make_target({"kind": "llvm", "num-cores": 2})
    work = tmp_path / "run"
    open_database(work, create=True)  # a run that measured nothing: no task has a record
    base = untuned(mod, target)

    latency, max_abs_diff, decision = guard(mod, target, work, base)

    assert latency > 0 and max_abs_diff < 1e-3
    assert (decision.candidates, decision.default_tasks, decision.guarded_s) == ([], [], None)
    stored = json.loads((work / GUARD_FILE).read_text())
    assert (stored["candidates"], stored["default_tasks"], stored["guarded_s"]) == ([], [], None)
    output, _, _ = run_and_time(compile_guarded(mod, target, work), base.inputs)
    assert np.max(np.abs(output - base.output)) < 1e-3
