"""Measuring on remote devices through a TVM RPC tracker (a loopback farm to try it is
:class:`tvm_tgraph.testing.LoopbackFarm`).

A farm is one tracker and any number of servers registered under a device key::

    python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190             # on the host
    python -m tvm.exec.rpc_server --tracker HOST:9190 --key my-cpu        # on each device
    tgraph tune matmul --rpc-tracker HOST:9190 --rpc-key my-cpu --rpc-workers 4 ...

MetaSchedule's ``RPCRunner`` asks the tracker for a free server per candidate. A server that
dies costs the candidates it was running (their results carry an error and count as failed
trials); the tracker drops it and the remaining servers take the rest of the run.
"""

from __future__ import annotations

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
