"""Measuring through a real RPC tracker and servers on loopback, and losing one mid-run."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import drop_capture_handlers
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

from tvm_tgraph.database import latencies_in_trial_order
from tvm_tgraph.measure import FastBuilder
from tvm_tgraph.rpc import make_rpc_runner, parse_address
from tvm_tgraph.testing import LoopbackFarm
from tvm_tgraph.workloads import WORKLOADS, as_ir_module


def test_tracker_address_is_checked():
    assert parse_address("10.0.0.7:9190") == ("10.0.0.7", 9190)
    for bad in ("10.0.0.7", ":9190", "host:port"):
        with pytest.raises(ValueError, match="HOST:PORT"):
            parse_address(bad)


def _kill_after_first_batch(farm: LoopbackFarm):
    """A measure callback that kills server 0 once the first batch has been measured."""
    @derived_object
    class KillServer(PyMeasureCallback):
        def __init__(self) -> None:
            super().__init__()
            self.batches = 0

        def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results):
            self.batches += 1
            if self.batches == 1:
                farm.kill_server(0)

    return KillServer()


def test_tuning_over_rpc_survives_a_server_dying(tmp_path, target):
    with LoopbackFarm(servers=2) as farm:
        runner = make_rpc_runner(farm.tracker, farm.key, max_workers=2, session_timeout_sec=30,
                                 number=1, repeat=3, min_repeat_ms=0)
        drop_capture_handlers()
        ms.tune_tir(mod=as_ir_module(WORKLOADS["matmul_128"]()), target=target, work_dir=str(tmp_path),
                    max_trials_global=16, num_trials_per_iter=8, builder=FastBuilder(max_workers=2),
                    runner=runner, cost_model=ms.cost_model.RandomModel(), seed=0,
                    measure_callbacks=[*ms.measure_callback.MeasureCallback.create("default"),
                                       _kill_after_first_batch(farm)])
        assert farm.server_procs[0].poll() is not None      # it really died
        assert farm.servers_registered() == 1
    latency, _ = latencies_in_trial_order(tmp_path)
    assert len(latency) == 16                                # the run went on to its budget
    assert np.isfinite(latency[:8]).all()                    # both servers served the first batch
    assert np.isfinite(latency[8:]).sum() >= 4               # the survivor served the second
