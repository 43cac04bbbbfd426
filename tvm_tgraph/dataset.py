"""Measured tasks read back from a collected JSONDatabase, ready for training and evaluation.

A collected database (``tgraph collect``) holds MetaSchedule's two files plus ``tasks.json``,
which names each workload and its family. :func:`load_measured_tasks` groups the records
by workload, in the order they were measured, and makes each a :class:`MeasuredTask`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .database import median_latency, open_database
from .errors import RecordError


@dataclass
class MeasuredTask:
    """The measured candidates of one task, in measurement order.

    Attributes
    ----------
    name, family : str
        From ``tasks.json`` (family is the unit held out in evaluation).
    context : ms.TuneContext
        The task and target.
    candidates : list of ms.MeasureCandidate
        Successfully measured candidates only.
    latency : np.ndarray
        ``(len(candidates),)`` seconds, median of ``run_secs``.
    """

    name: str
    family: str
    context: object
    candidates: list
    latency: np.ndarray

    def runner_results(self, index=None) -> list:
        """``RunnerResult`` objects carrying the measured latencies (for cost models' ``update``)."""
        from tvm.s_tir.meta_schedule.runner import RunnerResult

        chosen = range(len(self.latency)) if index is None else index
        return [RunnerResult([float(self.latency[i])], None) for i in chosen]


def resolve_db(path: str | Path) -> Path:
    """A database directory, or a ``.tar.xz`` of one (as shipped in ``data/``), extracted
    beside it into ``.<name>.extracted/`` (again whenever the archive changes)."""
    import shutil
    import tarfile

    path = Path(path)
    if not path.name.endswith(".tar.xz"):
        return path
    if not path.is_file():
        raise RecordError(f"database archive {path} does not exist")
    target = path.parent / f".{path.name.removesuffix('.tar.xz')}.extracted"
    marker, stamp = target / ".complete", f"{path.stat().st_size} {path.stat().st_mtime_ns}"
    if not marker.is_file() or marker.read_text() != stamp:
        shutil.rmtree(target, ignore_errors=True)
        with tarfile.open(path, "r:xz") as archive:
            archive.extractall(target, filter="data")
        marker.write_text(stamp)
    members = [p for p in target.iterdir() if p.is_dir()]
    return members[0] if len(members) == 1 and not (target / "tasks.json").is_file() else target


def _families(names: str | list[str] | None) -> set[str] | None:
    if names is None:
        return None
    return set(names.split(",")) if isinstance(names, str) else set(names)


def load_measured_tasks(db_dir: str | Path, target=None, families=None, exclude_families=None,
                        min_candidates: int = 2) -> list[MeasuredTask]:
    """Read a collected database.

    Parameters
    ----------
    db_dir : path
        A directory written by ``tgraph collect``, or a ``.tar.xz`` of one.
    target : tvm.target.Target, optional
        Default: the host llvm target.
    families, exclude_families : str or list of str, optional
        Keep only these families / drop these (comma-separated string or list).
    min_candidates : int
        Drop tasks with fewer successfully measured candidates (nothing to rank).

    Raises
    ------
    RecordError
        Missing or malformed database files, or a missing ``tasks.json``.
    """
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    from .tvm_env import make_target, register_light_tensor_intrin

    register_light_tensor_intrin()
    db_dir = resolve_db(db_dir)
    database = open_database(db_dir)
    index_path = db_dir / "tasks.json"
    if not index_path.is_file():
        raise RecordError(f"{index_path} does not exist: {db_dir} was not written by `tgraph collect`")
    try:
        index = {entry["shash"]: entry for entry in json.loads(index_path.read_text()).values()}
    except (json.JSONDecodeError, KeyError, AttributeError) as err:
        raise RecordError(f"{index_path} is malformed: {err}") from None
    keep, drop = _families(families), _families(exclude_families)
    target = target or make_target()

    grouped: dict[str, list] = {}
    for record in database.get_all_tuning_records():
        shash = str(tvm_ffi.structural_hash(record.workload.mod))
        grouped.setdefault(shash, []).append(record)
    tasks = []
    for shash, records in grouped.items():
        entry = index.get(shash)
        if entry is None:
            raise RecordError(f"workload {shash} of {db_dir} is not named in tasks.json")
        if (keep is not None and entry["family"] not in keep) or (drop and entry["family"] in drop):
            continue
        latency = np.asarray([median_latency(r.run_secs) for r in records])
        ok = np.flatnonzero(np.isfinite(latency))
        if len(ok) < min_candidates:
            continue
        context = ms.TuneContext(mod=records[0].workload.mod, target=target, task_name=entry["name"])
        candidates = [records[i].as_measure_candidate() for i in ok]
        tasks.append(MeasuredTask(entry["name"], entry["family"], context, candidates, latency[ok]))
    return tasks


def configured_graphs(tasks: list[MeasuredTask], converter=None) -> dict:
    """Convert measured tasks to configured graphs (duplicate configurations dropped).

    Returns
    -------
    dict
        Task name -> :class:`~tvm_tgraph.graph.ConfiguredGraph` with runtimes.
    """
    from .convert.tir import TirConverter
    from .task_store import TaskStore

    converter = converter or TirConverter()
    store = TaskStore()
    for task in tasks:
        store.add(task.name, converter.convert(task.context, task.candidates, runtime=task.latency))
    return {name: store.graph(name) for name in store.keys()}
