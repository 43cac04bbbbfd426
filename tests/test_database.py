"""Reading and appending MetaSchedule JSON databases: measurement order, torn last lines."""

from __future__ import annotations

import json
import logging

import pytest
from conftest import drop_capture_handlers

from tvm_tgraph.database import (
    RECORD_FILE, WORKLOAD_FILE, latencies_in_trial_order, median_latency, open_database, read_database,
    validate_database, write_database_prefix,
)
from tvm_tgraph.errors import RecordError
from tvm_tgraph.workflows.tuning import tune
from tvm_tgraph.workloads import WORKLOADS, as_ir_module


def _record(latency: float) -> str:
    return json.dumps([0, [[[], []], [latency, latency], None, None]])


def _database(path, lines: list[str], tail: str = ""):
    path.mkdir(exist_ok=True)
    (path / WORKLOAD_FILE).write_text(json.dumps(["123", "AAAA"]) + "\n")
    (path / RECORD_FILE).write_text("".join(line + "\n" for line in lines) + tail)
    return path


def test_records_are_read_in_the_order_they_were_appended(tmp_path):
    _database(tmp_path, [_record(0.3), _record(0.1), _record(0.2)])
    latency, workload = latencies_in_trial_order(tmp_path)
    assert latency.tolist() == [0.3, 0.1, 0.2] and workload.tolist() == [0, 0, 0]


def test_torn_last_line_is_skipped_with_one_warning_and_the_file_is_not_touched(tmp_path, caplog):
    _database(tmp_path, [_record(0.3), _record(0.1)], tail='[0, [[["GetSBlock", [], ["ma')
    before = (tmp_path / RECORD_FILE).read_bytes()
    with caplog.at_level(logging.WARNING, logger="tvm_tgraph.database"):
        assert validate_database(tmp_path) == (1, 2)
        assert latencies_in_trial_order(tmp_path)[0].tolist() == [0.3, 0.1]
    torn = [r for r in caplog.records if "torn" in r.getMessage()]
    assert len(torn) == 1 and f"{RECORD_FILE} line 3" in torn[0].getMessage()
    assert (tmp_path / RECORD_FILE).read_bytes() == before


def test_malformed_line_in_the_middle_stays_an_error(tmp_path):
    _database(tmp_path, [_record(0.3), '[0, [[["GetSBlock"', _record(0.1)])
    with pytest.raises(RecordError, match="line 2 is not valid JSON"):
        read_database(tmp_path)


@pytest.fixture
def tuned(tmp_path, target):
    """A real database: 4 random candidates of a small matmul, measured."""
    drop_capture_handlers()
    tune(as_ir_module(WORKLOADS["matmul_128"]()), "random", 4, tmp_path, target=target, trials_per_iter=4,
         progress=False)
    return tmp_path


def test_appending_after_a_crash_sets_the_torn_line_aside_and_goes_on(tuned, target):
    """A command that appends (tune, collect) keeps every complete record, moves the
    fragment to <file>.torn and goes on appending on a line of its own."""
    records = tuned / RECORD_FILE
    complete = records.read_text()
    fragment = complete.splitlines()[-1][:57]
    records.write_text(complete + fragment)          # killed while appending a fifth record
    drop_capture_handlers()
    tune(as_ir_module(WORKLOADS["matmul_128"]()), "random", 4, tuned, target=target, trials_per_iter=4,
         progress=False, seed=1)
    assert records.read_text().startswith(complete)
    assert (tuned / (RECORD_FILE + ".torn")).read_text() == fragment + "\n"
    assert validate_database(tuned) == (1, 8)


def test_a_complete_last_record_without_its_newline_is_kept(tuned):
    records = tuned / RECORD_FILE
    records.write_text(records.read_text().rstrip("\n"))
    open_database(tuned, create=True)
    assert validate_database(tuned) == (1, 4) and records.read_text().endswith("\n")
    assert not (tuned / (RECORD_FILE + ".torn")).exists()


def test_work_dir_that_cannot_be_created_is_refused_before_anything_runs(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecordError, match="cannot write the tuning database"):
        open_database(blocker / "run", create=True)


def test_opening_for_reading_a_database_with_a_torn_line_gives_its_valid_records(tuned):
    records = tuned / RECORD_FILE
    torn = records.read_text() + records.read_text().splitlines()[-1][:40]
    records.write_text(torn)
    database = open_database(tuned)
    assert len(database.get_all_tuning_records()) == 4 and records.read_text() == torn


def test_a_prefix_is_the_database_as_it_stood_after_that_many_trials(tuned, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    assert write_database_prefix(tuned, prefix, 3) == 3
    latency, _ = latencies_in_trial_order(tuned)
    assert latencies_in_trial_order(prefix)[0].tolist() == latency[:3].tolist()
    best = min(open_database(prefix).get_all_tuning_records(), key=lambda r: median_latency(r.run_secs))
    assert median_latency(best.run_secs) == latency[:3].min()    # TVM reads it back, same records
    assert write_database_prefix(tuned, prefix, 99) == 4         # asking for more keeps them all
