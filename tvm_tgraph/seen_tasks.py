"""Which tuning tasks a pretrained checkpoint has seen, by structural hash.

A checkpoint's card names the database it was trained on and the tasks it used
(``training_data``: ``db``, ``train_tasks``); that database's ``tasks.json`` gives each
task's structural hash, the hash the modules of MetaSchedule's ``extract_tasks`` have too.
A model none of whose tasks the checkpoint has seen is a fair test of zero-shot ranking.
"""

from __future__ import annotations

from pathlib import Path

from .errors import RecordError
from .measured_tasks import resolve_db, task_index

#: Where a relative database path of a card is also looked for: the repository's root.
_REPO_ROOT = Path(__file__).resolve().parent.parent


def trained_task_hashes(card: dict) -> set[str] | None:
    """Structural hashes of the tasks the checkpoint of ``card`` was trained on, or None
    when the card names no database or task list, or the database is not at hand."""
    data = card.get("training_data") or {}
    db, names = data.get("db"), data.get("train_tasks")
    if not db or names is None:
        return None
    candidates = [Path(db)] if Path(db).is_absolute() else [Path(db), _REPO_ROOT / db]
    for path in candidates:
        try:
            index = task_index(resolve_db(path))
        except RecordError:
            continue
        if index is not None:
            wanted = {name.split("@")[0] for name in names}   # "family/task@cpu" -> "family/task"
            return {shash for shash, entry in index.items() if entry["name"] in wanted}
    return None


def seen_tasks(tasks: list[tuple[str, object, int]], hashes: set[str]) -> list[str]:
    """Names of the ``(name, IRModule, weight)`` tasks whose structural hash is in ``hashes``."""
    import tvm_ffi

    return [name for name, mod, _ in tasks if str(tvm_ffi.structural_hash(mod)) in hashes]
