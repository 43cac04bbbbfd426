"""MetaSchedule ``JSONDatabase`` files: validated opening and reading records in order.

Every command that reads or writes tuning records uses MetaSchedule's own format
(``database_workload.json`` + ``database_tuning_record.json``, one JSON value a line,
appended, never rewritten). TVM reads a malformed file with an opaque C++ error;
:func:`open_database` checks the files first and names the file and line at fault.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .errors import RecordError

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


def _check_lines(path: Path, check) -> int:
    count = 0
    with path.open() as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as err:
                raise RecordError(f"{path} line {number} is not valid JSON: {err}") from None
            problem = check(value)
            if problem:
                raise RecordError(f"{path} line {number} is malformed: {problem}")
            count += 1
    return count


def _workload_problem(value) -> str | None:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        return "a workload is [structural hash, encoded module]"
    return None


def _record_problem(value, num_workloads: int) -> str | None:
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int)
            and isinstance(value[1], list) and len(value[1]) >= 2):
        return "a record is [workload index, [trace, run_secs, target, args_info]]"
    if not 0 <= value[0] < num_workloads:
        return f"workload index {value[0]} is not among the {num_workloads} workloads"
    run_secs = value[1][1]
    if run_secs is not None and not (isinstance(run_secs, list) and all(isinstance(s, (int, float)) for s in run_secs)):
        return "run_secs must be a list of numbers or null"
    return None


def validate_database(work_dir: str | Path) -> tuple[int, int]:
    """Check both files of a JSON database.

    Returns
    -------
    (int, int)
        Number of workloads and of records.

    Raises
    ------
    RecordError
        If ``work_dir`` or a file is missing, or a line is malformed (file and line named).
    """
    work_dir = Path(work_dir)
    workload_path, record_path = work_dir / WORKLOAD_FILE, work_dir / RECORD_FILE
    for path in (workload_path, record_path):
        if not path.is_file():
            raise RecordError(f"tuning database file {path} does not exist")
    workloads = _check_lines(workload_path, _workload_problem)
    records = _check_lines(record_path, lambda v: _record_problem(v, workloads))
    return workloads, records


def open_database(work_dir: str | Path, create: bool = False):
    """Open ``work_dir`` as a MetaSchedule ``JSONDatabase``, validating existing files.

    Parameters
    ----------
    create : bool
        Allow a new, empty database (a tuning run's output); reading commands pass False.
    """
    from tvm.s_tir.meta_schedule.database import JSONDatabase

    work_dir = Path(work_dir)
    if create:
        work_dir.mkdir(parents=True, exist_ok=True)
        if (work_dir / WORKLOAD_FILE).is_file() and (work_dir / RECORD_FILE).is_file():
            validate_database(work_dir)
    else:
        validate_database(work_dir)
    return JSONDatabase(work_dir=str(work_dir), allow_missing=create)


def median_latency(run_secs) -> float:
    """Latency of a record: median of ``run_secs`` in seconds (inf for a failed run)."""
    values = [float(s) for s in run_secs or []]
    return float(np.median(values)) if values and max(values) < 1e9 else float("inf")


def latencies_in_trial_order(work_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Median latency and workload index of each record, in the order it was appended.

    Returns
    -------
    (np.ndarray, np.ndarray)
        ``(records,)`` seconds (``inf`` marks a failed candidate) and ``(records,)`` int64
        workload indices (line numbers in the workload file, from 0).
    """
    work_dir = Path(work_dir)
    validate_database(work_dir)
    latencies, workloads = [], []
    with (work_dir / RECORD_FILE).open() as handle:
        for line in handle:
            if line.strip():
                index, record = json.loads(line)
                workloads.append(index)
                latencies.append(median_latency(record[1]))
    return np.asarray(latencies, dtype=np.float64), np.asarray(workloads, dtype=np.int64)
