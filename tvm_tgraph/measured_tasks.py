"""Measured tasks read back from a collected JSONDatabase, ready for training and evaluation.

A collected database (``tgraph collect``) holds MetaSchedule's two files plus ``tasks.json``,
which names each workload and its family. :func:`load_measured_tasks` groups the records
by workload and CPU, in the order they were measured, and makes each a :class:`MeasuredTask`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .convert.tir import FEATURE_SCHEMA, TirConverter
from .database import RECORD_FILE, WORKLOAD_FILE, median_latency, read_database, record_cpu
from .errors import RecordError
from .files import atomic_write_bytes
from .task_store import TaskStore, graph_arrays, graph_from_arrays
from .tvm_env import make_target, register_light_tensor_intrin


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
    cpu : str
        The CPU the candidates were measured on (LLVM's name, from the records' target).
    """

    name: str
    family: str
    context: object
    candidates: list
    latency: np.ndarray
    cpu: str = ""

    def runner_results(self, index=None) -> list:
        """``RunnerResult`` objects carrying the measured latencies (for cost models' ``update``)."""
        from tvm.s_tir.meta_schedule.runner import RunnerResult

        chosen = range(len(self.latency)) if index is None else index
        return [RunnerResult([float(self.latency[i])], None) for i in chosen]


def resolve_db(path: str | Path) -> Path:
    """A database directory, or a ``.tar.xz`` of one (as shipped in ``data/``), extracted
    beside it into ``.<name>.extracted/`` (again whenever the archive changes)."""
    import lzma
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
        try:
            with tarfile.open(path, "r:xz") as archive:
                archive.extractall(target, filter="data")
        except (tarfile.TarError, lzma.LZMAError, EOFError) as err:
            shutil.rmtree(target, ignore_errors=True)
            raise RecordError(f"database archive {path} is not a readable .tar.xz: {err}") from None
        marker.write_text(stamp)
    members = [p for p in target.iterdir() if p.is_dir()]
    return members[0] if len(members) == 1 and not (target / "tasks.json").is_file() else target


def database_sha256(db_dir: str | Path) -> str:
    """SHA-256 (hex) of a database's content: its two files and ``tasks.json``, where present.

    ``db_dir`` is a database directory or a ``.tar.xz`` of one (extracted, see
    :func:`resolve_db`): the digest is of the content, not of the archive's bytes.
    """
    import hashlib

    db_dir = resolve_db(db_dir)
    digest = hashlib.sha256()
    for name in (WORKLOAD_FILE, RECORD_FILE, "tasks.json"):
        if (db_dir / name).is_file():
            digest.update(name.encode() + (db_dir / name).read_bytes())
    return digest.hexdigest()


def _families(names: str | list[str] | None) -> set[str] | None:
    if names is None:
        return None
    return set(names.split(",")) if isinstance(names, str) else set(names)


def _family_filter(db_dir: Path, index: dict | None, families, exclude_families):
    """A predicate on a task's family: in ``families`` (if given) and not in
    ``exclude_families``. Families come from ``tasks.json``: asking for them of a database
    without one (``index`` None) raises ``RecordError``."""
    keep, drop = _families(families), _families(exclude_families)
    if index is None and (keep or drop):
        raise RecordError(f"{db_dir} has no tasks.json (it was not written by `tgraph collect`): "
                          "families are unknown, so --families / --holdout cannot be used with it")
    return lambda family: (keep is None or family in keep) and not (drop and family in drop)


def load_measured_tasks(db_dir: str | Path, target=None, families=None, exclude_families=None,
                        min_candidates: int = 2) -> list[MeasuredTask]:
    """Read a tuning database: one :class:`MeasuredTask` per workload and CPU.

    Candidates keep the order they were measured in (the order of the record file;
    MetaSchedule's ``get_all_tuning_records`` would sort them by latency, which leaks the
    answer into anything that splits or chunks them). Timings from two CPUs are never
    pooled: a workload measured on several (the records' target ``mcpu``) becomes one task
    per CPU, named ``name@cpu``.

    Parameters
    ----------
    db_dir : path
        A database directory or a ``.tar.xz`` of one: written by ``tgraph collect`` (with
        ``tasks.json`` naming each workload and its family) or a plain MetaSchedule
        ``JSONDatabase`` (``tgraph tune``, ``ms.tune_tir``), whose tasks are named after
        the PrimFunc and a short structural hash, with no family.
    target : tvm.target.Target, optional
        Default: the host llvm target.
    families, exclude_families : str or list of str, optional
        Keep only these families / drop these (comma-separated string or list); these
        need ``tasks.json``.
    min_candidates : int
        Drop tasks with fewer successfully measured candidates (nothing to rank).

    Raises
    ------
    RecordError
        Missing or malformed database files or ``tasks.json``, or families asked of a
        database without ``tasks.json``.
    """
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    register_light_tensor_intrin()
    db_dir = resolve_db(db_dir)
    workload_lines, record_lines = read_database(db_dir)
    index = task_index(db_dir)
    wanted = _family_filter(db_dir, index, families, exclude_families)
    target = target or make_target()

    workloads = [ms.database.Workload.from_json(line) for line in workload_lines]
    grouped: dict[tuple[int, str], list] = {}
    for workload_index, record in record_lines:
        grouped.setdefault((workload_index, record_cpu(record)), []).append(record)
    cpus_of = Counter(workload_index for workload_index, _ in grouped)
    tasks = []
    for (workload_index, cpu), records in grouped.items():
        workload = workloads[workload_index]
        shash = str(tvm_ffi.structural_hash(workload.mod))
        if index is None:
            name, family = f"{_func_name(workload.mod)}_{shash[-8:]}", ""
        elif shash in index:
            name, family = index[shash]["name"], index[shash]["family"]
        else:
            raise RecordError(f"workload {shash} of {db_dir} is not named in tasks.json")
        if not wanted(family):
            continue
        latency = np.asarray([median_latency(r[1]) for r in records])
        ok = np.flatnonzero(np.isfinite(latency))
        if len(ok) < min_candidates:
            continue
        if cpus_of[workload_index] > 1:
            name = f"{name}@{cpu}"
        context = ms.TuneContext(mod=workload.mod, target=target, task_name=name)
        candidates = [ms.database.TuningRecord.from_json(records[i], workload).as_measure_candidate() for i in ok]
        tasks.append(MeasuredTask(name, family, context, candidates, latency[ok], cpu))
    return tasks


def task_index(db_dir: Path) -> dict | None:
    """``tasks.json`` by structural hash, or None for a plain MetaSchedule database."""
    index_path = db_dir / "tasks.json"
    if not index_path.is_file():
        return None
    try:
        return {entry["shash"]: entry for entry in json.loads(index_path.read_text()).values()}
    except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as err:
        raise RecordError(f"{index_path} is malformed: {err}") from None


def _func_name(mod) -> str:
    """The name of a task module's PrimFunc (its global symbol if it has one)."""
    for gvar, func in mod.functions.items():
        symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
        return str(symbol or gvar.name_hint)
    return "task"


def configured_graphs(tasks: list[MeasuredTask], converter=None) -> dict:
    """Convert measured tasks to configured graphs (duplicate configurations dropped).

    Returns
    -------
    dict
        Task name -> :class:`~tvm_tgraph.graph.ConfiguredGraph` with runtimes.
    """
    converter = converter or TirConverter()
    store = TaskStore()
    for task in tasks:
        store.add(task.name, converter.convert(task.context, task.candidates, runtime=task.latency))
    return {name: store.graph(name) for name in store.keys()}


def load_configured_graphs(db_dir: str | Path, target=None, families=None, exclude_families=None,
                           cache: bool = True, tasks: list[MeasuredTask] | None = None) -> tuple[dict, dict[str, str]]:
    """The configured graphs of every task of a database, converted once and cached.

    The first call converts every task (:func:`load_measured_tasks`, or ``tasks`` if the
    caller has already loaded them all with it, then :func:`configured_graphs`) and writes
    the arrays to
    ``<database>/.tgraph_cache/<key>.npz`` (no pickles; written atomically), ``key`` being the
    SHA-256 of the converter's feature schema version with :func:`database_sha256`. Later
    calls on the same database read that file instead of converting.

    Returns
    -------
    (dict, dict)
        Task name -> :class:`~tvm_tgraph.graph.ConfiguredGraph` (with runtimes), and task
        name -> family, for the tasks the family filters keep.
    """
    import hashlib

    db_dir = resolve_db(db_dir)
    key = hashlib.sha256((FEATURE_SCHEMA.version + database_sha256(db_dir)).encode()).hexdigest()
    path = db_dir / ".tgraph_cache" / f"{key[:32]}.npz"
    if cache and path.is_file():
        graphs, family_of = _read_graphs(path)
    else:
        tasks = tasks if tasks is not None else load_measured_tasks(db_dir, target)
        graphs, family_of = configured_graphs(tasks), {t.name: t.family for t in tasks}
        if cache:
            _write_graphs(path, graphs, family_of)
    wanted = _family_filter(db_dir, task_index(db_dir), families, exclude_families)
    chosen = [n for n in graphs if wanted(family_of[n])]
    return {n: graphs[n] for n in chosen}, {n: family_of[n] for n in chosen}


def _write_graphs(path: Path, graphs: dict, family_of: dict[str, str]) -> None:
    import io

    arrays = graph_arrays(list(graphs.values()))
    arrays["index"] = np.frombuffer(json.dumps([[n, family_of[n]] for n in graphs]).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def _read_graphs(path: Path) -> tuple[dict, dict[str, str]]:
    with np.load(path, allow_pickle=False) as arrays:
        index = json.loads(arrays["index"].tobytes())
        graphs = {name: graph_from_arrays(arrays, i, name) for i, (name, _) in enumerate(index)}
    return graphs, {name: family for name, family in index}
