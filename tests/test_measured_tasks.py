"""measured_tasks: a database read as tasks and as configured graphs (cached)."""

from __future__ import annotations

import shutil

import numpy as np

from tvm_tgraph.database import RECORD_FILE
from tvm_tgraph.measured_tasks import configured_graphs, load_configured_graphs, load_measured_tasks


def test_load_measured_tasks_by_family(collected_db, target):
    tasks = load_measured_tasks(collected_db, target)
    assert sorted(t.family for t in tasks) == ["op:dense", "op:matmul", "op:softmax"]
    assert all(np.isfinite(t.latency).all() and len(t.latency) == len(t.candidates) for t in tasks)
    only = load_measured_tasks(collected_db, target, families="op:softmax")
    rest = load_measured_tasks(collected_db, target, exclude_families="op:softmax")
    assert [t.family for t in only] == ["op:softmax"] and len(rest) == 2
    graphs = configured_graphs(tasks)
    assert all(g.runtime is not None and g.num_configs >= 2 for g in graphs.values())


def test_configured_graphs_are_converted_once_and_cached(collected_db, target, tmp_path):
    copy = tmp_path / "db"
    shutil.copytree(collected_db, copy)
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


def test_tasks_already_loaded_are_converted_without_reading_the_database_again(collected_db, target, tmp_path):
    copy = tmp_path / "db"
    shutil.copytree(collected_db, copy)
    tasks = load_measured_tasks(copy, target)
    (copy / RECORD_FILE).rename(copy / "moved_away.json")   # any read of the records would now fail
    graphs, families = load_configured_graphs(copy, target, cache=False, tasks=tasks)
    assert set(graphs) <= {t.name for t in tasks} and len(graphs) >= 3
    assert families == {t.name: t.family for t in tasks if t.name in graphs}
