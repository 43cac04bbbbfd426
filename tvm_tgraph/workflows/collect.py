"""Collecting measured candidates: a workload suite and a resumable collector.

For each task the collector measures random samples of the design space (MetaSchedule's
``ReplayTrace``) and then candidates of an evolutionary search guided by
``XGBModel(num_warmup_samples=16)``, appending every measured candidate to one
MetaSchedule ``JSONDatabase``. ``tasks.json`` beside it names each workload (task name,
family, source); ``collect_meta.json`` records the target, runner settings and time taken.

Tasks are collected one after the other (random samples, then the search, then the next
task), in an order that cycles through the families, so that a partial collection covers
every family and a task is rarely split between two machines. Re-running skips what the
database already holds (records are counted per workload) and draws the random samples of a
resumed task from a seed that depends on how many it has, so that it measures new samples
rather than the ones it already has; an interrupted run loses at most the batch in flight.

The CPU of every run is recorded (LLVM's name and the name the kernel reports) in
``collect_meta.json``; every record's target carries the LLVM name (``mcpu``).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .. import workloads
from ..database import RECORD_FILE, WORKLOAD_FILE, open_database, read_database, record_cpu, record_latencies
from ..errors import RecordError
from ..files import atomic_write_bytes
from ..measure import FastBuilder, make_runner
from ..model_zoo import SUITE_SIZES, extract_tir_tasks, relax_model
from ..testing import random_candidates
from ..tvm_env import host_cpu_names
from .tuning import tune

#: The collector's evaluator: one run per repeat, ten repeats, cache flushed, latency is
#: the median of the repeats. Measured at 8-11 runs/s with a Spearman of 0.97-0.98 between
#: two passes (the tuning evaluator of docs/architecture.md runs ~4/s).
COLLECT_EVALUATOR = {"number": 1, "repeat": 10, "min_repeat_ms": 0, "enable_cpu_cache_flush": True}

#: Random draws that size a design space, and the distinct schedules among them below
#: which the space counts as small: it then gets one trial per distinct schedule.
SPACE_PROBE_DRAWS = 64
SMALL_SPACE_DISTINCT = 32


@dataclass
class CollectTask:
    """One tuning task of the suite."""

    name: str      # unique, "<family>/<task>"
    family: str    # model family or operator family; the unit held out in evaluation
    source: str    # how it was made
    mod: object    # tvm.IRModule (one PrimFunc)

    def info(self, shash: str) -> dict:
        return {"name": self.name, "family": self.family, "source": self.source, "shash": shash}


# Operator families at varied shapes: (workload function, kwargs). The first shapes of each
# family are the original suite's; the rest were added with the model zoo.
OPERATOR_SHAPES = {
    "matmul": [dict(n=128, m=128, k=128), dict(n=256, m=512, k=128), dict(n=64, m=1024, k=256),
               dict(n=512, m=64, k=512), dict(n=384, m=384, k=64), dict(n=32, m=512, k=2048),
               dict(n=1024, m=128, k=128)],
    "dense_bias_relu": [dict(batch=32, in_dim=512, out_dim=256), dict(batch=128, in_dim=256, out_dim=1024),
                        dict(batch=1, in_dim=1024, out_dim=1024), dict(batch=256, in_dim=64, out_dim=128)],
    "batch_matmul": [dict(batch=4, n=64, m=64, k=128), dict(batch=16, n=32, m=128, k=32),
                     dict(batch=12, n=128, m=128, k=64), dict(batch=2, n=256, m=32, k=256)],
    "conv2d_nchw": [dict(c=64, hw=28, k=64, kernel=3), dict(c=32, hw=56, k=32, kernel=1),
                    dict(c=128, hw=14, k=128, kernel=3, stride=2), dict(c=3, hw=112, k=32, kernel=7, stride=2),
                    dict(c=256, hw=7, k=256, kernel=3), dict(n=4, c=16, hw=32, k=32, kernel=3)],
    "conv2d_nhwc": [dict(c=64, hw=28, k=64, kernel=3), dict(c=32, hw=56, k=64, kernel=3, stride=2),
                    dict(c=128, hw=14, k=256, kernel=1), dict(c=16, hw=64, k=16, kernel=5)],
    "depthwise_conv2d": [dict(c=64, hw=56, kernel=3), dict(c=128, hw=28, kernel=3, stride=2),
                         dict(c=256, hw=14, kernel=5), dict(c=32, hw=112, kernel=3), dict(c=96, hw=28, kernel=7)],
    "max_pool2d": [dict(c=64, hw=56, kernel=3, stride=2), dict(c=128, hw=28, kernel=2, stride=2),
                   dict(n=4, c=32, hw=32, kernel=3, stride=1)],
    "softmax": [dict(rows=256, cols=256), dict(rows=64, cols=1024), dict(rows=1024, cols=64),
                dict(rows=2048, cols=128)],
    "layer_norm": [dict(rows=256, cols=256), dict(rows=64, cols=1024), dict(rows=512, cols=768),
                   dict(rows=4096, cols=64)],
    "fused_elementwise": [dict(rows=512, cols=512)],
}


def operator_tasks() -> list[CollectTask]:
    """Operator families at the shapes of :data:`OPERATOR_SHAPES`."""
    tasks = []
    for family, shapes in OPERATOR_SHAPES.items():
        for kwargs in shapes:
            label = "_".join(f"{k}{v}" for k, v in kwargs.items())
            mod = workloads.as_ir_module(getattr(workloads, family)(**kwargs))
            tasks.append(CollectTask(f"op:{family}/{label}", f"op:{family}", f"workloads.{family}({kwargs})", mod))
    return tasks


def model_tasks(target) -> list[CollectTask]:
    """The fused TIR tasks of the models of :mod:`tvm_tgraph.model_zoo`, at each of their
    :data:`~tvm_tgraph.model_zoo.SUITE_SIZES` (tasks of the default size are named
    ``family/task``, others ``family[size]/task``)."""
    tasks = []
    for family, sizes in SUITE_SIZES.items():
        for size in sizes:
            label = "_".join(f"{k}{v}" for k, v in size.items())
            prefix = f"{family}[{label}]" if label else family
            source = f"model_zoo.{family}({', '.join(f'{k}={v}' for k, v in size.items())}) via torch.export"
            for name, mod, _weight in extract_tir_tasks(relax_model(family, **size), target):
                tasks.append(CollectTask(f"{prefix}/{name}", family, source, mod))
    return tasks


def interleave_families(tasks: list[CollectTask]) -> list[CollectTask]:
    """Reorder ``tasks`` to cycle through the families (one task of each in turn), keeping
    the order within a family, so that any prefix of a collection covers many families."""
    by_family: dict[str, list[CollectTask]] = {}
    for task in tasks:
        by_family.setdefault(task.family, []).append(task)
    queues = list(by_family.values())
    order = []
    for i in range(max(map(len, queues), default=0)):
        order += [queue[i] for queue in queues if i < len(queue)]
    return order


def default_suite(target) -> list[CollectTask]:
    """Operator families and model tasks, de-duplicated by structural hash (first wins),
    interleaved across families (:func:`interleave_families`)."""
    import tvm_ffi

    seen, suite = set(), []
    for task in operator_tasks() + model_tasks(target):
        key = tvm_ffi.structural_hash(task.mod)
        if key not in seen:
            seen.add(key)
            suite.append(task)
    return interleave_families(suite)


def records_per_workload(work_dir: Path) -> dict[str, int]:
    """Structural hash (as the database writes it) -> number of records, for a database."""
    if not (work_dir / RECORD_FILE).is_file():
        return {}
    workloads, records = read_database(work_dir)
    counts: dict[str, int] = {}
    for index, _ in records:
        shash = workloads[index][0]
        counts[shash] = counts.get(shash, 0) + 1
    return counts


def distinct_candidates(task_mod, target, samples: int = SPACE_PROBE_DRAWS) -> int:
    """How many distinct schedules ``samples`` random draws of the design space give
    (a design space with no choices yields 1; it is not worth many measurements)."""
    _, candidates = random_candidates(task_mod, target, samples)
    return len({str(c.sch.trace) for c in candidates})


@dataclass
class CollectPlan:
    """Per task: ``random_trials`` random samples, then evolutionary search up to
    ``random_trials + evolutionary_trials`` candidates, ``trials_per_iter`` per round."""

    random_trials: int = 64
    evolutionary_trials: int = 96
    trials_per_iter: int = 48
    seed: int = 0


def collect(out_dir: str | Path, tasks: list[CollectTask], plan: CollectPlan, target) -> dict:
    """Measure the tasks' candidates into ``out_dir`` (a JSONDatabase), resuming.

    Task by task, phase 1 tops the task up to ``random_trials`` candidates with random
    samples, phase 2 up to ``random_trials + evolutionary_trials`` with evolutionary search.
    A task whose design space has few distinct schedules (fewer than
    ``SMALL_SPACE_DISTINCT`` in ``SPACE_PROBE_DRAWS`` draws, probed when its turn comes)
    gets as many random trials as it has schedules and no search. Each run's plan and CPU
    are recorded in the metadata.

    Returns
    -------
    dict
        The collection's metadata (also written to ``collect_meta.json``).
    """
    import tvm_ffi
    from tqdm import tqdm
    from tvm.s_tir import meta_schedule as ms

    out_dir = Path(out_dir)
    open_database(out_dir, create=True)
    index_path, meta_path = out_dir / "tasks.json", out_dir / "collect_meta.json"
    index = json.loads(index_path.read_text()) if index_path.is_file() else {}
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"seconds": 0.0, "runs": []}

    shashes = {task.name: str(tvm_ffi.structural_hash(task.mod)) for task in tasks}
    # A task already indexed under another name (an older suite's) keeps that name.
    named = {entry["shash"]: name for name, entry in index.items()}
    tasks = [t for t in tasks if named.get(shashes[t.name], t.name) == t.name]
    for task in tasks:
        index.setdefault(task.name, task.info(shashes[task.name]))
    write_json_atomic(index_path, index)

    def budget(task: CollectTask, phase: int) -> int:
        entry = index[task.name]
        if "distinct_in_64" not in entry:   # probed when the task's turn comes
            entry["distinct_in_64"] = distinct_candidates(task.mod, target)
            write_json_atomic(index_path, index)
        if entry["distinct_in_64"] < SMALL_SPACE_DISTINCT:
            return entry["distinct_in_64"]
        return plan.random_trials if phase == 1 else plan.random_trials + plan.evolutionary_trials

    counts = records_per_workload(out_dir)
    todo = sum(max(0, plan.random_trials + plan.evolutionary_trials - counts.get(shashes[t.name], 0))
               for t in tasks)
    builder, runner = FastBuilder(), make_runner(**COLLECT_EVALUATOR)
    run = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "seconds": 0.0, "plan": asdict(plan),
           "cpu": host_cpu_names()}
    meta["runs"].append(run)
    meta.update(target=str(target), evaluator=COLLECT_EVALUATOR, plan=asdict(plan),
                latency="median of run_secs (the ten repeats)")
    previous, started = meta["seconds"], time.time()

    def save_meta() -> None:
        """Written after every task, so that an interrupted run keeps its time on record."""
        run["seconds"] = time.time() - started
        run["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        meta["seconds"] = previous + run["seconds"]
        write_json_atomic(meta_path, meta)

    bar = tqdm(total=todo, desc="collect", unit="cand")
    try:
        for task in tasks:
            for phase in (1, 2):
                have = counts.get(shashes[task.name], 0)
                need = budget(task, phase) - have
                if need <= 0:
                    continue
                bar.set_description(f"collect {task.name[:40]}")
                strategy = ms.search_strategy.ReplayTrace() if phase == 1 else "evolutionary"
                cost_model = "random" if phase == 1 else "xgb-warm16"
                # The seed moves on with what the task holds: a resumed task draws new samples.
                tune(task.mod, cost_model, need, out_dir, target=target, seed=resume_seed(plan.seed, phase, have),
                     trials_per_iter=min(plan.trials_per_iter, need), builder=builder, runner=runner,
                     strategy=strategy, progress=bar, shutdown_builder=False)
                counts = records_per_workload(out_dir)
            save_meta()
    finally:
        bar.close()
        builder.shutdown()
        save_meta()
    return meta


def resume_seed(seed: int, phase: int, measured: int) -> int:
    """The search seed of a task's phase, given how many candidates the task already has:
    the plan's seeds for a fresh task, others for a resumed one (so it does not draw again
    the random samples it measured before it was interrupted)."""
    return seed + phase + 7919 * measured


def write_json_atomic(path: Path, value) -> None:
    """Replace ``path`` with ``value`` as JSON in one step (a kill leaves the old file or the new)."""
    atomic_write_bytes(path, json.dumps(value, indent=1).encode())


def data_card(db_dir: str | Path) -> str:
    """A markdown data card of a collected database: settings, then one row per task."""
    from collections import Counter

    db_dir = Path(db_dir)
    for name in ("tasks.json", "collect_meta.json"):
        if not (db_dir / name).is_file():
            raise RecordError(f"{db_dir / name} does not exist: {db_dir} was not written by `tgraph collect`")
    index = json.loads((db_dir / "tasks.json").read_text())
    meta = json.loads((db_dir / "collect_meta.json").read_text())
    workload_lines, record_lines = read_database(db_dir)
    hashes = [shash for shash, _ in workload_lines]
    latency, workload = record_latencies(record_lines)
    per_cpu = Counter(record_cpu(record) or "(none)" for _, record in record_lines)
    run_cpus = [f"run {i}: {run['cpu']['llvm']} ({run['cpu']['name']})" if "cpu" in run else f"run {i}: not recorded"
                for i, run in enumerate(meta.get("runs", []), start=1)]
    by_hash = {entry["shash"]: name for name, entry in index.items()}
    rows, families = [], {}
    for i, shash in enumerate(hashes):
        name = by_hash.get(shash, f"(unnamed {shash})")
        mine = latency[workload == i]
        ok = mine[np.isfinite(mine)]
        family = index.get(name, {}).get("family", "?")
        families[family] = families.get(family, 0) + len(mine)
        best = f"{ok.min() * 1e3:.4f}" if len(ok) else "-"
        worst = f"{ok.max() * 1e3:.4f}" if len(ok) else "-"
        rows.append(f"| {name} | {family} | {len(mine)} | {len(mine) - len(ok)} | {best} | {worst} |")
    plans = []
    for run in meta.get("runs", []):
        if run.get("plan", meta.get("plan")) not in plans:
            plans.append(run.get("plan", meta.get("plan")))
    plan_lines = "; then ".join(
        f"{p['random_trials']} random design-space samples (ReplayTrace)"
        + (f", then evolutionary search (XGBModel, 16 warm-up samples) up to "
           f"{p['random_trials'] + p['evolutionary_trials']} candidates" if p["evolutionary_trials"] else ", no search")
        for p in plans)
    lines = [
        f"- tasks: {len(hashes)}; measured candidates: {len(latency)} ({int(np.isfinite(latency).sum())} successful)",
        f"- target: `{meta.get('target')}`",
        f"- runner: `LocalRunner`, `EvaluatorConfig({', '.join(f'{k}={v}' for k, v in meta.get('evaluator', {}).items())})`; "
        f"latency = {meta.get('latency')}",
        f"- per task, topped up run by run to the plan of each run: {plan_lines}; "
        f"tasks with fewer than {SMALL_SPACE_DISTINCT} distinct schedules in {SPACE_PROBE_DRAWS} draws get one trial per distinct schedule",
        f"- collection time: {meta.get('seconds', 0) / 60:.1f} min over {len(meta.get('runs', []))} run(s), "
        f"last finished {meta.get('runs', [{}])[-1].get('finished')}",
        "- candidates per family: " + ", ".join(f"{k} {v}" for k, v in sorted(families.items())),
        "- candidates per CPU (the records' target `mcpu`): " + ", ".join(f"{k} {v}" for k, v in sorted(per_cpu.items())),
        "- CPU of each run: " + "; ".join(run_cpus),
        "",
        "| task | family | candidates | failed | best ms | worst ms |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
    ]
    return "\n".join(lines) + "\n"


def pack_database(db_dir: str | Path, archive: str | Path) -> int:
    """Write ``db_dir``'s database, task index and metadata to a ``.tar.xz``, safely while a
    collector is still appending (complete lines only). The archive's folder is named after
    the archive. Returns the number of records packed."""
    import io
    import tarfile

    db_dir, archive = Path(db_dir), Path(archive)
    folder = archive.name.removesuffix(".tar.xz")
    records = 0
    tmp = archive.with_name(f".{archive.name}.partial")
    with tarfile.open(tmp, "w:xz") as tar:
        for name in (WORKLOAD_FILE, RECORD_FILE, "tasks.json", "collect_meta.json"):
            path = db_dir / name
            if not path.is_file():
                continue
            data = path.read_bytes()
            if name in (WORKLOAD_FILE, RECORD_FILE):
                data = data[: data.rfind(b"\n") + 1]   # drop a line still being written
                records += data.count(b"\n") if name == RECORD_FILE else 0
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size, info.mtime = len(data), int(path.stat().st_mtime)
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(archive)
    return records
