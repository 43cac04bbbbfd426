"""Pretraining the TIR cost model on a tuning database (``tgraph train``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..convert.tir import FEATURE_SCHEMA
from ..measured_tasks import database_sha256, load_configured_graphs
from ..pretrain import PretrainConfig, train_checkpoint


def train_tir_checkpoint(db: str | Path, out: str | Path, config: PretrainConfig, holdout: str | None = None,
                         target=None, command: str = "", seeds: Sequence[int] = (), teacher=None,
                         **card_fields) -> dict:
    """Read ``db`` (a database directory or ``.tar.xz``), convert every task outside the
    ``holdout`` families (once: see :func:`~tvm_tgraph.measured_tasks.load_configured_graphs`), train with validation split by task and early stopping, and save
    the best network with its card to ``out`` (one network per seed of ``seeds``, saved as a
    seed ensemble, if two or more are given). With ``teacher`` (a loaded network or seed
    ensemble), each network distils it (``config.train.distil_weight``; see
    :func:`~tvm_tgraph.pretrain.pretrain`); ``card_fields`` go into the card.

    Returns
    -------
    dict
        The model card written.

    Raises
    ------
    ValueError
        If fewer than two tasks with two measured candidates are left to train on.
    """
    graphs, _ = load_configured_graphs(db, target, exclude_families=holdout)
    if len(graphs) < 2:
        raise ValueError(f"{db} holds {len(graphs)} task(s) with at least two measured candidates "
                         "(outside --holdout); training needs two or more")
    return train_checkpoint(graphs, list(graphs), config, FEATURE_SCHEMA, out,
                            data={"db": str(db), "db_sha256": database_sha256(db), "held_out_families": holdout},
                            seeds=seeds, teacher=teacher, command=command, **card_fields)
