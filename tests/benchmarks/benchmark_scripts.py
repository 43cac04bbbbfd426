"""Loading the scripts of ``benchmarks/`` as modules that write their results under a test's folder,
and a real ``ranking_eval.py`` run with kept scores (``kept_run``) for the scripts that read them."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_script(name: str, results: Path, monkeypatch):
    """``benchmarks/<name>.py`` as a module whose ``RESULTS`` folder is ``results``."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # its dataclasses look it up there
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "RESULTS", results)
    return module


def run(module, monkeypatch, *args) -> None:
    """``module.main()`` with ``args`` as its command line."""
    monkeypatch.setattr(sys, "argv", [f"{module.__name__}.py", *args])
    module.main()


@pytest.fixture
def kept_run(collected_db, tmp_path, monkeypatch):
    """A two-fold, two-seed ranking_eval run with online k = 4 and its kept scores under ``tmp_path``."""
    ranking_eval = load_script("ranking_eval", tmp_path, monkeypatch)
    run(ranking_eval, monkeypatch, "--db", str(collected_db), "--folds", "op:matmul,op:softmax", "--seeds", "0,1",
        "--steps", "3", "--ablations", "", "--online-ks", "4", "--baselines", "xgb", "--out", "kept",
        "--keep-scores")
    return json.loads((tmp_path / "kept.json").read_text())
