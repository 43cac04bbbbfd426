"""Helpers for tests, benchmarks and the collector (as TVM has ``meta_schedule.testing``):
random candidates of a task's design space, measuring candidates with the project's
builder and runner, and a loopback RPC farm.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

from .measure import FastBuilder, make_runner


def random_candidates(mod, target, count: int, seed: int = 0, task_name: str | None = None):
    """``(context, candidates)``: ``count`` random candidates of ``mod``'s design space
    (MetaSchedule's ``ReplayTrace``: random decisions, then post-processing).

    Parameters
    ----------
    mod : tvm.IRModule
        A task (one PrimFunc).
    target : tvm.target.Target
    """
    from tvm.s_tir import meta_schedule as ms

    context = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply",
                             search_strategy=ms.search_strategy.ReplayTrace(), task_name=task_name,
                             rand_state=seed, num_threads=1)
    context.pre_tuning(max_trials=count, num_trials_per_iter=count, design_spaces=context.generate_design_space(),
                       database=ms.database.MemoryDatabase(), cost_model=ms.cost_model.RandomModel())
    return context, list(context.generate_measure_candidates())


def measure_candidates(context, candidates, builder: FastBuilder | None = None, **evaluator) -> list:
    """Build and run ``candidates`` for real (``builder``, default a
    :class:`~tvm_tgraph.measure.FastBuilder`; the tuning runner with ``evaluator`` overrides);
    returns MetaSchedule ``RunnerResult`` s, one per candidate in order. A candidate whose build
    failed (or timed out: on a machine busy with other work, say) is not run: its result has no
    run time and the build's error message, as MetaSchedule records a failed build. Each built
    library's temporary folder is removed once every run has finished, as MetaSchedule's task
    scheduler removes it after a round."""
    from tvm.s_tir.meta_schedule.builder import BuilderInput
    from tvm.s_tir.meta_schedule.runner import RunnerInput, RunnerResult
    from tvm.s_tir.meta_schedule.utils import remove_build_dir

    own_builder = builder is None
    builder = builder or FastBuilder()
    try:
        built = builder.build([BuilderInput(c.sch.mod, context.target) for c in candidates])
    finally:
        if own_builder:
            builder.shutdown()
    ok = [i for i, result in enumerate(built) if result.artifact_path is not None]
    try:
        futures = make_runner(**evaluator).run([RunnerInput(built[i].artifact_path, "cpu", candidates[i].args_info)
                                                for i in ok]) if ok else []
        results = [RunnerResult(None, result.error_msg) for result in built]
        for i, future in zip(ok, futures):
            results[i] = future.result()
    finally:
        for i in ok:
            remove_build_dir(built[i].artifact_path)
    return results


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LoopbackFarm:
    """A tracker and ``servers`` RPC servers on 127.0.0.1, as separate processes.

    Use as a context manager; ``tracker`` is the ``"host:port"`` to give the runner.
    """

    def __init__(self, servers: int = 2, key: str = "loopback", start_timeout_s: float = 60.0) -> None:
        self.key = key
        self.num_servers = servers
        self.start_timeout_s = start_timeout_s
        self.tracker_port = _free_port()
        self.tracker = f"127.0.0.1:{self.tracker_port}"
        self.tracker_proc: subprocess.Popen | None = None
        self.server_procs: list[subprocess.Popen] = []

    def __enter__(self) -> "LoopbackFarm":
        python = sys.executable
        self.tracker_proc = subprocess.Popen(
            [python, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(self.tracker_port),
             "--port-end", str(self.tracker_port + 1), "--silent"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            for _ in range(self.num_servers):
                port = _free_port()
                self.server_procs.append(subprocess.Popen(
                    [python, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(port),
                     "--port-end", str(port + 1), "--tracker", self.tracker, "--key", self.key, "--silent"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                ))
            self.wait_for_servers(self.num_servers)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def servers_registered(self) -> int:
        """Servers of ``key`` the tracker lists now (free or busy)."""
        from tvm import rpc

        summary = rpc.connect_tracker("127.0.0.1", self.tracker_port).summary()
        return sum(1 for info in summary["server_info"] if info["key"].split(":")[-1] == self.key)

    def wait_for_servers(self, count: int) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            try:
                if self.servers_registered() >= count:
                    return
            except (ConnectionError, OSError, RuntimeError):
                pass  # tracker not listening yet
            if time.monotonic() > deadline:
                raise TimeoutError(f"RPC farm: {count} servers did not register with {self.tracker} "
                                   f"within {self.start_timeout_s:.0f} s")
            time.sleep(0.5)

    @staticmethod
    def _signal_group(proc: subprocess.Popen, sig: int) -> None:
        """Signal ``proc`` and the session processes it forked (each in its own group)."""
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass

    def kill_server(self, index: int) -> None:
        """Kill server ``index`` and its sessions at once (SIGKILL), as a device that dies would."""
        self._signal_group(self.server_procs[index], signal.SIGKILL)
        self.server_procs[index].wait()

    def __exit__(self, *exc) -> None:
        procs = [p for p in [*self.server_procs, self.tracker_proc] if p is not None]
        for proc in procs:
            self._signal_group(proc, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._signal_group(proc, signal.SIGKILL)
                proc.wait()
