"""Measuring on remote devices through a TVM RPC tracker, and a loopback farm for trying it.

A farm is one tracker and any number of servers registered under a device key::

    python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190             # on the host
    python -m tvm.exec.rpc_server --tracker HOST:9190 --key my-cpu        # on each device
    tgraph tune matmul --rpc-tracker HOST:9190 --rpc-key my-cpu --rpc-workers 4 ...

MetaSchedule's ``RPCRunner`` asks the tracker for a free server per candidate. A server that
dies costs the candidates it was running (their results carry an error and count as failed
trials); the tracker drops it and the remaining servers take the rest of the run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

from .measure import DEFAULT_EVALUATOR


def parse_address(address: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``, with a clear error for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"RPC tracker address must be HOST:PORT, got {address!r}")
    return host, int(port)


def make_rpc_runner(tracker: str, key: str, max_workers: int = 1, session_timeout_sec: float = 60.0,
                    **evaluator_overrides):
    """MetaSchedule's ``RPCRunner`` on the tracker at ``"host:port"``, servers of ``key``.

    Parameters
    ----------
    max_workers : int
        Candidates measured at once (at most the number of servers is useful).
    session_timeout_sec : float
        Time limit of one candidate's session (connect, upload, run).
    **evaluator_overrides
        Fields of ``EvaluatorConfig`` to change from the tuning protocol's (number=3, repeat=3, 20 ms).
    """
    from tvm.s_tir.meta_schedule.runner import EvaluatorConfig, RPCConfig, RPCRunner

    host, port = parse_address(tracker)
    return RPCRunner(
        rpc_config=RPCConfig(tracker_host=host, tracker_port=port, tracker_key=key,
                             session_timeout_sec=int(session_timeout_sec)),
        evaluator_config=EvaluatorConfig(**dict(DEFAULT_EVALUATOR, **evaluator_overrides)),
        max_workers=max_workers,
    )


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
