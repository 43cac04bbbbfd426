"""Builder and runner for measuring MetaSchedule candidates on llvm (CPU) targets.

MetaSchedule's stock ``LocalBuilder`` starts a new process pool for every batch, and its
build function imports every backend's tensor intrinsics (~40 s), so with its default 30 s
timeout every build fails on these machines. :class:`FastBuilder` keeps one pool of
workers alive for the whole tuning run, registers only the x86 intrinsics in each worker,
and builds with a function that imports nothing heavy.
"""

from __future__ import annotations

import os
import tempfile

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.builder import BuilderInput, BuilderResult, PyBuilder
from tvm.s_tir.meta_schedule.runner import EvaluatorConfig, LocalRunner
from tvm.support.popen_pool import PopenPoolExecutor, StatusKind

from .tvm_env import register_light_tensor_intrin

#: The tuning measurement protocol (docs/architecture.md): latency is the median of ``run_secs``.
DEFAULT_EVALUATOR = {"number": 3, "repeat": 3, "min_repeat_ms": 20, "enable_cpu_cache_flush": False}


def build_and_export(mod, target) -> str:
    """Build ``mod`` for ``target`` and export it as a tar archive; return the path.

    Runs inside a builder worker. Mirrors MetaSchedule's ``default_build`` and
    ``default_export`` without importing every backend's tensor intrinsics.
    """
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    from tvm.support.tar import tar

    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    rt_mod = tvm.driver.build(mod, target=target)
    artifact_path = os.path.join(tempfile.mkdtemp(prefix="tgraph_build_"), "mod." + tar.output_format)
    rt_mod.export_library(artifact_path, fcompile=tar)
    return artifact_path


@derived_object
class FastBuilder(PyBuilder):
    """A MetaSchedule builder for llvm targets that keeps its worker pool alive.

    Parameters
    ----------
    max_workers : int, optional
        Number of build processes (default: the number of logical CPUs).
    timeout_sec : float
        Time limit of one build, in seconds (default 30).
    max_uses_per_worker : int
        A worker is replaced after this many builds, which bounds the memory that TVM's
        popen workers leak (default 256).

    Examples
    --------
    >>> ms.tune_tir(mod, target, work_dir, 64, builder=FastBuilder())  # doctest: +SKIP
    """

    def __init__(self, max_workers: int | None = None, timeout_sec: float = 30.0,
                 max_uses_per_worker: int = 256) -> None:
        super().__init__()
        register_light_tensor_intrin()
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = timeout_sec
        self.max_uses_per_worker = max_uses_per_worker
        self._pool: PopenPoolExecutor | None = None

    def _get_pool(self) -> PopenPoolExecutor:
        if self._pool is None:
            self._pool = PopenPoolExecutor(
                max_workers=self.max_workers,
                timeout=self.timeout_sec,
                initializer=register_light_tensor_intrin,
                maximum_process_uses=self.max_uses_per_worker,
            )
        return self._pool

    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        """Build every input; a failed or timed-out build becomes an error result."""
        if any(inp.params for inp in build_inputs):
            raise ValueError("FastBuilder does not take params; bind them into the module first")
        results = []
        jobs = [(inp.mod, inp.target) for inp in build_inputs]
        for outcome in self._get_pool().map_with_error_catching(lambda job: build_and_export(*job), jobs):
            if outcome.status == StatusKind.COMPLETE:
                results.append(BuilderResult(outcome.value, None))
            elif outcome.status == StatusKind.TIMEOUT:
                results.append(BuilderResult(None, f"FastBuilder: timeout after {self.timeout_sec} s"))
            else:
                results.append(BuilderResult(None, f"FastBuilder: build failed\n{outcome.value}"))
        return results

    def shutdown(self) -> None:
        """Stop the worker processes (a later ``build`` starts new ones)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def make_runner(timeout_sec: float = 30.0, **evaluator_overrides) -> LocalRunner:
    """A ``LocalRunner`` with the tuning protocol's evaluator settings (number=3, repeat=3, 20 ms).

    Parameters
    ----------
    timeout_sec : float
        Time limit of one run, in seconds.
    **evaluator_overrides
        Fields of ``EvaluatorConfig`` to change.
    """
    config = dict(DEFAULT_EVALUATOR, **evaluator_overrides)
    return LocalRunner(timeout_sec=timeout_sec, evaluator_config=EvaluatorConfig(**config))
