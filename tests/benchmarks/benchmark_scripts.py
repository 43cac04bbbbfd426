"""Loading the scripts of ``benchmarks/`` as modules that write their results under a test's folder."""

import importlib.util
import sys
from pathlib import Path

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
