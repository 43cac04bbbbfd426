"""TVM set-up that every TVM-facing module of the project goes through.

Two facts of TVM 0.27 on CPU hosts are handled here once (see ``docs/architecture.md``):

* ``import tvm.s_tir.tensor_intrin`` parses the tensor intrinsics of every backend
  (CUDA, ROCm, Hexagon, ...) and takes about 40 s. MetaSchedule's ``TuneContext`` and its
  default build function import it. :func:`register_light_tensor_intrin` registers only the
  x86 intrinsics and marks the package imported, so those imports become no-ops.
* Target strings are rejected and a target without ``mcpu`` compiles for SSE2 only.
  :func:`make_target` builds the JSON-dict target with the host CPU.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

_INTRIN_PACKAGE = "tvm.s_tir.tensor_intrin"


def register_light_tensor_intrin() -> None:
    """Register the x86 tensor intrinsics only, and make later full imports no-ops.

    Safe to call many times, in the main process and in every popen worker (it is the
    ``initializer`` of the project's builder). If the full package is already imported it
    does nothing.
    """
    if _INTRIN_PACKAGE in sys.modules:
        return
    import tvm.s_tir  # noqa: F401  (parent package must exist first)

    spec = importlib.util.find_spec(_INTRIN_PACKAGE)
    package = types.ModuleType(_INTRIN_PACKAGE)
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    package.__package__ = _INTRIN_PACKAGE
    package.__file__ = spec.origin
    sys.modules[_INTRIN_PACKAGE] = package
    sys.modules["tvm.s_tir"].tensor_intrin = package
    importlib.import_module(_INTRIN_PACKAGE + ".x86")


def host_cpu() -> str:
    """Return LLVM's name for the host CPU (e.g. ``"skylake-avx512"``)."""
    import tvm

    return str(tvm.target.codegen.llvm_get_system_cpu())


def host_cpu_names() -> dict[str, str]:
    """The host CPU as LLVM names it (``mcpu``) and as the kernel reports it."""
    import platform

    name = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return {"llvm": host_cpu(), "name": name}


def default_target_config(num_cores: int | None = None) -> dict[str, Any]:
    """The target used when none is given: llvm on the host CPU with all its cores."""
    import psutil

    cores = num_cores or psutil.cpu_count(logical=False) or 1
    return {"kind": "llvm", "num-cores": int(cores), "mcpu": host_cpu()}


def make_target(config: str | dict[str, Any] | None = None):
    """Build a ``tvm.target.Target`` from a JSON string, a dict, or ``None`` (the host).

    Parameters
    ----------
    config : str or dict or None
        A JSON object such as ``{"kind": "llvm", "num-cores": 2, "mcpu": "skylake"}``. An
        llvm target without ``mcpu`` gets the host CPU, since without it LLVM emits SSE2
        code, and one without ``num-cores`` the host's physical cores (MetaSchedule needs it).

    Returns
    -------
    tvm.target.Target

    Raises
    ------
    ValueError
        If ``config`` is a string that is not a JSON object, or TVM rejects the target.
    """
    import tvm

    if config is None:
        config = default_target_config()
    elif isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"--target must be a JSON object such as "
                f'\'{{"kind": "llvm", "num-cores": 2}}\', got {config!r}: {err}'
            ) from None
        if not isinstance(config, dict):
            raise ValueError(f"--target must be a JSON object, got {config!r}")
    config = dict(config)
    if config.get("kind") == "llvm":
        # MetaSchedule needs num-cores to tune for a CPU; without mcpu LLVM emits SSE2 only.
        host = default_target_config()
        config.setdefault("num-cores", host["num-cores"])
        config.setdefault("mcpu", host["mcpu"])
    try:
        return tvm.target.Target(config)
    except Exception as err:  # noqa: BLE001 - TVM raises several kinds for a bad target
        raise ValueError(f"invalid --target {json.dumps(config)}: {str(err).splitlines()[-1]}") from None
