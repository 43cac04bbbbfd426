"""MetaSchedule ``JSONDatabase`` files: validated opening and reading records in order.

Every command that reads or writes tuning records uses MetaSchedule's own format
(``database_workload.json`` + ``database_tuning_record.json``, one JSON value a line,
appended, never rewritten). TVM reads a malformed file with an opaque C++ error;
:func:`open_database` checks the files first and names the file and line at fault. A last
line cut short by a crash during an append is expected, not an error: readers skip it with
a warning, and a command that appends sets it aside first.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np

from .errors import RecordError
from .files import atomic_write_bytes

logger = logging.getLogger("tvm_tgraph.database")

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


def _parsed_lines(path: Path, check) -> list:
    """The JSON values of ``path``'s lines, each checked by ``check``.

    A last line without its newline that is not valid JSON is a record torn by a crash
    during an append: it is left out, with one warning naming the file and line. Any other
    malformed line is an error.
    """
    data = path.read_bytes()
    lines = data.split(b"\n")
    values = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            if number == len(lines):   # no newline after it: torn by a crash mid-append
                _warn_torn(path, number)
                break
            raise RecordError(f"{path} line {number} is not valid JSON: {err}") from None
        problem = check(value)
        if problem:
            raise RecordError(f"{path} line {number} is malformed: {problem}")
        values.append(value)
    return values


_warned_torn: set[tuple[str, int]] = set()


def _warn_torn(path: Path, number: int) -> None:
    if (str(path), number) not in _warned_torn:
        _warned_torn.add((str(path), number))
        logger.warning("%s line %d is a record torn by an interrupted write: reading the %d lines before it",
                       path, number, number - 1)


def torn_tail(path: Path, block: int = 1 << 16) -> int:
    """Bytes after the last newline of ``path`` (a torn last line), 0 if none or no file.

    Reads the file backwards from its end, a block at a time, until it meets a newline:
    a database of any size costs about one block.
    """
    if not path.is_file():
        return 0
    size = path.stat().st_size
    with path.open("rb") as handle:
        end = size
        while end > 0:
            start = max(0, end - block)
            handle.seek(start)
            newline = handle.read(end - start).rfind(b"\n")
            if newline >= 0:
                return size - (start + newline + 1)
            end = start
    return size


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


def read_database(work_dir: str | Path) -> tuple[list, list]:
    """Both files of a JSON database, checked, in the order they were appended.

    Returns
    -------
    (list, list)
        The workload lines (``[structural hash, encoded module]``) and the record lines
        (``[workload index, [trace, run_secs, target, args_info]]``) as JSON values, records
        in measurement order (MetaSchedule's ``get_all_tuning_records`` sorts them by run
        time). A torn last line is left out with a warning.

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
    workloads = _parsed_lines(workload_path, _workload_problem)
    records = _parsed_lines(record_path, lambda v: _record_problem(v, len(workloads)))
    return workloads, records


def validate_database(work_dir: str | Path) -> tuple[int, int]:
    """Check both files of a JSON database (see :func:`read_database`).

    Returns
    -------
    (int, int)
        Number of workloads and of records.
    """
    workloads, records = read_database(work_dir)
    return len(workloads), len(records)


def _set_torn_tail_aside(path: Path) -> None:
    """Before appending to ``path``: move a torn last line to ``<path>.torn`` (appended
    there) and cut it from ``path``, so that the next record starts on a line of its own.
    Only the bytes of the unfinished line are moved; every complete line stays as it is."""
    torn = torn_tail(path)
    if not torn:
        return
    size = path.stat().st_size
    with path.open("rb") as handle:
        handle.seek(size - torn)
        fragment = handle.read()
    try:
        json.loads(fragment)
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    else:   # a whole record that only lacks its newline: complete it
        with path.open("ab") as handle:
            handle.write(b"\n")
        return
    with path.with_name(path.name + ".torn").open("ab") as aside:
        aside.write(fragment + b"\n")
        aside.flush()
        os.fsync(aside.fileno())
    os.truncate(path, size - torn)
    logger.warning("%s ended in a record torn by an interrupted write (%d bytes): moved to %s.torn",
                   path, torn, path.name)


def open_database(work_dir: str | Path, create: bool = False):
    """Open ``work_dir`` as a MetaSchedule database, validating existing files.

    Parameters
    ----------
    create : bool
        Open for appending (a tuning run's output): the directory is created if needed
        (``RecordError`` if it cannot be) and a torn last line is set aside first (see
        :func:`_set_torn_tail_aside`). Reading commands pass False and get the valid
        records (a torn last line is left out, with a warning) without changing any file.
    """
    from tvm.s_tir.meta_schedule.database import JSONDatabase

    work_dir = Path(work_dir)
    paths = (work_dir / WORKLOAD_FILE, work_dir / RECORD_FILE)
    if not create:
        workload_lines, record_lines = read_database(work_dir)
        if any(torn_tail(path) for path in paths):
            return _memory_database(workload_lines, record_lines)
        return JSONDatabase(work_dir=str(work_dir), allow_missing=False)
    try:
        work_dir.mkdir(parents=True, exist_ok=True)
        probe = work_dir / f".write-probe-{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise RecordError(f"cannot write the tuning database in {work_dir}: {err.strerror or err}") from None
    if all(path.is_file() for path in paths):
        validate_database(work_dir)
        for path in paths:
            _set_torn_tail_aside(path)
    return JSONDatabase(work_dir=str(work_dir), allow_missing=True)


def _memory_database(workload_lines: list, record_lines: list):
    """A ``MemoryDatabase`` holding the records :func:`read_database` read (read-only use)."""
    from tvm.s_tir.meta_schedule.database import MemoryDatabase, TuningRecord, Workload

    workloads = [Workload.from_json(line) for line in workload_lines]
    database = MemoryDatabase()
    for index, record in record_lines:
        database.commit_tuning_record(TuningRecord.from_json(record, workloads[index]))
    return database


def write_database_prefix(work_dir: str | Path, out_dir: str | Path, records: int) -> int:
    """Write to ``out_dir`` a JSON database holding ``work_dir``'s workloads and its first
    ``records`` tuning records in measurement order: the database as it stood after that
    many trials. Each file is replaced atomically.

    Returns
    -------
    int
        The records written (fewer than ``records`` if the database holds fewer).
    """
    workloads, lines = read_database(work_dir)
    kept = lines[:records]
    for name, values in ((WORKLOAD_FILE, workloads), (RECORD_FILE, kept)):
        text = "".join(json.dumps(value, separators=(",", ":")) + "\n" for value in values)
        atomic_write_bytes(Path(out_dir) / name, text.encode())
    return len(kept)


def median_latency(run_secs) -> float:
    """Latency of a record: median of ``run_secs`` in seconds; ``inf`` marks a failed
    candidate (no run times, or MetaSchedule's 1e10 placeholder for a failed build or run).
    The one definition of a failed measurement."""
    values = [float(s) for s in run_secs or []]
    return float(np.median(values)) if values and max(values) < 1e9 else float("inf")


def result_latency(result) -> float:
    """:func:`median_latency` of a MetaSchedule ``RunnerResult`` (``inf`` if it has an error)."""
    return float("inf") if result.error_msg else median_latency(result.run_secs)


def latencies_in_trial_order(work_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Median latency and workload index of each record, in the order it was appended.

    Returns
    -------
    (np.ndarray, np.ndarray)
        ``(records,)`` seconds (``inf`` marks a failed candidate) and ``(records,)`` int64
        workload indices (line numbers in the workload file, from 0).
    """
    return record_latencies(read_database(work_dir)[1])


def record_latencies(record_lines: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`latencies_in_trial_order` of record lines :func:`read_database` read.

    Shapes: ``(records,)`` float64 seconds and ``(records,)`` int64 workload indices.
    """
    latencies = [median_latency(record[1]) for _, record in record_lines]
    return np.asarray(latencies, dtype=np.float64), np.asarray([i for i, _ in record_lines], dtype=np.int64)


def record_cpu(record: list) -> str:
    """The CPU a record was measured on: its target's ``mcpu`` ("" if it has none)."""
    target = record[2] if len(record) > 2 else None
    return str(target.get("mcpu", "")) if isinstance(target, dict) else ""
