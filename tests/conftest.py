"""Shared fixtures: real TVM workloads and real MetaSchedule candidates (nothing mocked)."""

from __future__ import annotations

import functools
import logging

import numpy as np
import pytest

from tvm_tgraph import workloads
from tvm_tgraph.graph import ConfiguredGraph
from tvm_tgraph.nn import TGraphConfig, TGraphNet
from tvm_tgraph.training import RankingTrainer, TrainConfig
from tvm_tgraph.tvm_env import make_target, register_light_tensor_intrin
from tvm_tgraph.workflows.collect import CollectPlan, CollectTask, collect

register_light_tensor_intrin()


def drop_capture_handlers() -> None:
    """Call right before ms.tune_*: MetaSchedule configures its logger with dictConfig,
    listing the logger's current handlers by name, and pytest's log capture attaches
    unnamed handlers to it during a test, which make that configuration fail."""
    logger = logging.getLogger("tvm.s_tir.meta_schedule")
    logger.handlers[:] = [h for h in logger.handlers if h.get_name()]


@pytest.fixture(scope="session")
def target():
    return make_target({"kind": "llvm", "num-cores": 2})


#: A file defining ``mlp()``, a two-layer PyTorch MLP imported into Relax (two tasks when tuned).
TINY_MLP_SOURCE = (
    "import torch\n"
    "from tvm_tgraph.model_zoo import to_relax\n"
    "def mlp():\n"
    "    torch.manual_seed(0)\n"
    "    layer = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))\n"
    "    return to_relax(layer, torch.randn(16, 64))\n"
)

#: A file defining ``mlp_bn()``: the MLP with a batch norm between its layers, which Relax
#: leaves as a task of its own with no reduction (three tasks: two matmuls, one element-wise).
TINY_MLP_BN_SOURCE = (
    "import torch\n"
    "from tvm_tgraph.model_zoo import to_relax\n"
    "def mlp_bn():\n"
    "    torch.manual_seed(0)\n"
    "    layer = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.BatchNorm1d(128), torch.nn.ReLU(),\n"
    "                                torch.nn.Linear(128, 32)).eval()\n"
    "    return to_relax(layer, torch.randn(16, 64))\n"
)

#: A small collection plan: 10 random samples and 6 evolutionary ones per task.
COLLECT_PLAN = CollectPlan(random_trials=10, evolutionary_trials=6, trials_per_iter=8)


def tiny_suite() -> list[CollectTask]:
    """Three small tasks of three operator families."""
    def task(family, func, **kwargs):
        return CollectTask(f"{family}/{kwargs}", family, "test", workloads.as_ir_module(func(**kwargs)))

    return [task("op:matmul", workloads.matmul, n=32, m=32, k=64),
            task("op:dense", workloads.dense_bias_relu, batch=16, in_dim=64, out_dim=32),
            task("op:softmax", workloads.softmax, rows=16, cols=64)]


@pytest.fixture(scope="session")
def collected_db(tmp_path_factory, target):
    """A database collected (really measured) from :func:`tiny_suite` with :data:`COLLECT_PLAN`;
    shared by the tests of collection, reading, training and evaluation. Tests that change
    it work on a copy."""
    out = tmp_path_factory.mktemp("collected")
    drop_capture_handlers()
    collect(out, tiny_suite(), COLLECT_PLAN, target)
    return out


def measured_runner_results(n: int) -> list:
    """``n`` successful MetaSchedule runner results with random latencies (0.1-1 ms)."""
    from tvm.s_tir.meta_schedule.runner import RunnerResult

    rng = np.random.default_rng(0)
    return [RunnerResult([float(x)], None) for x in rng.uniform(1e-4, 1e-3, n)]


@functools.lru_cache(maxsize=None)
def sample_candidates(workload: str, count: int = 24, seed: int = 1):
    """``(context, candidates)``: random valid candidates of a built-in workload's design
    space (MetaSchedule's ReplayTrace: random decisions + post-processing)."""
    from tvm_tgraph.testing import random_candidates
    from tvm_tgraph.workloads import WORKLOADS, as_ir_module

    return random_candidates(as_ir_module(WORKLOADS[workload]()), make_target({"kind": "llvm", "num-cores": 2}),
                             count, seed, task_name=workload)


def random_graph(num_configs=6, nodes=9, seed=0) -> ConfiguredGraph:
    """A small random configured graph: a chain of ``nodes`` nodes, 4 configurable."""
    rng = np.random.default_rng(seed)
    edges = np.array([[i, i + 1] for i in range(nodes - 1)]).T
    config_nodes = np.array([1, 3, 4, 7])
    return ConfiguredGraph(
        node_kind=rng.integers(0, 5, nodes), node_feat=rng.normal(size=(nodes, 7)).astype(np.float32),
        edge_index=edges, config_node_ids=config_nodes,
        config_feat=rng.normal(size=(num_configs, len(config_nodes), 5)).astype(np.float32),
        global_feat=rng.normal(size=(num_configs, 3)).astype(np.float32),
        runtime=rng.uniform(1, 2, num_configs),
    )


def small_trainer(graph_seed: int, weight_average: float) -> RankingTrainer:
    """A trainer of a small network (8 channels, one block, no dropout) on one task, ``"t"``: a
    32-configuration :func:`random_graph` whose runtimes are 1..32; 8 configurations a step."""
    graph = random_graph(num_configs=32, seed=graph_seed)
    graph.runtime = np.arange(1.0, 33.0)
    model = TGraphNet(TGraphConfig(5, 7, 5, 3, hidden=8, num_blocks=1, heads=2, dropout=0.0))
    model.fit_normalization([graph])
    trainer = RankingTrainer(model, TrainConfig(lr=1e-2, weight_average=weight_average, configs_per_step=8), seed=0)
    trainer.set_task("t", graph)
    return trainer


#: A hand-written TVMScript kernel with a function-level ``T.alloc_buffer`` (an ``AllocBuffer``
#: statement in the root block's body, not the block's ``alloc_buffers``).
ALLOC_BUFFER_KERNEL = """
from tvm.script import tirx as T

@T.prim_func(check_well_formed=False)
def scaled_matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                  C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tirx.noalias": True})
    with T.sblock("root"):
        T.reads()
        T.writes()
        D = T.alloc_buffer((64, 64), "float32")
        for i, j, k in T.grid(64, 64, 64):
            with T.sblock("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(D[vi, vj])
                with T.init():
                    D[vi, vj] = T.float32(0)
                D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(64, 64):
            with T.sblock("scale"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(D[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = D[vi, vj] * T.float32(2)
"""
