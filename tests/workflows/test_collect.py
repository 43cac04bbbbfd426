"""workflows.collect: collection writes every task, resumes, and draws new samples on resume."""

from __future__ import annotations

import json

from conftest import COLLECT_PLAN, drop_capture_handlers, tiny_suite

from tvm_tgraph.database import read_database
from tvm_tgraph.workflows.collect import CollectPlan, SMALL_SPACE_DISTINCT, collect, records_per_workload


def test_collect_writes_every_task_and_resumes_without_remeasuring(collected_db, target):
    counts = records_per_workload(collected_db)
    index = json.loads((collected_db / "tasks.json").read_text())
    assert len(counts) == 3 and set(index) == {t.name for t in tiny_suite()}
    for entry in index.values():
        expected = entry["distinct_in_64"] if entry["distinct_in_64"] < SMALL_SPACE_DISTINCT else 16
        assert counts[entry["shash"]] >= expected
    meta = json.loads((collected_db / "collect_meta.json").read_text())
    assert meta["evaluator"]["repeat"] == 10 and meta["seconds"] > 0
    drop_capture_handlers()
    collect(collected_db, tiny_suite(), COLLECT_PLAN, target)               # nothing left to do
    assert records_per_workload(collected_db) == counts


def test_resumed_task_measures_new_samples_not_the_ones_it_has(tmp_path, target):
    """A collection interrupted after 8 random samples and resumed to 16 draws new ones."""
    task = tiny_suite()[:1]
    drop_capture_handlers()
    collect(tmp_path, task, CollectPlan(random_trials=8, evolutionary_trials=0, trials_per_iter=8), target)
    drop_capture_handlers()
    collect(tmp_path, task, CollectPlan(random_trials=16, evolutionary_trials=0, trials_per_iter=8), target)
    traces = [json.dumps(record[0]) for _, record in read_database(tmp_path)[1]]
    assert len(traces) == 16 and len(set(traces)) == 16
